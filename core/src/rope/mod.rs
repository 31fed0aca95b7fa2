//! Rotary position embeddings over plain slices: correctly rounded cos/sin tables and the
//! rotation in the three layouts of `candle_nn::rotary_emb` (`rope`, `rope_i`, `rope_thd`),
//! the definition the adapters' ops share (candle-repro's `rope` module, burn-repro's
//! `rope` functions).
//!
//! * Tables ([`tables`]): Hugging Face transformers' Llama rotary embedding (default,
//!   linear, llama3 and YaRN scaling) with every f32 step done as PyTorch does it on the
//!   CPU and the two transcendental steps correctly rounded: `theta^e` to f32
//!   ([`pow_f32`]), and `cos(angle) * attention_factor` (and sin) to the output dtype, once
//!   ([`cos_sin_entry`]). [`rope_freqs`] gives a config's frequencies, [`fill_rows`] the
//!   rows of any positions.
//! * Rotation ([`apply`]): every output is the exact `x1*c - x2*s` or `x1*s + x2*c` of the
//!   stored inputs rounded once to the dtype (the scheme is in [`apply`]'s header); the
//!   backward pass is the rotation by -theta (`sgn = -1`) with the same scheme.

pub mod apply;
pub mod tables;

pub use apply::{Geometry, RopeLayout};
pub use tables::{
    RopeConfig, RopeFreqs, RopeScaling, angle, cos_sin_entry, fill_rows, pow_f32, rope_freqs,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_cr_is_correct_rounding() {
        // 1 + 2^-24 + 2^-60: the f64 sum drops 2^-60, a plain f32 rounding of the f64 sum
        // would tie to 1; the exact value is above the midpoint.
        let p = 1.0 + f64::from_bits(0x3E70_0000_0000_0000); // 1 + 2^-24
        let q = f64::from_bits(0x3C30_0000_0000_0000); // 2^-60
        let y: f32 = apply::sum_cr(p, q);
        assert_eq!(y, 1.0 + f32::EPSILON);
        let y: f32 = apply::sum_cr(p, -q);
        assert_eq!(y, 1.0);
        let y: f32 = apply::sum_cr(p, 0.0);
        assert_eq!(y, 1.0); // tie to even
    }

    #[test]
    fn pow_exact_cases() {
        assert_eq!(pow_f32(10000.0, 0.5).unwrap(), 100.0);
        assert_eq!(pow_f32(10000.0, 0.0).unwrap(), 1.0);
        assert_eq!(pow_f32(10000.0, 0.25).unwrap(), 10.0);
    }

    #[test]
    fn entry_at_zero() {
        let (c, s): (f32, f32) = cos_sin_entry(0.0, 1.0);
        assert_eq!((c, s), (1.0, 0.0));
    }
}
