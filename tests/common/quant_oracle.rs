//! What the quantized tests share: candle's f32 dequantization as an independent reading
//! of the block layouts, made exact by splitting blocks (`oracle_weights`), random blocks
//! of every type, and conversions between the dtypes and their bits
//! (`#[path = "common/quant_oracle.rs"] mod quant_oracle;`, beside `mod lcg;`).
#![allow(dead_code)]

use super::lcg::Lcg;
use candle_core::quantized::{GgmlDType, QStorage, QTensor};
use candle_core::{DType, Device, Tensor};
use half::{bf16, f16};
use mpfr_oracle::Format;
use std::borrow::Cow;

/// Where a block's f16 scales are (ggml-common.h): (d, the min's scale if any). Q8_K's d
/// is an f32 at 0.
pub fn scale_offsets(ty: GgmlDType) -> (usize, Option<usize>) {
    match ty {
        GgmlDType::Q4_1 | GgmlDType::Q5_1 => (0, Some(2)),
        GgmlDType::Q2K => (80, Some(82)),
        GgmlDType::Q3K => (108, None),
        GgmlDType::Q4K | GgmlDType::Q5K => (0, Some(2)),
        GgmlDType::Q6K => (208, None),
        _ => (0, None),
    }
}

pub fn block_geometry(ty: GgmlDType) -> (usize, usize) {
    (ty.block_size(), ty.type_size())
}

/// A (n, k) weight of these bytes.
pub fn qtensor(ty: GgmlDType, bytes: &[u8], n: usize, k: usize) -> QTensor {
    let storage = QStorage::from_data(Cow::Borrowed(bytes), &Device::Cpu, ty).unwrap();
    QTensor::new(storage, (n, k)).unwrap()
}

/// candle's f32 dequantization of the bytes (k weights per row).
pub fn candle_f32(ty: GgmlDType, bytes: &[u8]) -> Vec<f32> {
    let (len, size) = block_geometry(ty);
    let k = bytes.len() / size * len;
    qtensor(ty, bytes, 1, k)
        .dequantize(&Device::Cpu)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap()
}

/// A finite f16 over the whole range (subnormals and zeros included).
pub fn f16_bits(rng: &mut Lcg) -> u16 {
    let e = rng.below(31) as u16;
    ((rng.below(2) as u16) << 15) | (e << 10) | rng.below(1024) as u16
}

/// Random blocks of `ty` with finite scales: codes random or at their extremes, scales
/// over the whole f16 range (or, with `tame`, d in [2^-10, 2^-4] so that products stay
/// far from overflow and underflow).
pub fn random_blocks(ty: GgmlDType, nblocks: usize, rng: &mut Lcg, tame: bool) -> Vec<u8> {
    let (_, size) = block_geometry(ty);
    let mut b = vec![0u8; nblocks * size];
    match ty {
        GgmlDType::F32 => {
            for v in b.chunks_exact_mut(4) {
                let x = rng.value(false, -40, 40) as f32;
                v.copy_from_slice(&x.to_le_bytes());
            }
            return b;
        }
        GgmlDType::F16 | GgmlDType::BF16 => {
            for v in b.chunks_exact_mut(2) {
                let x = rng.normal();
                let bits = if ty == GgmlDType::F16 {
                    f16::from_f64(x).to_bits()
                } else {
                    bf16::from_f64(x).to_bits()
                };
                v.copy_from_slice(&bits.to_le_bytes());
            }
            return b;
        }
        _ => {}
    }
    let extreme = rng.below(4);
    for blk in b.chunks_exact_mut(size) {
        for v in blk.iter_mut() {
            *v = match extreme {
                0 => 0x00,
                1 => 0xFF,
                _ => rng.below(256) as u8,
            };
        }
        let (d, dmin) = scale_offsets(ty);
        let scale = |rng: &mut Lcg| -> u16 {
            if tame {
                f16::from_f64(
                    rng.sign() * (1.0 + rng.unit()) * 2f64.powi(-10 + rng.below(7) as i32),
                )
                .to_bits()
            } else {
                f16_bits(rng)
            }
        };
        if ty == GgmlDType::Q8K {
            let x = if tame {
                (rng.sign() * (1.0 + rng.unit()) * 2f64.powi(-10)) as f32
            } else {
                rng.value(false, -140, 120) as f32
            };
            blk[0..4].copy_from_slice(&x.to_le_bytes());
        } else {
            let s = scale(rng);
            blk[d..d + 2].copy_from_slice(&s.to_le_bytes());
        }
        if let Some(o) = dmin {
            let s = scale(rng);
            blk[o..o + 2].copy_from_slice(&s.to_le_bytes());
        }
    }
    b
}

/// The exact weights from candle's dequantization of split blocks (finite scales only):
/// the d part (min scale zeroed) plus the min part (d zeroed), or Q8_K's two halves of d,
/// each exact in f32, added exactly in f64.
pub fn oracle_weights(ty: GgmlDType, bytes: &[u8]) -> Vec<f64> {
    let (_, size) = block_geometry(ty);
    let (d, dmin) = scale_offsets(ty);
    let with = |f: &dyn Fn(&mut [u8])| -> Vec<f32> {
        let mut b = bytes.to_vec();
        for blk in b.chunks_exact_mut(size) {
            f(blk);
        }
        candle_f32(ty, &b)
    };
    if ty == GgmlDType::Q8K {
        let split = |hi: bool| {
            move |blk: &mut [u8]| {
                let v = f32::from_le_bytes(blk[0..4].try_into().unwrap());
                let top = f32::from_bits(v.to_bits() & !0xFFF);
                let part = if hi { top } else { v - top };
                blk[0..4].copy_from_slice(&part.to_le_bytes());
            }
        };
        let (a, b) = (with(&split(true)), with(&split(false)));
        return exact_sum(&a, &b, &candle_f32(ty, bytes));
    }
    match dmin {
        None => candle_f32(ty, bytes).iter().map(|&v| v as f64).collect(),
        Some(o) => {
            let a = with(&|blk: &mut [u8]| blk[o..o + 2].fill(0));
            let b = with(&|blk: &mut [u8]| blk[d..d + 2].fill(0));
            exact_sum(&a, &b, &candle_f32(ty, bytes))
        }
    }
}

/// a + b (exact in f64); a zero sum takes its sign from `whole`, the f32 evaluation of the
/// whole expression, which is exact when the value is zero (the split loses the sign: -0
/// from one part plus +0 from the other is +0).
pub fn exact_sum(a: &[f32], b: &[f32], whole: &[f32]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .zip(whole)
        .map(|((&x, &y), &w)| {
            let s = x as f64 + y as f64;
            if s == 0.0 { w as f64 } else { s }
        })
        .collect()
}

/// The MPFR format of a dtype.
pub fn fmt(dt: DType) -> Format {
    match dt {
        DType::F32 => mpfr_oracle::F32,
        DType::BF16 => mpfr_oracle::BF16,
        _ => mpfr_oracle::F16,
    }
}

/// Values rounded into the dtype (by the `half` crate) and the tensor of them.
pub fn input(v: &[f64], dt: DType, shape: (usize, usize)) -> (Vec<f64>, Tensor) {
    let dev = &Device::Cpu;
    match dt {
        DType::F32 => {
            let x: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            (
                x.iter().map(|&x| x as f64).collect(),
                Tensor::from_vec(x, shape, dev).unwrap(),
            )
        }
        DType::BF16 => {
            let x: Vec<bf16> = v.iter().map(|&x| bf16::from_f64(x)).collect();
            (
                x.iter().map(|x| x.to_f64()).collect(),
                Tensor::from_vec(x, shape, dev).unwrap(),
            )
        }
        _ => {
            let x: Vec<f16> = v.iter().map(|&x| f16::from_f64(x)).collect();
            (
                x.iter().map(|x| x.to_f64()).collect(),
                Tensor::from_vec(x, shape, dev).unwrap(),
            )
        }
    }
}

/// A value rounded into the dtype.
pub fn into_dtype(v: f64, dt: DType) -> f64 {
    match dt {
        DType::F32 => v as f32 as f64,
        DType::BF16 => bf16::from_f64(v).to_f64(),
        _ => f16::from_f64(v).to_f64(),
    }
}

/// Output bits widened to u32, and the bits the oracle's value has in the dtype.
pub fn out_bits(t: &Tensor) -> Vec<u32> {
    let t = t.flatten_all().unwrap();
    match t.dtype() {
        DType::F32 => t
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
        DType::BF16 => t
            .to_vec1::<bf16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits() as u32)
            .collect(),
        _ => t
            .to_vec1::<f16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits() as u32)
            .collect(),
    }
}

pub fn expected_bits(v: f64, dt: DType) -> u32 {
    match dt {
        DType::F32 if v.is_nan() => 0x7FC0_0000,
        DType::F32 => (v as f32).to_bits(),
        DType::BF16 if v.is_nan() => 0x7FC0,
        DType::BF16 => bf16::from_f64(v).to_bits() as u32,
        _ if v.is_nan() => 0x7E00,
        _ => f16::from_f64(v).to_bits() as u32,
    }
}
