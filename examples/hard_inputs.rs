//! The hardest inputs of every elementwise rounding decision, kept as test data for
//! `tests/hard_inputs.rs` (issue 31). Run by `tools/hard-inputs/generate.sh`.
//!
//! ```text
//! cargo run --release --example hard_inputs -- [--stride S] [--only NAME] [--keep N]
//!                                              [--out tests/data/hard]
//! ```
//!
//! A fast path's result y is accepted when the whole interval y (1 +- e) rounds to one
//! value, e = FAST_REL_ERR + 2^-52 (the test's own rounding). A bound that is too small
//! can only change an output where y itself rounds to the wrong value: the exact result
//! lies on the other side of a rounding boundary m, and the wrong value is accepted once
//! e |y| < |y - m|. So the inputs that tell a right bound from a wrong one are those
//! "wrong-side" inputs, and the hardest are those with the largest rho = |y - m| / (|y|
//! FAST_REL_ERR): a bound divided by 2^k is caught by an input with rho > 2^-k (up to the
//! fixed 2^-52 term, which is why k is computed with the tests themselves below).
//!
//! For each function, each flavour of its fast path (unfused: the x86-64 scalar code and
//! baseline vector copy; fused: the AVX copies and the CUDA kernels) and each format, the
//! scan covers every 16-bit input and every f32 input (or every `--stride`-th): each y the
//! format's vector test (`Format::round_if_certain_fast`, sound) settles is skipped; for
//! the rest the crate's correctly rounded value decides whether y is on the wrong side,
//! and for every wrong-side input the smallest k at which the scalar test
//! (`round_if_certain`) and the f32 vector test accept the wrong value. The kept inputs
//! (the `--keep` with the smallest k, then the largest rho) are checked against MPFR before
//! they are written: `<out>/<function>.txt`, one line per input:
//!
//! ```text
//! <format> <flavour> <x bits> <correct bits> <k scalar> <k vector> <rho>
//! ```
//!
//! (k `-`: no k up to 40; rho < 0: a right-side input, -|y - m| / (|y| FAST_REL_ERR) to
//! the nearest boundary m, kept after the wrong-side ones, nearest first)
//!
//! and `<out>/SUMMARY.txt`: per function, flavour and format, the inputs scanned, the
//! unsettled ones, the wrong-side ones and the smallest k (the bound's "tightness": a bound
//! divided by 2^k with k below it changes no output of that format anywhere in the
//! scanned domain).

use candle_repro::math::{self, Format, probe};
use half::{bf16, f16};
use mpfr_oracle::{Func, cr_bf16, cr_f16, cr_f32};
use rayon::prelude::*;
use std::fmt::Write as _;

/// 2^-52: the test's own rounding, added to every bound (`unary::test_err`).
const EPS: f64 = f64::EPSILON;
/// The largest k tried: a bound divided by 2^40 is below the 2^-52 term for every function.
const K_MAX: u32 = 40;

#[derive(Clone, Copy)]
struct Hit {
    x: u32,
    correct: u32,
    k_scalar: u32,
    k_vector: u32,
    rho: f64,
}

/// The scalar test with bound `e` (`round::round_if_certain`, whose result it returns).
fn scalar_test<F: Format>(y: f64, e: f64) -> (F, bool) {
    let d = y * e;
    let lo = F::round(y - d);
    let hi = F::round(y + d);
    (lo, lo.bits() == hi.bits())
}

/// The smallest k at which `test(y, err / 2^k + eps)` accepts a value other than
/// `correct` (K_MAX + 1: none up to K_MAX).
fn k_min(y: f64, err: f64, eps: f64, correct: u32, test: impl Fn(f64, f64) -> (u32, bool)) -> u32 {
    (0..=K_MAX)
        .find(|&k| {
            let (v, sure) = test(y, err / (1u64 << k) as f64 + eps);
            sure && v != correct
        })
        .unwrap_or(K_MAX + 1)
}

/// The correctly rounded function in format F, by name (the crate's, itself checked
/// against MPFR by tests/math_correct_rounding.rs; the kept inputs again below).
fn correct_fn<F: Format>(name: &str) -> fn(F) -> F {
    macro_rules! m {
        ($($n:ident),*) => {
            match name {
                $(stringify!($n) => paste::paste! { math::[<$n _in>]::<F> },)*
                _ => panic!("unknown function {name}"),
            }
        };
    }
    m!(
        exp, expm1, log, log1p, log10, sin, cos, tanh, sigmoid, silu, softplus, erf, gelu, gelu_erf
    )
}

/// One rounding decision: the fast value of an input (`None`: not in the fast domain),
/// the proven bound, the fixed term the test adds to it, and the correct result.
struct Decision<'a> {
    fast: &'a (dyn Fn(u32) -> Option<f64> + Sync),
    err: f64,
    eps: f64,
    correct: &'a (dyn Fn(u32) -> u32 + Sync),
}

/// The wrong-side inputs of one decision with output format F among `inputs` (then the
/// right-side unsettled ones), and the count of unsettled ones.
fn scan<F: Format>(d: &Decision, inputs: impl ParallelIterator<Item = u32>) -> (Vec<Hit>, u64) {
    let (err, eps) = (d.err, d.eps);
    let te = err + eps;
    let found: Vec<(Option<Hit>, u64)> = inputs
        .filter_map(|b| {
            let y = (d.fast)(b)?;
            if F::round_if_certain_fast(y, te, None).1 || scalar_test::<F>(y, te).1 {
                return None; // settled: the correct value (both tests are sound)
            }
            let correct = (d.correct)(b);
            let r = F::round(y);
            if y.is_nan() || !y.is_finite() {
                return Some((None, 1));
            }
            if r.bits() == correct {
                // Right side: kept (after every wrong-side input) by its distance to the
                // nearest boundary, -|y - m| / (|y| FAST_REL_ERR) with m the midpoint
                // between r and the neighbour of r on y's side: a kernel whose y differs
                // a little (another order of operations) lands on the wrong side here.
                let rv = r.to_f32() as f64;
                let step = if (y >= rv) == (y >= 0.0) { 1i64 } else { -1 };
                let nb = F::from_bits((r.bits() as i64 + step) as u32).to_f32() as f64;
                let m = 0.5 * (rv + nb);
                let rho = -(y - m).abs() / (y.abs() * err);
                let none = K_MAX + 1;
                let hit = Hit {
                    x: b,
                    correct,
                    k_scalar: none,
                    k_vector: none,
                    rho,
                };
                return Some((Some(hit), 1));
            }
            // The boundary between r and the correct value (neighbours in the format).
            let c = F::from_bits(correct).to_f32() as f64;
            let m = 0.5 * (r.to_f32() as f64 + c);
            let rho = (y - m).abs() / (y.abs() * err);
            let k_scalar = k_min(y, err, eps, correct, |y, e| {
                let (v, s) = scalar_test::<F>(y, e);
                (v.bits(), s)
            });
            let k_vector = k_min(y, err, eps, correct, |y, e| {
                let (v, s) = F::round_if_certain_fast(y, e, None);
                (v.bits(), s)
            });
            Some((
                Some(Hit {
                    x: b,
                    correct,
                    k_scalar,
                    k_vector,
                    rho,
                }),
                1,
            ))
        })
        .collect();
    let unsure = found.iter().map(|f| f.1).sum();
    (found.into_iter().filter_map(|f| f.0).collect(), unsure)
}

fn mpfr_bits(fmt: &str, func: Func, x: u32) -> u32 {
    match fmt {
        "f32" => cr_f32(func, f32::from_bits(x)).to_bits(),
        "bf16" => cr_bf16(func, bf16::from_bits(x as u16)).to_bits() as u32,
        _ => cr_f16(func, f16::from_bits(x as u16)).to_bits() as u32,
    }
}

/// What to write for one decision: its kept inputs and its summary line.
struct Report<'a> {
    label: &'a str,
    /// The first field of the data lines (the format, or `cos-f32` and the like).
    tag: &'a str,
    fmt: &'a str,
    flavour: &'a str,
    keep: usize,
    /// MPFR's correct bits for an input.
    mpfr: &'a dyn Fn(u32) -> u32,
}

fn scan_and_report<F: Format>(
    r: &Report,
    d: &Decision,
    (scanned, inputs): (u64, impl ParallelIterator<Item = u32>),
    text: &mut String,
    summary: &mut String,
) {
    let t0 = std::time::Instant::now();
    let (mut hits, unsure) = scan::<F>(d, inputs);
    let wrong: Vec<&Hit> = hits.iter().filter(|h| h.rho >= 0.0).collect();
    let ks = wrong.iter().map(|h| h.k_scalar).min();
    let kv = wrong.iter().map(|h| h.k_vector).min();
    let rho = wrong.iter().map(|h| h.rho).fold(0.0, f64::max);
    let wrong = wrong.len();
    // Wrong-side inputs first (smallest k, then largest rho), then the right-side ones
    // nearest a boundary.
    hits.sort_by(|a, b| {
        (b.rho >= 0.0)
            .cmp(&(a.rho >= 0.0))
            .then(a.k_scalar.min(a.k_vector).cmp(&b.k_scalar.min(b.k_vector)))
            .then(b.rho.total_cmp(&a.rho))
            .then(a.x.cmp(&b.x))
    });
    hits.truncate(r.keep);
    let kmin = |v: Option<u32>| match v {
        Some(k) if k <= K_MAX => k.to_string(),
        _ => "-".to_string(),
    };
    for h in &hits {
        let cr = (r.mpfr)(h.x);
        assert_eq!(
            cr, h.correct,
            "{} {}: MPFR disagrees at x = {:#x}",
            r.label, r.fmt, h.x
        );
        writeln!(
            text,
            "{} {} {:#010x} {:#010x} {} {} {:.3e}",
            r.tag,
            r.flavour,
            h.x,
            h.correct,
            kmin(Some(h.k_scalar)),
            kmin(Some(h.k_vector)),
            h.rho
        )
        .unwrap();
    }
    let line = format!(
        "{:9} {:4} {:7} scanned {scanned:10} unsettled {unsure:8} wrong-side {wrong:6} kept {:4} k_scalar {:>2} k_vector {:>2} max_rho {rho:.3e}",
        r.label,
        r.fmt,
        r.flavour,
        hits.len(),
        kmin(ks),
        kmin(kv)
    );
    eprintln!("{line}  ({:.1} s)", t0.elapsed().as_secs_f64());
    writeln!(summary, "{line}").unwrap();
}

/// Bits of an f64 value that is exactly a value of the format.
fn bits_of(fmt: &str, v: f64) -> u32 {
    match fmt {
        "f32" => (v as f32).to_bits(),
        "bf16" => bf16::from_f64(v).to_bits() as u32,
        _ => f16::from_f64(v).to_bits() as u32,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .map(|i| args[i + 1].clone())
    };
    let stride: u64 = opt("--stride").map_or(1, |s| s.parse().unwrap());
    let keep: usize = opt("--keep").map_or(300, |s| s.parse().unwrap());
    let out = opt("--out").unwrap_or_else(|| "tests/data/hard".into());
    let only = opt("--only");
    std::fs::create_dir_all(&out).unwrap();
    let f32_inputs = || {
        let n = (1u64 << 32).div_ceil(stride);
        (n, (0..n).into_par_iter().map(move |i| (i * stride) as u32))
    };
    let all16 = || (65536u64, (0..=0xFFFFu32).into_par_iter());
    let mut summary = String::new();
    let flavours = [(false, "unfused"), (true, "fused")];
    for &name in probe::NAMES {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let func = Func::from_name(name).unwrap();
        let mut text = String::new();
        for fmt in ["f32", "bf16", "f16"] {
            for (fused, flavour) in flavours {
                let (fast, err) = probe::fast_path(name, fused).expect("a function of the list");
                let r = Report {
                    label: name,
                    tag: fmt,
                    fmt,
                    flavour,
                    keep,
                    mpfr: &|x| mpfr_bits(fmt, func, x),
                };
                macro_rules! go {
                    ($F:ty, $inputs:expr) => {{
                        let correct_of = correct_fn::<$F>(name);
                        let d = Decision {
                            fast: &|b| fast(<$F as Format>::from_bits(b).to_f32()),
                            err,
                            eps: EPS,
                            correct: &|b| correct_of(<$F as Format>::from_bits(b)).bits(),
                        };
                        scan_and_report::<$F>(&r, &d, $inputs, &mut text, &mut summary)
                    }};
                }
                match fmt {
                    "f32" => go!(f32, f32_inputs()),
                    "bf16" => go!(bf16, all16()),
                    _ => go!(f16, all16()),
                }
            }
        }
        std::fs::write(format!("{out}/{name}.txt"), text).unwrap();
    }
    // The RoPE table entries cos(a) * af, sin(a) * af with af = 1 (`rope::cos_sin_entry`):
    // every f32 angle, each output format, both flavours (the CPU's scalar entries:
    // unfused on x86-64; the CUDA kernels: fused), bound ENTRY_TEST_ERR with no fixed term.
    if only.as_deref().is_none_or(|o| o == "rope_entry") {
        use candle_repro::rope::cos_sin_entry;
        let mut text = String::new();
        for (label, is_cos) in [("rope_cos", true), ("rope_sin", false)] {
            for fmt in ["f32", "bf16", "f16"] {
                for (fused, flavour) in flavours {
                    let (fast, _) =
                        probe::fast_path(if is_cos { "cos" } else { "sin" }, fused).expect("trig");
                    let ofmt = match fmt {
                        "f32" => mpfr_oracle::F32,
                        "bf16" => mpfr_oracle::BF16,
                        _ => mpfr_oracle::F16,
                    };
                    let mpfr = move |b: u32| {
                        let (c, s) =
                            mpfr_oracle::rope::cos_sin_scaled(f32::from_bits(b), 1.0, ofmt);
                        bits_of(fmt, if is_cos { c } else { s })
                    };
                    let tag = format!("{}-{fmt}", if is_cos { "cos" } else { "sin" });
                    let r = Report {
                        label,
                        tag: &tag,
                        fmt,
                        flavour,
                        keep,
                        mpfr: &mpfr,
                    };
                    macro_rules! go {
                        ($F:ty) => {{
                            let d = Decision {
                                fast: &|b| fast(f32::from_bits(b)),
                                err: candle_repro::rope::tables::ENTRY_TEST_ERR,
                                eps: 0.0,
                                correct: &|b| {
                                    let (c, s) = cos_sin_entry::<$F>(f32::from_bits(b), 1.0);
                                    if is_cos { c.bits() } else { s.bits() }
                                },
                            };
                            scan_and_report::<$F>(&r, &d, f32_inputs(), &mut text, &mut summary)
                        }};
                    }
                    match fmt {
                        "f32" => go!(f32),
                        "bf16" => go!(bf16),
                        _ => go!(f16),
                    }
                }
            }
        }
        std::fs::write(format!("{out}/rope_entry.txt"), text).unwrap();
    }
    if only.as_deref().is_none_or(|o| o == "fft_twiddle") {
        summary.push_str(&fft_twiddles(&out, keep));
    }
    if only.is_none() {
        let head = format!(
            "# examples/hard_inputs.rs --stride {stride} --keep {keep}: per decision, format and fast-path flavour\n"
        );
        std::fs::write(format!("{out}/SUMMARY.txt"), head + &summary).unwrap();
    }
}

/// The FFT's twiddle factors (`fft::twiddles`: a double-double sincos within 2^-100,
/// rounded once): every magnitude cos / sin(2 pi p / d), 0 < p / d < 1/4, of the tables of
/// the power-of-two plans up to 2^20 (d = 2^20; every smaller power of two's angles are
/// among them) and of every denominator d <= 2048 (the Bluestein chirps of n <= 1024 are
/// angles of q / 2n turns). Our f32 and f64 entries against MPFR, every one; the file keeps
/// the `keep` entries nearest a rounding boundary per format. Returns the summary lines.
fn fft_twiddles(out: &str, keep: usize) -> String {
    use candle_repro::fft::twiddles::probe_twiddle;
    fn gcd(mut a: u64, mut b: u64) -> u64 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    let big = 1u64 << 20;
    let mut fracs: Vec<(u64, u64)> = (5..=2048u64)
        .flat_map(|d| {
            (1..d.div_ceil(4))
                .filter(move |&p| gcd(p, d) == 1)
                .map(move |p| (p, d))
        })
        .collect();
    fracs.extend((1..big / 4).step_by(2).map(|p| (p, big)));
    // (p, d, cos, per format (distance, MPFR's value, ours))
    type Row = (u64, u64, bool, [(f64, f64, f64); 2]);
    let rows: Vec<Row> = fracs
        .par_iter()
        .flat_map_iter(|&(p, d)| {
            let ((c32, s32), (c64, s64)) = probe_twiddle(p, d);
            [(true, c32 as f64, c64), (false, -s32 as f64, -s64)].map(|(cos, o32, o64)| {
                let r = mpfr_oracle::fft::cos_sin(p, d, cos, &[24, 53]);
                (
                    p,
                    d,
                    cos,
                    [
                        (r[0].distance, r[0].value, o32),
                        (r[1].distance, r[1].value, o64),
                    ],
                )
            })
        })
        .collect();
    let mut text = String::from(
        "# examples/hard_inputs.rs: FFT twiddle magnitudes nearest a rounding boundary\n\
         # format cos|sin p d distance mpfr_value_bits\n",
    );
    let mut summary = String::new();
    for (f, fmt) in ["f32", "f64"].into_iter().enumerate() {
        let wrong = rows.iter().filter(|r| r.3[f].1 != r.3[f].2).count();
        let mut by_distance: Vec<&Row> = rows.iter().collect();
        by_distance.sort_by(|a, b| a.3[f].0.total_cmp(&b.3[f].0));
        for r in by_distance.iter().take(keep) {
            let (dist, value, _) = r.3[f];
            let bits = match f {
                0 => format!("{:#010x}", (value as f32).to_bits()),
                _ => format!("{:#018x}", value.to_bits()),
            };
            let func = if r.2 { "cos" } else { "sin" };
            text += &format!("{fmt} {func} {} {} {dist:.3e} {bits}\n", r.0, r.1);
        }
        let nearest = by_distance[0].3[f].0;
        summary += &format!(
            "fft_twiddle {fmt} scanned {:>10} wrong {wrong} kept {keep} nearest boundary {nearest:.3e} (2^{:.1})\n",
            rows.len(),
            nearest.log2()
        );
    }
    std::fs::write(format!("{out}/fft_twiddle.txt"), text).unwrap();
    print!("{summary}");
    summary
}
