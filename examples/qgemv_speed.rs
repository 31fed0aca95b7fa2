//! The decode GEMV (1, 4096) x (4096, 4096)^T on quantized weights: ours with the integer
//! first tier (the default), ours with the f64 tier alone (`int_tier: false`), stock
//! candle's `QMatMul` and a copy of the weight bytes, interleaved in one run; f32 x.
//!
//! `cargo run --release --example qgemv_speed [rounds] [types] [path]` prints the median
//! of each per round and the range over rounds, in microseconds; `types` a comma list
//! (`Q4K,Q6K,Q8_0,Q4_0`, the default `all`), `path` `avx2` or `baseline` to force our
//! product's vector path (default: the widest this CPU has).

use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Module, Tensor};
use candle_repro::math::VectorPath;
use candle_repro::matmul::CpuConfig;
use candle_repro::quantized::{QMatMul, qmatmul_with_config};
use rayon::prelude::*;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

fn median_us(mut f: impl FnMut(), reps: usize) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let only: Option<Vec<String>> = std::env::args()
        .nth(2)
        .filter(|a| a != "all")
        .map(|a| a.split(',').map(String::from).collect());
    let path = match std::env::args().nth(3).as_deref() {
        Some("avx2") => VectorPath::Avx2,
        Some("baseline") => VectorPath::Baseline,
        _ => VectorPath::detect(),
    };
    let (k, n) = (4096, 4096);
    let dev = &Device::Cpu;
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let w: Vec<f32> = (0..n * k).map(|_| next() as f32).collect();
    let x: Vec<f32> = (0..k).map(|_| next() as f32).collect();
    let w = Tensor::from_vec(w, (n, k), dev).unwrap();
    let x = Tensor::from_vec(x, (1, k), dev).unwrap();
    println!("threads {}, path {path:?}", rayon::current_num_threads());
    for ty in [
        GgmlDType::Q4K,
        GgmlDType::Q6K,
        GgmlDType::Q8_0,
        GgmlDType::Q4_0,
    ] {
        if only
            .as_ref()
            .is_some_and(|o| !o.contains(&format!("{ty:?}")))
        {
            continue;
        }
        let q = Arc::new(QTensor::quantize(&w, ty).unwrap());
        let ours = QMatMul::from_arc(q.clone()).unwrap();
        let stock = candle_core::quantized::QMatMul::from_arc(q.clone()).unwrap();
        let bytes = q.data().unwrap().to_vec();
        let mut dst = vec![0u8; bytes.len()];
        let f64_only = CpuConfig {
            path,
            int_tier: Some(false),
            ..CpuConfig::default()
        };
        // The integer tier on every type (the 32-weight ones included, off by default).
        let int_all = CpuConfig {
            path,
            int_tier: Some(true),
            int_tier_short_blocks: true,
            ..CpuConfig::default()
        };
        // The two tiers give the same bits.
        let a = qmatmul_with_config(&ours, &x, None, int_all)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let b = qmatmul_with_config(&ours, &x, None, f64_only)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        assert!(
            a.iter()
                .flatten()
                .zip(b.iter().flatten())
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
        let mut res = [(); 4].map(|_| Vec::new());
        for _ in 0..rounds {
            res[0].push(median_us(
                || {
                    drop(black_box(
                        qmatmul_with_config(&ours, &x, None, int_all).unwrap(),
                    ))
                },
                30,
            ));
            res[1].push(median_us(
                || {
                    drop(black_box(
                        qmatmul_with_config(&ours, &x, None, f64_only).unwrap(),
                    ))
                },
                30,
            ));
            res[2].push(median_us(
                || drop(black_box(stock.forward(&x).unwrap())),
                30,
            ));
            res[3].push(median_us(
                || {
                    dst.par_chunks_mut(1 << 16)
                        .zip(black_box(&bytes).par_chunks(1 << 16))
                        .for_each(|(d, s)| d.copy_from_slice(s))
                },
                30,
            ));
        }
        let names = [
            "ours (integer tier)",
            "ours (f64 tier only)",
            "stock candle",
            "copy of the bytes",
        ];
        for (name, r) in names.iter().zip(&res) {
            let mut r = r.clone();
            r.sort_by(f64::total_cmp);
            println!(
                "{ty:?} {name:>22}: median {:7.0} us, range {:.0}..{:.0} over {rounds} rounds",
                r[rounds / 2],
                r[0],
                r[rounds - 1]
            );
        }
    }
}
