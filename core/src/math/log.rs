//! Logarithm family: `log` (ln x), `log1p` (ln(1 + x)) and `log10` (ln x / ln 10), plus the
//! f64 and double-double cores other families call (`log1p_fast_f64`, `log1p_dd`, `log_dd`).
//!
//! # Range reduction (shared by every path)
//! A positive f64 `u` is split with integer operations into `u = 2^k * z`: with
//! `tmp = bits(u) - OFF` (OFF = bits of 0.68554...), `k = tmp >> 52` (arithmetic) and
//! `bits(z) = bits(u) - (k << 52)`, so z lies in [0.6855, 1.3711). The 7 bits
//! `i = (tmp >> 45) & 127` select one of 128 intervals of z (width 2^-8 below 1, 2^-7 above);
//! OFF is placed so that z = 1 is in the middle of interval 80 = [1 - 2^-9, 1 + 2^-8),
//! whose `c_80 = 1` and `log c_80 = 0`: near u = 1 nothing cancels and the result keeps its
//! relative accuracy however close to 1 the argument is. For every i, `c_i ~ 1/mid_i`
//! has 20 significant bits, so `z * c_i` is exact when z has at most 33 bits (f32: 24), and
//! `r = z * c_i - 1` is exact by Sterbenz's lemma, |r| <= RMAX = 2^-8. Then
//!     ln u = k ln2 - ln c_i + log1p(r).
//! Tables: INVC (c_i), NEG_LOGC_HI/LO (-ln c_i as a double-double), 3 x 128 f64, produced by
//! `tools/gen_log_coeffs.py` with the polynomial coefficients.
//!
//! # Fast path (f64, branch-free)
//! log1p(r) ~ p(r) = r + r^2 (P0 + P1 r + P2 r^2 + P3 r^3 + P4 r^4), a Chebyshev fit on
//! |r| <= 2^-8 with relative error 2^-54.8; evaluated as r + r^2 * q (Estrin for q), with
//! multiply-adds (`madd`: fused in the FMA copies and on CUDA, two roundings in the x86-64
//! baseline; the bounds below allow two): the r^2 q term is below 2^-9 |r| so its rounding
//! errors stay below 2^-60 |p|, and the final addition costs 2^-53 |p|. Assembly:
//! `(k*LN2_HI + NEG_LOGC_HI) + (k*LN2_LO + p)` with LN2_HI of 42 bits (k * LN2_HI exact for
//! |k| < 2^11; LN2_HI + LN2_LO = ln 2 within 2^-97).
//! Error relative to the result y, u = 2^-53 (the generator prints the ratios used: for
//! k = 0 and c != 1, |ln c| <= 2.002 |y| and |r| <= 1.003 |y|; for k != 0, |y| >= 0.3156,
//! |k ln 2| <= 2.197 |y| and |ln c| <= 1.188 |y|):
//! * k = 0, c = 1 (u in [1 - 2^-9, 1 + 2^-8)): y = p; fit 0.57u, evaluation 1.01u, and for
//!   log1p the one rounding of r (below) 1u: < 2.6u = 2^-51.6;
//! * k = 0, c != 1: y = NEG_LOGC_HI + p; table entry 2.002u, p (evaluation and fit) 1.6u,
//!   the sum 1u, and for log1p r's two roundings 2.006u: < 6.7u = 2^-50.26;
//! * k != 0: table entry 1.19u, the two sums 2.02u, the rest (p, r, LN2_LO) < 0.05u:
//!   < 3.3u = 2^-51.2.
//!
//! FAST_REL_ERR = LOG1P_FAST_F64_REL_ERR = 2^-50 (on 400 000 random arguments per regime the
//! largest error observed against MPFR is 2^-51.06; the unit test `fast_error_bound` checks
//! the bound against the accurate path). `Log::fast` does the reduction on the f32 bits
//! (32-bit integer lanes), so subnormal inputs are outside its domain and take the
//! accurate path.
//!
//! `log1p_fast_f64(t)`: `u + e = 1 + t` exactly (TwoSum); z of up to 53 bits is split into
//! zh (top 33 bits) and zl, `r = ((zh c - 1) + zl c) + e 2^-k c`. When c = 1 the first sum is
//! z - 1 exactly and r gets one rounding (u relative); otherwise two (2u |r|, plus 2^-84
//! absolute from zl c, against |y| >= 2^-9). For tiny t (u = 1) r = t exactly, so
//! ln(1 + t) ~ t keeps full relative accuracy down to the subnormals. Domain of the bound:
//! -1 < t <= 2^1000 (the scale 2^-k must be a normal f64).
//!
//! # Accurate path (double-double)
//! The same reduction with the argument as an exact sum `a + b + c0` (log: x; log1p: TwoSum(1,
//! t.hi) + t.lo): `r = (a' c_i - 1) + b' c_i + c0' c_i` (primes: scaled by 2^-k) using
//! Dekker's exact product, as a double-double (relative error <= 5u^2, u = 2^-53).
//! log1p(r) by its Taylor series to r^13 (remainder < 2^-107 |r| for |r| <= 2^-8): terms
//! r^8..r^13 in f64 Horner (they are < 2^-56 |r|, so f64 accuracy is enough), then a
//! double-double Horner for k = 7..1 and the final product by r: about 15u^2 relative.
//! Assembly `(k LN2_DD + NEG_LOGC) + p` in double-double; with the ratios above the total is
//! <= 26 u^2 < 2^-101.3 relative to the result, everywhere (including next to x = 1, where
//! k = 0 and c = 1 make the result just p). The f32 functions return `round_odd` of it.
//!
//! # log10
//! log10 x = ln x * (1 / ln 10), on the paths of `log`:
//! * fast: `Log::fast(x) * INV_LN10`, with INV_LN10 = 1/ln 10 rounded to nearest f64
//!   (relative error 2^-55.13, printed by the generator) and the product rounded once (in
//!   both multiply-add flavours: a plain product), 2^-53; no underflow or overflow, as
//!   2^-27 < |y| < 39 on the domain (y = 0 at x = 1). With Log's FAST_ERR = 2^-50: (1 + 2^-50)(1 + 2^-55.13)
//!   (1 + 2^-53) - 1 < 2^-50 + 2^-53 + 2^-55 = LOG10_FAST_ERR (= 1.15625 2^-50; the cross
//!   terms, below 2^-102, fit in the 2^-58.5 left between 2^-55.13 and 2^-55). A
//!   double-double factor applied as madd(y, hi, y lo) would save the constant's 2^-55.13
//!   in the fused flavour but cost a second rounding (2^-53) in the unfused one, and the
//!   bound covers both: one f64 factor is the smaller bound. The domain is Log's (positive
//!   normal x; subnormals take the accurate path). log10(1): Log::fast(1) = 0 exactly, and
//!   0 * INV_LN10 = +0. Normal results (`fast_result_normal`): for normal x != 1,
//!   |ln x| > 2^-25 (Log), so |log10 x| > 2^-25 / ln 10 > 2^-27 and the fast value, within
//!   2^-49.7 of it, is far above 2^-126.
//! * accurate: `log_dd(x)` (<= 26 u^2) times INV_LN10_DD (relative error 2^-109.85) by the
//!   double-double product (7 u^2): <= 26 u^2 + 7 u^2 + 0.07 u^2 + cross terms < 34 u^2
//!   < 2^-100.9 relative (measured against MPFR: 2^-104.1), then `round_odd`. Exact
//!   results: log10(10^k) = k for k = 0..10 (10^k exact in f32; no other positive f32 has a
//!   rational log10, so no exact result is a rounding midpoint): k is representable, so
//!   both the rounding test and the accurate path's rounding give k exactly (the tests
//!   check every k); log10(1) = +0 exactly on both paths (log_dd(1) = 0).
//!
//! # Exceptional inputs
//! log and log10: NaN -> NaN, x < 0 (including -inf) -> NaN, +-0 -> -inf, +inf -> +inf,
//! 1 -> +0; subnormal inputs are exact f64 normals here (no flush).
//! log1p: NaN -> NaN, x < -1 (including -inf) -> NaN, -1 -> -inf, +-0 -> +-0 (sign kept),
//! +inf -> +inf. The fast domain excludes zeros (for the sign of -0), NaN and infinities.

use super::dd::{DD, two_prod, two_sum};
use super::madd::madd;
use super::unary::CrUnary;

/// Relative error bound of [`log1p_fast_f64`] on -1 < t <= 2^1000, before any rounding by
/// the caller (derivation in the module header): 2^-50.
#[allow(dead_code)] // used by the softplus family
#[doc(hidden)]
pub const LOG1P_FAST_F64_REL_ERR: f64 = f64::from_bits(0x3CD0_0000_0000_0000); // 2^-50

/// Relative error bound of the f32 fast paths (the same derivation): 2^-50.
const FAST_ERR: f64 = f64::from_bits(0x3CD0_0000_0000_0000); // 2^-50

/// Relative error bound of `Log10::fast` (header, "log10"): 2^-50 + 2^-53 + 2^-55 (Log's
/// bound, the rounding of 1 / ln 10 and that of the product).
const LOG10_FAST_ERR: f64 = f64::from_bits(0x3CD2_8000_0000_0000); // 1.15625 * 2^-50

/// 2^n for -1022 <= n <= 1023, from its bits.
#[inline(always)]
fn pow2i(n: i64) -> f64 {
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// Split a positive finite f64 into (k, i, z) with u = 2^k z (see the header). Total: any
/// bit pattern gives some (k, i, z) without panicking; meaningful for positive normals.
#[inline(always)]
fn reduce(u: f64) -> (i64, usize, f64) {
    let bits = u.to_bits();
    let tmp = bits.wrapping_sub(OFF);
    let k = (tmp as i64) >> 52;
    let i = ((tmp >> 45) & 127) as usize;
    let z = f64::from_bits(bits.wrapping_sub((k as u64) << 52));
    (k, i, z)
}

/// log1p(r) for |r| <= 2^-8, f64, relative error 2^-54.8 + evaluation (header).
#[inline(always)]
fn poly_fast<const FUSED: bool>(r: f64) -> f64 {
    let m = madd::<FUSED>;
    let r2 = r * r;
    let q = m(r2, m(r2, P[4], m(r, P[3], P[2])), m(r, P[1], P[0]));
    m(r2, q, r)
}

/// k ln 2 - ln c_i + p with the fast-path rounding pattern (header).
#[inline(always)]
fn assemble_fast<const FUSED: bool>(k: i64, i: usize, p: f64) -> f64 {
    let kf = k as f64;
    // k LN2_HI is exact, so the first sum rounds once in either flavour.
    madd::<FUSED>(kf, LN2_HI, NEG_LOGC_HI[i]) + madd::<FUSED>(kf, LN2_LO, p)
}

/// ln(1 + t), branch-free and total, relative error <= [`LOG1P_FAST_F64_REL_ERR`] for
/// -1 < t <= 2^1000 (in particular for every t in [0, 2^1000], tiny t included: for
/// |t| < 2^-54 the result is t(1 - t/2) to full relative accuracy). Outside that domain
/// (t <= -1, t > 2^1000, NaN) the value is meaningless but nothing panics.
#[inline(always)]
#[doc(hidden)]
pub fn log1p_fast_f64<const FUSED: bool>(t: f64) -> f64 {
    let (u, e) = two_sum(1.0, t);
    let (k, i, z) = reduce(u);
    let c = INVC[i];
    // zh: the top 33 bits of z, so zh * c (20-bit c) is exact; zl = z - zh exactly.
    let zh = f64::from_bits(z.to_bits() & 0xFFFF_FFFF_FFF0_0000);
    let zl = z - zh;
    // The scale 2^-k, built from bits; k in [-53, 1001] on the domain.
    let s = f64::from_bits(((1023 - k) as u64) << 52);
    let r = ((zh * c - 1.0) + zl * c) + e * s * c;
    assemble_fast::<FUSED>(k, i, poly_fast::<FUSED>(r))
}

/// 2^-k x for a k in [-1100, 1100], in two exact steps (each factor is a normal f64).
#[inline(always)]
fn scale_neg(x: f64, k: i64) -> f64 {
    let k1 = k / 2;
    x * pow2i(-k1) * pow2i(-(k - k1))
}

/// ln(a + b + c0) as a double-double, for a positive normal finite a and |b|, |c0| small
/// against a (|b| <= ulp(a), |c0| <= 2^-50 a); relative error <= 2^-100 (header).
fn log3(a: f64, b: f64, c0: f64) -> DD {
    let (k, i, z) = reduce(a);
    let c = INVC[i];
    // r = (a + b + c0) 2^-k c - 1 as a double-double: z c exactly by Dekker's product,
    // z c - 1 exact (Sterbenz), b 2^-k c exactly, c0 2^-k c rounded (negligible).
    let (ph, pl) = two_prod(z, c);
    let (r0, r1) = two_sum(ph - 1.0, pl);
    let (b0, b1) = two_prod(scale_neg(b, k), c);
    let r = DD::new(r0, r1)
        .add(DD::new(b0, b1))
        .add_f64(scale_neg(c0, k) * c);
    // log1p(r): Taylor series, terms r^8..r^13 in f64, the rest in double-double.
    let rh = r.hi;
    let t = TAYLOR_F64;
    let h = t[0] + rh * (t[1] + rh * (t[2] + rh * (t[3] + rh * (t[4] + rh * t[5]))));
    let mut s = DD::from_f64(h);
    let mut j = 7;
    while j > 0 {
        s = s.mul(r).add(TAYLOR_DD[j - 1]);
        j -= 1;
    }
    let p = s.mul(r);
    let neg_logc = DD::new(NEG_LOGC_HI[i], NEG_LOGC_LO[i]);
    LN2_DD.mul_f64(k as f64).add(neg_logc).add(p)
}

/// ln(x) as a double-double for a finite x with x.hi a positive normal f64 (x.hi >= 2^-1022)
/// and |x.lo| <= ulp(x.hi): relative error <= 2^-100 everywhere, near x = 1 included (there
/// the result is computed from r = x - 1 exactly, without cancellation). Exact for x = 1.
#[doc(hidden)]
pub fn log_dd(x: DD) -> DD {
    log3(x.hi, x.lo, 0.0)
}

/// ln(1 + t) as a double-double for t > -1 with 1 + t.hi > 0 (t finite, |t.lo| <=
/// ulp(t.hi)), relative error <= 2^-100, tiny t included (for |t| >= 2^-900, below which
/// underflow in the error terms limits it to an absolute 2^-1000 or so). Exact (0) for t = 0.
#[doc(hidden)]
pub fn log1p_dd(t: DD) -> DD {
    let (a, b) = two_sum(1.0, t.hi);
    log3(a, b, t.lo)
}

/// log10(x) as a double-double, on log_dd's domain: relative error < 34 u^2 (header,
/// "log10"). Exact (0) for x = 1.
fn log10_dd(x: DD) -> DD {
    log_dd(x).mul(INV_LN10_DD)
}

/// The result of log and log10 at their exceptional inputs (header): NaN for NaN and
/// x < 0, -inf for +-0, +inf for +inf; `None` for positive finite x.
#[inline(always)]
fn log_special(x: f32) -> Option<f64> {
    if x.is_nan() || x < 0.0 {
        Some(f64::NAN)
    } else if x == 0.0 {
        Some(f64::NEG_INFINITY)
    } else if x == f32::INFINITY {
        Some(f64::INFINITY)
    } else {
        None
    }
}

/// Natural logarithm.
#[doc(hidden)]
pub struct Log;

impl CrUnary for Log {
    const FAST_REL_ERR: f64 = FAST_ERR;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        // Subnormals (rare) take the accurate path: the fast reduction reads f32 exponents.
        (f32::MIN_POSITIVE..f32::INFINITY).contains(&x)
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        // The reduction of `reduce` done on the f32 bits (half-width integer lanes); valid
        // for normal x, which is why subnormals are outside the fast domain.
        let bits = x.to_bits();
        let tmp = bits.wrapping_sub(OFF_F32);
        let k = (tmp as i32) >> 23;
        let i = ((tmp >> 16) & 127) as usize;
        let z = f32::from_bits(bits.wrapping_sub((k as u32) << 23)) as f64;
        // z has 24 bits and c 20: the product and r are exact.
        let r = z * INVC[i] - 1.0;
        assemble_fast::<FUSED>(k as i64, i, poly_fast::<FUSED>(r))
    }

    /// Never subnormal: on normal x != 1, |ln x| >= |ln(1 - 2^-24)| > 2^-25 (1's f32
    /// neighbours are the closest), and fast(1) = 0 exactly (k = 0, c = 1, r = 0).
    #[inline(always)]
    fn fast_result_normal(_x: f32) -> Option<bool> {
        Some(true)
    }

    fn accurate(x: f32) -> f64 {
        match log_special(x) {
            Some(y) => y,
            None => super::dd::round_odd(log_dd(DD::from_f64(x as f64))),
        }
    }
}

/// ln(1 + x).
#[doc(hidden)]
pub struct Log1p;

impl CrUnary for Log1p {
    const FAST_REL_ERR: f64 = FAST_ERR;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        // Zeros go to the accurate path for the sign of -0.
        x > -1.0 && x < f32::INFINITY && x != 0.0
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        log1p_fast_f64::<FUSED>(x as f64)
    }

    fn accurate(x: f32) -> f64 {
        if x.is_nan() || x < -1.0 {
            return f64::NAN;
        }
        if x == -1.0 {
            return f64::NEG_INFINITY;
        }
        if x == 0.0 || x == f32::INFINITY {
            return x as f64;
        }
        super::dd::round_odd(log1p_dd(DD::from_f64(x as f64)))
    }
}

/// Base-10 logarithm: ln x times 1 / ln 10 (header, "log10").
#[doc(hidden)]
pub struct Log10;

impl CrUnary for Log10 {
    const FAST_REL_ERR: f64 = LOG10_FAST_ERR;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        Log::in_fast_domain(x)
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        Log::fast::<FUSED>(x) * INV_LN10
    }

    /// Never subnormal: on normal x != 1, |log10 x| > 2^-25 / ln 10 > 2^-27, and
    /// fast(1) = 0 * INV_LN10 = +0 exactly.
    #[inline(always)]
    fn fast_result_normal(_x: f32) -> Option<bool> {
        Some(true)
    }

    fn accurate(x: f32) -> f64 {
        match log_special(x) {
            Some(y) => y,
            None => super::dd::round_odd(log10_dd(DD::from_f64(x as f64))),
        }
    }
}

// ---- generated by tools/gen_log_coeffs.py ----
// max |r| over the 128 intervals: 2^-8.0000 = 0.00390625
// fast polynomial relative error on |r| <= RMAX (exact arithmetic): 2^-54.81
// k = 0, c != 1: max |ln c|/|y| = 2.0019, max |r|/|y| = 1.0029; k != 0: |y| >= 0.3156, |k ln2|/|y| <= 2.1962, |ln c|/|y| <= 1.1872
// 1/ln 10: relative error of INV_LN10 2^-55.13, of INV_LN10_DD 2^-109.85

/// Bit pattern subtracted from an f64 to split it into 2^k and z (see the header).
const OFF: u64 = 0x3FE5F00000000000;
/// OFF (0.685546875) as an f32 bit pattern, for the f32 reduction of `Log::fast`.
const OFF_F32: u32 = 0x3F2F8000;

/// ln 2 rounded to 42 bits, so that k * LN2_HI is exact for |k| < 2^11.
const LN2_HI: f64 = f64::from_bits(0x3FE62E42FEFA3800); // 0.6931471805598903
/// ln 2 - LN2_HI, rounded to nearest.
const LN2_LO: f64 = f64::from_bits(0x3D2EF35793C76730); // 5.497923018708371e-14
/// ln 2 as a double-double.
const LN2_DD: DD = DD::new(
    f64::from_bits(0x3FE62E42FEFA39EF),
    f64::from_bits(0x3C7ABC9E3B39803F),
); // 0.6931471805599453 + 2.3190468138462996e-17
/// 1 / ln 10 rounded to nearest (the log10 fast path's factor).
const INV_LN10: f64 = f64::from_bits(0x3FDBCB7B1526E50E); // 0.4342944819032518
/// 1 / ln 10 as a double-double (the log10 accurate path's factor).
const INV_LN10_DD: DD = DD::new(
    f64::from_bits(0x3FDBCB7B1526E50E),
    f64::from_bits(0x3C695355BAAAFAD3),
); // 0.4342944819032518 + 1.098319650216765e-17

/// Fast polynomial: log1p(r) ~ r + r^2 * (P[0] + P[1] r + ... + P[4] r^4).
const P: [f64; 5] = [
    f64::from_bits(0xBFE0000000000000), // -0.5
    f64::from_bits(0x3FD55555555279E5), // 0.33333333332293896
    f64::from_bits(0xBFCFFFFFFFFAFFFB), // -0.24999999999090491
    f64::from_bits(0x3FC999B07519179F), // 0.20000272481609913
    f64::from_bits(0xBFC5556955655562), // -0.16666905088156186
];

/// Taylor coefficients (-1)^(k+1) / k, k = 1..7, as double-doubles (index k - 1).
const TAYLOR_DD: [DD; 7] = [
    DD::new(
        f64::from_bits(0x3FF0000000000000),
        f64::from_bits(0x0000000000000000),
    ), // 1.0 + 0.0
    DD::new(
        f64::from_bits(0xBFE0000000000000),
        f64::from_bits(0x0000000000000000),
    ), // -0.5 + 0.0
    DD::new(
        f64::from_bits(0x3FD5555555555555),
        f64::from_bits(0x3C75555555555555),
    ), // 0.3333333333333333 + 1.850371707708594e-17
    DD::new(
        f64::from_bits(0xBFD0000000000000),
        f64::from_bits(0x0000000000000000),
    ), // -0.25 + 0.0
    DD::new(
        f64::from_bits(0x3FC999999999999A),
        f64::from_bits(0xBC6999999999999A),
    ), // 0.2 + -1.1102230246251566e-17
    DD::new(
        f64::from_bits(0xBFC5555555555555),
        f64::from_bits(0xBC65555555555555),
    ), // -0.16666666666666666 + -9.25185853854297e-18
    DD::new(
        f64::from_bits(0x3FC2492492492492),
        f64::from_bits(0x3C62492492492492),
    ), // 0.14285714285714285 + 7.93016446160826e-18
];
/// Taylor coefficients (-1)^(k+1) / k, k = 8..13, as f64 (index k - 8).
const TAYLOR_F64: [f64; 6] = [
    f64::from_bits(0xBFC0000000000000), // -0.125
    f64::from_bits(0x3FBC71C71C71C71C), // 0.1111111111111111
    f64::from_bits(0xBFB999999999999A), // -0.1
    f64::from_bits(0x3FB745D1745D1746), // 0.09090909090909091
    f64::from_bits(0xBFB5555555555555), // -0.08333333333333333
    f64::from_bits(0x3FB3B13B13B13B14), // 0.07692307692307693
];

/// c_i ~ 1 / (middle of interval i), 20 significant bits; c_80 = 1.
static INVC: [f64; 128] = [
    f64::from_bits(0x3FF745D200000000), // 1.4545459747314453
    f64::from_bits(0x3FF7242800000000), // 1.4463272094726562
    f64::from_bits(0x3FF702E000000000), // 1.438201904296875
    f64::from_bits(0x3FF6E1F800000000), // 1.4301681518554688
    f64::from_bits(0x3FF6C16C00000000), // 1.4222221374511719
    f64::from_bits(0x3FF6A13C00000000), // 1.4143638610839844
    f64::from_bits(0x3FF6816800000000), // 1.4065933227539062
    f64::from_bits(0x3FF661EC00000000), // 1.3989067077636719
    f64::from_bits(0x3FF642C800000000), // 1.3913040161132812
    f64::from_bits(0x3FF623FA00000000), // 1.3837833404541016
    f64::from_bits(0x3FF6058200000000), // 1.3763446807861328
    f64::from_bits(0x3FF5E75C00000000), // 1.3689842224121094
    f64::from_bits(0x3FF5C98800000000), // 1.3617019653320312
    f64::from_bits(0x3FF5AC0600000000), // 1.3544979095458984
    f64::from_bits(0x3FF58ED200000000), // 1.3473682403564453
    f64::from_bits(0x3FF571EE00000000), // 1.3403148651123047
    f64::from_bits(0x3FF5555600000000), // 1.333333969116211
    f64::from_bits(0x3FF5390A00000000), // 1.326425552368164
    f64::from_bits(0x3FF51D0800000000), // 1.3195877075195312
    f64::from_bits(0x3FF5015000000000), // 1.3128204345703125
    f64::from_bits(0x3FF4E5E000000000), // 1.306121826171875
    f64::from_bits(0x3FF4CAB800000000), // 1.2994918823242188
    f64::from_bits(0x3FF4AFD600000000), // 1.292928695678711
    f64::from_bits(0x3FF4953A00000000), // 1.2864322662353516
    f64::from_bits(0x3FF47AE200000000), // 1.2800006866455078
    f64::from_bits(0x3FF460CC00000000), // 1.2736320495605469
    f64::from_bits(0x3FF446F800000000), // 1.2673263549804688
    f64::from_bits(0x3FF42D6600000000), // 1.2610836029052734
    f64::from_bits(0x3FF4141400000000), // 1.2549018859863281
    f64::from_bits(0x3FF3FB0200000000), // 1.2487812042236328
    f64::from_bits(0x3FF3E22C00000000), // 1.2427177429199219
    f64::from_bits(0x3FF3C99600000000), // 1.236715316772461
    f64::from_bits(0x3FF3B13C00000000), // 1.2307701110839844
    f64::from_bits(0x3FF3991C00000000), // 1.2248802185058594
    f64::from_bits(0x3FF3813800000000), // 1.2190475463867188
    f64::from_bits(0x3FF3698E00000000), // 1.2132701873779297
    f64::from_bits(0x3FF3521C00000000), // 1.2075462341308594
    f64::from_bits(0x3FF33AE400000000), // 1.2018775939941406
    f64::from_bits(0x3FF323E400000000), // 1.1962623596191406
    f64::from_bits(0x3FF30D1A00000000), // 1.1906986236572266
    f64::from_bits(0x3FF2F68400000000), // 1.1851844787597656
    f64::from_bits(0x3FF2E02600000000), // 1.1797237396240234
    f64::from_bits(0x3FF2C9FC00000000), // 1.1743125915527344
    f64::from_bits(0x3FF2B40400000000), // 1.1689491271972656
    f64::from_bits(0x3FF29E4200000000), // 1.1636371612548828
    f64::from_bits(0x3FF288B000000000), // 1.1583709716796875
    f64::from_bits(0x3FF2735000000000), // 1.1531524658203125
    f64::from_bits(0x3FF25E2200000000), // 1.1479816436767578
    f64::from_bits(0x3FF2492400000000), // 1.1428565979003906
    f64::from_bits(0x3FF2345600000000), // 1.137777328491211
    f64::from_bits(0x3FF21FB800000000), // 1.1327438354492188
    f64::from_bits(0x3FF20B4800000000), // 1.1277542114257812
    f64::from_bits(0x3FF1F70400000000), // 1.1228065490722656
    f64::from_bits(0x3FF1E2F000000000), // 1.1179046630859375
    f64::from_bits(0x3FF1CF0600000000), // 1.1130428314208984
    f64::from_bits(0x3FF1BB4A00000000), // 1.108224868774414
    f64::from_bits(0x3FF1A7BA00000000), // 1.1034488677978516
    f64::from_bits(0x3FF1945400000000), // 1.0987129211425781
    f64::from_bits(0x3FF1811800000000), // 1.0940170288085938
    f64::from_bits(0x3FF16E0600000000), // 1.0893611907958984
    f64::from_bits(0x3FF15B1E00000000), // 1.0847454071044922
    f64::from_bits(0x3FF1486000000000), // 1.080169677734375
    f64::from_bits(0x3FF135C800000000), // 1.0756301879882812
    f64::from_bits(0x3FF1235800000000), // 1.0711288452148438
    f64::from_bits(0x3FF1111200000000), // 1.0666675567626953
    f64::from_bits(0x3FF0FEF000000000), // 1.0622406005859375
    f64::from_bits(0x3FF0ECF600000000), // 1.057851791381836
    f64::from_bits(0x3FF0DB2000000000), // 1.053497314453125
    f64::from_bits(0x3FF0C97200000000), // 1.0491809844970703
    f64::from_bits(0x3FF0B7E600000000), // 1.0448970794677734
    f64::from_bits(0x3FF0A68200000000), // 1.0406513214111328
    f64::from_bits(0x3FF0954000000000), // 1.03643798828125
    f64::from_bits(0x3FF0842200000000), // 1.0322589874267578
    f64::from_bits(0x3FF0732600000000), // 1.0281124114990234
    f64::from_bits(0x3FF0624E00000000), // 1.0240001678466797
    f64::from_bits(0x3FF0519800000000), // 1.0199203491210938
    f64::from_bits(0x3FF0410400000000), // 1.0158729553222656
    f64::from_bits(0x3FF0309200000000), // 1.0118579864501953
    f64::from_bits(0x3FF0204000000000), // 1.00787353515625
    f64::from_bits(0x3FF0101000000000), // 1.0039215087890625
    f64::from_bits(0x3FF0000000000000), // 1.0
    f64::from_bits(0x3FEFC08000000000), // 0.99224853515625
    f64::from_bits(0x3FEF81F800000000), // 0.9846153259277344
    f64::from_bits(0x3FEF446600000000), // 0.9770994186401367
    f64::from_bits(0x3FEF07C200000000), // 0.9696969985961914
    f64::from_bits(0x3FEECC0800000000), // 0.9624061584472656
    f64::from_bits(0x3FEE913200000000), // 0.9552240371704102
    f64::from_bits(0x3FEE573A00000000), // 0.9481477737426758
    f64::from_bits(0x3FEE1E1E00000000), // 0.9411764144897461
    f64::from_bits(0x3FEDE5D600000000), // 0.9343061447143555
    f64::from_bits(0x3FEDAE6000000000), // 0.9275360107421875
    f64::from_bits(0x3FED77B600000000), // 0.920863151550293
    f64::from_bits(0x3FED41D400000000), // 0.9142856597900391
    f64::from_bits(0x3FED0CB600000000), // 0.907801628112793
    f64::from_bits(0x3FECD85600000000), // 0.9014081954956055
    f64::from_bits(0x3FECA4B400000000), // 0.8951053619384766
    f64::from_bits(0x3FEC71C800000000), // 0.8888893127441406
    f64::from_bits(0x3FEC3F9000000000), // 0.8827590942382812
    f64::from_bits(0x3FEC0E0800000000), // 0.8767127990722656
    f64::from_bits(0x3FEBDD2C00000000), // 0.8707485198974609
    f64::from_bits(0x3FEBACFA00000000), // 0.8648653030395508
    f64::from_bits(0x3FEB7D6C00000000), // 0.8590602874755859
    f64::from_bits(0x3FEB4E8200000000), // 0.8533334732055664
    f64::from_bits(0x3FEB203600000000), // 0.847681999206543
    f64::from_bits(0x3FEAF28600000000), // 0.8421049118041992
    f64::from_bits(0x3FEAC57000000000), // 0.8366012573242188
    f64::from_bits(0x3FEA98F000000000), // 0.8311691284179688
    f64::from_bits(0x3FEA6D0200000000), // 0.8258066177368164
    f64::from_bits(0x3FEA41A400000000), // 0.8205127716064453
    f64::from_bits(0x3FEA16D400000000), // 0.8152866363525391
    f64::from_bits(0x3FE9EC8E00000000), // 0.8101263046264648
    f64::from_bits(0x3FE9C2D200000000), // 0.8050317764282227
    f64::from_bits(0x3FE9999A00000000), // 0.8000001907348633
    f64::from_bits(0x3FE970E400000000), // 0.7950305938720703
    f64::from_bits(0x3FE948B000000000), // 0.7901229858398438
    f64::from_bits(0x3FE920FC00000000), // 0.7852764129638672
    f64::from_bits(0x3FE8F9C200000000), // 0.7804880142211914
    f64::from_bits(0x3FE8D30200000000), // 0.7757577896118164
    f64::from_bits(0x3FE8ACBA00000000), // 0.7710847854614258
    f64::from_bits(0x3FE886E600000000), // 0.7664670944213867
    f64::from_bits(0x3FE8618600000000), // 0.7619047164916992
    f64::from_bits(0x3FE83C9800000000), // 0.7573966979980469
    f64::from_bits(0x3FE8181800000000), // 0.7529411315917969
    f64::from_bits(0x3FE7F40600000000), // 0.7485380172729492
    f64::from_bits(0x3FE7D06000000000), // 0.7441864013671875
    f64::from_bits(0x3FE7AD2200000000), // 0.7398843765258789
    f64::from_bits(0x3FE78A4C00000000), // 0.7356319427490234
    f64::from_bits(0x3FE767DC00000000), // 0.7314281463623047
];

/// -log(c_i) rounded to nearest f64 (the high part of the double-double).
static NEG_LOGC_HI: [f64; 128] = [
    f64::from_bits(0xBFD7FAFBBBD8109C), // -0.3746938070692154
    f64::from_bits(0xBFD79E25087CF776), // -0.36902738408013336
    f64::from_bits(0xBFD741D776C679B1), // -0.3633936557688698
    f64::from_bits(0xBFD6E61086AF142A), // -0.35779202606892346
    f64::from_bits(0xBFD68AC7FE9C69F4), // -0.35222053398470554
    f64::from_bits(0xBFD63000BB3AA197), // -0.34667986187062055
    f64::from_bits(0xBFD5D5BD9F595F10), // -0.3411706977981206
    f64::from_bits(0xBFD57BF623C8CF29), // -0.3356910085160388
    f64::from_bits(0xBFD522AD0738A1D8), // -0.33024144845196934
    f64::from_bits(0xBFD4C9DF4617289F), // -0.32482129902622064
    f64::from_bits(0xBFD4718F9271BD89), // -0.3194312028999425
    f64::from_bits(0xBFD419B4F3D5E775), // -0.3140690213400526
    f64::from_bits(0xBFD3C251F7333104), // -0.30873536244031663
    f64::from_bits(0xBFD36B692EBE0B2E), // -0.30343083920176894
    f64::from_bits(0xBFD314F151D35C42), // -0.2981532382086166
    f64::from_bits(0xBFD2BEF2C4DC88EB), // -0.29290456032516826
    f64::from_bits(0xBFD269641134D392), // -0.2876825492888254
    f64::from_bits(0xBFD21447950EAF88), // -0.282487769664606
    f64::from_bits(0xBFD1BF99A35A6B75), // -0.27731934502087735
    f64::from_bits(0xBFD16B5C8BACFB53), // -0.2721778263111691
    f64::from_bits(0xBFD1178C8227DC7C), // -0.26706230841177336
    f64::from_bits(0xBFD0C42BC7615D9B), // -0.2619733283113079
    f64::from_bits(0xBFD07136704D50E0), // -0.2569099518489235
    f64::from_bits(0xBFD01EAEAE26C654), // -0.25187270171145326
    f64::from_bits(0xBFCF9920ECB39F39), // -0.24686061437318488
    f64::from_bits(0xBFCEF5AF44DCFE02), // -0.24187270033324643
    f64::from_bits(0xBFCE530C7FE709D2), // -0.23690944905508943
    f64::from_bits(0xBFCDB13CC0D4885F), // -0.23197135367905994
    f64::from_bits(0xBFCD103772655E3B), // -0.22705739103069952
    f64::from_bits(0xBFCC700096EFF848), // -0.2221680390356957
    f64::from_bits(0xBFCBD082783BC21D), // -0.2173007094456957
    f64::from_bits(0xBFCB31DAA75BC8E4), // -0.2124589268856375
    f64::from_bits(0xBFCA93F33C8AB5E3), // -0.207640080033726
    f64::from_bits(0xBFC9F6C2E7089520), // -0.20284305840429173
    f64::from_bits(0xBFC95A5A5CF7013F), // -0.19806985415744724
    f64::from_bits(0xBFC8BEB03B38FE73), // -0.19331934825639827
    f64::from_bits(0xBFC823BAE5517982), // -0.18859039494686775
    f64::from_bits(0xBFC7898B254446CF), // -0.1838849956480346
    f64::from_bits(0xBFC6F0174B75542C), // -0.17920199570167605
    f64::from_bits(0xBFC657556E8BE681), // -0.17454021356370578
    f64::from_bits(0xBFC5BF3B6B5424B2), // -0.16989844074877208
    f64::from_bits(0xBFC527E794A1B2B4), // -0.1652802921047588
    f64::from_bits(0xBFC4914243339ED1), // -0.16068294793443852
    f64::from_bits(0xBFC3FB4105991368), // -0.1561051633199455
    f64::from_bits(0xBFC3660270156F06), // -0.15155058358038093
    f64::from_bits(0xBFC2D1608C8680FA), // -0.1470146833571631
    f64::from_bits(0xBFC23D6C2A49A902), // -0.14249946656065765
    f64::from_bits(0xBFC1AA286E23EDC9), // -0.13800530794092783
    f64::from_bits(0xBFC1178A8227D47C), // -0.13353091578725074
    f64::from_bits(0xBFC08595659E2F0E), // -0.12907664739429275
    f64::from_bits(0xBFBFE89839DBBCE6), // -0.12464286243970299
    f64::from_bits(0xBFBEC7470309B600), // -0.12022823166054053
    f64::from_bits(0xBFBDA72063842E22), // -0.11583139829252123
    f64::from_bits(0xBFBC886301BC0EA3), // -0.11145609657620041
    f64::from_bits(0xBFBB6ABECDAD2B94), // -0.10709755441091168
    f64::from_bits(0xBFBA4E72A0B1B5A6), // -0.10275951789090829
    f64::from_bits(0xBFB933675D592109), // -0.09844060925491162
    f64::from_bits(0xBFB819856F40C9A8), // -0.09413942304744316
    f64::from_bits(0xBFB700D20AEAC061), // -0.0898562695172145
    f64::from_bits(0xBFB5E9526D9772C9), // -0.08559146094871574
    f64::from_bits(0xBFB4D30BDD206F8C), // -0.0813453116283524
    f64::from_bits(0xBFB3BE03A7D18C64), // -0.07711813780910998
    f64::from_bits(0xBFB2AA03A4471725), // -0.07290671120344124
    f64::from_bits(0xBFB1972E5145FA47), // -0.0687130878850236
    f64::from_bits(0xBFB085A6B59DD807), // -0.06453935560224987
    f64::from_bits(0xBFAEEA2FC006B77C), // -0.06038045138426093
    f64::from_bits(0xBFACCB854DDD663C), // -0.05624023986338186
    f64::from_bits(0xBFAAAEDED0FAACFC), // -0.05211540509238863
    f64::from_bits(0xBFA894BF149F4503), // -0.048009845034934905
    f64::from_bits(0xBFA67C78B2D3F3D4), // -0.043918392018873625
    f64::from_bits(0xBFA466CC542D0A5A), // -0.03984678771532364
    f64::from_bits(0xBFA2530B2F8C883F), // -0.03578982310706679
    f64::from_bits(0xBFA0417B89E66344), // -0.03174959238385225
    f64::from_bits(0xBF9C63D06C14AA2A), // -0.027724510761951184
    f64::from_bits(0xBF98493028C8BB9F), // -0.023716690530075742
    f64::from_bits(0xBF9432AB25980C41), // -0.019724535150100534
    f64::from_bits(0xBF90205258935647), // -0.015748297363492616
    f64::from_bits(0xBF88246DA3884D1A), // -0.011788231423486329
    f64::from_bits(0xBF800FD57587DE71), // -0.007842700623754003
    f64::from_bits(0xBF7007F559588335), // -0.003913839716489777
    f64::from_bits(0x0000000000000000), // 0.0
    f64::from_bits(0x3F7FDFAA6B126789), // 0.007781663605010433
    f64::from_bits(0x3F8FC0B0B0FC07E4), // 0.015504246140611806
    f64::from_bits(0x3F97B90E87D5C4A3), // 0.023166873017036804
    f64::from_bits(0x3F9F82990E783380), // 0.030771628864431744
    f64::from_bits(0x3FA39E82B9FEC3A0), // 0.038318715290535765
    f64::from_bits(0x3FA774537632E48C), // 0.0458093721185345
    f64::from_bits(0x3FAB42EAB1199DA3), // 0.05324490939966189
    f64::from_bits(0x3FAF0A32C01163A6), // 0.06062468142108139
    f64::from_bits(0x3FB1653E8EA397F3), // 0.06795111639402744
    f64::from_bits(0x3FB341DB961BD9D1), // 0.07522365965619505
    f64::from_bits(0x3FB51B0A1F061C61), // 0.082443840574443
    f64::from_bits(0x3FB6F0D38AE56BCC), // 0.08961221829433369
    f64::from_bits(0x3FB8C341F631A2A3), // 0.09672939549057928
    f64::from_bits(0x3FBA9271FA4AE0AB), // 0.10379707680374632
    f64::from_bits(0x3FBC5E4BCF5BED8B), // 0.11081384479978433
    f64::from_bits(0x3FBE26FF6E2B12E6), // 0.11778255881933894
    f64::from_bits(0x3FBFEC8831DC133B), // 0.12470294205929815
    f64::from_bits(0x3FC0D779FCD0A299), // 0.13157582134706017
    f64::from_bits(0x3FC1B728B52F6C24), // 0.13840206953941092
    f64::from_bits(0x3FC2954EB8200733), // 0.14518150320514564
    f64::from_bits(0x3FC371FD401E90B8), // 0.1519161761363017
    f64::from_bits(0x3FC44D2A0CCB7F02), // 0.15860486626387887
    f64::from_bits(0x3FC526E713A1B5A1), // 0.16524971445634853
    f64::from_bits(0x3FC5FF33F0A7A014), // 0.1718506741592597
    f64::from_bits(0x3FC6D6106719D25D), // 0.17840771707746486
    f64::from_bits(0x3FC7AB860210E209), // 0.1849219808662073
    f64::from_bits(0x3FC87F9EB520CBEA), // 0.19139465183397358
    f64::from_bits(0x3FC9525B1CF456F4), // 0.19782580293456642
    f64::from_bits(0x3FCA23BBFFE2B567), // 0.2042155265275298
    f64::from_bits(0x3FCAF3CC2E80C837), // 0.21056511183411583
    f64::from_bits(0x3FCBC283042D98A7), // 0.21687352851876548
    f64::from_bits(0x3FCC8FF5C79A9E22), // 0.22314331289565909
    f64::from_bits(0x3FCD5C264B4FD355), // 0.22937468221030125
    f64::from_bits(0x3FCE270C6E2B0BE6), // 0.2355666673593923
    f64::from_bits(0x3FCEF0AA2BDC665A), // 0.2417195047535639
    f64::from_bits(0x3FCFB9162D5E433B), // 0.24783589568371575
    f64::from_bits(0x3FD040246CB4D2ED), // 0.25391493430951934
    f64::from_bits(0x3FD0A32272739CC5), // 0.25995694329180835
    f64::from_bits(0x3FD1058BD1AE4AE2), // 0.2659635112442357
    f64::from_bits(0x3FD1675CEBABA62E), // 0.2719337750882883
    f64::from_bits(0x3FD1C89761699DC3), // 0.2778681231779638
    f64::from_bits(0x3FD229423BCF7986), // 0.28376823273529117
    f64::from_bits(0x3FD2895A0BDE86A4), // 0.2896332851324621
    f64::from_bits(0x3FD2E8E0BAE12531), // 0.2954637360567914
    f64::from_bits(0x3FD347DDB2987D59), // 0.3012613529299038
    f64::from_bits(0x3FD3A64DB56949B2), // 0.3070253631205119
    f64::from_bits(0x3FD40432F686B3C6), // 0.31275629114935233
];

/// -log(c_i) - NEG_LOGC_HI[i], rounded to nearest f64.
static NEG_LOGC_LO: [f64; 128] = [
    f64::from_bits(0x3C5207024B1E3B75), // 3.9090646399021156e-18
    f64::from_bits(0x3C7C19FF6CA7E0B8), // 2.4374212472671734e-17
    f64::from_bits(0xBC7848F98DAC402D), // -2.1063930012406232e-17
    f64::from_bits(0xBC566EA4CD13827A), // -4.864208464163914e-18
    f64::from_bits(0xBC5A64D5881E9C23), // -5.7232611088361554e-18
    f64::from_bits(0xBC6DA092B9908D60), // -1.2848766687642653e-17
    f64::from_bits(0x3C7654169E2111F8), // 1.9366860648684962e-17
    f64::from_bits(0x3C60950440B31E96), // 7.191337864416282e-18
    f64::from_bits(0x3C68FA945E3D1424), // 1.0832839147343675e-17
    f64::from_bits(0xBC7BB3EB76832C12), // -2.4028358841971196e-17
    f64::from_bits(0xBC397A52BCBD6569), // -1.3811556591596437e-18
    f64::from_bits(0xBC60DD206E29A1B4), // -7.313497072467521e-18
    f64::from_bits(0x3C72AD528FB57971), // 1.6199750773830093e-17
    f64::from_bits(0xBC7B3D88D866E120), // -2.3627254097544458e-17
    f64::from_bits(0x3C73D6D5C9E62A60), // 1.7207762694094932e-17
    f64::from_bits(0xBC5F889B0997D5F7), // -6.837762926204518e-18
    f64::from_bits(0xBC7E19A588085AD7), // -2.610774622391713e-17
    f64::from_bits(0x3C70352D7AE0A4D5), // 1.4057960715292047e-17
    f64::from_bits(0x3C612AE0D979EF79), // 7.445213469759348e-18
    f64::from_bits(0xBC766FB7D35EAFE0), // -1.946047377672556e-17
    f64::from_bits(0x3C60FB8FB4D71BE9), // 7.365055412661054e-18
    f64::from_bits(0xBC514BE4F242D641), // -3.75057237736453e-18
    f64::from_bits(0xBC7CD16457C0DDDE), // -2.4995576233303674e-17
    f64::from_bits(0xBC7DCFBBC5B020AD), // -2.5857318826613008e-17
    f64::from_bits(0xBC6F84B0662C78A7), // -1.3668890948326521e-17
    f64::from_bits(0x3C5088F7331FF106), // 3.5854613479975856e-18
    f64::from_bits(0xBC42128AEC50BAEB), // -1.959417036000431e-18
    f64::from_bits(0xBC5AA090A9F8A6F8), // -5.773855221345676e-18
    f64::from_bits(0xBC66061E7979BEF7), // -9.551345176656395e-18
    f64::from_bits(0x3C68C06412B92C3B), // 1.0734263736083303e-17
    f64::from_bits(0xBC3CB58B440627F0), // -1.556326480245658e-18
    f64::from_bits(0x3C66311B6E3FA070), // 9.624169867573683e-18
    f64::from_bits(0xBC6C12FA9B61721C), // -1.2175215895659508e-17
    f64::from_bits(0xBC435833605B33CF), // -2.097338572511859e-18
    f64::from_bits(0xBC5142AFB2A614E8), // -3.742772896379346e-18
    f64::from_bits(0xBC555AADEBEECD25), // -4.630457548036091e-18
    f64::from_bits(0x3C617EB795331A50), // 7.587241924746081e-18
    f64::from_bits(0xBC5EF008965A8B9C), // -6.708529355309593e-18
    f64::from_bits(0x3C68BAA06DC7498F), // 1.072449874113035e-17
    f64::from_bits(0x3C3A17633E4D3C0E), // 1.4144153558661529e-18
    f64::from_bits(0x3C24905F0A40A32E), // 5.573869869362167e-19
    f64::from_bits(0x3C2700F5827A3B85), // 6.235177896019257e-19
    f64::from_bits(0x3C508DEDA083577B), // 3.5896648393197645e-18
    f64::from_bits(0x3C6DA8E0CEE44290), // 1.2862835926790556e-17
    f64::from_bits(0xBC5852CEF6C97929), // -5.2743119160772984e-18
    f64::from_bits(0x3C5499B947B05EB5), // 4.467017771083114e-18
    f64::from_bits(0x3C670D2C0CE8481E), // 9.99697434471806e-18
    f64::from_bits(0x3C4C953DEFB83259), // 3.098972502715667e-18
    f64::from_bits(0x3C5110E50AAC7142), // 3.70059774900097e-18
    f64::from_bits(0x3C6DE31E33E99CF7), // 1.2961498024140317e-17
    f64::from_bits(0x3C5AAD5ECCA04E3B), // 5.784701661441503e-18
    f64::from_bits(0x3C4891E9A1AFEE90), // 2.6638816136858565e-18
    f64::from_bits(0xBC53E5651B87CAC0), // -4.3142733371561876e-18
    f64::from_bits(0xBC5AA7B5FCB201D0), // -5.7799079438903024e-18
    f64::from_bits(0x3C409FF8F18641E2), // 1.8024744376824795e-18
    f64::from_bits(0x3C55B9C2559E6280), // 4.7109932184321436e-18
    f64::from_bits(0x3C543BE8589EDCAB), // 4.3875524028322935e-18
    f64::from_bits(0xBC3C1E34A7B6E3BD), // -1.5242793438904603e-18
    f64::from_bits(0x3C272610CBD807B0), // 6.274466024510527e-19
    f64::from_bits(0xBC5F0FC1BB6BE604), // -6.735399969417667e-18
    f64::from_bits(0xBC575C16D6E9BC76), // -5.065332594160455e-18
    f64::from_bits(0xBC4972CC16490A87), // -2.7591239429126628e-18
    f64::from_bits(0x3C5D15E8E285094C), // 6.306930843614871e-18
    f64::from_bits(0x3C48EF9377DE8FA5), // 2.703549616899898e-18
    f64::from_bits(0x3C5CF255F7B9141E), // 6.276798582306891e-18
    f64::from_bits(0x3C43E5273E628117), // 2.1570343234230612e-18
    f64::from_bits(0x3C4DD953B288548A), // 3.2362278407062364e-18
    f64::from_bits(0xBC279A90F5FB5F96), // -6.39781587823151e-19
    f64::from_bits(0xBC3C0DC96A81DEA0), // -1.5208025060050634e-18
    f64::from_bits(0xBC3CD719CDD6D5F6), // -1.5634324070122724e-18
    f64::from_bits(0x3C4AC69841116B38), // 2.903033793639071e-18
    f64::from_bits(0x3C4827F79C8158B5), // 2.6190119950508072e-18
    f64::from_bits(0xBC4E384F04BD174B), // -3.276454165139139e-18
    f64::from_bits(0x3C3CE0457BDC1CA0), // 1.5653743622008498e-18
    f64::from_bits(0x3C3D123E5B7D9BFC), // 1.5759563791868749e-18
    f64::from_bits(0x3C38CDA48E559AE8), // 1.3445891630570812e-18
    f64::from_bits(0xBC327C392EC151CA), // -1.0020872769708041e-18
    f64::from_bits(0xBC10CEFEBC602541), // -2.277986618304695e-19
    f64::from_bits(0xBC11BBB8196D23BF), // -2.403307300716049e-19
    f64::from_bits(0xBC1F950E379FE121), // -4.280192762247192e-19
    f64::from_bits(0x0000000000000000), // 0.0
    f64::from_bits(0xBBECE682CE31A038), // -4.8959238614835184e-20
    f64::from_bits(0xBC182F3D703FED4C), // -3.2776151620714963e-19
    f64::from_bits(0xBC35C02ED7767837), // -1.1791086090839275e-18
    f64::from_bits(0x3C333E345A474878), // 1.0431643796409267e-18
    f64::from_bits(0xBC45C243E29B1A65), // -2.3590990647114304e-18
    f64::from_bits(0x3C4189C5532D6361), // 1.9014918967943107e-18
    f64::from_bits(0xBC3E5888C4DC1676), // -1.6450511162192128e-18
    f64::from_bits(0x3C485F5D07068577), // 2.6424731799547865e-18
    f64::from_bits(0xBC3709DDBACA6CD7), // -1.248921732958405e-18
    f64::from_bits(0xBC5B5449CD169766), // -5.9260866864334245e-18
    f64::from_bits(0x3C5A4BDE8F74265B), // 5.7021151584483915e-18
    f64::from_bits(0xBC5906C43C2F543D), // -5.4267423475826205e-18
    f64::from_bits(0xBC24CD620018BDF8), // -5.638468375223031e-19
    f64::from_bits(0x3C594BE2E01C350F), // 5.485289001301589e-18
    f64::from_bits(0x3C34F6C94A902B1F), // 1.1364612029713244e-18
    f64::from_bits(0xBC36C022A6C8AC26), // -1.233308634250859e-18
    f64::from_bits(0xBC55B12B97E7A378), // -4.703718194492505e-18
    f64::from_bits(0x3C69877C5F5D38A6), // 1.1071543648886746e-17
    f64::from_bits(0x3C547C9C89DC86D9), // 4.442358717921038e-18
    f64::from_bits(0x3C62E7E07238F390), // 8.19907012376637e-18
    f64::from_bits(0x3C5DE7BE62B0B2B0), // 6.4846671440384915e-18
    f64::from_bits(0x3C69F4187EEA93BA), // 1.1255535902502645e-17
    f64::from_bits(0xBC674670A4F0B95C), // -1.0093990016918648e-17
    f64::from_bits(0xBC5BA979A5110A16), // -5.998242788359463e-18
    f64::from_bits(0xBC6CAAD7BE421ECE), // -1.2432483202619037e-17
    f64::from_bits(0x3C4BBF6B2E0C0605), // 3.0084148263962828e-18
    f64::from_bits(0xBC6BF997CF9C7FA2), // -1.2132210471382958e-17
    f64::from_bits(0x3C6D9056C7F8E0D0), // 1.2821264959062234e-17
    f64::from_bits(0x3C49371105CFEF01), // 2.733826998964806e-18
    f64::from_bits(0xBC5388F848751CC9), // -4.235986235930011e-18
    f64::from_bits(0x3C54E1D2FA680548), // 4.528089171214747e-18
    f64::from_bits(0xBC64F934A2E5EABC), // -9.095788105569027e-18
    f64::from_bits(0x3C670AE1DA98B451), // 9.993095221501445e-18
    f64::from_bits(0xBC456ECD50915690), // -2.3237510390264257e-18
    f64::from_bits(0x3C647656C00EC33D), // 8.874091220271809e-18
    f64::from_bits(0xBC6CAE7A64E54A4B), // -1.2438641733851806e-17
    f64::from_bits(0x3C76B68F5189FA7B), // 1.9700495026053905e-17
    f64::from_bits(0x3C77C9AEA8934F83), // 2.0632646049296656e-17
    f64::from_bits(0xBC79D819228227F2), // -2.241621257242643e-17
    f64::from_bits(0x3C2CE6E9563361C2), // 7.833902237795353e-19
    f64::from_bits(0xBC311D3B7F6FAD9E), // -9.27762050905122e-19
    f64::from_bits(0xBC776F595B40CF5A), // -2.032658522518447e-17
    f64::from_bits(0xBC60A5B682D74D38), // -7.219622533634173e-18
    f64::from_bits(0xBC78FF7863C968A5), // -2.168224866355139e-17
    f64::from_bits(0x3C75915A1BFB7318), // 1.8707068193893168e-17
    f64::from_bits(0xBC6C61766E7EB650), // -1.2308172438331248e-17
    f64::from_bits(0xBC70A9AC1FF59AE5), // -1.4452660133466093e-17
];
// ---- end of generated constants ----

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::unary::eval;
    use half::{bf16, f16};

    fn log32(x: f32) -> f32 {
        eval::<Log, f32>(x)
    }
    fn log1p32(x: f32) -> f32 {
        eval::<Log1p, f32>(x)
    }
    fn log10_32(x: f32) -> f32 {
        eval::<Log10, f32>(x)
    }

    #[test]
    fn special_values() {
        assert_eq!(log32(1.0).to_bits(), 0); // +0
        assert_eq!(log32(0.0), f32::NEG_INFINITY);
        assert_eq!(log32(-0.0), f32::NEG_INFINITY);
        assert_eq!(log32(f32::INFINITY), f32::INFINITY);
        assert_eq!(log10_32(1.0).to_bits(), 0); // +0
        assert_eq!(log10_32(0.0), f32::NEG_INFINITY);
        assert_eq!(log10_32(-0.0), f32::NEG_INFINITY);
        assert_eq!(log10_32(f32::INFINITY), f32::INFINITY);
        for x in [
            -1.0,
            -f32::MIN_POSITIVE,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::from_bits(1),
            f32::from_bits(0xFFC0_1234),
        ] {
            assert_eq!(log32(x).to_bits(), 0x7FC0_0000, "log({x})");
            assert_eq!(eval::<Log, bf16>(x).to_bits(), 0x7FC0, "log_bf16({x})");
            assert_eq!(eval::<Log, f16>(x).to_bits(), 0x7E00, "log_f16({x})");
            assert_eq!(log10_32(x).to_bits(), 0x7FC0_0000, "log10({x})");
            assert_eq!(eval::<Log10, bf16>(x).to_bits(), 0x7FC0, "log10_bf16({x})");
            assert_eq!(eval::<Log10, f16>(x).to_bits(), 0x7E00, "log10_f16({x})");
        }
        assert_eq!(log1p32(0.0).to_bits(), 0);
        assert_eq!(log1p32(-0.0).to_bits(), 0x8000_0000);
        assert_eq!(eval::<Log1p, bf16>(-0.0).to_bits(), 0x8000);
        assert_eq!(eval::<Log1p, f16>(-0.0).to_bits(), 0x8000);
        assert_eq!(log1p32(-1.0), f32::NEG_INFINITY);
        assert_eq!(log1p32(f32::INFINITY), f32::INFINITY);
        for x in [-1.0000001, -2.0, f32::NEG_INFINITY, f32::NAN, f32::MIN] {
            assert_eq!(log1p32(x).to_bits(), 0x7FC0_0000, "log1p({x})");
        }
        // Subnormal inputs: no flush.
        let tiny = f32::from_bits(1);
        assert_eq!(log1p32(tiny), tiny);
        assert_eq!(log1p32(-tiny), -tiny);
        assert!((log32(tiny) - (-103.27893)).abs() < 1e-4);
        assert!((log10_32(tiny) - (-44.853_47)).abs() < 1e-4);
    }

    /// log10(10^k) = k exactly for every power of ten that is an f32 (k = 0..10), on both
    /// paths, in every format that holds 10^k; log10(1) = +0.
    #[test]
    fn log10_of_powers_of_ten_is_exact() {
        let mut p = 1.0f32;
        for k in 0..=10 {
            assert_eq!(p as f64, 10f64.powi(k), "10^{k} is exact in f32");
            let want = k as f32;
            assert_eq!(log10_32(p).to_bits(), want.to_bits(), "log10(1e{k})");
            assert_eq!(
                (Log10::accurate(p) as f32).to_bits(),
                want.to_bits(),
                "accurate log10(1e{k})"
            );
            for fused in [Log10::fast::<true>(p), Log10::fast::<false>(p)] {
                let (r, sure) = crate::math::round::round_if_certain::<f32>(
                    fused,
                    LOG10_FAST_ERR + f64::EPSILON,
                );
                assert!(sure && r == want, "fast log10(1e{k}) = {fused:e}");
            }
            if bf16::from_f32(p).to_f32() == p {
                let y = eval::<Log10, bf16>(p);
                assert_eq!(y, bf16::from_f32(want), "log10_bf16(1e{k})");
            }
            if f16::from_f32(p).to_f32() == p {
                let y = eval::<Log10, f16>(p);
                assert_eq!(y, f16::from_f32(want), "log10_f16(1e{k})");
            }
            p *= 10.0;
        }
        assert_eq!(Log10::accurate(1.0).to_bits(), 0);
    }

    #[test]
    fn exact_cases_are_exact() {
        assert_eq!(log_dd(DD::from_f64(1.0)), DD::new(0.0, 0.0));
        assert_eq!(log10_dd(DD::from_f64(1.0)), DD::new(0.0, 0.0));
        assert_eq!(log1p_dd(DD::from_f64(0.0)), DD::new(0.0, 0.0));
        assert_eq!(log1p_fast_f64::<true>(0.0), 0.0);
        assert_eq!(Log::fast::<true>(1.0), 0.0);
        for y in [Log10::fast::<true>(1.0), Log10::fast::<false>(1.0)] {
            assert_eq!(y.to_bits(), 0);
        }
    }

    #[test]
    fn log1p_fast_f64_tiny_and_large() {
        for t in [1e-300, f64::from_bits(1), 2.0f64.powi(-60), 1e-20] {
            assert_eq!(log1p_fast_f64::<true>(t), t);
        }
        // t = 2^-30: ln(1 + t) = t - t^2/2 + t^3/3 - ...
        let t = 2.0f64.powi(-30);
        let exact = t - t * t / 2.0 + t * t * t / 3.0;
        assert!((log1p_fast_f64::<true>(t) - exact).abs() <= LOG1P_FAST_F64_REL_ERR * exact);
        // t = 2^1000: ln(1 + t) = 1000 ln 2 (+ 2^-1000)
        let y = log1p_fast_f64::<true>(2.0f64.powi(1000));
        let exact = 693.147_180_559_945_3_f64;
        assert!((y - exact).abs() <= LOG1P_FAST_F64_REL_ERR * exact);
        // Total: never panics.
        for t in [
            f64::NAN,
            f64::INFINITY,
            -1.0,
            -5.0,
            f64::MAX,
            -f64::INFINITY,
        ] {
            let _ = log1p_fast_f64::<true>(t);
        }
    }

    /// The fast paths against the accurate ones (which are within 2^-52 of the exact value):
    /// a sample of the f32 space and of t in [0, 2^1000] for log1p_fast_f64.
    #[test]
    fn fast_error_bound() {
        let tol = FAST_ERR + f64::from_bits(0x3CB0_0000_0000_0000); // + 2^-52
        for b in (0u32..0x7F80_0000).step_by(997) {
            let x = f32::from_bits(b);
            if Log::in_fast_domain(x) {
                let a = Log::accurate(x);
                // Both multiply-add flavours (`super::madd`).
                for f in [Log::fast::<true>(x), Log::fast::<false>(x)] {
                    assert!((f - a).abs() <= tol * a.abs(), "log {x:e}: {f} vs {a}");
                }
            }
            if Log10::in_fast_domain(x) {
                let a = Log10::accurate(x);
                let tol = LOG10_FAST_ERR + f64::from_bits(0x3CB0_0000_0000_0000); // + 2^-52
                for f in [Log10::fast::<true>(x), Log10::fast::<false>(x)] {
                    assert!((f - a).abs() <= tol * a.abs(), "log10 {x:e}: {f} vs {a}");
                }
            }
            for x in [x, -x] {
                if Log1p::in_fast_domain(x) {
                    let a = Log1p::accurate(x);
                    for f in [Log1p::fast::<true>(x), Log1p::fast::<false>(x)] {
                        assert!((f - a).abs() <= tol * a.abs(), "log1p {x:e}: {f} vs {a}");
                    }
                }
            }
        }
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let t = f64::from_bits(s % 0x7E70_0000_0000_0000); // [0, 2^1000)
            let a = log1p_dd(DD::from_f64(t));
            for f in [log1p_fast_f64::<true>(t), log1p_fast_f64::<false>(t)] {
                assert!((f - a.hi).abs() <= tol * a.hi.abs(), "log1p_fast_f64 {t:e}");
            }
        }
    }

    #[test]
    fn monotonic() {
        for f in [log32, log10_32] {
            let mut prev = f32::NEG_INFINITY;
            for b in (0u32..0x7F80_0000).step_by(4099) {
                let y = f(f32::from_bits(b));
                assert!(y >= prev);
                prev = y;
            }
        }
    }

    /// log10's double-double (before `round_odd`) against MPFR at 200 bits: every exponent,
    /// the neighbourhood of 1 (where ln x is computed from r = x - 1 without cancellation)
    /// and a geometric sweep; within the header's 34 u^2.
    #[cfg(repro_workspace)]
    #[test]
    fn log10_double_double_within_its_bound() {
        use mpfr_oracle::{Func, approx_wide};
        let mut xs: Vec<f32> = (0u32..0x7F80_0000)
            .step_by(65_537)
            .map(f32::from_bits)
            .collect();
        xs.extend((1u32..=4096).flat_map(|d| {
            [
                f32::from_bits(0x3F80_0000 + d),
                f32::from_bits(0x3F80_0000 - d),
            ]
        }));
        xs.extend((0..=10).map(|k| 10f32.powi(k)));
        let mut worst = 0f64;
        for x in xs {
            if x <= 0.0 || x == 1.0 {
                continue;
            }
            let d = log10_dd(DD::from_f64(x as f64));
            let (h, l) = approx_wide(Func::Log10, x as f64);
            let e = (((d.hi - h) + (d.lo - l)) / h).abs();
            worst = worst.max(e);
        }
        eprintln!(
            "log10 double-double: worst relative error 2^{:.1}",
            worst.log2()
        );
        assert!(
            worst < 34.0 * 2f64.powi(-106),
            "log10 double-double {worst:e}"
        );
    }
}
