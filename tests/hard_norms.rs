//! The hardest inputs of the norms' rounding decisions (issue 31): rows built so that
//! tier 1's output error exceeds half of one of its proven bounds in the direction that
//! misrounds, run through the CPU norm and through the CUDA kernel on the emulated device
//! (256, 32 and 1 threads per block), every output checked against MPFR
//! (`mpfr_oracle::norm::norm_row`). Four kinds (docs/VERIFICATION.md, "Hardest inputs:
//! norms"): RMSNorm rows hard for the output bound in the CPU's order (below), LayerNorm
//! rows hard for it in the device's tree order, RMSNorm rows hard for the variance bound
//! in the device's one-thread order, and long rows of both norms hard for the variance
//! bound in the CPU's order and at 1, 32 and 256 threads per block, whose small squares
//! are lost one after another against a large one (`lost_squares_row`). The variance
//! bound counts A, the most additions with two nonzero operands that a square meets in
//! the order (`core/src/norm/mod.rs`); the replay takes A from running the order
//! (`square_additions`), checked against the header's closed forms.
//!
//! Construction of the first (f32, eps > 0, n = 10). x_0 = 1 + t 2^-23 (x_0^2, exact in
//! f64, at the bottom of its binade), x_1..x_8 = s, the largest f32 whose square is below
//! half an ulp of x_0^2, x_9 = 0. In the CPU's order (element i into lane i mod 8, the
//! lanes added in order) each s^2 is lost whole: the computed sum of squares is x_0^2, the
//! exact one x_0^2 + 8 s^2, about 8 u below. eps is the largest f32 below half an ulp of
//! ss / n, so that ss / n + eps loses it too. r = 1/sqrt(V) is then about 4.3 u too large
//! before its own three roundings (/n, sqrt, 1/); x_0 (t from a seeded generator) is kept
//! when those push the error of r past 5.6 u (the double-double estimate below). Each
//! output z_i = x_i w_i r (x_i w_i exact) rounds once more; w_i is drawn until that
//! rounding adds to the error, and b_i = -round_f32(z_i) cancels z_i, so that y = z + b is
//! about 2^-25 |z| and the rounding test's own widening |y| 2^-51 is negligible. The proven
//! bound is (3 u + e_r) |z| with e_r about 9 u (the sum of squares' count A = 8 at n = 10):
//! half of it, about 6.2 u |z|, is below the error, so a halved output bound accepts the f32 value on the wrong side of a midpoint,
//! while the right bound sends the output to the exact tier.
//!
//! Each case asserts its own hardness: tier 1 replayed in f64 (the formulas of
//! `core/src/norm/cpu.rs`, in the order of the CPU or of a device block), the interval of half
//! the bound rounds to one value that is not MPFR's, the interval of the whole bound does
//! not decide.
//!
//! `cargo test --release --test hard_norms`
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

mod common;

use candle_core::{DType, Device, Tensor};
use candle_repro::launch::{Device as _, Slot};
use candle_repro::norm::{cuda::norm_plan, norm_with};
use common::bits;
use common::emu::{Emu, download, upload};
use mpfr_oracle::F32;

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;

/// 2^-53.
const U: f64 = f64::from_bits(0x3CA0_0000_0000_0000);
/// The norm code's slack on its bounds, 1 + 2^-10.
const SLACK: f64 = f64::from_bits(0x3FF0_0400_0000_0000);
const N: usize = 10;

/// The largest f32 below `limit` (positive).
fn f32_below(limit: f64) -> f32 {
    let mut v = limit as f32;
    while v as f64 >= limit {
        v = f32::from_bits(v.to_bits() - 1);
    }
    v
}

/// Half an ulp of a positive normal f64.
fn half_ulp(v: f64) -> f64 {
    f64::from_bits((v.to_bits() >> 52) << 52) * U
}

/// Where tier 1 forms the row's sums: the CPU's 8 lanes (element i in lane i mod 8, the
/// lanes added in order; `core/src/norm/cpu.rs`), or a device block of T threads (each thread's
/// elements t, t + T, .. in order, then the shared-memory tree; `kernels/norm/norm.cu`).
#[derive(Clone, Copy, Debug)]
enum Order {
    Cpu,
    Device(usize),
}

/// The most additions with two nonzero operands that one square passes through in
/// `order`'s sum of squares (the count A of the variance bound, `core/src/norm/mod.rs`), found by
/// running the order on the row's structure, independently of the code's closed forms: an
/// accumulator is empty until its first element, and the sum of two nonempty ones carries
/// the larger of their counts plus one.
fn square_additions(n: usize, order: Order) -> usize {
    let add = |a: Option<usize>, b: Option<usize>| match (a, b) {
        (Some(p), Some(q)) => Some(p.max(q) + 1),
        (a, None) => a,
        (None, b) => b,
    };
    let lanes = match order {
        Order::Cpu => 8,
        Order::Device(t) => t,
    };
    let mut acc: Vec<Option<usize>> = vec![None; lanes];
    for i in 0..n {
        acc[i % lanes] = add(acc[i % lanes], Some(0));
    }
    let total = match order {
        // `Iterator::sum` from -0.0 (an empty accumulator) over the lanes in order.
        Order::Cpu => acc.iter().fold(None, |r, &l| add(r, l)),
        Order::Device(t) => {
            let mut k = t / 2;
            while k > 0 {
                for j in 0..k {
                    acc[j] = add(acc[j], acc[j + k]);
                }
                k /= 2;
            }
            acc[0]
        }
    };
    total.unwrap_or(0)
}

/// The closed forms of `core/src/norm/mod.rs`'s header (A_cpu = min(n - 1, ceil(n/8) + 6),
/// A_dev = ceil(n/T) - 1 + ceil(log2 min(n, T))) against the count run on the orders.
#[test]
fn square_additions_closed_forms() {
    for n in 1..=1100usize {
        assert_eq!(
            square_additions(n, Order::Cpu),
            (n - 1).min(n.div_ceil(8) + 6),
            "CPU, n = {n}"
        );
        for t in [1usize, 2, 4, 8, 32, 64, 256] {
            let m = n.min(t);
            let levels = (usize::BITS - (m - 1).leading_zeros()) as usize; // ceil(log2 m)
            assert_eq!(
                square_additions(n, Order::Device(t)),
                n.div_ceil(t) - 1 + levels,
                "device, n = {n}, {t} threads"
            );
        }
    }
}

/// TwoSum.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// Tier 1's row statistics.
#[derive(Clone, Copy, Debug)]
struct Stats {
    mu: f64,
    delta_mu: f64,
    /// The computed sum of squared deviations.
    ss: f64,
    r: f64,
    e_r: f64,
}

/// Tier 1's statistics replayed in f64, step for step as `core/src/norm/cpu.rs` (`Order::Cpu`)
/// or `kernels/norm/norm.cu` (`Order::Device`) computes them: the compensated sum and the
/// mean's bound (LayerNorm), the sum of squared deviations, r = 1/sqrt(ss/n + eps) and its
/// bound e_r; with `planted`, the mean's bound delta_mu (`Plant::Mean`) or the variance
/// bound e_ss (`Plant::Variance`) at 1/2, as its plant makes it.
fn replay_stats(
    x: &[f32],
    eps: f32,
    remove_mean: bool,
    order: Order,
    planted: Option<Plant>,
) -> Stats {
    let half = |p: Plant| if planted == Some(p) { 0.5 } else { 1.0 };
    let (mean_scale, e_ss_scale) = (half(Plant::Mean), half(Plant::Variance));
    let n = x.len();
    let nf = n as f64;
    let xs: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    // The row sums in the order's groups: a TwoSum chain (s, q), sum |x| (a), sum d^2.
    let (lanes, groups): (usize, Vec<Vec<usize>>) = match order {
        Order::Cpu => (8, (0..8).map(|l| (l..n).step_by(8).collect()).collect()),
        Order::Device(t) => (t, (0..t).map(|l| (l..n).step_by(t).collect()).collect()),
    };
    let (mu, delta_mu) = if remove_mean {
        let mut s = vec![0.0f64; lanes];
        let mut q = vec![0.0f64; lanes];
        let mut a = vec![0.0f64; lanes];
        for (l, g) in groups.iter().enumerate() {
            for &i in g {
                let (t, e) = two_sum(s[l], xs[i]);
                s[l] = t;
                q[l] += e;
                a[l] += xs[i].abs();
            }
        }
        let (sx, abs) = match order {
            Order::Cpu => {
                let (mut total, mut err) = (s[0], q[0]);
                for l in 1..8 {
                    let (t, e) = two_sum(total, s[l]);
                    total = t;
                    err += e + q[l];
                }
                (total + err, a.iter().sum::<f64>())
            }
            Order::Device(t) => {
                let mut k = t / 2;
                while k > 0 {
                    for j in 0..k {
                        let (t2, e2) = two_sum(s[j], s[j + k]);
                        s[j] = t2;
                        q[j] = q[j] + q[j + k] + e2;
                        a[j] += a[j + k];
                    }
                    k /= 2;
                }
                (s[0] + q[0], a[0])
            }
        };
        // mean_from_sums.
        let abs = abs * f64::from_bits(0x3FF0_0001_0000_0000);
        let m = (n + lanes) as f64;
        let e_sx = sx.abs() * U + m * m * f64::from_bits(0x3950_0001_0000_0000) * abs;
        let mu = sx / nf;
        (mu, (e_sx / nf + U * mu.abs()) * SLACK * mean_scale)
    } else {
        (0.0, 0.0)
    };
    let mut sq = vec![0.0f64; lanes];
    for (l, g) in groups.iter().enumerate() {
        for &i in g {
            let d = xs[i] - mu;
            sq[l] += d * d;
        }
    }
    let ss = match order {
        Order::Cpu => sq.iter().sum::<f64>(),
        Order::Device(t) => {
            let mut k = t / 2;
            while k > 0 {
                for j in 0..k {
                    sq[j] += sq[j + k];
                }
                k /= 2;
            }
            sq[0]
        }
    };
    // stats_from_sums, with the order's count of additions.
    let adds = square_additions(n, order) as f64;
    let e_ss = ((adds + 5.0) * U * ss + 2.0 * nf * delta_mu * delta_mu) * SLACK * e_ss_scale;
    let v = ss / nf + eps as f64;
    let e_v = (e_ss / nf) / v + 2.0 * U;
    let r = 1.0 / v.sqrt();
    let e_r = (e_v * 0.5 + 2.0 * U) * SLACK;
    Stats {
        mu,
        delta_mu,
        ss,
        r,
        e_r,
    }
}

/// (y, the output's error bound) as `element_tier1` computes them.
fn replay_element(x: f32, w: f32, b: f32, st: &Stats) -> (f64, f64) {
    let wi = w as f64;
    let z = (x as f64 - st.mu) * wi * st.r;
    let y = z + b as f64;
    let err = (st.r * wi.abs() * st.delta_mu + z.abs() * (3.0 * U + st.e_r) + U * y.abs()) * SLACK;
    (y, err)
}

/// `round_within_parts::<f32>`: the value the interval rounds to, if it rounds to one.
fn decided(y: f64, err: f64) -> Option<f32> {
    let d = err * f64::from_bits(0x3FF0_0000_0001_0000)
        + y.abs() * f64::from_bits(0x3CC0_0000_0000_0000);
    let (lo, hi) = ((y - d) as f32, (y + d) as f32);
    (lo.to_bits() == hi.to_bits()).then_some(lo)
}

/// Which bound a case is hard for, planted at 1/2.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Plant {
    /// The output bound (`element_tier1`'s err) at 1/2.
    Output,
    /// The variance bound (`stats_from_sums`'s e_ss) at 1/2.
    Variance,
    /// The mean's bound (`mean_from_sums`'s delta_mu) at 1/2.
    Mean,
}

/// A row's inputs.
#[derive(Clone, Copy)]
struct Row<'a> {
    x: &'a [f32],
    w: &'a [f32],
    b: &'a [f32],
    eps: f32,
    remove_mean: bool,
}

/// Whether output i of the row is hard in `order` for `plant`: the planted bound decides a
/// value that is not `want` (MPFR's bits), the bound as it is does not decide.
fn hard_in(row: Row, order: Order, plant: Plant, i: usize, want: u32) -> bool {
    let Row {
        x,
        w,
        b,
        eps,
        remove_mean,
    } = row;
    let st = replay_stats(x, eps, remove_mean, order, None);
    let (y, err) = replay_element(x[i], w[i], b[i], &st);
    let planted = match plant {
        Plant::Output => decided(y, err / 2.0),
        Plant::Variance | Plant::Mean => {
            let sth = replay_stats(x, eps, remove_mean, order, Some(plant));
            let (yh, errh) = replay_element(x[i], w[i], b[i], &sth);
            decided(yh, errh)
        }
    };
    matches!((planted, decided(y, err)), (Some(v), None) if v.to_bits() != want)
}

/// The relative error of the computed r against 1/sqrt(V) for a row of x0, `k` elements s
/// and zeros (RMSNorm, n elements), from double-double pieces: r^2 V - 1 = 2 E to first
/// order.
fn r_error(x0: f32, s: f32, k: usize, n: usize, eps: f32, r: f64) -> f64 {
    let (x0, s) = (x0 as f64, s as f64);
    // V = (x0^2 + k s^2) / n + eps, as vh + vl.
    let ss_hi = x0 * x0;
    let ss_lo = k as f64 * s * s;
    let vh = ss_hi / n as f64;
    let rem = (-vh).mul_add(n as f64, ss_hi);
    let vl = (rem + ss_lo) / n as f64 + eps as f64;
    let ph = r * r;
    let pl = r.mul_add(r, -ph);
    let q1 = ph.mul_add(vh, -1.0) + ph * vl + pl * vh;
    q1 / 2.0
}

struct Case {
    x: Vec<f32>,
    w: Vec<f32>,
    b: Vec<f32>,
    eps: f32,
    remove_mean: bool,
    /// MPFR's outputs, as f32 bits.
    want: Vec<u32>,
    /// The elements whose planted bound misrounds.
    hard: Vec<usize>,
}

/// MPFR's outputs of a row, as f32 bits.
fn mpfr_bits(x: &[f32], w: &[f32], b: &[f32], eps: f32, remove_mean: bool) -> Vec<u32> {
    let f = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<_>>();
    mpfr_oracle::norm::norm_row(&f(x), &f(w), Some(&f(b)), eps as f64, remove_mean, F32)
        .iter()
        .map(|&v| (v as f32).to_bits())
        .collect()
}

/// A row of x0 = 1 + t 2^-23 (t from `rng`), then `k` elements s, the largest f32 whose
/// square is below half an ulp of x0^2, then zeros (n in all); eps the largest f32 below
/// half an ulp of x0^2 / n. Returns (x0, s, x, eps).
fn lost_row(rng: &mut Lcg, k: usize, n: usize) -> (f32, f32, Vec<f32>, f32) {
    let x0 = f32::from_bits(0x3F80_0000 + rng.below(1 << 16) as u32);
    let s = f32_below(half_ulp(x0 as f64 * x0 as f64).sqrt());
    let mut x = vec![0.0f32; n];
    x[0] = x0;
    x[1..=k].fill(s);
    let eps = f32_below(half_ulp(x0 as f64 * x0 as f64 / n as f64));
    (x0, s, x, eps)
}

/// Draws w_i (and b_i = -round_f32(z_i), or with `wide` that moved one f32 away from 0, for
/// errors so large that y = z + b must be about an ulp of z, not half of one or less, for
/// an interval of the halved bound to round to one value) for each i in `elems` until the output is hard
/// for `plant` in `order` by the double-double estimate of the row's r error `er` (a row
/// whose mean is exactly 0 and computed as 0, so that x_i - mu = x_i and x_i w_i are exact:
/// RMSNorm, or the LayerNorm rows below), stopping after `cap` picks; returns w and b (1
/// and 0 where nothing was drawn) and the elements picked.
fn draw_weights(
    rng: &mut Lcg,
    (x, eps, remove_mean): (&[f32], f32, bool),
    order: Order,
    plant: Plant,
    er: f64,
    (elems, cap, wide): (&[usize], usize, bool),
) -> (Vec<f32>, Vec<f32>, Vec<usize>) {
    let (mut w, mut b) = (vec![1.0f32; x.len()], vec![0.0f32; x.len()]);
    let st = replay_stats(x, eps, remove_mean, order, None);
    assert_eq!(st.mu, 0.0, "the estimate needs the mean computed as 0");
    let stp = match plant {
        Plant::Output => st,
        Plant::Variance | Plant::Mean => replay_stats(x, eps, remove_mean, order, Some(plant)),
    };
    let mut picked = Vec::new();
    for &i in elems {
        if picked.len() >= cap {
            break;
        }
        for _ in 0..400 {
            let wi = f32::from_bits(0x3F80_0000 + rng.below(1 << 23) as u32);
            let m = x[i] as f64 * wi as f64; // exact
            let z = m * st.r;
            let e_mul = m.mul_add(st.r, -z); // m r - z, exact
            // z / z_exact - 1 = (1 + er)(1 - e_mul / (m r)) - 1.
            let total = er - e_mul / z;
            // -round_f32(z), or one f32 further (`wide`, y = z + b about one ulp of z).
            let bi = -(z as f32);
            let bi = if wide {
                f32::from_bits(bi.to_bits() + 1)
            } else {
                bi
            };
            let (y, err) = replay_element(x[i], wi, bi, &st);
            let (yp, errp) = replay_element(x[i], wi, bi, &stp);
            let errp = match plant {
                Plant::Output => errp / 2.0,
                Plant::Variance | Plant::Mean => errp,
            };
            // The exact y, to f64's precision around y (|y| ~ 2^-25 |z|).
            let y_exact = y - total * z;
            let (Some(v_half), None) = (decided(yp, errp), decided(y, err)) else {
                continue;
            };
            if (y_exact as f32).to_bits() != v_half.to_bits() {
                w[i] = wi;
                b[i] = bi;
                picked.push(i);
                break;
            }
        }
    }
    (w, b, picked)
}

/// The RMSNorm rows hard for the output bound at 1/2 in the CPU's order (the module
/// header), each checked against MPFR as it is made.
fn build(count: usize) -> Vec<Case> {
    let mut rng = Lcg(0x5eed_0031);
    let mut cases = Vec::new();
    let mut hard_total = 0;
    while hard_total < count {
        let (x0, s, mut x, eps) = lost_row(&mut rng, N - 2, N);
        x[N - 1] = 0.0;
        let ss = x0 as f64 * x0 as f64;
        let st = replay_stats(&x, eps, false, Order::Cpu, None);
        // Every s^2 and eps lost whole: the computed sum of squares is x0^2.
        assert_eq!(st.r, 1.0 / (ss / N as f64).sqrt());
        let er = r_error(x0, s, N - 2, N, eps, st.r);
        if er < 5.6 * U {
            continue;
        }
        let elems: Vec<usize> = (0..N - 1).collect();
        let (w, b, picked) = draw_weights(
            &mut rng,
            (&x, eps, false),
            Order::Cpu,
            Plant::Output,
            er,
            (&elems, usize::MAX, false),
        );
        if picked.is_empty() {
            continue;
        }
        let want = mpfr_bits(&x, &w, &b, eps, false);
        let hard: Vec<usize> = (0..N)
            .filter(|&i| {
                hard_in(
                    Row {
                        x: &x,
                        w: &w,
                        b: &b,
                        eps,
                        remove_mean: false,
                    },
                    Order::Cpu,
                    Plant::Output,
                    i,
                    want[i],
                )
            })
            .collect();
        // The estimate picked them; MPFR confirms them (a miss would be a wrong estimate).
        assert_eq!(hard, picked, "x0 = {x0:e}: the estimate and MPFR disagree");
        hard_total += hard.len();
        cases.push(Case {
            x,
            w,
            b,
            eps,
            remove_mean: false,
            want,
            hard,
        });
    }
    cases
}

fn tensor(v: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape, &Device::Cpu).unwrap()
}

/// Every output of every case through the CPU norm and the CUDA kernel on the emulated
/// device at 256, 32 and 1 threads per block, against MPFR; returns the device launches.
fn run_cases(cases: &[Case]) -> usize {
    let mut launches = 0;
    for (k, c) in cases.iter().enumerate() {
        let n = c.x.len();
        let (xt, wt, bt) = (
            tensor(&c.x, &[1, n]),
            tensor(&c.w, &[n]),
            tensor(&c.b, &[n]),
        );
        let cpu = norm_with(&xt, &wt, Some(&bt), c.eps, c.remove_mean, false).unwrap();
        assert_eq!(bits(&cpu), c.want, "case {k}: CPU against MPFR");
        let ((xb, _), (wb, _), (bb, _)) = (upload(&xt), upload(&wt), upload(&bt));
        for threads in [256u32, 32, 1] {
            let mut plan = norm_plan(
                DType::F32,
                1,
                n,
                (0, 0, Some(0)),
                c.remove_mean,
                c.eps,
                false,
            )
            .unwrap();
            plan.block = (threads, 1, 1);
            let mut out = Emu.alloc(DType::F32, n).unwrap();
            let mut slots = vec![
                Slot::In(&xb),
                Slot::In(&wb),
                Slot::Out(&mut out),
                Slot::In(&bb),
            ];
            Emu.launch(&plan, &mut slots).unwrap();
            assert_eq!(
                bits(&download(&out, (1, n))),
                c.want,
                "case {k}: device ({threads} threads) against MPFR"
            );
            launches += 1;
        }
    }
    launches
}

fn report(what: &str, cases: &[Case], built: std::time::Duration, t0: std::time::Instant) {
    let hard: usize = cases.iter().map(|c| c.hard.len()).sum();
    let outputs: usize = cases.iter().map(|c| c.x.len()).sum();
    let launches = run_cases(cases);
    println!(
        "{what}: {} rows, {hard} hard outputs (built and checked against MPFR in {built:?}), \
         {outputs} outputs on the CPU and {launches} device launches: 0 misrounded, {:?} in all",
        cases.len(),
        t0.elapsed()
    );
}

#[test]
fn output_bounds_matter_in_rms_norm() {
    let t0 = std::time::Instant::now();
    let cases = build(48);
    // Each case asserts its hardness in `build`; here every output must be MPFR's.
    report("RMSNorm, the CPU's order", &cases, t0.elapsed(), t0);
}

/// LayerNorm rows (n = 3) hard for the output bound at 1/2 in the device's tree order at
/// 256 and 32 threads per block (for n = 3 every block of at least 2 threads sums
/// (x0'^2 + x2'^2) + x1'^2, x' the deviations): x0 and x2 = -x0 - 2^-23 j near 1, x1 small,
/// its square lost, eps lost, found by `tools/norm_hard_rows.py` (a search over rows and a
/// scan over w; b = -round_f32(z) as above). Each: (x bits, eps bits, the hard element, its
/// w and b bits); the other weights are 1 and biases 0.
const LAYER_NORM_TREE_ROWS: [([u32; 3], u32, usize, u32, u32); 14] = [
    (
        [0x3F87F680, 0xB27FE397, 0xBF87F67E],
        0x247FFFF0,
        0,
        0x3F838B4F,
        0xBFA11BAA,
    ),
    (
        [0x3F87F680, 0xB27FE397, 0xBF87F67E],
        0x247FFFF0,
        0,
        0xBF838B4F,
        0x3FA11BAA,
    ),
    (
        [0x3F82D3CF, 0xB27FCE5D, 0xBF82D3CD],
        0x247FFFF0,
        2,
        0x3F830699,
        0x3FA0791F,
    ),
    (
        [0x3F82D3CF, 0xB27FCE5D, 0xBF82D3CD],
        0x247FFFF0,
        2,
        0x3F836558,
        0x3FA0ED2A,
    ),
    (
        [0x3F812A0C, 0x327FC146, 0xBF812A0E],
        0x247FFFF0,
        0,
        0x3F82B60F,
        0xBFA0167C,
    ),
    (
        [0x3F812A0C, 0x327FC146, 0xBF812A0E],
        0x247FFFF0,
        0,
        0x3F8336A1,
        0xBFA0B3F3,
    ),
    (
        [0x3F83CACD, 0x327FDA7F, 0xBF83CACF],
        0x247FFFF0,
        2,
        0x3F80013F,
        0x3F9CC5F8,
    ),
    (
        [0x3F83CACD, 0x327FDA7F, 0xBF83CACF],
        0x247FFFF0,
        2,
        0x3F80063B,
        0x3F9CCC13,
    ),
    (
        [0x3F84121E, 0xB27FDA12, 0xBF84121C],
        0x247FFFF0,
        2,
        0x3F800B64,
        0x3F9CD264,
    ),
    (
        [0x3F84121E, 0xB27FDA12, 0xBF84121C],
        0x247FFFF0,
        2,
        0x3F80107A,
        0x3F9CD89E,
    ),
    (
        [0x3F8239B3, 0xB27FD7F0, 0xBF8239B1],
        0x247FFFF0,
        2,
        0x3F803396,
        0x3F9D039E,
    ),
    (
        [0x3F8239B3, 0xB27FD7F0, 0xBF8239B1],
        0x247FFFF0,
        2,
        0x3F80385C,
        0x3F9D0977,
    ),
    (
        [0x3F810C5B, 0x327FC7BF, 0xBF810C5D],
        0x247FFFF0,
        2,
        0x3F80A4A9,
        0x3F9D8E1C,
    ),
    (
        [0x3F810C5B, 0x327FC7BF, 0xBF810C5D],
        0x247FFFF0,
        2,
        0x3F8100D4,
        0x3F9DFEFE,
    ),
];

#[test]
fn output_bounds_matter_in_layer_norm_on_the_device_tree() {
    let t0 = std::time::Instant::now();
    let cases: Vec<Case> = LAYER_NORM_TREE_ROWS
        .iter()
        .map(|&(xb, eb, i, wb, bb)| {
            let x: Vec<f32> = xb.iter().map(|&v| f32::from_bits(v)).collect();
            let eps = f32::from_bits(eb);
            let (mut w, mut b) = (vec![1.0f32; 3], vec![0.0f32; 3]);
            w[i] = f32::from_bits(wb);
            b[i] = f32::from_bits(bb);
            let want = mpfr_bits(&x, &w, &b, eps, true);
            for t in [256, 32] {
                assert!(
                    hard_in(
                        Row {
                            x: &x,
                            w: &w,
                            b: &b,
                            eps,
                            remove_mean: true
                        },
                        Order::Device(t),
                        Plant::Output,
                        i,
                        want[i]
                    ),
                    "x = {x:?}, element {i}: not hard at {t} threads"
                );
            }
            Case {
                x,
                w,
                b,
                eps,
                remove_mean: true,
                want,
                hard: vec![i],
            }
        })
        .collect();
    report("LayerNorm, the device's tree", &cases, t0.elapsed(), t0);
}

/// RMSNorm rows (n = 32) hard for the variance bound at 1/2 in the device's order at one
/// thread per block, where the squares are summed in one chain: x0 then 31 elements s whose
/// squares are each lost whole (as in the rows above), so the computed sum of squares is
/// x0^2, 31 half-ulps (about 31 u) below the exact one, and r about 16 u too large; the
/// halved variance bound allows 3 u + e_r' = 3 u + (e_ss' / n / V + 2 u) / 2 + 2 u, about
/// 15 u with e_ss' = (A + 5) u ss / 2, A = n - 1 additions in one chain. (In the CPU's 8
/// lanes and in the tree at 32 or 256 threads the small squares add up before they meet
/// x0^2, so these rows are not hard there; their outputs are still checked.)
#[test]
fn variance_bounds_matter_at_one_thread_per_block() {
    const M: usize = 32;
    let t0 = std::time::Instant::now();
    let mut rng = Lcg(0x5eed_0131);
    let mut cases = Vec::new();
    let mut hard_total = 0;
    while hard_total < 64 {
        let (x0, s, x, eps) = lost_row(&mut rng, M - 1, M);
        let st = replay_stats(&x, eps, false, Order::Device(1), None);
        assert_eq!(st.ss, x0 as f64 * x0 as f64, "every s^2 lost in the chain");
        let er = r_error(x0, s, M - 1, M, eps, st.r);
        let elems: Vec<usize> = (0..M).collect();
        let (w, b, picked) = draw_weights(
            &mut rng,
            (&x, eps, false),
            Order::Device(1),
            Plant::Variance,
            er,
            (&elems, usize::MAX, false),
        );
        let want = mpfr_bits(&x, &w, &b, eps, false);
        let hard: Vec<usize> = (0..M)
            .filter(|&i| {
                hard_in(
                    Row {
                        x: &x,
                        w: &w,
                        b: &b,
                        eps,
                        remove_mean: false,
                    },
                    Order::Device(1),
                    Plant::Variance,
                    i,
                    want[i],
                )
            })
            .collect();
        assert_eq!(hard, picked, "x0 = {x0:e}: the estimate and MPFR disagree");
        hard_total += hard.len();
        cases.push(Case {
            x,
            w,
            b,
            eps,
            remove_mean: false,
            want,
            hard,
        });
    }
    report("RMSNorm, one thread per block", &cases, t0.elapsed(), t0);
}

/// The relative error of the computed r against 1/sqrt(V) for a row whose exact mean is 0
/// (RMSNorm, or a LayerNorm row whose elements sum to exactly 0), from double-double
/// pieces as in `r_error`: V = sum x^2 / n + eps, r^2 V - 1 = 2 E to first order (E below
/// 2^-45 here, its square negligible).
fn r_error_row(x: &[f32], eps: f32, r: f64) -> f64 {
    let n = x.len() as f64;
    let (mut hi, mut lo) = (0.0f64, 0.0f64);
    for &v in x {
        let (t, e) = two_sum(hi, v as f64 * v as f64); // the square is exact
        hi = t;
        lo += e;
    }
    let (ss_hi, ss_lo) = two_sum(hi, lo);
    let vh = ss_hi / n;
    let rem = (-vh).mul_add(n, ss_hi);
    let vl = (rem + ss_lo) / n + eps as f64;
    let ph = r * r;
    let pl = r.mul_add(r, -ph);
    (ph.mul_add(vh, -1.0) + ph * vl + pl * vh) / 2.0
}

/// The outputs of a row that are hard in `order` for `plant` (as `hard_in`, the statistics
/// replayed once).
fn hard_outputs(row: Row, order: Order, plant: Plant, want: &[u32]) -> Vec<usize> {
    let st = replay_stats(row.x, row.eps, row.remove_mean, order, None);
    let sth = replay_stats(row.x, row.eps, row.remove_mean, order, Some(plant));
    (0..row.x.len())
        .filter(|&i| {
            let (y, err) = replay_element(row.x[i], row.w[i], row.b[i], &st);
            let planted = match plant {
                Plant::Output => decided(y, err / 2.0),
                Plant::Variance | Plant::Mean => {
                    let (yh, errh) = replay_element(row.x[i], row.w[i], row.b[i], &sth);
                    decided(yh, errh)
                }
            };
            matches!((planted, decided(y, err)), (Some(v), None) if v.to_bits() != want[i])
        })
        .collect()
}

/// A row whose small squares are lost in `order`'s sum of squares, hard for the variance
/// bound at 1/2 there (`variance_bounds_matter_*` below). With L lanes (the CPU's 8) or
/// threads (T >= 2), n = L m + 1: x_0 = D = 1 + t 2^-23 (D^2 exact, at the bottom of its
/// binade; t from `rng`) and the m further elements of lane (thread) 0 of magnitude s, the
/// largest f32 whose square is below half an ulp h of D^2, so that lane 0's chain loses
/// every one of their squares (about m u ss). The other slots:
/// * RMSNorm: every lane l >= 1 holds m elements s_l whose squares add up to below h / g_l,
///   g_l the number of lanes that meet lane 0 together (1 in the CPU's order, where the
///   lanes are added one by one; T / (2 lowbit(l)) in the tree, where level k adds the
///   threads congruent to k mod 2k); so each lane (tree level) addition loses its whole
///   partner too, about u ss: ss is about A u ss too small, A the order's count (m + 7 on
///   the CPU, m + log2 T in the tree), and r about A u / 2 too large, past the halved
///   bound's 3 u + e_r' = (A + 29) / 4 u (first order) once A passes about 40.
/// * LayerNorm (m even): lane 0's smalls alternate +s, -s, the first 256 slots of the
///   other lanes hold -D/256 and the rest alternate +-D/4096 (not 0: a zero deviation's
///   output goes to the exact tier, which the kernel forms per output, O(n) each), so that
///   the elements sum to exactly 0 (every partial sum is exact: the mean is computed as 0
///   and the deviations are the elements); the balancing squares (D^2 / 256 and at most
///   n D^2 / 2^24) do not dominate ss. Only lane 0's m squares are lost (the lanes' sums
///   are not small): r about m u / 2 too large.
///
/// At one thread per block (L = 1, LayerNorm): x = D, m alternating +-s, then 8 elements
/// -D/8: one chain, m squares lost against D^2, ss = 9/8 D^2 exactly otherwise, A = n - 1.
/// eps is the largest f32 below half an ulp of ss / n (lost too). Returns (x, eps).
fn lost_squares_row(rng: &mut Lcg, remove_mean: bool, order: Order, m: usize) -> (Vec<f32>, f32) {
    let d = f32::from_bits(0x3F80_0000 + rng.below(1 << 16) as u32);
    let h = half_ulp(d as f64 * d as f64);
    let s = f32_below(h.sqrt());
    let small = |j: usize| {
        if remove_mean && j.is_multiple_of(2) {
            -s
        } else {
            s
        }
    };
    let x = match order {
        Order::Device(1) => {
            assert!(remove_mean && m.is_multiple_of(2));
            let mut x: Vec<f32> = (1..=m).map(small).collect();
            x.insert(0, d);
            x.extend([-d / 8.0; 8]);
            x
        }
        _ => {
            let lanes = match order {
                Order::Cpu => 8,
                Order::Device(t) => t,
            };
            assert!(!remove_mean || (m.is_multiple_of(2) && (lanes - 1) * m >= 256));
            let n = lanes * m + 1;
            let mut x = vec![0.0f32; n];
            x[0] = d;
            for j in 1..=m {
                x[j * lanes] = small(j);
            }
            let (mut balancing, mut filler) = (0, 0);
            for (i, v) in x.iter_mut().enumerate() {
                let l = i % lanes;
                if l == 0 {
                    continue;
                }
                if remove_mean {
                    if balancing < 256 {
                        *v = -d / 256.0;
                        balancing += 1;
                    } else {
                        *v = if filler % 2 == 0 { d } else { -d } / 4096.0;
                        filler += 1;
                    }
                } else {
                    let g = match order {
                        Order::Cpu => 1,
                        Order::Device(t) => t / (2 * (1 << l.trailing_zeros())),
                    };
                    // 1 - 2^-10 keeps the lane's own roundings below h / g.
                    *v = f32_below((h * (1.0 - 1.0 / 1024.0) / (g * m) as f64).sqrt());
                }
            }
            x
        }
    };
    let n = x.len();
    let st = replay_stats(&x, 0.0, remove_mean, order, None);
    assert_eq!(st.mu, 0.0, "the mean is computed as 0");
    if !remove_mean {
        // Every square but D^2 lost.
        assert_eq!(st.ss, d as f64 * d as f64);
    }
    let eps = f32_below(half_ulp(st.ss / n as f64));
    (x, eps)
}

/// Rows of `lost_squares_row` until `count` outputs are hard for the variance bound at 1/2
/// in `order` (at most `per_row` per row, among every fifth element), each checked against
/// MPFR as it is made.
fn build_lost(
    seed: u64,
    remove_mean: bool,
    order: Order,
    m: usize,
    (count, per_row): (usize, usize),
) -> Vec<Case> {
    let mut rng = Lcg(seed);
    let mut cases = Vec::new();
    let mut hard_total = 0;
    while hard_total < count {
        let (x, eps) = lost_squares_row(&mut rng, remove_mean, order, m);
        let n = x.len();
        let st = replay_stats(&x, eps, remove_mean, order, None);
        let er = r_error_row(&x, eps, st.r);
        let elems: Vec<usize> = (0..n).step_by(5).filter(|&i| x[i] != 0.0).collect();
        let (w, b, picked) = draw_weights(
            &mut rng,
            (&x, eps, remove_mean),
            order,
            Plant::Variance,
            er,
            (&elems, per_row.min(count - hard_total), true),
        );
        let want = mpfr_bits(&x, &w, &b, eps, remove_mean);
        let row = Row {
            x: &x,
            w: &w,
            b: &b,
            eps,
            remove_mean,
        };
        let hard = hard_outputs(row, order, Plant::Variance, &want);
        assert_eq!(
            hard, picked,
            "x0 = {:e}: the estimate and MPFR disagree",
            x[0]
        );
        assert!(
            !hard.is_empty(),
            "x0 = {:e}: r's error {:.1} u",
            x[0],
            er / U
        );
        println!(
            "  n = {n}, A = {}: r's error {:.1} u, {} hard",
            square_additions(n, order),
            er / U,
            hard.len()
        );
        hard_total += hard.len();
        cases.push(Case {
            x,
            w,
            b,
            eps,
            remove_mean,
            want,
            hard,
        });
    }
    cases
}

#[test]
fn variance_bounds_matter_in_layer_norm_on_the_cpu() {
    let t0 = std::time::Instant::now();
    let cases = build_lost(0x5eed_0231, true, Order::Cpu, 64, (48, 24));
    report(
        "LayerNorm, the CPU's order, variance bound",
        &cases,
        t0.elapsed(),
        t0,
    );
}

#[test]
fn variance_bounds_matter_in_rms_norm_on_the_cpu() {
    let t0 = std::time::Instant::now();
    let cases = build_lost(0x5eed_0331, false, Order::Cpu, 64, (48, 24));
    report(
        "RMSNorm, the CPU's order, variance bound",
        &cases,
        t0.elapsed(),
        t0,
    );
}

#[test]
fn variance_bounds_matter_in_layer_norm_at_one_thread_per_block() {
    let t0 = std::time::Instant::now();
    let cases = build_lost(0x5eed_0431, true, Order::Device(1), 128, (48, 24));
    report(
        "LayerNorm, one thread per block, variance bound",
        &cases,
        t0.elapsed(),
        t0,
    );
}

#[test]
fn variance_bounds_matter_in_rms_norm_at_32_threads_per_block() {
    let t0 = std::time::Instant::now();
    let cases = build_lost(0x5eed_0531, false, Order::Device(32), 48, (24, 24));
    let what = "RMSNorm, 32 threads, variance bound";
    report(what, &cases, t0.elapsed(), t0);
}

#[test]
fn variance_bounds_matter_in_layer_norm_at_32_threads_per_block() {
    let t0 = std::time::Instant::now();
    let cases = build_lost(0x5eed_0631, true, Order::Device(32), 64, (24, 24));
    let what = "LayerNorm, 32 threads, variance bound";
    report(what, &cases, t0.elapsed(), t0);
}

#[test]
fn variance_bounds_matter_in_rms_norm_at_256_threads_per_block() {
    let t0 = std::time::Instant::now();
    let cases = build_lost(0x5eed_0731, false, Order::Device(256), 48, (24, 24));
    let what = "RMSNorm, 256 threads, variance bound";
    report(what, &cases, t0.elapsed(), t0);
}

#[test]
fn variance_bounds_matter_in_layer_norm_at_256_threads_per_block() {
    let t0 = std::time::Instant::now();
    let cases = build_lost(0x5eed_0831, true, Order::Device(256), 64, (24, 24));
    let what = "LayerNorm, 256 threads, variance bound";
    report(what, &cases, t0.elapsed(), t0);
}

/// LayerNorm rows (f32, n = 17) hard for the mean's bound at 1/2 in every order (the CPU's
/// lanes and 256, 32 and 1 threads per block). Eight elements near the mean, 1 + c 2^-23
/// (c in 1..=4), eight near 9/8 that bring the sum to 17, and t = (16 j - 7) 2^-52 with
/// j = 8 mod 17: the exact sum S = 17 + (j - 7/16) 2^-48 lies 7/16 of an ulp below the
/// computed sx = 17 + j 2^-48 (every order's TwoSums are exact but the one that meets t, so
/// sx = fl(S) everywhere), and sx / 17 = 1 + (16 j / 17) 2^-52, 16 j = 9 mod 17, is rounded
/// up by 8/17 of an ulp: mu - mean = (7/17 + 8/17) 2^-52, about 1.76 u |mu|, against the
/// bound delta_mu = (u |sx| / 17 + u |mu|) (1 + 2^-10) + (second order), about 2 u, whose
/// half is about u. An element near the mean has a deviation d of a few 2^-23, so the
/// mean's error is about 2^-30 |d| and dominates the output's error: w is drawn for each
/// until an f32 midpoint falls between the halved interval and the exact output (b = 0).
/// With `negate` every element's sign is flipped.
fn mean_row(rng: &mut Lcg, negate: bool) -> Vec<f32> {
    let j = 17 * rng.below(1 << 14) + 8;
    let mut x = Vec::with_capacity(17);
    let mut c_sum = 0u32;
    for _ in 0..8 {
        let c = 1 + rng.below(4) as u32;
        c_sum += c;
        x.push(f32::from_bits(0x3F80_0000 + c));
    }
    // 9/8 = 1.125 eight times, the first less by the near elements' excess.
    x.push(f32::from_bits(0x3F90_0000 - c_sum));
    x.extend([1.125f32; 7]);
    let t = (16 * j - 7) as f64 * f64::from_bits(0x3CB0_0000_0000_0000); // 2^-52
    assert_eq!(t as f32 as f64, t);
    x.push(t as f32);
    if negate {
        x.iter_mut().for_each(|v| *v = -*v);
    }
    x
}

/// The mean's error mu - mean of a row, in f64: the exact sum in double-double (TwoSum;
/// the elements are f32, so hi + lo is exact here), then (17 mu - hi - lo) / n.
fn mean_error(x: &[f32], mu: f64) -> f64 {
    let (mut hi, mut lo) = (0.0f64, 0.0f64);
    for &v in x {
        let (t, e) = two_sum(hi, v as f64);
        hi = t;
        lo += e;
    }
    let n = x.len() as f64;
    (mu.mul_add(n, -hi) - lo) / n
}

#[test]
fn mean_bounds_matter_in_layer_norm() {
    const ORDERS: [Order; 4] = [
        Order::Cpu,
        Order::Device(256),
        Order::Device(32),
        Order::Device(1),
    ];
    let t0 = std::time::Instant::now();
    let mut rng = Lcg(0x5eed_0931);
    let eps = 1e-5f32;
    let mut cases = Vec::new();
    let mut hard_total = 0;
    while hard_total < 48 {
        let x = mean_row(&mut rng, cases.len() % 2 == 1);
        let n = x.len();
        // Each order's statistics, as the code is and with the mean's bound halved: the
        // same mean in every order (r may differ in its last bit: the squares' orders).
        let stats: Vec<(Stats, Stats)> = ORDERS
            .iter()
            .map(|&o| {
                let st = replay_stats(&x, eps, true, o, None);
                (st, replay_stats(&x, eps, true, o, Some(Plant::Mean)))
            })
            .collect();
        let mu = stats[0].0.mu;
        assert!(stats.iter().all(|(st, _)| st.mu == mu));
        let em = mean_error(&x, mu);
        // The construction: 15/17 2^-52 = 1.76 u |mu| (|mu| just above 1).
        assert_eq!(em.abs(), 15.0 / 17.0 * 2.0 * U);
        for (st, _) in &stats {
            assert!(em.abs() > st.delta_mu / 2.0 && em.abs() < st.delta_mu);
        }
        let (mut w, b) = (vec![1.0f32; n], vec![0.0f32; n]);
        let mut picked = Vec::new();
        for i in 0..8 {
            for _ in 0..20_000 {
                let wi = f32::from_bits(0x3F80_0000 + rng.below(1 << 23) as u32);
                let hard_everywhere = stats.iter().all(|(st, sth)| {
                    let (y, err) = replay_element(x[i], wi, 0.0, st);
                    let (_, errh) = replay_element(x[i], wi, 0.0, sth);
                    // The exact output to f64's precision around it: d w exactly as p + pe,
                    // x - mean = d + (mu - mean), r's own error (about 10 u) left out.
                    let d = x[i] as f64 - mu; // exact (Sterbenz)
                    let p = d * wi as f64;
                    let pe = d.mul_add(wi as f64, -p);
                    let y_exact = (p + (pe + em * wi as f64)) * st.r;
                    matches!((decided(y, errh), decided(y, err)),
                        (Some(v), None) if (y_exact as f32).to_bits() != v.to_bits())
                });
                if hard_everywhere {
                    w[i] = wi;
                    picked.push(i);
                    break;
                }
            }
        }
        let want = mpfr_bits(&x, &w, &b, eps, true);
        let row = Row {
            x: &x,
            w: &w,
            b: &b,
            eps,
            remove_mean: true,
        };
        for order in ORDERS {
            let hard = hard_outputs(row, order, Plant::Mean, &want);
            // The estimate picked them; MPFR confirms them in every order.
            assert_eq!(hard, picked, "{order:?}: the estimate and MPFR disagree");
        }
        hard_total += picked.len();
        cases.push(Case {
            x,
            w,
            b,
            eps,
            remove_mean: true,
            want,
            hard: picked,
        });
    }
    report("LayerNorm, the mean's bound", &cases, t0.elapsed(), t0);
}
