//! Rotary tables: inverse frequencies (with the scalings real checkpoints use) and the
//! correctly rounded cos/sin entries.
//!
//! Every f32 step follows Hugging Face transformers' `modeling_rope_utils` on the CPU
//! (PyTorch f32 tensor ops, Python scalars cast to f32 where PyTorch casts them; `a / t`
//! for a scalar `a` is `reciprocal(t) * a` there, and is done the same way here), except
//! that the two transcendental steps are correctly rounded instead of approximated:
//! * `theta^e` (f32 theta and exponent) rounded once to f32 ([`pow_f32`]);
//! * `cos(angle) * attention_factor` and `sin(...)` rounded once to the output dtype
//!   ([`cos_sin_entry`]), where PyTorch rounds cos to f32, multiplies, then rounds again.
//!
//! The host-side f64 scalars of YaRN (correction range, mscale) use the double-double
//! natural logarithm of the math core rounded to f64, which is what `math.log` returns
//! wherever the platform libm is correctly rounded (glibc's log is, on these arguments).

use crate::math::Format;
use crate::math::dd::{DD, round_odd};
use crate::math::exp::exp_dd;
use crate::math::log::log_dd;
use crate::math::madd::TARGET_FUSES;
use crate::math::trig::{Cos, Sin, sincos_dd};
use crate::math::unary::CrUnary;
use crate::{Error, Result};

/// Scaling of the rotary frequencies, as in a Hugging Face `rope_scaling` config entry.
/// Fields are the JSON values (Python floats, hence f64); they are cast to f32 where PyTorch
/// casts them.
#[derive(Debug, Clone, PartialEq)]
pub enum RopeScaling {
    /// Plain RoPE (`rope_type: default`).
    None,
    /// `rope_type: linear`: inv_freq / factor.
    Linear {
        /// The divisor of every inverse frequency (cast to f32 first), finite and > 0.
        factor: f64,
    },
    /// `rope_type: llama3` (Llama 3.1 and later).
    Llama3 {
        /// Divisor of the low frequencies (wavelength above
        /// `original_max_position_embeddings / low_freq_factor`).
        factor: f64,
        /// Sets the long-wavelength bound `original_max_position_embeddings /
        /// low_freq_factor`, beyond which a frequency is divided by `factor`.
        low_freq_factor: f64,
        /// Sets the short-wavelength bound `original_max_position_embeddings /
        /// high_freq_factor`, below which a frequency is kept; between the bounds it is
        /// interpolated smoothly. Must exceed `low_freq_factor`.
        high_freq_factor: f64,
        /// The pre-training context length (in positions) the wavelengths are compared
        /// with; not 0.
        original_max_position_embeddings: usize,
    },
    /// `rope_type: yarn`. `beta_fast`/`beta_slow` default to 32 and 1 in transformers,
    /// `truncate` to true; `attention_factor`, `mscale`, `mscale_all_dim` are optional.
    Yarn {
        /// Context extension factor: interpolated frequencies are inv_freq / factor.
        factor: f64,
        /// The pre-training context length (in positions) the correction range is measured
        /// over; not 0.
        original_max_position_embeddings: usize,
        /// Rotations over the original context that set the low end of the correction
        /// range: the dimensions that rotate faster keep their frequency (extrapolation).
        beta_fast: f64,
        /// Rotations over the original context that set the high end of the correction
        /// range: the dimensions that rotate slower are interpolated (inv_freq / factor);
        /// a linear ramp blends the two in between.
        beta_slow: f64,
        /// With `mscale_all_dim` (both non-zero) and no `attention_factor`: the attention
        /// factor is get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim), where
        /// get_mscale(s, m) = 0.1 m ln s + 1 (1 for s <= 1). Ignored on its own.
        mscale: Option<f64>,
        /// The denominator's `m` of the ratio above.
        mscale_all_dim: Option<f64>,
        /// Multiplier of every cos and sin entry, overriding `mscale`; when neither is given,
        /// get_mscale(factor, 1) = 0.1 ln(factor) + 1.
        attention_factor: Option<f64>,
        /// Round the correction range outwards to whole dimensions (floor the low end, ceil
        /// the high end), as transformers does by default.
        truncate: bool,
    },
}

/// What the rotary tables depend on.
#[derive(Debug, Clone, PartialEq)]
pub struct RopeConfig {
    /// `rope_theta` (10000 for Llama 2, 500000 for Llama 3). Taken as f32, as PyTorch's
    /// `base ** tensor` does.
    pub theta: f32,
    /// Number of rotated features per head (head_dim * partial_rotary_factor), even.
    pub rotary_dim: usize,
    /// The frequency scaling of the checkpoint ([`RopeScaling::None`] for plain RoPE).
    pub scaling: RopeScaling,
}

impl RopeConfig {
    /// Plain RoPE.
    pub fn new(theta: f32, rotary_dim: usize) -> RopeConfig {
        RopeConfig {
            theta,
            rotary_dim,
            scaling: RopeScaling::None,
        }
    }

    /// Llama 3.1 / 3.2 / 3.3: theta 500000, llama3 scaling factor 8, low 1, high 4,
    /// original context 8192.
    pub fn llama31(rotary_dim: usize) -> RopeConfig {
        RopeConfig {
            theta: 500000.0,
            rotary_dim,
            scaling: RopeScaling::Llama3 {
                factor: 8.0,
                low_freq_factor: 1.0,
                high_freq_factor: 4.0,
                original_max_position_embeddings: 8192,
            },
        }
    }

    /// YaRN with transformers' defaults (beta_fast 32, beta_slow 1, truncate, attention
    /// factor 0.1 ln(factor) + 1).
    pub fn yarn(theta: f32, rotary_dim: usize, factor: f64, original: usize) -> RopeConfig {
        RopeConfig {
            theta,
            rotary_dim,
            scaling: RopeScaling::Yarn {
                factor,
                original_max_position_embeddings: original,
                beta_fast: 32.0,
                beta_slow: 1.0,
                mscale: None,
                mscale_all_dim: None,
                attention_factor: None,
                truncate: true,
            },
        }
    }
}

/// Inverse frequencies (rotary_dim / 2 of them) and the attention factor (1 except YaRN).
#[derive(Debug, Clone, PartialEq)]
pub struct RopeFreqs {
    /// inv_freq_i for i < rotary_dim / 2: the angle in radians per position of feature pair
    /// i, as the f32 values transformers computes (the angle at position p is
    /// f32(inv_freq_i * f32(p)), see [`angle`]).
    pub inv_freq: Vec<f32>,
    /// Multiplier of every cos and sin entry (YaRN's mscale; 1 otherwise), applied before
    /// the entry's single rounding ([`cos_sin_entry`]).
    pub attention_factor: f32,
}

fn bad(msg: String) -> Error {
    Error::new(format!("rope: {msg}"))
}

/// 2^-90 (0x3A50000000000000): the error bound used in the rounding test of the power. The
/// double-double power is within 2^-93 (see [`pow_f32`]).
const POW_TEST_ERR: f64 = f64::from_bits(0x3A50_0000_0000_0000);

/// theta^e correctly rounded to f32, for a normal theta > 0 and |e| <= 1 (the exponents
/// of the tables are in [0, 1)).
///
/// exp(e * ln theta) in double-double: ln theta within 2^-100 relative, the product e * ln
/// (one DD-by-f64 product, 2^-104) has absolute error below |e ln theta| 2^-99.9, which
/// exp turns into a relative error of the same size, plus exp's own 2^-102. With
/// |e ln theta| <= 88.8 < 2^6.5 the result is within 2^-93. The rounding test uses 2^-90:
/// if the rounding of both ends of [y - 2^-90 y, y + 2^-90 y] agree, the result is the
/// correctly rounded power; otherwise an error is returned (never seen: the table tests
/// compare every entry with MPFR).
///
/// ```rust
/// # fn main() -> repro_core::Result<()> {
/// use repro_core::rope::pow_f32;
///
/// assert_eq!(pow_f32(10000.0, 0.5)?, 100.0); // exact powers come out exact
/// // 500000^(1/4) = 26.59147948... correctly rounded (bits from mpmath).
/// assert_eq!(pow_f32(500000.0, 0.25)?, f32::from_bits(0x41D4_BB5A));
/// assert!(pow_f32(-1.0, 0.5).is_err() && pow_f32(2.0, 1.5).is_err());
/// # Ok(()) }
/// ```
pub fn pow_f32(theta: f32, e: f32) -> Result<f32> {
    if !(theta > 0.0 && theta.is_finite() && e.is_finite()) {
        return Err(bad(format!(
            "rope_theta^e needs theta > 0 finite, got {theta}^{e}"
        )));
    }
    if e.abs() > 1.0 || !theta.is_normal() {
        return Err(bad(format!(
            "rope_theta^e needs |e| <= 1 and a normal theta: {theta}^{e}"
        )));
    }
    let l = log_dd(DD::from_f64(theta as f64));
    let y = exp_dd(l.mul_f64(e as f64));
    let d = y.hi.abs() * POW_TEST_ERR;
    let lo = <f32 as Format>::round(round_odd(y.add_f64(-d)));
    let hi = <f32 as Format>::round(round_odd(y.add_f64(d)));
    if lo.to_bits() != hi.to_bits() || !lo.is_normal() {
        return Err(bad(format!(
            "cannot decide the rounding of {theta}^{e} (please report)"
        )));
    }
    Ok(lo)
}

/// ln x rounded to f64 (Python's `math.log` on a correctly rounding libm).
fn ln_f64(x: f64) -> f64 {
    let l = log_dd(DD::from_f64(x));
    l.hi + l.lo
}

/// transformers' `_compute_default_rope_parameters`: inv_freq_i = 1 / theta^(f32(2i) /
/// f32(dim)), the power correctly rounded, the rest f32 IEEE operations.
fn default_inv_freq(theta: f32, dim: usize) -> Result<Vec<f32>> {
    (0..dim / 2)
        .map(|i| {
            let e = (2 * i) as f32 / dim as f32;
            Ok(1.0f32 / pow_f32(theta, e)?)
        })
        .collect()
}

/// YaRN's `get_mscale` in f64.
fn yarn_get_mscale(scale: f64, mscale: f64) -> f64 {
    if scale <= 1.0 {
        1.0
    } else {
        0.1 * mscale * ln_f64(scale) + 1.0
    }
}

/// 2 * pi as the f64 Python computes (0x401921FB54442D18 = 6.283185307179586).
const TWO_PI_F64: f64 = f64::from_bits(0x4019_21FB_5444_2D18);
/// pi as an f64 (0x400921FB54442D18 = 3.141592653589793).
const PI_F64: f64 = f64::from_bits(0x4009_21FB_5444_2D18);

/// The inverse frequencies and attention factor of a config (see the module documentation
/// for the exact operation sequence).
///
/// ```rust
/// # fn main() -> repro_core::Result<()> {
/// use repro_core::rope::{RopeConfig, rope_freqs};
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
pub fn rope_freqs(cfg: &RopeConfig) -> Result<RopeFreqs> {
    let dim = cfg.rotary_dim;
    if dim == 0 || !dim.is_multiple_of(2) {
        return Err(bad(format!(
            "rotary_dim must be even and positive, got {dim}"
        )));
    }
    let theta = cfg.theta;
    let positive = |name: &str, v: f64| -> Result<()> {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(bad(format!("{name} must be finite and positive, got {v}")))
        }
    };
    match &cfg.scaling {
        RopeScaling::None => Ok(RopeFreqs {
            inv_freq: default_inv_freq(theta, dim)?,
            attention_factor: 1.0,
        }),
        RopeScaling::Linear { factor } => {
            positive("linear factor", *factor)?;
            let f = *factor as f32;
            let inv = default_inv_freq(theta, dim)?;
            Ok(RopeFreqs {
                inv_freq: inv.into_iter().map(|v| v / f).collect(),
                attention_factor: 1.0,
            })
        }
        RopeScaling::Llama3 {
            factor,
            low_freq_factor,
            high_freq_factor,
            original_max_position_embeddings,
        } => {
            positive("llama3 factor", *factor)?;
            positive("llama3 low_freq_factor", *low_freq_factor)?;
            positive("llama3 high_freq_factor", *high_freq_factor)?;
            if high_freq_factor <= low_freq_factor || *original_max_position_embeddings == 0 {
                return Err(bad(format!(
                    "llama3 scaling needs high_freq_factor > low_freq_factor and a context length, got {:?}",
                    cfg.scaling
                )));
            }
            let old = *original_max_position_embeddings as f64;
            // Python doubles, compared with f32 tensors after a cast to f32.
            let low_wavelen = (old / low_freq_factor) as f32;
            let high_wavelen = (old / high_freq_factor) as f32;
            let factor = *factor as f32;
            let low_f = *low_freq_factor as f32;
            let span = (high_freq_factor - low_freq_factor) as f32;
            let old32 = old as f32;
            let two_pi = TWO_PI_F64 as f32;
            let inv = default_inv_freq(theta, dim)?;
            let out = inv
                .into_iter()
                .map(|f| {
                    let wavelen = (1.0 / f) * two_pi; // 2*pi / t = reciprocal(t) * 2*pi
                    let llama = if wavelen > low_wavelen { f / factor } else { f };
                    let smooth = ((1.0 / wavelen) * old32 - low_f) / span;
                    let smoothed = (1.0 - smooth) * llama / factor + smooth * llama;
                    // torch: ~(wavelen < high) * ~(wavelen > low), kept literally (NaN-safe)
                    #[allow(clippy::neg_cmp_op_on_partial_ord)]
                    let medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
                    if medium { smoothed } else { llama }
                })
                .collect();
            Ok(RopeFreqs {
                inv_freq: out,
                attention_factor: 1.0,
            })
        }
        RopeScaling::Yarn {
            factor,
            original_max_position_embeddings,
            beta_fast,
            beta_slow,
            mscale,
            mscale_all_dim,
            attention_factor,
            truncate,
        } => {
            positive("yarn factor", *factor)?;
            positive("yarn beta_fast", *beta_fast)?;
            positive("yarn beta_slow", *beta_slow)?;
            if *original_max_position_embeddings == 0 {
                return Err(bad("yarn needs original_max_position_embeddings".into()));
            }
            let af = match (attention_factor, mscale, mscale_all_dim) {
                (Some(a), _, _) => *a,
                (None, Some(m), Some(ma)) if *m != 0.0 && *ma != 0.0 => {
                    yarn_get_mscale(*factor, *m) / yarn_get_mscale(*factor, *ma)
                }
                _ => yarn_get_mscale(*factor, 1.0),
            };
            positive("yarn attention factor", af)?;
            let base = theta as f64;
            let maxpos = *original_max_position_embeddings as f64;
            let corr_dim = |rot: f64| -> f64 {
                (dim as f64 * ln_f64(maxpos / (rot * 2.0 * PI_F64))) / (2.0 * ln_f64(base))
            };
            let mut low = corr_dim(*beta_fast);
            let mut high = corr_dim(*beta_slow);
            if *truncate {
                low = low.floor();
                high = high.ceil();
            }
            let low = low.max(0.0);
            let mut high = high.min((dim - 1) as f64);
            if low == high {
                high += 0.001;
            }
            let low32 = low as f32;
            let span = (high - low) as f32;
            let factor32 = *factor as f32;
            let out = (0..dim / 2)
                .map(|i| {
                    let e = (2 * i) as f32 / dim as f32;
                    let pos_freq = pow_f32(theta, e)?;
                    let extrap = 1.0f32 / pos_freq;
                    let interp = 1.0f32 / (factor32 * pos_freq);
                    let ramp = ((i as f32 - low32) / span).clamp(0.0, 1.0);
                    let ef = 1.0 - ramp;
                    Ok(interp * (1.0 - ef) + extrap * ef)
                })
                .collect::<Result<Vec<f32>>>()?;
            Ok(RopeFreqs {
                inv_freq: out,
                attention_factor: af as f32,
            })
        }
    }
}

/// The angle of position `pos` for inverse frequency `inv`: f32(inv * f32(pos)), the f32
/// product of transformers' `inv_freq @ position_ids.float()` (a one-term matmul).
#[inline(always)]
pub fn angle(inv: f32, pos: u64) -> f32 {
    inv * pos as f32
}

/// Error bound of the rounding test on `Cos::fast(a) * af`: 2^-47 (fast path) + 2^-53
/// (the product) + 2^-52 (the test's own rounding), below 2^-46 (0x3D10000000000000).
#[doc(hidden)] // for candle-repro's examples/hard_inputs.rs
pub const ENTRY_TEST_ERR: f64 = f64::from_bits(0x3D10_0000_0000_0000);

/// (cos(a) * af, sin(a) * af) each rounded once to `F`: a fast f64 evaluation accepted when
/// the rounding test decides it, else the double-double values (relative error 2^-100)
/// times af (a DD-by-f64 product), rounded to odd, then to `F`. The exact product is never
/// a rounding midpoint of `F` except where it is representable (angle 0: cos = 1, sin = 0),
/// which both paths get exactly.
///
/// ```rust
/// use repro_core::rope::cos_sin_entry;
/// use half::bf16;
///
/// assert_eq!(cos_sin_entry::<f32>(0.0, 1.0), (1.0, 0.0));
/// // cos(1) and sin(1) correctly rounded to f32 (bits from mpmath).
/// const COS_1: f32 = f32::from_bits(0x3F0A_5140);
/// const SIN_1: f32 = f32::from_bits(0x3F57_6AA4);
/// assert_eq!(cos_sin_entry::<f32>(1.0, 1.0), (COS_1, SIN_1));
/// // One rounding of the exact product to the output format, with no f32 step between.
/// let (c, _) = cos_sin_entry::<bf16>(0.0, 1.25);
/// assert_eq!(c, bf16::from_f32(1.25));
/// ```
#[inline]
pub fn cos_sin_entry<F: Format>(a: f32, af: f32) -> (F, F) {
    let afd = af as f64;
    if !a.is_finite() {
        return (F::round(f64::NAN), F::round(f64::NAN));
    }
    let (mut c, mut s) = (None, None);
    if <Cos as CrUnary>::in_fast_domain(a) {
        let (v, sure) = crate::math::round::round_if_certain::<F>(
            <Cos as CrUnary>::fast::<TARGET_FUSES>(a) * afd,
            ENTRY_TEST_ERR,
        );
        if sure {
            c = Some(v);
        }
        let (v, sure) = crate::math::round::round_if_certain::<F>(
            <Sin as CrUnary>::fast::<TARGET_FUSES>(a) * afd,
            ENTRY_TEST_ERR,
        );
        if sure {
            s = Some(v);
        }
    }
    match (c, s) {
        (Some(c), Some(s)) => (c, s),
        _ => {
            let (sd, cd) = sincos_dd(a);
            let c = c.unwrap_or_else(|| F::round(round_odd(cd.mul_f64(afd))));
            let s = s.unwrap_or_else(|| F::round(round_odd(sd.mul_f64(afd))));
            (c, s)
        }
    }
}

/// Fill the cos and sin rows of the given positions (rows of `inv.len()` entries): row q
/// is position `positions[q]`, entry i its [`cos_sin_entry`] for `inv[i]`.
pub fn fill_rows<F: Format + Default>(
    inv: &[f32],
    af: f32,
    positions: &[u64],
    cos: &mut [F],
    sin: &mut [F],
) {
    use rayon::prelude::*;
    let h = inv.len();
    if h == 0 {
        return;
    }
    cos.par_chunks_mut(h)
        .zip(sin.par_chunks_mut(h))
        .zip(positions.par_iter())
        .for_each(|((crow, srow), &p)| {
            for ((c, s), &f) in crow.iter_mut().zip(srow.iter_mut()).zip(inv) {
                let (cv, sv) = cos_sin_entry::<F>(angle(f, p), af);
                *c = cv;
                *s = sv;
            }
        });
}
