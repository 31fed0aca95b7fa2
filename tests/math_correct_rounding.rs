//! Correct rounding of the math core against MPFR (the `mpfr-oracle` crate):
//! every bf16 and every f16 input, and a strided sample of over 10^7 f32 bit patterns plus
//! each function's hard cases, for every function. Zero misrounded results allowed.
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_repro::math;
use half::{bf16, f16};
use mpfr_oracle::{Func, cr_bf16, cr_f16, cr_f32};
use rayon::prelude::*;

struct Fun {
    f32: fn(f32) -> f32,
    bf16: fn(bf16) -> bf16,
    f16: fn(f16) -> f16,
}

fn fun(func: Func) -> Fun {
    macro_rules! f {
        ($n:ident) => {
            paste::paste! { Fun { f32: math::$n, bf16: math::[<$n _bf16>], f16: math::[<$n _f16>] } }
        };
    }
    match func {
        Func::Exp => f!(exp),
        Func::Expm1 => f!(expm1),
        Func::Log => f!(log),
        Func::Log1p => f!(log1p),
        Func::Log10 => f!(log10),
        Func::Sin => f!(sin),
        Func::Cos => f!(cos),
        Func::Tanh => f!(tanh),
        Func::Sigmoid => f!(sigmoid),
        Func::Silu => f!(silu),
        Func::Softplus => f!(softplus),
        Func::Erf => f!(erf),
        Func::Gelu => f!(gelu),
        Func::GeluErf => f!(gelu_erf),
    }
}

/// Inputs whose results lie extremely close to a rounding boundary, or at the edges of the
/// function's regimes; found with the exhaustive checker (`examples/verify_math.rs`).
fn hard_cases(func: Func) -> Vec<f32> {
    let mut v: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0xFFC0_1234),
        f32::from_bits(0x7F80_0001),
        f32::EPSILON,
        -f32::EPSILON,
    ];
    v.extend(candle_repro_hard_cases(func));
    v
}

include!("common/hard_cases.rs");

fn report(kind: &str, func: Func, bad: &[(u32, u32, u32)]) {
    if !bad.is_empty() {
        let shown: Vec<String> = bad
            .iter()
            .take(12)
            .map(|(x, ours, cr)| format!("x={x:#x} ours={ours:#x} correct={cr:#x}"))
            .collect();
        panic!(
            "{} {kind}: {} misrounded, e.g.\n  {}",
            func.name(),
            bad.len(),
            shown.join("\n  ")
        );
    }
}

fn check_16bit(func: Func) {
    let f = fun(func);
    let bad: Vec<(u32, u32, u32)> = (0..=u16::MAX)
        .into_par_iter()
        .filter_map(|b| {
            let x = bf16::from_bits(b);
            let (ours, cr) = ((f.bf16)(x).to_bits(), cr_bf16(func, x).to_bits());
            (ours != cr).then_some((b as u32, ours as u32, cr as u32))
        })
        .collect();
    report("bf16 (all 65536 inputs)", func, &bad);
    let bad: Vec<(u32, u32, u32)> = (0..=u16::MAX)
        .into_par_iter()
        .filter_map(|b| {
            let x = f16::from_bits(b);
            let (ours, cr) = ((f.f16)(x).to_bits(), cr_f16(func, x).to_bits());
            (ours != cr).then_some((b as u32, ours as u32, cr as u32))
        })
        .collect();
    report("f16 (all 65536 inputs)", func, &bad);
}

/// Stride through the whole f32 bit space: 2^32 / 409 = 10.5 million patterns, every
/// exponent and sign, plus the hard cases.
const F32_STRIDE: u64 = 409;

fn check_f32(func: Func) {
    let f = fun(func);
    let sample = (0..(1u64 << 32) / F32_STRIDE)
        .into_par_iter()
        .map(|i| (i * F32_STRIDE) as u32);
    let hard = hard_cases(func).into_par_iter().map(f32::to_bits);
    let bad: Vec<(u32, u32, u32)> = sample
        .chain(hard)
        .filter_map(|b| {
            let x = f32::from_bits(b);
            let (ours, cr) = ((f.f32)(x).to_bits(), cr_f32(func, x).to_bits());
            (ours != cr).then_some((b, ours, cr))
        })
        .collect();
    report("f32 (strided sample + hard cases)", func, &bad);
}

macro_rules! cr_tests {
    ($($name:ident => $func:expr),* $(,)?) => {
        mod bf16_f16_exhaustive {
            use super::*;
            $(#[test] fn $name() { check_16bit($func) })*
        }
        mod f32_strided {
            use super::*;
            $(#[test] fn $name() { check_f32($func) })*
        }
    };
}

cr_tests! {
    exp => Func::Exp,
    expm1 => Func::Expm1,
    log => Func::Log,
    log1p => Func::Log1p,
    log10 => Func::Log10,
    sin => Func::Sin,
    cos => Func::Cos,
    tanh => Func::Tanh,
    sigmoid => Func::Sigmoid,
    silu => Func::Silu,
    softplus => Func::Softplus,
    erf => Func::Erf,
    gelu => Func::Gelu,
    gelu_erf => Func::GeluErf,
}
