//! The matmul on CUDA gives the CPU's bits: >= 10^7 outputs per dtype (f32, bf16, f16, and
//! f8e4m3 into f32 and bf16), weights transposed and not, batched and broadcast operands,
//! a fused bias, adversarial entries (spread exponents, cancellations, specials), each
//! tier forced alone, through both tier-1 kernels (f64 tiles and the int8 integer tier);
//! `nn::Linear` and the f8e4m3 cast too. Without the `cuda` feature or
//! a device the tests print "skipped: no CUDA device" and pass.
//!
//! `cargo test --release --features cuda --test matmul_cuda -- --nocapture`

mod common;

use candle_core::{DType, Device, Module, Tensor};
use candle_repro::matmul::{CpuConfig, matmul_with_config};
use candle_repro::{Overflow, to_f8e4m3};
use common::{bits, cuda_device};

/// Values for products: mostly normal(0, 1)-like, one in 97 spread over 2^+-20, one in
/// 1009 a zero, and with `specials` one in 4001 NaN or +-inf.
fn input(n: usize, seed: u64, specials: bool) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 40) as f32 / (1u64 << 24) as f32;
            match i % 4001 {
                0 if specials => f32::NAN,
                1 if specials => f32::INFINITY,
                2 if specials => f32::NEG_INFINITY,
                _ if i % 1009 == 0 => 0.0,
                _ if i % 97 == 0 => (u - 0.5) * 2f32.powi((s % 41) as i32 - 20),
                _ => (u * 2.0 - 1.0) * 1.7,
            }
        })
        .collect()
}

fn tensor(shape: &[usize], dt: DType, seed: u64, specials: bool) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_vec(input(n, seed, specials), shape, &Device::Cpu)
        .unwrap()
        .to_dtype(dt)
        .unwrap()
}

#[test]
fn cuda_bits_equal_cpu_bits() {
    let Some(gpu) = cuda_device() else { return };
    for (dt, out) in [
        (DType::F32, DType::F32),
        (DType::BF16, DType::BF16),
        (DType::F16, DType::F16),
        (DType::F8E4M3, DType::F32),
        (DType::F8E4M3, DType::BF16),
    ] {
        let mut total = 0usize;
        // (a shape, b shape, b given as the transpose of a weight)
        let cases: [(&[usize], &[usize], bool); 6] = [
            (&[2048, 576], &[1536, 576], true),
            (&[1024, 1024], &[1024, 1024], false),
            (&[4, 2048, 64], &[4, 64, 2048], false),
            (&[1, 4096], &[4096, 4096], true),
            (&[3, 333], &[77, 333], true),
            (&[700, 1], &[1, 900], false),
        ];
        for (c, (ash, bsh, weight)) in cases.iter().enumerate() {
            let a = tensor(ash, dt, 11 + c as u64, c % 2 == 1);
            let b0 = tensor(bsh, dt, 23 + c as u64, false);
            let b = if *weight { b0.t().unwrap() } else { b0 };
            let n = *b.dims().last().unwrap();
            let bias = tensor(&[n], out, 5, false);
            for with_bias in [false, true] {
                let c_bias = with_bias.then_some(&bias);
                let cpu =
                    matmul_with_config(&a, &b, c_bias, Some(out), CpuConfig::default()).unwrap();
                let (ga, gb) = (a.to_device(&gpu).unwrap(), b.to_device(&gpu).unwrap());
                let gbias = bias.to_device(&gpu).unwrap();
                // Both tier-1 kernels: the f64 tiles and the integer tier (f8e4m3 inputs
                // always take the f64 tiles).
                // (int_tier, int_tiled): the f64 tiles, the integer tier's warp-per-tile
                // and tiled kernels.
                let kernels: &[(bool, bool)] = if dt == DType::F8E4M3 {
                    &[(false, false)]
                } else {
                    &[(false, false), (true, false), (true, true)]
                };
                for &(int_tier, int_tiled) in kernels {
                    let cfg = CpuConfig {
                        int_tier: Some(int_tier),
                        int_tiled,
                        ..CpuConfig::default()
                    };
                    let dev =
                        matmul_with_config(&ga, &gb, with_bias.then_some(&gbias), Some(out), cfg)
                            .unwrap();
                    assert!(
                        bits(&cpu) == bits(&dev),
                        "{dt:?}->{out:?} {ash:?} x {bsh:?} bias {with_bias} int tier {int_tier} tiled {int_tiled}"
                    );
                }
                total += cpu.elem_count();
            }
        }
        println!("{dt:?}->{out:?}: {total} outputs, CUDA bits == CPU bits");
        assert!(total >= 10_000_000);
    }
}

#[test]
fn each_tier_alone_gives_the_same_bits() {
    let Some(gpu) = cuda_device() else { return };
    for dt in [DType::F32, DType::BF16] {
        let a = tensor(&[37, 500], dt, 3, true);
        let b = tensor(&[500, 29], dt, 4, false);
        let want = bits(&candle_repro::matmul(&a, &b).unwrap());
        for tier in [2u8, 3] {
            let cfg = CpuConfig {
                start_tier: Some(tier),
                ..CpuConfig::default()
            };
            let (ga, gb) = (a.to_device(&gpu).unwrap(), b.to_device(&gpu).unwrap());
            let got = bits(&matmul_with_config(&ga, &gb, None, None, cfg).unwrap());
            assert!(got == want, "{dt:?} from tier {tier}");
        }
    }
}

#[test]
fn linear_and_the_f8_cast_on_cuda() {
    let Some(gpu) = cuda_device() else { return };
    let w = tensor(&[300, 576], DType::BF16, 7, false);
    let b = tensor(&[300], DType::BF16, 8, false);
    let x = tensor(&[2, 9, 576], DType::BF16, 9, false);
    let cpu = candle_repro::nn::Linear::new(w.clone(), Some(b.clone()));
    let dev =
        candle_repro::nn::Linear::new(w.to_device(&gpu).unwrap(), Some(b.to_device(&gpu).unwrap()));
    let y = bits(&cpu.forward(&x).unwrap());
    assert!(
        y == bits(&dev.forward(&x.to_device(&gpu).unwrap()).unwrap()),
        "Linear"
    );
    let v = tensor(&[4096, 2049], DType::F32, 10, true)
        .affine(300.0, 0.0)
        .unwrap();
    for dt in [DType::F32, DType::BF16, DType::F16] {
        let v = v.to_dtype(dt).unwrap();
        let vt = v.t().unwrap(); // strided
        for mode in [Overflow::Saturate, Overflow::Nan] {
            let f8_bits = |t: Tensor| -> Vec<u8> {
                let t = t.to_device(&Device::Cpu).unwrap().flatten_all().unwrap();
                t.to_vec1::<float8::F8E4M3>()
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect()
            };
            let w8 = f8_bits(to_f8e4m3(&vt, mode).unwrap());
            let g8 = f8_bits(to_f8e4m3(&vt.to_device(&gpu).unwrap(), mode).unwrap());
            assert!(w8 == g8, "to_f8e4m3 {dt:?} {mode:?}");
        }
    }
}
