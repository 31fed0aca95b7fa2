//! Products with quantized weights against independent oracles:
//! * the weights' exact values come from candle's own dequantization (an independent
//!   reading of the block layouts), made exact by splitting each block into parts whose
//!   f32 dequantization cannot round (the d part and the min part; Q8_K's f32 d into two
//!   halves of 12 bits) and adding the parts in f64, where the sum is exact;
//! * the products from MPFR (exact products, `mpfr_sum`, one rounding into the format).
//!
//! Every type, f32/bf16/f16 inputs, with and without a bias, random and adversarial blocks
//! (scales over the whole f16 range, subnormal included; extreme codes; activations over
//! 2^-40..2^40; cancellation to tiny sums; exact rounding ties and ties pushed by 2^-70;
//! NaN, inf, signed zeros), k from one block to 16384: 0 misrounded. Then invariance
//! (a row alone and inside 512 rows, threads, vector paths, GEMV on or off, tier 1 off)
//! and bad input.
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::quantized::{GgmlDType, QStorage, QTensor};
use candle_core::{DType, Device, Module, Tensor};
use candle_repro::math::VectorPath;
use candle_repro::matmul::CpuConfig;
use candle_repro::quantized::{QEmbedding, QLinear, QMatMul, blocks, qmatmul_with_config};
use half::{bf16, f16};
use mpfr_oracle::Format;
use std::borrow::Cow;

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;
#[path = "common/quant_oracle.rs"]
mod quant_oracle;
use quant_oracle::*;

const TYPES: [GgmlDType; 15] = [
    GgmlDType::F32,
    GgmlDType::F16,
    GgmlDType::BF16,
    GgmlDType::Q4_0,
    GgmlDType::Q4_1,
    GgmlDType::Q5_0,
    GgmlDType::Q5_1,
    GgmlDType::Q8_0,
    GgmlDType::Q8_1,
    GgmlDType::Q2K,
    GgmlDType::Q3K,
    GgmlDType::Q4K,
    GgmlDType::Q5K,
    GgmlDType::Q6K,
    GgmlDType::Q8K,
];

#[test]
fn decoded_weights_are_exact_and_round_to_candles() {
    let mut rng = Lcg(17);
    for ty in TYPES {
        let (len, _) = block_geometry(ty);
        let nb = 4096 / len;
        let mut rounded_by_ggml = 0usize;
        let mut total = 0usize;
        for trial in 0..8 {
            let bytes = random_blocks(ty, nb, &mut rng, trial % 2 == 0);
            let ours = blocks::dequantize_exact(ty, &bytes).unwrap();
            let exact = oracle_weights(ty, &bytes);
            let theirs = candle_f32(ty, &bytes);
            for (e, ((&o, &x), &c)) in ours.iter().zip(&exact).zip(&theirs).enumerate() {
                assert_eq!(
                    o.to_bits(),
                    x.to_bits(),
                    "{ty:?} weight {e}: ours {o:e}, exact {x:e}"
                );
                // candle's f32 arithmetic rounds the exact value once.
                assert_eq!((o as f32).to_bits(), c.to_bits(), "{ty:?} weight {e}");
                rounded_by_ggml += (c as f64 != o) as usize;
                total += 1;
            }
        }
        println!("{ty:?}: {rounded_by_ggml} of {total} random weights not exact in f32");
        let must_round = matches!(
            ty,
            GgmlDType::Q4_1 | GgmlDType::Q5_1 | GgmlDType::Q2K | GgmlDType::Q4K | GgmlDType::Q5K
        );
        if !must_round && ty != GgmlDType::Q8K {
            assert_eq!(rounded_by_ggml, 0, "{ty:?} is exact in f32");
        }
    }
}

#[test]
fn special_scales_decode_as_ieee_gives_the_reference_expression() {
    // Random bytes: every f16 pattern, inf and NaN included. candle's f32 evaluation of
    // the same expression gives the same specials, and our exact value rounded to f32
    // gives its bits (NaN: any NaN).
    let mut rng = Lcg(23);
    for ty in TYPES {
        let (len, size) = block_geometry(ty);
        let nb = 65536 / len;
        let bytes: Vec<u8> = (0..nb * size).map(|_| rng.below(256) as u8).collect();
        let ours = blocks::dequantize_exact(ty, &bytes).unwrap();
        let theirs = candle_f32(ty, &bytes);
        let mut specials = 0;
        for (e, (&o, &c)) in ours.iter().zip(&theirs).enumerate() {
            if c.is_nan() {
                assert!(o.is_nan(), "{ty:?} weight {e}: {o:e} where candle has NaN");
                specials += 1;
                continue;
            }
            specials += c.is_infinite() as usize;
            assert_eq!((o as f32).to_bits(), c.to_bits(), "{ty:?} weight {e}");
        }
        if !matches!(ty, GgmlDType::F16 | GgmlDType::BF16) {
            assert!(
                specials > 0 || ty == GgmlDType::F32,
                "{ty:?}: no special weights drawn"
            );
        }
    }
}

/// The configurations every product is run under: the default plan (the GEMV with its
/// integer first tier on the 256-weight types), the integer tier on every type, GEMV off
/// (the GEMM), the GEMV without the integer tier (the f64 tier 1), tier 1 off (tier 2,
/// then the exact sum) and the exact sum alone.
fn configs() -> Vec<CpuConfig> {
    let base = CpuConfig::default();
    vec![
        base,
        CpuConfig {
            int_tier: Some(true),
            int_tier_short_blocks: true,
            ..base
        },
        CpuConfig {
            gemv: false,
            kc_max: 192,
            ..base
        },
        CpuConfig {
            int_tier: Some(false),
            ..base
        },
        CpuConfig {
            start_tier: Some(2),
            ..base
        },
        CpuConfig {
            start_tier: Some(3),
            ..base
        },
    ]
}

/// Checks every output of x (m, k) times the weight (n, k) (+ bias) against MPFR, under
/// every configuration; returns the number of outputs checked.
#[allow(clippy::too_many_arguments)]
fn check_product(
    ty: GgmlDType,
    wbytes: &[u8],
    w_exact: &[f64],
    x: &[f64],
    bias: Option<&[f64]>,
    m: usize,
    n: usize,
    k: usize,
    dt: DType,
    what: &str,
) -> usize {
    let (xv, xt) = input(x, dt, (m, k));
    let q = QMatMul::from_qtensor(qtensor(ty, wbytes, n, k)).unwrap();
    let bias_t = bias.map(|b| input(b, dt, (1, n)));
    let bias_v = bias_t.as_ref().map(|(v, _)| v.clone());
    let bias_t = bias_t.map(|(_, t)| t.reshape(n).unwrap());
    let want: Vec<u32> = (0..m * n)
        .map(|o| {
            let (i, j) = (o / n, o % n);
            let v = mpfr_oracle::dot(
                &xv[i * k..(i + 1) * k],
                &w_exact[j * k..(j + 1) * k],
                bias_v.as_ref().map(|b| b[j]),
                fmt(dt),
            );
            expected_bits(v, dt)
        })
        .collect();
    // Each row alone (the GEMV, one row), then the whole x under every configuration.
    for i in 0..m {
        let y = qmatmul_with_config(
            &q,
            &xt.narrow(0, i, 1).unwrap(),
            bias_t.as_ref(),
            CpuConfig::default(),
        );
        let got = out_bits(&y.unwrap());
        for j in 0..n {
            assert_eq!(
                got[j],
                want[i * n + j],
                "{what}: {ty:?} {dt:?} k={k} output ({i}, {j}) of a row alone: {:#x}, exact {:#x}",
                got[j],
                want[i * n + j]
            );
        }
    }
    for cfg in configs() {
        let y = qmatmul_with_config(&q, &xt, bias_t.as_ref(), cfg).unwrap();
        assert_eq!(y.dtype(), dt);
        let got = out_bits(&y);
        for o in 0..m * n {
            assert_eq!(
                got[o],
                want[o],
                "{what}: {ty:?} {dt:?} k={k} output ({}, {}) under {cfg:?}: {:#x}, exact {:#x}",
                o / n,
                o % n,
                got[o],
                want[o]
            );
        }
    }
    m * n
}

/// The exact sum of x[i] w[i] for i != skip, rounded to f64 by MPFR.
fn partial_sum(x: &[f64], w: &[f64], skip: usize) -> f64 {
    let (mut a, mut b) = (x.to_vec(), w.to_vec());
    a[skip] = 0.0;
    b[skip] = 0.0;
    mpfr_oracle::dot(
        &a,
        &b,
        None,
        Format {
            precision: 53,
            emin: -1022,
            emax: 1023,
        },
    )
}

#[test]
fn random_products_are_correctly_rounded() {
    let mut rng = Lcg(101);
    let mut checked = 0;
    for ty in TYPES {
        let (len, _) = block_geometry(ty);
        let unit = len.max(32);
        for (trial, dt) in [DType::F32, DType::BF16, DType::F16]
            .into_iter()
            .enumerate()
        {
            // k: one block, three, and 4096.
            for (case, k) in [unit, 3 * unit, 4096].into_iter().enumerate() {
                let n = 5;
                let m = if case == 0 { 6 } else { 3 };
                let wbytes = random_blocks(ty, n * k / len, &mut rng, trial != 1);
                let w = oracle_weights(ty, &wbytes);
                let (lo, hi) = if dt == DType::F16 { (-6, 6) } else { (-40, 40) };
                let x: Vec<f64> = (0..m * k).map(|_| rng.value(false, lo, hi)).collect();
                let bias: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
                let with_bias = case != 1;
                checked += check_product(
                    ty,
                    &wbytes,
                    &w,
                    &x,
                    with_bias.then_some(&bias[..]),
                    m,
                    n,
                    k,
                    dt,
                    "random",
                );
            }
        }
    }
    println!("{checked} random outputs correctly rounded");
}

#[test]
fn long_rows_are_correctly_rounded() {
    let mut rng = Lcg(5);
    for ty in [
        GgmlDType::Q4K,
        GgmlDType::Q8_0,
        GgmlDType::Q6K,
        GgmlDType::Q4_1,
    ] {
        let (len, _) = block_geometry(ty);
        let k = 16384;
        let (m, n) = (2, 3);
        let wbytes = random_blocks(ty, n * k / len, &mut rng, true);
        let w = oracle_weights(ty, &wbytes);
        let x: Vec<f64> = (0..m * k).map(|_| rng.normal()).collect();
        check_product(ty, &wbytes, &w, &x, None, m, n, k, DType::F32, "k = 16384");
    }
}

/// Blocks whose scales are powers of two (2^-3..2^3; mins too), so that every weight is a
/// small dyadic number: sums of their products with powers of two land exactly on the
/// rounding midpoints a test wants.
fn dyadic_blocks(ty: GgmlDType, nblocks: usize, rng: &mut Lcg) -> Vec<u8> {
    let (_, size) = block_geometry(ty);
    let mut b = random_blocks(ty, nblocks, rng, true);
    let pow2 = |rng: &mut Lcg| rng.sign() * 2f64.powi(rng.below(7) as i32 - 3);
    match ty {
        GgmlDType::F32 | GgmlDType::F16 | GgmlDType::BF16 => {
            let w = if ty == GgmlDType::F32 { 4 } else { 2 };
            for v in b.chunks_exact_mut(w) {
                let x = (rng.below(33) as f64 - 16.0) * pow2(rng);
                match ty {
                    GgmlDType::F32 => v.copy_from_slice(&(x as f32).to_le_bytes()),
                    GgmlDType::F16 => v.copy_from_slice(&f16::from_f64(x).to_bits().to_le_bytes()),
                    _ => v.copy_from_slice(&bf16::from_f64(x).to_bits().to_le_bytes()),
                }
            }
        }
        GgmlDType::Q8K => {
            for blk in b.chunks_exact_mut(size) {
                blk[0..4].copy_from_slice(&(pow2(rng) as f32).to_le_bytes());
            }
        }
        _ => {
            let (d, dmin) = scale_offsets(ty);
            for blk in b.chunks_exact_mut(size) {
                blk[d..d + 2].copy_from_slice(&f16::from_f64(pow2(rng)).to_bits().to_le_bytes());
                if let Some(o) = dmin {
                    let v = f16::from_f64(pow2(rng)).to_bits();
                    blk[o..o + 2].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    b
}

/// The spacing of the dtype's values at |p| (p normal in the dtype).
fn ulp(p: f64, dt: DType) -> f64 {
    let bits = match dt {
        DType::F32 => 23,
        DType::BF16 => 7,
        _ => 10,
    };
    let e = ((p.abs().to_bits() >> 52) as i32) - 1023;
    2f64.powi(e - bits)
}

/// Builds an f32 row whose exact sum lies within about 2^-48 relative of a rounding
/// midpoint of f32 while an f64 sum in index order (or in lanes of index mod 32) loses
/// the term that decides it: +B = x_a w_a (about 2^30) at a = t - 32, -B + r at t + 32,
/// x_s w_s bringing the total T near 128, and between the two big terms the deciding one
/// x_t w_t, about half an f32 ulp of T, that puts T on the midpoint. An f64 sum accepted without its error bound misrounds about
/// half of these rows. Returns false when the weights do not allow it.
fn hidden_midpoint(row: &mut [f64], w: &[f64], nz: &[usize]) -> bool {
    let k = row.len();
    let candidates = nz
        .iter()
        .filter(|&&t| t >= 32 && t + 32 < k && w[t - 32] != 0.0 && w[t + 32] != 0.0);
    for &t in candidates {
        for &s in nz
            .iter()
            .filter(|&&s| s != t && s + 32 != t && s != t + 32)
            .take(8)
        {
            if hidden_midpoint_at(row, w, s, t) {
                return true;
            }
        }
    }
    false
}

/// [`hidden_midpoint`] with the terms at s and t (t +- 32).
fn hidden_midpoint_at(row: &mut [f64], w: &[f64], s: usize, t: usize) -> bool {
    let f = |v: f64| v as f32 as f64;
    let exact = |a: f64, b: f64| a.mul_add(b, -(a * b)) == 0.0;
    row.fill(0.0);
    row[t - 32] = f(2f64.powi(30) / w[t - 32]);
    let p1 = row[t - 32] * w[t - 32];
    row[t + 32] = f(-p1 / w[t + 32]);
    let p2 = row[t + 32] * w[t + 32];
    let r = p1 + p2;
    row[s] = f((128.0 - r) / w[s]);
    let ps = row[s] * w[s];
    let total = r + ps;
    let ok = exact(row[t - 32], w[t - 32])
        && exact(row[t + 32], w[t + 32])
        && exact(row[s], w[s])
        && r - p1 == p2
        && total - r == ps
        && total != 0.0;
    if !ok {
        row.fill(0.0);
        return false;
    }
    // The midpoint above |f32(total)|, and the term that brings the sum next to it.
    let near = f(total);
    let mid = near + ulp(near, DType::F32) / 2.0 * total.signum();
    row[t] = f((mid - total) / w[t]);
    exact(row[t], w[t])
}

#[test]
fn cancellations_and_rounding_ties_are_correctly_rounded() {
    // Rows whose exact sum cancels to a tiny residue; rows whose exact sum is a rounding
    // tie of the output format (x_s w_s = p, a value of the dtype, and x_t w_t = half its
    // ulp, both exact); and ties pushed either way by one more term, far below the ulp.
    let mut rng = Lcg(77);
    let mut ties = 0;
    let mut hidden = 0;
    for ty in TYPES {
        let (len, _) = block_geometry(ty);
        let k = len.max(32) * 4;
        let n = 4;
        for dt in [DType::F32, DType::BF16, DType::F16] {
            let m = 14;
            let wbytes = dyadic_blocks(ty, n * k / len, &mut rng);
            let w = oracle_weights(ty, &wbytes);
            let mut x = vec![0f64; m * k];
            for i in 0..m {
                let j = i % n;
                let wr = &w[j * k..(j + 1) * k];
                let row = &mut x[i * k..(i + 1) * k];
                let nz: Vec<usize> = (0..k).filter(|&q| wr[q] != 0.0).collect();
                if nz.len() < 3 {
                    continue;
                }
                if i >= 8 {
                    if dt == DType::F32 && hidden_midpoint(row, wr, &nz) {
                        hidden += 1;
                    }
                    continue;
                }
                if i < 2 {
                    // Cancellation: random terms, then x_t undoes their sum.
                    let t = nz[nz.len() / 2];
                    for v in row.iter_mut() {
                        *v = into_dtype(rng.normal(), dt);
                    }
                    let rest = partial_sum(row, wr, t);
                    row[t] = into_dtype(-rest / wr[t], dt);
                    continue;
                }
                let s = nz[0];
                let pow2 = |v: f64| v.abs().log2().fract() == 0.0;
                let Some(&t) = nz.iter().find(|&&q| q != s && pow2(wr[q])) else {
                    continue;
                };
                let Some(&u) = nz.iter().rev().find(|&&q| q != s && q != t) else {
                    continue;
                };
                // x_s a power of two making p = x_s w_s near 1: exact.
                row[s] = 2f64.powi(-(wr[s].abs().log2().floor() as i32));
                let p = row[s] * wr[s];
                if into_dtype(p, dt) != p {
                    continue;
                }
                let half = ulp(p, dt) / 2.0 * p.signum();
                let xt = into_dtype(half / wr[t], dt);
                if xt * wr[t] != half {
                    continue;
                }
                row[t] = xt;
                ties += 1;
                if i >= 5 {
                    // Push the tie by a term far below the ulp (either sign).
                    let tiny = half
                        * if dt == DType::F16 {
                            2f64.powi(-12)
                        } else {
                            2f64.powi(-40)
                        };
                    row[u] = into_dtype(rng.sign() * tiny / wr[u], dt);
                }
            }
            check_product(ty, &wbytes, &w, &x, None, m, n, k, dt, "cancel/tie");
        }
        // Cancellation over weights with scales anywhere in the f16 range, where the
        // products x w need more than f64's 53 bits: a compensated sum that drops their
        // low parts is wrong by far more than its bound.
        let m = 4;
        let wbytes = random_blocks(ty, n * k / len, &mut rng, false);
        let w = oracle_weights(ty, &wbytes);
        let mut x = vec![0f64; m * k];
        for i in 0..m {
            let wr = &w[(i % n) * k..(i % n + 1) * k];
            let row = &mut x[i * k..(i + 1) * k];
            let Some(t) = (0..k)
                .rev()
                .find(|&q| wr[q].is_finite() && wr[q].abs() > 1e-30)
            else {
                continue;
            };
            // x proportional to |w| with random signs: then |x| |w| = sum |x w|, and
            // the bounds are as tight as Cauchy-Schwarz allows.
            let scale = 1.0
                / wr.iter()
                    .filter(|v| v.is_finite())
                    .fold(1e-30f64, |a, &b| a.max(b.abs()));
            for (v, &wv) in row.iter_mut().zip(wr) {
                *v = if wv.is_finite() {
                    (rng.sign() * wv.abs() * scale) as f32 as f64
                } else {
                    0.0
                };
            }
            // Cancel twice: x_t takes out the sum to f32 precision, x_u what is left.
            let rest = partial_sum(row, wr, t);
            row[t] = (-rest / wr[t]) as f32 as f64;
            let Some(u) = (0..t)
                .rev()
                .find(|&q| wr[q].is_finite() && wr[q].abs() > 1e-30)
            else {
                continue;
            };
            let rest = partial_sum(row, wr, u);
            row[u] = (-rest / wr[u]) as f32 as f64;
        }
        check_product(
            ty,
            &wbytes,
            &w,
            &x,
            None,
            m,
            n,
            k,
            DType::F32,
            "wide cancel",
        );
    }
    println!("{ties} exact ties built, {hidden} near-midpoints behind a cancellation");
    assert!(ties >= 100, "only {ties} ties built");
    assert!(hidden >= 40, "only {hidden} hidden near-midpoints built");
}

#[test]
fn special_values_are_ieee_and_nan_is_canonical() {
    let mut rng = Lcg(31);
    for ty in TYPES {
        let (len, size) = block_geometry(ty);
        let k = len.max(32) * 2;
        let n = 6;
        for dt in [DType::F32, DType::BF16] {
            let mut wbytes = random_blocks(ty, n * k / len, &mut rng, true);
            // Row 1: all-zero bytes (zero scales); row 2: one block with an inf scale;
            // row 3: a NaN scale.
            let rb = k / len * size;
            wbytes[rb..2 * rb].fill(0);
            let (d, _) = scale_offsets(ty);
            let put = |bytes: &mut [u8], at: usize, inf: bool| match ty {
                GgmlDType::Q8K | GgmlDType::F32 => {
                    let v = if inf { f32::INFINITY } else { f32::NAN };
                    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes())
                }
                GgmlDType::BF16 => {
                    let v: u16 = if inf { 0x7F80 } else { 0x7FC1 };
                    bytes[at..at + 2].copy_from_slice(&v.to_le_bytes())
                }
                _ => {
                    let v: u16 = if inf { 0x7C00 } else { 0x7E01 };
                    bytes[at..at + 2].copy_from_slice(&v.to_le_bytes())
                }
            };
            put(&mut wbytes, 2 * rb + d, true);
            put(&mut wbytes, 3 * rb + d, false);
            // The exact weights: candle's values for the special blocks (inf, NaN, and the
            // finite weights of those blocks are exact in f32 for these scales or equal
            // to ours), the split oracle elsewhere.
            let mut w = oracle_weights(ty, &{
                let mut b = wbytes.clone();
                b[2 * rb..4 * rb].fill(0);
                b
            });
            let special = blocks::dequantize_exact(ty, &wbytes[2 * rb..4 * rb]).unwrap();
            let theirs = candle_f32(ty, &wbytes[2 * rb..4 * rb]);
            for (e, (&o, &c)) in special.iter().zip(&theirs).enumerate() {
                assert!(o.is_nan() == c.is_nan() && (o.is_nan() || o as f32 == c));
                w[2 * k + e] = o;
            }
            // x rows: normal; with an inf; with a NaN; all +0; all -0; -0 against row 1.
            let m = 5;
            let mut x: Vec<f64> = (0..m * k).map(|_| rng.normal()).collect();
            x[k + 3] = f64::INFINITY;
            x[2 * k + 5] = f64::NAN;
            x[3 * k..4 * k].fill(0.0);
            x[4 * k..5 * k].fill(-0.0);
            check_product(ty, &wbytes, &w, &x, None, m, n, k, dt, "specials");
        }
    }
}

#[test]
fn a_row_alone_equals_the_row_in_a_batch_on_every_plan() {
    let mut rng = Lcg(9);
    let k = 1024;
    let n = 96;
    let m = 512;
    let paths = VectorPath::available();
    for ty in TYPES {
        let (len, _) = block_geometry(ty);
        let wbytes = random_blocks(ty, n * k / len, &mut rng, true);
        let q = QMatMul::from_qtensor(qtensor(ty, &wbytes, n, k)).unwrap();
        for dt in [DType::F32, DType::BF16] {
            let x: Vec<f64> = (0..m * k).map(|_| rng.normal()).collect();
            let (_, xt) = input(&x, dt, (m, k));
            let all = out_bits(&q.forward(&xt).unwrap());
            for (r, cfg) in [5usize, 200, 511].into_iter().zip([
                CpuConfig::default(),
                CpuConfig {
                    gemv: false,
                    ..CpuConfig::default()
                },
                CpuConfig {
                    start_tier: Some(3),
                    ..CpuConfig::default()
                },
            ]) {
                for &path in &paths {
                    let cfg = CpuConfig { path, ..cfg };
                    let row = xt.narrow(0, r, 1).unwrap();
                    let alone = out_bits(&qmatmul_with_config(&q, &row, None, cfg).unwrap());
                    assert_eq!(
                        alone[..],
                        all[r * n..(r + 1) * n],
                        "{ty:?} {dt:?} row {r} {cfg:?}"
                    );
                    // Four rows (the widest GEMV) and the whole batch on this path.
                    let four = out_bits(
                        &qmatmul_with_config(&q, &xt.narrow(0, r.min(508), 4).unwrap(), None, cfg)
                            .unwrap(),
                    );
                    let at = r.min(508) * n;
                    assert_eq!(
                        four[..],
                        all[at..at + 4 * n],
                        "{ty:?} {dt:?} 4 rows {cfg:?}"
                    );
                }
            }
            let whole = out_bits(
                &qmatmul_with_config(
                    &q,
                    &xt,
                    None,
                    CpuConfig {
                        path: VectorPath::Baseline,
                        kc_max: 100,
                        ..CpuConfig::default()
                    },
                )
                .unwrap(),
            );
            assert_eq!(whole, all, "{ty:?} {dt:?} baseline, k-blocked");
            // One thread.
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            let one = pool.install(|| out_bits(&q.forward(&xt).unwrap()));
            assert_eq!(one, all, "{ty:?} {dt:?} one thread");
        }
    }
}

#[test]
fn linear_and_embedding() {
    let dev = &Device::Cpu;
    let w = Tensor::randn(0f32, 1., (40, 64), dev).unwrap();
    let qt = QTensor::quantize(&w, GgmlDType::Q5K).err();
    // 64 is not a multiple of 256: candle refuses to quantize it (and so would we).
    assert!(qt.is_some());
    let qt = QTensor::quantize(&w, GgmlDType::Q5_1).unwrap();
    let bytes = qt.data().unwrap().to_vec();
    let exact = blocks::dequantize_exact(GgmlDType::Q5_1, &bytes).unwrap();
    let q = QMatMul::from_qtensor(qt).unwrap();
    let bias = Tensor::randn(0f32, 1., 40, dev).unwrap();
    let x = Tensor::randn(0f32, 1., (2, 3, 64), dev).unwrap();
    let y = QLinear::new(q.clone(), Some(bias.clone()))
        .forward(&x)
        .unwrap();
    assert_eq!(y.dims(), [2, 3, 40]);
    let xv: Vec<f64> = x
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap()
        .iter()
        .map(|&v| v as f64)
        .collect();
    let bv: Vec<f32> = bias.to_vec1().unwrap();
    let yv: Vec<f32> = y.flatten_all().unwrap().to_vec1().unwrap();
    for (o, &got) in yv.iter().enumerate() {
        let (i, j) = (o / 40, o % 40);
        let want = mpfr_oracle::dot(
            &xv[i * 64..(i + 1) * 64],
            &exact[j * 64..(j + 1) * 64],
            Some(bv[j] as f64),
            mpfr_oracle::F32,
        );
        assert_eq!(got.to_bits(), (want as f32).to_bits(), "output {o}");
    }
    // A strided input gives the contiguous input's bits.
    let xt = x.transpose(0, 1).unwrap();
    let yt = q.forward(&xt).unwrap();
    let yc = q.forward(&xt.contiguous().unwrap()).unwrap();
    assert_eq!(out_bits(&yt), out_bits(&yc));
    // Embedding: each row's exact values rounded once to the dtype.
    for dt in [DType::F32, DType::BF16, DType::F16] {
        let e = QEmbedding::new(&q, dt)
            .forward(&Tensor::new(&[7u32, 0, 39], dev).unwrap())
            .unwrap();
        assert_eq!(e.dims(), [3, 64]);
        let got = out_bits(&e);
        for (t, &id) in [7usize, 0, 39].iter().enumerate() {
            for c in 0..64 {
                assert_eq!(got[t * 64 + c], expected_bits(exact[id * 64 + c], dt));
            }
        }
    }
}

#[test]
fn bad_input_is_an_error() {
    let dev = &Device::Cpu;
    let w = QTensor::quantize(
        &Tensor::randn(0f32, 1., (8, 256), dev).unwrap(),
        GgmlDType::Q4K,
    )
    .unwrap();
    let bytes = w.data().unwrap().to_vec();
    let q = QMatMul::from_qtensor(w).unwrap();
    let err = |r: candle_core::Result<Tensor>| r.unwrap_err().to_string();
    // Wrong k, wrong dtype, scalar input, bias of the wrong shape.
    assert!(
        err(q.forward(&Tensor::zeros((2, 128), DType::F32, dev).unwrap()))
            .contains("shape mismatch")
    );
    assert!(
        err(q.forward(&Tensor::zeros((2, 256), DType::U32, dev).unwrap()))
            .contains("unsupported dtype")
    );
    assert!(err(q.forward(&Tensor::new(1f32, dev).unwrap())).contains("scalar"));
    let bad_bias = Tensor::zeros(7, DType::F32, dev).unwrap();
    assert!(
        err(q.forward_with_bias(
            &Tensor::zeros((1, 256), DType::F32, dev).unwrap(),
            Some(&bad_bias)
        ))
        .contains("bias")
    );
    // A truncated tensor: a storage of 7 rows' bytes under a shape of 8 rows.
    let short = QTensor::new(
        QStorage::from_data(Cow::Borrowed(&bytes[..7 * 144]), dev, GgmlDType::Q4K).unwrap(),
        (8, 256),
    )
    .unwrap();
    let e = QMatMul::from_qtensor(short).unwrap_err().to_string();
    assert!(e.contains("bytes, expected"), "{e}");
    // A weight that is not (out, in).
    let three = QTensor::new(
        QStorage::from_data(Cow::Borrowed(&bytes[..]), dev, GgmlDType::Q4K).unwrap(),
        (2, 4, 256),
    )
    .unwrap();
    assert!(
        QMatMul::from_qtensor(three)
            .unwrap_err()
            .to_string()
            .contains("(out, in)")
    );
    // Partial blocks.
    assert!(blocks::dequantize_exact(GgmlDType::Q6K, &bytes[..100]).is_err());
    // An id outside the table.
    let e = QEmbedding::new(&q, DType::F32).forward(&Tensor::new(&[8u32], dev).unwrap());
    assert!(e.unwrap_err().to_string().contains("outside"));
}

#[test]
fn random_bytes_never_panic_and_nan_outputs_are_canonical() {
    // Fuzz: any bytes are blocks (every pattern decodes); products over them give finite
    // values, infinities or the canonical NaN, never a panic.
    let mut rng = Lcg(4242);
    for ty in TYPES {
        let (len, size) = block_geometry(ty);
        for _ in 0..20 {
            let k = len.max(1) * (1 + rng.below(4) as usize) * if len == 1 { 32 } else { 1 };
            let n = 1 + rng.below(9) as usize;
            let bytes: Vec<u8> = (0..n * k / len * size)
                .map(|_| rng.below(256) as u8)
                .collect();
            let q = QMatMul::from_qtensor(qtensor(ty, &bytes, n, k)).unwrap();
            let m = 1 + rng.below(7) as usize;
            let x = Tensor::randn(0f32, 1., (m, k), &Device::Cpu).unwrap();
            let y = q
                .forward(&x)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap();
            for v in y {
                assert!(
                    !v.is_nan() || v.to_bits() == 0x7FC0_0000,
                    "{ty:?}: NaN {:#x}",
                    v.to_bits()
                );
            }
        }
    }
}
