//! The CPU half of the audio ops, over contiguous slices. The entry points are named like
//! the device half's kernels (`kernels/audio/audio.cu`, launched by `super::cuda`):
//! `frames`, `power`, `log_mel_finish`. Every output element is computed alone by the same
//! operations (the global maximum of `log_mel_finish` is exact), so neither the thread
//! split nor the batch changes a bit.

use super::Framing;
use crate::math;
use crate::math::dd::{DD, round_odd, two_sum};
use crate::ops::buffer;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Rows (frames) per rayon task.
const ROWS: usize = 64;

/// The canonical NaN of f32 outputs.
const NAN: f32 = f32::from_bits(0x7FC0_0000);

/// Windowed frames of a batch of signals: `x` is (batch, len), the output (batch, frames,
/// n_fft) with `out[b, t, j] = x[b, source(t hop + j)] * w[j]`, one f32 product.
pub(crate) fn frames(x: &[f32], w: &[f32], g: &Framing) -> Vec<f32> {
    let batch = x.len() / g.len;
    let mut out = buffer::uninit::<f32>(batch * g.frames * g.n_fft);
    out.par_chunks_mut(ROWS * g.n_fft)
        .enumerate()
        .for_each(|(c, rows)| {
            for (r, row) in rows.chunks_mut(g.n_fft).enumerate() {
                let (b, t) = ((c * ROWS + r) / g.frames, (c * ROWS + r) % g.frames);
                frame_row(&x[b * g.len..(b + 1) * g.len], w, g, t, row);
            }
        });
    // SAFETY: the chunks cover the buffer and every row is written whole.
    unsafe { buffer::assume_init(out) }
}

/// Frame `t` of one signal, windowed.
#[inline]
fn frame_row(x: &[f32], w: &[f32], g: &Framing, t: usize, row: &mut [MaybeUninit<f32>]) {
    let start = (t * g.hop) as i64 - g.pad as i64;
    for (j, (o, &wj)) in row.iter_mut().zip(w).enumerate() {
        let v = match g.source(start + j as i64) {
            Some(i) => x[i] * wj,
            None => 0.0 * wj,
        };
        o.write(canonical(v));
    }
}

/// NaN as the canonical NaN, other values unchanged.
#[inline(always)]
fn canonical(v: f32) -> f32 {
    if v.is_nan() { NAN } else { v }
}

/// |z|^2 = re^2 + im^2 of complex values stored as (re, im) pairs, rounded once.
pub(crate) fn power(z: &[f32]) -> Vec<f32> {
    let n = z.len() / 2;
    let mut out = buffer::uninit::<f32>(n);
    out.par_chunks_mut(1 << 14)
        .zip(z.par_chunks(2 << 14))
        .for_each(|(o, z)| {
            for (o, p) in o.iter_mut().zip(z.chunks_exact(2)) {
                o.write(power_one(p[0], p[1]));
            }
        });
    // SAFETY: every element was written.
    unsafe { buffer::assume_init(out) }
}

/// re^2 + im^2 rounded once to f32. Both squares are exact in f64 (48 bits); their sum
/// and its error (TwoSum) are the exact value, which is rounded to odd in f64 and then to
/// f32: the two roundings equal one (Boldo and Melquiond: 53 >= 24 + 2, subnormal f32
/// results included, since the f64 value is normal).
#[inline(always)]
pub(crate) fn power_one(re: f32, im: f32) -> f32 {
    let (s, e) = two_sum(re as f64 * re as f64, im as f64 * im as f64);
    canonical(round_odd(DD::new(s, e)) as f32)
}

/// f32's nearest value to 1e-10: the floor Whisper clamps the mel energies to
/// (`torch.clamp(mel, min=1e-10)` on an f32 tensor).
pub(crate) const FLOOR: f32 = f32::from_bits(0x2EDB_E6FF);

/// log10(max(m, FLOOR)), correctly rounded; NaN stays NaN.
#[inline(always)]
pub(crate) fn log10_floor(m: f32) -> f32 {
    if m.is_nan() {
        return NAN;
    }
    math::log10(if m > FLOOR { m } else { FLOOR })
}

/// The end of Whisper's recipe on a batch of mel energies: `mel` is (batch, frames,
/// n_mels), the output (batch, n_mels, frames) with, per batch element,
/// v = log10(max(m, 1e-10)), M = the largest v, out = (max(v, M - 8) + 4) / 4, each step
/// rounded once in f32 (the division by 4 is exact). Any NaN makes M, and so every output
/// of that batch element, NaN.
pub(crate) fn log_mel_finish(mel: &[f32], frames: usize, n_mels: usize) -> Vec<f32> {
    let item = frames * n_mels;
    let batch = mel.len().checked_div(item).unwrap_or(0);
    let mut out = buffer::uninit::<f32>(mel.len());
    for b in 0..batch {
        let src = &mel[b * item..(b + 1) * item];
        let dst = &mut out[b * item..(b + 1) * item];
        // Pass 1: the logarithms, transposed to (n_mels, frames), in frame blocks.
        let top = dst
            .par_chunks_mut(frames)
            .enumerate()
            .map(|(i, row)| {
                let mut top = f32::NEG_INFINITY;
                for (t, o) in row.iter_mut().enumerate() {
                    let v = log10_floor(src[t * n_mels + i]);
                    top = max_nan(top, v);
                    o.write(v);
                }
                top
            })
            .reduce(|| f32::NEG_INFINITY, max_nan);
        // Pass 2: the clamp and the affine map.
        let low = top - 8.0;
        dst.par_chunks_mut(1 << 14).for_each(|o| {
            for o in o {
                // SAFETY: pass 1 wrote every element.
                let v = unsafe { o.assume_init() };
                o.write(finish_one(v, low));
            }
        });
    }
    // SAFETY: every element was written in pass 2.
    unsafe { buffer::assume_init(out) }
}

/// The larger of two values, NaN if either is NaN (torch's `max` and `maximum`).
#[inline(always)]
pub(crate) fn max_nan(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        NAN
    } else if a >= b {
        a
    } else {
        b
    }
}

/// (max(v, low) + 4) / 4 with low = M - 8 already rounded.
#[inline(always)]
pub(crate) fn finish_one(v: f32, low: f32) -> f32 {
    canonical((max_nan(v, low) + 4.0) * 0.25)
}
