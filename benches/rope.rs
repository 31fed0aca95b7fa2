//! rope / rope_i / rope_thd against stock candle (`candle_nn::rotary_emb`) on the CPU, same
//! run, same machine: xs (1, 32, 2048, 128) (rope_thd: (1, 2048, 32, 128)) in f32 and bf16
//! with correctly rounded Llama-3.1 tables; plus the table build itself.
//!
//! `cargo bench --bench rope` (ROPE_BENCH_CASE=rope_i_f32 etc. to filter,
//! RAYON_NUM_THREADS=1 for the one-thread figures).

mod common;

use candle_core::{DType, Device, Tensor};
use candle_repro::rope::{RopeConfig, RopeLayout, RopeTables};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

type RopeFn = fn(&Tensor, &Tensor, &Tensor) -> candle_core::Result<Tensor>;

fn bench(c: &mut Criterion) {
    let (b, h, t, d) = (1usize, 32usize, 2048usize, 128usize);
    let only = std::env::var("ROPE_BENCH_CASE").ok();
    for dtype in [DType::F32, DType::BF16] {
        let tables = RopeTables::new(&RopeConfig::llama31(d), t, dtype, &Device::Cpu).unwrap();
        let cases: [(&str, RopeLayout, RopeFn); 3] = [
            ("rope", RopeLayout::Halves, candle_nn::rotary_emb::rope),
            (
                "rope_i",
                RopeLayout::Interleaved,
                candle_nn::rotary_emb::rope_i,
            ),
            ("rope_thd", RopeLayout::Thd, candle_nn::rotary_emb::rope_thd),
        ];
        for (name, layout, stock) in cases {
            let case = format!("{name}_{}", dtype.as_str());
            if only.as_deref().is_some_and(|o| o != case) {
                continue;
            }
            let shape = if layout == RopeLayout::Thd {
                (b, t, h, d)
            } else {
                (b, h, t, d)
            };
            let x = Tensor::from_vec(common::input(b * h * t * d, 4.0), shape, &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let mut g = c.benchmark_group(format!("{case}_1x32x2048x128"));
            g.sample_size(20);
            g.throughput(Throughput::Elements(x.elem_count() as u64));
            g.bench_function("candle_repro", |bch| {
                bch.iter(|| {
                    candle_repro::rope::rope_with(layout, black_box(&x), &tables.cos, &tables.sin)
                        .unwrap()
                })
            });
            g.bench_function("stock_candle", |bch| {
                bch.iter(|| stock(black_box(&x), &tables.cos, &tables.sin).unwrap())
            });
            g.finish();
        }
    }
    if only.as_deref().is_none_or(|o| o == "tables") {
        let mut g = c.benchmark_group("tables_llama31_d128_f32");
        g.sample_size(10);
        for n in [2048usize, 131072] {
            g.throughput(Throughput::Elements((n * d) as u64));
            g.bench_function(format!("{n}_positions"), |bch| {
                bch.iter(|| {
                    RopeTables::new(&RopeConfig::llama31(d), n, DType::F32, &Device::Cpu).unwrap()
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
