#!/usr/bin/env bash
# Everything a lent GPU machine needs for tools/gpu/device-run.sh, built here (no GPU):
#   gpu-bundle/bundle.tar.xz   the CUDA test binaries and examples (scripts/gpu-bundle.sh)
#   .gpu-carry/*.gguf          SmolLM2 and Gemma 3 cut to their first 6 blocks and 4096
#                              embedding rows (the device tool carries 64 MiB a call; the
#                              whole files are 98 and 253 MB)
# Then, with the device tool (from the repository root):
#   run  command: tools/gpu/device-run.sh gpu-bundle/bundle.tar.xz .gpu-carry
#        carry:   ["gpu-bundle/bundle.tar.xz", ".gpu-carry"]
#
#   tools/gpu/prepare.sh            # ~15 minutes on 2 cores from a cold target directory
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
scripts/gpu-bundle.sh
mkdir -p .gpu-carry
# The cut needs no GPU; the link stubs satisfy the binary's CUDA libraries.
stubs="$repo/.venv-cuda/stubs"
for model in smollm2 gemma3; do
    src="$(scripts/fetch-model.sh "$model" | tail -n 1)"
    name="$(basename "$src" .gguf)"
    LD_LIBRARY_PATH="$repo/gpu-bundle/lib:$stubs" gpu-bundle/bin/gpu_report truncate "$src" \
        ".gpu-carry/$name-6blocks-4096rows.gguf" 6 4096
done
total=$(( $(stat -c %s gpu-bundle/bundle.tar.xz) + $(du -cb .gpu-carry/*.gguf | tail -n 1 | cut -f1) ))
echo "to carry: $((total / 1048576)) MiB of the 64 MiB a call takes (the working tree counts too)"
