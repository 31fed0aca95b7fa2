//! The elementwise candle ops: every dtype, shape and layout gives the scalar functions'
//! bits; the thread count changes nothing; bad dtypes are errors; special values follow
//! C99 Annex F with canonical NaNs.

mod common;

use candle_core::{DType, Device, IndexOp, Tensor};
use candle_repro::{UnaryFn, math};
use common::bits;
use half::{bf16, f16};

fn scalar_f32(f: UnaryFn) -> fn(f32) -> f32 {
    match f {
        UnaryFn::Exp => math::exp,
        UnaryFn::Expm1 => math::expm1,
        UnaryFn::Log => math::log,
        UnaryFn::Log1p => math::log1p,
        UnaryFn::Log10 => math::log10,
        UnaryFn::Sin => math::sin,
        UnaryFn::Cos => math::cos,
        UnaryFn::Tanh => math::tanh,
        UnaryFn::Sigmoid => math::sigmoid,
        UnaryFn::Silu => math::silu,
        UnaryFn::Softplus => math::softplus,
        UnaryFn::Erf => math::erf,
        UnaryFn::Gelu => math::gelu,
        UnaryFn::GeluErf => math::gelu_erf,
    }
}

fn scalar_as<T: math::Format>(f: UnaryFn, x: T) -> T {
    match f {
        UnaryFn::Exp => math::exp_in(x),
        UnaryFn::Expm1 => math::expm1_in(x),
        UnaryFn::Log => math::log_in(x),
        UnaryFn::Log1p => math::log1p_in(x),
        UnaryFn::Log10 => math::log10_in(x),
        UnaryFn::Sin => math::sin_in(x),
        UnaryFn::Cos => math::cos_in(x),
        UnaryFn::Tanh => math::tanh_in(x),
        UnaryFn::Sigmoid => math::sigmoid_in(x),
        UnaryFn::Silu => math::silu_in(x),
        UnaryFn::Softplus => math::softplus_in(x),
        UnaryFn::Erf => math::erf_in(x),
        UnaryFn::Gelu => math::gelu_in(x),
        UnaryFn::GeluErf => math::gelu_erf_in(x),
    }
}

fn values(n: usize) -> Vec<f32> {
    let mut s = 12345u32;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1 << 24) as f32 * 40.0 - 20.0
        })
        .collect()
}

fn expected_bits(f: UnaryFn, x: &Tensor) -> Vec<u32> {
    let x = x.flatten_all().unwrap();
    match x.dtype() {
        DType::F32 => x
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|&v| scalar_f32(f)(v).to_bits())
            .collect(),
        DType::BF16 => x
            .to_vec1::<bf16>()
            .unwrap()
            .iter()
            .map(|&v| scalar_as(f, v).to_bits() as u32)
            .collect(),
        DType::F16 => x
            .to_vec1::<f16>()
            .unwrap()
            .iter()
            .map(|&v| scalar_as(f, v).to_bits() as u32)
            .collect(),
        _ => unreachable!(),
    }
}

#[test]
fn every_dtype_and_layout_matches_the_scalar_functions() {
    let base = Tensor::from_vec(values(6 * 70 * 90), (6, 70, 90), &Device::Cpu).unwrap();
    for dtype in [DType::F32, DType::BF16, DType::F16] {
        let x = base.to_dtype(dtype).unwrap();
        let layouts = [
            ("contiguous", x.clone()),
            ("transposed", x.transpose(1, 2).unwrap()),
            ("narrowed", x.narrow(2, 3, 50).unwrap()),
            (
                "strided step",
                x.i((.., 1..60, 5..)).unwrap().transpose(0, 2).unwrap(),
            ),
            (
                "broadcast",
                x.i((0, 0, ..))
                    .unwrap()
                    .unsqueeze(0)
                    .unwrap()
                    .broadcast_as((4, 90))
                    .unwrap(),
            ),
            ("scalar", x.i((1, 2, 3)).unwrap()),
            ("empty", x.narrow(1, 0, 0).unwrap()),
        ];
        for f in UnaryFn::ALL {
            for (name, xl) in &layouts {
                let y = candle_repro::unary(xl, f).unwrap();
                assert_eq!(y.dims(), xl.dims(), "{f:?} {dtype:?} {name}: shape");
                assert_eq!(y.dtype(), dtype);
                assert_eq!(
                    bits(&y),
                    expected_bits(f, xl),
                    "{f:?} {dtype:?} {name}: bits"
                );
            }
        }
    }
}

#[test]
fn thread_count_does_not_change_bits() {
    let x = Tensor::from_vec(values(300_001), 300_001, &Device::Cpu).unwrap();
    for f in UnaryFn::ALL {
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| bits(&candle_repro::unary(&x, f).unwrap()))
        };
        assert_eq!(run(1), run(2), "{f:?}");
        assert_eq!(run(1), run(3), "{f:?}");
    }
}

#[test]
fn unsupported_dtypes_are_errors() {
    for dtype in [DType::F64, DType::U8, DType::U32, DType::I64] {
        let x = Tensor::zeros(4, dtype, &Device::Cpu).unwrap();
        for f in UnaryFn::ALL {
            let e = candle_repro::unary(&x, f).unwrap_err().to_string();
            assert!(e.contains(f.name()), "{f:?} {dtype:?}: {e}");
        }
    }
}

#[test]
fn special_values_follow_annex_f() {
    let inf = f32::INFINITY;
    let nan_payload = f32::from_bits(0xFFA0_0001); // a negative signalling-looking NaN
    let canonical = 0x7FC0_0000u32;
    let cases: &[(UnaryFn, f32, u32)] = &[
        (UnaryFn::Exp, -inf, 0),
        (UnaryFn::Exp, inf, inf.to_bits()),
        (UnaryFn::Exp, -0.0, 1f32.to_bits()),
        (UnaryFn::Log, 0.0, (-inf).to_bits()),
        (UnaryFn::Log, -0.0, (-inf).to_bits()),
        (UnaryFn::Log, -1.0, canonical),
        (UnaryFn::Log, 1.0, 0),
        (UnaryFn::Log, inf, inf.to_bits()),
        (UnaryFn::Log10, 0.0, (-inf).to_bits()),
        (UnaryFn::Log10, -0.0, (-inf).to_bits()),
        (UnaryFn::Log10, -1.0, canonical),
        (UnaryFn::Log10, -inf, canonical),
        (UnaryFn::Log10, 1.0, 0),
        (UnaryFn::Log10, 1e10, 10f32.to_bits()),
        (UnaryFn::Log10, inf, inf.to_bits()),
        (UnaryFn::Sin, -0.0, 0x8000_0000),
        (UnaryFn::Sin, inf, canonical),
        (UnaryFn::Cos, -inf, canonical),
        (UnaryFn::Cos, -0.0, 1f32.to_bits()),
        (UnaryFn::Tanh, inf, 1f32.to_bits()),
        (UnaryFn::Tanh, -inf, (-1f32).to_bits()),
        (UnaryFn::Tanh, -0.0, 0x8000_0000),
        (UnaryFn::Sigmoid, -inf, 0),
        (UnaryFn::Sigmoid, inf, 1f32.to_bits()),
        (UnaryFn::Sigmoid, 0.0, 0.5f32.to_bits()),
        (UnaryFn::Silu, -0.0, 0x8000_0000),
        (UnaryFn::Silu, inf, inf.to_bits()),
        (UnaryFn::Softplus, -inf, 0),
        (UnaryFn::Softplus, inf, inf.to_bits()),
        (UnaryFn::Erf, inf, 1f32.to_bits()),
        (UnaryFn::Erf, -inf, (-1f32).to_bits()),
        (UnaryFn::Erf, -0.0, 0x8000_0000),
        (UnaryFn::Gelu, inf, inf.to_bits()),
        (UnaryFn::Gelu, -inf, 0x8000_0000),
        (UnaryFn::Gelu, -0.0, 0x8000_0000),
        (UnaryFn::Gelu, -1e30, 0x8000_0000),
        (UnaryFn::GeluErf, inf, inf.to_bits()),
        (UnaryFn::GeluErf, -inf, 0x8000_0000),
        (UnaryFn::GeluErf, -0.0, 0x8000_0000),
        (UnaryFn::GeluErf, -1e30, 0x8000_0000),
    ];
    for &(f, x, want) in cases {
        assert_eq!(scalar_f32(f)(x).to_bits(), want, "{f:?}({x})");
    }
    // subnormals are not flushed: sin and tanh of the smallest subnormal are itself
    let tiny = f32::from_bits(1);
    assert_eq!(math::sin(tiny).to_bits(), 1);
    assert_eq!(math::tanh(-tiny).to_bits(), 0x8000_0001);
    assert_eq!(math::expm1(tiny).to_bits(), 1);
    assert_eq!(math::log1p(tiny).to_bits(), 1);
    // erf(x) ~ 1.128 x; gelu and gelu_erf of +-2^-149: x/2 is a rounding midpoint, and the
    // exact x^2 term (positive) decides: up for x > 0, towards -0 for x < 0.
    assert_eq!(math::erf(tiny).to_bits(), 1);
    assert_eq!(math::erf(-tiny).to_bits(), 0x8000_0001);
    assert_eq!(math::gelu(tiny).to_bits(), 1);
    assert_eq!(math::gelu(-tiny).to_bits(), 0x8000_0000);
    assert_eq!(math::gelu_erf(tiny).to_bits(), 1);
    assert_eq!(math::gelu_erf(-tiny).to_bits(), 0x8000_0000);
    for f in UnaryFn::ALL {
        assert_eq!(
            scalar_f32(f)(nan_payload).to_bits(),
            canonical,
            "{f:?}(NaN)"
        );
        assert_eq!(
            scalar_as(f, bf16::from_bits(0xFFC1)).to_bits(),
            0x7FC0,
            "{f:?} bf16 NaN"
        );
        assert_eq!(
            scalar_as(f, f16::from_bits(0xFE01)).to_bits(),
            0x7E00,
            "{f:?} f16 NaN"
        );
    }
}

#[test]
fn softplus_with_defaults_is_softplus_and_thresholds_like_pytorch() {
    let x = Tensor::from_vec(values(10_000), 10_000, &Device::Cpu).unwrap();
    let a = candle_repro::softplus(&x).unwrap();
    let b = candle_repro::softplus_with(&x, 1.0, 20.0).unwrap();
    assert_eq!(bits(&a), bits(&b));
    // beta = 2, threshold = 5: x itself where 2x > 5, else softplus(2x)/2
    let y = candle_repro::softplus_with(&x, 2.0, 5.0).unwrap();
    let xs = x.to_vec1::<f32>().unwrap();
    let ys = y.to_vec1::<f32>().unwrap();
    for (&xi, &yi) in xs.iter().zip(&ys) {
        if 2.0 * xi > 5.0 {
            assert_eq!(yi, xi);
        } else {
            let want = ((2.0 * xi as f64).exp().ln_1p() / 2.0) as f32;
            assert!((yi - want).abs() <= 2.0 * f32::EPSILON * want.abs().max(f32::MIN_POSITIVE));
        }
    }
}
