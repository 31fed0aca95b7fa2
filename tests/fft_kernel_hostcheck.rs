//! Host check of the CUDA FFT: the kernels' per-thread bodies (`kernels/fft/threads.cuh` over
//! `kernels/fft/*.cuh`, the text nvcc compiles for `kernels/fft.cu`) compiled as plain host
//! C++ with `-ffp-contract=off` by tools/kernel-hostcheck, driven through a
//! [`DevicePlan`]'s launch steps with the plan's own tables, exactly as `src/fft/cuda.rs`
//! launches them, and compared bit for bit with [`FftPlan`] on the CPU: every power of two
//! 2^1..2^16 and 2^20, the DFT-GEMM sizes, Bluestein sizes, all three precisions, forward
//! and inverse, with rows of ordinary values at several scales and rows with NaN, infinity,
//! zeros and subnormals. Needs a C++ compiler, no GPU.
//!
//! `cargo test --release --test fft_kernel_hostcheck -- --nocapture`
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_repro::fft::device_plan::{DevicePlan, Step, Table};
use candle_repro::fft::{FftPlan, Precision};
use kernel_hostcheck::fft::{self as hc, Real, Split};
use num_complex::Complex32;
use std::any::Any;

#[path = "common/fft_ref.rs"]
mod fft_ref;
use fft_ref::special_rows as input;

const PRECISIONS: [Precision; 3] = [Precision::F32, Precision::Ozaki, Precision::F64Internal];

fn split_pair<T>(v: &mut [T], a: usize, b: usize) -> (&T, &mut T) {
    assert_ne!(a, b);
    if a < b {
        let (x, y) = v.split_at_mut(b);
        (&x[a], &mut y[0])
    } else {
        let (x, y) = v.split_at_mut(a);
        (&y[0], &mut x[b])
    }
}

fn f32_split<T: 'static>(s: &Split<T>) -> &Split<f32> {
    (s as &dyn Any)
        .downcast_ref::<Split<f32>>()
        .expect("Ozaki steps run in f32")
}

fn f32_split_mut<T: 'static>(s: &mut Split<T>) -> &mut Split<f32> {
    (s as &mut dyn Any)
        .downcast_mut::<Split<f32>>()
        .expect("Ozaki steps run in f32")
}

/// The plan's steps on the host, as src/fft/cuda.rs launches them on the device.
fn run_steps<T: Real + 'static>(
    p: &DevicePlan,
    table: &[T],
    table_f32: &[f32],
    rows: usize,
    inverse: bool,
    x: &[f32],
) -> Vec<f32> {
    let n = p.n;
    let mut bufs: Vec<Split<T>> = (0..p.buffers)
        .map(|_| Split::zeros(rows * p.buffer_len))
        .collect();
    let mut out = vec![0f32; x.len()];
    let d = &p.digits;
    for step in &p.steps {
        match *step {
            Step::Deinterleave { dst } => hc::deinterleave(inverse, x, &mut bufs[dst]),
            Step::Interleave { src } => hc::interleave(inverse, &bufs[src], &mut out),
            Step::Gemm { src, dst, w } => {
                let (s, o) = split_pair(&mut bufs, src, dst);
                hc::gemm(rows, n, s, o, &table[w..], &table[w + n * n..]);
            }
            Step::GemmOzaki { src, dst, digits } => {
                let (s, o) = split_pair(&mut bufs, src, dst);
                hc::gemm_ozaki(rows, n, f32_split(s), f32_split_mut(o), &d[digits..]);
            }
            Step::Stage {
                src,
                dst,
                len,
                radix,
                ns,
                tw,
                ozaki,
            } => {
                let (s, o) = split_pair(&mut bufs, src, dst);
                let (tr, ti) = if ns > 1 {
                    let k = (radix - 1) * ns;
                    (&table[tw..tw + k], &table[tw + k..tw + 2 * k])
                } else {
                    (&table[..0], &table[..0])
                };
                match ozaki {
                    Some(w8) => {
                        // The same offsets in the same table, typed f32 (Ozaki plans are f32).
                        let k = (radix - 1) * ns;
                        let (tr, ti) = if ns > 1 {
                            (&table_f32[tw..tw + k], &table_f32[tw + k..tw + 2 * k])
                        } else {
                            (&table_f32[..0], &table_f32[..0])
                        };
                        hc::stockham8_ozaki(
                            rows,
                            len,
                            ns,
                            f32_split(s),
                            f32_split_mut(o),
                            tr,
                            ti,
                            &d[w8..],
                        )
                    }
                    None => hc::stockham(radix, rows, len, ns, s, o, tr, ti),
                }
            }
            Step::BluesteinIn { src, dst, m, chirp } => {
                let (s, o) = split_pair(&mut bufs, src, dst);
                hc::bluestein_in(rows, n, m, s, o, &table[chirp..], &table[chirp + n..]);
            }
            Step::BluesteinMul { buf, m, kernel } => {
                hc::bluestein_mul(
                    rows,
                    m,
                    &mut bufs[buf],
                    &table[kernel..],
                    &table[kernel + m..],
                );
            }
            Step::BluesteinOut { src, dst, m, chirp } => {
                let (s, o) = split_pair(&mut bufs, src, dst);
                hc::bluestein_out(rows, n, m, s, o, &table[chirp..], &table[chirp + n..]);
            }
        }
    }
    out
}

fn host_kernels(p: &DevicePlan, rows: usize, inverse: bool, x: &[f32]) -> Vec<f32> {
    match &p.table {
        Table::F32(t) => run_steps(p, t, t, rows, inverse, x),
        Table::F64(t) => run_steps(p, t, &[], rows, inverse, x),
    }
}

fn cpu(plan: &FftPlan, inverse: bool, x: &[f32]) -> Vec<f32> {
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
    out.iter().flat_map(|z| [z.re, z.im]).collect()
}

/// Rows for a length: every kind of row for small n, fewer for long ones.
fn rows_for(n: usize) -> usize {
    match n {
        0..=4096 => 16,
        4097..=65536 => 8,
        _ => 2,
    }
}

fn check(n: usize) -> usize {
    let mut compared = 0;
    for precision in PRECISIONS {
        let plan = FftPlan::new(n, precision).unwrap();
        let dp = plan.device_plan();
        assert_eq!(dp.is_f64(), precision == Precision::F64Internal);
        let rows = rows_for(n);
        for inverse in [false, true] {
            let x = input(rows, n, 0x9E37_79B9 ^ (n as u64) << 8 ^ inverse as u64);
            let want = cpu(&plan, inverse, &x);
            let got = host_kernels(&dp, rows, inverse, &x);
            if let Some(i) = (0..want.len()).find(|&i| want[i].to_bits() != got[i].to_bits()) {
                panic!(
                    "n={n} {precision:?} inverse={inverse}: value {i} (row {}) cpu {:e} ({:#010x}) host kernels {:e} ({:#010x})",
                    i / (2 * n),
                    want[i],
                    want[i].to_bits(),
                    got[i],
                    got[i].to_bits()
                );
            }
            compared += want.len() / 2;
        }
    }
    compared
}

#[test]
fn powers_of_two_match_the_cpu_bits() {
    let mut total = 0;
    for p in 1..=16 {
        total += check(1 << p);
    }
    println!(
        "n = 2^1..2^16, 3 precisions, forward and inverse: {total} values, host kernels == CPU"
    );
}

#[test]
fn two_to_the_twenty_matches_the_cpu_bits() {
    let total = check(1 << 20);
    println!("n = 2^20: {total} values, host kernels == CPU");
}

#[test]
fn small_and_bluestein_sizes_match_the_cpu_bits() {
    let mut total = 0;
    for n in [1, 3, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15] {
        total += check(n);
    }
    for n in [17, 24, 100, 127, 1000, 1155, 4097, 12345] {
        total += check(n);
    }
    println!("n <= 16 and Bluestein sizes: {total} values, host kernels == CPU");
}

#[test]
fn plans_carry_the_cpu_tables() {
    // The table is what the steps index; spot-check that it holds correctly rounded
    // twiddles at the offsets the stages read (the first stage has none).
    let plan = FftPlan::new(64, Precision::F32).unwrap();
    let dp = plan.device_plan();
    let Table::F32(t) = &dp.table else {
        panic!("f32 table")
    };
    let stages: Vec<_> = dp
        .steps
        .iter()
        .filter_map(|s| match *s {
            Step::Stage { ns, tw, radix, .. } => Some((radix, ns, tw)),
            _ => None,
        })
        .collect();
    assert_eq!(stages.len(), 2);
    let (radix, ns, tw) = stages[1];
    assert_eq!((radix, ns), (8, 8));
    // w_64^(r j) for r = 1, j = 1: (cos, -sin)(2 pi / 64).
    let (c, s) = (t[tw + 1], t[tw + (radix - 1) * ns + 1]);
    let a = 2.0 * std::f64::consts::PI / 64.0;
    assert_eq!(c, a.cos() as f32);
    assert_eq!(s, -(a.sin() as f32));
}

/// The op kernels around the transform (`repro_fft_op_*`), composed as
/// src/fft/cuda.rs `op_fwd` composes them, against the candle ops on the CPU: fft, ifft,
/// rfft and irfft (half spectra shorter, equal to and longer than n/2 + 1), every norm
/// and precision.
#[test]
fn ops_match_the_cpu_bits() {
    use candle_core::{Device, Tensor};
    use candle_repro::fft::{Norm, fft_with, ifft_with, irfft_with, rfft_with};
    use candle_repro::ops::fft::{FftKind, norm_divisor};
    use kernel_hostcheck::fft::op;

    fn bits(t: &Tensor) -> Vec<u32> {
        t.flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    }
    fn raw(v: &[f32]) -> Vec<u32> {
        v.iter().map(|v| v.to_bits()).collect()
    }

    let rows = 8;
    let mut ops = 0;
    for precision in PRECISIONS {
        for norm in [Norm::Backward, Norm::Ortho, Norm::Forward] {
            for n in [1usize, 2, 5, 8, 16, 17, 64, 100, 1024] {
                let dp = FftPlan::new(n, precision).unwrap().device_plan();
                let host =
                    |inverse: bool, x: &[f32]| host_kernels(&dp, x.len() / (2 * n), inverse, x);
                let what = format!("n={n} {precision:?} {norm:?}");
                let x = input(rows, n, n as u64 * 31 + 7);
                let t = Tensor::from_vec(x.clone(), (rows, n, 2), &Device::Cpu).unwrap();
                for (kind, inverse) in [(FftKind::Fft, false), (FftKind::Ifft, true)] {
                    let want = if inverse {
                        ifft_with(&t, norm, precision)
                    } else {
                        fft_with(&t, norm, precision)
                    };
                    let mut y = host(inverse, &x);
                    let d = norm_divisor(kind, norm, n);
                    if d.is_some() {
                        y = op::scale(d, &y);
                    }
                    assert!(bits(&want.unwrap()) == raw(&y), "{kind:?} {what}");
                }
                // rfft of the real values.
                let xr = &x[..rows * n];
                let tr = Tensor::from_vec(xr.to_vec(), (rows, n), &Device::Cpu).unwrap();
                let want = rfft_with(&tr, norm, precision).unwrap();
                let d = norm_divisor(FftKind::Rfft, norm, n);
                let y = op::take_half(n, d, &host(false, &op::real_to_complex(xr)));
                assert!(bits(&want) == raw(&y), "rfft {what}");
                // irfft from half spectra of several lengths.
                let d = norm_divisor(FftKind::Irfft, norm, n);
                for m in [n / 2 + 1, n / 2 + 3, (n / 4).max(1)] {
                    let xc = input(rows, m, m as u64 * 13 + n as u64);
                    let tc = Tensor::from_vec(xc.clone(), (rows, m, 2), &Device::Cpu).unwrap();
                    let want = irfft_with(&tc, Some(n), norm, precision).unwrap();
                    let y = op::real_part(d, &host(true, &op::hermitian(m, n, &xc)));
                    assert!(bits(&want) == raw(&y), "irfft m={m} {what}");
                }
                ops += 6;
            }
        }
    }
    println!("{ops} op calls: host kernels == CPU ops");
}
