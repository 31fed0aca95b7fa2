//! Helpers shared by the test binaries (`mod common;`). `hard_cases.rs` beside this file is
//! not part of the module: the tests that want it `include!` it.

use candle_core::{DType, Device, Tensor};
use half::{bf16, f16};

/// CUDA device 0, or `None` after printing "skipped: no CUDA device" (with the reason when
/// built with the `cuda` feature), so that GPU tests pass on a machine without one.
#[allow(dead_code)]
pub fn cuda_device() -> Option<Device> {
    #[cfg(feature = "cuda")]
    let why = match Device::new_cuda(0) {
        Ok(d) => return Some(d),
        Err(e) => format!(" ({})", e.to_string().lines().next().unwrap_or("")),
    };
    #[cfg(not(feature = "cuda"))]
    let why = String::new();
    println!("skipped: no CUDA device{why}");
    None
}

/// The bits of a f32, bf16, f16 or f8e4m3 tensor (copied to the CPU, flattened), widened
/// to u32.
pub fn bits(t: &Tensor) -> Vec<u32> {
    let t = t.to_device(&Device::Cpu).unwrap().flatten_all().unwrap();
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
        DType::F16 => t
            .to_vec1::<f16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits() as u32)
            .collect(),
        DType::F8E4M3 => t
            .to_vec1::<float8::F8E4M3>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits() as u32)
            .collect(),
        other => panic!("unsupported dtype {other:?}"),
    }
}

/// FNV-1a over the little-endian bytes of each u32 (the golden hashes' function).
#[allow(dead_code)]
pub fn fnv1a(bits: &[u32]) -> u64 {
    let mut h = 0xcbf29ce484222325u64;
    for x in bits {
        for byte in x.to_le_bytes() {
            h = (h ^ byte as u64).wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// The bits of a f32, bf16 or f16 tensor as little-endian bytes (4 per f32, 2 per 16-bit
/// value).
#[allow(dead_code)]
pub fn le_bytes(t: &Tensor) -> Vec<u8> {
    let width = if t.dtype() == DType::F32 { 4 } else { 2 };
    bits(t)
        .iter()
        .flat_map(|b| b.to_le_bytes()[..width].to_vec())
        .collect()
}

#[cfg(repro_workspace)]
#[allow(dead_code)]
pub mod emu;
