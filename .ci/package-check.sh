#!/usr/bin/env bash
# The crate as users get it (called by .ci/run): `cargo publish --dry-run` packs what the
# `include` list of Cargo.toml names, then the unpacked .crate builds and runs its own
# `cargo test --release` outside the repository. There the tests that need the workspace
# tools (tools/mpfr-oracle, tools/kernel-hostcheck) are compiled out, and build.rs says so.
# The repository's target directory is reused, so only candle-repro itself is rebuilt.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

# --allow-dirty: a local run may have uncommitted edits (CI runs on a clean clone).
cargo publish --dry-run --no-verify --allow-dirty
rm -f target/package/candle-repro-*.crate
cargo package --no-verify --allow-dirty
crate="$(ls target/package/candle-repro-*.crate)"
echo "packaged: $crate ($(tar tzf "$crate" | wc -l) files, $(du -h "$crate" | cut -f1))"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tar xzf "$crate" -C "$tmp"
cd "$tmp"/candle-repro-*/
start=$(date +%s)
CARGO_TARGET_DIR="$root/target" cargo test --release
echo "packaged crate: cargo test --release: $(($(date +%s) - start)) s"
