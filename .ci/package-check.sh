#!/usr/bin/env bash
# The crates as users get them (called by .ci/run): `cargo publish --dry-run` packs what the
# `include` lists of Cargo.toml, core/Cargo.toml and burn/Cargo.toml name (candle-repro, its
# framework-free core repro-core and the Burn adapter burn-repro, packed together: cargo
# resolves the unpublished core from the packed copy), then each unpacked .crate builds and
# runs its own `cargo test --release` outside the repository, the adapters against the
# unpacked core (burn-repro's tests compare with candle-repro and stay in the repository).
# There the tests that need the workspace tools (tools/mpfr-oracle, tools/kernel-hostcheck)
# are compiled out, and the build scripts say so. The repository's target directory is
# reused, so only the two crates themselves are rebuilt.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
# Seen by the build scripts (see build.rs): the repository's next build reruns them.
export REPRO_PACKAGE_CHECK=1

# --allow-dirty: a local run may have uncommitted edits (CI runs on a clean clone).
cargo publish --dry-run --no-verify --allow-dirty -p repro-core -p candle-repro -p burn-repro
rm -f target/package/{candle-repro,repro-core,burn-repro}-*.crate
cargo package --no-verify --allow-dirty -p repro-core -p candle-repro -p burn-repro
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for name in repro-core candle-repro burn-repro; do
  crate="$(ls target/package/$name-*.crate)"
  echo "packaged: $crate ($(tar tzf "$crate" | wc -l) files, $(du -h "$crate" | cut -f1))"
  tar xzf "$crate" -C "$tmp"
done
# tar restores the sources' own modification times, and cargo's freshness check compares
# them with the last build of the same unpacked path in this target directory: a source
# edited before that build would look built already and the package would be tested
# stale. Every unpacked file is newer than any earlier build.
find "$tmp" -type f -exec touch {} +
core_dir="$(ls -d "$tmp"/repro-core-*/)"

cd "$core_dir"
start=$(date +%s)
CARGO_TARGET_DIR="$root/target" cargo test --release
echo "packaged repro-core: cargo test --release: $(($(date +%s) - start)) s"

cd "$tmp"/candle-repro-*/
start=$(date +%s)
CARGO_TARGET_DIR="$root/target" cargo test --release \
  --config "patch.crates-io.repro-core.path='$core_dir'"
echo "packaged candle-repro: cargo test --release: $(($(date +%s) - start)) s"

cd "$tmp"/burn-repro-*/
start=$(date +%s)
CARGO_TARGET_DIR="$root/target" cargo test --release \
  --config "patch.crates-io.repro-core.path='$core_dir'"
echo "packaged burn-repro: cargo test --release: $(($(date +%s) - start)) s"
