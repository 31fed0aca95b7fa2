//! softmax_last_dim / log_softmax_last_dim: accuracy against an MPFR oracle (max ULP
//! error per dtype), invariance (alone vs in a batch, thread counts, vector paths,
//! permutations of the row, block splits of long rows), parity with candle, special rows,
//! layouts, and the backward passes.
//!
//! `cargo test --release --test softmax` (add `-- --nocapture` for the ULP report).
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::{DType, Device, Tensor, Var};
use candle_repro::math::{Format, VectorPath};
use candle_repro::softmax::{log_softmax_slice_with, softmax_slice_with};
use candle_repro::{log_softmax_last_dim, softmax_last_dim};
use half::{bf16, f16};
use mpfr_oracle::{Func, approx_f64};

// ---------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        // Box-Muller (test code: libm is fine here).
        let u = self.unit().max(1e-300);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// Rows of several kinds, as (description, row length, values).
fn row_sets(seed: u64) -> Vec<(&'static str, usize, Vec<f32>)> {
    let mut r = Rng(seed);
    let mut sets = Vec::new();
    for &n in &[1usize, 2, 3, 7, 16, 33, 100, 1000, 4096] {
        let rows = (20_000 / n).clamp(1, 64);
        let v = (0..rows * n).map(|_| (r.normal() * 3.0) as f32).collect();
        sets.push(("normal(0, 3)", n, v));
        let v = (0..rows * n)
            .map(|_| (r.unit() * 200.0 - 100.0) as f32)
            .collect();
        sets.push(("uniform(-100, 100)", n, v));
        // Wide exponent range: sign * 2^[-30, 12] * [1, 2).
        let v = (0..rows * n)
            .map(|_| {
                let e = (r.next() % 43) as i32 - 30;
                let s = if r.next() & 1 == 0 { 1.0 } else { -1.0 };
                (s * (1.0 + r.unit()) * 2f64.powi(e)) as f32
            })
            .collect();
        sets.push(("wide exponents", n, v));
        // Many equal maxima, the rest just below or far below.
        let v = (0..rows * n)
            .map(|_| match r.next() % 4 {
                0 | 1 => 5.0,
                2 => 5.0 - (r.unit() * 1e-3) as f32,
                _ => (r.normal() * 10.0) as f32,
            })
            .collect();
        sets.push(("many equal maxima", n, v));
        // Confident logits: one large, the rest far below (tiny probabilities).
        let v = (0..rows * n)
            .map(|i| {
                if i % n == 0 {
                    60.0
                } else {
                    (r.normal() * 20.0) as f32
                }
            })
            .collect();
        sets.push(("confident", n, v));
    }
    sets
}

// ---------------------------------------------------------------------------------------
// The oracle: MPFR's correctly rounded f64 exp / log1p, sums in double-double
// ---------------------------------------------------------------------------------------

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// Double-double accumulation (error far below 2^-100 relative for positive terms).
fn dd_sum(terms: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut hi, mut lo) = (0.0f64, 0.0f64);
    for t in terms {
        let (s, e) = two_sum(hi, t);
        lo += e;
        let (s2, e2) = two_sum(s, lo);
        hi = s2;
        lo = e2;
    }
    (hi, lo)
}

/// Reference softmax and log-softmax of one finite row, in f64 (relative error about
/// 2^-52: MPFR's correctly rounded exp and log1p, exact differences, double-double sums).
fn oracle_row(x: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let m = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) as f64;
    // e_i = e^(x_i - m) with x_i - m = dh + dl exactly.
    let e: Vec<f64> = x
        .iter()
        .map(|&v| {
            let (dh, dl) = two_sum(v as f64, -m);
            approx_f64(Func::Exp, dh) * (1.0 + dl)
        })
        .collect();
    let k = x.iter().filter(|&&v| v as f64 == m).count();
    let (th, tl) = dd_sum(
        x.iter()
            .zip(&e)
            .filter(|(v, _)| (**v as f64) < m)
            .map(|(_, &e)| e)
            .chain(std::iter::once((k - 1) as f64)),
    );
    let s = 1.0 + th + tl;
    let l = approx_f64(Func::Log1p, th + tl);
    let soft = e.iter().map(|&e| e / s).collect();
    let logs = x
        .iter()
        .map(|&v| {
            let (dh, dl) = two_sum(v as f64, -m);
            (dh - l) + dl
        })
        .collect();
    (soft, logs)
}

/// |got - want| in units of the format's ulp at want.
fn ulp_err<T: Format>(got: T, want: f64, precision: i32, emin: i32) -> f64 {
    let g = got.to_f32() as f64;
    if g == want {
        return 0.0;
    }
    // Beyond the largest finite value plus half an ulp, the correct rounding is infinity.
    let emax = if emin == -14 { 15 } else { 127 };
    let overflow = 2f64.powi(emax + 1) - 2f64.powi(emax - precision);
    if g.is_infinite() && want.is_finite() && want.abs() >= overflow && g.signum() == want.signum()
    {
        return 0.0;
    }
    if !g.is_finite() || !want.is_finite() {
        return f64::INFINITY;
    }
    let e = if want == 0.0 {
        emin
    } else {
        (want.abs().log2().floor() as i32).max(emin)
    };
    (g - want).abs() / 2f64.powi(e - precision + 1)
}

struct Fmt {
    name: &'static str,
    precision: i32,
    emin: i32,
}
const F32: Fmt = Fmt {
    name: "f32",
    precision: 24,
    emin: -126,
};
const BF16: Fmt = Fmt {
    name: "bf16",
    precision: 8,
    emin: -126,
};
const F16: Fmt = Fmt {
    name: "f16",
    precision: 11,
    emin: -14,
};

/// Max ULP errors (softmax, log-softmax) of rows of length n in format T.
fn max_errors<T: Format + Default>(fmt: &Fmt, n: usize, xs: &[T]) -> (f64, f64) {
    let path = VectorPath::detect();
    let ys = softmax_slice_with(path, n, xs);
    let ls = log_softmax_slice_with(path, n, xs);
    let (mut es, mut el) = (0.0f64, 0.0f64);
    for ((x, y), l) in xs.chunks(n).zip(ys.chunks(n)).zip(ls.chunks(n)) {
        let xf: Vec<f32> = x.iter().map(|v| v.to_f32()).collect();
        let (ws, wl) = oracle_row(&xf);
        for i in 0..n {
            es = es.max(ulp_err(y[i], ws[i], fmt.precision, fmt.emin));
            el = el.max(ulp_err(l[i], wl[i], fmt.precision, fmt.emin));
        }
    }
    (es, el)
}

fn to_fmt<T: Format>(v: &[f32], conv: fn(f32) -> T) -> Vec<T> {
    v.iter().map(|&x| conv(x)).collect()
}

#[test]
fn accuracy_against_mpfr() {
    let mut worst = [(0.0f64, 0.0f64); 3];
    for (what, n, v) in row_sets(0xDEC0DE) {
        let e32 = max_errors(&F32, n, &v);
        let eb = max_errors(&BF16, n, &to_fmt(&v, bf16::from_f32));
        let eh = max_errors(&F16, n, &to_fmt(&v, f16::from_f32));
        for (w, e) in worst.iter_mut().zip([e32, eb, eh]) {
            w.0 = w.0.max(e.0);
            w.1 = w.1.max(e.1);
        }
        for (fmt, e) in [(&F32, e32), (&BF16, eb), (&F16, eh)] {
            assert!(
                e.0 <= 1.0 && e.1 <= 1.0,
                "{what}, n = {n}, {}: softmax {} ulp, log_softmax {} ulp",
                fmt.name,
                e.0,
                e.1
            );
        }
    }
    for (fmt, w) in [F32, BF16, F16].iter().zip(worst) {
        println!(
            "max ulp error, {}: softmax {:.6}, log_softmax {:.6}",
            fmt.name, w.0, w.1
        );
    }
}

#[test]
fn accuracy_adversarial_rows() {
    let rows: Vec<Vec<f32>> = vec![
        vec![0.0, -100.0],
        vec![0.0, -20.0],
        vec![0.0, -87.0, -88.0, -89.0],
        vec![0.0, -103.0],
        vec![1e30, -1e30, 1e30],
        vec![3.0e38, 3.0e38, -3.0e38],
        vec![1.0, 1.0 + f32::EPSILON, 1.0 - f32::EPSILON / 2.0],
        vec![f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 0.0, 1e-45],
        vec![-1e-30, -2e-30, 0.0, 1e-38],
        vec![88.0, 0.0, -88.0, 16.0, 16.0, 16.0],
        (0..1000).map(|i| -(i as f32) * 0.1).collect(),
        (0..1000)
            .map(|i| if i == 0 { 0.0 } else { -110.0 })
            .collect(),
    ];
    for x in rows {
        let n = x.len();
        let (es, el) = max_errors(&F32, n, &x);
        assert!(es <= 1.0 && el <= 1.0, "{x:?}: {es} {el}");
        let (es, el) = max_errors(&BF16, n, &to_fmt(&x, bf16::from_f32));
        assert!(es <= 1.0 && el <= 1.0, "bf16 {x:?}: {es} {el}");
    }
}

#[test]
fn accuracy_long_row() {
    let n = 1 << 20;
    let mut r = Rng(99);
    let x: Vec<f32> = (0..n).map(|_| (r.normal() * 4.0) as f32).collect();
    let (es, el) = max_errors(&F32, n, &x);
    println!("row of 2^20, f32: softmax {es:.6} ulp, log_softmax {el:.6} ulp");
    assert!(es <= 1.0 && el <= 1.0);
    let xb = to_fmt(&x, bf16::from_f32);
    let (es, el) = max_errors(&BF16, n, &xb);
    println!("row of 2^20, bf16: softmax {es:.6} ulp, log_softmax {el:.6} ulp");
    assert!(es <= 1.0 && el <= 1.0);
}

// ---------------------------------------------------------------------------------------
// Invariance
// ---------------------------------------------------------------------------------------

fn bits<T: Format>(v: &[T]) -> Vec<u32> {
    v.iter().map(|x| x.bits()).collect()
}

fn both<T: Format + Default>(path: VectorPath, n: usize, x: &[T]) -> (Vec<u32>, Vec<u32>) {
    (
        bits(&softmax_slice_with(path, n, x)),
        bits(&log_softmax_slice_with(path, n, x)),
    )
}

#[test]
fn row_alone_equals_row_in_a_batch_any_threads_any_path() {
    let mut r = Rng(5);
    for &n in &[1usize, 5, 64, 1000, 3000] {
        let batch: Vec<f32> = (0..1000 * n).map(|_| (r.normal() * 5.0) as f32).collect();
        let path = VectorPath::detect();
        let (full_s, full_l) = both(path, n, &batch);
        for row in [0usize, 1, 499, 999] {
            let alone = &batch[row * n..(row + 1) * n];
            for p in VectorPath::available() {
                let (s, l) = both(p, n, alone);
                assert_eq!(s, full_s[row * n..(row + 1) * n], "n={n} row={row} {p:?}");
                assert_eq!(l, full_l[row * n..(row + 1) * n], "n={n} row={row} {p:?}");
            }
        }
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (s, l) = pool.install(|| both(path, n, &batch));
            assert_eq!(s, full_s, "threads={threads}");
            assert_eq!(l, full_l, "threads={threads}");
        }
        let bb: Vec<bf16> = to_fmt(&batch, bf16::from_f32);
        let (bs, bl) = both(path, n, &bb);
        let (s, l) = both(VectorPath::Baseline, n, &bb[..n]);
        assert_eq!((s, l), (bs[..n].to_vec(), bl[..n].to_vec()));
    }
}

/// The sum is exact, so any order of accumulation gives the same bits: a permuted row
/// gives the permuted outputs, whatever lands in which lane, chunk or block.
#[test]
fn permuted_rows_give_permuted_bits() {
    let mut r = Rng(77);
    for &n in &[3usize, 17, 1000, 70_000, (1 << 17) + 3] {
        let x: Vec<f32> = (0..n)
            .map(|i| {
                if i % 5 == 0 {
                    (r.normal() * 0.01) as f32
                } else {
                    (r.normal() * 8.0) as f32
                }
            })
            .collect();
        let path = VectorPath::detect();
        let (s, l) = both(path, n, &x);
        for round in 0..3 {
            let mut perm: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                let j = (r.next() % (i as u64 + 1)) as usize;
                perm.swap(i, j);
            }
            let px: Vec<f32> = perm.iter().map(|&i| x[i]).collect();
            let (ps, pl) = both(path, n, &px);
            for (k, &i) in perm.iter().enumerate() {
                assert_eq!(ps[k], s[i], "n={n} round={round} softmax index {i}");
                assert_eq!(pl[k], l[i], "n={n} round={round} log_softmax index {i}");
            }
        }
    }
}

/// Long rows are split into blocks over threads: 1, 2 and 4 threads, every vector path.
#[test]
fn long_rows_any_threads() {
    let mut r = Rng(3);
    let n = (1 << 18) + 5;
    let x: Vec<f32> = (0..2 * n).map(|_| (r.normal() * 6.0) as f32).collect();
    let (s, l) = both(VectorPath::Baseline, n, &x);
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for p in VectorPath::available() {
            let got = pool.install(|| both(p, n, &x));
            assert!(got.0 == s && got.1 == l, "threads={threads} {p:?}");
        }
    }
}

#[test]
fn row_of_2_pow_24() {
    let n = 1 << 24;
    let mut r = Rng(11);
    let x: Vec<f32> = (0..n).map(|_| (r.normal() * 2.0) as f32).collect();
    let t = Tensor::from_vec(x, n, &Device::Cpu).unwrap();
    let y = softmax_last_dim(&t).unwrap();
    let total: f64 = y
        .to_dtype(DType::F64)
        .unwrap()
        .sum_all()
        .unwrap()
        .to_scalar()
        .unwrap();
    assert!((total - 1.0).abs() < 1e-6, "{total}");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let y1 = pool.install(|| softmax_last_dim(&t).unwrap());
    assert_eq!(
        bits(&y.to_vec1::<f32>().unwrap()),
        bits(&y1.to_vec1::<f32>().unwrap())
    );
}

// ---------------------------------------------------------------------------------------
// Parity with candle, tensor contract
// ---------------------------------------------------------------------------------------

#[test]
fn parity_with_candle_in_f64() {
    let mut r = Rng(21);
    let (rows, n) = (64, 777);
    let v: Vec<f32> = (0..rows * n).map(|_| (r.normal() * 4.0) as f32).collect();
    let x = Tensor::from_vec(v, (rows, n), &Device::Cpu).unwrap();
    let x64 = x.to_dtype(DType::F64).unwrap();
    let stock_s = candle_nn::ops::softmax_last_dim(&x64)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f64>()
        .unwrap();
    let stock_l = candle_nn::ops::log_softmax(&x64, candle_core::D::Minus1)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f64>()
        .unwrap();
    let ours_s = softmax_last_dim(&x)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap();
    let ours_l = log_softmax_last_dim(&x)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap();
    let mut worst = (0.0f64, 0.0f64);
    for i in 0..rows * n {
        worst.0 = worst.0.max(ulp_err(ours_s[i], stock_s[i], 24, -126));
        worst.1 = worst.1.max(ulp_err(ours_l[i], stock_l[i], 24, -126));
    }
    println!(
        "vs candle in f64: softmax {:.4} ulp, log_softmax {:.4} ulp",
        worst.0, worst.1
    );
    assert!(worst.0 <= 1.0 && worst.1 <= 1.0, "{worst:?}");
}

#[test]
fn tensor_contract_dtypes_ranks_layouts() {
    let dev = Device::Cpu;
    let mut r = Rng(8);
    let v: Vec<f32> = (0..2 * 3 * 40).map(|_| (r.normal() * 3.0) as f32).collect();
    let x = Tensor::from_vec(v, (2, 3, 40), &dev).unwrap();
    for dt in [DType::F32, DType::BF16, DType::F16] {
        let xd = x.to_dtype(dt).unwrap();
        let y = softmax_last_dim(&xd).unwrap();
        assert_eq!(y.dtype(), dt);
        assert_eq!(y.dims(), &[2, 3, 40]);
        // A transposed (strided) input equals its contiguous copy.
        let t = xd.transpose(1, 2).unwrap();
        let a = softmax_last_dim(&t).unwrap();
        let b = softmax_last_dim(&t.contiguous().unwrap()).unwrap();
        let fa: Vec<f32> = a
            .flatten_all()
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap()
            .to_vec1()
            .unwrap();
        let fb: Vec<f32> = b
            .flatten_all()
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap()
            .to_vec1()
            .unwrap();
        assert_eq!(bits(&fa), bits(&fb));
        let l = log_softmax_last_dim(&t).unwrap();
        assert_eq!(l.dims(), &[2, 40, 3]);
    }
    // Empty tensors.
    let e = Tensor::zeros((0, 5), DType::F32, &dev).unwrap();
    assert_eq!(softmax_last_dim(&e).unwrap().dims(), &[0, 5]);
    let e = Tensor::zeros((3, 0), DType::BF16, &dev).unwrap();
    assert_eq!(log_softmax_last_dim(&e).unwrap().dims(), &[3, 0]);
    // Other dtypes are errors.
    let i = Tensor::new(&[1u32, 2], &dev).unwrap();
    assert!(softmax_last_dim(&i).is_err());
    let d = Tensor::new(&[1.0f64, 2.0], &dev).unwrap();
    assert!(log_softmax_last_dim(&d).is_err());
}

#[test]
fn special_rows() {
    let p = VectorPath::detect();
    let nan = f32::from_bits(0x7FC0_0000);
    let inf = f32::INFINITY;
    let ninf = f32::NEG_INFINITY;
    let cases: Vec<(Vec<f32>, Vec<f32>, Vec<f32>)> = vec![
        (vec![7.0], vec![1.0], vec![0.0]),
        (vec![inf], vec![1.0], vec![0.0]),
        (vec![ninf], vec![nan], vec![nan]),
        (vec![ninf, ninf, ninf], vec![nan; 3], vec![nan; 3]),
        (vec![1.0, f32::NAN, 3.0], vec![nan; 3], vec![nan; 3]),
        (vec![inf, f32::NAN], vec![nan; 2], vec![nan; 2]),
        (
            vec![inf, 0.0, inf, ninf],
            vec![0.5, 0.0, 0.5, 0.0],
            vec![-std::f32::consts::LN_2, ninf, -std::f32::consts::LN_2, ninf],
        ),
        (
            vec![inf, 1.0, 2.0],
            vec![1.0, 0.0, 0.0],
            vec![0.0, ninf, ninf],
        ),
        (vec![ninf, 2.0], vec![0.0, 1.0], vec![ninf, 0.0]),
        (
            vec![inf, inf, inf],
            vec![1.0 / 3.0; 3],
            vec![-(3f32.ln()); 3],
        ),
    ];
    for (x, ws, wl) in cases {
        let n = x.len();
        assert_eq!(
            bits(&softmax_slice_with(p, n, &x)),
            bits(&ws),
            "softmax {x:?}"
        );
        assert_eq!(
            bits(&log_softmax_slice_with(p, n, &x)),
            bits(&wl),
            "log_softmax {x:?}"
        );
        let xb = to_fmt(&x, bf16::from_f32);
        let sb = softmax_slice_with(p, n, &xb);
        for (g, w) in sb.iter().zip(&ws) {
            assert_eq!(g.to_bits(), bf16::from_f32(*w).to_bits(), "bf16 {x:?}");
        }
    }
    // A long row with a NaN in its last block, and one with +inf entries.
    let mut x = vec![0.5f32; (1 << 17) + 9];
    *x.last_mut().unwrap() = f32::NAN;
    let n = x.len();
    assert!(
        softmax_slice_with(p, n, &x)
            .iter()
            .all(|v| v.to_bits() == 0x7FC0_0000)
    );
    assert!(
        log_softmax_slice_with(p, n, &x)
            .iter()
            .all(|v| v.to_bits() == 0x7FC0_0000)
    );
    x[n - 1] = inf;
    x[7] = inf;
    let s = softmax_slice_with(p, n, &x);
    assert_eq!((s[7], s[n - 1], s[8]), (0.5, 0.5, 0.0));
}

// ---------------------------------------------------------------------------------------
// Backward
// ---------------------------------------------------------------------------------------

/// The gradient of sum(w * f(x)) through our op, and its reference in f64 from our own
/// forward output (the backward formulas evaluated with an exact f64 sum).
fn grad_check(log: bool, rows: usize, n: usize, seed: u64) {
    let mut r = Rng(seed);
    let v: Vec<f32> = (0..rows * n).map(|_| (r.normal() * 3.0) as f32).collect();
    let w: Vec<f32> = (0..rows * n).map(|_| (r.normal() * 2.0) as f32).collect();
    let x = Var::from_vec(v.clone(), (rows, n), &Device::Cpu).unwrap();
    let wt = Tensor::from_vec(w.clone(), (rows, n), &Device::Cpu).unwrap();
    let f = if log {
        log_softmax_last_dim(&x).unwrap()
    } else {
        softmax_last_dim(&x).unwrap()
    };
    let y: Vec<f32> = f.flatten_all().unwrap().to_vec1().unwrap();
    let loss = (f * &wt).unwrap().sum_all().unwrap();
    let grads = loss.backward().unwrap();
    let gx: Vec<f32> = grads
        .get(&x)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap();
    for row in 0..rows {
        let ys = &y[row * n..(row + 1) * n];
        let g = &w[row * n..(row + 1) * n];
        let s = if log {
            dd_sum(g.iter().map(|&g| g as f64))
        } else {
            dd_sum(g.iter().zip(ys).map(|(&g, &y)| g as f64 * y as f64))
        };
        let s = s.0 + s.1;
        for i in 0..n {
            let want = if log {
                g[i] as f64 - (ys[i] as f64).exp() * s
            } else {
                (g[i] as f64 - s) * ys[i] as f64
            };
            let got = gx[row * n + i] as f64;
            let tol = 1e-6 * (want.abs() + if log { s.abs() * 1e-1 } else { 1e-3 });
            assert!(
                (got - want).abs() <= tol.max(1e-30),
                "log={log} row={row} i={i}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn backward_matches_the_formula() {
    grad_check(false, 8, 300, 1);
    grad_check(true, 8, 300, 2);
    grad_check(false, 2, 1, 3);
    grad_check(true, 2, 1, 4);
}

#[test]
fn backward_is_order_and_thread_independent() {
    let mut r = Rng(31);
    let n = 5000;
    let v: Vec<f32> = (0..n).map(|_| (r.normal() * 3.0) as f32).collect();
    let w: Vec<f32> = (0..n).map(|_| (r.normal() * 1e3) as f32).collect();
    let grad = |v: &[f32], w: &[f32], log: bool| -> Vec<u32> {
        let x = Var::from_vec(v.to_vec(), (1, v.len()), &Device::Cpu).unwrap();
        let wt = Tensor::from_vec(w.to_vec(), (1, w.len()), &Device::Cpu).unwrap();
        let f = if log {
            log_softmax_last_dim(&x).unwrap()
        } else {
            softmax_last_dim(&x).unwrap()
        };
        let loss = (f * wt).unwrap().sum_all().unwrap();
        let g = loss.backward().unwrap();
        let g: Vec<f32> = g.get(&x).unwrap().flatten_all().unwrap().to_vec1().unwrap();
        bits(&g)
    };
    for log in [false, true] {
        let base = grad(&v, &w, log);
        let mut perm: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = (r.next() % (i as u64 + 1)) as usize;
            perm.swap(i, j);
        }
        let pv: Vec<f32> = perm.iter().map(|&i| v[i]).collect();
        let pw: Vec<f32> = perm.iter().map(|&i| w[i]).collect();
        let pg = grad(&pv, &pw, log);
        for (k, &i) in perm.iter().enumerate() {
            assert_eq!(pg[k], base[i], "log={log} index {i}");
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(pool.install(|| grad(&v, &w, log)), base);
    }
}
