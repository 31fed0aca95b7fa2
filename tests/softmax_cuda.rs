//! softmax / log-softmax on CUDA give the CPU's bits: >= 10^7 elements per dtype, short
//! rows, attention-shaped rows and rows long enough for many flushes per thread, special
//! rows, strided inputs, and the backward pass. Without the `cuda` feature or a device the
//! tests print "skipped: no CUDA device" and pass.
//!
//! `cargo test --release --features cuda --test softmax_cuda -- --nocapture`

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
            match i % 1009 {
                0 => f32::NEG_INFINITY,
                1 => 12.0,
                _ => (u * 2.0 - 1.0) * 16.0,
            }
        })
        .collect()
}

#[test]
fn cuda_bits_equal_cpu_bits() {
    let Some(gpu) = cuda_device() else { return };
    let shapes: [&[usize]; 5] = [
        &[4096, 1024],
        &[2, 8, 512, 512],
        &[3, 1 << 20],
        &[1000, 7],
        &[1, 1 << 22],
    ];
    for dtype in [DType::F32, DType::BF16, DType::F16] {
        let mut total = 0;
        for (i, shape) in shapes.iter().enumerate() {
            let n: usize = shape.iter().product();
            let cpu = Tensor::from_vec(input(n, 77 + i as u64), *shape, &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let dev = cpu.to_device(&gpu).unwrap();
            for (name, f) in [
                (
                    "softmax",
                    candle_repro::softmax_last_dim as fn(&Tensor) -> _,
                ),
                ("log_softmax", candle_repro::log_softmax_last_dim),
            ] {
                let a = bits(&f(&cpu).unwrap());
                let b = bits(&f(&dev).unwrap());
                assert!(a == b, "{name} {dtype:?} {shape:?}");
            }
            total += n;
        }
        println!("{dtype:?}: {total} elements, CUDA == CPU");
    }
}

#[test]
fn cuda_special_rows_and_strided_inputs() {
    let Some(gpu) = cuda_device() else { return };
    let inf = f32::INFINITY;
    let rows = [
        vec![1.0, 2.0, 3.0, 4.0],
        vec![inf, 0.0, inf, f32::NEG_INFINITY],
        vec![f32::NEG_INFINITY; 4],
        vec![1.0, f32::NAN, 0.0, 0.0],
        vec![0.0, -100.0, -745.5, -1e38],
    ];
    let flat: Vec<f32> = rows.concat();
    let cpu = Tensor::from_vec(flat, (5, 4), &Device::Cpu).unwrap();
    let dev = cpu.to_device(&gpu).unwrap();
    for t in [
        (cpu.clone(), dev.clone()),
        (cpu.t().unwrap(), dev.t().unwrap()),
    ] {
        let a = bits(&candle_repro::softmax_last_dim(&t.0).unwrap());
        let b = bits(&candle_repro::softmax_last_dim(&t.1).unwrap());
        assert_eq!(a, b);
    }
}

#[test]
fn cuda_backward_equals_cpu() {
    let Some(gpu) = cuda_device() else { return };
    let x = input(64 * 300, 5);
    let w = input(64 * 300, 6);
    let grad = |dev: &Device| {
        let v = candle_core::Var::from_vec(x.clone(), (64, 300), dev).unwrap();
        let wt = Tensor::from_vec(w.clone(), (64, 300), dev)
            .unwrap()
            .clamp(-10f32, 10f32)
            .unwrap();
        let v2 = v.as_tensor().clamp(-20f32, 20f32).unwrap();
        let loss = (candle_repro::softmax_last_dim(&v2).unwrap() * wt)
            .unwrap()
            .sum_all()
            .unwrap();
        let g = loss.backward().unwrap();
        bits(g.get(&v).unwrap())
    };
    assert_eq!(grad(&Device::Cpu), grad(&gpu));
}

/// Both backward kernels on the device, every dtype, with a transposed (non-contiguous)
/// input: the forward gathers on the device, the backward runs its own kernel; the input
/// gradients are the CPU's bits.
#[test]
fn cuda_backward_all_dtypes_log_and_strided() {
    let Some(gpu) = cuda_device() else { return };
    let x = Tensor::from_vec(input(300 * 64, 8), (300, 64), &Device::Cpu).unwrap();
    let w = Tensor::from_vec(input(64 * 300, 9), (64, 300), &Device::Cpu)
        .unwrap()
        .clamp(-10f32, 10f32)
        .unwrap();
    for dtype in [DType::F32, DType::BF16, DType::F16] {
        let x = x.clamp(-20f32, 20f32).unwrap().to_dtype(dtype).unwrap();
        let w = w.to_dtype(dtype).unwrap();
        for (name, f) in [
            (
                "softmax",
                candle_repro::softmax_last_dim as fn(&Tensor) -> _,
            ),
            ("log_softmax", candle_repro::log_softmax_last_dim),
        ] {
            let grad = |dev: &Device| {
                let v = candle_core::Var::from_tensor(&x.to_device(dev).unwrap()).unwrap();
                let wt = w.to_device(dev).unwrap();
                let y = f(&v.as_tensor().t().unwrap()).unwrap();
                let fwd = bits(&y);
                let loss = (y * wt).unwrap().sum_all().unwrap();
                let g = loss.backward().unwrap();
                (fwd, bits(g.get(&v).unwrap()))
            };
            let (cf, cg) = grad(&Device::Cpu);
            let (gf, gg) = grad(&gpu);
            assert!(cf == gf, "{name} {dtype:?}: forward of a transposed input");
            assert!(cg == gg, "{name} {dtype:?}: backward");
        }
    }
}
