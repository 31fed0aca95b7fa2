//! The hardest inputs of the norms' rounding decisions (issue 31): rows built so that
//! tier 1's output error exceeds half of one of its proven bounds in the direction that
//! misrounds, run through the CPU norm and through the CUDA kernel on the emulated device
//! (256, 32 and 1 threads per block), every output checked against MPFR
//! (`mpfr_oracle::norm::norm_row`). Three kinds (docs/VERIFICATION.md, "Hardest inputs:
//! norms"): RMSNorm rows hard for the output bound in the CPU's order (below), LayerNorm
//! rows hard for it in the device's tree order, and RMSNorm rows hard for the variance
//! bound in the device's one-thread order (at the tests that use them).
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
//! bound is (3 u + e_r) |z| with e_r about 9.5 u: half of it, 6.5 u |z|, is below the
//! error, so a halved output bound accepts the f32 value on the wrong side of a midpoint,
//! while the right bound sends the output to the exact tier.
//!
//! Each case asserts its own hardness: tier 1 replayed in f64 (the formulas of
//! `src/norm/cpu.rs`, in the order of the CPU or of a device block), the interval of half
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
/// lanes added in order; `src/norm/cpu.rs`), or a device block of T threads (each thread's
/// elements t, t + T, .. in order, then the shared-memory tree; `kernels/norm/norm.cu`).
#[derive(Clone, Copy, Debug)]
enum Order {
    Cpu,
    Device(usize),
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

/// Tier 1's statistics replayed in f64, step for step as `src/norm/cpu.rs` (`Order::Cpu`)
/// or `kernels/norm/norm.cu` (`Order::Device`) computes them: the compensated sum and the
/// mean's bound (LayerNorm), the sum of squared deviations, r = 1/sqrt(ss/n + eps) and its
/// bound e_r, with the variance bound e_ss multiplied by `e_ss_scale` (1 as the code is, 1/2
/// for its plant).
fn replay_stats(x: &[f32], eps: f32, remove_mean: bool, order: Order, e_ss_scale: f64) -> Stats {
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
        let e_sx = sx.abs() * f64::from_bits(0x3CB0_0000_0000_0000)
            + m * m * f64::from_bits(0x3950_0001_0000_0000) * abs;
        let mu = sx / nf;
        (mu, (e_sx / nf + 2.0 * U * mu.abs()) * SLACK)
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
    // stats_from_sums.
    let e_ss = ((nf + 4.0) * U * ss + 2.0 * nf * delta_mu * delta_mu) * SLACK * e_ss_scale;
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
#[derive(Clone, Copy, Debug)]
enum Plant {
    /// The output bound (`element_tier1`'s err) at 1/2.
    Output,
    /// The variance bound (`stats_from_sums`'s e_ss) at 1/2.
    Variance,
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
    let st = replay_stats(x, eps, remove_mean, order, 1.0);
    let (y, err) = replay_element(x[i], w[i], b[i], &st);
    let planted = match plant {
        Plant::Output => decided(y, err / 2.0),
        Plant::Variance => {
            let sth = replay_stats(x, eps, remove_mean, order, 0.5);
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

/// Draws w_i (and b_i = -round_f32(z_i)) for each i in `elems` until the output is hard
/// for `plant` in `order` by the double-double estimate of the row's r error `er` (RMSNorm,
/// x_i w_i exact); returns w and b (1 and 0 where nothing was drawn) and the elements
/// picked.
fn draw_weights(
    rng: &mut Lcg,
    (x, eps): (&[f32], f32),
    order: Order,
    plant: Plant,
    er: f64,
    elems: std::ops::Range<usize>,
) -> (Vec<f32>, Vec<f32>, Vec<usize>) {
    let (mut w, mut b) = (vec![1.0f32; x.len()], vec![0.0f32; x.len()]);
    let st = replay_stats(x, eps, false, order, 1.0);
    let stp = match plant {
        Plant::Output => st,
        Plant::Variance => replay_stats(x, eps, false, order, 0.5),
    };
    let mut picked = Vec::new();
    for i in elems {
        for _ in 0..400 {
            let wi = f32::from_bits(0x3F80_0000 + rng.below(1 << 23) as u32);
            let m = x[i] as f64 * wi as f64; // exact
            let z = m * st.r;
            let e_mul = m.mul_add(st.r, -z); // m r - z, exact
            // z / z_exact - 1 = (1 + er)(1 - e_mul / (m r)) - 1.
            let total = er - e_mul / z;
            let bi = -(z as f32);
            let (y, err) = replay_element(x[i], wi, bi, &st);
            let (yp, errp) = replay_element(x[i], wi, bi, &stp);
            let errp = match plant {
                Plant::Output => errp / 2.0,
                Plant::Variance => errp,
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
        let st = replay_stats(&x, eps, false, Order::Cpu, 1.0);
        // Every s^2 and eps lost whole: the computed sum of squares is x0^2.
        assert_eq!(st.r, 1.0 / (ss / N as f64).sqrt());
        let er = r_error(x0, s, N - 2, N, eps, st.r);
        if er < 5.6 * U {
            continue;
        }
        let (w, b, picked) =
            draw_weights(&mut rng, (&x, eps), Order::Cpu, Plant::Output, er, 0..N - 1);
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
/// 15 u with e_ss' = (n + 4) u ss / 2. (In the CPU's 8 lanes and in the tree at 32 or
/// 256 threads the small squares add up before they meet x0^2, so these rows are not hard
/// there; their outputs are still checked.)
#[test]
fn variance_bounds_matter_at_one_thread_per_block() {
    const M: usize = 32;
    let t0 = std::time::Instant::now();
    let mut rng = Lcg(0x5eed_0131);
    let mut cases = Vec::new();
    let mut hard_total = 0;
    while hard_total < 64 {
        let (x0, s, x, eps) = lost_row(&mut rng, M - 1, M);
        let st = replay_stats(&x, eps, false, Order::Device(1), 1.0);
        assert_eq!(st.ss, x0 as f64 * x0 as f64, "every s^2 lost in the chain");
        let er = r_error(x0, s, M - 1, M, eps, st.r);
        let (w, b, picked) = draw_weights(
            &mut rng,
            (&x, eps),
            Order::Device(1),
            Plant::Variance,
            er,
            0..M,
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
