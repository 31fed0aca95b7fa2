#!/usr/bin/env bash
# Everything issue 30 measures, in one run on the lent GPU machine (no Rust there): unpacks
# the bundle built here by scripts/gpu-bundle.sh, then
#   1. the CUDA test binaries (CUDA bits == CPU bits), three at a time;
#   2. the model check (gpu_report model: CUDA logits == CPU logits, tokens/s) on every GGUF
#      in MODELS_DIR;
#   3. timings alone on the GPU: gpu_report ops (ours vs stock candle's CUDA ops), PyTorch's
#      copy / cuFFT / cuBLAS figures and cuFFT's error next to ours (tools/gpu/torch_baselines.py);
#   4. the report (hashes on both devices) and llama_block.
# STEPS (default "tests models ops torch report"; also "matmul", "qscale", "qgemv", "qgemv-base", "fft", "models-base") picks steps;
# TESTS (an extended regex, default all) picks the test binaries of "tests"; DEADLINE
# (seconds, default 540) skips whatever would start too late.
# Each step's output goes to /tmp/gpu-logs/<step>.log, a summary of exit codes to summary.txt
# there; after every step all of them are gathered into $OUT/all.log (the device tool brings
# back at most 8 files, and whatever is in $OUT when a run is cut off).
#
#   tools/gpu/device-run.sh BUNDLE_TAR_XZ MODELS_DIR
#
# MODELS_DIR holds GGUF files small enough to travel with the call (the device tool carries
# 64 MiB), e.g. the real checkpoints cut to their first 6 blocks and 4096 embedding rows:
#   gpu-bundle/bin/gpu_report truncate ~/.cache/candle-repro/SmolLM2-135M-Instruct.Q4_1.gguf \
#       .gpu-carry/smollm2-6blocks-4096rows.gguf 6 4096
# (run here with LD_LIBRARY_PATH=.venv-cuda/stubs, which satisfies the CUDA link without a
# GPU; the cut needs none).
set -uo pipefail
bundle="$1"
models="${2:-}"
final="${OUT:-/tmp/gpu-out}"
out=/tmp/gpu-logs
mkdir -p "$out" "$final"
repo="$(pwd)"
# The test binaries read data files under the path they were built in.
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$repo" /work/main; fi
tar -xJf "$bundle" -C "$repo"
b="$repo/gpu-bundle"
# run.sh's library search, without running anything.
libs="$(sed -n '/^dirs=/,/^export LD_LIBRARY_PATH/p' "$b/run.sh")"
eval "here=$b; $libs"
export LD_LIBRARY_PATH
summary="$out/summary.txt"
# Seconds since the start after which steps are skipped, so the call ends in time.
start=$(date +%s)
deadline=$((start + ${DEADLINE:-540}))
step() {
    local name="$1" limit="$2"
    shift 2
    local t0
    t0=$(date +%s)
    if [ $((t0 + 10)) -gt "$deadline" ]; then echo "$name skipped (deadline)" | tee -a "$summary"; return; fi
    [ $((t0 + limit)) -gt "$deadline" ] && limit=$((deadline - t0))
    timeout "$limit" "$@" > "$out/$name.log" 2>&1
    local rc=$?
    echo "$name rc=$rc $(($(date +%s) - t0))s" | tee -a "$summary"
    gather
}
gather() {
    local tmp
    tmp="$(mktemp "$final/.all.XXXX")"
    (cd "$out" && tail -n +1 summary.txt gpu.txt ./*.log) > "$tmp" 2>/dev/null
    mv -f "$tmp" "$final/all.log"
}
steps=" ${STEPS:-tests models ops torch report} "
want() { [[ "$steps" == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$out/gpu.txt"
ldd "$b/bin/report" | grep -e cu -e "not found" >> "$out/gpu.txt"

# The tests and checks: three at a time (they time nothing).
# TEST_ARGS: more libtest arguments for every test binary (e.g. "--skip NAME").
run_test() { step "test-$(basename "$1")" 240 "$1" --nocapture --test-threads=4 ${TEST_ARGS:-}; }
export -f step run_test gather
export out final summary deadline start TEST_ARGS
want tests && ls "$b"/bin/* | grep -v -e '/report$' -e '/gpu_report$' -e '/gpu_report_base$' -e '/llama_block$' |
    grep -E -e "${TESTS:-.}" | xargs -P 3 -I{} bash -c 'run_test {}'
# The matmul 4096³ alone: the f64 tiles, the integer tier on the int8 tensor cores, cuBLAS.
want matmul && step matmul 150 "$b/bin/gpu_report" matmul
want ops && step ops 150 "$b/bin/gpu_report" ops
# The quantized decode product on weights larger than the L2 cache (HBM bandwidth). With a
# baseline binary in the bundle (scripts/gpu-bundle.sh BASE_GPU_REPORT) and "qgemv-base" in
# STEPS: new, base, new.
want qgemv && step qgemv 120 "$b/bin/gpu_report" qgemv
if want qgemv-base && [ -x "$b/bin/gpu_report_base" ]; then
    step qgemv-base 120 "$b/bin/gpu_report_base" qgemv
    step qgemv-again 120 "$b/bin/gpu_report" qgemv
fi
# The FFT rows of ops alone.
want fft && step fft 90 "$b/bin/gpu_report" fft
if want torch; then
    step fftdump 60 "$b/bin/gpu_report" fftdump /tmp/fftdump
    step torch 120 env PYTHONUNBUFFERED=1 python3 tools/gpu/torch_baselines.py /tmp/fftdump
fi
# The models after the timings of single ops (the step order is the priority order when
# DEADLINE cuts the run short).
if want models; then
    for m in "$models"/*.gguf; do
        [ -e "$m" ] && step "model-$(basename "$m" .gguf)" 240 "$b/bin/gpu_report" model "$m"
    done
fi
# The cut models through the baseline binary too (decode tokens/s before and after).
if want models-base && [ -x "$b/bin/gpu_report_base" ]; then
    for m in "$models"/*.gguf; do
        [ -e "$m" ] && step "model-base-$(basename "$m" .gguf)" 240 "$b/bin/gpu_report_base" model "$m"
    done
fi
if want report; then
    step report 240 "$b/bin/report"
    step llama_block 120 "$b/bin/llama_block"
fi
# The quantized product at scale alone (issue 24: >= 10^7 outputs per weight type).
want qscale && step qscale 600 "$b/bin/quantized_cuda" --nocapture --exact cuda_bits_equal_cpu_bits_at_scale
grep -h -e "skipped" -e "test result" -e "panicked" "$out"/test-*.log | sort | uniq -c | head -40
cat "$summary"
gather
