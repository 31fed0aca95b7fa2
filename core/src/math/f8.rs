//! The float8 E4M3 format (the "fn" variant of OCP FP8, `float8::F8E4M3`, candle's
//! `DType::F8E4M3`, PyTorch's `float8_e4m3fn`): 1 sign bit, 4 exponent bits (bias 7),
//! 3 fraction bits, no infinities, NaN = S.1111.111. Values: m 2^-9 for the subnormals
//! (field 0, m = 0..7), (8 + m) 2^(field - 10) otherwise; the largest finite is 448.
//!
//! Widening to f32 is exact ([`f8e4m3_to_f32`]); the narrowing [`f32_to_f8e4m3`] rounds
//! once, to nearest even, from the exact f32 value, with an explicit rule for what does
//! not fit ([`Overflow`]). Integer and exact f64 operations only, mirrored in
//! `kernels/math/f8.cuh`.

use super::round::{pow2, round_magnitude};

/// What a value beyond E4M3's range (after rounding: above 448) becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overflow {
    /// +-448, the largest finite value, and +-inf too: the `float8` crate's and candle's
    /// conversion, and CUDA's `__NV_SATFINITE`.
    Saturate,
    /// NaN, and +-inf too: PyTorch's `float8_e4m3fn` cast (the format has no infinity).
    Nan,
}

/// The canonical NaN of E4M3 (positive sign).
pub const F8E4M3_NAN: u8 = 0x7F;
/// 448, the largest finite E4M3 value, without its sign.
const MAX_BITS: u8 = 0x7E;

/// The exact f32 value of E4M3 bits (NaN as f32's canonical quiet NaN).
#[inline(always)]
pub fn f8e4m3_to_f32(bits: u8) -> f32 {
    let negative = bits & 0x80 != 0;
    let field = ((bits >> 3) & 0xF) as i32;
    let frac = (bits & 7) as i32;
    if field == 0xF && frac == 7 {
        return f32::from_bits(0x7FC0_0000);
    }
    // m 2^-9 (subnormal) or (8 + m) 2^(field - 10): small integers times powers of two,
    // exact in f32.
    let mag = if field == 0 {
        frac as f32 * f32::from_bits(0x3B00_0000) // 2^-9
    } else {
        (8 + frac) as f32 * pow2(field - 10) as f32
    };
    if negative { -mag } else { mag }
}

/// x rounded once to E4M3 (to nearest, ties to even), NaN as [`F8E4M3_NAN`]; values that
/// round above 448, and infinities, as `overflow` says. The sign of a zero result is x's.
#[inline(always)]
pub fn f32_to_f8e4m3(x: f32, overflow: Overflow) -> u8 {
    if x.is_nan() {
        return F8E4M3_NAN;
    }
    let sign = ((x.to_bits() >> 24) & 0x80) as u8;
    let a = (x as f64).abs();
    // 4 significant bits, smallest normal 2^-6; infinity stays infinite.
    let r = if a.is_finite() {
        round_magnitude(a, 4, -6)
    } else {
        a
    };
    if r > 448.0 {
        return match overflow {
            Overflow::Saturate => sign | MAX_BITS,
            Overflow::Nan => F8E4M3_NAN,
        };
    }
    sign | encode_exact(r)
}

/// The bits (without sign) of a non-negative E4M3 value r <= 448.
#[inline(always)]
fn encode_exact(r: f64) -> u8 {
    if r < f64::from_bits(0x3F90_0000_0000_0000) {
        // r < 2^-6: a multiple of 2^-9 below 8.
        (r * 512.0) as u8
    } else {
        let b = r.to_bits();
        let e = ((b >> 52) as i32) - 1023; // -6..=8
        let frac = ((b >> 49) & 7) as u8;
        (((e + 7) as u8) << 3) | frac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_matches_the_float8_crate() {
        for b in 0..=255u8 {
            let ours = f8e4m3_to_f32(b);
            let theirs = float8::F8E4M3::from_bits(b).to_f32();
            if theirs.is_nan() {
                assert!(ours.is_nan());
                assert_eq!(ours.to_bits(), 0x7FC0_0000);
            } else {
                assert_eq!(ours.to_bits(), theirs.to_bits(), "bits {b:#x}");
            }
        }
    }

    #[test]
    fn every_value_roundtrips() {
        for b in 0..=255u8 {
            let x = f8e4m3_to_f32(b);
            if x.is_nan() {
                continue;
            }
            assert_eq!(f32_to_f8e4m3(x, Overflow::Nan), b, "{x}");
        }
    }

    #[test]
    fn saturation_matches_the_float8_crate() {
        // float8 rounds an f32 once (through the exact f64) and saturates to 448,
        // infinities included; its NaN keeps the sign, ours is canonical.
        for bits in (0..=u32::MAX).step_by(997) {
            let x = f32::from_bits(bits);
            let ours = f32_to_f8e4m3(x, Overflow::Saturate);
            let theirs = float8::F8E4M3::from_f32(x).to_bits();
            if x.is_nan() {
                assert_eq!(ours, F8E4M3_NAN);
            } else {
                assert_eq!(ours, theirs, "x = {x:e}");
            }
        }
        assert_eq!(f32_to_f8e4m3(f32::INFINITY, Overflow::Saturate), 0x7E);
        assert_eq!(f32_to_f8e4m3(f32::NEG_INFINITY, Overflow::Saturate), 0xFE);
    }

    #[test]
    fn overflow_to_nan() {
        assert_eq!(f32_to_f8e4m3(464.0, Overflow::Nan), 0x7E); // tie to even: 448
        assert_eq!(f32_to_f8e4m3(464.01, Overflow::Nan), F8E4M3_NAN);
        assert_eq!(f32_to_f8e4m3(-1e30, Overflow::Nan), F8E4M3_NAN);
        assert_eq!(f32_to_f8e4m3(f32::INFINITY, Overflow::Nan), F8E4M3_NAN);
        assert_eq!(f32_to_f8e4m3(-1e-30, Overflow::Nan), 0x80);
    }
}
