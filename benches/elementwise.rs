//! Elementwise ops against stock candle on a 16M-element f32 tensor (same run, same
//! machine), and the slice kernels per element on one thread.
//!
//! `cargo bench --bench elementwise` (RAYON_NUM_THREADS=1 for the one-thread figures).

mod common;

use candle_core::{Device, Tensor};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const N: usize = 1 << 24;

type TensorFn = fn(&Tensor) -> candle_core::Result<Tensor>;

fn stock_softplus(x: &Tensor) -> candle_core::Result<Tensor> {
    (x.exp()? + 1.0)?.log()
}

fn ops() -> Vec<(&'static str, TensorFn, TensorFn)> {
    vec![
        ("exp", candle_repro::exp, |x| x.exp()),
        ("log", candle_repro::log, |x| x.abs()?.log()),
        // candle has no log10: ln x / ln 10, as models write it.
        ("log10", candle_repro::log10, |x| {
            x.abs()?.log()? * std::f64::consts::LOG10_E
        }),
        ("sin", candle_repro::sin, |x| x.sin()),
        ("cos", candle_repro::cos, |x| x.cos()),
        ("tanh", candle_repro::tanh, |x| x.tanh()),
        ("sigmoid", candle_repro::sigmoid, candle_nn::ops::sigmoid),
        ("silu", candle_repro::silu, |x| x.silu()),
        ("softplus", candle_repro::softplus, stock_softplus),
        ("gelu", candle_repro::gelu, |x| x.gelu()),
        ("gelu_erf", candle_repro::gelu_erf, |x| x.gelu_erf()),
        ("erf", candle_repro::erf, |x| x.erf()),
    ]
}

fn tensors(c: &mut Criterion) {
    let x = Tensor::from_vec(common::input(N, 8.0), N, &Device::Cpu).unwrap();
    let x_abs = x.abs().unwrap();
    let mut g = c.benchmark_group("tensor_16M_f32");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N as u64));
    for (name, ours, stock) in ops() {
        // log's and log10's stock variants take |x| themselves; give ours the same argument.
        let arg = if name == "log" || name == "log10" {
            &x_abs
        } else {
            &x
        };
        g.bench_function(format!("{name}/candle_repro"), |b| {
            b.iter(|| ours(black_box(arg)).unwrap())
        });
        g.bench_function(format!("{name}/stock_candle"), |b| {
            b.iter(|| stock(black_box(&x)).unwrap())
        });
    }
    g.finish();
}

fn slices(c: &mut Criterion) {
    use candle_repro::math;
    let n = 1 << 20;
    let x = common::input(n, 8.0);
    let x_pos: Vec<f32> = x.iter().map(|v| v.abs()).collect();
    let mut out = vec![0f32; n];
    let mut g = c.benchmark_group("slice_1M_f32_one_thread");
    g.sample_size(20);
    g.throughput(Throughput::Elements(n as u64));
    type SliceKernel = fn(&[f32], &mut [f32]);
    let kernels: [(&str, SliceKernel, &Vec<f32>); 14] = [
        ("exp", math::exp_slice, &x),
        ("expm1", math::expm1_slice, &x),
        ("log", math::log_slice, &x_pos),
        ("log1p", math::log1p_slice, &x_pos),
        ("log10", math::log10_slice, &x_pos),
        ("sin", math::sin_slice, &x),
        ("cos", math::cos_slice, &x),
        ("tanh", math::tanh_slice, &x),
        ("sigmoid", math::sigmoid_slice, &x),
        ("silu", math::silu_slice, &x),
        ("softplus", math::softplus_slice, &x),
        ("gelu", math::gelu_slice, &x),
        ("gelu_erf", math::gelu_erf_slice, &x),
        ("erf", math::erf_slice, &x),
    ];
    for (name, kernel, arg) in kernels {
        g.bench_function(format!("{name}/candle_repro"), |b| {
            b.iter(|| kernel(black_box(arg), &mut out))
        });
    }
    // What stock candle runs per element on the CPU (Rust std / platform libm), in the same
    // kind of loop; one monomorphic loop per function, as candle's unary_map compiles.
    macro_rules! stock {
        ($name:literal, $arg:expr, |$v:ident| $body:expr) => {
            g.bench_function(concat!($name, "/stock_std"), |b| {
                b.iter(|| {
                    for (o, &$v) in out.iter_mut().zip(black_box($arg).iter()) {
                        *o = $body;
                    }
                })
            });
        };
    }
    stock!("exp", &x, |v| v.exp());
    stock!("log", &x_pos, |v| v.ln());
    stock!("log10", &x_pos, |v| v.log10());
    stock!("sin", &x, |v| v.sin());
    stock!("cos", &x, |v| v.cos());
    stock!("tanh", &x, |v| v.tanh());
    stock!("sigmoid", &x, |v| 1.0 / (1.0 + (-v).exp()));
    stock!("silu", &x, |v| v / (1.0 + (-v).exp()));
    stock!("softplus", &x, |v| (v.exp() + 1.0).ln());
    // candle's CPU element functions for gelu (tanh form), gelu_erf and erf.
    stock!("gelu", &x, |v| 0.5
        * v
        * (1.0 + (0.797_884_6 * v * (1.0 + 0.044715 * v * v)).tanh()));
    stock!("gelu_erf", &x, |v| (candle_core::cpu::erf::erf_f32(
        v * std::f32::consts::FRAC_1_SQRT_2
    ) + 1.0)
        * 0.5
        * v);
    stock!("erf", &x, |v| candle_core::cpu::erf::erf_f32(v));
    g.finish();
}

criterion_group!(benches, tensors, slices);
criterion_main!(benches);
