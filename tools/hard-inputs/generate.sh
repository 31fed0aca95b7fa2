#!/bin/sh
# Regenerate tests/data/hard (issue 31): the hardest inputs of every elementwise rounding
# decision (14 functions x f32/bf16/f16 x unfused/fused fast paths) and of the RoPE table
# entries, over every f32 and every 16-bit input, checked against MPFR when written, plus
# the FFT twiddles' distance to f32 boundaries. See examples/hard_inputs.rs.
# About 30 minutes on 2 cores; run it after changing a fast path or a bound, then run
# `cargo test --release --test hard_inputs` and the defect list
# `python3 tools/plant-defects/plant.py --list tools/plant-defects/domains.toml`.
set -e
cd "$(dirname "$0")/../.."
cargo run --release --example hard_inputs -- --out tests/data/hard "$@"
