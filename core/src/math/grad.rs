//! Backward passes of the elementwise functions: the gradient `dx` of `y = f(x)` from the
//! input `x` and the output's gradient `g`, one fixed, documented sequence per function,
//! so its bits are the same on every device, vector width and thread count.
//!
//! **The definition.** Each function's derivative is a factor computed from `x` alone
//! ([`Factor`]), and the gradient combines it with `g` in one of two ways:
//!
//! * `Times(d)`: `dx` = the exact product `g · d` rounded once to the dtype (`d` an f64;
//!   Dekker's product and a round-to-odd step make the one rounding, see [`mul_round`]);
//! * `Over(q)`: `dx` = `g / q` in f64, rounded to the dtype.
//!
//! In the factors, `f̂(v)` is our correctly rounded f32 value of `f` at the f32 `v` (the
//! forward functions of [`crate::math`]), `X` the input as an f64 (exact), `exp64` the
//! core's deterministic `exp_fast_f64` (a fixed sequence of f64 operations, relative error
//! ≤ 2^-51), and every other operation one IEEE f64 operation in the order written (never
//! contracted):
//!
//! | function | factor |
//! |---|---|
//! | exp, expm1 | `Times(exp̂(x))` |
//! | log | `Over(X)` |
//! | log1p | `Over(1 + X)` |
//! | log10 | `Over(X · LN10)`, LN10 = ln 10 rounded to f64 |
//! | sin | `Times(coŝ(x))` |
//! | cos | `Times(−sin̂(x))` |
//! | tanh | `Times(4·(s₂·s̄₂))`, s₂ = sigmoid̂(2x), s̄₂ = sigmoid̂(−2x) (2x in f32: exact or ±∞) |
//! | sigmoid | `Times(s·s̄)`, s = sigmoid̂(x), s̄ = sigmoid̂(−x) |
//! | silu | `Times(σ + X·σσ̄)` with σ, σσ̄ = sig64(X) |
//! | softplus | `Times(sigmoid̂(x))` |
//! | erf | `Times(2/√π · exp64(−X·X))` |
//! | gelu | `Times(σ + (X·σσ̄)·(A + 3B·X²))` with σ, σσ̄ = sig64(w), w = X·(A + B·X²) the forward's argument (X² = X·X) |
//! | gelu_erf | `Times(Φ + X·φ)`, Φ = geluerf̂(x)/X (1/2 where abs(x) < 2^-50), φ = 1/√(2π) · exp64(−(X·X)/2) |
//!
//! where sig64(w) is the pair σ(w), σ(w)·σ(−w) computed as E = exp64(−abs(w)),
//! Q = 1/(1 + E), σ = Q if w ≥ 0 else E·Q, σσ̄ = (E·Q)·Q (no overflow, and no underflow
//! until e^-745, where f32 sigmoids are subnormal from e^-87 on).
//!
//! Constants are f64 bit patterns (the values rounded once). At x = ±∞, silu, gelu and
//! gelu_erf take their limits (factor 1 at +∞, 0 at −∞) where the formula would give ∞·0.
//!
//! **What that makes exact.** For exp, expm1, sin, cos, tanh, sigmoid and softplus the
//! gradient is `g` times the correctly rounded derivative (tanh's and sigmoid's: a product
//! of two correctly rounded values), rounded once: products of f32 values are exact in f64, and `mul_round`
//! rounds the exact product once. For log it is `g / x` rounded once (an f64 quotient of
//! two f32 values, rounded again to a format of p ≤ 24 bits, is the quotient rounded
//! once: 53 ≥ 2p + 2). The others are fixed sequences whose accuracy the tests measure
//! against MPFR (`tests/elementwise_grad.rs` prints the worst error per function).
//!
//! **Why the input, not the output.** PyTorch writes some of these backward formulas
//! with the forward output (tanh's `g·(1 − y²)`). Here every factor comes from `x`
//! through f32 values, so a bf16 or f16 tensor gets the same factor as an f32 one, not a
//! factor rounded to 8 or 11 bits; and the backward needs no saved output.
//!
//! **Range.** A correctly rounded f32 factor carries f32's range: exp and expm1 above
//! 88.72 have an infinite factor (as their forward values are), so the gradient is ±∞
//! even where g·e^x would be finite for |g| < 1; a factor below 2^-126 has f32's
//! subnormal (absolute) precision, scaled by g. The f64 sequences (silu, gelu, erf,
//! gelu_erf) reach e^-745.
//!
//! NaN in, NaN out (the canonical NaN of the format); `g · ∞` and `g / 0` follow IEEE
//! (0 · ∞ is NaN).

use super::dd::{DD, round_odd, two_prod};
use super::exp::exp_fast_f64;
use super::{Format, erf, exp, gelu, log, sigmoid, softplus, tanh, trig};
use std::mem::MaybeUninit;

/// The derivative of a function at one input, and how the gradient uses it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Factor {
    /// The gradient is `g · d`, the exact product rounded once.
    Times(f64),
    /// The gradient is `g / q` in f64, rounded to the dtype.
    Over(f64),
}

/// A function's derivative factor (see the module documentation).
#[doc(hidden)]
pub trait Derivative {
    /// The factor at `x`.
    fn factor(x: f32) -> Factor;
}

/// ln 10 rounded to f64.
const LN10: f64 = f64::from_bits(0x4002_6BB1_BBB5_5516);
/// 2/√π rounded to f64.
const TWO_OVER_SQRT_PI: f64 = f64::from_bits(0x3FF2_0DD7_5042_9B6D);
/// 1/√(2π) rounded to f64.
const INV_SQRT_2PI: f64 = f64::from_bits(0x3FD9_8845_33D4_3651);
/// gelu's w = x (A + B x²): A = 2√(2/π) and B = 0.044715 A, rounded to f64 (the forward's
/// constants), and 3 · 0.044715 A rounded to f64, for w' = A + 3B x².
const GELU_A: f64 = f64::from_bits(0x3FF9_8845_33D4_3651);
const GELU_B: f64 = f64::from_bits(0x3FB2_444F_2A4D_8B4B);
const GELU_3B: f64 = f64::from_bits(0x3FCB_6676_BF74_50F0);
/// Below this magnitude gelu_erf's Φ is taken as 1/2 (its value differs from 1/2 by less
/// than 2^-51 there), so that Φ = gelu_erf(x)/x never divides a rounded-away result.
const GELU_ERF_SMALL: f64 = f64::from_bits(0x3CD0_0000_0000_0000);

/// The exact product `g · d` rounded once to `F`: Dekker's product gives it as `p + e`
/// exactly, rounding to odd keeps it to 53 bits without losing which side of a tie it is,
/// and the format's rounding then rounds once (p ≤ 24 ≤ 53 − 2). Exact for every finite g
/// and d used here (|g|, |d| < 2^996: Veltkamp's split cannot overflow); products too
/// small for Dekker's error term are far below the formats' least subnormal.
#[inline(always)]
pub fn mul_round<F: Format>(g: f64, d: f64) -> F {
    let (p, e) = two_prod(g, d);
    F::round(round_odd(DD::new(p, e)))
}

/// The gradient from the factor: `g · d` rounded once, or `g / q` rounded.
#[inline(always)]
pub fn apply<F: Format>(factor: Factor, g: f64) -> F {
    match factor {
        Factor::Times(d) => mul_round(g, d),
        Factor::Over(q) => F::round(g / q),
    }
}

/// σ(x)·σ(−x) from the correctly rounded f32 sigmoids (exact in f64: two 24-bit
/// significands), with σ(x).
#[inline(always)]
fn sigmoid_pair(x: f32) -> (f64, f64) {
    let s = super::sigmoid(x) as f64;
    (s, s * super::sigmoid(-x) as f64)
}

/// σ(w) and σ(w)·σ(-w) for an f64 w, from E = `exp_fast_f64`(-|w|) and Q = 1/(1 + E):
/// σ(|w|) = Q, σ(-|w|) = E·Q, σ(w)·σ(-w) = (E·Q)·Q. No overflow (E ≤ 1) and no
/// underflow before e^-745, where f32 sigmoids would already be subnormal near e^-87.
#[inline(always)]
fn sigmoid64_pair(w: f64) -> (f64, f64) {
    let e = exp_fast_f64(-w.abs());
    let q = 1.0 / (1.0 + e);
    let s = if w >= 0.0 { q } else { e * q };
    (s, (e * q) * q)
}

/// The limit of a derivative that tends to 1 at +∞ and 0 at −∞.
#[inline(always)]
fn step_limit(x: f32) -> Factor {
    Factor::Times(if x > 0.0 { 1.0 } else { 0.0 })
}

impl Derivative for exp::Exp {
    fn factor(x: f32) -> Factor {
        Factor::Times(super::exp(x) as f64)
    }
}

impl Derivative for exp::Expm1 {
    fn factor(x: f32) -> Factor {
        Factor::Times(super::exp(x) as f64)
    }
}

impl Derivative for log::Log {
    fn factor(x: f32) -> Factor {
        Factor::Over(x as f64)
    }
}

impl Derivative for log::Log1p {
    fn factor(x: f32) -> Factor {
        Factor::Over(1.0 + x as f64)
    }
}

impl Derivative for log::Log10 {
    fn factor(x: f32) -> Factor {
        Factor::Over(x as f64 * LN10)
    }
}

impl Derivative for trig::Sin {
    fn factor(x: f32) -> Factor {
        Factor::Times(super::cos(x) as f64)
    }
}

impl Derivative for trig::Cos {
    fn factor(x: f32) -> Factor {
        Factor::Times(-(super::sin(x) as f64))
    }
}

impl Derivative for tanh::Tanh {
    fn factor(x: f32) -> Factor {
        // 1 - tanh² x = 4 σ(2x) σ(-2x): no cancellation, and the tails keep their value
        // where tanh x itself rounds to ±1 (|x| > 9.01). 2x is exact (or ±∞: factor 0).
        let x2 = 2.0 * x;
        Factor::Times(4.0 * sigmoid_pair(x2).1)
    }
}

impl Derivative for sigmoid::Sigmoid {
    fn factor(x: f32) -> Factor {
        Factor::Times(sigmoid_pair(x).1)
    }
}

impl Derivative for sigmoid::Silu {
    fn factor(x: f32) -> Factor {
        if x.is_infinite() {
            return step_limit(x);
        }
        let x = x as f64;
        let (s, ss) = sigmoid64_pair(x);
        Factor::Times(s + x * ss)
    }
}

impl Derivative for softplus::Softplus {
    fn factor(x: f32) -> Factor {
        Factor::Times(super::sigmoid(x) as f64)
    }
}

impl Derivative for erf::Erf {
    fn factor(x: f32) -> Factor {
        let x = x as f64;
        Factor::Times(TWO_OVER_SQRT_PI * exp_fast_f64(-(x * x)))
    }
}

impl Derivative for gelu::Gelu {
    fn factor(x: f32) -> Factor {
        if x.is_infinite() {
            return step_limit(x);
        }
        let x = x as f64;
        let x2 = x * x;
        let w = x * (GELU_A + GELU_B * x2);
        let (s, ss) = sigmoid64_pair(w);
        Factor::Times(s + (x * ss) * (GELU_A + GELU_3B * x2))
    }
}

impl Derivative for erf::GeluErf {
    fn factor(x: f32) -> Factor {
        if x.is_infinite() {
            return step_limit(x);
        }
        let xf = x as f64;
        let cdf = if xf.abs() < GELU_ERF_SMALL {
            0.5
        } else {
            super::gelu_erf(x) as f64 / xf
        };
        let pdf = INV_SQRT_2PI * exp_fast_f64(-(xf * xf) * 0.5);
        Factor::Times(cdf + xf * pdf)
    }
}

/// The gradient of one element (see the module documentation).
#[inline]
pub fn grad<D: Derivative, F: Format>(x: F, g: F) -> F {
    apply(D::factor(x.to_f32()), g.to_f32() as f64)
}

/// The gradient of every element: `x`, `g` and `out` of one length (every slot written).
pub fn grad_slice<D: Derivative, F: Format>(x: &[F], g: &[F], out: &mut [MaybeUninit<F>]) {
    assert!(x.len() == out.len() && g.len() == out.len());
    for ((o, &x), &g) in out.iter_mut().zip(x).zip(g) {
        o.write(grad::<D, F>(x, g));
    }
}

/// Declares `<name>_grad` and `<name>_grad_slice` for every function of the list.
macro_rules! grad_functions {
    ($($name:ident $ty:ident in $family:ident: $doc:literal, $x:literal => $bits:literal;)*) => {
        paste::paste! {
            $(
                #[doc = concat!("The backward pass of `", stringify!($name), "` at one element: `g` times the derivative at `x`, as the module documentation defines it.")]
                #[inline]
                pub fn [<$name _grad>]<F: Format>(x: F, g: F) -> F {
                    grad::<$family::$ty, F>(x, g)
                }

                #[doc = concat!("[`", stringify!($name), "_grad`] of every element (`x`, `g` and `out` of one length).")]
                pub fn [<$name _grad_slice>]<F: Format>(x: &[F], g: &[F], out: &mut [MaybeUninit<F>]) {
                    grad_slice::<$family::$ty, F>(x, g, out)
                }
            )*
        }
    };
}
crate::unary_functions!(grad_functions);

/// The factor of `softplus_with(x, beta, threshold)` (`t` = beta·x in f32, the forward's
/// product): 1 where `t > threshold` (the forward returned x), else sigmoid̂(t), the
/// derivative of softplus(t)/beta.
pub fn softplus_with_factor(beta: f32, threshold: f32, x: f32) -> Factor {
    let t = beta * x;
    Factor::Times(if t > threshold {
        1.0
    } else {
        super::sigmoid(t) as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_round_rounds_the_exact_product_once() {
        // 3 d with d = t/3 rounded to f64, t a tie between two f32 in [2, 4): where the
        // f64 product rounds to t itself, only the exact product (Dekker's error term)
        // tells which neighbour is nearer.
        let mut hard = 0;
        for k in 0..2000u64 {
            let below = 2.0 + (2 * k) as f64 * 2f64.powi(-23);
            let tie = below + 2f64.powi(-23);
            let d = tie / 3.0;
            let (p, e) = two_prod(3.0, d);
            if p != tie || e == 0.0 {
                continue;
            }
            hard += 1;
            let want = if e > 0.0 {
                below + 2f64.powi(-22)
            } else {
                below
            };
            assert_eq!(mul_round::<f32>(3.0, d) as f64, want, "k = {k}");
        }
        assert!(hard > 100, "{hard} hard cases");
        assert_eq!(mul_round::<f32>(f64::NAN, 1.0).to_bits(), 0x7FC0_0000);
        assert_eq!(mul_round::<f32>(0.0, f64::INFINITY).to_bits(), 0x7FC0_0000);
        assert_eq!(mul_round::<f32>(-2.0, f64::INFINITY), f32::NEG_INFINITY);
    }

    #[test]
    fn limits_at_infinity() {
        for (f, lo, hi) in [
            (silu_grad::<f32> as fn(f32, f32) -> f32, 0.0, 1.0),
            (gelu_grad::<f32>, 0.0, 1.0),
            (gelu_erf_grad::<f32>, 0.0, 1.0),
            (sigmoid_grad::<f32>, 0.0, 0.0),
            (tanh_grad::<f32>, 0.0, 0.0),
            (softplus_grad::<f32>, 0.0, 1.0),
            (erf_grad::<f32>, 0.0, 0.0),
        ] {
            assert_eq!(f(f32::NEG_INFINITY, 1.0), lo);
            assert_eq!(f(f32::INFINITY, 1.0), hi);
        }
    }
}
