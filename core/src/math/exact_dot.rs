//! Dot products of f32 values (and of anything that widens exactly to f32: bf16, f16,
//! f8e4m3), exact or with a proven error bound: the last two tiers of the correctly
//! rounded matmul (`crate::matmul`), and of any other op whose output is a rounded sum of
//! products.
//!
//! # The exact sum ([`ExactDot`])
//! A finite f32 is m 2^e with an integer 0 <= m < 2^24 and -149 <= e <= 104, so a product
//! of two is an integer below 2^48 times 2^(ea + eb), a multiple of 2^-298 below 2^256.
//! The accumulator holds sum / 2^-298 as a signed integer in 32-bit digits, each kept in
//! an i64 limb: a product adds its 48 bits (shifted by (ea + eb + 298) mod 32, so at most
//! 80 bits) to three consecutive limbs, each change below 2^32 in magnitude, so a limb
//! cannot overflow before 2^31 additions; the carries are propagated every
//! `NORMALIZE_EVERY` terms. Integer addition is associative: the value, and every bit
//! of the result, is independent of the order of the terms. `DIGITS` = 20 digits (640
//! bits) hold |sum| < 2^(554 + 60), so any count of terms below 2^60.
//!
//! [`ExactDot::finish`] returns the exact sum rounded to odd in f64 (53 bits; the sum is
//! 0 or at least 2^-298 and below 2^620, normal in f64), so one more rounding to f32,
//! bf16 or f16 is the correctly rounded sum (Boldo and Melquiond, "When double rounding is
//! odd", 2005; see `round.rs`).
//!
//! Special values, as an IEEE sum of the exact products would give them in any order:
//! NaN if any term is NaN (a NaN factor, or 0 * inf) or if +inf and -inf terms meet;
//! otherwise +-inf if there is an infinite term. An exact zero sum is -0 exactly when
//! there is at least one term and every term is -0 (IEEE round-to-nearest: x + (-x) = +0,
//! -0 + -0 = -0); an empty sum is +0. Every NaN is the canonical quiet NaN.
//!
//! # The compensated sum ([`dot2`])
//! Knuth's TwoSum chain in f64 over the exact f64 products, in `DOT2_LANES` lanes
//! (element i in lane i mod lanes) combined lane 0 first, also with TwoSum: every step is
//! error-free, so sum = s + sum(q) exactly with s the final sum and q the TwoSum errors.
//! Only sum(q) is formed with rounding: with n = k + lanes additions, |q_t| <= u |s_t| <=
//! u (1 + gamma_n) sum|p|, so |fl(sum q) - sum q| <= gamma_n n u (1 + gamma_n) sum|p| and
//! the final fl(s + fl(sum q)) adds u |result| (u = 2^-53; Ogita, Rump and Oishi,
//! "Accurate sum and dot product", 2005, Prop. 4.5 in this form). [`dot2_bound`] rounds
//! that up: |result - sum| <= 2^-52 |result| + (k + 8)^2 2^-106 (1 + 2^-20) bound(sum|p|).
//! The CUDA mirror (`kernels/math/exact_dot.cuh`) performs the same operations in the
//! same order.
//!
//! # Why half of [`dot2_bound`] is still a bound
//! Tier 2 (the matmul's [`dot2`] with `dot2_bound(k, ..)`, the quantized product's
//! [`dot2_wide`] with `dot2_bound(2 k, ..)`) gives the same outputs with half the bound:
//! the halved value still bounds the error, so halving it is an equivalent mutant. Let
//! u = 2^-53; x_i the exact products and the bias as one more element, P = sum |x_i|, at
//! most `abs_bound` (the callers' premise, as for the full bound); p_i the f64 products
//! (p_i = x_i in [`dot2`]; in [`dot2_wide`] x_i = p_i + f_i by TwoProduct, with
//! |f_i| <= u |x_i|); S = sum x_i; v = total + err, the exact sum of the last addition's
//! operands; r = fl(v). Every value met is 0 or a multiple of 2^-298 at least 2^-298 and
//! below 2^300 in magnitude (module header), so nothing underflows or overflows and every
//! rounding errs by at most u times its exact result; a non-finite r or bound is never
//! sure.
//!
//! 1. *Error terms.* Each TwoSum(a, b) = (s, t) is exact with |t| <= u |a + b|; t's
//!    scope is the set of elements its operands sum (a lane's first j; lanes 0..=l; all
//!    and the bias). A chain value (s_l = `s[l]`, total) is at most N + 8 roundings
//!    deep, N the longest lane (ceil(n / 8); ceil(k / 8) in [`dot2_wide`]), so
//!    |t| <= u (1 + u)^(N + 9) P_t, P_t the sum of |x_i| over t's scope. A TwoProduct
//!    error f_i has scope {i}. So S = total + (all terms).
//! 2. *The error sum.* err adds the terms with roundings rho = fl(a + b), each erring by
//!    at most u |a + b| <= u (1 + u)^(N + 16) times the sum of |t| over the terms t of its
//!    result (err is at most N + 16 roundings deep). An addition with an operand that is
//!    zero for every input (q's start; the error of a lane's first TwoSum(0, p); that of
//!    TwoSum(total, s_l) for an empty lane) is exact: not a rounding. Hence
//!    |S - v| <= u^2 (1 + u)^(2N + 25) sum_i |x_i| W_i <= u^2 (1 + 2^-28) W P, with
//!    W_i the sum over the roundings of the number of terms of their result whose scope
//!    holds element i, W = max_i W_i, and N <= 2^23 (tier 2 runs for k < 2^26 only).
//! 3. *W, counted* (on the structure: "at most" counts every term that may be nonzero).
//!    [`dot2`], n > 8: in a lane (at most N elements, t_j the j-th TwoSum's error) the
//!    error sum Q_j = fl(Q_{j-1} + t_j) rounds for j >= 3 (t_1 = 0, and 0 + t_2 is
//!    exact) and holds t_2..t_j: at most sum_{j=3..N} (j - 1) = N (N - 1) / 2 - 1, and
//!    the lane's q_l = `q[l]` ends with at most N - 1 terms holding i. Combining lanes
//!    (e_l the error of TwoSum(total, s_l)), fl(e_l + q_l) holds at most 1 term with i,
//!    N for i's own lane (7 + N - 1 over l = 1..7), err = fl(err + ..) at most N - 1 + l
//!    (7 N + 21), the bias's rounding N + 7: W <= N (N - 1) / 2 + 9 N + 33. n <= 8
//!    (every q_l zero, so fl(e_l + q_l) is exact): only err = fl(err + e_l),
//!    2 <= l < n, holding l terms, and the bias's, holding n: W <= n (n + 1) / 2 - 1.
//!    [`dot2_wide`] over k products, k > 8: Q_j = fl(Q_{j-1} + fl(t_j + f_j)), both
//!    rounding for j >= 2 (t_1 = 0), holds f_1..f_j and t_2..t_j, at most j of them with
//!    i, and the inner sum at most 2 (at i's position) or 1: a lane's at most
//!    N (N + 3) / 2 - 1, q_l ends with at most N; combining as above, 9 N + 43:
//!    W <= N (N + 3) / 2 + 9 N + 42. k <= 8: every fl(e_l + q_l) (1 + (1 if l is i's
//!    lane) terms with i) and err's roundings (l + 1) for 1 <= l < k, the bias's (k + 1):
//!    W <= k (k - 1) / 2 + 3 k.
//!    These forms are at most 0.36 (n + 8)^2 / 2 for [`dot2`] (the ratio peaks at n = 9;
//!    as (n + 8)^2 / 2 >= (8 N + 1)^2 / 2 it falls towards 1/64: about N^2 / 2 + 8.5 N
//!    against 32 N^2) and at most 0.2 (2 k + 8)^2 / 2 for [`dot2_wide`], whose count is
//!    n = 2 k. The test `half_dot2_bound_counts_every_order` runs both orders on their
//!    expression trees (every n to 2048, 10^4 and 65536, with and without the bias): W
//!    never exceeds the forms and equals them for n a multiple of 8 from 16 with a bias.
//! 4. *The halved test.* |S - r| <= |S - v| + |v - r| <= u^2 (1 + 2^-28) W P + u |r|
//!    (r = RN(v): half the spacing at r, at most 2^-53 |r|) <= (n + 8)^2 2^-107 A +
//!    2^-53 |r| =: E by 3 and P <= A = `abs_bound`: half of `dot2_bound` in exact
//!    arithmetic, without even its 1 + 2^-20. The computed half (at most four
//!    roundings, then the exact * 0.5) is at least (1 - u)^4 E; `round_within` widens it
//!    to d >= (1 - u)^6 (1 + 2^-36) E + (1 - u) 2^-51 |r|, and
//!    fl(r + d) >= r + d - u (|r| + d) >= r + E, likewise fl(r - d) <= r - E. So S lies
//!    between the two ends the test rounds, and as rounding is monotone (ties to even
//!    included) a sure answer is the rounding of S: no property of the rounding
//!    boundaries is used, and a halfway S needs no case of its own. For an exact zero S
//!    the upper end is +0 or above, so only +0 can be sure: IEEE's sign unless every
//!    term is -0, and then r = +0 and d > 0 put the lower end below zero (never sure),
//!    as with the full bound. Half is not the edge either: the widening's 2^-51 |r|
//!    alone covers the last rounding's u |r|, and W needs only 0.18 of the second term
//!    (0.1 for [`dot2_wide`]), so the same steps hold for a quarter of `dot2_bound`;
//!    what tier 2 cannot drop is the second term (bound 0 is caught by
//!    `tier2_must_not_trust_itself` in `tests/hard_sums.rs`). Nor do the 8 lanes carry
//!    the halving: one lane would give W about n^2 / 2 + n / 2, still below
//!    (n + 8)^2 / 2; they make the margin 2.7 at least.
//!
//! The CUDA mirror's `dot2` and `dot2_wide` (`kernels/math/exact_dot.cuh`) perform
//! exactly these operations in this order (the same loops; `err += e + q[l]` is
//! err + (e + q_l) in both languages; kernels build with `--fmad=false`), and its
//! `dot2_bound` and `round_within_parts` (`kernels/math/round.cuh`) are the same
//! formulas. Tier 2 calls exactly these functions: `slow_output` in `core/src/matmul/cpu.rs`
//! and `kernels/matmul/tiers.cuh` (`dot2`, `dot2_bound(k, ..)`), `Shared::slow` in
//! `src/quantized/cpu.rs` and `slow_output` in `kernels/quantized/quantized.cu`
//! (`dot2_wide`, `dot2_bound(2 * k, ..)`).

/// Lowest bit of any product of two f32: 2^-149 * 2^-149.
#[doc(hidden)]
pub const BASE_EXP: i32 = -298;
/// 32-bit digits, each in an i64 limb (640 bits; see the module header).
#[doc(hidden)]
pub const DIGITS: usize = 20;
/// Terms between two carry propagations: every limb then changed by less than 2^62.
#[doc(hidden)]
pub const NORMALIZE_EVERY: u32 = 1 << 30;

/// A finite f32 as (m, e) with |x| = m 2^e, 0 <= m < 2^24 and -149 <= e <= 104.
#[inline(always)]
#[doc(hidden)]
pub fn decompose(x: f32) -> (u64, i32) {
    let bits = x.to_bits() & 0x7FFF_FFFF;
    let field = (bits >> 23) as i32;
    let frac = (bits & 0x7F_FFFF) as u64;
    if field == 0 {
        (frac, -149)
    } else {
        (frac | 0x80_0000, field - 150)
    }
}

/// An exact sum of products of f32 values (see the module header).
#[derive(Clone, Debug)]
pub struct ExactDot {
    limbs: [i64; DIGITS],
    since_normalize: u32,
    nan: bool,
    pos_inf: bool,
    neg_inf: bool,
    /// At least one term, and every term so far is -0.
    all_neg_zero: bool,
    any_term: bool,
}

impl Default for ExactDot {
    fn default() -> Self {
        Self::new()
    }
}

impl ExactDot {
    /// The empty sum.
    pub fn new() -> ExactDot {
        ExactDot {
            limbs: [0; DIGITS],
            since_normalize: 0,
            nan: false,
            pos_inf: false,
            neg_inf: false,
            all_neg_zero: true,
            any_term: false,
        }
    }

    /// Add the exact product a * b.
    #[inline]
    pub fn add_product(&mut self, a: f32, b: f32) {
        self.any_term = true;
        let negative = ((a.to_bits() ^ b.to_bits()) >> 31) == 1;
        if !a.is_finite() || !b.is_finite() {
            self.all_neg_zero = false;
            if a.is_nan() || b.is_nan() || a == 0.0 || b == 0.0 {
                self.nan = true; // NaN factor, or inf * 0
            } else if negative {
                self.neg_inf = true;
            } else {
                self.pos_inf = true;
            }
            return;
        }
        let (ma, ea) = decompose(a);
        let (mb, eb) = decompose(b);
        let m = ma * mb;
        if m == 0 {
            self.all_neg_zero &= negative;
            return;
        }
        self.all_neg_zero = false;
        let shift = (ea + eb - BASE_EXP) as u32;
        let limb = (shift / 32) as usize;
        let v = (m as u128) << (shift % 32);
        let d0 = (v as u64 & 0xFFFF_FFFF) as i64;
        let d1 = ((v >> 32) as u64 & 0xFFFF_FFFF) as i64;
        let d2 = (v >> 64) as i64;
        if negative {
            self.limbs[limb] -= d0;
            self.limbs[limb + 1] -= d1;
            self.limbs[limb + 2] -= d2;
        } else {
            self.limbs[limb] += d0;
            self.limbs[limb + 1] += d1;
            self.limbs[limb + 2] += d2;
        }
        self.since_normalize += 1;
        if self.since_normalize == NORMALIZE_EVERY {
            self.normalize();
        }
    }

    /// Add the exact product a * b of an f32 and an f64 `b` that is a multiple of 2^-149
    /// below 2^137 in magnitude (or not finite): the exact values of quantized weights
    /// (`crate::quantized`), whose products with an f32 are not exact in f64. Such a b is
    /// mb 2^eb with mb < 2^53 and eb >= -149 once its trailing zeros are shifted out, so
    /// the product is an integer below 2^77 times 2^(ea + eb) with ea + eb >= -298: it
    /// adds at most 108 bits (77, shifted by up to 31) to four consecutive limbs, each
    /// change below 2^32, and its top bit lies below bit 128 + 137 + 298 = 563 of the
    /// accumulator (limb 17; 2^77 such terms still fit 640 bits).
    #[inline]
    pub fn add_product_wide(&mut self, a: f32, b: f64) {
        self.any_term = true;
        let negative = ((a.to_bits() >> 31) as u64 ^ (b.to_bits() >> 63)) == 1;
        if !a.is_finite() || !b.is_finite() {
            self.all_neg_zero = false;
            if a.is_nan() || b.is_nan() || a == 0.0 || b == 0.0 {
                self.nan = true; // NaN factor, or inf * 0
            } else if negative {
                self.neg_inf = true;
            } else {
                self.pos_inf = true;
            }
            return;
        }
        let (ma, ea) = decompose(a);
        let bits = b.to_bits() & 0x7FFF_FFFF_FFFF_FFFF;
        let field = (bits >> 52) as i32;
        let frac = bits & ((1 << 52) - 1);
        let (mut mb, mut eb) = if field == 0 {
            (frac, -1074)
        } else {
            (frac | 1 << 52, field - 1075)
        };
        if ma == 0 || mb == 0 {
            self.all_neg_zero &= negative;
            return;
        }
        self.all_neg_zero = false;
        let tz = mb.trailing_zeros();
        mb >>= tz;
        eb += tz as i32;
        debug_assert!(
            eb >= -149 && eb + (64 - mb.leading_zeros() as i32) <= 137,
            "add_product_wide: {b:e} is not a multiple of 2^-149 below 2^137"
        );
        let shift = (ea + eb - BASE_EXP) as u32;
        let limb = (shift / 32) as usize;
        let v = (ma as u128 * mb as u128) << (shift % 32);
        let digits = [
            (v as u64 & 0xFFFF_FFFF) as i64,
            ((v >> 32) as u64 & 0xFFFF_FFFF) as i64,
            ((v >> 64) as u64 & 0xFFFF_FFFF) as i64,
            (v >> 96) as i64,
        ];
        for (l, d) in self.limbs[limb..limb + 4].iter_mut().zip(digits) {
            if negative {
                *l -= d;
            } else {
                *l += d;
            }
        }
        self.since_normalize += 1;
        if self.since_normalize == NORMALIZE_EVERY {
            self.normalize();
        }
    }

    /// Add one value (a product with 1).
    #[inline]
    pub fn add(&mut self, x: f32) {
        self.add_product(x, 1.0);
    }

    /// Propagate carries: every limb but the last in [0, 2^32), the last signed.
    fn normalize(&mut self) {
        for i in 0..DIGITS - 1 {
            let carry = self.limbs[i] >> 32;
            self.limbs[i] -= carry << 32;
            self.limbs[i + 1] += carry;
        }
        self.since_normalize = 0;
    }

    /// The exact sum rounded to odd in f64 (special values as in the module header): one
    /// more rounding to f32, bf16 or f16 is the correctly rounded sum.
    pub fn finish(&self) -> f64 {
        if self.nan || (self.pos_inf && self.neg_inf) {
            return f64::NAN;
        }
        if self.pos_inf {
            return f64::INFINITY;
        }
        if self.neg_inf {
            return f64::NEG_INFINITY;
        }
        let mut acc = self.clone();
        acc.normalize();
        let negative = acc.limbs[DIGITS - 1] < 0;
        if negative {
            for l in acc.limbs.iter_mut() {
                *l = -*l;
            }
            acc.normalize();
        }
        let digits = &acc.limbs;
        let Some(top) = (0..DIGITS).rev().find(|&i| digits[i] != 0) else {
            let neg_zero = self.any_term && self.all_neg_zero;
            return if neg_zero { -0.0 } else { 0.0 };
        };
        // The top three digits as a window W < 2^96 (digit `top` nonzero, so W >= 2^64),
        // worth W 2^(32 (top - 2)) units; lower digits only matter as a sticky bit.
        let digit = |i: usize| -> u128 {
            if i <= top && top - i <= 2 && i < DIGITS {
                digits[i] as u128
            } else {
                0
            }
        };
        let w =
            (digit(top) << 64) | (digit(top.wrapping_sub(1)) << 32) | digit(top.wrapping_sub(2));
        let sticky = top >= 3 && digits[..top - 2].iter().any(|&d| d != 0);
        let lz = w.leading_zeros();
        let aligned = w << lz; // top bit at 127
        let mut m53 = (aligned >> 75) as u64;
        if (aligned & ((1u128 << 75) - 1)) != 0 || sticky {
            m53 |= 1; // round to odd
        }
        // value = m53 2^75 2^-lz 2^(32 (top - 2)) 2^BASE_EXP.
        let e = 75 - lz as i32 + 32 * (top as i32 - 2) + BASE_EXP;
        let v = m53 as f64 * super::round::pow2(e);
        if negative { -v } else { v }
    }
}

impl ExactDot {
    /// The exact finite sum as (negative, |N|) with sum = N 2^[`BASE_EXP`]; `None` when a
    /// term was not finite.
    #[doc(hidden)]
    pub fn to_big(&self) -> Option<(bool, super::bigint::Big)> {
        if self.nan || self.pos_inf || self.neg_inf {
            return None;
        }
        let mut acc = self.clone();
        acc.normalize();
        let negative = acc.limbs[DIGITS - 1] < 0;
        if negative {
            for l in acc.limbs.iter_mut() {
                *l = -*l;
            }
            acc.normalize();
        }
        let mut big = super::bigint::Big::ZERO;
        for i in 0..DIGITS {
            let d = acc.limbs[i] as u64; // a 32-bit digit after normalizing
            big.limbs[i / 2] |= d << (32 * (i % 2));
        }
        Some((negative, big))
    }
}

/// The exact sum of `a[i] * b[i]` for i in 0..n (plus `bias`, when given), rounded to odd
/// in f64 ([`ExactDot::finish`]).
pub fn exact_dot(
    n: usize,
    a: impl Fn(usize) -> f32,
    b: impl Fn(usize) -> f32,
    bias: Option<f32>,
) -> f64 {
    let mut acc = ExactDot::new();
    for i in 0..n {
        acc.add_product(a(i), b(i));
    }
    if let Some(c) = bias {
        acc.add(c);
    }
    acc.finish()
}

/// Lanes of [`dot2`] (a multiple of every vector width of f64).
#[doc(hidden)]
pub const DOT2_LANES: usize = 8;

/// s + e = a + b exactly (TwoSum).
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    super::dd::two_sum(a, b)
}

/// The compensated sum of `a[i] * b[i]` (+ bias) over i in 0..n, within [`dot2_bound`] of
/// the exact sum (every product of two f32 is exact in f64). Non-finite inputs give a
/// non-finite result, which no rounding test accepts.
#[inline]
pub fn dot2(
    n: usize,
    a: impl Fn(usize) -> f32,
    b: impl Fn(usize) -> f32,
    bias: Option<f32>,
) -> f64 {
    let mut s = [0.0f64; DOT2_LANES];
    let mut q = [0.0f64; DOT2_LANES];
    let full = n / DOT2_LANES * DOT2_LANES;
    let mut i = 0;
    while i < full {
        for l in 0..DOT2_LANES {
            let p = a(i + l) as f64 * b(i + l) as f64;
            let (t, e) = two_sum(s[l], p);
            s[l] = t;
            q[l] += e;
        }
        i += DOT2_LANES;
    }
    for (l, j) in (full..n).enumerate() {
        let p = a(j) as f64 * b(j) as f64;
        let (t, e) = two_sum(s[l], p);
        s[l] = t;
        q[l] += e;
    }
    let mut total = s[0];
    let mut err = q[0];
    for l in 1..DOT2_LANES {
        let (t, e) = two_sum(total, s[l]);
        total = t;
        err += e + q[l];
    }
    if let Some(c) = bias {
        let (t, e) = two_sum(total, c as f64);
        total = t;
        err += e;
    }
    total + err
}

/// [`dot2`] for f32 `a` and f64 `b` whose products are not exact in f64 (the exact values
/// of quantized weights, `crate::quantized`): each product is split exactly into p + e
/// (Dekker's TwoProduct: exact without underflow or overflow, and every such product is 0
/// or at least 2^-298 and below 2^265), the p chained with TwoSum as in [`dot2`] and every e
/// added to the error sum beside the TwoSum errors, each at most 2^-53 |p|. So the error
/// sum collects 2n terms of the kind [`dot2`]'s bound counts: within
/// `dot2_bound(2 n, r, sum |a b| + |bias|)`. Non-finite inputs give a non-finite result.
#[inline]
pub fn dot2_wide(
    n: usize,
    a: impl Fn(usize) -> f32,
    b: impl Fn(usize) -> f64,
    bias: Option<f32>,
) -> f64 {
    let mut s = [0.0f64; DOT2_LANES];
    let mut q = [0.0f64; DOT2_LANES];
    for i in 0..n {
        let l = i % DOT2_LANES;
        let (p, e) = super::dd::two_prod(a(i) as f64, b(i));
        let (t, r) = two_sum(s[l], p);
        s[l] = t;
        q[l] += r + e;
    }
    let mut total = s[0];
    let mut err = q[0];
    for l in 1..DOT2_LANES {
        let (t, e) = two_sum(total, s[l]);
        total = t;
        err += e + q[l];
    }
    if let Some(c) = bias {
        let (t, e) = two_sum(total, c as f64);
        total = t;
        err += e;
    }
    total + err
}

/// The error bound of [`dot2`] over n products (and a bias) for a result `r`, given an
/// upper bound `abs_bound` of sum `|a[i] b[i]|` + |bias| (see the module header); valid for
/// n < 2^26.
#[inline(always)]
pub fn dot2_bound(n: usize, r: f64, abs_bound: f64) -> f64 {
    let m = (n + DOT2_LANES) as f64;
    // 2^-106 (1 + 2^-20): m^2 stays exact below 2^52.
    let c = m * m * f64::from_bits(0x3950_0001_0000_0000);
    r.abs() * f64::from_bits(0x3CB0_0000_0000_0000) + c * abs_bound // 2^-52
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(s: &mut u64) -> u64 {
        *s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *s >> 11
    }

    #[test]
    fn decompose_roundtrips() {
        for bits in (0u32..0x7F80_0000).step_by(7919) {
            let x = f32::from_bits(bits);
            let (m, e) = decompose(x);
            assert!(m < 1 << 24 && (-149..=104).contains(&e));
            assert_eq!(m as f64 * 2f64.powi(e), x as f64);
        }
    }

    #[test]
    fn exact_on_cancellation_and_tiny_sums() {
        // 1 + 2^-100 - 1 = 2^-100: products 2^-50 * 2^-50.
        let a = [1.0f32, 2f32.powi(-50), -1.0];
        let b = [1.0f32, 2f32.powi(-50), 1.0];
        let r = exact_dot(3, |i| a[i], |i| b[i], None);
        assert_eq!(r, 2f64.powi(-100));
        // Smallest subnormal squared, next to the largest product.
        let t = f32::from_bits(1);
        let big = f32::MAX;
        let a = [big, t, -big];
        let b = [big, t, big];
        assert_eq!(exact_dot(3, |i| a[i], |i| b[i], None), 2f64.powi(-298));
        // Exact zero: +0 for x - x, -0 when every term is -0.
        assert_eq!(
            exact_dot(2, |i| [1.0f32, -1.0][i], |_| 3.0, None).to_bits(),
            0
        );
        let nz = exact_dot(2, |i| [-0.0f32, 0.0][i], |i| [1.0f32, -2.0][i], None);
        assert_eq!(nz.to_bits(), (-0.0f64).to_bits());
        assert_eq!(exact_dot(0, |_| 0.0, |_| 0.0, None).to_bits(), 0);
        assert_eq!(
            exact_dot(1, |_| -0.0, |_| 1.0, Some(0.0)).to_bits(),
            0,
            "a +0 bias makes the sum +0"
        );
    }

    #[test]
    fn specials() {
        let inf = f32::INFINITY;
        assert!(exact_dot(2, |i| [inf, 1.0][i], |i| [0.0, 1.0][i], None).is_nan());
        assert!(exact_dot(2, |i| [inf, -inf][i], |_| 1.0, None).is_nan());
        assert_eq!(
            exact_dot(2, |i| [inf, 5.0][i], |_| -1.0, None),
            f64::NEG_INFINITY
        );
        assert!(exact_dot(1, |_| f32::NAN, |_| 0.0, None).is_nan());
        assert_eq!(exact_dot(1, |_| 1.0, |_| 1.0, Some(inf)), f64::INFINITY);
    }

    #[test]
    fn rounds_to_odd_against_the_f64_sum_of_few_terms() {
        // Two terms: the f64 sum of two exact products is the exact sum rounded to
        // nearest; rounded to odd it can differ only in the last bit, and where the f64
        // sum is exact the two agree.
        let mut s = 11u64;
        for _ in 0..100_000 {
            let a = [
                f32::from_bits(lcg(&mut s) as u32 & 0xBFFF_FFFF),
                f32::from_bits(lcg(&mut s) as u32 & 0xBFFF_FFFF),
            ];
            let b = [
                f32::from_bits(lcg(&mut s) as u32 & 0xBFFF_FFFF),
                f32::from_bits(lcg(&mut s) as u32 & 0xBFFF_FFFF),
            ];
            let r = exact_dot(2, |i| a[i], |i| b[i], None);
            let (p0, p1) = (a[0] as f64 * b[0] as f64, a[1] as f64 * b[1] as f64);
            let (f, e) = super::super::dd::two_sum(p0, p1);
            if e == 0.0 {
                assert_eq!(r, f, "{a:?} {b:?}");
            } else {
                assert_eq!(r.to_bits() & 1, 1);
                assert!((r.to_bits() as i64 - f.to_bits() as i64).abs() <= 1);
            }
        }
    }

    #[test]
    fn order_does_not_matter() {
        let mut s = 5u64;
        let n = 3000;
        let a: Vec<f32> = (0..n)
            .map(|_| f32::from_bits((lcg(&mut s) as u32) & 0xFF7F_FFFF))
            .collect();
        let b: Vec<f32> = (0..n)
            .map(|_| f32::from_bits((lcg(&mut s) as u32) & 0xFF7F_FFFF))
            .collect();
        let whole = exact_dot(n, |i| a[i], |i| b[i], None);
        let rev = exact_dot(n, |i| a[n - 1 - i], |i| b[n - 1 - i], None);
        assert_eq!(whole.to_bits(), rev.to_bits());
    }

    #[test]
    fn wide_products_equal_their_split_into_f32_parts() {
        // b = b0 + b1 + b2 with each part an f32 (53 bits in three pieces of at most 24):
        // a b added wide equals the three f32 products added, specials included.
        let mut s = 3u64;
        for _ in 0..20_000 {
            let a = f32::from_bits(lcg(&mut s) as u32 & 0xFF7F_FFFF);
            let e = (lcg(&mut s) % 250) as i32 - 140;
            let m = lcg(&mut s); // 53 bits
            let b = (m as f64 * 2f64.powi(e - 53)).copysign(if lcg(&mut s) & 1 == 0 {
                1.0
            } else {
                -1.0
            });
            if b.abs() >= 2f64.powi(136) || (b / 2f64.powi(-149)).fract() != 0.0 {
                continue;
            }
            let b0 = b as f32;
            let r0 = b - b0 as f64;
            let b1 = r0 as f32;
            let b2 = (r0 - b1 as f64) as f32;
            assert_eq!(b0 as f64 + b1 as f64 + b2 as f64, b);
            let mut wide = ExactDot::new();
            wide.add_product_wide(a, b);
            wide.add_product_wide(-a, 2f64.powi(-149));
            let mut parts = ExactDot::new();
            for p in [b0, b1, b2] {
                parts.add_product(a, p);
            }
            parts.add_product(-a, f32::from_bits(1));
            assert_eq!(
                wide.finish().to_bits(),
                parts.finish().to_bits(),
                "{a:e} * {b:e}"
            );
        }
        let inf = f64::INFINITY;
        for (a, b) in [
            (0.0f32, inf),
            (2.0, inf),
            (-2.0, inf),
            (f32::NAN, 1.0),
            (1.0, f64::NAN),
        ] {
            let mut wide = ExactDot::new();
            wide.add_product_wide(a, b);
            let mut narrow = ExactDot::new();
            narrow.add_product(a, b as f32);
            assert_eq!(wide.finish().to_bits(), narrow.finish().to_bits());
        }
        // Signed zeros: -0 only when every term is -0.
        let mut z = ExactDot::new();
        z.add_product_wide(-0.0, 3.0);
        z.add_product_wide(2.0, -0.0);
        assert_eq!(z.finish().to_bits(), (-0.0f64).to_bits());
        z.add_product_wide(-1.0, -0.0);
        assert_eq!(z.finish().to_bits(), 0);
    }

    #[test]
    fn dot2_wide_within_its_bound() {
        // b of up to 53 bits over a wide exponent range, a f32: the compensated sum stays
        // within dot2_bound(2 n, ..) of the exact sum.
        let mut s = 21u64;
        for n in [1usize, 5, 8, 33, 300, 2000] {
            for _ in 0..100 {
                let a: Vec<f32> = (0..n)
                    .map(|_| (lcg(&mut s) as f32 / 2f32.powi(52)) - 1.0)
                    .collect();
                let b: Vec<f64> = (0..n)
                    .map(|_| {
                        let m = lcg(&mut s) as f64 - 2f64.powi(52);
                        m * 2f64.powi((lcg(&mut s) % 40) as i32 - 80)
                    })
                    .collect();
                let mut acc = ExactDot::new();
                for (x, y) in a.iter().zip(&b) {
                    acc.add_product_wide(*x, *y);
                }
                acc.add(0.5);
                let exact = acc.finish();
                let r = dot2_wide(n, |i| a[i], |i| b[i], Some(0.5));
                let abs: f64 = a
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| (*x as f64 * y).abs())
                    .sum::<f64>();
                let bound = dot2_bound(2 * n, r, (abs + 0.5) * 1.01);
                assert!(
                    (r - exact).abs() <= bound,
                    "n {n}: {r} vs {exact}, bound {bound}"
                );
            }
        }
    }

    #[test]
    fn dot2_within_its_bound() {
        let mut s = 9u64;
        for n in [1usize, 7, 8, 9, 100, 1000] {
            for _ in 0..200 {
                let a: Vec<f32> = (0..n)
                    .map(|_| (lcg(&mut s) as f32 / 2f32.powi(52)) - 1.0)
                    .collect();
                let b: Vec<f32> = (0..n)
                    .map(|_| (lcg(&mut s) as f32 / 2f32.powi(52)) - 1.0)
                    .collect();
                let exact = exact_dot(n, |i| a[i], |i| b[i], Some(0.25));
                let r = dot2(n, |i| a[i], |i| b[i], Some(0.25));
                let abs: f64 = a
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| (*x as f64 * *y as f64).abs())
                    .sum::<f64>()
                    + 0.25;
                let bound = dot2_bound(n, r, abs * 1.01);
                assert!(
                    (r - exact).abs() <= bound,
                    "n {n}: {r} vs {exact}, bound {bound}"
                );
            }
        }
    }

    /// The count W behind "Why half of `dot2_bound` is still a bound" (module header),
    /// found by running each order on its expression tree rather than by the header's
    /// closed form.
    mod count {
        /// The lanes of the simulated order (the functions' `DOT2_LANES`).
        pub(super) const LANES: usize = super::DOT2_LANES;

        /// The elements a value covers: per lane a range [lo, hi) of lane positions
        /// (element i is position i / LANES of lane i % LANES), and the bias.
        #[derive(Clone, Copy)]
        struct Scope {
            lanes: [(u32, u32); LANES],
            bias: bool,
        }

        impl Scope {
            fn element(i: usize) -> Scope {
                let mut lanes = [(0, 0); LANES];
                let j = (i / LANES) as u32;
                lanes[i % LANES] = (j, j + 1);
                Scope { lanes, bias: false }
            }

            fn bias() -> Scope {
                Scope {
                    lanes: [(0, 0); LANES],
                    bias: true,
                }
            }

            /// The union of the scopes of a TwoSum's two operands (disjoint and adjacent).
            fn union(a: Scope, b: Scope) -> Scope {
                let mut lanes = a.lanes;
                for (x, y) in lanes.iter_mut().zip(b.lanes) {
                    if x.0 == x.1 {
                        *x = y;
                    } else if y.0 != y.1 {
                        assert!(x.1 == y.0 || y.1 == x.0, "scopes not adjacent");
                        *x = (x.0.min(y.0), x.1.max(y.1));
                    }
                }
                Scope {
                    lanes,
                    bias: a.bias || b.bias,
                }
            }
        }

        const NO_PARENT: usize = usize::MAX;

        /// The error sum's expression tree: the leaves are error terms (with their scope),
        /// the inner nodes roundings. A value that is zero for every input is `None`, and
        /// an addition with such an operand is exact (no node).
        #[derive(Default)]
        struct Tree {
            parent: Vec<usize>,
            leaves: Vec<(usize, Scope)>,
        }

        impl Tree {
            fn node(&mut self) -> usize {
                self.parent.push(NO_PARENT);
                self.parent.len() - 1
            }

            fn term(&mut self, s: Scope) -> Option<usize> {
                let v = self.node();
                self.leaves.push((v, s));
                Some(v)
            }

            /// fl(a + b): a rounding unless an operand is zero.
            fn add(&mut self, a: Option<usize>, b: Option<usize>) -> Option<usize> {
                let (Some(a), Some(b)) = (a, b) else {
                    return a.or(b);
                };
                let v = self.node();
                self.parent[a] = v;
                self.parent[b] = v;
                Some(v)
            }

            /// TwoSum of two chain values (`None`: zero): the sum's scope and the error
            /// term, zero when an operand is zero.
            fn two_sum(
                &mut self,
                a: Option<Scope>,
                b: Option<Scope>,
            ) -> (Option<Scope>, Option<usize>) {
                match (a, b) {
                    (Some(a), Some(b)) => {
                        let s = Scope::union(a, b);
                        (Some(s), self.term(s))
                    }
                    _ => (a.or(b), None),
                }
            }

            /// max over the elements i (and the bias) of W_i: the sum over the roundings of
            /// the number of terms in the rounding's result whose scope holds i, i.e. the
            /// sum over the terms whose scope holds i of the roundings above them.
            fn max_weight(&self, n: usize) -> u64 {
                // Parents come after their children.
                let mut above = vec![0u64; self.parent.len()];
                for v in (0..self.parent.len()).rev() {
                    if self.parent[v] != NO_PARENT {
                        above[v] = above[self.parent[v]] + 1;
                    }
                }
                let mut diff = vec![[0i64; LANES]; n.div_ceil(LANES) + 1];
                let mut bias = 0;
                for &(v, s) in &self.leaves {
                    for (l, &(lo, hi)) in s.lanes.iter().enumerate() {
                        diff[lo as usize][l] += above[v] as i64;
                        diff[hi as usize][l] -= above[v] as i64;
                    }
                    bias += s.bias as u64 * above[v];
                }
                let mut run = [0i64; LANES];
                let mut best = bias;
                for (j, row) in diff.iter().enumerate() {
                    for l in 0..LANES {
                        run[l] += row[l];
                        if j * LANES + l < n {
                            best = best.max(run[l] as u64);
                        }
                    }
                }
                best
            }
        }

        /// W of [`super::dot2`] over n products (`wide`: of [`super::dot2_wide`]), with or
        /// without the bias: its loops, with every product nonzero.
        pub(super) fn weight(n: usize, wide: bool, with_bias: bool) -> u64 {
            let mut t = Tree::default();
            let mut s = [None; LANES];
            let mut q = [None; LANES];
            for i in 0..n {
                let l = i % LANES;
                let (sum, r) = t.two_sum(s[l], Some(Scope::element(i)));
                s[l] = sum;
                q[l] = if wide {
                    let e = t.term(Scope::element(i)); // TwoProduct's error
                    let re = t.add(r, e);
                    t.add(q[l], re)
                } else {
                    t.add(q[l], r)
                };
            }
            let mut total = s[0];
            let mut err = q[0];
            for l in 1..LANES {
                let (sum, e) = t.two_sum(total, s[l]);
                total = sum;
                let eq = t.add(e, q[l]);
                err = t.add(err, eq);
            }
            if with_bias {
                let (_, e) = t.two_sum(total, Some(Scope::bias()));
                t.add(err, e);
            }
            t.max_weight(n)
        }
    }

    /// The closed forms of W in the module header (8 lanes; n products, for `wide` the
    /// k = n products of [`dot2_wide`]).
    fn weight_closed_form(n: usize, wide: bool) -> u64 {
        let n = n as u64;
        let m = n.div_ceil(8);
        match (wide, n <= 8) {
            (false, true) => n * (n + 1) / 2 - 1,
            (false, false) => m * (m - 1) / 2 + 9 * m + 33,
            (true, true) => n * (n - 1) / 2 + 3 * n,
            (true, false) => m * (m + 3) / 2 + 9 * m + 42,
        }
    }

    #[test]
    fn half_dot2_bound_counts_every_order() {
        // The header's proof needs W (1 + 2^-28) <= c^2 / 2 for the count c passed to
        // dot2_bound (n for dot2, 2k for dot2_wide); the closed forms claim more: at most
        // 0.36 c^2 / 2 (dot2) and 0.2 c^2 / 2 (dot2_wide).
        let mut ns: Vec<usize> = (1..=2048).collect();
        ns.extend([10_000, 65_536]);
        for wide in [false, true] {
            for with_bias in [false, true] {
                for &n in &ns {
                    let w = count::weight(n, wide, with_bias);
                    let form = weight_closed_form(n, wide);
                    let c = (if wide { 2 * n } else { n }) as f64;
                    let half = (c + 8.0) * (c + 8.0) / 2.0;
                    let case = format!("n {n}, wide {wide}, bias {with_bias}: W {w}");
                    assert!(w <= form, "{case} above the closed form {form}");
                    if with_bias && n % 8 == 0 && n >= 16 {
                        assert_eq!(w, form, "{case}: the closed form is exact here");
                    }
                    let margin = if wide { 0.2 } else { 0.36 };
                    assert!(form as f64 <= margin * half, "{case}: form {form}");
                    assert!(w as f64 * (1.0 + 2f64.powi(-28)) <= half, "{case}");
                }
            }
        }
    }
}
