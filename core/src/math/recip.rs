//! 1/d without an f64 division: one f32 division as the seed, one Newton step in f64.
//!
//! An f64 division is the slowest vector operation the fast paths would use (about twice
//! the cost of the rest of sigmoid on AVX-512); the f32 division runs on twice the lanes
//! at a fraction of the latency.
//!
//! # Algorithm and error bound
//! r0 = 1/fl32(d) rounded to f32; e = 1 - d r0; r = r0 + r0 e, the last two as
//! multiply-adds (`super::madd`). With fl32(d) = d (1 + d1) and the f32 quotient (1 + d2),
//! |d1|, |d2| <= 2^-24: r0 = (1 + a)/d with |a| <= 2^-23 (1 + 2^-24).
//! * Fused: the exact residual 1 - d r0 = -a rounds once, e = -a (1 + t1), |t1| <= u =
//!   2^-53, and r = r0 (1 + e)(1 + t2) = (1 - a^2 - a t1 (1 + a))(1 + t2)/d, |t2| <= u:
//!   relative error <= a^2 + u 2^-22.9 + u (1 + 2^-45) < 2^-45.9.
//! * Unfused: fl(d r0) = (1 + a)(1 + t1) lies within 2^-22 of 1, so 1 - fl(d r0) is exact
//!   (Sterbenz) and r0 (1 + e) = (1 - a^2 - t1 (1 + a)^2)/d; the product r0 e
//!   (|e| < 2^-22.9) and the sum each round once: <= a^2 + 2u (1 + 2^-21) + u 2^-22.9
//!   < 2^-45.9.
//!
//! Both stated as [`RECIP_REL_ERR`] = 2^-45.
//!
//! Valid for 2^-125 <= d <= 2^125 (fl32(d) and its reciprocal are normal f32s); every
//! caller passes d in [1, 3]. Only IEEE operations, in this order, on every device.

use super::madd::madd;

/// Relative error bound of [`recip`] (module header): 2^-45 (0x3D20000000000000).
#[doc(hidden)]
pub const RECIP_REL_ERR: f64 = f64::from_bits(0x3D20_0000_0000_0000);

/// 1/d within [`RECIP_REL_ERR`], for 2^-125 <= d <= 2^125. Total: any other d gives some
/// value (inf, NaN, 0) and never panics.
#[inline(always)]
#[doc(hidden)]
pub fn recip<const FUSED: bool>(d: f64) -> f64 {
    let r0 = (1.0f32 / (d as f32)) as f64;
    let e = madd::<FUSED>(-d, r0, 1.0);
    madd::<FUSED>(r0, e, r0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound against an exact check: r d - 1 is computed exactly as a double-double
    /// (r and d are doubles, so r d = p + q with q from the exact product split).
    #[test]
    fn error_bound_on_a_dense_sample() {
        use crate::math::dd::two_prod;
        let mut worst = 0.0f64;
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        for i in 0..2_000_000u64 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            // d in [1, 4): every significand pattern, plus the binade edges.
            let d = if i < 8 {
                [
                    1.0,
                    2.0,
                    3.0,
                    4.0 - f64::EPSILON * 2.0,
                    1.5,
                    1.0 + f64::EPSILON,
                    2.5,
                    3.5,
                ][i as usize]
            } else {
                f64::from_bits(0x3FF0_0000_0000_0000 | (s >> 12))
                    * if s & 1 == 0 { 1.0 } else { 2.0 }
            };
            // Both multiply-add flavours.
            for r in [recip::<true>(d), recip::<false>(d)] {
                let (p, q) = two_prod(r, d);
                let rel = ((p - 1.0) + q).abs(); // |r d - 1| = |r - 1/d| d
                worst = worst.max(rel);
            }
        }
        assert!(worst <= RECIP_REL_ERR, "worst {worst:e}");
        // The bound is not loose by orders of magnitude: the seed's error does show.
        assert!(worst >= RECIP_REL_ERR / 64.0, "worst {worst:e}");
    }
}
