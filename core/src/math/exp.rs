//! e^x and e^x - 1 (exp, expm1), correctly rounded, plus the f64 / double-double cores the
//! other families (sigmoid, silu, softplus, tanh) build on.
//!
//! Notation: u = 2^-53, c = ln2/128. Constants come from `tools/gen_exp_coeffs.py`.
//!
//! # Range reduction (both paths)
//! k = round(x/c) (by adding 1.5*2^52 to x*(128/ln2), whose low bits then hold k),
//! j = k mod 128, n = (k - j)/128, x = n ln2 + j c + r. c is split into 35-bit pieces
//! (LN2_128_1, LN2_128_2) so that k*piece is exact for |k| < 2^18 (|x| <= 746), and
//! x - k*LN2_128_1 is exact: for k != 0 both operands are multiples of 2^-61 and the
//! difference is below 2^-8. So |r| <= R = (1/2 + 2^-36) c + 2^-60 = 2^-8.529.
//!
//! # Fast paths (f64, branch-free)
//! Table T_j = 2^(j/128), j = 0..127, hi and lo doubles (EXP2_TABLE), 2 KiB; the hi parts
//! alone (EXP2_HI) for the fast paths that read only them.
//!
//! The f32 functions (`Exp::fast`, `Expm1::fast`, fast domain |x| <= 128, x != 0 for
//! expm1) use a cheaper reduction: z = fl(x 128/ln2), k = round(z), w = z - k exactly
//! (|w| <= 1/2), e^x ~ 2^n T_j e^(c w). z is within 2^-52 |z| of x 128/ln2 (INV_LN2_128
//! is 2^-55.98 relative off, the product rounds once), so the effective argument is x
//! (1 + d), |d| <= 2^-52; that moves e^x by at most |x| 2^-52 <= 2^-45 relative, and
//! e^x - 1 by at most 2^-52 max(1, x e^x/(e^x - 1)) <= 2^-45 (relative to x for tiny x).
//! * exp: 2^n (t + t q), q = w (P_EXP_W1 + ... + P_EXP_W4 w^3), 1 + q within 2^-53.54 of
//!   e^(cw); with the table (u), t + t q (u) and the small terms: < 2^-45 + 2.8u. q's
//!   Horner steps and t + t q are multiply-adds (`madd`: fused in the FMA copies and on
//!   CUDA, one rounding; two in the x86-64 baseline): the bound allows for two each.
//! * expm1: (2^n t_hi - 1) + 2^n (t_lo + t_hi q), q = w H(w), H of degree 4, relative
//!   error 2^-54.27 against e^(cw) - 1; the analysis of `expm1_fast_f64` below gives
//!   at most about 5.5u more, plus the 2^-45.
//!
//! Both stay below 2^-44 (`F32_FAST_REL_ERR`); results there are normal doubles, so the
//! scaling by 2^n is one exact multiplication. Fallbacks to the accurate path: about one
//! f32 input in 2^19.
//!
//! The f64 cores exported to other families (`exp_fast_f64`, `expm1_fast_f64`) reduce
//! with the full-precision r (any f64 argument):
//! * e^x: 2^n * (t + t*q), t = T_j rounded, 1 + q = P_EXP(r), a degree-4 polynomial
//!   (Horner) for e^r on [-R, R] with relative error 2^-53.54 (Chebyshev interpolation,
//!   measured on a 4001-point grid by the script). r is computed as
//!   (x - k L1) - k L2F with an absolute error below 2^-61.4 (last subtraction u*R =
//!   2^-61.53, the rest below 2^-78). Relative error before the final rounding, terms:
//!   table u, polynomial 0.69u, r 0.004u, q's evaluation 0.03u, t*q 0.003u, t + t*q u;
//!   total < 2.8u = 2^-51.5 <= `EXP_FAST_F64_REL_ERR` = 2^-51 (the scaling by 2^n is
//!   exact while the result is a normal double).
//! * e^x - 1: A + B with A = 2^n t_hi - 1 and B = 2^n (t_lo + t_hi q), q = Q_EXPM1(r) =
//!   r + r^2 (c2 + ... + c5 r^3), relative error 2^-55.1 against e^r - 1 (so near 0,
//!   where k = 0 and the result is q itself, the error stays relative). A is exact for
//!   -1 <= n <= 52 (Sterbenz for n = -1; a multiple of ulp(2^n) below 2^(n+1) else).
//!   Worst case k = +-1: |E| >= c/2, |A| <= 2.003|E|, |B| <= 1.008|E|; errors relative to
//!   E: B's q approximation 0.23u, q's evaluation u, t_hi*q u, the sum t_lo + t_hi q u
//!   (all times 1.008), r 1.006u, final A + B u: 5.3u. For n <= -2 (|E| > 1/2) A's
//!   rounding costs at most 2u, for n > 52 u: totals near 3u. k = 0: 1.25u. So
//!   `EXPM1_FAST_F64_REL_ERR` = 2^-50 = 8u.
//!
//! # Accurate path (double-double)
//! j taken in -64..63 (symmetric), table D_j = 2^(j/128) - 1 as hi + lo (EXPM1_TABLE;
//! relative error u^2 of D_j itself, so expm1 near 0 stays accurate). r as a double-double:
//! x_hi - k L1 (exact) two-summed with x_lo, then minus k L2 (exact product) and k L3 (two
//! double-double additions, 2u^2 each). e^r - 1 by its Taylor series to degree 10
//! (remainder 2^-110.5 relative to r), coefficients 1/3!..1/6! in double-double, the tail
//! in f64 Horner on r_hi; p = r (1 + r (1/2 + r (...))). E0 = e^(jc + r) - 1 =
//! D + (p + p D). Then exp = 2^n (1 + E0) and expm1 = E0 (n = 0) or 2^n (1 + E0) - 1.
//! Bounds (u^2 = 2^-106, double-double add 3u^2, mul 7u^2):
//! * `exp_dd`: table 0.42u^2, p 9u^2 * 2^-8.5, sums 3u^2 * 0.42 twice, 1 + E0 2u^2,
//!   divided by 1 + E0 >= 0.7: about 5u^2 = 2^-103.7; stated bound 2^-102.
//! * `expm1_dd`, n = 0 (|x| < 0.349), worst at k = +-1 where |D| <= 2.006|E0|: table 2u^2,
//!   r 4u^2, p 9.2u^2, the two sums 6u^2: 21.3u^2 = 2^-101.6. n != 0: 2^n(1 + E0)/|E0|
//!   <= 3.44 (n = 1), so 5u^2 * 3.44 + 2u^2 = 19.2u^2. Stated bound 2^-100 (64u^2).
//!
//! # Exceptional inputs
//! exp: NaN -> NaN, +inf -> +inf, -inf -> +0, x > 709 -> +inf (overflows every format),
//! x < -110 -> 2^-1074 (e^x < 2^-158; not e^x rounded to odd, but it rounds to +0 in
//! every output format exactly as e^x does), exp(0) = 1
//! exactly. expm1: NaN -> NaN, +inf -> +inf, -inf -> -1, +-0 -> +-0 (excluded from the fast
//! domain, whose q would lose the sign of -0), x > 709 -> +inf, x < -110 -> -(1 - 2^-53),
//! the round-to-odd value of -1 + e^x. Fast domains: |x| <= 128 (and x != 0 for expm1):
//! results there are normal doubles, so the scaling is exact.

use super::dd::{DD, round_odd, two_sum};
use super::madd::madd;
use super::round::pow2;
use super::unary::CrUnary;

/// 1.5 * 2^52 (0x4338000000000000): adding it rounds |v| < 2^51 to an integer and leaves
/// that integer in the low bits of the sum.
const SHIFT: f64 = f64::from_bits(0x4338_0000_0000_0000);
/// 746.0 (0x4087500000000000): clamp of the fast cores (e^746 overflows, e^-746 underflows
/// to 0), keeping |k| < 2^18.
const CLAMP_HI_EXP: f64 = f64::from_bits(0x4087_5000_0000_0000);
/// -746.0 (0xC087500000000000).
const CLAMP_LO: f64 = f64::from_bits(0xC087_5000_0000_0000);
/// 712.0 (0x4086400000000000): expm1's upper clamp; 2^n stays below 2^1028 so that B stays
/// finite when A overflows (no inf - inf).
const CLAMP_HI_EXPM1: f64 = f64::from_bits(0x4086_4000_0000_0000);
/// 128.0 (0x4060000000000000): fast-domain limit of the f32 functions.
const FAST_MAX: f64 = f64::from_bits(0x4060_0000_0000_0000);
/// -87.0 (0xC2AE0000): from it up, e^x is an f32 normal (see `Exp::fast_result_normal`).
const NORMAL_RESULT_MIN: f32 = f32::from_bits(0xC2AE_0000);
/// 709.0 (0x4086280000000000): above it, e^x and e^x - 1 exceed 2^1022: infinity in every
/// output format.
const OVERFLOW_F32: f64 = f64::from_bits(0x4086_2800_0000_0000);
/// -110.0 (0xC05B800000000000): below it e^x < 2^-158.
const UNDERFLOW_F32: f64 = f64::from_bits(0xC05B_8000_0000_0000);
/// 709.79 (0x40862E51EB851EB8), just above ln(2^1024) = 709.7827: exp_dd overflows above.
const OVERFLOW_DD: f64 = f64::from_bits(0x4086_2E51_EB85_1EB8);
/// -745.2 (0xC08749999999999A), below ln(2^-1075) = -745.13: e^x rounds to 0.
const UNDERFLOW_DD: f64 = f64::from_bits(0xC087_4999_9999_999A);
/// 2^-1074 (0x0000000000000001): the smallest positive double (odd).
const TINY: f64 = f64::from_bits(1);
/// -(1 - 2^-53) (0xBFEFFFFFFFFFFFFF): the odd double just above -1.
const MINUS_ONE_PLUS: f64 = f64::from_bits(0xBFEF_FFFF_FFFF_FFFF);

/// Relative error of `Exp::fast` ([`exp_f32_fast`]) and `Expm1::fast` for |x| <= 128
/// (module header): 2^-44.
#[doc(hidden)]
pub const F32_FAST_REL_ERR: f64 = f64::from_bits(0x3D30_0000_0000_0000);
/// Relative error of [`exp_fast_f64`] on its domain (see the module header): 2^-51. The
/// bound softmax's analysis cites; `fast_cores_match_libm` checks it.
#[allow(dead_code)]
#[doc(hidden)]
pub const EXP_FAST_F64_REL_ERR: f64 = f64::from_bits(0x3CC0_0000_0000_0000);
/// Relative error of [`expm1_fast_f64`] on its domain (see the module header): 2^-50.
#[doc(hidden)]
pub const EXPM1_FAST_F64_REL_ERR: f64 = f64::from_bits(0x3CD0_0000_0000_0000);

/// k = round(x/c) as the bits of `x*(128/ln2) + SHIFT`, and r = x - k c (|x| <= 746).
/// Returns (j = k mod 128, m = floor(k/128) + M0 with M0 = 0x4338000000000000 >> 7, a
/// multiple of 2^13, r).
#[inline(always)]
fn reduce(x: f64) -> (usize, u64, f64) {
    let t = x * INV_LN2_128 + SHIFT;
    let kf = t - SHIFT;
    let b = t.to_bits();
    let r = (x - kf * LN2_128_1) - kf * LN2_128_2F;
    ((b & 127) as usize, b >> 7, r)
}

/// The f32 fast paths' reduction: z = fl(x 128/ln2), k = round(z), w = z - k (exact), and
/// e^x ~ 2^(k/128) e^(c w). z's relative error is below 2^-52 (INV_LN2_128 is within
/// 2^-55.9 of 128/ln2, plus the product's rounding), so the argument c w + k c differs
/// from x by at most 2^-52 |x| (<= 2^-45 / c in units of w for |x| <= 128). Returns
/// (j, m, w) as `reduce` does. Total: garbage but no panic outside |x| <= 128.
#[inline(always)]
fn reduce_f32(x: f32) -> (usize, u64, f64) {
    let z = (x as f64) * INV_LN2_128;
    let t = z + SHIFT;
    let w = z - (t - SHIFT);
    let b = t.to_bits();
    ((b & 127) as usize, b >> 7, w)
}

/// 2^n from m = n + M0 (M0 = 0 mod 2^12): valid for -1022 <= n <= 1023.
#[inline(always)]
fn pow2_m(m: u64) -> f64 {
    f64::from_bits(m.wrapping_add(1023) << 52)
}

/// (2^floor(n/2), 2^ceil(n/2)) from m = n + M0 (M0/2 = 0 mod 2^12): for |n| <= 1080.
#[inline(always)]
fn pow2_m_halves(m: u64) -> (f64, f64) {
    let m1 = m >> 1;
    (pow2_m(m1), pow2_m(m - m1))
}

/// q with 1 + q = P_EXP(r) ~ e^r.
#[inline(always)]
fn exp_q(r: f64) -> f64 {
    r * (P_EXP1 + r * (P_EXP2 + r * (P_EXP3 + r * P_EXP4)))
}

/// Q_EXPM1(r) ~ e^r - 1, relatively accurate near 0.
#[inline(always)]
fn expm1_q(r: f64) -> f64 {
    r + (r * r) * (Q_EXPM1_2 + r * (Q_EXPM1_3 + r * (Q_EXPM1_4 + r * Q_EXPM1_5)))
}

/// e^x, branch-free and total. Relative error <= [`EXP_FAST_F64_REL_ERR`] (2^-51) for
/// -708.39 <= x <= 709.78 (normal results). Beyond: x > 709.78 gives +inf (or the largest
/// double within the error bound of overflow); for -745.2 < x < -708.39 the result is
/// subnormal, with absolute error below 2^-1074 plus the relative bound; x <= -745.2 gives
/// 0 (or 2^-1074 near the threshold). Any f64 is accepted (clamped to [-746, 746]); NaN
/// gives NaN.
#[inline(always)]
#[doc(hidden)]
pub fn exp_fast_f64(x: f64) -> f64 {
    let x = if x > CLAMP_HI_EXP { CLAMP_HI_EXP } else { x };
    let x = if x < CLAMP_LO { CLAMP_LO } else { x };
    let (j, m, r) = reduce(x);
    let t = f64::from_bits(EXP2_HI[j]);
    let y = t + t * exp_q(r);
    // Two exact scalings so that subnormal results are rounded once, and overflow is inf.
    let (s1, s2) = pow2_m_halves(m);
    (y * s1) * s2
}

/// e^x for an f32 argument, branch-free and total: relative error <= [`F32_FAST_REL_ERR`]
/// (2^-44) for |x| <= 128; garbage (but no panic) outside. The f32 `Exp` fast path, also
/// used by sigmoid and silu.
#[inline(always)]
#[doc(hidden)]
pub fn exp_f32_fast<const FUSED: bool>(x: f32) -> f64 {
    // |x| <= 128 on the domain: 2^n is a normal double, one exact scaling. Outside it
    // the value is garbage but nothing panics (masked index, wrapping shifts).
    // The reduction of `reduce_f32`: cheaper than `reduce`, for |x| <= 128.
    let (j, m, w) = reduce_f32(x);
    let t = f64::from_bits(EXP2_HI[j]);
    let q = w * madd::<FUSED>(
        madd::<FUSED>(madd::<FUSED>(P_EXP_W4, w, P_EXP_W3), w, P_EXP_W2),
        w,
        P_EXP_W1,
    );
    scale_exponent(madd::<FUSED>(t, q, t), m)
}

/// y * 2^n for m = n + M0 (M0 << 52 = 0 mod 2^64), by adding n to y's exponent field:
/// the exact product, bit for bit, while y and the result are normal doubles (on the f32
/// fast domain y is in [0.7, 1.5) and |n| <= 185). One integer add where the product needs
/// 2^n built and a multiplication.
#[inline(always)]
fn scale_exponent(y: f64, m: u64) -> f64 {
    f64::from_bits(y.to_bits().wrapping_add(m << 52))
}

/// e^x - 1, branch-free and total. Relative error <= [`EXPM1_FAST_F64_REL_ERR`] (2^-50)
/// for every x <= 709.78 (including tiny and subnormal x, and x < -708 where the result is
/// -1 within 2^-1021); +inf above (the largest double within the bound right at the
/// threshold). Any f64 is accepted (clamped to [-746, 712]); NaN gives NaN. -0 gives +0:
/// callers needing expm1(-0) = -0 must treat zero apart.
#[inline(always)]
#[doc(hidden)]
pub fn expm1_fast_f64(x: f64) -> f64 {
    let x = if x > CLAMP_HI_EXPM1 {
        CLAMP_HI_EXPM1
    } else {
        x
    };
    let x = if x < CLAMP_LO { CLAMP_LO } else { x };
    let (j, m, r) = reduce(x);
    let (th, tl) = EXP2_TABLE[j];
    let (th, tl) = (f64::from_bits(th), f64::from_bits(tl));
    let h = tl + th * expm1_q(r);
    let (s1, s2) = pow2_m_halves(m);
    let a = (th * s1) * s2 - 1.0;
    let b = (h * s1) * s2;
    a + b
}

/// x = k c + r for a double-double x with |x.hi| <= 746: (k, r), r a double-double with
/// absolute error below 2^-111.
#[inline(always)]
fn reduce_dd(x: DD) -> (i64, DD) {
    let t = x.hi * INV_LN2_128 + SHIFT;
    let kf = t - SHIFT;
    let k = (t.to_bits() as i64) - (SHIFT.to_bits() as i64);
    let a = x.hi - kf * LN2_128_1; // exact (see the header)
    let (s, e) = two_sum(a, x.lo);
    let r = DD::new(s, e)
        .add_f64(-(kf * LN2_128_2)) // exact product: 35-bit constant, |k| < 2^18
        .add_f64(-(kf * LN2_128_3));
    (k, r)
}

/// e^r - 1 for |r| <= 2^-8.52, relative error about 9u^2 (Taylor to degree 10).
#[inline(always)]
fn expm1_poly_dd(r: DD) -> DD {
    let rh = r.hi;
    let h = INV_FACT_7 + rh * (INV_FACT_8 + rh * (INV_FACT_9 + rh * INV_FACT_10));
    let q = INV_FACT_6.add(r.mul_f64(h));
    let q = INV_FACT_5.add(r.mul(q));
    let q = INV_FACT_4.add(r.mul(q));
    let q = INV_FACT_3.add(r.mul(q));
    let q = r.mul(q).add_f64(0.5);
    let q = r.mul(q).add_f64(1.0);
    r.mul(q)
}

/// (n, E0) with e^x = 2^n (1 + E0), E0 = e^(jc + r) - 1, |jc + r| <= 64.5c, for a
/// double-double x with |x.hi| <= 746.
#[inline(always)]
fn exp_parts_dd(x: DD) -> (i32, DD) {
    let (k, r) = reduce_dd(x);
    let j = ((k + 64) & 127) - 64;
    let n = ((k - j) >> 7) as i32;
    let (dh, dl) = EXPM1_TABLE[(j + 64) as usize];
    let d = DD::new(f64::from_bits(dh), f64::from_bits(dl));
    let p = expm1_poly_dd(r);
    (n, d.add(p.add(p.mul(d))))
}

/// f * 2^n in two exact steps (|n| <= 1080), so that overflow gives inf.
#[inline(always)]
fn scale2(f: DD, n: i32) -> DD {
    let n1 = n >> 1;
    f.scale(pow2(n1)).scale(pow2(n - n1))
}

/// e^x for a double-double x (|x.lo| <= ulp(x.hi)/2). Relative error <= 2^-102 when the
/// result is at least 2^-969 (x >= -671; below, the low part underflows gradually: absolute
/// error below 2^-1074) and x.hi <= 709.78. x.hi > 709.79 gives (+inf, 0), as does an
/// overflowing result near the threshold; x.hi < -745.2 gives (0, 0); NaN gives NaN.
#[doc(hidden)]
pub fn exp_dd(x: DD) -> DD {
    if x.hi.is_nan() {
        return DD::new(f64::NAN, 0.0);
    }
    if x.hi > OVERFLOW_DD {
        return DD::new(f64::INFINITY, 0.0);
    }
    if x.hi < UNDERFLOW_DD {
        return DD::new(0.0, 0.0);
    }
    let (n, e0) = exp_parts_dd(x);
    let y = scale2(e0.add_f64(1.0), n);
    if y.hi.is_finite() {
        y
    } else {
        DD::new(f64::INFINITY, 0.0)
    }
}

/// e^x - 1 for a double-double x (|x.lo| <= ulp(x.hi)/2). Relative error <= 2^-100 for
/// every x.hi <= 709.78, tiny x included (|x| >= 2^-900, below which x^2 terms underflow
/// harmlessly: the result is x + x^2/2 to within 2^-1074). x.hi > 709.79 gives (+inf, 0);
/// x.hi < -745.2 gives (-1, 2^-1074) (the exact -1 + e^x is above -1); NaN gives NaN.
/// x = +-0 gives +0.
#[doc(hidden)]
pub fn expm1_dd(x: DD) -> DD {
    if x.hi.is_nan() {
        return DD::new(f64::NAN, 0.0);
    }
    if x.hi > OVERFLOW_DD {
        return DD::new(f64::INFINITY, 0.0);
    }
    if x.hi < UNDERFLOW_DD {
        return DD::new(-1.0, TINY);
    }
    let (n, e0) = exp_parts_dd(x);
    if n == 0 {
        return e0;
    }
    let y = scale2(e0.add_f64(1.0), n);
    if y.hi.is_finite() {
        y.add_f64(-1.0)
    } else {
        DD::new(f64::INFINITY, 0.0)
    }
}

/// e^x.
#[doc(hidden)]
pub struct Exp;

impl CrUnary for Exp {
    const FAST_REL_ERR: f64 = F32_FAST_REL_ERR;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        (x as f64).abs() <= FAST_MAX
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        exp_f32_fast::<FUSED>(x)
    }

    /// e^x >= e^-87 = 2^-125.51 for x >= -87, and the fast result is within 2^-44 of it:
    /// at least 2^-126. One f32 compare for 16 lanes, where the test's own look at y takes
    /// an f64 compare per 8; the few lanes below -87 go to the scalar path.
    #[inline(always)]
    fn fast_result_normal(x: f32) -> Option<bool> {
        Some(x >= NORMAL_RESULT_MIN)
    }

    fn accurate(x: f32) -> f64 {
        let x = x as f64;
        if x.is_nan() {
            return f64::NAN;
        }
        if x > OVERFLOW_F32 {
            return f64::INFINITY;
        }
        if x < UNDERFLOW_F32 {
            return TINY;
        }
        round_odd(exp_dd(DD::from_f64(x)))
    }
}

/// e^x - 1.
#[doc(hidden)]
pub struct Expm1;

impl CrUnary for Expm1 {
    const FAST_REL_ERR: f64 = F32_FAST_REL_ERR;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        let a = (x as f64).abs();
        a <= FAST_MAX && a != 0.0
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        let (j, m, w) = reduce_f32(x);
        let (th, tl) = EXP2_TABLE[j];
        let (th, tl) = (f64::from_bits(th), f64::from_bits(tl));
        let s = pow2_m(m);
        let q = w
            * (H_EXPM1_W0
                + w * (H_EXPM1_W1 + w * (H_EXPM1_W2 + w * (H_EXPM1_W3 + w * H_EXPM1_W4))));
        let h = tl + th * q;
        (th * s - 1.0) + h * s
    }

    fn accurate(x: f32) -> f64 {
        let x = x as f64;
        if x.is_nan() {
            return f64::NAN;
        }
        if x == 0.0 {
            return x; // keeps the sign of zero
        }
        if x > OVERFLOW_F32 {
            return f64::INFINITY;
        }
        if x < UNDERFLOW_F32 {
            return MINUS_ONE_PLUS;
        }
        round_odd(expm1_dd(DD::from_f64(x)))
    }
}

// ---- Constants generated by tools/gen_exp_coeffs.py (do not edit by hand) ----

/// 128/ln2 = 184.66496523378731614 (rounded)
const INV_LN2_128: f64 = f64::from_bits(0x4067_1547_652B_82FE);
/// ln2/128, first 35 bits: 0.0054152123482253955444
const LN2_128_1: f64 = f64::from_bits(0x3F76_2E42_FEFC_0000);
/// ln2/128, next 35 bits: -1.0082281460979481047e-13
const LN2_128_2: f64 = f64::from_bits(0xBD3C_610C_A86C_0000);
/// ln2/128, next 53 bits: -1.8287452238811120514e-25
const LN2_128_3: f64 = f64::from_bits(0xBACC_4C67_FC0D_0951);
// |ln2/128 - (1 + 2 + 3)| = 5.8249e-42
/// ln2/128 - LN2_128_1, rounded (fast path): -1.0082281460997768736e-13
const LN2_128_2F: f64 = f64::from_bits(0xBD3C_610C_A86C_3899);
// |ln2/128 - (1 + 2F)| = 2.3681e-30
// reduced argument bound R = 0.00270760617414 = 2^-8.52877
// P_EXP: relative error of the rounded coefficients vs e^r: 7.6064e-17 = 2^-53.546
/// 0.99999999999986000088
const P_EXP1: f64 = f64::from_bits(0x3FEF_FFFF_FFFF_FB13);
/// 0.49999999999997668532
const P_EXP2: f64 = f64::from_bits(0x3FDF_FFFF_FFFF_FE5C);
/// 0.16666674303262993262
const P_EXP3: f64 = f64::from_bits(0x3FC5_5555_F953_F733);
/// 0.041666679394326652797
const P_EXP4: f64 = f64::from_bits(0x3FA5_5555_C2A9_C0EE);
// Q_EXPM1: relative error of the rounded coefficients vs e^r - 1: 2.5275e-17 = 2^-55.135
/// 0.49999999999999067413
const Q_EXPM1_2: f64 = f64::from_bits(0x3FDF_FFFF_FFFF_FF58);
/// 0.16666666666666532515
const Q_EXPM1_3: f64 = f64::from_bits(0x3FC5_5555_5555_5525);
/// 0.041666676848794492738
const Q_EXPM1_4: f64 = f64::from_bits(0x3FA5_5555_ACCC_11B8);
/// 0.0083333347879229850708
const Q_EXPM1_5: f64 = f64::from_bits(0x3F81_1111_430B_C5C6);
// |INV_LN2_128 - 128/ln2| relative: 2^-55.9761
// P_EXP_W: relative error vs e^(c w), |w| <= 1/2: 7.6129e-17 = 2^-53.544
/// 0.0054152123481238144745
const P_EXP_W1: f64 = f64::from_bits(0x3F76_2E42_FEFA_3685);
/// 0.000014662262387639740514
const P_EXP_W2: f64 = f64::from_bits(0x3EEE_BFBD_FF82_C3FB);
/// 2.646643357113357654e-8
const P_EXP_W3: f64 = f64::from_bits(0x3E5C_6B09_B179_A24B);
/// 3.5830333998870574889e-11
const P_EXP_W4: f64 = f64::from_bits(0x3DC3_B2AB_D4AD_2543);
// H_EXPM1_W: w H(w) vs e^(c w) - 1, relative, |w| <= 1/2: 4.6153e-17 = 2^-54.266
/// 0.0054152123481245725486
const H_EXPM1_W0: f64 = f64::from_bits(0x3F76_2E42_FEFA_39EF);
/// 0.000014662262387639740514
const H_EXPM1_W1: f64 = f64::from_bits(0x3EEE_BFBD_FF82_C3FB);
/// 2.6466421444330440948e-8
const H_EXPM1_W2: f64 = f64::from_bits(0x3E5C_6B08_D704_A020);
/// 3.5830333998870574889e-11
const H_EXPM1_W3: f64 = f64::from_bits(0x3DC3_B2AB_D4AD_2543);
/// 3.8805770034834386013e-14
const H_EXPM1_W4: f64 = f64::from_bits(0x3D25_D880_3782_4728);
/// The hi parts of [`EXP2_TABLE`] alone, for the fast paths that read only them: an
/// 8-byte stride the vector gathers index directly (1 KiB).
static EXP2_HI: [u64; 128] = {
    let mut hi = [0u64; 128];
    let mut j = 0;
    while j < 128 {
        hi[j] = EXP2_TABLE[j].0;
        j += 1;
    }
    hi
};
/// 2^(j/128) for j = 0..127 as (hi, lo) bit patterns: hi = nearest double, lo = nearest
/// double of the rest.
static EXP2_TABLE: [(u64, u64); 128] = [
    (0x3FF0_0000_0000_0000, 0x0000_0000_0000_0000), // 0
    (0x3FF0_163D_A9FB_3335, 0x3C9B_6129_9AB8_CDB7), // 1
    (0x3FF0_2C9A_3E77_8061, 0xBC71_9083_535B_085D), // 2
    (0x3FF0_4315_E86E_7F85, 0xBC90_A31C_1977_C96E), // 3
    (0x3FF0_59B0_D315_8574, 0x3C8D_73E2_A475_B465), // 4
    (0x3FF0_706B_29DD_F6DE, 0xBC8C_91DF_E2B1_3C27), // 5
    (0x3FF0_8745_1875_9BC8, 0x3C61_86BE_4BB2_84FF), // 6
    (0x3FF0_9E3E_CAC6_F383, 0x3C91_4878_1831_6136), // 7
    (0x3FF0_B558_6CF9_890F, 0x3C98_A62E_4ADC_610B), // 8
    (0x3FF0_CC92_2B72_47F7, 0x3C90_1EDC_16E2_4F71), // 9
    (0x3FF0_E3EC_32D3_D1A2, 0x3C40_3A17_27C5_7B53), // 10
    (0x3FF0_FB66_AFFE_D31B, 0xBC6B_9BED_C44E_BD7B), // 11
    (0x3FF1_1301_D012_5B51, 0xBC96_C510_3944_9B3A), // 12
    (0x3FF1_2ABD_C06C_31CC, 0xBC51_B514_B36C_A5C7), // 13
    (0x3FF1_429A_AEA9_2DE0, 0xBC93_2FBF_9AF1_369E), // 14
    (0x3FF1_5A98_C8A5_8E51, 0x3C82_406A_B9EE_AB0A), // 15
    (0x3FF1_72B8_3C7D_517B, 0xBC81_9041_B9D7_8A76), // 16
    (0x3FF1_8AF9_388C_8DEA, 0xBC91_1023_D197_0F6C), // 17
    (0x3FF1_A35B_EB6F_CB75, 0x3C8E_5B4C_7B49_68E4), // 18
    (0x3FF1_BBE0_8404_5CD4, 0xBC99_5386_352E_F607), // 19
    (0x3FF1_D487_3168_B9AA, 0x3C9E_016E_00A2_643C), // 20
    (0x3FF1_ED50_22FC_D91D, 0xBC91_DF98_027B_B78C), // 21
    (0x3FF2_063B_8862_8CD6, 0x3C8D_C775_814A_8495), // 22
    (0x3FF2_1F49_917D_DC96, 0x3C82_A97E_9494_A5EE), // 23
    (0x3FF2_387A_6E75_6238, 0x3C99_B07E_B6C7_0573), // 24
    (0x3FF2_51CE_4FB2_A63F, 0x3C8A_C155_BEF4_F4A4), // 25
    (0x3FF2_6B45_65E2_7CDD, 0x3C82_BD33_9940_E9D9), // 26
    (0x3FF2_84DF_E1F5_6381, 0xBC9A_4C3A_8C3F_0D7E), // 27
    (0x3FF2_9E9D_F51F_DEE1, 0x3C86_12E8_AFAD_1255), // 28
    (0x3FF2_B87F_D0DA_D990, 0xBC41_0ADC_D638_1AA4), // 29
    (0x3FF2_D285_A6E4_030B, 0x3C90_0247_54DB_41D5), // 30
    (0x3FF2_ECAF_A93E_2F56, 0x3C71_CA0F_45D5_2383), // 31
    (0x3FF3_06FE_0A31_B715, 0x3C86_F46A_D231_82E4), // 32
    (0x3FF3_2170_FC4C_D831, 0x3C8A_9CE7_8E18_047C), // 33
    (0x3FF3_3C08_B264_16FF, 0x3C93_2721_8436_59A6), // 34
    (0x3FF3_56C5_5F92_9FF1, 0xBC8B_5CEE_5C4E_4628), // 35
    (0x3FF3_71A7_373A_A9CB, 0xBC96_3AEA_BF42_EAE2), // 36
    (0x3FF3_8CAE_6D05_D866, 0xBC9E_958D_3C99_04BD), // 37
    (0x3FF3_A7DB_34E5_9FF7, 0xBC75_E436_D661_F5E3), // 38
    (0x3FF3_C32D_C313_A8E5, 0xBC9E_FFF8_375D_29C3), // 39
    (0x3FF3_DEA6_4C12_3422, 0x3C8A_DA09_11F0_9EBC), // 40
    (0x3FF3_FA45_04AC_801C, 0xBC97_D023_F956_F9F3), // 41
    (0x3FF4_160A_21F7_2E2A, 0xBC5E_F369_1C30_9278), // 42
    (0x3FF4_31F5_D950_A897, 0xBC81_C7DD_E35F_7999), // 43
    (0x3FF4_4E08_6061_892D, 0x3C48_9B7A_04EF_80D0), // 44
    (0x3FF4_6A41_ED1D_0057, 0x3C9C_944B_D164_8A76), // 45
    (0x3FF4_86A2_B5C1_3CD0, 0x3C73_C1A3_B690_62F0), // 46
    (0x3FF4_A32A_F0D7_D3DE, 0x3C99_CB62_F3D1_BE56), // 47
    (0x3FF4_BFDA_D536_2A27, 0x3C7D_4397_AFEC_42E2), // 48
    (0x3FF4_DCB2_99FD_DD0D, 0x3C98_ECDB_BC6A_7833), // 49
    (0x3FF4_F9B2_769D_2CA7, 0xBC94_B309_D259_57E3), // 50
    (0x3FF5_16DA_A2CF_6642, 0xBC8F_7685_69BD_93EF), // 51
    (0x3FF5_342B_569D_4F82, 0xBC80_7ABE_1DB1_3CAD), // 52
    (0x3FF5_51A4_CA5D_920F, 0xBC8D_689C_EFED_E59B), // 53
    (0x3FF5_6F47_36B5_27DA, 0x3C99_BB2C_011D_93AD), // 54
    (0x3FF5_8D12_D497_C7FD, 0x3C82_95E1_5B9A_1DE8), // 55
    (0x3FF5_AB07_DD48_5429, 0x3C96_324C_0546_47AD), // 56
    (0x3FF5_C926_8A59_46B7, 0x3C3C_4B1B_8169_86A2), // 57
    (0x3FF5_E76F_15AD_2148, 0x3C9B_A6F9_3080_E65E), // 58
    (0x3FF6_05E1_B976_DC09, 0xBC93_E242_9B56_DE47), // 59
    (0x3FF6_247E_B03A_5585, 0xBC93_83C1_7E40_B497), // 60
    (0x3FF6_4346_34CC_C320, 0xBC8C_483C_759D_8933), // 61
    (0x3FF6_6238_8255_2225, 0xBC9B_B609_8759_1C34), // 62
    (0x3FF6_8155_D44C_A973, 0x3C60_38AE_44F7_3E65), // 63
    (0x3FF6_A09E_667F_3BCD, 0xBC9B_DD34_13B2_6456), // 64
    (0x3FF6_C012_750B_DABF, 0xBC72_8956_67FF_0B0D), // 65
    (0x3FF6_DFB2_3C65_1A2F, 0xBC6B_BE3A_683C_88AB), // 66
    (0x3FF6_FF7D_F951_9484, 0xBC88_3C0F_2586_0EF6), // 67
    (0x3FF7_1F75_E8EC_5F74, 0xBC81_6E47_8688_7A99), // 68
    (0x3FF7_3F9A_48A5_8174, 0xBC90_A8D9_6C65_D53C), // 69
    (0x3FF7_5FEB_5642_67C9, 0xBC90_2459_5731_6DD3), // 70
    (0x3FF7_8069_4FDE_5D3F, 0x3C98_66B8_0A02_162D), // 71
    (0x3FF7_A114_73EB_0187, 0xBC84_1577_EE04_992F), // 72
    (0x3FF7_C1ED_0130_C132, 0x3C9F_124C_D116_4DD6), // 73
    (0x3FF7_E2F3_36CF_4E62, 0x3C70_5D02_BA15_797E), // 74
    (0x3FF8_0427_543E_1A12, 0xBC92_7C86_626D_972B), // 75
    (0x3FF8_2589_994C_CE13, 0xBC9D_4C1D_D415_32D8), // 76
    (0x3FF8_471A_4623_C7AD, 0xBC88_D684_A341_CDFB), // 77
    (0x3FF8_68D9_9B44_92ED, 0xBC9F_C6F8_9BD4_F6BA), // 78
    (0x3FF8_8AC7_D98A_6699, 0x3C99_94C2_F37C_B53A), // 79
    (0x3FF8_ACE5_422A_A0DB, 0x3C96_E9F1_5686_4B27), // 80
    (0x3FF8_CF32_16B5_448C, 0xBC70_D55E_32E9_E3AA), // 81
    (0x3FF8_F1AE_9915_7736, 0x3C85_CC13_A2E3_976C), // 82
    (0x3FF9_145B_0B91_FFC6, 0xBC9D_D679_2E58_2524), // 83
    (0x3FF9_3737_B0CD_C5E5, 0xBC67_5FC7_81B5_7EBC), // 84
    (0x3FF9_5A44_CBC8_520F, 0xBC76_4B7C_96A5_F039), // 85
    (0x3FF9_7D82_9FDE_4E50, 0xBC9D_185B_7C1B_85D1), // 86
    (0x3FF9_A0F1_70CA_07BA, 0xBC91_73BD_91CE_E632), // 87
    (0x3FF9_C491_82A3_F090, 0x3C7C_7C46_B071_F2BE), // 88
    (0x3FF9_E863_19E3_2323, 0x3C78_24CA_78E6_4C6E), // 89
    (0x3FFA_0C66_7B5D_E565, 0xBC93_5949_5D1C_D533), // 90
    (0x3FFA_309B_EC4A_2D33, 0x3C96_305C_7DDC_36AB), // 91
    (0x3FFA_5503_B23E_255D, 0xBC9D_2F6E_DB8D_41E1), // 92
    (0x3FFA_799E_1330_B358, 0x3C9B_CB7E_CAC5_63C7), // 93
    (0x3FFA_9E6B_5579_FDBF, 0x3C90_FAC9_0EF7_FD31), // 94
    (0x3FFA_C36B_BFD3_F37A, 0xBC8F_9234_CAE7_6CD0), // 95
    (0x3FFA_E89F_995A_D3AD, 0x3C97_A1CD_345D_CC81), // 96
    (0x3FFB_0E07_298D_B666, 0xBC9B_DEF5_4C80_E425), // 97
    (0x3FFB_33A2_B84F_15FB, 0xBC62_805E_3084_D708), // 98
    (0x3FFB_5972_8DE5_593A, 0xBC9C_71DF_BBBA_6DE3), // 99
    (0x3FFB_7F76_F2FB_5E47, 0xBC75_584F_7E54_AC3B), // 100
    (0x3FFB_A5B0_30A1_064A, 0xBC9E_FCD3_0E54_292E), // 101
    (0x3FFB_CC1E_904B_C1D2, 0x3C82_3DD0_7A2D_9E84), // 102
    (0x3FFB_F2C2_5BD7_1E09, 0xBC9E_FDCA_3F6B_9C73), // 103
    (0x3FFC_199B_DD85_529C, 0x3C81_1065_8950_48DD), // 104
    (0x3FFC_40AB_5FFF_D07A, 0x3C9B_4537_E083_C60A), // 105
    (0x3FFC_67F1_2E57_D14B, 0x3C92_884D_FF48_3CAD), // 106
    (0x3FFC_8F6D_9406_E7B5, 0x3C71_ACBC_4880_5C44), // 107
    (0x3FFC_B720_DCEF_9069, 0x3C75_03CB_D1E9_49DB), // 108
    (0x3FFC_DF0B_555D_C3FA, 0xBC8D_D83B_5382_9D72), // 109
    (0x3FFD_072D_4A07_897C, 0xBC9C_BC37_4379_7A9C), // 110
    (0x3FFD_2F87_080D_89F2, 0xBC9D_487B_719D_8578), // 111
    (0x3FFD_5818_DCFB_A487, 0x3C82_ED02_D75B_3707), // 112
    (0x3FFD_80E3_16C9_8398, 0xBC91_1EC1_8BED_DFE8), // 113
    (0x3FFD_A9E6_03DB_3285, 0x3C9C_2300_696D_B532), // 114
    (0x3FFD_D321_F301_B460, 0x3C92_DA57_78F0_18C3), // 115
    (0x3FFD_FC97_337B_9B5F, 0xBC91_A5CD_4F18_4B5C), // 116
    (0x3FFE_2646_14F5_A129, 0xBC97_B627_817A_1496), // 117
    (0x3FFE_502E_E78B_3FF6, 0x3C83_9E89_80A9_CC8F), // 118
    (0x3FFE_7A51_FBC7_4C83, 0x3C92_D522_CA0C_8DE2), // 119
    (0x3FFE_A4AF_A2A4_90DA, 0xBC9E_9C23_179C_2893), // 120
    (0x3FFE_CF48_2D8E_67F1, 0xBC9C_93F3_B411_AD8C), // 121
    (0x3FFE_FA1B_EE61_5A27, 0x3C9D_C7F4_86A4_B6B0), // 122
    (0x3FFF_252B_376B_BA97, 0x3C93_A1A5_BF0D_8E43), // 123
    (0x3FFF_5076_5B6E_4540, 0x3C99_D3E1_2DD8_A18B), // 124
    (0x3FFF_7BFD_AD9C_BE14, 0xBC9D_BB12_D006_350A), // 125
    (0x3FFF_A7C1_819E_90D8, 0x3C87_4853_F3A5_931E), // 126
    (0x3FFF_D3C2_2B8F_71F1, 0x3C62_EB74_9665_79E7), // 127
];
/// 2^(j/128) - 1 for j = -64..63 (index j + 64) as (hi, lo) bit patterns.
static EXPM1_TABLE: [(u64, u64); 128] = [
    (0xBFD2_BEC3_3301_8867, 0x3C60_8B2F_B136_6EA9), // -64
    (0xBFD2_7FDB_15E8_4A82, 0xBC62_8956_67FF_0B0D), // -63
    (0xBFD2_409B_8735_CBA2, 0xBC5B_BE3A_683C_88AB), // -62
    (0xBFD2_0104_0D5C_D6F8, 0xBC78_3C0F_2586_0EF6), // -61
    (0xBFD1_C114_2E27_4118, 0xBC71_6E47_8688_7A99), // -60
    (0xBFD1_80CB_6EB4_FD19, 0x3C7E_AE4D_2734_5589), // -59
    (0xBFD1_4029_537B_306F, 0x3C7F_B74D_519D_2459), // -58
    (0xBFD0_FF2D_6043_4581, 0xBC6E_651F_D7F7_A74D), // -57
    (0xBFD0_BDD7_1829_FCF2, 0xBC74_1577_EE04_992F), // -56
    (0xBFD0_7C25_FD9E_7D9B, 0xBC3D_B665_DD36_454F), // -55
    (0xBFD0_3A19_9261_633C, 0x3C60_5D02_BA15_797E), // -54
    (0xBFCF_EF62_AF07_97B9, 0xBC53_E433_136C_B956), // -53
    (0xBFCF_69D9_9ACC_C7B6, 0x3C55_9F11_5F56_6940), // -52
    (0xBFCE_E396_E770_E14D, 0x3C5C_A5ED_72F8_C813), // -51
    (0xBFCE_5C99_92ED_B44E, 0x3C1C_83B2_1584_A2E1), // -50
    (0xBFCD_D4E0_99D6_659A, 0xBC69_ACF4_320D_2B16), // -49
    (0xBFCD_4C6A_F755_7C93, 0x3C6B_A7C5_5A19_2C9C), // -48
    (0xBFCC_C337_A52A_EDD0, 0xBC60_D55E_32E9_E3AA), // -47
    (0xBFCC_3945_9BAA_2327, 0xBC64_67D8_BA38_D128), // -46
    (0xBFCB_AE93_D1B8_00EA, 0x3C51_4C36_8D3E_D6E2), // -45
    (0xBFCB_2321_3CC8_E86C, 0xBC57_5FC7_81B5_7EBC), // -44
    (0xBFCA_96EC_D0DE_B7C4, 0xBC66_4B7C_96A5_F039), // -43
    (0xBFCA_09F5_8086_C6C2, 0x3C57_3D24_1F23_D17B), // -42
    (0xBFC9_7C3A_3CD7_E119, 0xBC47_3BD9_1CEE_6321), // -41
    (0xBFC8_EDB9_F570_3DC0, 0x3C6C_7C46_B071_F2BE), // -40
    (0xBFC8_5E73_9873_7374, 0x3C68_24CA_78E6_4C6E), // -39
    (0xBFC7_CE66_1288_6A6D, 0xBC5A_CA4A_E8E6_A997), // -38
    (0xBFC7_3D90_4ED7_4B33, 0x3C68_C171_F770_DAAD), // -37
    (0xBFC6_ABF1_3707_6A8E, 0x3C56_8489_2395_F0F8), // -36
    (0xBFC6_1987_B33D_329E, 0xBC60_D204_D4EA_70E5), // -35
    (0xBFC5_8652_AA18_0903, 0x3C3F_5921_DEFF_A626), // -34
    (0xBFC4_F251_00B0_3219, 0x3C1B_72CD_4624_CBF9), // -33
    (0xBFC4_5D81_9A94_B14B, 0x3C6E_8734_D177_3206), // -32
    (0xBFC3_C7E3_59C9_266A, 0x3C60_842A_CDFC_6F6D), // -31
    (0xBFC3_3175_1EC3_A814, 0xBC52_805E_3084_D708), // -30
    (0xBFC2_9A35_C86A_9B1A, 0x3C5C_7102_222C_90E8), // -29
    (0xBFC2_0224_3412_86E4, 0xBC65_584F_7E54_AC3B), // -28
    (0xBFC1_693F_3D7B_E6DA, 0x3C40_32CF_1ABD_6D20), // -27
    (0xBFC0_CF85_BED0_F8B7, 0xBC6B_845F_0BA4_C2F7), // -26
    (0xBFC0_34F6_90A3_87DE, 0x3C40_235C_0946_38D1), // -25
    (0xBFBF_3321_13D5_6B1F, 0x3C31_0658_9504_8DD3), // -24
    (0xBFBD_FAA5_0001_7C2D, 0x3C5A_29BF_041E_3051), // -23
    (0xBFBC_C076_8D41_75A6, 0x3C54_426F_FA41_E566), // -22
    (0xBFBB_8493_5FC8_C257, 0xBC5C_A687_6EFF_4778), // -21
    (0xBFBA_46F9_1883_7CB7, 0xBC55_F868_5C2D_6C49), // -20
    (0xBFB9_07A5_5511_E032, 0x3C41_3E25_63EB_1470), // -19
    (0xBFB7_C695_AFC3_B424, 0x3C5A_1E45_E434_2B1C), // -18
    (0xBFB6_83C7_BF93_B074, 0x3C55_BC24_7313_D440), // -17
    (0xBFB5_3F39_1822_DBC7, 0x3C47_6816_BAD9_B837), // -16
    (0xBFB3_F8E7_49B3_E342, 0xBC41_EC18_BEDD_FE82), // -15
    (0xBFB2_B0CF_E126_6BD4, 0xBC5E_E7FC_B492_566D), // -14
    (0xBFB1_66F0_67F2_5CFE, 0x3C56_D2BB_C780_C614), // -13
    (0xBFB0_1B46_6423_250A, 0xBC4A_5CD4_F184_B5B9), // -12
    (0xBFAD_9B9E_B0A5_ED76, 0x3C22_761F_A17A_DA64), // -11
    (0xBFAA_FD11_874C_009E, 0x3C4C_F44C_054E_647A), // -10
    (0xBFA8_5AE0_438B_37CB, 0xBC42_ADD3_5F37_21E6), // -9
    (0xBFA5_B505_D5B6_F268, 0x3C46_3DCE_863D_76CC), // -8
    (0xBFA3_0B7D_2719_80F7, 0xBC32_7E76_8235_B188), // -7
    (0xBFA0_5E41_19EA_5D89, 0x3C4C_7F48_6A4B_6B08), // -6
    (0xBF9B_5A99_1288_AD16, 0xBC27_9690_3C9C_6F2B), // -5
    (0xBF95_F134_9237_57F3, 0xBC16_0F69_13AF_3A8A), // -4
    (0xBF90_804A_4C68_3D8F, 0x3C21_3B4B_FE72_BD96), // -3
    (0xBF86_0F9F_985B_C9F4, 0xBC26_F581_8B4D_9C3E), // -2
    (0xBF76_1EEA_3847_077B, 0xBC11_48B6_99A8_618B), // -1
    (0x0000_0000_0000_0000, 0x0000_0000_0000_0000), // 0
    (0x3F76_3DA9_FB33_356E, 0xBC1E_D665_4732_48C8), // 1
    (0x3F86_4D1F_3BC0_3077, 0x3C1B_DF2B_293D_E8A7), // 2
    (0x3F90_C57A_1B9F_E12F, 0x3C37_38F9_A20D_A47E), // 3
    (0x3F96_6C34_C561_5D0F, 0xBC31_83AB_7149_735C), // 4
    (0x3F9C_1ACA_777D_B772, 0xBC32_3BFC_5627_84D8), // 5
    (0x3FA0_E8A3_0EB3_7901, 0x3C28_6BE4_BB28_4FF4), // 6
    (0x3FA3_C7D9_58DE_7069, 0xBC46_F0FC_F9D3_D94A), // 7
    (0x3FA6_AB0D_9F31_21EC, 0x3C44_C5C9_5B8C_2155), // 8
    (0x3FA9_9245_6E48_FEE8, 0x3C1E_DC16_E24F_717A), // 9
    (0x3FAC_7D86_5A7A_3440, 0x3C40_3A17_27C5_7B53), // 10
    (0x3FAF_6CD5_FFDA_635E, 0x3C41_9048_EEC5_0A13), // 11
    (0x3FB1_301D_0125_B50A, 0x3C53_AEFC_6BB6_4C63), // 12
    (0x3FB2_ABDC_06C3_1CC0, 0xBC51_B514_B36C_A5C7), // 13
    (0x3FB4_29AA_EA92_DDFB, 0x3C4A_080C_A1D9_2C37), // 14
    (0x3FB5_A98C_8A58_E512, 0x3C52_0355_CF75_584F), // 15
    (0x3FB7_2B83_C7D5_17AE, 0xBC49_041B_9D78_A75B), // 16
    (0x3FB8_AF93_88C8_DE9C, 0xBC51_023D_1970_F6BF), // 17
    (0x3FBA_35BE_B6FC_B754, 0xBC4A_4B38_4B69_71BE), // 18
    (0x3FBB_BE08_4045_CD3A, 0xBC55_3863_52EF_6073), // 19
    (0x3FBD_4873_168B_9AA8, 0xBC5F_E91F_F5D9_BC3E), // 20
    (0x3FBE_D502_2FCD_91CC, 0xBC5D_F980_27BB_78B8), // 21
    (0x3FC0_31DC_4314_66B2, 0xBC51_C453_F5AB_DB59), // 22
    (0x3FC0_FA4C_8BEE_E4B1, 0x3C55_4BF4_A4A5_2F6D), // 23
    (0x3FC1_C3D3_73AB_11C3, 0x3C5B_07EB_6C70_572D), // 24
    (0x3FC2_8E72_7D95_31FA, 0xBC64_FAA9_042C_2D70), // 25
    (0x3FC3_5A2B_2F13_E6E9, 0x3C55_E99C_CA07_4EC9), // 26
    (0x3FC4_26FF_0FAB_1C05, 0xBC62_61D4_61F8_6BED), // 27
    (0x3FC4_F4EF_A8FE_F709, 0x3C68_4BA2_BEB4_4954), // 28
    (0x3FC5_C3FE_86D6_CC80, 0xBC41_0ADC_D638_1AA4), // 29
    (0x3FC6_942D_3720_185A, 0x3BE2_3AA6_DA0E_A709), // 30
    (0x3FC7_657D_49F1_7AB1, 0xBC6C_6BE1_7455_B8FA), // 31
    (0x3FC8_37F0_518D_B8A9, 0x3C6B_D1AB_48C6_0B91), // 32
    (0x3FC9_0B87_E266_C18A, 0xBC65_8C61_C79F_EE0F), // 33
    (0x3FC9_E045_9320_B7FA, 0x3C69_390C_21B2_CD2D), // 34
    (0x3FCA_B62A_FC94_FF86, 0x3C62_8C46_8EC6_E75E), // 35
    (0x3FCB_8D39_B9D5_4E55, 0x3C5C_5154_0BD1_51E6), // 36
    (0x3FCC_6573_682E_C32C, 0x3C56_A72C_366F_B432), // 37
    (0x3FCD_3ED9_A72C_FFB7, 0x3C64_3792_533C_143A), // 38
    (0x3FCE_196E_189D_4724, 0x3C50_007C_8A2D_63CE), // 39
    (0x3FCE_F532_6091_A112, 0xBC64_97DB_B83D_8512), // 40
    (0x3FCF_D228_2564_00DD, 0x3C27_EE03_5483_065F), // 41
    (0x3FD0_5828_87DC_B8A8, 0xBC5E_F369_1C30_9278), // 42
    (0x3FD0_C7D7_6542_A25B, 0x3C7C_7044_3941_0CCF), // 43
    (0x3FD1_3821_8186_24B4, 0x3C48_9B7A_04EF_80D0), // 44
    (0x3FD1_A907_B474_015E, 0xBC6B_5DA1_74DB_AC4D), // 45
    (0x3FD2_1A8A_D704_F340, 0x3C73_C1A3_B690_62F0), // 46
    (0x3FD2_8CAB_C35F_4F7A, 0xBC78_D274_30B9_06A8), // 47
    (0x3FD2_FF6B_54D8_A89C, 0x3C7D_4397_AFEC_42E2), // 48
    (0x3FD3_72CA_67F7_7436, 0xBC7C_4C91_0E56_1F34), // 49
    (0x3FD3_E6C9_DA74_B29B, 0xBC72_CC27_4965_5F8C), // 50
    (0x3FD4_5B6A_8B3D_9907, 0x3C31_2F52_C84D_8222), // 51
    (0x3FD4_D0AD_5A75_3E07, 0x3C7F_0A83_C49D_86A6), // 52
    (0x3FD5_4693_2976_483B, 0x3C54_BB18_8090_D32A), // 53
    (0x3FD5_BD1C_DAD4_9F6A, 0xBC79_134F_FB89_B14C), // 54
    (0x3FD6_344B_525F_1FF5, 0xBC7A_D43D_48CB_C431), // 55
    (0x3FD6_AC1F_7521_50A5, 0x3C78_C930_1519_1EB3), // 56
    (0x3FD7_249A_2965_1ADC, 0x3C3C_4B1B_8169_86A2), // 57
    (0x3FD7_9DBC_56B4_8522, 0xBC71_641B_3DFC_668A), // 58
    (0x3FD8_1786_E5DB_7023, 0xBC6F_1214_DAB6_F239), // 59
    (0x3FD8_91FA_C0E9_5613, 0xBC6C_1E0B_F205_A4B8), // 60
    (0x3FD9_0D18_D333_0C7F, 0x3C5D_BE1C_5313_B669), // 61
    (0x3FD9_88E2_0954_8892, 0x3C71_27D9_E29B_8F31), // 62
    (0x3FDA_0557_5132_A5CC, 0x3C60_38AE_44F7_3E65), // 63
];
/// 1/3! as a double-double
const INV_FACT_3: DD = DD::from_bits(0x3FC5_5555_5555_5555, 0x3C65_5555_5555_5555);
/// 1/4! as a double-double
const INV_FACT_4: DD = DD::from_bits(0x3FA5_5555_5555_5555, 0x3C45_5555_5555_5555);
/// 1/5! as a double-double
const INV_FACT_5: DD = DD::from_bits(0x3F81_1111_1111_1111, 0x3C01_1111_1111_1111);
/// 1/6! as a double-double
const INV_FACT_6: DD = DD::from_bits(0x3F56_C16C_16C1_6C17, 0xBBEF_49F4_9F49_F49F);
/// 1/7! (rounded)
const INV_FACT_7: f64 = f64::from_bits(0x3F2A_01A0_1A01_A01A);
/// 1/8! (rounded)
const INV_FACT_8: f64 = f64::from_bits(0x3EFA_01A0_1A01_A01A);
/// 1/9! (rounded)
const INV_FACT_9: f64 = f64::from_bits(0x3EC7_1DE3_A556_C734);
/// 1/10! (rounded)
const INV_FACT_10: f64 = f64::from_bits(0x3E92_7E4F_B778_9F5C);
// accurate path: Taylor remainder of expm1 at degree 10, relative: < 5.3196e-34 = 2^-110.53

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn special_values() {
        assert!(math::exp(f32::NAN).is_nan());
        assert_eq!(math::exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(math::exp(f32::NEG_INFINITY).to_bits(), 0);
        assert_eq!(math::exp(0.0), 1.0);
        assert_eq!(math::exp(-0.0), 1.0);
        assert_eq!(math::exp(89.0), f32::INFINITY);
        assert_eq!(math::exp(-104.0).to_bits(), 0);
        assert_eq!(math::exp(-103.0).to_bits(), 0x0000_0001); // e^-103 = 1.9e-45 ~ 2^-148.6
        assert!(math::expm1(f32::NAN).is_nan());
        assert_eq!(math::expm1(f32::INFINITY), f32::INFINITY);
        assert_eq!(math::expm1(f32::NEG_INFINITY), -1.0);
        assert_eq!(math::expm1(0.0).to_bits(), 0);
        assert_eq!(math::expm1(-0.0).to_bits(), 0x8000_0000);
        assert_eq!(math::expm1(-200.0), -1.0);
        assert_eq!(math::expm1(89.0), f32::INFINITY);
        let tiny = f32::from_bits(1);
        assert_eq!(math::expm1(tiny), tiny);
        assert_eq!(math::expm1(-tiny), -tiny);
    }

    #[test]
    fn fast_cores_are_total() {
        // exact at 0 (softmax relies on e^0 = 1)
        assert_eq!(exp_fast_f64(0.0), 1.0);
        assert_eq!(exp_fast_f64(-0.0), 1.0);
        assert_eq!(expm1_fast_f64(0.0), 0.0);
        assert!(exp_fast_f64(f64::NAN).is_nan());
        assert!(expm1_fast_f64(f64::NAN).is_nan());
        for x in [
            709.8,
            710.0,
            711.5,
            712.0,
            745.0,
            800.0,
            1e300,
            f64::INFINITY,
        ] {
            assert_eq!(exp_fast_f64(x), f64::INFINITY, "{x}");
            assert_eq!(expm1_fast_f64(x), f64::INFINITY, "{x}");
        }
        for x in [-745.2, -746.0, -800.0, -1e300, f64::NEG_INFINITY] {
            assert_eq!(exp_fast_f64(x), 0.0, "{x}");
            assert_eq!(expm1_fast_f64(x), -1.0, "{x}");
        }
        // gradual underflow
        let y = exp_fast_f64(-740.0);
        assert!(y > 0.0 && y < f64::MIN_POSITIVE);
        assert!((y - (-740f64).exp()).abs() <= 2.0 * f64::from_bits(1));
    }

    #[test]
    fn fast_cores_match_libm() {
        // std's exp/exp_m1 are within about 1 ulp: allow the bound plus 2 ulps.
        let mut x = -708.0f64;
        while x < 709.7 {
            let e = x.exp();
            assert!(
                rel(exp_fast_f64(x), e) <= EXP_FAST_F64_REL_ERR + 4.5e-16,
                "{x}"
            );
            let m = x.exp_m1();
            assert!(
                rel(expm1_fast_f64(x), m) <= EXPM1_FAST_F64_REL_ERR + 4.5e-16,
                "{x}"
            );
            x += 0.0123456789;
        }
        let mut x = 1e-300f64;
        while x < 1.0 {
            for s in [x, -x] {
                assert!(rel(expm1_fast_f64(s), s.exp_m1()) <= 1e-15, "{s}");
            }
            x *= 1.37;
        }
    }

    #[test]
    fn dd_cores_are_consistent() {
        let u100 = f64::from_bits(0x39B0_0000_0000_0000); // 2^-100
        // |x| <= 660: the product below splits e^|x| < 2^953 (Dekker's split needs < 2^996),
        // and e^-660 > 2^-953 keeps the low part normal (exp_dd's bound needs x >= -671).
        let mut x = -660.0f64;
        while x < 660.0 {
            let xd = DD::new(x, x * 1.1e-17);
            let e = exp_dd(xd);
            let m = expm1_dd(xd);
            assert!(rel(e.hi, x.exp() * (1.0 + xd.lo)) < 1e-15, "{x}");
            // e^x e^-x = 1
            let one = e.mul(exp_dd(xd.neg())).add_f64(-1.0);
            assert!(one.hi.abs() < 4.0 * u100, "{x}: {}", one.hi);
            // expm1 + 1 = exp
            let d = m.add_f64(1.0).sub(e);
            assert!(d.hi.abs() <= 2.0 * u100 * e.hi.max(m.hi.abs()), "{x}");
            x += 0.731;
        }
        // expm1 near 0: e^x - 1 = (e^(x/2) - 1)(e^(x/2) + 1)
        let mut x = 1e-30f64;
        while x < 1.0 {
            for s in [x, -x] {
                let m = expm1_dd(DD::from_f64(s));
                let h = expm1_dd(DD::from_f64(s * 0.5));
                let m2 = h.mul(h.add_f64(2.0));
                let d = m.sub(m2);
                assert!(d.hi.abs() <= 16.0 * u100 * m.hi.abs(), "{s}");
            }
            x *= 1.9;
        }
        assert!(exp_dd(DD::from_f64(f64::NAN)).hi.is_nan());
        assert_eq!(exp_dd(DD::from_f64(0.0)), DD::new(1.0, 0.0));
        assert_eq!(exp_dd(DD::from_f64(709.785)).hi, f64::INFINITY);
        assert_eq!(expm1_dd(DD::from_f64(-800.0)).hi, -1.0);
    }

    #[test]
    fn monotonic_on_f32_sample() {
        let mut prev_e = 0.0f32;
        let mut prev_m = -1.0f32;
        let mut x = -110.0f32;
        while x < 90.0 {
            let (e, m) = (math::exp(x), math::expm1(x));
            assert!(e >= prev_e && m >= prev_m, "{x}");
            (prev_e, prev_m) = (e, m);
            x += 0.0071;
        }
    }
}
