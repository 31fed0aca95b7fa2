//! The two arithmetic types the transforms run in: f32 ([`Precision::F32`] and
//! [`Precision::Ozaki`]) and f64 ([`Precision::F64Internal`]). Only +, -, * and / are used,
//! never a fused multiply-add, so every device evaluates the same operation DAG to the same
//! bits.
//!
//! [`Precision::F32`]: super::Precision::F32
//! [`Precision::Ozaki`]: super::Precision::Ozaki
//! [`Precision::F64Internal`]: super::Precision::F64Internal

use crate::math::dd::{DD, round_odd};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A real type the FFT stages are generic over.
#[doc(hidden)]
pub trait FftScalar:
    Copy
    + Default
    + Send
    + Sync
    + PartialEq
    + std::fmt::Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + 'static
{
    const ZERO: Self;
    /// 1/sqrt(2) rounded to nearest in this type: the constant of the W8 butterfly.
    const FRAC_1_SQRT_2: Self;
    /// The odd-radix butterflies' constants (cos and sin of 2 pi k / R, R = 3, 5, 7)
    /// rounded to nearest in this type, in the layout of [`BFLY_F32_BITS`].
    const BFLY: [Self; BFLY_LEN];
    /// A double-double value rounded once to nearest in this type.
    fn from_dd(x: DD) -> Self;
    fn from_f32(x: f32) -> Self;
    /// An f64 value rounded once to nearest in this type.
    fn from_f64(x: f64) -> Self;
    fn to_f32(self) -> f32;
    /// The values as f32 where this type is f32 (the Ozaki products run in f32 only).
    fn as_f32_values(v: &mut [Cx<Self>]) -> Option<&mut [Cx<f32>]>;
}

/// Number of odd-radix butterfly constants.
#[doc(hidden)]
pub const BFLY_LEN: usize = 12;

/// Index of C_R_1 = cos(2 pi / R) in [`FftScalar::BFLY`]; S_R_k = sin(2 pi k / R) follows
/// the (R - 1) / 2 cosines: `BFLY[bfly_cos(R) + k - 1]` is C_R_k and
/// `BFLY[bfly_cos(R) + (R - 1) / 2 + k - 1]` is S_R_k.
#[doc(hidden)]
pub const fn bfly_cos(radix: usize) -> usize {
    match radix {
        3 => 0,
        5 => 2,
        7 => 6,
        _ => panic!("odd radix 3, 5 or 7"),
    }
}

/// The odd-radix butterfly constants rounded to nearest f32, as bit patterns: the output
/// of `tools/gen_fft_butterfly_consts.py` (mpmath at 300 bits, rounded by integer
/// arithmetic), pasted; `tests/fft_butterfly_consts.rs` checks these lines against the
/// generator and against `kernels/fft/butterflies.cuh`, and a unit test below against the
/// crate's double-double twiddles.
#[doc(hidden)]
pub const BFLY_F32_BITS: [u32; BFLY_LEN] = [
    0xBF00_0000, // C3_1 = cos(2 pi 1/3) = -0.5
    0x3F5D_B3D7, // S3_1 = sin(2 pi 1/3) = 0.86602540378443864676
    0x3E9E_377A, // C5_1 = cos(2 pi 1/5) = 0.3090169943749474241
    0xBF4F_1BBD, // C5_2 = cos(2 pi 2/5) = -0.8090169943749474241
    0x3F73_7871, // S5_1 = sin(2 pi 1/5) = 0.95105651629515357212
    0x3F16_7918, // S5_2 = sin(2 pi 2/5) = 0.58778525229247312917
    0x3F1F_9D07, // C7_1 = cos(2 pi 1/7) = 0.62348980185873353053
    0xBE63_DC87, // C7_2 = cos(2 pi 2/7) = -0.22252093395631440429
    0xBF66_A5E5, // C7_3 = cos(2 pi 3/7) = -0.90096886790241912624
    0x3F48_261C, // S7_1 = sin(2 pi 1/7) = 0.78183148246802980871
    0x3F79_94E0, // S7_2 = sin(2 pi 2/7) = 0.97492791218182360702
    0x3EDE_2602, // S7_3 = sin(2 pi 3/7) = 0.43388373911755812048
];

/// The same constants rounded to nearest f64.
#[doc(hidden)]
pub const BFLY_F64_BITS: [u64; BFLY_LEN] = [
    0xBFE0_0000_0000_0000, // C3_1 = cos(2 pi 1/3)
    0x3FEB_B67A_E858_4CAA, // S3_1 = sin(2 pi 1/3)
    0x3FD3_C6EF_372F_E950, // C5_1 = cos(2 pi 1/5)
    0xBFE9_E377_9B97_F4A8, // C5_2 = cos(2 pi 2/5)
    0x3FEE_6F0E_1344_54FF, // S5_1 = sin(2 pi 1/5)
    0x3FE2_CF23_0475_5A5E, // S5_2 = sin(2 pi 2/5)
    0x3FE3_F3A0_E28B_EDD1, // C7_1 = cos(2 pi 1/7)
    0xBFCC_7B90_E302_4582, // C7_2 = cos(2 pi 2/7)
    0xBFEC_D4BC_A9CB_5C71, // C7_3 = cos(2 pi 3/7)
    0x3FE9_04C3_7505_DE4B, // S7_1 = sin(2 pi 1/7)
    0x3FEF_329C_0558_E969, // S7_2 = sin(2 pi 2/7)
    0x3FDB_C4C0_4D71_ABC1, // S7_3 = sin(2 pi 3/7)
];

const fn bfly_f32() -> [f32; BFLY_LEN] {
    let mut a = [0.0; BFLY_LEN];
    let mut i = 0;
    while i < BFLY_LEN {
        a[i] = f32::from_bits(BFLY_F32_BITS[i]);
        i += 1;
    }
    a
}

const fn bfly_f64() -> [f64; BFLY_LEN] {
    let mut a = [0.0; BFLY_LEN];
    let mut i = 0;
    while i < BFLY_LEN {
        a[i] = f64::from_bits(BFLY_F64_BITS[i]);
        i += 1;
    }
    a
}

/// A complex value in registers (the buffers themselves are split re / im arrays); its
/// arithmetic is in `butterflies`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[doc(hidden)]
pub struct Cx<T> {
    pub re: T,
    pub im: T,
}

impl FftScalar for f32 {
    const ZERO: f32 = 0.0;
    // 0x3F3504F3 = 0.70710677, the nearest f32 to 1/sqrt(2) = 0.7071067811865476.
    const FRAC_1_SQRT_2: f32 = f32::from_bits(0x3F35_04F3);
    const BFLY: [f32; BFLY_LEN] = bfly_f32();
    #[inline(always)]
    fn from_dd(x: DD) -> f32 {
        // Rounding to odd at 53 bits, then to nearest at 24 bits, is one correct rounding.
        round_odd(x) as f32
    }
    #[inline(always)]
    fn from_f32(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn as_f32_values(v: &mut [Cx<f32>]) -> Option<&mut [Cx<f32>]> {
        Some(v)
    }
}

impl FftScalar for f64 {
    const ZERO: f64 = 0.0;
    // 0x3FE6A09E667F3BCD = 0.7071067811865476, the nearest f64 to 1/sqrt(2).
    const FRAC_1_SQRT_2: f64 = f64::from_bits(0x3FE6_A09E_667F_3BCD);
    const BFLY: [f64; BFLY_LEN] = bfly_f64();
    #[inline(always)]
    fn from_dd(x: DD) -> f64 {
        // A normalized double-double's high part is its value rounded to nearest (up to
        // exact ties, which sin and cos of rational multiples of pi other than the exact
        // cases 0, 1/2, 1 never produce).
        x.hi + x.lo
    }
    #[inline(always)]
    fn from_f32(x: f32) -> f64 {
        x as f64
    }
    #[inline(always)]
    fn from_f64(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn as_f32_values(_: &mut [Cx<f64>]) -> Option<&mut [Cx<f32>]> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frac_1_sqrt_2_is_the_nearest_value() {
        // Checked by squaring in f64 (exact for an f32) against 1/2.
        let c = f32::FRAC_1_SQRT_2 as f64;
        let below = f32::from_bits(f32::FRAC_1_SQRT_2.to_bits() - 1) as f64;
        let above = f32::from_bits(f32::FRAC_1_SQRT_2.to_bits() + 1) as f64;
        let err = |v: f64| (v * v - 0.5).abs();
        assert!(err(c) < err(below) && err(c) < err(above));
        assert_eq!(f64::FRAC_1_SQRT_2, std::f64::consts::FRAC_1_SQRT_2);
    }

    /// The odd-radix constants are the twiddles' correctly rounded cos and sin
    /// (twiddles.rs: a double-double evaluation rounded once), an oracle independent of
    /// the generator script.
    #[test]
    fn butterfly_constants_are_correctly_rounded() {
        use crate::fft::twiddles::twiddle;
        for r in [3usize, 5, 7] {
            let (c0, m) = (bfly_cos(r), (r - 1) / 2);
            for k in 1..=m {
                let (c32, s32) = twiddle::<f32>(k as u64, r as u64);
                let (c64, s64) = twiddle::<f64>(k as u64, r as u64);
                assert_eq!(f32::BFLY[c0 + k - 1].to_bits(), c32.to_bits(), "C{r}_{k}");
                assert_eq!(
                    f32::BFLY[c0 + m + k - 1].to_bits(),
                    (-s32).to_bits(),
                    "S{r}_{k}"
                );
                assert_eq!(f64::BFLY[c0 + k - 1].to_bits(), c64.to_bits(), "C{r}_{k}");
                assert_eq!(
                    f64::BFLY[c0 + m + k - 1].to_bits(),
                    (-s64).to_bits(),
                    "S{r}_{k}"
                );
            }
        }
    }
}
