//! Rotary tables: the core's (`repro_core::rope::tables`, whose header gives the exact
//! operation sequence: transformers' f32 steps, the two transcendental steps correctly
//! rounded), with candle's error type.

pub(crate) use repro_core::rope::tables::fill_rows;
pub use repro_core::rope::tables::{
    ENTRY_TEST_ERR, RopeConfig, RopeFreqs, RopeScaling, angle, cos_sin_entry,
};

/// theta^e correctly rounded to f32, for a normal theta > 0 and |e| <= 1: the core's
/// [`repro_core::rope::pow_f32`] (its documentation has the method and the error bound).
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_repro::rope::pow_f32;
///
/// assert_eq!(pow_f32(10000.0, 0.5)?, 100.0); // exact powers come out exact
/// // 500000^(1/4) = 26.59147948... correctly rounded (bits from mpmath).
/// assert_eq!(pow_f32(500000.0, 0.25)?, f32::from_bits(0x41D4_BB5A));
/// assert!(pow_f32(-1.0, 0.5).is_err() && pow_f32(2.0, 1.5).is_err());
/// # Ok(()) }
/// ```
pub fn pow_f32(theta: f32, e: f32) -> candle_core::Result<f32> {
    repro_core::rope::pow_f32(theta, e).map_err(crate::ops::core_error)
}

/// The inverse frequencies and attention factor of a config: the core's
/// [`repro_core::rope::rope_freqs`].
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_repro::rope::{RopeConfig, rope_freqs};
///
/// let plain = rope_freqs(&RopeConfig::new(500000.0, 128))?;
/// let llama = rope_freqs(&RopeConfig::llama31(128))?;
/// assert_eq!((plain.inv_freq.len(), plain.attention_factor), (64, 1.0));
/// // Llama 3.1 keeps the high frequencies (short wavelengths) and divides the lowest by 8.
/// assert_eq!(llama.inv_freq[0], plain.inv_freq[0]);
/// assert_eq!(llama.inv_freq[63], plain.inv_freq[63] / 8.0);
/// assert!(rope_freqs(&RopeConfig::new(10000.0, 7)).is_err()); // odd rotary_dim
/// # Ok(()) }
/// ```
pub fn rope_freqs(cfg: &RopeConfig) -> candle_core::Result<RopeFreqs> {
    repro_core::rope::rope_freqs(cfg).map_err(crate::ops::core_error)
}
