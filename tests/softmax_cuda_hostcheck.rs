//! Host cross-check of the softmax CUDA kernels' math: `kernels/softmax_math.cuh` (with
//! the math core's device mirror `kernels/math/`, as `kernels/softmax.cu` includes it)
//! compiled as plain host C++ with `-ffp-contract=off` (as nvcc compiles it with
//! --fmad=false) by tools/kernel-hostcheck, driven by its `src/softmax_shim.cpp` exactly as a
//! block of `kernels/softmax.cu` drives it (T threads over strided elements, exact partial
//! sums combined), and compared bit for bit with the Rust softmax, log-softmax and both
//! backward passes: f32, bf16 and f16, random and special rows, rows long enough for many
//! flushes per thread, and several thread counts. Needs a C++ compiler, no GPU.
//!
//! `cargo test --release --test softmax_cuda_hostcheck`
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_repro::math::{Format, VectorPath};
use candle_repro::softmax::{log_softmax_slice_with, softmax_bwd_slice, softmax_slice_with};
use half::{bf16, f16};
use kernel_hostcheck::softmax::{Fmt, backward, forward};

fn fmt_of(width: usize, fmt: u32) -> Fmt {
    match (width, fmt) {
        (4, _) => Fmt::F32,
        (_, 1) => Fmt::BF16,
        _ => Fmt::F16,
    }
}

fn bits<T: Format>(x: &[T]) -> Vec<u32> {
    x.iter().map(|v| v.bits()).collect()
}

/// Run a device function on the host on u32 bit patterns (narrowed to u16 for 16-bit
/// formats).
fn on_bits(
    fmt: u32,
    f32_fn: impl Fn(Fmt, &[&[u32]]) -> Vec<u32>,
    u16_fn: impl Fn(Fmt, &[&[u16]]) -> Vec<u16>,
    args: &[Vec<u32>],
) -> Vec<u32> {
    if fmt == 0 {
        let a: Vec<&[u32]> = args.iter().map(|v| v.as_slice()).collect();
        f32_fn(Fmt::F32, &a)
    } else {
        let narrow: Vec<Vec<u16>> = args
            .iter()
            .map(|v| v.iter().map(|&b| b as u16).collect())
            .collect();
        let a: Vec<&[u16]> = narrow.iter().map(|v| v.as_slice()).collect();
        u16_fn(fmt_of(2, fmt), &a)
            .into_iter()
            .map(u32::from)
            .collect()
    }
}

/// The forward kernels' math on the host: rows of length n, T threads per row.
fn device<T: Format>(fmt: u32, log: bool, n: usize, x: &[T], threads: usize) -> Vec<u32> {
    on_bits(
        fmt,
        |f, a| forward(f, log, n, threads, a[0]),
        |f, a| forward(f, log, n, threads, a[0]),
        &[bits(x)],
    )
}

/// The backward kernels' math on the host.
fn device_bwd<T: Format>(
    fmt: u32,
    log: bool,
    n: usize,
    y: &[T],
    g: &[T],
    threads: usize,
) -> Vec<u32> {
    on_bits(
        fmt,
        |f, a| backward(f, log, n, threads, a[0], a[1]),
        |f, a| backward(f, log, n, threads, a[0], a[1]),
        &[bits(y), bits(g)],
    )
}

fn rows(seed: u64, rows: usize, n: usize, spread: f32) -> Vec<f32> {
    let mut s = seed;
    (0..rows * n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 40) as f32 / (1u64 << 24) as f32;
            match i % 97 {
                0 => 3.0,
                1 => -1e30,
                _ => (u * 2.0 - 1.0) * spread,
            }
        })
        .collect()
}

fn first_mismatch(a: &[u32], b: &[u32]) -> Option<usize> {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).position(|(a, b)| a != b)
}

/// Forward and backward of one format: the device math for every thread count against
/// the Rust code. The backward passes run on the forward output (the usual case) and on x
/// itself (arbitrary y, including huge and non-finite values).
fn check_format<T: Format + Default>(
    fmt: u32,
    name: &str,
    n: usize,
    x: &[T],
    g: &[T],
    threads: &[usize],
) {
    let path = VectorPath::detect();
    for log in [false, true] {
        let y = if log {
            log_softmax_slice_with(path, n, x)
        } else {
            softmax_slice_with(path, n, x)
        };
        let want = bits(&y);
        let want_bwd = bits(&softmax_bwd_slice(log, n, &y, g));
        let want_bwd_x = bits(&softmax_bwd_slice(log, n, x, g));
        for &t in threads {
            let tag = format!("{name} log={log} n={n} T={t}");
            let d = device(fmt, log, n, x, t);
            assert_eq!(first_mismatch(&d, &want), None, "fwd {tag}");
            let d = device_bwd(fmt, log, n, &y, g, t);
            assert_eq!(first_mismatch(&d, &want_bwd), None, "bwd {tag}");
            let d = device_bwd(fmt, log, n, x, g, t);
            assert_eq!(first_mismatch(&d, &want_bwd_x), None, "bwd(y = x) {tag}");
        }
    }
}

fn check_all_formats(n: usize, x: &[f32], g: &[f32], threads: &[usize]) {
    let b = |v: &[f32]| v.iter().map(|&v| bf16::from_f32(v)).collect::<Vec<_>>();
    let h = |v: &[f32]| v.iter().map(|&v| f16::from_f32(v)).collect::<Vec<_>>();
    check_format(0, "f32", n, x, g, threads);
    check_format(1, "bf16", n, &b(x), &b(g), threads);
    check_format(2, "f16", n, &h(x), &h(g), threads);
}

#[test]
fn device_math_equals_rust_random_rows() {
    let mut total = 0;
    for (i, &(r, n, spread)) in [
        (300usize, 1usize, 5.0f32),
        (300, 2, 5.0),
        (200, 33, 20.0),
        (100, 1000, 10.0),
        (64, 4096, 100.0),
        (20, 5000, 3.0),
        (4, 100_000, 30.0),
    ]
    .iter()
    .enumerate()
    {
        let x = rows(0xABCD + i as u64, r, n, spread);
        let g = rows(0x1234 + i as u64, r, n, 1.0 + i as f32);
        check_all_formats(n, &x, &g, &[256, 37, 1]);
        total += x.len();
    }
    println!(
        "{total} elements per format and thread count: device math == Rust (softmax, \
         log-softmax and both backward passes)"
    );
}

#[test]
fn device_math_equals_rust_special_rows() {
    let inf = f32::INFINITY;
    let cases: Vec<Vec<f32>> = vec![
        vec![7.0],
        vec![inf],
        vec![f32::NEG_INFINITY],
        vec![f32::NEG_INFINITY; 5],
        vec![1.0, f32::NAN, 3.0],
        vec![inf, f32::NAN],
        vec![inf, 0.0, inf, f32::NEG_INFINITY],
        vec![inf, inf, inf],
        vec![f32::NEG_INFINITY, 2.0],
        vec![0.0, -100.0, -745.5, -1e38],
        vec![3.0e38, -3.0e38, 3.0e38],
        vec![1e-45, -1e-45, 0.0, -0.0],
    ];
    // Gradients: the special rows again (another row's, rotated), and ordinary values.
    for (i, x) in cases.iter().enumerate() {
        let other = &cases[(i + 5) % cases.len()];
        let g: Vec<f32> = (0..x.len()).map(|j| other[(j + 1) % other.len()]).collect();
        check_all_formats(x.len(), x, &g, &[256, 3, 1]);
        let g: Vec<f32> = (0..x.len()).map(|j| 0.25 - j as f32).collect();
        check_all_formats(x.len(), x, &g, &[256, 3, 1]);
    }
}
