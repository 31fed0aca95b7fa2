#!/usr/bin/env bash
# Build everything a GPU machine needs to check the CUDA path, into one git-ignored folder
# (gpu-bundle/), for a machine that has an NVIDIA driver but no Rust toolchain:
#   bin/       the --features cuda test binaries (release) and the `report` example
#   lib/       libcudart.so.13 from the compiler wheels
#   run.sh     runs the CUDA tests and the report
#
#   scripts/gpu-bundle.sh              # CUDA_COMPUTE_CAP=80 by default (PTX, JIT on newer GPUs)
#   copy gpu-bundle/ to the GPU machine, then there:
#   LD_LIBRARY_PATH=/path/to/cuda-13/libs gpu-bundle/run.sh
#
# Run-time needs on the GPU machine: the NVIDIA driver (libcuda.so.1, driver >= 580 for
# CUDA 13), and CUDA 13 cuBLAS / cuBLASLt / cuRAND / NVRTC (candle-core links them; a CUDA 13
# toolkit's lib64, or the PyPI wheels nvidia-cublas, nvidia-curand and nvidia-cuda-nvrtc
# 13.x, whose nvidia/cu13/lib folder goes on LD_LIBRARY_PATH). Never put .venv-cuda/stubs on
# LD_LIBRARY_PATH of a GPU machine: those are link stubs that report "no device".
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

scripts/install-cuda-compiler.sh > /dev/null
# shellcheck disable=SC1091
. .venv-cuda/cuda-env.sh

out="$repo/gpu-bundle"
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"

# Test binaries: every test target of the package, built with the feature.
cargo test --release --features cuda --no-run --message-format=json 2> "$out/build.log" |
    "$repo/.venv-cuda/bin/python" -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"] + " " + m["executable"])
' | while read -r name exe; do
    cp "$exe" "$out/bin/$name"
done
cargo build --release --features cuda --example report 2>> "$out/build.log"
cp target/release/examples/report "$out/bin/report"
cp -L "$REPRO_CUDA_LIB/libcudart.so.13" "$out/lib/"

cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Run the CUDA checks of candle-repro on this GPU machine (see scripts/gpu-bundle.sh).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || true
status=0
for t in cuda_elementwise; do
    [ -x "$here/bin/$t" ] || continue
    echo "== $t"
    "$here/bin/$t" --nocapture --test-threads=1 || status=1
done
for t in "$here"/bin/*; do
    name="$(basename "$t")"
    case "$name" in report | cuda_elementwise | cuda_host_crosscheck) continue ;; esac
    echo "== $name"
    "$t" --test-threads=2 || status=1
done
echo "== report"
"$here/bin/report" "$@" || status=1
exit $status
RUN
chmod +x "$out/run.sh"
du -sh "$out"
ls "$out/bin"
