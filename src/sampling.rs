//! Reproducible sampling: the token chosen from a row of logits depends only on the
//! logits' bits, the sampling parameters, the seed and the draw's position, never on the
//! device, the thread count or the order of any float sum. [`LogitsProcessor`] has the API
//! of `candle_transformers::generation::LogitsProcessor`.
//!
//! # Definition
//! 1. The logits are widened exactly to f32 (bf16, f16 inputs); a NaN logit is an error.
//! 2. Argmax: the largest logit, the lowest token id among equal ones.
//! 3. With a temperature T > 0 (taken as the f32 nearest to it): z_i = l_i / T, one f32
//!    IEEE division each (correctly rounded), and the probabilities p = the crate's
//!    [`crate::softmax_last_dim`] of z (exact sum, one rounding per value).
//! 4. The tokens in order of p descending, the lower id first among equal p. Top-k keeps
//!    the first k; top-p (p given as the f32 nearest to it) keeps the shortest prefix whose
//!    sum of p reaches p (the sum exact); top-k then top-p applies both, top-p on the k
//!    kept probabilities as they are (not renormalized), as candle does; min-p keeps the
//!    tokens with p_i >= min_p p_max (the product exact).
//! 5. The draw: u = SplitMix64's output for seed + (position + 1) times the golden-ratio
//!    constant (a counter-based generator: no state but the seed), the kept tokens' exact
//!    total mass M (every p is a multiple of 2^-149: integers), r = floor(u M / 2^64), and
//!    the chosen token is the first, in the order of 4, whose cumulative mass exceeds r.
//!    So a token's chance is its p divided by the kept mass, up to 2^-64 relative: the
//!    exactness does not bias the draw (`tests/sampling.rs` checks frequencies against p
//!    with a chi-square test).

use candle_core::{DType, Result, Tensor, bail};

/// What to sample from (candle-transformers' `Sampling`, plus min-p).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// The largest logit (lowest id on ties).
    ArgMax,
    /// Every token, with probabilities softmax(logits / temperature).
    All {
        /// T > 0.
        temperature: f64,
    },
    /// The k most probable tokens.
    TopK {
        /// k >= 1.
        k: usize,
        /// T > 0.
        temperature: f64,
    },
    /// The shortest prefix of the most probable tokens whose probability reaches p.
    TopP {
        /// 0 < p; p >= 1 keeps every token.
        p: f64,
        /// T > 0.
        temperature: f64,
    },
    /// Top-k, then top-p on the kept probabilities.
    TopKThenTopP {
        /// k >= 1.
        k: usize,
        /// p as in `TopP`.
        p: f64,
        /// T > 0.
        temperature: f64,
    },
    /// The tokens whose probability is at least `p` times the largest.
    MinP {
        /// 0 <= p <= 1.
        p: f64,
        /// T > 0.
        temperature: f64,
    },
}

/// Chooses tokens from logits (see the module documentation); a drop-in for
/// candle-transformers' `LogitsProcessor` whose n-th call to [`LogitsProcessor::sample`]
/// draws at position n.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::sampling::{LogitsProcessor, Sampling};
/// let logits = Tensor::new(&[1.0f32, 3.0, 2.5, -1.0], &Device::Cpu)?;
/// let mut greedy = LogitsProcessor::new(42, None, None);
/// assert_eq!(greedy.sample(&logits)?, 1);
/// // The same seed and position give the same token, wherever the logits were computed.
/// let s = LogitsProcessor::from_sampling(7, Sampling::TopP { p: 0.9, temperature: 0.8 });
/// assert_eq!(s.sample_at(&logits, 5)?, s.sample_at(&logits, 5)?);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct LogitsProcessor {
    seed: u64,
    sampling: Sampling,
    position: u64,
}

impl LogitsProcessor {
    /// Argmax without a temperature (or below 1e-7), else all tokens or top-p.
    pub fn new(seed: u64, temperature: Option<f64>, top_p: Option<f64>) -> Self {
        let sampling = match temperature.filter(|t| *t >= 1e-7) {
            None => Sampling::ArgMax,
            Some(temperature) => match top_p {
                None => Sampling::All { temperature },
                Some(p) => Sampling::TopP { p, temperature },
            },
        };
        Self::from_sampling(seed, sampling)
    }

    /// A processor for `sampling` with `seed`, at position 0.
    pub fn from_sampling(seed: u64, sampling: Sampling) -> Self {
        LogitsProcessor {
            seed,
            sampling,
            position: 0,
        }
    }

    /// The token for a row of logits (any shape with one row of values: (vocab), (1,
    /// vocab)), at the next position.
    pub fn sample(&mut self, logits: &Tensor) -> Result<u32> {
        let t = self.sample_at(logits, self.position)?;
        self.position += 1;
        Ok(t)
    }

    /// The token at a given position (no state changes).
    pub fn sample_at(&self, logits: &Tensor, position: u64) -> Result<u32> {
        let l: Vec<f32> = logits.flatten_all()?.to_dtype(DType::F32)?.to_vec1()?;
        choose(&l, self.sampling, self.seed, position)
    }
}

/// SplitMix64 of x (Steele, Lea, Flood 2014): a bijective mix of 64 bits.
fn splitmix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The 64 random bits of draw `position` under `seed`.
pub fn draw_bits(seed: u64, position: u64) -> u64 {
    splitmix64(seed.wrapping_add(position.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
}

/// An unsigned integer of three 64-bit limbs (little-endian): the exact masses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Mass([u64; 3]);

impl Mass {
    /// A probability (f32 in [0, 1]) in units of 2^-149.
    fn of(p: f32) -> Mass {
        let b = p.to_bits();
        let (m, e) = if b >> 23 == 0 {
            (b & 0x7F_FFFF, 0)
        } else {
            ((b & 0x7F_FFFF) | 0x80_0000, (b >> 23) - 1)
        };
        let v = (m as u128) << e.min(100);
        let mut out = Mass([v as u64, (v >> 64) as u64, 0]);
        for _ in 100..e {
            out = out.add(out);
        }
        out
    }

    fn add(self, o: Mass) -> Mass {
        let (a0, c0) = self.0[0].overflowing_add(o.0[0]);
        let (a1, c1a) = self.0[1].overflowing_add(o.0[1]);
        let (a1, c1b) = a1.overflowing_add(c0 as u64);
        let a2 = self.0[2] + o.0[2] + (c1a | c1b) as u64;
        Mass([a0, a1, a2])
    }

    /// floor(self u / 2^64).
    fn scale(self, u: u64) -> Mass {
        let p0 = self.0[0] as u128 * u as u128;
        let p1 = self.0[1] as u128 * u as u128 + (p0 >> 64);
        let p2 = self.0[2] as u128 * u as u128 + (p1 >> 64);
        Mass([p1 as u64, p2 as u64, (p2 >> 64) as u64])
    }
}

impl PartialOrd for MassKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for MassKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let (a, b) = (self.0.0, other.0.0);
        a[2].cmp(&b[2]).then(a[1].cmp(&b[1])).then(a[0].cmp(&b[0]))
    }
}
/// Masses compared as integers (the derived order of `Mass` compares limbs low first).
#[derive(PartialEq, Eq)]
struct MassKey(Mass);

/// The probabilities of step 3 of the definition.
pub fn probabilities(logits: &[f32], temperature: f64) -> Result<Vec<f32>> {
    if !(temperature > 0.0 && temperature.is_finite()) {
        bail!("candle-repro sampling: temperature {temperature} is not positive and finite")
    }
    let t = temperature as f32;
    let z: Vec<f32> = logits.iter().map(|&l| l / t).collect();
    let n = z.len();
    let p = crate::softmax_last_dim(&Tensor::from_vec(z, n, &candle_core::Device::Cpu)?)?;
    p.to_vec1()
}

/// The token of `logits` under `sampling`, `seed` and `position` (the module's definition).
pub fn choose(logits: &[f32], sampling: Sampling, seed: u64, position: u64) -> Result<u32> {
    if logits.is_empty() {
        bail!("candle-repro sampling: no logits")
    }
    if logits.iter().any(|l| l.is_nan()) {
        bail!("candle-repro sampling: a NaN logit")
    }
    let (temperature, k, top_p, min_p) = match sampling {
        Sampling::ArgMax => {
            let mut best = 0;
            for (i, &l) in logits.iter().enumerate() {
                if l > logits[best] {
                    best = i;
                }
            }
            return Ok(best as u32);
        }
        Sampling::All { temperature } => (temperature, None, None, None),
        Sampling::TopK { k, temperature } => (temperature, Some(k), None, None),
        Sampling::TopP { p, temperature } => (temperature, None, Some(p), None),
        Sampling::TopKThenTopP { k, p, temperature } => (temperature, Some(k), Some(p), None),
        Sampling::MinP { p, temperature } => (temperature, None, None, Some(p)),
    };
    if k == Some(0) {
        bail!("candle-repro sampling: top-k with k = 0")
    }
    // NaN parameters are out of range too.
    let positive = |p: f64| p > 0.0;
    if top_p.is_some_and(|p| !positive(p)) || min_p.is_some_and(|p| !(0.0..=1.0).contains(&p)) {
        bail!("candle-repro sampling: p out of range in {sampling:?}")
    }
    let p = probabilities(logits, temperature)?;
    let mut order: Vec<u32> = (0..p.len() as u32).collect();
    order.sort_by(|&a, &b| p[b as usize].total_cmp(&p[a as usize]).then(a.cmp(&b)));
    let mut kept = &order[..k.map_or(order.len(), |k| k.min(order.len()))];
    if let Some(tp) = top_p {
        let target = MassKey(Mass::of((tp as f32).min(1.0)));
        let mut sum = Mass::default();
        let mut len = kept.len();
        for (i, &t) in kept.iter().enumerate() {
            sum = sum.add(Mass::of(p[t as usize]));
            if MassKey(sum) >= target {
                len = i + 1;
                break;
            }
        }
        kept = &kept[..len];
    }
    if let Some(mp) = min_p {
        let floor = mp * p[order[0] as usize] as f64; // exact: f64 times f32
        let len = kept
            .iter()
            .take_while(|&&t| p[t as usize] as f64 >= floor)
            .count();
        kept = &kept[..len.max(1)];
    }
    let total = kept
        .iter()
        .fold(Mass::default(), |s, &t| s.add(Mass::of(p[t as usize])));
    let r = MassKey(total.scale(draw_bits(seed, position)));
    let mut sum = Mass::default();
    for &t in kept {
        sum = sum.add(Mass::of(p[t as usize]));
        if MassKey(sum) > r {
            return Ok(t);
        }
    }
    Ok(kept[0]) // unreachable with a nonzero mass: the largest p is at least 1/vocab
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masses_are_exact() {
        assert_eq!(Mass::of(0.0), Mass::default());
        assert_eq!(Mass::of(f32::from_bits(1)), Mass([1, 0, 0]));
        // 1.0 = 2^149 units.
        assert_eq!(Mass::of(1.0), Mass([0, 0, 1 << (149 - 128)]));
        assert_eq!(Mass::of(0.5).add(Mass::of(0.5)), Mass::of(1.0));
        // floor(M u / 2^64) with u = 2^63: M / 2.
        assert_eq!(Mass::of(1.0).scale(1 << 63), Mass::of(0.5));
        let m = Mass::of(0.75);
        assert!(MassKey(Mass::of(0.5)) < MassKey(m) && MassKey(m) < MassKey(Mass::of(1.0)));
    }
}
