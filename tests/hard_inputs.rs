//! The hardest inputs of every elementwise rounding decision (issue 31), kept as data by
//! `tools/hard-inputs/generate.sh` (`examples/hard_inputs.rs`, checked against MPFR when
//! written): per function and format, the inputs whose fast-path result lies on the wrong
//! side of a rounding boundary (the only inputs where a bound too small changes an output:
//! the scalar and vector tests with a bound divided by 2^k accept the wrong value for the
//! k the data records), then the right-side ones nearest a boundary. Each is run through
//! the scalar functions, every slice path of this CPU (baseline: the unfused fast paths;
//! AVX2/AVX-512: the fused ones), the CUDA kernels on the emulated device, and, for sin and
//! cos, the RoPE table entries (`cos_sin_entry`, and the fused rope kernel on the
//! emulated device with the angle as the frequency at position 1). Every output must be
//! the recorded correctly rounded value.
//!
//! `cargo test --release --test hard_inputs`
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

mod common;

use candle_core::{Device as Cpu, Tensor};
use candle_repro::UnaryFn;
use candle_repro::math::{self, Format, VectorPath};
use common::bits;
use common::emu::{Emu, download, upload};
use half::{bf16, f16};

/// The data folder: tests/data/hard (`REPRO_HARD_INPUTS` names another, for trying a
/// fresh output of the generator).
fn data_dir() -> String {
    std::env::var("REPRO_HARD_INPUTS")
        .unwrap_or_else(|_| format!("{}/tests/data/hard", env!("CARGO_MANIFEST_DIR")))
}

/// One kept input: (x bits, correctly rounded f(x) bits) of one format.
struct Case {
    fmt: String,
    x: u32,
    correct: u32,
}

/// The kept inputs of function `name` (both flavours' inputs; duplicates removed).
fn load(name: &str) -> Vec<Case> {
    let path = format!("{}/{name}.txt", data_dir());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let hex = |s: &str| u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut cases = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 7, "{path}: bad line {line:?}");
        let (x, correct) = (hex(f[2]), hex(f[3]));
        if seen.insert((f[0].to_string(), x)) {
            cases.push(Case {
                fmt: f[0].to_string(),
                x,
                correct,
            });
        }
    }
    cases
}

fn of<'a>(cases: &'a [Case], fmt: &'a str) -> impl Iterator<Item = &'a Case> + 'a {
    cases.iter().filter(move |c| c.fmt == fmt)
}

type Scalar<T> = fn(T) -> T;
type Slice<T> = fn(VectorPath, &[T], &mut [T]);

fn functions<T: Format>() -> Vec<(&'static str, Scalar<T>, Slice<T>)> {
    macro_rules! t {
        ($($n:ident),*) => {
            vec![$(paste::paste! {
                (stringify!($n), math::[<$n _in>]::<T> as Scalar<T>, math::[<$n _slice_with>]::<T> as Slice<T>)
            }),*]
        };
    }
    t!(
        exp, expm1, log, log1p, log10, sin, cos, tanh, sigmoid, silu, softplus, erf, gelu, gelu_erf
    )
}

fn check_cpu<T: Format>(fmt: &str) -> usize {
    let paths = VectorPath::available();
    let mut checked = 0;
    for (name, scalar, slice) in functions::<T>() {
        let all = load(name);
        let cases: Vec<&Case> = of(&all, fmt).collect();
        if cases.is_empty() {
            continue;
        }
        for c in &cases {
            let got = scalar(T::from_bits(c.x)).bits();
            assert_eq!(
                got, c.correct,
                "{name} {fmt} scalar at x = {:#x}: {got:#x}, correct {:#x}",
                c.x, c.correct
            );
        }
        // Every input repeated 16 times, so all of them go through the vector chunks (16
        // lanes) and not the scalar tail.
        let xs: Vec<T> = cases
            .iter()
            .flat_map(|c| std::iter::repeat_n(T::from_bits(c.x), 16))
            .collect();
        for &path in &paths {
            let mut out = xs.clone();
            slice(path, &xs, &mut out);
            for (i, o) in out.iter().enumerate() {
                let c = cases[i / 16];
                assert_eq!(
                    o.bits(),
                    c.correct,
                    "{name} {fmt} {path:?} slice at x = {:#x}: {:#x}, correct {:#x}",
                    c.x,
                    o.bits(),
                    c.correct
                );
            }
        }
        checked += cases.len();
    }
    checked
}

#[test]
fn cpu_scalar_and_every_vector_path() {
    let n = check_cpu::<f32>("f32") + check_cpu::<bf16>("bf16") + check_cpu::<f16>("f16");
    assert!(n > 0, "no hard inputs found (tests/data/hard)");
    println!("{n} hard inputs: scalar and slice paths correctly rounded");
}

fn tensor_of(fmt: &str, xs: &[u32]) -> Tensor {
    let t = match fmt {
        "f32" => Tensor::from_vec(
            xs.iter().map(|&b| f32::from_bits(b)).collect::<Vec<_>>(),
            xs.len(),
            &Cpu::Cpu,
        ),
        "bf16" => Tensor::from_vec(
            xs.iter()
                .map(|&b| bf16::from_bits(b as u16))
                .collect::<Vec<_>>(),
            xs.len(),
            &Cpu::Cpu,
        ),
        _ => Tensor::from_vec(
            xs.iter()
                .map(|&b| f16::from_bits(b as u16))
                .collect::<Vec<_>>(),
            xs.len(),
            &Cpu::Cpu,
        ),
    };
    t.unwrap()
}

#[test]
fn emulated_device_kernels() {
    let mut checked = 0;
    for f in UnaryFn::ALL {
        let cases = load(f.name());
        for fmt in ["f32", "bf16", "f16"] {
            let cs: Vec<&Case> = of(&cases, fmt).collect();
            if cs.is_empty() {
                continue;
            }
            let x = tensor_of(fmt, &cs.iter().map(|c| c.x).collect::<Vec<_>>());
            let (buf, layout) = upload(&x);
            let out = candle_repro::elementwise::cuda::unary(&Emu, f, &buf, &layout).unwrap();
            let got = bits(&download(&out, x.dims()));
            for (g, c) in got.iter().zip(&cs) {
                assert_eq!(
                    *g,
                    c.correct,
                    "{} {fmt} on the emulated device at x = {:#x}: {g:#x}, correct {:#x}",
                    f.name(),
                    c.x,
                    c.correct
                );
            }
            checked += cs.len();
        }
    }
    assert!(checked > 0);
    println!("{checked} hard inputs: emulated device kernels correctly rounded");
}

/// The kept angles of the RoPE entry decision for output format `fmt` (both flavours, cos
/// and sin), with cos(a) and sin(a) correctly rounded to `fmt` (MPFR).
fn rope_angles(fmt: &str) -> Vec<(f32, u32, u32)> {
    use mpfr_oracle::rope::cos_sin_scaled;
    let path = format!("{}/rope_entry.txt", data_dir());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut v: Vec<f32> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f[0] == format!("cos-{fmt}") || f[0] == format!("sin-{fmt}"))
        .map(|f| f32::from_bits(u32::from_str_radix(f[2].trim_start_matches("0x"), 16).unwrap()))
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v.dedup_by(|a, b| a.to_bits() == b.to_bits());
    let ofmt = match fmt {
        "f32" => mpfr_oracle::F32,
        "bf16" => mpfr_oracle::BF16,
        _ => mpfr_oracle::F16,
    };
    let to_bits = |x: f64| match fmt {
        "f32" => (x as f32).to_bits(),
        "bf16" => bf16::from_f64(x).to_bits() as u32,
        _ => f16::from_f64(x).to_bits() as u32,
    };
    v.into_iter()
        .map(|a| {
            let (c, s) = cos_sin_scaled(a, 1.0, ofmt);
            (a, to_bits(c), to_bits(s))
        })
        .collect()
}

fn check_rope_entries<F: Format + candle_core::WithDType>(fmt: &str) -> usize {
    use candle_repro::rope::{RopeFreqs, RopeLayout, cos_sin_entry, rope_fused};
    let angles = rope_angles(fmt);
    if angles.is_empty() {
        return 0;
    }
    for &(a, c, s) in &angles {
        let (cv, sv) = cos_sin_entry::<F>(a, 1.0);
        assert_eq!(
            (cv.bits(), sv.bits()),
            (c, s),
            "cos_sin_entry::<{fmt}>({a:e} = {:#x}): ({:#x}, {:#x}), correct ({c:#x}, {s:#x})",
            a.to_bits(),
            cv.bits(),
            sv.bits()
        );
    }
    // One head of d = 2 * angles, position 1, x = (1 ... 1, 0 ... 0): out = the (cos, sin)
    // entries, 1 * c - 0 * s and 0 * c + 1 * s each rounded once (an entry -0 comes out +0,
    // the sign of an exact zero sum).
    let h = angles.len();
    let freqs = RopeFreqs {
        inv_freq: angles.iter().map(|t| t.0).collect(),
        attention_factor: 1.0,
    };
    let one = F::round(1.0);
    let zero = F::round(0.0);
    let mut xv = vec![one; h];
    xv.extend(std::iter::repeat_n(zero, h));
    let x = Tensor::from_vec(xv, (1, 1, 1, 2 * h), &Cpu::Cpu).unwrap();
    let pos = Tensor::from_vec(vec![1u32], 1, &Cpu::Cpu).unwrap();
    let sign = F::SIGN_BIT;
    let want: Vec<u32> = angles
        .iter()
        .map(|t| t.1)
        .chain(angles.iter().map(|t| t.2))
        .map(|b| if b == sign { 0 } else { b })
        .collect();
    let cpu = bits(&rope_fused(RopeLayout::Halves, &x, &pos, &freqs).unwrap());
    assert_eq!(cpu, want, "rope_fused {fmt} (CPU) at the hardest angles");
    let ((xb, xl), (pb, pl)) = (upload(&x), upload(&pos));
    let out = candle_repro::rope::cuda::rope_fused(
        &Emu,
        RopeLayout::Halves,
        1.0,
        &freqs.inv_freq,
        1.0,
        (&xb, &xl),
        (&pb, &pl),
    )
    .unwrap();
    let dev = bits(&download(&out, x.dims()));
    for (i, (d, w)) in dev.iter().zip(&want).enumerate() {
        assert_eq!(
            d,
            w,
            "rope_fused {fmt} on the emulated device, angle {:e} ({}): {d:#x}, correct {w:#x}",
            angles[i % h].0,
            if i < h { "cos" } else { "sin" }
        );
    }
    h
}

/// The RoPE table entries (factor 1) at the hardest angles of each output format: the
/// CPU's `cos_sin_entry` and rope_fused, and the fused rope kernel on the emulated device
/// (the angle as the inverse frequency, at position 1, where the angle is inv * 1 exactly),
/// whose rotation of (1, 0) gives the entries themselves.
#[test]
fn rope_entries_at_the_hardest_angles() {
    let n = check_rope_entries::<f32>("f32")
        + check_rope_entries::<bf16>("bf16")
        + check_rope_entries::<f16>("f16");
    assert!(n > 0);
    println!("{n} hardest angles: RoPE entries correctly rounded on the CPU and the device");
}

/// The FFT twiddle magnitudes nearest an f32 and an f64 rounding boundary (cos and sin of
/// 2 pi p / d, 0 < p / d < 1/4, from the tables of the power-of-two plans up to 2^20 and
/// of every d <= 2048; the nearest lies 2^-44.9 (f32) and 2^-70.9 (f64) from a boundary,
/// relative): our f32 and f64 entries must be MPFR's. The CUDA kernels upload these same
/// tables (`fft::cuda`), so the CPU's entries are the device's.
#[test]
fn fft_twiddles_at_the_hardest_angles() {
    use candle_repro::fft::twiddles::probe_twiddle;
    let path = format!("{}/fft_twiddle.txt", data_dir());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut n = [0usize; 2];
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (p, d): (u64, u64) = (f[2].parse().unwrap(), f[3].parse().unwrap());
        let want = u64::from_str_radix(f[5].trim_start_matches("0x"), 16).unwrap();
        let ((c32, s32), (c64, s64)) = probe_twiddle(p, d);
        // The tables hold (cos, -sin).
        let (v32, v64) = if f[1] == "cos" {
            (c32, c64)
        } else {
            (-s32, -s64)
        };
        let (got, k) = match f[0] {
            "f32" => (v32.to_bits() as u64, 0),
            _ => (v64.to_bits(), 1),
        };
        assert_eq!(
            got, want,
            "{} {} of 2 pi {p}/{d}: ours {got:#x}, MPFR {want:#x}",
            f[0], f[1]
        );
        n[k] += 1;
    }
    assert!(n[0] >= 100 && n[1] >= 100, "{n:?} entries");
    println!(
        "{} f32 and {} f64 twiddle entries nearest a boundary: MPFR's",
        n[0], n[1]
    );
}

/// The f8 cast's hardest inputs, constructed: every rounding boundary of E4M3 (the
/// midpoint between each pair of neighbouring magnitudes, 0 and the overflow threshold 464
/// included) and the values 1 and 2 steps of the input format either side of it, both
/// signs, plus infinities and NaN; in each input format.
fn f8_inputs(fmt: &str) -> Vec<u32> {
    let mut mags: Vec<f64> = (0u8..=0x7E)
        .map(|b| candle_repro::math::f8::f8e4m3_to_f32(b) as f64)
        .collect();
    mags.push(480.0); // the first magnitude beyond 448: the overflow boundary is 464
    let mut v = Vec::new();
    for w in mags.windows(2) {
        let m = (0.5 * (w[0] + w[1])) as f32; // 5 significant bits: exact in every format
        for sign in [1.0f32, -1.0] {
            let x = sign * m;
            let base = match fmt {
                "f32" => x.to_bits() as i64,
                "bf16" => bf16::from_f32(x).to_bits() as i64,
                _ => f16::from_f32(x).to_bits() as i64,
            };
            for d in -2i64..=2 {
                v.push((base + d) as u32);
            }
        }
    }
    let specials: [f32; 4] = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e30];
    for s in specials {
        v.push(match fmt {
            "f32" => s.to_bits(),
            "bf16" => bf16::from_f32(s).to_bits() as u32,
            _ => f16::from_f32(s).to_bits() as u32,
        });
    }
    v
}

/// The E4M3 bits of x by the definition: the nearest of the 127 finite magnitudes (ties:
/// the even code), the distances exact in f64 (every input here is a multiple of 2^-40
/// below 2^10); above 464 the overflow rule (464 itself ties to 448, code 0x7E, even,
/// rather than to 480, which would be the odd code 0x7F).
fn f8_by_definition(x: f64, overflow: candle_repro::Overflow) -> u8 {
    if x.is_nan() {
        return 0x7F;
    }
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    let a = x.abs();
    if a > 464.0 {
        return match overflow {
            candle_repro::Overflow::Saturate => sign | 0x7E,
            candle_repro::Overflow::Nan => 0x7F,
        };
    }
    let mut best = 0u8;
    for b in 1u8..=0x7E {
        let v = candle_repro::math::f8::f8e4m3_to_f32(b) as f64;
        let bv = candle_repro::math::f8::f8e4m3_to_f32(best) as f64;
        let (d, db) = ((a - v).abs(), (a - bv).abs()); // exact: both near a, few bits
        if d < db || (d == db && b % 2 == 0) {
            best = b;
        }
    }
    sign | best
}

#[test]
fn f8_cast_at_every_rounding_boundary() {
    use candle_repro::{Overflow, to_f8e4m3};
    let mut checked = 0;
    for fmt in ["f32", "bf16", "f16"] {
        let xs = f8_inputs(fmt);
        let x = tensor_of(fmt, &xs);
        let xf: Vec<f64> = x
            .to_dtype(candle_core::DType::F64)
            .unwrap()
            .to_vec1()
            .unwrap();
        for overflow in [Overflow::Saturate, Overflow::Nan] {
            let want: Vec<u32> = xf
                .iter()
                .map(|&v| f8_by_definition(v, overflow) as u32)
                .collect();
            let cpu = bits(&to_f8e4m3(&x, overflow).unwrap());
            let (buf, layout) = upload(&x);
            let out = candle_repro::matmul::cuda::to_f8e4m3(&Emu, &buf, &layout, overflow).unwrap();
            let dev: Vec<u32> = out.mem.as_bytes().iter().map(|&b| b as u32).collect();
            for (i, w) in want.iter().enumerate() {
                assert_eq!(
                    cpu[i], *w,
                    "to_f8e4m3 {fmt} {overflow:?} (CPU) at x = {:e}: {:#x}, correct {w:#x}",
                    xf[i], cpu[i]
                );
                assert_eq!(
                    dev[i], *w,
                    "to_f8e4m3 {fmt} {overflow:?} (emulated device) at x = {:e}: {:#x}, correct {w:#x}",
                    xf[i], dev[i]
                );
            }
            checked += xs.len();
        }
    }
    println!("{checked} f8 casts at the rounding boundaries: CPU and device correct");
}
