//! The backward passes of the elementwise functions (`repro_core::math::grad` defines
//! them): where the definition is a correctly rounded product (exp, expm1, sin, cos,
//! tanh, sigmoid, softplus) its bits are checked against MPFR's rounding of the exact product;
//! every function's gradient is measured against the true derivative (MPFR values) and
//! its worst error printed and bounded; the tensor op gives the scalar definition's bits
//! for every dtype, layout and thread count, and candle's autograd calls it.
// Needs the workspace tools (the MPFR oracle); skipped in the packaged crate.
#![cfg(repro_workspace)]

mod common;

use candle_core::{DType, Device, IndexOp, Tensor, Var};
use candle_repro::math::{self, Format, grad};
use candle_repro::{UnaryFn, softplus_with_bwd, unary, unary_bwd};
use common::bits;
use half::{bf16, f16};
use mpfr_oracle::Func;

#[path = "data/grad_log10_hard.rs"]
mod hard;

/// The scalar definition of `f`'s backward pass in format `T`.
fn grad_scalar<T: Format>(f: UnaryFn, x: T, g: T) -> T {
    match f {
        UnaryFn::Exp => grad::exp_grad(x, g),
        UnaryFn::Expm1 => grad::expm1_grad(x, g),
        UnaryFn::Log => grad::log_grad(x, g),
        UnaryFn::Log1p => grad::log1p_grad(x, g),
        UnaryFn::Log10 => grad::log10_grad(x, g),
        UnaryFn::Sin => grad::sin_grad(x, g),
        UnaryFn::Cos => grad::cos_grad(x, g),
        UnaryFn::Tanh => grad::tanh_grad(x, g),
        UnaryFn::Sigmoid => grad::sigmoid_grad(x, g),
        UnaryFn::Silu => grad::silu_grad(x, g),
        UnaryFn::Softplus => grad::softplus_grad(x, g),
        UnaryFn::Erf => grad::erf_grad(x, g),
        UnaryFn::Gelu => grad::gelu_grad(x, g),
        UnaryFn::GeluErf => grad::gelu_erf_grad(x, g),
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [-r, r).
    fn uniform(&mut self, r: f64) -> f32 {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32 * r as f32
    }
}

/// Inputs: special values, a grid over [-20, 20], uniform values at several scales and
/// random bit patterns (subnormals, huge values, NaNs and infinities among them).
fn inputs(seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1.0,
        -1.0,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE / 8.0,
        f32::from_bits(1),
        1e-30,
        -1e-30,
        88.7,
        -104.0,
        -0.7517916,
        -1.2784645,
        f32::MAX,
    ];
    v.extend((-4000..=4000).map(|i| i as f32 / 200.0));
    for scale in [1e-3, 1.0, 4.0, 30.0, 1e4] {
        v.extend((0..2000).map(|_| rng.uniform(scale)));
    }
    v.extend((0..4000).map(|_| f32::from_bits(rng.next() as u32)));
    v
}

/// Output gradients: 1 first, then random values in ±[0.5, 2) and a few wide ones.
fn grads(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
    (0..n)
        .map(|i| match i % 7 {
            0 => 1.0,
            6 => rng.uniform(1e6),
            _ => {
                let u = rng.uniform(1.0);
                (0.5 + u.abs() * 1.5).copysign(u)
            }
        })
        .collect()
}

/// The derivative f'(x) from MPFR values at f64 arguments, with the scale its error is
/// measured against (the sum of its terms' magnitudes, where terms can cancel).
fn true_derivative(f: UnaryFn, x: f64) -> (f64, f64) {
    use mpfr_oracle::approx_f64 as v;
    let one = |d: f64| (d, d.abs());
    match f {
        UnaryFn::Exp | UnaryFn::Expm1 => one(v(Func::Exp, x)),
        UnaryFn::Log => one(1.0 / x),
        UnaryFn::Log1p => one(1.0 / (1.0 + x)),
        UnaryFn::Log10 => one(1.0 / (x * std::f64::consts::LN_10)),
        UnaryFn::Sin => one(v(Func::Cos, x)),
        UnaryFn::Cos => one(-v(Func::Sin, x)),
        UnaryFn::Tanh => {
            let c = v(Func::Exp, x) + v(Func::Exp, -x);
            one(4.0 / (c * c))
        }
        UnaryFn::Sigmoid => one(v(Func::Sigmoid, x) * v(Func::Sigmoid, -x)),
        UnaryFn::Softplus => one(v(Func::Sigmoid, x)),
        UnaryFn::Silu => {
            let s = v(Func::Sigmoid, x);
            let t = x * s * v(Func::Sigmoid, -x);
            (s + t, s.abs() + t.abs())
        }
        UnaryFn::Erf => one(std::f64::consts::FRAC_2_SQRT_PI * v(Func::Exp, -(x * x))),
        UnaryFn::Gelu => {
            // gelu = x sigmoid(w), w = x (A + B x^2), A = sqrt(8/pi), B = 0.044715 A.
            let a = (8.0 / std::f64::consts::PI).sqrt();
            let w = x * (a + 0.044715 * a * x * x);
            let s = v(Func::Sigmoid, w);
            let t = x * s * v(Func::Sigmoid, -w) * (a + 3.0 * 0.044715 * a * x * x);
            (s + t, s.abs() + t.abs())
        }
        UnaryFn::GeluErf => {
            let cdf = if x == 0.0 {
                0.5
            } else {
                v(Func::GeluErf, x) / x
            };
            let t = x * v(Func::Exp, -(x * x) / 2.0) / (2.0 * std::f64::consts::PI).sqrt();
            (cdf + t, cdf.abs() + t.abs())
        }
    }
}

/// The spacing of f32 numbers at magnitude `a` (the subnormal spacing below 2^-126).
fn ulp32(a: f64) -> f64 {
    let a = a.abs().max(f32::MIN_POSITIVE as f64);
    let e = a.log2().floor() as i32;
    2f64.powi(e - 23)
}

#[test]
fn correctly_rounded_products_match_mpfr() {
    let exact = [
        UnaryFn::Tanh,
        UnaryFn::Exp,
        UnaryFn::Expm1,
        UnaryFn::Sin,
        UnaryFn::Cos,
        UnaryFn::Sigmoid,
        UnaryFn::Softplus,
    ];
    let cr = mpfr_oracle::cr_f32;
    for f in exact {
        let xs = inputs(f.name().len() as u64);
        let gs = grads(xs.len(), 3);
        let mut checked = 0;
        for (&x, &g) in xs.iter().zip(&gs) {
            let d = match f {
                UnaryFn::Exp | UnaryFn::Expm1 => cr(Func::Exp, x) as f64,
                UnaryFn::Sin => cr(Func::Cos, x) as f64,
                UnaryFn::Cos => -(cr(Func::Sin, x) as f64),
                UnaryFn::Sigmoid => cr(Func::Sigmoid, x) as f64 * cr(Func::Sigmoid, -x) as f64,
                UnaryFn::Tanh => {
                    let y = 2.0 * x;
                    4.0 * (cr(Func::Sigmoid, y) as f64 * cr(Func::Sigmoid, -y) as f64)
                }
                _ => cr(Func::Sigmoid, x) as f64,
            };
            for (fmt, got) in [
                (mpfr_oracle::F32, grad_scalar(f, x, g) as f64),
                (
                    mpfr_oracle::BF16,
                    grad_scalar(f, bf16::from_f32(x), bf16::from_f32(g)).to_f64(),
                ),
            ] {
                // The bf16 case rounds x and g to bf16 first: recompute its factor.
                let (x, g, d) = if fmt.precision == 8 {
                    let (xb, gb) = (bf16::from_f32(x).to_f32(), bf16::from_f32(g).to_f32());
                    let db = match f {
                        UnaryFn::Exp | UnaryFn::Expm1 => cr(Func::Exp, xb) as f64,
                        UnaryFn::Sin => cr(Func::Cos, xb) as f64,
                        UnaryFn::Cos => -(cr(Func::Sin, xb) as f64),
                        UnaryFn::Sigmoid => {
                            cr(Func::Sigmoid, xb) as f64 * cr(Func::Sigmoid, -xb) as f64
                        }
                        UnaryFn::Tanh => {
                            let y = 2.0 * xb;
                            4.0 * (cr(Func::Sigmoid, y) as f64 * cr(Func::Sigmoid, -y) as f64)
                        }
                        _ => cr(Func::Sigmoid, xb) as f64,
                    };
                    (xb, gb, db)
                } else {
                    (x, g, d)
                };
                let want = mpfr_oracle::dot(&[g as f64], &[d], None, fmt);
                let same = (got.is_nan() && want.is_nan()) || got.to_bits() == want.to_bits();
                assert!(
                    same,
                    "{} grad at x = {x:e} ({:#x}), g = {g:e}, p = {}: {got:e}, MPFR {want:e}",
                    f.name(),
                    x.to_bits(),
                    fmt.precision
                );
                checked += 1;
            }
        }
        println!(
            "{}: {checked} gradients, all the exact product rounded once",
            f.name()
        );
    }
}

/// `mul_round` (the product step of every `Times` factor) against MPFR on products built
/// to lie within 2^-52 of a rounding boundary of the format, where rounding the f64
/// product first would round twice: g an f32 (or a bf16, f16 value), d = m/g rounded to
/// f64 with m a midpoint between two neighbours of the format.
#[test]
fn mul_round_is_the_exact_product_rounded_once_near_ties() {
    let mut rng = Rng(0x5EED);
    let mut double_rounding_differs = 0;
    for (fmt, bits) in [
        (mpfr_oracle::F32, 24),
        (mpfr_oracle::BF16, 8),
        (mpfr_oracle::F16, 11),
    ] {
        for _ in 0..30_000 {
            let g = (1.0 + (rng.next() >> 40) as f64 / (1u64 << 24) as f64) as f32;
            let g = match bits {
                8 => bf16::from_f32(g).to_f32(),
                11 => f16::from_f32(g).to_f32(),
                _ => g,
            };
            let g = if rng.next() & 1 == 1 { -g } else { g };
            // A midpoint of the format near 1: (2k + 1) 2^-bits.
            let k = (rng.next() >> 20) % (1 << (bits - 1));
            let m = (((1u64 << (bits - 1)) + k) * 2 + 1) as f64 * 2f64.powi(-bits);
            let d = m / g as f64;
            let want = mpfr_oracle::dot(&[g as f64], &[d], None, fmt);
            let got = match bits {
                8 => grad::mul_round::<bf16>(g as f64, d).to_f64(),
                11 => grad::mul_round::<f16>(g as f64, d).to_f64(),
                _ => grad::mul_round::<f32>(g as f64, d) as f64,
            };
            assert_eq!(got, want, "g = {g:e}, d = {d:e}, p = {bits}");
            let twice = match bits {
                8 => bf16::from_f64(g as f64 * d).to_f64(),
                11 => f16::from_f64(g as f64 * d).to_f64(),
                _ => (g as f64 * d) as f32 as f64,
            };
            double_rounding_differs += (twice != want) as usize;
        }
    }
    // The cases are hard: rounding the f64 product first would get many of them wrong.
    println!(
        "mul_round: 90000 products near ties, all MPFR's; rounding twice misses {double_rounding_differs}"
    );
    assert!(double_rounding_differs > 1000);
}

/// log10's backward pass on its hardest inputs (`tools/grad_hard_inputs.py`): pairs whose
/// gradient lies within two f64 ulps of an f32 midpoint, so that LN10 or the product
/// x * LN10 off by one ulp changes the result; the expected bits are numpy's IEEE steps.
#[test]
fn log10_backward_on_its_hardest_inputs() {
    for &(x, g, want) in hard::GRAD_LOG10_HARD {
        let (x, g) = (f32::from_bits(x), f32::from_bits(g));
        let got = grad::log10_grad(x, g);
        assert_eq!(got.to_bits(), want, "x = {x:e}, g = {g:e}");
    }
    println!(
        "log10 backward: {} hardest pairs, numpy's bits",
        hard::GRAD_LOG10_HARD.len()
    );
}

#[test]
fn gradients_are_close_to_the_true_derivative() {
    // Worst error of g f'(x) in f32, in ulps of the f32 at the scale of the derivative's
    // terms (their sum of magnitudes) times g: the measured worst cases, with a margin.
    // The products of one correctly rounded value are within 1 ulp (two roundings of at
    // most half an ulp); log's is the quotient rounded once.
    let bound = |f: UnaryFn| match f {
        // One rounding of a value accurate to ~2^-50 (the reference's own error is ~2^-52).
        UnaryFn::Log | UnaryFn::Log1p | UnaryFn::Log10 | UnaryFn::Erf => 0.5 + 1e-6,
        UnaryFn::Silu | UnaryFn::Gelu => 0.5 + 1e-6,
        // A correctly rounded factor (half an ulp of it, up to one of the result) and the
        // product's rounding.
        UnaryFn::Exp | UnaryFn::Expm1 | UnaryFn::Sin | UnaryFn::Cos | UnaryFn::Softplus => 1.5,
        UnaryFn::GeluErf => 1.5,
        // Two correctly rounded factors and the product's rounding.
        UnaryFn::Tanh | UnaryFn::Sigmoid => 2.5,
    };
    for f in UnaryFn::ALL {
        let xs = inputs(7 + f.name().len() as u64);
        let gs = grads(xs.len(), 5);
        let (mut worst, mut at, mut n) = (0.0f64, 0.0f32, 0);
        for (&x, &g) in xs.iter().zip(&gs) {
            if !x.is_finite() {
                continue;
            }
            // sin and cos beyond 2^20 lose all meaning as derivatives of an f32 input's
            // neighbourhood; the oracle's values are still exact there.
            let (d, scale) = true_derivative(f, x as f64);
            let want = g as f64 * d;
            // Beyond f32's range the factor is infinite (exp and expm1 above 88.72, as
            // their forward values): the gradient is then infinite by definition.
            if !want.is_finite() || want.abs() > f32::MAX as f64 || d.abs() > f32::MAX as f64 {
                continue;
            }
            // A factor below f32's normal range is a value rounded with f32's subnormal
            // (absolute) precision, which the product then scales by g: the error is
            // measured against g times the larger of the terms' scale and 2^-126.
            let scale = scale.max(2f64.powi(-126)) * g.abs() as f64;
            let got = grad_scalar(f, x, g) as f64;
            let err = (got - want).abs() / ulp32(scale);
            n += 1;
            if err > worst {
                (worst, at) = (err, x);
            }
        }
        println!(
            "{:9}: worst error {worst:.3} ulp of the terms' scale (at x = {at:e}), {n} inputs",
            f.name()
        );
        assert!(
            worst <= bound(f),
            "{}: error {worst} ulp at x = {at:e} exceeds {}",
            f.name(),
            bound(f)
        );
    }
}

fn views(t: &Tensor) -> Vec<Tensor> {
    let (r, c) = t.dims2().unwrap();
    vec![
        t.clone(),
        t.t().unwrap().contiguous().unwrap().t().unwrap(),
        t.i((1..r, 2..c)).unwrap(),
    ]
}

fn check_tensor_op<T: Format + candle_core::WithDType>(f: UnaryFn, dtype: DType) {
    let xs = inputs(11);
    let n = 96 * 150;
    let x = Tensor::from_vec(xs[..n].to_vec(), (96, 150), &Device::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap();
    let g = Tensor::from_vec(grads(n, 13), (96, 150), &Device::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap();
    for (xv, gv) in views(&x).into_iter().zip(views(&g)) {
        let out = unary_bwd(&xv, &gv, f).unwrap();
        assert_eq!(out.dtype(), dtype);
        let xe = xv.flatten_all().unwrap().to_vec1::<T>().unwrap();
        let ge = gv.flatten_all().unwrap().to_vec1::<T>().unwrap();
        let want: Vec<T> = xe
            .iter()
            .zip(&ge)
            .map(|(&x, &g)| grad_scalar(f, x, g))
            .collect();
        let want = Tensor::from_vec(want, xv.dims(), &Device::Cpu).unwrap();
        assert_eq!(bits(&out), bits(&want), "{} {dtype:?}", f.name());
    }
}

#[test]
fn tensor_op_has_the_scalar_bits_for_every_dtype_and_layout() {
    for f in UnaryFn::ALL {
        check_tensor_op::<f32>(f, DType::F32);
        check_tensor_op::<bf16>(f, DType::BF16);
        check_tensor_op::<f16>(f, DType::F16);
    }
}

#[test]
fn thread_count_changes_no_bit() {
    let n = 1 << 16;
    let xs: Vec<f32> = inputs(17).into_iter().cycle().take(n).collect();
    let x = Tensor::from_vec(xs, n, &Device::Cpu).unwrap();
    let g = Tensor::from_vec(grads(n, 19), n, &Device::Cpu).unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            UnaryFn::ALL
                .iter()
                .map(|&f| bits(&unary_bwd(&x, &g, f).unwrap()))
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(run(1), run(2));
}

/// A gradient as candle's autograd hands it out: added into zeros by its accumulator
/// (candle's own `add`, which turns -0 into +0).
fn accumulated(g: &Tensor) -> Tensor {
    g.zeros_like().unwrap().add(g).unwrap()
}

#[test]
fn autograd_calls_the_backward_pass() {
    let xs: Vec<f32> = inputs(23).into_iter().step_by(16).collect();
    let c: Vec<f32> = grads(xs.len(), 29);
    for dtype in [DType::F32, DType::BF16] {
        let x = Var::from_tensor(
            &Tensor::from_vec(xs.clone(), xs.len(), &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap(),
        )
        .unwrap();
        let c = Tensor::from_vec(c.clone(), xs.len(), &Device::Cpu)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        for f in UnaryFn::ALL {
            // d/dx sum(f(x) * c): the gradient reaching f(x) is c exactly.
            let loss = unary(x.as_tensor(), f)
                .unwrap()
                .mul(&c)
                .unwrap()
                .sum_all()
                .unwrap();
            let grads = loss.backward().unwrap();
            let got = grads.get(x.as_tensor()).expect("a gradient for x");
            let want = accumulated(&unary_bwd(x.as_tensor(), &c, f).unwrap());
            assert_eq!(bits(got), bits(&want), "{} {dtype:?}", f.name());
        }
        let loss = candle_repro::softplus_with(x.as_tensor(), 2.0, 3.0)
            .unwrap()
            .mul(&c)
            .unwrap()
            .sum_all()
            .unwrap();
        let grads = loss.backward().unwrap();
        let want = accumulated(&softplus_with_bwd(x.as_tensor(), &c, 2.0, 3.0).unwrap());
        assert_eq!(bits(grads.get(x.as_tensor()).unwrap()), bits(&want));
    }
}

#[test]
fn softplus_with_backward_follows_its_forward() {
    let xs = inputs(31);
    let gs = grads(xs.len(), 37);
    let x = Tensor::from_vec(xs.clone(), xs.len(), &Device::Cpu).unwrap();
    let g = Tensor::from_vec(gs.clone(), gs.len(), &Device::Cpu).unwrap();
    // beta = 1 below the threshold everywhere: softplus's own backward pass.
    let all = softplus_with_bwd(&x, &g, 1.0, f64::INFINITY).unwrap();
    assert_eq!(
        bits(&all),
        bits(&unary_bwd(&x, &g, UnaryFn::Softplus).unwrap())
    );
    let got = softplus_with_bwd(&x, &g, 2.0, 3.0)
        .unwrap()
        .to_vec1::<f32>()
        .unwrap();
    for ((&x, &g), &d) in xs.iter().zip(&gs).zip(&got) {
        let t = 2.0 * x;
        let want = if t > 3.0 {
            g
        } else {
            grad::mul_round::<f32>(g as f64, math::sigmoid(t) as f64)
        };
        assert!(
            d.to_bits() == want.to_bits() || (d.is_nan() && want.is_nan()),
            "x = {x:e}: {d:e}, want {want:e}"
        );
    }
    assert!(softplus_with_bwd(&x, &g, 0.0, 3.0).is_err());
    assert!(softplus_with_bwd(&x, &g, 1.0, f64::NAN).is_err());
}

#[test]
fn bad_operands_are_errors() {
    let x = Tensor::new(&[1.0f32, 2.0], &Device::Cpu).unwrap();
    let g3 = Tensor::new(&[1.0f32, 2.0, 3.0], &Device::Cpu).unwrap();
    let err = unary_bwd(&x, &g3, UnaryFn::Tanh).unwrap_err().to_string();
    assert!(err.contains("tanh") && err.contains("shape"), "{err}");
    let gb = x.to_dtype(DType::BF16).unwrap();
    let err = unary_bwd(&x, &gb, UnaryFn::Exp).unwrap_err().to_string();
    assert!(
        err.contains("exp") && err.to_lowercase().contains("dtype"),
        "{err}"
    );
    let x64 = x.to_dtype(DType::F64).unwrap();
    let err = unary_bwd(&x64, &x64, UnaryFn::Sin).unwrap_err().to_string();
    assert!(
        err.contains("sin") && err.to_lowercase().contains("f64"),
        "{err}"
    );
}

#[test]
fn special_values_are_defined() {
    let nan = 0x7FC0_0000u32;
    for f in UnaryFn::ALL {
        assert_eq!(grad_scalar(f, f32::NAN, 1.0).to_bits(), nan, "{}", f.name());
        assert_eq!(
            grad_scalar(f, 0.5f32, f32::NAN).to_bits(),
            nan,
            "{}",
            f.name()
        );
        // An empty tensor has an empty gradient.
        let e = Tensor::zeros(0, DType::F32, &Device::Cpu).unwrap();
        assert_eq!(unary_bwd(&e, &e, f).unwrap().dims(), [0]);
    }
    // 1/x at 0 and IEEE's 0 * inf.
    assert_eq!(grad_scalar(UnaryFn::Log, 0.0f32, 2.0), f32::INFINITY);
    assert_eq!(grad_scalar(UnaryFn::Log, -0.0f32, 2.0), f32::NEG_INFINITY);
    assert_eq!(grad_scalar(UnaryFn::Exp, f32::INFINITY, 0.0).to_bits(), nan);
    assert_eq!(grad_scalar(UnaryFn::Exp, f32::NEG_INFINITY, 5.0), 0.0);
    // bf16 and f16 give canonical NaNs too.
    let h = grad_scalar(UnaryFn::Tanh, bf16::NAN, bf16::ONE);
    assert_eq!(h.to_bits(), 0x7FC0);
    let h = grad_scalar(UnaryFn::Tanh, f16::NAN, f16::ONE);
    assert_eq!(h.to_bits(), 0x7E00);
}
