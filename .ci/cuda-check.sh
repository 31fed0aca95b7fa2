#!/usr/bin/env bash
# The CUDA pipeline on a machine without a GPU (called by .ci/run):
#   1. NVIDIA's CUDA 13.0 compiler from PyPI wheels, and link stubs for the CUDA libraries
#      (scripts/install-cuda-compiler.sh, into the git-ignored .venv-cuda);
#   2. every target (library, tests, examples, benches) built with --features cuda (candle's
#      kernels and ours to PTX), clippy on all of them and the docs with the feature;
#   3. the PTX lint (no approximate / flush-to-zero / fused instruction, ptxas sm_80 and
#      sm_90) and the CUDA tests, whose GPU parts print "skipped: no CUDA device" here while
#      the CPU golden hashes are checked.
# The host cross-checks of the device code (tests/*_hostcheck.rs, cuda_host_crosscheck.rs)
# need no CUDA at all and run in the plain `cargo test --release`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-cuda-compiler.sh > /dev/null
# shellcheck disable=SC1091
. .venv-cuda/cuda-env.sh
nvcc --version | tail -n 2

start=$(date +%s)
cargo build --release --features cuda --all-targets
echo "cargo build --release --features cuda --all-targets: $(($(date +%s) - start)) s"
# The release profile's build-script outputs (candle's PTX) are shared with the build.
cargo clippy --release --all-targets --features cuda -- -D warnings
# The API docs of the CUDA half (docs.rs builds them without the feature: no nvcc there).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --release --features cuda

# No GPU driver here: the stubs stand in for libcuda/cuBLAS/cuRAND/NVRTC so the binaries
# start; creating a CUDA device then fails cleanly and the GPU tests skip.
export LD_LIBRARY_PATH="$REPRO_CUDA_STUBS:$REPRO_CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cargo test --release --features cuda \
    --test cuda_ptx_lint --test cuda_elementwise --test softmax_cuda --test rope_cuda \
    --test fft_cuda --test matmul_cuda --test norm_cuda --test quantized_cuda --test audio_cuda \
    -- --nocapture
