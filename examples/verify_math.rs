//! Exhaustive correct-rounding check of the math core: every one of the 2^32 f32 inputs
//! (or every 16-bit input with `--format bf16|f16`).
//!
//! ```text
//! cargo run --release --example verify_math -- <function|all> [--format f32|bf16|f16]
//!                                                 [--range START:END (f32 bit patterns, hex)]
//!                                                 [--closest K]
//! ```
//!
//! prints `checked N, misrounded M, max error E ulp` per function. The f32 results are those
//! of the slice kernels (the path the tensor ops run, on this CPU's widest vectors); the
//! count of inputs where they differ from the scalar function is printed too (always 0).
//!
//! The reference for an f32 input is decided in two steps. First the platform's f64 math
//! (glibc: documented errors of a few ulps of f64, about 2^-50 relative) gives r; if every
//! number within 2^-40 relative of r rounds to the same f32, that is the correctly rounded
//! result (the margin is 2^10 times the documented error). Otherwise (about one input in
//! 2^15, plus special inputs and NaN results) MPFR decides. 16-bit formats use MPFR for
//! every input. The max error is |ours - r| in units of ulp(ours), from the f64 value r.
//!
//! `--closest K` (f32) also prints the K inputs whose r lies nearest a rounding boundary (a
//! midpoint between two f32), in ulps of the result, normal results only: the candidates
//! for the hard-case lists of the tests (`tests/common/hard_cases.rs`). r's own error (about
//! 2^-50 relative, 2^-26 ulp) limits what these distances resolve.
//!
//! The f64 references of erf and gelu_erf are glibc's `erf` and `erfc`; gelu's is
//! x / (1 + e^-w) in f64. Where the argument's roundings are amplified (gelu_erf's and
//! gelu's for negative x) they stay within 2^-43 relative wherever the result is at least
//! 2^-151 (the comments at `reference_f64`), still 2^3 below the margin; smaller results
//! round to zero with every value within the margin.

use candle_repro::math;
use mpfr_oracle::{Func, cr_bf16, cr_f16, cr_f32};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

fn ours_f32(f: Func) -> fn(f32) -> f32 {
    match f {
        Func::Exp => math::exp,
        Func::Expm1 => math::expm1,
        Func::Log => math::log,
        Func::Log1p => math::log1p,
        Func::Log10 => math::log10,
        Func::Sin => math::sin,
        Func::Cos => math::cos,
        Func::Tanh => math::tanh,
        Func::Sigmoid => math::sigmoid,
        Func::Silu => math::silu,
        Func::Softplus => math::softplus,
        Func::Erf => math::erf,
        Func::Gelu => math::gelu,
        Func::GeluErf => math::gelu_erf,
    }
}

/// The slice kernel (widest vector path of this CPU): what the tensor ops run.
fn ours_slice(f: Func) -> fn(&[f32], &mut [f32]) {
    match f {
        Func::Exp => math::exp_slice,
        Func::Expm1 => math::expm1_slice,
        Func::Log => math::log_slice,
        Func::Log1p => math::log1p_slice,
        Func::Log10 => math::log10_slice,
        Func::Sin => math::sin_slice,
        Func::Cos => math::cos_slice,
        Func::Tanh => math::tanh_slice,
        Func::Sigmoid => math::sigmoid_slice,
        Func::Silu => math::silu_slice,
        Func::Softplus => math::softplus_slice,
        Func::Erf => math::erf_slice,
        Func::Gelu => math::gelu_slice,
        Func::GeluErf => math::gelu_erf_slice,
    }
}

/// The function in f64 with the platform's math: a fast filter, never the final word.
fn reference_f64(f: Func, x: f64) -> f64 {
    match f {
        Func::Exp => x.exp(),
        Func::Expm1 => x.exp_m1(),
        Func::Log => x.ln(),
        Func::Log1p => x.ln_1p(),
        Func::Log10 => x.log10(),
        Func::Sin => x.sin(),
        Func::Cos => x.cos(),
        Func::Tanh => x.tanh(),
        Func::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        Func::Silu => x / (1.0 + (-x).exp()),
        Func::Softplus => {
            if x > 0.0 {
                x + (-x).exp().ln_1p()
            } else {
                x.exp().ln_1p()
            }
        }
        // glibc's erf and erfc (documented errors of a few ulps of f64).
        Func::Erf => unsafe { erf(x) },
        // x sigma(w), w = x (A + B x^2): w carries about 7 roundings (7 2^-53 relative),
        // which move e^-|w| by at most |w| 7 2^-53 < 2^-43.4 while the result is at least
        // 2^-151 (x >= -10.8, |w| <= 107).
        Func::Gelu => {
            let a = (8.0 / std::f64::consts::PI).sqrt();
            let w = x * (a + 0.044715 * a * (x * x));
            if w >= 0.0 {
                x / (1.0 + (-w).exp())
            } else {
                let e = w.exp();
                x * e / (1.0 + e)
            }
        }
        // x erfc(-x/sqrt 2)/2: the argument's two roundings move erfc(t) by at most about
        // 2 t^2 2^-52 relative, below 2^-44.3 for t <= 10.2 (x >= -14.4, where the result
        // is at least 2^-151).
        Func::GeluErf => x * unsafe { erfc(-x * std::f64::consts::FRAC_1_SQRT_2) } * 0.5,
    }
}

// The C library's erf and erfc (Rust's std has none; glibc's libm is linked with std).
unsafe extern "C" {
    fn erf(x: f64) -> f64;
    fn erfc(x: f64) -> f64;
}

const MARGIN: f64 = 1.0 / (1u64 << 40) as f64; // 2^-40

/// The correctly rounded f32 result, and r (NaN when MPFR alone decided).
fn reference_f32(f: Func, x: f32, mpfr_calls: &AtomicU64) -> (f32, f64) {
    let r = if x.is_finite() {
        reference_f64(f, x as f64)
    } else {
        f64::NAN
    };
    if r.is_finite() && r.abs() < 1e-270 {
        // Far below half the smallest f32 subnormal (2^-150): the result rounds to zero.
        return (if r.is_sign_negative() { -0.0 } else { 0.0 }, r);
    }
    if r.is_infinite() {
        // The platform returns infinity only beyond 2^1024 (far past f32::MAX).
        return (r as f32, r);
    }
    if r.is_finite() && r != 0.0 {
        let d = r.abs() * MARGIN;
        let (lo, hi) = ((r - d) as f32, (r + d) as f32);
        if lo.to_bits() == hi.to_bits() {
            return (lo, r);
        }
    }
    mpfr_calls.fetch_add(1, Ordering::Relaxed);
    (cr_f32(f, x), r)
}

fn ulp_f32(y: f32) -> f64 {
    let a = y.abs();
    if a < f32::MIN_POSITIVE {
        return f32::from_bits(1) as f64;
    }
    let next = f32::from_bits(a.to_bits() + 1);
    (next as f64) - (a as f64)
}

/// Distance of r from the nearest midpoint between f32 neighbours around y = r rounded,
/// in ulps of y (0.5 when r is an f32).
fn midpoint_distance(y: f32, r: f64) -> f64 {
    let u = ulp_f32(y);
    (((r - y as f64).abs()) - 0.5 * u).abs() / u
}

/// Keeps the `k` smallest (distance, input bits) pairs.
fn keep_closest(v: &mut Vec<(f64, u64)>, k: usize) {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v.truncate(k);
}

fn check_f32(f: Func, start: u64, end: u64, closest: usize) {
    let ours = ours_f32(f);
    let ours_slice = ours_slice(f);
    let mpfr_calls = AtomicU64::new(0);
    // Inputs where the slice kernel and the scalar function disagree (must be 0).
    let slice_diffs = AtomicU64::new(0);
    let t0 = std::time::Instant::now();
    // (misrounded, max error in ulp, first misrounded input, the closest to a boundary)
    const BLOCK: u64 = 1 << 16;
    let blocks = (end - start).div_ceil(BLOCK);
    let (bad, max_err, first, near) = (0..blocks)
        .into_par_iter()
        .map(|blk| {
            let lo = start + blk * BLOCK;
            let hi = (lo + BLOCK).min(end);
            let mut acc = (0u64, 0f64, u64::MAX, Vec::new());
            let xs: Vec<f32> = (lo..hi).map(|b| f32::from_bits(b as u32)).collect();
            let mut ys = vec![0f32; xs.len()];
            ours_slice(&xs, &mut ys);
            for (b, (&x, &y)) in (lo..hi).zip(xs.iter().zip(&ys)) {
                if ours(x).to_bits() != y.to_bits() {
                    slice_diffs.fetch_add(1, Ordering::Relaxed);
                }
                let (cr, r) = reference_f32(f, x, &mpfr_calls);
                if y.to_bits() != cr.to_bits() {
                    acc.0 += 1;
                    acc.2 = acc.2.min(b);
                }
                if y.is_finite() && r.is_finite() && !(y == 0.0 && r.abs() < 1e-270) {
                    acc.1 = acc.1.max(((y as f64) - r).abs() / ulp_f32(y));
                }
                // Normal results; at f32::MAX the distance is not finite (no f32 above).
                let d = midpoint_distance(y, r);
                if closest > 0 && y.abs() >= f32::MIN_POSITIVE && d.is_finite() {
                    acc.3.push((d, b));
                    if acc.3.len() >= 4 * closest {
                        keep_closest(&mut acc.3, closest);
                    }
                }
            }
            keep_closest(&mut acc.3, closest);
            acc
        })
        .reduce(
            || (0, 0.0f64, u64::MAX, Vec::new()),
            |a, mut b| {
                b.3.extend(a.3);
                keep_closest(&mut b.3, closest);
                (a.0 + b.0, a.1.max(b.1), a.2.min(b.2), b.3)
            },
        );
    let n = end - start;
    print!(
        "{:<9} f32:  checked {n}, misrounded {bad}, max error {max_err:.4} ulp",
        f.name()
    );
    if bad > 0 {
        let x = f32::from_bits(first as u32);
        print!(
            " (first: x = {x:e} = {first:#010x}: ours {:#010x}, correct {:#010x})",
            ours(x).to_bits(),
            cr_f32(f, x).to_bits()
        );
    }
    println!(
        ", slice kernel != scalar {}  [{} MPFR decisions, {:.0} s]",
        slice_diffs.load(Ordering::Relaxed),
        mpfr_calls.load(Ordering::Relaxed),
        t0.elapsed().as_secs_f64()
    );
    for (d, b) in near {
        let x = f32::from_bits(b as u32);
        println!(
            "  nearest a boundary: x = {x:e} = {b:#010x}: {:.3e} ulp (2^{:.1}) from a midpoint",
            d,
            d.log2()
        );
    }
}

fn check_16(f: Func, bf: bool) {
    let ours_bf16 = |x: half::bf16| -> u16 {
        macro_rules! m {
            ($($v:ident => $n:ident),*) => { match f { $(Func::$v => math::$n::<half::bf16>(x).to_bits(),)* } };
        }
        m!(Exp => exp_in, Expm1 => expm1_in, Log => log_in, Log1p => log1p_in, Log10 => log10_in, Sin => sin_in,
           Cos => cos_in, Tanh => tanh_in, Sigmoid => sigmoid_in, Silu => silu_in, Softplus => softplus_in,
           Erf => erf_in, Gelu => gelu_in, GeluErf => gelu_erf_in)
    };
    let ours_f16 = |x: half::f16| -> u16 {
        macro_rules! m {
            ($($v:ident => $n:ident),*) => { match f { $(Func::$v => math::$n::<half::f16>(x).to_bits(),)* } };
        }
        m!(Exp => exp_in, Expm1 => expm1_in, Log => log_in, Log1p => log1p_in, Log10 => log10_in, Sin => sin_in,
           Cos => cos_in, Tanh => tanh_in, Sigmoid => sigmoid_in, Silu => silu_in, Softplus => softplus_in,
           Erf => erf_in, Gelu => gelu_in, GeluErf => gelu_erf_in)
    };
    let bad: Vec<u16> = (0..=u16::MAX)
        .into_par_iter()
        .filter(|&b| {
            if bf {
                let x = half::bf16::from_bits(b);
                ours_bf16(x) != cr_bf16(f, x).to_bits()
            } else {
                let x = half::f16::from_bits(b);
                ours_f16(x) != cr_f16(f, x).to_bits()
            }
        })
        .collect();
    println!(
        "{:<9} {}: checked 65536, misrounded {}{}",
        f.name(),
        if bf { "bf16" } else { "f16 " },
        bad.len(),
        bad.first()
            .map(|b| format!(" (first input bits {b:#06x})"))
            .unwrap_or_default()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: verify_math <function|all> [--format f32|bf16|f16] [--range START:END] \
                 [--closest K]";
    let Some(name) = args.first() else {
        eprintln!("{usage}");
        std::process::exit(2)
    };
    let mut format = "f32".to_string();
    let (mut start, mut end) = (0u64, 1u64 << 32);
    let mut closest = 0usize;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--format" => format = args.get(i + 1).cloned().unwrap_or_default(),
            "--closest" => closest = args.get(i + 1).and_then(|k| k.parse().ok()).expect(usage),
            "--range" => {
                let r = args.get(i + 1).cloned().unwrap_or_default();
                let (a, b) = r.split_once(':').expect(usage);
                let hex =
                    |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).expect(usage);
                (start, end) = (hex(a), hex(b));
            }
            _ => {
                eprintln!("{usage}");
                std::process::exit(2)
            }
        }
        i += 2;
    }
    let funcs: Vec<Func> = if name == "all" {
        Func::ALL.to_vec()
    } else {
        match Func::from_name(name) {
            Some(f) => vec![f],
            None => {
                eprintln!("unknown function {name}; {usage}");
                std::process::exit(2)
            }
        }
    };
    for f in funcs {
        match format.as_str() {
            "f32" => check_f32(f, start, end, closest),
            "bf16" => check_16(f, true),
            "f16" => check_16(f, false),
            _ => {
                eprintln!("{usage}");
                std::process::exit(2)
            }
        }
    }
}
