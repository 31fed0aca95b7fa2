//! The FFT on CUDA gives the CPU's bits (feature `cuda`): every power of two 2^1..2^20, the
//! DFT-GEMM sizes and Bluestein sizes, all three precisions, forward and inverse, rows of
//! ordinary values at several scales and rows with NaN, infinity, zeros and subnormals;
//! the Ozaki radix-8 stages both as the plain f32 loop and on tensor cores (mma.sync,
//! sm_80+); the fused shared-memory kernel (F32 n <= 4096, F64Internal n <= 2048, which
//! the transforms above use already) on batches of several groups of rows. Without a
//! device the tests print "skipped: no CUDA device" and pass; the same kernels run on the
//! emulated device in tests/emulated_device.rs.
//!
//! `cargo test --release --features cuda --test fft_cuda -- --nocapture`
#![cfg(feature = "cuda")]
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

mod common;

use candle_core::CudaStorage;
use candle_core::Device;
use candle_core::cuda_backend::CudaStorageSlice;
use candle_repro::fft::cuda::transform;
use candle_repro::fft::{FftPlan, Precision};
use common::cuda_device;
use num_complex::Complex32;

#[path = "common/fft_ref.rs"]
mod fft_ref;
use fft_ref::special_rows as input;

const PRECISIONS: [Precision; 3] = [Precision::F32, Precision::Ozaki, Precision::F64Internal];

fn cpu(plan: &FftPlan, inverse: bool, x: &[f32]) -> Vec<u32> {
    let input: Vec<Complex32> = x
        .chunks_exact(2)
        .map(|c| Complex32::new(c[0], c[1]))
        .collect();
    let mut out = vec![Complex32::new(0.0, 0.0); input.len()];
    if inverse {
        plan.inverse_out_of_place(&input, &mut out).unwrap();
    } else {
        plan.forward_out_of_place(&input, &mut out).unwrap();
    }
    out.iter()
        .flat_map(|z| [z.re.to_bits(), z.im.to_bits()])
        .collect()
}

/// The bits the device gives for the interleaved rows `x` (`transform`, the op's launch).
fn cuda_bits(
    dev: &candle_core::CudaDevice,
    plan: &FftPlan,
    inverse: bool,
    mma: bool,
    x: &[f32],
) -> Vec<u32> {
    let xs = dev.clone_htod(x).unwrap();
    let xs = CudaStorage::wrap_cuda_slice(xs, dev.clone());
    let out = transform(dev, plan, inverse, mma, (&xs, 0, x.len())).unwrap();
    let CudaStorageSlice::F32(out) = &out.slice else {
        unreachable!("f32 output")
    };
    dev.clone_dtoh(out)
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

fn rows_for(n: usize) -> usize {
    match n {
        0..=4096 => 64,
        4097..=65536 => 16,
        _ => 8,
    }
}

/// Compares CUDA with the CPU for length n; returns the complex values compared.
fn check(gpu: &Device, n: usize, mma: bool) -> usize {
    let Device::Cuda(dev) = gpu else {
        unreachable!("a CUDA device")
    };
    let mut compared = 0;
    for precision in PRECISIONS {
        if mma && precision != Precision::Ozaki {
            continue;
        }
        let plan = FftPlan::new(n, precision).unwrap();
        let rows = rows_for(n);
        for inverse in [false, true] {
            let x = input(rows, n, 0x51ED_27A3 ^ (n as u64) << 4 ^ inverse as u64);
            let want = cpu(&plan, inverse, &x);
            let got = cuda_bits(dev, &plan, inverse, mma, &x);
            if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
                panic!(
                    "n={n} {precision:?} inverse={inverse} mma={mma}: value {i} (row {}) cpu {:#010x} cuda {:#010x}",
                    i / (2 * n),
                    want[i],
                    got[i]
                );
            }
            compared += want.len() / 2;
        }
    }
    compared
}

/// Bluestein sizes (a prime factor >= 11) and, since the mixed radix (24, 100, 1000 before
/// it), 2^a 3^b 5^c 7^d sizes.
const BLUESTEIN: [usize; 9] = [17, 24, 100, 127, 1000, 1155, 4097, 12345, 65537];
const MIXED: [usize; 8] = [45, 400, 480, 2187, 3125, 44100, 48000, 3 << 16];

#[test]
fn cuda_bits_equal_cpu_bits() {
    let Some(gpu) = cuda_device() else { return };
    let mut total = 0;
    for n in (1..=20).map(|p| 1usize << p) {
        total += check(&gpu, n, false);
    }
    for n in [1, 3, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15] {
        total += check(&gpu, n, false);
    }
    for n in BLUESTEIN.into_iter().chain(MIXED) {
        total += check(&gpu, n, false);
    }
    println!("FFT: {total} complex values, CUDA == CPU");
}

/// The fused shared-memory kernel (the pure Stockham plans of F32 up to 4096 points and
/// F64Internal up to 2048, one launch each) on batches of several groups of rows per block
/// size, the last group partial, against the CPU.
#[test]
fn cuda_fused_kernel_bits_equal_cpu_bits() {
    use candle_repro::fft::cuda::{FUSED_BLOCK_F32, FUSED_BLOCK_F64};
    use candle_repro::fft::cuda::{FUSED_MAX_F32, FUSED_MAX_F64, fused_stages};
    let Some(gpu) = cuda_device() else { return };
    let Device::Cuda(dev) = &gpu else {
        unreachable!("a CUDA device")
    };
    let mut total = 0;
    for (precision, max, block) in [
        (Precision::F32, FUSED_MAX_F32, FUSED_BLOCK_F32),
        (Precision::F64Internal, FUSED_MAX_F64, FUSED_BLOCK_F64),
    ] {
        for n in (4..=12).map(|p| 1usize << p).filter(|&n| n <= max) {
            let plan = FftPlan::new(n, precision).unwrap();
            assert!(
                fused_stages(&plan.device_plan()).is_some(),
                "n={n} {precision:?}"
            );
            let rows = 3 * (block / n).max(1) + 5;
            for inverse in [false, true] {
                let x = input(rows, n, 0xF05E ^ (n as u64) << 4 ^ inverse as u64);
                let want = cpu(&plan, inverse, &x);
                let got = cuda_bits(dev, &plan, inverse, false, &x);
                if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
                    panic!(
                        "fused n={n} {precision:?} rows={rows} inverse={inverse}: value {i} (row {}) cpu {:#010x} cuda {:#010x}",
                        i / (2 * n),
                        want[i],
                        got[i]
                    );
                }
                total += want.len() / 2;
            }
        }
    }
    println!("FFT fused kernel: {total} complex values, CUDA == CPU");
}

/// The tensor-core Ozaki kernel (not the default: see `candle_repro::fft::cuda::OZAKI_MMA`)
/// against the CPU. Skipped below sm_80 (no bf16 mma.sync).
#[test]
fn cuda_ozaki_mma_bits_equal_cpu_bits() {
    let Some(gpu) = cuda_device() else { return };
    let mut total = 0;
    for n in (5..=20).map(|p| 1usize << p) {
        total += check(&gpu, n, true);
    }
    for n in [17, 100, 1155, 12345] {
        total += check(&gpu, n, true);
    }
    println!("FFT Ozaki on tensor cores: {total} complex values, CUDA == CPU");
}

/// The candle ops (fft, ifft, rfft, irfft) on CUDA tensors against CPU tensors: every norm
/// and precision, contiguous and strided inputs, several half-spectrum lengths for irfft.
#[test]
fn cuda_ops_bits_equal_cpu_bits() {
    use candle_core::Tensor;
    use candle_repro::fft::{Norm, fft_with, ifft_with, irfft_with, rfft_with};
    use common::bits;

    let Some(gpu) = cuda_device() else { return };
    let rows = 24;
    let mut ops = 0;
    for precision in PRECISIONS {
        for norm in [Norm::Backward, Norm::Ortho, Norm::Forward] {
            for n in [1usize, 2, 5, 8, 16, 17, 64, 100, 1024, 4096, 12345] {
                let what = format!("n={n} {precision:?} {norm:?}");
                let x = input(rows, n, n as u64 * 31 + 7);
                let cpu_t = Tensor::from_vec(x.clone(), (rows, n, 2), &Device::Cpu).unwrap();
                let gpu_t = cpu_t.to_device(&gpu).unwrap();
                for inverse in [false, true] {
                    let f = if inverse { ifft_with } else { fft_with };
                    let a = bits(&f(&cpu_t, norm, precision).unwrap());
                    let b = bits(&f(&gpu_t, norm, precision).unwrap());
                    assert!(a == b, "fft inverse={inverse} {what}");
                }
                // Strided: rows of the transposed (n, rows, 2) tensor.
                let st_cpu = cpu_t.transpose(0, 1).unwrap().contiguous().unwrap();
                let st_cpu = st_cpu.transpose(0, 1).unwrap();
                let st_gpu = st_cpu.to_device(&gpu).unwrap();
                let st_gpu = st_gpu.transpose(0, 1).unwrap().contiguous().unwrap();
                let st_gpu = st_gpu.transpose(0, 1).unwrap();
                let a = bits(&fft_with(&st_cpu, norm, precision).unwrap());
                let b = bits(&fft_with(&st_gpu, norm, precision).unwrap());
                assert!(a == b, "fft strided {what}");
                let tr = Tensor::from_vec(x[..rows * n].to_vec(), (rows, n), &Device::Cpu).unwrap();
                let a = bits(&rfft_with(&tr, norm, precision).unwrap());
                let b = bits(&rfft_with(&tr.to_device(&gpu).unwrap(), norm, precision).unwrap());
                assert!(a == b, "rfft {what}");
                for m in [n / 2 + 1, n / 2 + 3, (n / 4).max(1)] {
                    let xc = input(rows, m, m as u64 * 13 + n as u64);
                    let tc = Tensor::from_vec(xc, (rows, m, 2), &Device::Cpu).unwrap();
                    let a = bits(&irfft_with(&tc, Some(n), norm, precision).unwrap());
                    let g = tc.to_device(&gpu).unwrap();
                    let b = bits(&irfft_with(&g, Some(n), norm, precision).unwrap());
                    assert!(a == b, "irfft m={m} {what}");
                }
                ops += 7;
            }
        }
    }
    println!("{ops} op calls: CUDA == CPU");
}
