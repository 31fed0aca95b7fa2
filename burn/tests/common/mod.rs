//! Shared by the tests: values of every kind, and the same values as Burn and candle
//! tensors, compared by their bits.
#![allow(dead_code)]

use burn_tensor::{DType, Device, Tensor, TensorData, bf16, f16};
use candle_core::{Device as Cpu, Tensor as CTensor};

/// Deterministic bit patterns: 64-bit LCG.
pub struct Lcg(pub u64);
impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
}

/// n values of every kind: random bits (NaNs with payloads, infinities, subnormals),
/// ordinary magnitudes, and the special values.
pub fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Lcg(seed);
    let specials = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        1e-40,
        -1e-45,
        f32::MAX,
        1.0,
        -1.0,
        88.72,
        -103.9,
    ];
    (0..n)
        .map(|i| match i % 4 {
            0 => f32::from_bits(rng.next() as u32),
            1 => ((rng.next() % 20_001) as f32 - 10_000.0) / 1000.0,
            2 => specials[(rng.next() % specials.len() as u64) as usize],
            _ => ((rng.next() % 2001) as f32 - 1000.0) / 7.0,
        })
        .collect()
}

/// The same values as a Burn tensor of `dtype` on `device`, and as a candle tensor.
pub fn pair(v: &[f32], shape: [usize; 2], dtype: DType, device: &Device) -> (Tensor<2>, CTensor) {
    pair_nd(v, shape, dtype, device)
}

/// [`pair`] of any rank.
pub fn pair_nd<const D: usize>(
    v: &[f32],
    shape: [usize; D],
    dtype: DType,
    device: &Device,
) -> (Tensor<D>, CTensor) {
    let c = CTensor::from_vec(v.to_vec(), &shape, &Cpu::Cpu).unwrap();
    let (data, c) = match dtype {
        DType::F32 => (TensorData::new(v.to_vec(), shape), c),
        DType::BF16 => (
            TensorData::new(v.iter().map(|&x| bf16::from_f32(x)).collect(), shape),
            c.to_dtype(candle_core::DType::BF16).unwrap(),
        ),
        _ => (
            TensorData::new(v.iter().map(|&x| f16::from_f32(x)).collect(), shape),
            c.to_dtype(candle_core::DType::F16).unwrap(),
        ),
    };
    (Tensor::<D>::from_data(data, (device, dtype)), c)
}

/// The output bits of a Burn tensor and of a candle tensor, as u32 (16-bit dtypes widened).
pub fn burn_bits<const D: usize>(t: Tensor<D>) -> Vec<u32> {
    let data = t.into_data();
    match data.dtype() {
        DType::F32 => data
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect(),
        DType::BF16 => data
            .as_slice::<bf16>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits() as u32)
            .collect(),
        DType::F16 => data
            .as_slice::<f16>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits() as u32)
            .collect(),
        d => panic!("dtype {d:?}"),
    }
}

pub fn candle_bits(t: &CTensor) -> Vec<u32> {
    let t = t.flatten_all().unwrap();
    match t.dtype() {
        candle_core::DType::F32 => t
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect(),
        candle_core::DType::BF16 => t
            .to_vec1::<half::bf16>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits() as u32)
            .collect(),
        _ => t
            .to_vec1::<half::f16>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits() as u32)
            .collect(),
    }
}

pub const DTYPES: [DType; 3] = [DType::F32, DType::BF16, DType::F16];

/// A Burn gradient as candle's autograd would hand it out: candle adds every gradient into
/// zeros (its `GradStore` accumulator), with its own `add`, which turns a -0 into +0 and,
/// in bf16 on this crate's test machines, flushes subnormal sums to zero. So Burn's
/// gradient goes through the same `zeros + g` in candle before the bits are compared:
/// the comparison is then of the two backward ops, not of the two accumulators.
pub fn as_candle_accumulates<const D: usize>(g: Tensor<D>, like: &CTensor) -> Vec<u32> {
    let data = g.into_data();
    let t = match data.dtype() {
        DType::F32 => CTensor::from_vec(
            data.as_slice::<f32>().unwrap().to_vec(),
            like.shape(),
            &Cpu::Cpu,
        ),
        DType::BF16 => CTensor::from_vec(
            data.as_slice::<bf16>().unwrap().to_vec(),
            like.shape(),
            &Cpu::Cpu,
        ),
        DType::F16 => CTensor::from_vec(
            data.as_slice::<f16>().unwrap().to_vec(),
            like.shape(),
            &Cpu::Cpu,
        ),
        d => panic!("dtype {d:?}"),
    }
    .unwrap();
    candle_bits(&like.zeros_like().unwrap().add(&t).unwrap())
}
