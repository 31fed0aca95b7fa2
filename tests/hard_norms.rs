//! The hardest inputs of the norms' output decision (issue 31): RMSNorm rows built so that
//! tier 1's output error exceeds half of its proven bound in the direction that misrounds,
//! run through the CPU norm and through the CUDA kernel on the emulated device, every
//! output checked against MPFR (`mpfr_oracle::norm::norm_row`).
//!
//! Construction (f32, eps > 0, n = 10). x_0 = 1 + t 2^-23 (x_0^2, exact in f64, at the
//! bottom of its binade), x_1..x_8 = s, the largest f32 whose square is below half an ulp
//! of x_0^2, x_9 = 0. In the CPU's order (element i into lane i mod 8, the lanes added in
//! order) each s^2 is lost whole: the computed sum of squares is x_0^2, the exact one
//! x_0^2 + 8 s^2, about 8 u below. eps is the largest f32 below half an ulp of ss / n, so
//! that ss / n + eps loses it too. r = 1/sqrt(V) is then about 4.3 u too large before its
//! own three roundings (/n, sqrt, 1/); x_0 (t from a seeded generator) is kept when
//! those push the error of r past 5.6 u (the double-double estimate below). Each output
//! z_i = x_i w_i r (x_i w_i exact) rounds once more; w_i is drawn until that rounding
//! adds to the error, and b_i = -round_f32(z_i) cancels z_i, so that y = z + b is about
//! 2^-25 |z| and the rounding test's own widening |y| 2^-51 is negligible. The proven
//! bound is (3 u + e_r) |z| with e_r about 9.5 u: half of it, 6.5 u |z|, is below the
//! error, so a halved output bound accepts the f32 value on the wrong side of a midpoint,
//! while the right bound sends the output to the exact tier.
//!
//! Each case asserts its own hardness: tier 1 replayed in f64 (the formulas of
//! `src/norm/cpu.rs`), the interval of half the bound rounds to one value that is not
//! MPFR's, the interval of the whole bound does not decide.
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

/// Tier 1 of RMSNorm on one row, replayed in f64 as `src/norm/cpu.rs` computes it: the sum
/// of squares in 8 lanes added in order, r = 1/sqrt(ss/n + eps) and e_r.
fn replay_stats(x: &[f32], eps: f32) -> (f64, f64) {
    let n = x.len() as f64;
    let mut lanes = [0.0f64; 8];
    for (i, v) in x.iter().enumerate() {
        lanes[i % 8] += (*v as f64) * (*v as f64);
    }
    let ss: f64 = lanes.iter().sum();
    let e_ss = ((n + 4.0) * U * ss) * SLACK;
    let v = ss / n + eps as f64;
    let e_v = (e_ss / n) / v + 2.0 * U;
    let r = 1.0 / v.sqrt();
    let e_r = (e_v * 0.5 + 2.0 * U) * SLACK;
    (r, e_r)
}

/// (y, the output's error bound) as `element_tier1` computes them.
fn replay_element(x: f32, w: f32, b: f32, r: f64, e_r: f64) -> (f64, f64) {
    let z = x as f64 * w as f64 * r;
    let y = z + b as f64;
    let err = (z.abs() * (3.0 * U + e_r) + U * y.abs()) * SLACK;
    (y, err)
}

/// `round_within_parts::<f32>`: the value the interval rounds to, if it rounds to one.
fn decided(y: f64, err: f64) -> Option<f32> {
    let d = err * f64::from_bits(0x3FF0_0000_0001_0000)
        + y.abs() * f64::from_bits(0x3CC0_0000_0000_0000);
    let (lo, hi) = ((y - d) as f32, (y + d) as f32);
    (lo.to_bits() == hi.to_bits()).then_some(lo)
}

/// The relative error of the computed r against 1/sqrt(V) for the row (x_0, 8 s, 0),
/// from double-double pieces: r^2 V - 1 = 2 E to first order.
fn r_error(x0: f32, s: f32, eps: f32, r: f64) -> f64 {
    let (x0, s) = (x0 as f64, s as f64);
    // V = (x0^2 + 8 s^2) / n + eps, as vh + vl.
    let ss_hi = x0 * x0;
    let ss_lo = 8.0 * s * s;
    let vh = ss_hi / N as f64;
    let rem = (-vh).mul_add(N as f64, ss_hi);
    let vl = (rem + ss_lo) / N as f64 + eps as f64;
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
    /// MPFR's outputs, as f32 bits.
    want: Vec<u32>,
    /// The elements whose halved bound misrounds.
    hard: Vec<usize>,
}

/// The hard rows, each checked against MPFR as it is made.
fn build(count: usize) -> Vec<Case> {
    let mut rng = Lcg(0x5eed_0031);
    let mut cases = Vec::new();
    let mut hard_total = 0;
    while hard_total < count {
        let x0 = f32::from_bits(0x3F80_0000 + rng.below(1 << 16) as u32);
        let s = f32_below(half_ulp(x0 as f64 * x0 as f64).sqrt());
        let mut x = vec![s; N];
        x[0] = x0;
        x[N - 1] = 0.0;
        let ss = x0 as f64 * x0 as f64;
        let eps = f32_below(half_ulp(ss / N as f64));
        let (r, e_r) = replay_stats(&x, eps);
        // Every s^2 and eps lost whole: the computed sum of squares is x0^2.
        assert_eq!(r, 1.0 / (ss / N as f64).sqrt());
        let er = r_error(x0, s, eps, r);
        if er < 5.6 * U {
            continue;
        }
        // Per element: w with a product rounding that adds to the error (in units of u,
        // relative to z), b cancelling z.
        let half_bound = (3.0 * U + e_r) * SLACK / 2.0;
        let mut w = vec![1.0f32; N];
        let mut b = vec![0.0f32; N];
        let mut picked = [false; N];
        for i in 0..N - 1 {
            for _ in 0..400 {
                let wi = f32::from_bits(0x3F80_0000 + rng.below(1 << 23) as u32);
                let m = x[i] as f64 * wi as f64; // exact
                let z = m * r;
                let e_mul = m.mul_add(r, -z); // m r - z, exact
                // z / z_exact - 1 = (1 + er)(1 - e_mul / (m r)) - 1.
                let total = er - e_mul / z;
                if total < half_bound * 1.02 {
                    continue;
                }
                let bi = -(z as f32);
                let (y, err) = replay_element(x[i], wi, bi, r, e_r);
                // The exact y, to f64's precision around y (|y| ~ 2^-25 |z|).
                let y_exact = y - total * z;
                let (Some(v_half), None) = (decided(y, err / 2.0), decided(y, err)) else {
                    continue;
                };
                if (y_exact as f32).to_bits() != v_half.to_bits() {
                    w[i] = wi;
                    b[i] = bi;
                    picked[i] = true;
                    break;
                }
            }
        }
        if !picked.iter().any(|&p| p) {
            continue;
        }
        let f = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<_>>();
        let want =
            mpfr_oracle::norm::norm_row(&f(&x), &f(&w), Some(&f(&b)), eps as f64, false, F32);
        let want: Vec<u32> = want.iter().map(|&v| (v as f32).to_bits()).collect();
        let (r, e_r) = replay_stats(&x, eps);
        let mut hard = Vec::new();
        for i in 0..N {
            let (y, err) = replay_element(x[i], w[i], b[i], r, e_r);
            if let (Some(v), None) = (decided(y, err / 2.0), decided(y, err))
                && v.to_bits() != want[i]
            {
                hard.push(i);
            }
        }
        // The estimate picked them; MPFR confirms them (a miss would be a wrong estimate).
        let expected: Vec<usize> = (0..N).filter(|&i| picked[i]).collect();
        assert_eq!(
            hard, expected,
            "x0 = {x0:e}: the estimate and MPFR disagree"
        );
        hard_total += hard.len();
        cases.push(Case {
            x,
            w,
            b,
            eps,
            want,
            hard,
        });
    }
    cases
}

fn tensor(v: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape, &Device::Cpu).unwrap()
}

#[test]
fn output_bounds_matter_in_rms_norm() {
    let t0 = std::time::Instant::now();
    let cases = build(48);
    let hard: usize = cases.iter().map(|c| c.hard.len()).sum();
    let built = t0.elapsed();
    // Each case asserts its hardness in `build`; here every output must be MPFR's.
    let rows = cases.len();
    let mut outputs = 0;
    let mut device_launches = 0;
    for (k, c) in cases.iter().enumerate() {
        let (xt, wt, bt) = (
            tensor(&c.x, &[1, N]),
            tensor(&c.w, &[N]),
            tensor(&c.b, &[N]),
        );
        let cpu = norm_with(&xt, &wt, Some(&bt), c.eps, false, false).unwrap();
        assert_eq!(bits(&cpu), c.want, "case {k}: CPU against MPFR");
        let ((xb, _), (wb, _), (bb, _)) = (upload(&xt), upload(&wt), upload(&bt));
        for threads in [256u32, 32, 1] {
            let mut plan =
                norm_plan(DType::F32, 1, N, (0, 0, Some(0)), false, c.eps, false).unwrap();
            plan.block = (threads, 1, 1);
            let mut out = Emu.alloc(DType::F32, N).unwrap();
            let mut slots = vec![
                Slot::In(&xb),
                Slot::In(&wb),
                Slot::Out(&mut out),
                Slot::In(&bb),
            ];
            Emu.launch(&plan, &mut slots).unwrap();
            assert_eq!(
                bits(&download(&out, (1, N))),
                c.want,
                "case {k}: device ({threads} threads) against MPFR"
            );
            device_launches += 1;
        }
        outputs += N;
    }
    println!(
        "{rows} rows, {hard} hard outputs (built and checked against MPFR in {built:?}), \
         {outputs} outputs on the CPU and {device_launches} device launches: 0 misrounded, \
         {:?} in all",
        t0.elapsed()
    );
}
