#!/usr/bin/env bash
# Build everything a GPU machine needs to check the CUDA path, into one git-ignored folder
# (gpu-bundle/), for a machine that has an NVIDIA driver but no Rust toolchain:
#   bin/       the --features cuda test binaries that use CUDA (release; names with "cuda")
#              and the examples that run on CUDA: `report`, `gpu_report`, `llama_block`
#   lib/       libcudart.so.13 from the compiler wheels, libmpfr and libgmp for the report
#   run.sh     runs the CUDA tests and the report
#
#   scripts/gpu-bundle.sh              # CUDA_COMPUTE_CAP=80 by default (PTX, JIT on newer GPUs)
#   copy gpu-bundle/ (or just gpu-bundle/bundle.tar.xz, ~14 MB: `tar -xJf bundle.tar.xz`
#   recreates gpu-bundle/) to the GPU machine, then there:
#   gpu-bundle/run.sh     (finds the CUDA 13 libraries in the usual places, names missing ones)
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

# "name path" of every executable cargo reports in its JSON messages.
executables() {
    "$repo/.venv-cuda/bin/python" -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    # test targets that touch CUDA, and the examples that run on a CUDA device
    name = m["target"]["name"]
    host_only = any(w in name for w in ("hostcheck", "crosscheck", "lint"))
    examples = ("report", "gpu_report", "llama_block")
    if (m["profile"]["test"] and "cuda" in name and not host_only) or name in examples:
        print(name + " " + m["executable"])
'
}

# Test binaries: every test target of the package, built with the feature; the report.
{
    cargo test --release --features cuda --no-run --message-format=json
    cargo build --release --features cuda --example report --example gpu_report \
        --example llama_block --message-format=json
} 2> "$out/build.log" | executables | while read -r name exe; do
    cp "$exe" "$out/bin/$name"
done
[ -x "$out/bin/report" ] || { echo "gpu-bundle: build failed, see $out/build.log" >&2; exit 1; }
# An A/B baseline for the device run's timings: BASE_GPU_REPORT=path/to/an/older/gpu_report
# (built from another commit) travels as bin/gpu_report_base.
if [ -n "${BASE_GPU_REPORT:-}" ]; then cp "$BASE_GPU_REPORT" "$out/bin/gpu_report_base"; fi
cp -L "$REPRO_CUDA_LIB/libcudart.so.13" "$out/lib/"
# The report's MPFR oracle: ship the shared libraries it was linked with.
for lib in libmpfr.so.6 libgmp.so.10; do
    path="$(ldd "$out/bin/report" | awk -v l="$lib" '$1 == l {print $3}')"
    [ -n "$path" ] && cp -L "$path" "$out/lib/"
done

cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Run the CUDA checks of candle-repro on this GPU machine (see scripts/gpu-bundle.sh).
# Needs glibc >= 2.34, the NVIDIA driver (>= 580) and the CUDA 13 user libraries
# (libcublas, libcublasLt, libcurand, libnvrtc .so.13): looked for on LD_LIBRARY_PATH, in a
# CUDA toolkit (/usr/local/cuda*/lib64, $CUDA_HOME/lib64) and in pip's nvidia/cu13/lib;
# what is still missing is named before anything runs.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dirs=("$here/lib")
for d in ${CUDA_HOME:+"$CUDA_HOME/lib64"} /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 \
         /usr/local/cuda*/targets/x86_64-linux/lib; do
    [ -d "$d" ] && dirs+=("$d")
done
for py in python3 python; do
    command -v "$py" >/dev/null 2>&1 || continue
    while IFS= read -r d; do [ -d "$d" ] && dirs+=("$d"); done < <("$py" - <<'PY' 2>/dev/null
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()] + sys.path
seen = set()
for r in roots:
    for d in glob.glob(os.path.join(r, "nvidia", "cu13", "lib")) + glob.glob(os.path.join(r, "nvidia", "*", "lib")):
        if d not in seen:
            seen.add(d)
            print(d)
PY
)
done
joined="$(IFS=:; echo "${dirs[*]}")"
export LD_LIBRARY_PATH="$joined${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
glibc="$(ldd --version 2>/dev/null | head -n 1 | grep -oE '[0-9]+\.[0-9]+$')"
if [ -n "$glibc" ] && [ "$(printf '%s\n2.34\n' "$glibc" | sort -V | head -n 1)" != 2.34 ]; then
    echo "run.sh: glibc $glibc found, the binaries need >= 2.34" >&2
    exit 2
fi
missing="$(ldd "$here/bin/report" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')"
if [ -n "$missing" ]; then
    echo "run.sh: missing libraries: $missing" >&2
    echo "  looked in: $joined" >&2
    echo "  (CUDA 13: a toolkit's lib64, or pip install nvidia-cublas nvidia-curand nvidia-cuda-nvrtc 13.x)" >&2
    exit 2
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || true
status=0
for t in "$here"/bin/*; do
    name="$(basename "$t")"
    case "$name" in report | gpu_report | gpu_report_base | llama_block) continue ;; esac
    echo "== $name"
    "$t" --nocapture --test-threads=1 || status=1
done
echo "== report"
"$here/bin/report" "$@" || status=1
exit $status
RUN
chmod +x "$out/run.sh"
# One compressed archive for copying. The binaries each embed the same ~40 MB of PTX: a
# dictionary larger than one binary lets xz store it once (68 MB with -6 alone, 14 MB so).
tar -C "$repo" -cf - gpu-bundle/run.sh gpu-bundle/lib $(cd "$repo" && ls -d gpu-bundle/bin/*) |
    xz -T1 --lzma2=preset=6,dict=256MiB > "$out/bundle.tar.xz"
du -sh "$out" "$out/bundle.tar.xz"
ls "$out/bin"
