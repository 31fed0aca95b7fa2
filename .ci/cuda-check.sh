#!/usr/bin/env bash
# The CUDA pipeline on a machine without a GPU (called by .ci/run):
#   1. NVIDIA's CUDA 13.0 compiler from PyPI wheels, and link stubs for the CUDA libraries
#      (scripts/install-cuda-compiler.sh, into the git-ignored .venv-cuda);
#   2. cargo build --release --features cuda (candle's kernels and ours to PTX);
#   3. the PTX lint (no approximate / flush-to-zero / fused instruction, ptxas sm_80 and
#      sm_90) and the CUDA tests, whose GPU parts print "skipped: no CUDA device" here while
#      the CPU golden hashes are checked.
# The host cross-check of the device math (tests/cuda_host_crosscheck.rs) needs no CUDA at
# all and runs in the plain `cargo test --release`; pass --crosscheck to run it here too.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-cuda-compiler.sh > /dev/null
# shellcheck disable=SC1091
. .venv-cuda/cuda-env.sh
nvcc --version | tail -n 2

start=$(date +%s)
cargo build --release --features cuda
echo "cargo build --release --features cuda: $(($(date +%s) - start)) s"

# No GPU driver here: the stubs stand in for libcuda/cuBLAS/cuRAND/NVRTC so the binaries
# start; creating a CUDA device then fails cleanly and the GPU tests skip.
export LD_LIBRARY_PATH="$REPRO_CUDA_STUBS:$REPRO_CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cargo test --release --features cuda --test cuda_ptx_lint --test cuda_elementwise -- --nocapture

if [ "${1:-}" = "--crosscheck" ]; then
  cargo test --release --test cuda_host_crosscheck
fi
