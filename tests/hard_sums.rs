//! The hardest inputs of the sum-type rounding decisions (issues 26 and 31): sums built so
//! that each tier's error bound matters, run through every CPU path of the matmul and of
//! the quantized product and through their CUDA kernels on the emulated device, every
//! output checked against MPFR (`mpfr_oracle::dot`: exact products, `mpfr_sum`, one
//! rounding).
//!
//! * Tier 1 (an f64 sum accepted when every number within its bound rounds alike). Each
//!   row is x (an output value), a half-ulp term h, a term -delta, then k - 3 small terms
//!   s t each just below half an ulp of the running sum: in the kernels' order (index
//!   order: every GEMM micro-kernel width, every k-blocking, the CUDA kernel) each small
//!   term is lost whole, so the computed sum is y = x + h - delta while the exact sum is
//!   y + (k - 3) s t, across the midpoint x + h. The one big term makes Cauchy-Schwarz
//!   tight (|a| |b| = sum |a b| to 2^-20), so the error, about (k - 3) 2^-53 |y|, is close
//!   to the proven bound (k + 1) 2^-53 (1 + 2^-20) |a| |b|; delta is placed between
//!   half the bound (plus the rounding test's own widening) and the error. So a tier-1
//!   bound at 1/2 accepts round(y), which is wrong; the right bound sends the output on.
//!   Each case asserts these properties itself (the index-order f64 sum, MPFR's value,
//!   and that the halved interval rounds to one wrong value) before it is used.
//! * Tier 2 (the compensated dot product, `dot2`/`dot2_wide`). Products T, E, x, l, l, l,
//!   -T, -E with E below half an ulp of T: TwoSum hands E, x and the l to the error sum,
//!   where each l (3/8 or 7/16 of E's ulp, which is half an ulp of the output at x) is
//!   rounded away; -T and -E cancel the rest. The compensated result is x, the exact sum
//!   is x + 3 l, beyond the midpoint, and x is farther from the midpoint than the rounding
//!   test's own widening: a tier 2 that trusts itself (bound 0), or a missing exact
//!   fallback, returns x. Only f32 and bf16 inputs: f16's range cannot hold T.
//!
//! The GEMV paths (at most four rows) sum in 8 or 16 lanes (the CUDA decode kernel: 32
//! lanes of a warp): no input makes their error exceed a fraction of about
//! 1/lanes + log2(lanes)/k of the bound, so a bound at 1/2 is still a valid bound there; their outputs are checked (correctly rounded), not used to
//! catch a halved bound. Cases are built here from a seeded generator (cheap: the
//! construction is closed-form and each case is checked against MPFR as it is made), not
//! read from a file.
//!
//! `cargo test --release --test hard_sums`
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

mod common;

use candle_core::quantized::GgmlDType;
use candle_core::{DType, Device, Tensor};
use candle_repro::math::VectorPath;
use candle_repro::matmul::{CpuConfig, matmul_with_config};
use candle_repro::quantized::{QMatMul, qmatmul_with_config};
use common::bits;
use common::emu::{Emu, download, upload};
use half::{bf16, f16};
use mpfr_oracle::{BF16, F16, F32, Format};

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;

/// 2^-53.
const U: f64 = f64::from_bits(0x3CA0_0000_0000_0000);

fn p2(e: i32) -> f64 {
    2f64.powi(e)
}

fn fmt(dt: DType) -> Format {
    match dt {
        DType::F32 => F32,
        DType::BF16 => BF16,
        DType::F16 => F16,
        d => panic!("{d:?}"),
    }
}

/// Precision of the format.
fn precision(dt: DType) -> i32 {
    match dt {
        DType::F32 => 24,
        DType::BF16 => 8,
        _ => 11,
    }
}

/// v rounded to dt (nearest even) by the `half` crate or the f32 conversion, as f64.
fn round_to(v: f64, dt: DType) -> f64 {
    match dt {
        DType::F32 => v as f32 as f64,
        DType::BF16 => bf16::from_f64(v).to_f64(),
        _ => f16::from_f64(v).to_f64(),
    }
}

fn representable(v: f64, dt: DType) -> bool {
    round_to(v, dt) == v
}

fn tensor(v: &[f64], dt: DType, shape: &[usize]) -> Tensor {
    for &x in v {
        assert!(representable(x, dt), "{x:e} is not a {dt:?}");
    }
    Tensor::from_vec(v.to_vec(), shape, &Device::Cpu)
        .unwrap()
        .to_dtype(dt)
        .unwrap()
}

/// The bits of an oracle value in dt.
fn encode(v: f64, dt: DType) -> u32 {
    match dt {
        DType::F32 => (v as f32).to_bits(),
        DType::BF16 => bf16::from_f64(v).to_bits() as u32,
        _ => f16::from_f64(v).to_bits() as u32,
    }
}

/// The largest pair (s, t) of dt values with s t below 2^-53 times 2^e (half an ulp of
/// f64 in the binade [2^e, 2^(e+1))), s = t where dt can hold it.
fn small_pair(dt: DType, e: i32) -> (f64, f64) {
    let limit = p2(e) * U;
    match dt {
        DType::F16 => {
            // Below f16's range for s = t: subnormal multiples of 2^-24.
            let unit = p2(-24);
            let best = (1..=1023u32)
                .flat_map(|a| (1..=a).map(move |b| (a, b)))
                .filter(|&(a, b)| (a * b) as f64 * unit * unit < limit)
                .max_by_key(|&(a, b)| a * b)
                .unwrap();
            (best.0 as f64 * unit, best.1 as f64 * unit)
        }
        _ => {
            let mut t = round_to(limit.sqrt(), dt);
            while t * t >= limit {
                t = match dt {
                    DType::F32 => f32::from_bits((t as f32).to_bits() - 1) as f64,
                    _ => bf16::from_bits(bf16::from_f64(t).to_bits() - 1).to_f64(),
                };
            }
            (t, t)
        }
    }
}

/// The f64 sum of the products in index order (the GEMM micro-kernels and the CUDA
/// kernels' order; every product exact).
fn index_order_sum(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |s, (x, y)| s + x * y)
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// v (normal in dt) rounded to dt's precision, nearest even, in one step (`half`'s
/// conversions from f64 may round twice, through f32).
fn round_once(v: f64, dt: DType) -> f64 {
    let e = ((v.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    let q = p2(e + 1 - precision(dt));
    (v / q).round_ties_even() * q
}

/// Whether every number within d of y rounds to one value of dt, and which.
fn interval_rounds_to(y: f64, d: f64, dt: DType) -> Option<f64> {
    let (lo, hi) = (round_once(y - d, dt), round_once(y + d, dt));
    (lo == hi).then_some(lo)
}

/// A tier-1 case: (row, column, the correctly rounded output).
struct Case {
    a: Vec<f64>,
    b: Vec<f64>,
    want: f64,
}

/// The column shared by the tier-1 rows of dt and k.
fn tier1_column(dt: DType, k: usize) -> (Vec<f64>, i32) {
    let p = precision(dt);
    let e = if dt == DType::F16 { 10 } else { 0 };
    let (_, t) = small_pair(dt, e);
    // h = h_a h_b = 2^(e - p), the half ulp of the output in [2^e, 2^(e+1)); delta =
    // d_a d_b with d_b a power of two.
    let hb = p2(-(p / 2) - (p % 2));
    let db = if dt == DType::F16 { p2(-24) } else { p2(-23) };
    let mut b = vec![1.0, hb, db];
    b.resize(k, t);
    (b, e)
}

/// Tier-1 hard rows for dt and k against `tier1_column`: x in [1, 1.25) 2^e with the
/// output's last bit random, the rest as in the module header. delta is placed for the
/// larger coefficient, the quantized product's (k + 8 terms; the matmul's has k).
fn tier1_cases(dt: DType, k: usize, count: usize, rng: &mut Lcg) -> Vec<Case> {
    let p = precision(dt);
    let (b, e) = tier1_column(dt, k);
    let (s, t) = small_pair(dt, e);
    let h = p2(e - p);
    let ha = h / b[1];
    let coeff = (k + 8) as f64 * U * (1.0 + p2(-20));
    let mut out = Vec::new();
    while out.len() < count {
        let sign = rng.sign();
        let x = p2(e) * (1.0 + rng.below(1 << (p - 3)) as f64 * p2(1 - p));
        let loss = (k - 3) as f64 * s * t;
        // delta = D 2^(e - 52) (so that x + h - delta is exact in f64), between half the
        // bound with the test's widening (|a| |b| ~ x) and the loss, with margins for the
        // norms' own roundings and the rounding of the interval's ends.
        let unit = p2(e - 52);
        let lo = (0.5 * coeff * x * (1.0 + p2(-10)) + x * p2(-51)) * 1.01 + 4.0 * unit;
        let hi = loss * 0.99;
        // D as the input dtype can hold it (d_a = D 2^(e - 52) / d_b).
        let delta = round_to(((lo + hi) / 2.0 / unit).round(), dt) * unit;
        if !(delta > lo && delta < hi) {
            continue; // x too large for this k: the halved bound would reach the midpoint
        }
        let da = delta / b[2];
        let mut a = vec![sign * x, sign * ha, -sign * da];
        a.resize(k, sign * s);
        // Self-checks of the construction.
        let y = index_order_sum(&a, &b);
        assert_eq!(y, sign * (x + h - delta), "index-order sum");
        let want = mpfr_oracle::dot(&a, &b, None, fmt(dt));
        assert_eq!(want, sign * (x + 2.0 * h), "exact sum beyond the midpoint");
        let n = norm(&a) * norm(&b);
        assert!((n / y.abs() - 1.0).abs() < p2(-8), "Cauchy-Schwarz tight");
        let half = 0.5 * coeff * n * (1.0 + p2(-36)) + y.abs() * p2(-51);
        let full = (k + 1) as f64 * U * (1.0 + p2(-20)) * n + y.abs() * p2(-51);
        assert_eq!(
            interval_rounds_to(y, half, dt),
            Some(sign * x),
            "half accepts: {dt:?} k={k} x={x} delta={delta:e} lo={lo:e} loss={loss:e} half={half:e} n={n:e} y={y}"
        );
        assert_eq!(interval_rounds_to(y, full, dt), None, "the bound rejects");
        out.push(Case {
            a,
            b: b.clone(),
            want,
        });
    }
    out
}

/// Tier-2 hard rows (f32, bf16): products T, E, x, l, l, l, -T, -E (module header).
fn tier2_cases(dt: DType, count: usize, rng: &mut Lcg) -> Vec<Case> {
    let p = precision(dt);
    // g: half an ulp of the output at x in [1, 2), and E's ulp.
    let g = p2(-p);
    let e_exp = 52 - p; // E = 2^e_exp: ulp(E) = g
    let t_exp = e_exp + 62; // E below half an ulp of T
    let (ta, tb) = (p2(t_exp / 2), p2(t_exp - t_exp / 2));
    let (ea, eb) = (p2(e_exp / 2), p2(e_exp - e_exp / 2));
    let b = vec![tb, eb, 1.0, 1.0, 1.0, 1.0, tb, eb];
    let mut out = Vec::new();
    for c in 0..count {
        let sign = rng.sign();
        let x = 1.0 + rng.below(1 << (p - 1)) as f64 * p2(1 - p);
        let l = g * if c % 2 == 0 { 0.375 } else { 0.4375 };
        let a: Vec<f64> = [ta, ea, x, l, l, l, -ta, -ea]
            .iter()
            .map(|v| sign * v)
            .collect();
        let want = mpfr_oracle::dot(&a, &b, None, fmt(dt));
        assert_eq!(want, sign * (x + 2.0 * g), "exact sum beyond the midpoint");
        let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
        let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
        let r = candle_repro::math::exact_dot::dot2(8, |i| a32[i], |i| b32[i], None);
        assert_eq!(r, sign * x, "the compensated sum lands on x");
        assert_eq!(interval_rounds_to(r, r.abs() * p2(-51), dt), Some(r));
        out.push(Case {
            a,
            b: b.clone(),
            want,
        });
    }
    out
}

/// (m, k) rows and (k, n) columns (column j the case's column) as tensors of dt, and the
/// wanted bits of each output (row i's case against any column: the columns are equal).
fn as_matrices(cases: &[Case], n: usize, dt: DType) -> (Tensor, Tensor, Vec<u32>) {
    let (m, k) = (cases.len(), cases[0].a.len());
    let av: Vec<f64> = cases.iter().flat_map(|c| c.a.clone()).collect();
    assert!(cases.iter().all(|c| c.b == cases[0].b));
    let bv: Vec<f64> = (0..k * n).map(|e| cases[0].b[e / n]).collect();
    let want = (0..m * n).map(|o| encode(cases[o / n].want, dt)).collect();
    (tensor(&av, dt, &[m, k]), tensor(&bv, dt, &[k, n]), want)
}

/// None when every output has the wanted bits, else a line saying where they differ.
fn mismatch(what: &str, got: &[u32], want: &[u32], n: usize) -> Option<String> {
    let bad: Vec<usize> = (0..want.len()).filter(|&o| got[o] != want[o]).collect();
    (!bad.is_empty()).then(|| {
        format!(
            "{what}: {} of {} outputs misrounded; first ({}, {}): got {:#x}, exact {:#x}",
            bad.len(),
            want.len(),
            bad[0] / n,
            bad[0] % n,
            got[bad[0]],
            want[bad[0]]
        )
    })
}

/// Panics with every path's mismatch (so that a planted defect's report names each path
/// that caught it).
fn assert_all(failures: Vec<Option<String>>) {
    let lines: Vec<String> = failures.into_iter().flatten().collect();
    assert!(lines.is_empty(), "\n{}", lines.join("\n"));
}

/// The CPU configurations: every micro-kernel shape (each vector path), short k-blocks,
/// the default plan, and the GEMV's order on the first rows.
fn gemm_configs() -> Vec<(String, CpuConfig)> {
    let base = CpuConfig::default();
    let mut v = vec![("default".to_string(), base)];
    for path in [VectorPath::Baseline, VectorPath::Avx2, VectorPath::Avx512] {
        for kc_max in [16, 640] {
            v.push((
                format!("{path:?} kc {kc_max} no GEMV"),
                CpuConfig {
                    path,
                    kc_max,
                    gemv: false,
                    ..base
                },
            ));
        }
    }
    v
}

/// The matmul's outputs on `cases`: every CPU plan, the GEMV on the first rows, the
/// emulated device; returns the outputs checked.
fn check_matmul(what: &str, cases: &[Case], dt: DType) -> usize {
    let n = 24; // one AVX-512 register tile wide, three AVX2 and six baseline tiles
    let (a, b, want) = as_matrices(cases, n, dt);
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, cfg) in gemm_configs() {
        let got = bits(&matmul_with_config(&a, &b, None, None, cfg).unwrap());
        failures.push(mismatch(&format!("{what} matmul [{name}]"), &got, &want, n));
        checked += want.len();
    }
    // GEMV (at most 4 rows): correctly rounded too.
    let a4 = a.narrow(0, 0, 4).unwrap();
    // B contiguous along k (a weight's transpose), as the GEMV wants it.
    let bt = b.t().unwrap().contiguous().unwrap().t().unwrap();
    let cfg = CpuConfig::default();
    let got = bits(&matmul_with_config(&a4, &bt, None, None, cfg).unwrap());
    failures.push(mismatch(
        &format!("{what} matmul [GEMV]"),
        &got,
        &want[..4 * n],
        n,
    ));
    checked += 4 * n;
    // The CUDA kernels on the emulated device, from either tier-1 kernel (the f64 tiles,
    // whose bound these sums were built against, and the integer tier's two kernels).
    let ((ab, al), (bb, bl)) = (upload(&a), upload(&b));
    use candle_repro::matmul::cuda::{Tier1, matmul_tier1};
    for tier1 in [Tier1::F64Tiles, Tier1::Int8Slices, Tier1::Int8Tiled] {
        let (dev, shape) =
            matmul_tier1(&Emu, (&ab, &al), (&bb, &bl), None, dt, None, tier1).unwrap();
        let got = bits(&download(&dev, shape));
        failures.push(mismatch(
            &format!("{what} matmul [emulated CUDA, {tier1:?}]"),
            &got,
            &want,
            n,
        ));
        checked += want.len();
    }
    assert_all(failures);
    checked
}

/// The quantized product (an F32 weight whose rows are the columns) on `cases`: the GEMM
/// with each micro-kernel shape, a row alone (GEMV) and the emulated device.
fn check_qmatmul(what: &str, cases: &[Case], dt: DType) -> usize {
    let n = 24;
    let (x, b, want) = as_matrices(cases, n, dt);
    let k = cases[0].a.len();
    // The weight (n, k): row j is column j of b, as f32 bytes.
    let bytes: Vec<u8> = (0..n)
        .flat_map(|_| cases[0].b.iter().flat_map(|&v| (v as f32).to_le_bytes()))
        .collect();
    drop(b);
    let q = QMatMul::from_bytes(GgmlDType::F32, (n, k), bytes, &Device::Cpu).unwrap();
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, cfg) in gemm_configs() {
        let got = bits(&qmatmul_with_config(&q, &x, None, cfg).unwrap());
        failures.push(mismatch(
            &format!("{what} qmatmul [{name}]"),
            &got,
            &want,
            n,
        ));
        checked += want.len();
    }
    let x1 = x.narrow(0, 0, 1).unwrap();
    let got = bits(&qmatmul_with_config(&q, &x1, None, CpuConfig::default()).unwrap());
    failures.push(mismatch(
        &format!("{what} qmatmul [GEMV]"),
        &got,
        &want[..n],
        n,
    ));
    let (xb, xl) = upload(&x);
    let w = candle_repro::quantized::cuda::upload_weight(&Emu, &q).unwrap();
    let (dev, shape) =
        candle_repro::quantized::cuda::qmatmul(&Emu, (&xb, &xl), &w, None, None).unwrap();
    let got = bits(&download(&dev, shape));
    failures.push(mismatch(
        &format!("{what} qmatmul [emulated CUDA]"),
        &got,
        &want,
        n,
    ));
    // The CUDA decode kernel (at most 4 rows: one warp per column): correctly rounded too.
    let x4 = x.narrow(0, 0, 4).unwrap();
    let (xb, xl) = upload(&x4);
    let (dev, shape) =
        candle_repro::quantized::cuda::qmatmul(&Emu, (&xb, &xl), &w, None, None).unwrap();
    let got = bits(&download(&dev, shape));
    failures.push(mismatch(
        &format!("{what} qmatmul [emulated CUDA decode]"),
        &got,
        &want[..4 * n],
        n,
    ));
    checked += 4 * n;
    assert_all(failures);
    checked + n + want.len()
}

const TIER1_KS: [usize; 3] = [100, 256, 700];

#[test]
fn tier1_bounds_matter_on_every_gemm_path_and_the_device() {
    let mut rng = Lcg(31);
    let mut total = 0;
    for dt in [DType::F32, DType::BF16, DType::F16] {
        for k in TIER1_KS {
            let cases = tier1_cases(dt, k, 48, &mut rng);
            total += check_matmul(&format!("tier 1 {dt:?} k={k}"), &cases, dt);
        }
    }
    println!("tier-1 hard sums (matmul): {total} outputs, 0 misrounded");
}

#[test]
fn tier1_bounds_matter_in_the_quantized_product() {
    let mut rng = Lcg(32);
    let mut total = 0;
    for dt in [DType::F32, DType::BF16, DType::F16] {
        for k in TIER1_KS {
            let cases = tier1_cases(dt, k, 48, &mut rng);
            total += check_qmatmul(&format!("tier 1 {dt:?} k={k}"), &cases, dt);
        }
    }
    println!("tier-1 hard sums (quantized): {total} outputs, 0 misrounded");
}

#[test]
fn tier2_must_not_trust_itself() {
    let mut rng = Lcg(33);
    let mut total = 0;
    for dt in [DType::F32, DType::BF16] {
        let cases = tier2_cases(dt, 96, &mut rng);
        total += check_matmul(&format!("tier 2 {dt:?}"), &cases, dt);
        total += check_qmatmul(&format!("tier 2 {dt:?}"), &cases, dt);
    }
    println!("tier-2 hard sums: {total} outputs, 0 misrounded");
}
