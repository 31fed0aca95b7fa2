//! What a model needs from a GGUF file: its weights dequantized by one rule, its metadata,
//! and its tokenizer.
//!
//! # Dequantization
//! Every weight is the exact value its block encodes, rounded once to the compute dtype
//! (nearest even): F32 and F16 values as they are; Q8_0 `d q`; Q4_0 `d (q - 8)`; Q4_1
//! `d q + m` (d and m the block's f16 scale and minimum, q the 4- or 8-bit code). The
//! products `d q` are exact in f64; `d q + m` is formed with TwoSum, and when it is not
//! exact in f64 the pair is rounded to odd first, so the one rounding to f32, bf16 or f16
//! is correct. For f32 this is also what candle's CPU dequantization computes (its f32
//! `q * d + m` rounds once, `q * d` being exact in f32).

use crate::math::Format;
use crate::math::dd::{DD, round_odd, two_sum};
use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
use candle_core::{DType, Device, Result, Tensor, bail};
use half::{bf16, f16};
use rayon::prelude::*;

/// f16 bits to their exact f64 value.
fn f16_value(lo: u8, hi: u8) -> f64 {
    crate::math::round::f16_bits_to_f32(u16::from_le_bytes([lo, hi])) as f64
}

/// The exact value of a + b for a, b in f64 (each exact), rounded to odd when not exact:
/// one more rounding to a narrower format is then correct.
#[inline]
fn exact_sum_odd(a: f64, b: f64) -> f64 {
    let (s, e) = two_sum(a, b);
    if e == 0.0 {
        s
    } else {
        round_odd(DD::new(s, e))
    }
}

/// The exact values of a block's weights, as f64 (odd-rounded where not exact), written
/// to `out` (the block's elements).
fn decode_block(dtype: GgmlDType, b: &[u8], out: &mut [f64]) {
    match dtype {
        GgmlDType::Q8_0 => {
            let d = f16_value(b[0], b[1]);
            for (j, o) in out.iter_mut().enumerate() {
                *o = b[2 + j] as i8 as f64 * d;
            }
        }
        GgmlDType::Q4_0 => {
            let d = f16_value(b[0], b[1]);
            for j in 0..16 {
                out[j] = ((b[2 + j] & 0x0F) as f64 - 8.0) * d;
                out[j + 16] = ((b[2 + j] >> 4) as f64 - 8.0) * d;
            }
        }
        GgmlDType::Q4_1 => {
            let d = f16_value(b[0], b[1]);
            let m = f16_value(b[2], b[3]);
            for j in 0..16 {
                out[j] = exact_sum_odd((b[4 + j] & 0x0F) as f64 * d, m);
                out[j + 16] = exact_sum_odd((b[4 + j] >> 4) as f64 * d, m);
            }
        }
        GgmlDType::F16 => {
            for (j, o) in out.iter_mut().enumerate() {
                *o = f16_value(b[2 * j], b[2 * j + 1]);
            }
        }
        GgmlDType::F32 => {
            for (j, o) in out.iter_mut().enumerate() {
                *o =
                    f32::from_le_bytes([b[4 * j], b[4 * j + 1], b[4 * j + 2], b[4 * j + 3]]) as f64;
            }
        }
        _ => unreachable!("checked by the caller"),
    }
}

/// (elements per block, bytes per block) of the supported types.
fn block_geometry(dtype: GgmlDType) -> Option<(usize, usize)> {
    Some(match dtype {
        GgmlDType::F32 => (1, 4),
        GgmlDType::F16 => (1, 2),
        GgmlDType::Q8_0 => (32, 34),
        GgmlDType::Q4_0 => (32, 18),
        GgmlDType::Q4_1 => (32, 20),
        _ => return None,
    })
}

/// A quantized tensor dequantized to `dtype` (f32, bf16, f16, or f64 for references) by
/// the rule in the module header.
pub fn dequantize(q: &QTensor, dtype: DType, device: &Device) -> Result<Tensor> {
    let Some((per_block, bytes)) = block_geometry(q.dtype()) else {
        bail!(
            "candle-repro: GGUF type {:?} is not supported (F32, F16, Q8_0, Q4_0, Q4_1 are)",
            q.dtype()
        )
    };
    let data = q.data()?;
    let n = q.shape().elem_count();
    if data.len() != n / per_block * bytes || !n.is_multiple_of(per_block) {
        bail!(
            "candle-repro: GGUF tensor of {n} elements has {} bytes",
            data.len()
        )
    }
    let ty = q.dtype();
    let mut values = vec![0f64; n];
    values
        .par_chunks_mut(per_block * 1024)
        .zip(data.par_chunks(bytes * 1024))
        .for_each(|(o, b)| {
            for (o, b) in o.chunks_exact_mut(per_block).zip(b.chunks_exact(bytes)) {
                decode_block(ty, b, o);
            }
        });
    let shape = q.shape().clone();
    let t = match dtype {
        DType::F32 => Tensor::from_vec(
            values
                .par_iter()
                .map(|&v| <f32 as Format>::round(v))
                .collect::<Vec<_>>(),
            shape,
            device,
        ),
        DType::BF16 => Tensor::from_vec(
            values
                .par_iter()
                .map(|&v| <bf16 as Format>::round(v))
                .collect::<Vec<_>>(),
            shape,
            device,
        ),
        DType::F16 => Tensor::from_vec(
            values
                .par_iter()
                .map(|&v| <f16 as Format>::round(v))
                .collect::<Vec<_>>(),
            shape,
            device,
        ),
        DType::F64 => Tensor::from_vec(values, shape, device),
        other => bail!("candle-repro: dequantizing to {other:?} is not supported"),
    }?;
    Ok(t)
}

/// A metadata value as u32 (GGUF integers of any width).
pub(crate) fn md_u32(c: &gguf_file::Content, key: &str) -> Result<u32> {
    match c.metadata.get(key) {
        Some(v) => v.to_u32().or_else(|_| v.to_u64().map(|x| x as u32)),
        None => bail!("candle-repro: GGUF metadata has no {key}"),
    }
}

/// A metadata value as f32.
pub(crate) fn md_f32(c: &gguf_file::Content, key: &str) -> Result<f32> {
    match c.metadata.get(key) {
        Some(v) => v.to_f32(),
        None => bail!("candle-repro: GGUF metadata has no {key}"),
    }
}

/// A metadata array of strings.
pub(crate) fn md_strings(c: &gguf_file::Content, key: &str) -> Result<Vec<String>> {
    match c.metadata.get(key) {
        Some(gguf_file::Value::Array(v)) => v.iter().map(|s| s.to_string().cloned()).collect(),
        _ => bail!("candle-repro: GGUF metadata has no string array {key}"),
    }
}
