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
pub(crate) trait FftScalar:
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
    /// A double-double value rounded once to nearest in this type.
    fn from_dd(x: DD) -> Self;
    fn from_f32(x: f32) -> Self;
    /// An f64 value rounded once to nearest in this type.
    fn from_f64(x: f64) -> Self;
    fn to_f32(self) -> f32;
    /// The values as f32 where this type is f32 (the Ozaki products run in f32 only).
    fn as_f32_values(v: &mut [Cx<Self>]) -> Option<&mut [Cx<f32>]>;
}

/// A complex value in registers (the buffers themselves are split re / im arrays); its
/// arithmetic is in `butterflies`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Cx<T> {
    pub re: T,
    pub im: T,
}

impl FftScalar for f32 {
    const ZERO: f32 = 0.0;
    // 0x3F3504F3 = 0.70710677, the nearest f32 to 1/sqrt(2) = 0.7071067811865476.
    const FRAC_1_SQRT_2: f32 = f32::from_bits(0x3F35_04F3);
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
}
