//! Host cross-check of the softmax CUDA kernel's math: `kernels/softmax_math.cuh` (with the
//! generated exp mirror `kernels/softmax_exp.cuh`) compiled as plain host C++ with
//! `-ffp-contract=off` (as nvcc compiles it with --fmad=false), driven by
//! `tools/softmax-hostcheck/shim.cpp` exactly as a block of `kernels/softmax.cu` drives it
//! (T threads over strided elements, exact partial sums combined), and compared bit for
//! bit with the Rust softmax and log-softmax (the latter through its host step,
//! `log_softmax_params`, as `src/cuda/softmax.rs` runs it): f32, bf16 and f16, random and special rows, rows long enough
//! for many flushes per thread, and several thread counts. Needs a C++ compiler (`c++`),
//! no GPU.

use candle_repro::math::{Format, VectorPath};
use candle_repro::ops::softmax::{log_softmax_params, log_softmax_slice_with, softmax_slice_with};
use half::{bf16, f16};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

fn shim() -> &'static PathBuf {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("softmax_hostcheck_shim");
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
        let status = Command::new(&cxx)
            .args(["-std=c++17", "-O2", "-ffp-contract=off", "-fno-fast-math"])
            .arg("-I")
            .arg(root.join("kernels"))
            .arg("-o")
            .arg(&out)
            .arg(root.join("tools/softmax-hostcheck/shim.cpp"))
            .status()
            .expect("cannot run the C++ compiler");
        assert!(status.success(), "compiling the softmax host shim failed");
        out
    })
}

/// Run the device math on the host: rows of length n, T threads per row.
fn device<T: Format>(fmt: u32, n: usize, x: &[T], threads: usize) -> Vec<u32> {
    let width = if fmt == 0 { 4 } else { 2 };
    let out = run_shim(fmt, n, x, threads, "softmax", &[]);
    out.chunks(width)
        .map(|c| {
            let mut b = [0u8; 4];
            b[..width].copy_from_slice(c);
            u32::from_le_bytes(b)
        })
        .collect()
}

/// The CUDA log-softmax on the host: the stats kernel, the host step
/// (`log_softmax_params`, what src/cuda/softmax.rs runs), the out kernel.
fn device_log<T: Format>(fmt: u32, n: usize, x: &[T], threads: usize) -> Vec<u32> {
    let width = if fmt == 0 { 4 } else { 2 };
    let stats: Vec<u64> = run_shim(fmt, n, x, threads, "stats", &[])
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let params = log_softmax_params::<T>(n, &stats);
    let mut extra = Vec::new();
    for p in params {
        extra.extend_from_slice(&p.to_le_bytes());
    }
    run_shim(fmt, n, x, threads, "logout", &extra)
        .chunks(width)
        .map(|c| {
            let mut b = [0u8; 4];
            b[..width].copy_from_slice(c);
            u32::from_le_bytes(b)
        })
        .collect()
}

fn run_shim<T: Format>(
    fmt: u32,
    n: usize,
    x: &[T],
    threads: usize,
    mode: &str,
    extra: &[u8],
) -> Vec<u8> {
    let width = if fmt == 0 { 4 } else { 2 };
    let mut input = Vec::new();
    input.extend_from_slice(&fmt.to_le_bytes());
    input.extend_from_slice(&((x.len() / n) as u64).to_le_bytes());
    input.extend_from_slice(&(n as u64).to_le_bytes());
    for v in x {
        input.extend_from_slice(&v.bits().to_le_bytes()[..width]);
    }
    input.extend_from_slice(extra);
    let mut child = Command::new(shim())
        .arg(threads.to_string())
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "shim failed: {:?}", out.status);
    out.stdout
}

fn rust<T: Format + Default>(n: usize, x: &[T]) -> Vec<u32> {
    softmax_slice_with(VectorPath::detect(), n, x)
        .iter()
        .map(|v| v.bits())
        .collect()
}

fn rust_log<T: Format + Default>(n: usize, x: &[T]) -> Vec<u32> {
    log_softmax_slice_with(VectorPath::detect(), n, x)
        .iter()
        .map(|v| v.bits())
        .collect()
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

fn check_all_formats(n: usize, x: &[f32], threads: &[usize]) {
    let xb: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
    let xh: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
    let (r32, rb, rh) = (rust(n, x), rust(n, &xb), rust(n, &xh));
    let (l32, lb, lh) = (rust_log(n, x), rust_log(n, &xb), rust_log(n, &xh));
    for &t in threads {
        let d = device(0, n, x, t);
        let first = d.iter().zip(&r32).position(|(a, b)| a != b);
        assert!(
            first.is_none(),
            "f32 n={n} T={t}: first mismatch at {first:?}"
        );
        assert!(device(1, n, &xb, t) == rb, "bf16 n={n} T={t}");
        assert!(device(2, n, &xh, t) == rh, "f16 n={n} T={t}");
        let d = device_log(0, n, x, t);
        let first = d.iter().zip(&l32).position(|(a, b)| a != b);
        assert!(
            first.is_none(),
            "log f32 n={n} T={t}: first mismatch at {first:?}"
        );
        assert!(device_log(1, n, &xb, t) == lb, "log bf16 n={n} T={t}");
        assert!(device_log(2, n, &xh, t) == lh, "log f16 n={n} T={t}");
    }
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
        check_all_formats(n, &x, &[256, 37, 1]);
        total += x.len();
    }
    println!("{total} elements per format and thread count: device math == Rust");
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
    for x in cases {
        check_all_formats(x.len(), &x, &[256, 3, 1]);
    }
}
