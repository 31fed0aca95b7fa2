//! The matmul against an independent exact oracle (MPFR: exact products, `mpfr_sum`, one
//! rounding into the format): every output of random and adversarial products, every
//! dtype, with and without a fused bias, through each tier alone and through every plan
//! knob (vector path, k-blocking, GEMV on or off). 0 misrounded outputs allowed.
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::{DType, Device, Tensor};
use candle_repro::math::VectorPath;
use candle_repro::matmul::{CpuConfig, matmul_with_config};
use float8::F8E4M3;
use half::{bf16, f16};
use mpfr_oracle::{BF16, F16, F32, Format};

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;

/// The default k-block length (the float route's runs and groups restart at each block).
const KC: usize = 640;

/// Input dtypes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum In {
    F32,
    Bf16,
    F16,
    F8,
}

/// A tensor of the values (rounded into the dtype by the `half`/`float8` crates).
fn tensor(v: &[f64], dt: In, shape: &[usize]) -> Tensor {
    let dev = &Device::Cpu;
    match dt {
        In::F32 => Tensor::from_vec(v.iter().map(|&x| x as f32).collect::<Vec<_>>(), shape, dev),
        In::Bf16 => Tensor::from_vec(
            v.iter().map(|&x| bf16::from_f64(x)).collect::<Vec<_>>(),
            shape,
            dev,
        ),
        In::F16 => Tensor::from_vec(
            v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>(),
            shape,
            dev,
        ),
        In::F8 => Tensor::from_vec(
            v.iter().map(|&x| F8E4M3::from_f64(x)).collect::<Vec<_>>(),
            shape,
            dev,
        ),
    }
    .unwrap()
}

/// The exact values of a tensor's elements (row-major), widened by the `half`/`float8`
/// crates, not by the code under test.
fn values(t: &Tensor) -> Vec<f64> {
    let t = t.flatten_all().unwrap();
    match t.dtype() {
        DType::F32 => t
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|&x| x as f64)
            .collect(),
        DType::BF16 => t
            .to_vec1::<bf16>()
            .unwrap()
            .iter()
            .map(|x| x.to_f64())
            .collect(),
        DType::F16 => t
            .to_vec1::<f16>()
            .unwrap()
            .iter()
            .map(|x| x.to_f64())
            .collect(),
        DType::F8E4M3 => t
            .to_vec1::<F8E4M3>()
            .unwrap()
            .iter()
            .map(|x| x.to_f64())
            .collect(),
        d => panic!("{d:?}"),
    }
}

fn format_of(d: DType) -> Format {
    match d {
        DType::F32 => F32,
        DType::BF16 => BF16,
        DType::F16 => F16,
        d => panic!("{d:?}"),
    }
}

/// The bits an oracle value has in dtype `d` (canonical NaN).
fn encode(v: f64, d: DType) -> u32 {
    match d {
        DType::F32 if v.is_nan() => 0x7FC0_0000,
        DType::F32 => (v as f32).to_bits(),
        DType::BF16 if v.is_nan() => 0x7FC0,
        DType::BF16 => bf16::from_f64(v).to_bits() as u32,
        DType::F16 if v.is_nan() => 0x7E00,
        DType::F16 => f16::from_f64(v).to_bits() as u32,
        d => panic!("{d:?}"),
    }
}

fn out_bits(t: &Tensor) -> Vec<u32> {
    let t = t.flatten_all().unwrap();
    match t.dtype() {
        DType::F32 => t
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect(),
        DType::BF16 => t
            .to_vec1::<bf16>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits() as u32)
            .collect(),
        DType::F16 => t
            .to_vec1::<f16>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits() as u32)
            .collect(),
        d => panic!("{d:?}"),
    }
}

/// Every configuration a product is checked under: the default plan, each vector path,
/// short k-blocks, no GEMV, and tiers 2 and 3 on their own; for bf16 and f16 inputs also
/// the GEMM's float route and its f64 route forced, on each path.
fn configs(narrow: bool) -> Vec<(String, CpuConfig)> {
    let base = CpuConfig::default();
    let mut v = vec![("default".to_string(), base)];
    if narrow {
        for path in [VectorPath::Baseline, VectorPath::Avx2, VectorPath::Avx512] {
            for (kc_max, route) in [(KC, Some(true)), (16, Some(true)), (KC, Some(false))] {
                v.push((
                    format!("{path:?}, kc {kc_max}, no GEMV, float route {route:?}"),
                    CpuConfig {
                        path,
                        kc_max,
                        gemv: false,
                        float_route: route,
                        ..base
                    },
                ));
            }
        }
    }
    for path in [VectorPath::Baseline, VectorPath::Avx2, VectorPath::Avx512] {
        v.push((
            format!("{path:?}, kc 16, no GEMV"),
            CpuConfig {
                path,
                kc_max: 16,
                gemv: false,
                ..base
            },
        ));
    }
    v.push((
        "tiers 2-3".into(),
        CpuConfig {
            start_tier: Some(2),
            ..base
        },
    ));
    v.push((
        "tier 3".into(),
        CpuConfig {
            start_tier: Some(3),
            ..base
        },
    ));
    v
}

/// Check every output of a (m, k) x (k, n) product (plus bias) against the oracle, under
/// every configuration; `b_t` passes b as the transpose of an (n, k) tensor (a weight).
/// Returns the number of outputs checked.
fn check(label: &str, a: &Tensor, b: &Tensor, bias: Option<&Tensor>, out: DType) -> usize {
    let (m, k) = a.dims2().unwrap();
    let n = b.dim(1).unwrap();
    let av = values(a);
    let bv = values(&b.contiguous().unwrap());
    let cv = bias.map(values);
    let fmt = format_of(out);
    let mut want = Vec::with_capacity(m * n);
    for i in 0..m {
        let row = &av[i * k..(i + 1) * k];
        for j in 0..n {
            let col: Vec<f64> = (0..k).map(|q| bv[q * n + j]).collect();
            let v = mpfr_oracle::dot(row, &col, cv.as_ref().map(|c| c[j]), fmt);
            want.push(encode(v, out));
        }
    }
    let narrow = matches!(a.dtype(), DType::BF16 | DType::F16);
    for (name, cfg) in configs(narrow) {
        let got = matmul_with_config(a, b, bias, Some(out), cfg).unwrap();
        assert_eq!(got.dtype(), out);
        let got = out_bits(&got);
        let bad: Vec<usize> = (0..m * n).filter(|&t| got[t] != want[t]).collect();
        assert!(
            bad.is_empty(),
            "{label} [{name}]: {} of {} outputs misrounded; first at ({}, {}): got {:#x}, want {:#x}",
            bad.len(),
            m * n,
            bad[0] / n,
            bad[0] % n,
            got[bad[0]],
            want[bad[0]]
        );
    }
    m * n
}

/// A random (m, k) x (k, n) problem from element generator `next` (row, column, index).
fn random_case(
    label: &str,
    dt: In,
    out: DType,
    (m, k, n): (usize, usize, usize),
    bias: bool,
    weight_layout: bool,
    next: &mut dyn FnMut(usize) -> f64,
) -> usize {
    let av: Vec<f64> = (0..m * k).map(&mut *next).collect();
    let a = tensor(&av, dt, &[m, k]);
    let b = if weight_layout {
        let wv: Vec<f64> = (0..n * k).map(&mut *next).collect();
        tensor(&wv, dt, &[n, k]).t().unwrap()
    } else {
        let bv: Vec<f64> = (0..k * n).map(&mut *next).collect();
        tensor(&bv, dt, &[k, n])
    };
    let c = bias.then(|| {
        let cv: Vec<f64> = (0..n).map(&mut *next).collect();
        match out {
            DType::F32 => tensor(&cv, In::F32, &[n]),
            DType::BF16 => tensor(&cv, In::Bf16, &[n]),
            DType::F16 => tensor(&cv, In::F16, &[n]),
            d => panic!("{d:?}"),
        }
    });
    check(label, &a, &b, c.as_ref(), out)
}

fn dtypes() -> Vec<(In, DType)> {
    vec![
        (In::F32, DType::F32),
        (In::Bf16, DType::BF16),
        (In::F16, DType::F16),
        (In::F8, DType::F32),
        (In::F8, DType::BF16),
    ]
}

#[test]
fn random_normal_entries_every_k() {
    let mut rng = Lcg(1);
    let mut total = 0;
    for (dt, out) in dtypes() {
        for k in [1usize, 2, 3, 7, 8, 9, 16, 17, 64, 255, 256, 257, 576, 1000] {
            for (m, n) in [(1, 9), (3, 5), (13, 11)] {
                let bias = k % 2 == 1;
                let wl = (k + m) % 3 != 0;
                total += random_case(
                    &format!("normal {dt:?}->{out:?} k={k} m={m} n={n}"),
                    dt,
                    out,
                    (m, k, n),
                    bias,
                    wl,
                    &mut |_| rng.normal(),
                );
            }
        }
    }
    println!("normal entries: {total} outputs, 0 misrounded");
}

#[test]
fn long_sums() {
    let mut rng = Lcg(2);
    let mut total = 0;
    for (dt, out) in dtypes() {
        total += random_case(
            &format!("k=8192 {dt:?}->{out:?}"),
            dt,
            out,
            (3, 8192, 4),
            true,
            true,
            &mut |_| rng.normal(),
        );
    }
    println!("k = 8192: {total} outputs, 0 misrounded");
}

#[test]
fn entries_spread_over_2_pow_40() {
    let mut rng = Lcg(3);
    let mut total = 0;
    for (dt, out) in dtypes() {
        // f16 and f8 cannot hold 2^+-40: their own full range instead.
        let spread = match dt {
            In::F32 | In::Bf16 => 40,
            In::F16 => 12,
            In::F8 => 6,
        };
        for k in [5usize, 64, 300] {
            total += random_case(
                &format!("spread {dt:?}->{out:?} k={k}"),
                dt,
                out,
                (7, k, 6),
                k == 64,
                k != 5,
                &mut |_| {
                    let e = rng.below(2 * spread + 1) as i32 - spread as i32;
                    rng.sign() * (1.0 + rng.unit()) * 2f64.powi(e)
                },
            );
        }
    }
    println!("spread entries: {total} outputs, 0 misrounded");
}

/// Rows x_1..x_h, -x_1..-x_h, t and columns y_1..y_h, y_1..y_h, s: every product of a row
/// and a column cancels to the tiny t s, plus tiny noise terms.
#[test]
fn sums_that_cancel_to_tiny_values() {
    let mut rng = Lcg(4);
    let mut total = 0;
    for (dt, out) in dtypes() {
        let (big, tiny) = match dt {
            In::F32 | In::Bf16 => (30, -60),
            In::F16 => (6, -10),
            In::F8 => (3, -4),
        };
        for h in [1usize, 8, 100] {
            let (m, n, k) = (4, 5, 2 * h + 3);
            let mut av = vec![0.0; m * k];
            let mut bv = vec![0.0; k * n];
            for i in 0..m {
                for q in 0..h {
                    let x = rng.sign()
                        * (1.0 + rng.unit())
                        * 2f64.powi((rng.below(big) as i32) - big as i32 / 2);
                    av[i * k + q] = x;
                    av[i * k + h + q] = -x;
                }
                for q in 2 * h..k {
                    av[i * k + q] = rng.sign() * (1.0 + rng.unit()) * 2f64.powi(tiny);
                }
            }
            for j in 0..n {
                for q in 0..h {
                    let y = rng.sign()
                        * (1.0 + rng.unit())
                        * 2f64.powi((rng.below(big) as i32) - big as i32 / 2);
                    bv[q * n + j] = y;
                    bv[(h + q) * n + j] = y;
                }
                for q in 2 * h..k {
                    bv[q * n + j] = rng.sign() * (1.0 + rng.unit()) * 2f64.powi(tiny / 2);
                }
            }
            // The pairs cancel only if both halves round to the same dtype values: they do,
            // x and -x round symmetrically.
            let a = tensor(&av, dt, &[m, k]);
            let b = tensor(&bv, dt, &[k, n]);
            total += check(&format!("cancel {dt:?}->{out:?} h={h}"), &a, &b, None, out);
        }
    }
    println!("cancelling sums: {total} outputs, 0 misrounded");
}

/// x + ulp(x)/2 (+- a tiny term): exact rounding midpoints, and points just off them.
#[test]
fn sums_at_and_near_rounding_midpoints() {
    let mut rng = Lcg(5);
    let mut total = 0;
    for (dt, out) in dtypes() {
        let out_bits_p = match out {
            DType::F32 => 24,
            DType::BF16 => 8,
            _ => 11,
        };
        // x in [1, 2) with an odd or even last bit of the output format, the half ulp, a
        // tiny term; then padding pairs that cancel.
        let (m, n) = (6, 6);
        let half = 2f64.powi(-out_bits_p);
        let tiny = match dt {
            In::F32 | In::Bf16 => 2f64.powi(-65),
            In::F16 => 2f64.powi(-20),
            In::F8 => 2f64.powi(-9),
        };
        // f8 holds only 4 significant bits: its x are the values it can hold.
        // Two tiny terms: t (times 1) and t * t, the second far below any window of the
        // top bits, so that only a sticky bit can carry it.
        let k = 10;
        let mut av = vec![0.0; m * k];
        let mut bv = vec![0.0; k * n];
        for i in 0..m {
            let steps = if dt == In::F8 {
                8
            } else {
                1 << (out_bits_p - 1).min(20)
            };
            let x = 1.0 + (rng.below(steps) as f64) / steps as f64;
            av[i * k] = x;
            av[i * k + 1] = half;
            av[i * k + 2] = [0.0, tiny, -tiny, 0.0, 0.0, 0.0][i % 6];
            av[i * k + 3] = [0.0, 0.0, 0.0, tiny, -tiny, 0.0][i % 6];
            for q in 4..k {
                av[i * k + q] = if q % 2 == 1 { 0.75 } else { -0.75 };
            }
        }
        for j in 0..n {
            bv[j] = 1.0;
            bv[n + j] = [1.0, 3.0, -1.0][j % 3];
            bv[2 * n + j] = 1.0;
            bv[3 * n + j] = tiny;
            for q in 4..k {
                bv[q * n + j] = 0.5;
            }
        }
        let a = tensor(&av, dt, &[m, k]);
        let b = tensor(&bv, dt, &[k, n]);
        total += check(&format!("midpoints {dt:?}->{out:?}"), &a, &b, None, out);
    }
    println!("midpoints: {total} outputs, 0 misrounded");
}

#[test]
fn subnormal_and_overflowing_results() {
    let mut rng = Lcg(6);
    let mut total = 0;
    for (dt, out) in dtypes() {
        // Exponents of the inputs putting products at the bottom and the top of the
        // output format's range.
        let (lo, hi) = match (dt, out) {
            (In::F32 | In::Bf16, _) => (-75, 63),
            (In::F16, _) => (-12, 7),
            (In::F8, _) => (-9, 8),
        };
        for e in [lo, hi] {
            total += random_case(
                &format!("range {dt:?}->{out:?} 2^{e}"),
                dt,
                out,
                (5, 33, 7),
                false,
                e == lo,
                &mut |_| rng.sign() * (1.0 + rng.unit()) * 2f64.powi(e + rng.below(3) as i32 - 1),
            );
        }
    }
    println!("subnormal and overflowing results: {total} outputs, 0 misrounded");
}

#[test]
fn nan_inf_and_signed_zeros() {
    let mut rng = Lcg(7);
    let mut total = 0;
    for (dt, out) in dtypes() {
        for k in [1usize, 4, 40] {
            total += random_case(
                &format!("specials {dt:?}->{out:?} k={k}"),
                dt,
                out,
                (9, k, 8),
                k == 4,
                k == 40,
                &mut |_| match rng.below(12) {
                    0 => f64::NAN,
                    1 if dt != In::F8 => f64::INFINITY,
                    2 if dt != In::F8 => f64::NEG_INFINITY,
                    3..=5 => 0.0,
                    6..=8 => -0.0,
                    _ => rng.normal(),
                },
            );
        }
    }
    // Rows and columns of signed zeros only: every sign combination of an exact zero sum.
    for (dt, out) in dtypes() {
        for k in [1usize, 3] {
            total += random_case(
                &format!("zeros {dt:?}->{out:?} k={k}"),
                dt,
                out,
                (8, k, 8),
                k == 3,
                false,
                &mut |_| if rng.below(2) == 0 { 0.0 } else { -0.0 },
            );
        }
    }
    println!("specials and zeros: {total} outputs, 0 misrounded");
}

#[test]
fn empty_inner_dimension_gives_the_bias_or_zero() {
    for (dt, out) in dtypes() {
        let a = tensor(&[], dt, &[3, 0]);
        let b = tensor(&[], dt, &[0, 4]);
        let n = check(&format!("k=0 {dt:?}"), &a, &b, None, out);
        assert_eq!(n, 12);
    }
}

/// Rows that the float route (f32 runs of 8 products, groups of 8 runs, into f64) sums
/// with its largest errors, all one way, next to a rounding midpoint of the output; rows
/// whose f32 runs overflow where the exact sum does not; bf16 products below f32's
/// normal range whose roundings add up past a midpoint. Each must come out correctly
/// rounded on every path (the float route forced, `configs`).
#[test]
fn float_route_hard_rows() {
    let mut total = 0;
    for (dt, out, h) in [
        (In::Bf16, DType::BF16, 2f64.powi(-8)),
        (In::F16, DType::F16, 2f64.powi(-11)),
    ] {
        let k = 128;
        let t = 2f64.powi(-24);
        // Row pairs (a, b) with a_q b_q the products, as given below.
        let mut rows: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
        for sign in [1.0, -1.0] {
            // Run 1: 1 + h - 2^-21 (exact in f32, its last bit even), then 5 products of
            // 2^-24, each a tie that rounds to even: lost. Runs 2..8 of the group: one
            // product 2^-24 each (a run sum of 2^-24), lost again where the group adds
            // it. The exact sum is the midpoint 1 + h plus 4 2^-24 (rounds away from 1);
            // the float route's sum is the midpoint less 8 2^-24 (rounds to 1), within
            // its bound 14 2^-24 |a| |b| of the midpoint but not within half of it.
            let mut a = vec![0.0; k];
            let mut b = vec![0.0; k];
            (a[0], b[0]) = (sign, 1.0);
            // h = a b with a and b powers of two.
            let he = h.log2() as i32;
            (a[1], b[1]) = (sign * 2f64.powi(he / 2), 2f64.powi(he - he / 2));
            (a[2], b[2]) = (-sign * 2f64.powi(-10), 2f64.powi(-11));
            for q in 3..8 {
                (a[q], b[q]) = (sign * 2f64.powi(-12), 2f64.powi(-12));
            }
            for run in 1..8 {
                (a[8 * run], b[8 * run]) = (sign * 2f64.powi(-12), 2f64.powi(-12));
            }
            let exact: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert_eq!(exact, sign * (1.0 + h + 4.0 * t));
            rows.push((a, b));
        }
        // f32 overflow: products +-2^140 in two runs of one group (+inf + -inf = NaN in
        // the float route), an exact sum of 1 (bf16 only: f16 has no such range).
        if dt == In::Bf16 {
            let mut a = vec![0.0; k];
            let mut b = vec![0.0; k];
            (a[0], b[0]) = (2f64.powi(70), 2f64.powi(70));
            (a[8], b[8]) = (-(2f64.powi(70)), 2f64.powi(70));
            (a[20], b[20]) = (1.0, 1.0);
            rows.push((a, b));
            // 2^140 and -2^140 in one run (+inf in f32: inf - 2^140 stays inf), the rest
            // small: an exact sum of 126 / 4.
            let mut a = vec![0.5; k];
            let mut b = vec![0.5; k];
            (a[3], b[3]) = (2f64.powi(70), 2f64.powi(70));
            (a[4], b[4]) = (-(2f64.powi(70)), 2f64.powi(70));
            rows.push((a, b));
            // Underflow: 64 products 2^-140 (1 + 2^-6 + 2^-14), each rounded down by
            // 2^-154 in f32, and -2^-140 - 2^-149: the f32 sums give 2^-134 - 2^-149
            // (rounds to 0 in bf16), the exact sum is 2^-134 + 2^-149 (rounds to 2^-133).
            let mut a = vec![0.0; k];
            let mut b = vec![0.0; k];
            let u = 2f64.powi(-70) * (1.0 + 2f64.powi(-7));
            for q in 0..64 {
                (a[q], b[q]) = (u, u);
            }
            (a[64], b[64]) = (-(2f64.powi(-70)), 2f64.powi(-70));
            (a[65], b[65]) = (-(2f64.powi(-75)), 2f64.powi(-74));
            rows.push((a, b));
        }
        // A: the rows; B: the columns (b of row i as column i), so that the diagonal
        // holds the designed sums and every other output mixes them.
        let m = rows.len();
        let av: Vec<f64> = rows.iter().flat_map(|(a, _)| a.clone()).collect();
        let bv: Vec<f64> = (0..k)
            .flat_map(|q| rows.iter().map(move |(_, b)| b[q]))
            .collect();
        let a = tensor(&av, dt, &[m, k]);
        let b = tensor(&bv, dt, &[k, m]);
        assert_eq!(values(&a), av, "the rows are exact in {dt:?}");
        assert_eq!(values(&b), bv, "the columns are exact in {dt:?}");
        total += check(&format!("float route hard rows {dt:?}"), &a, &b, None, out);
        // The same as a weight (B contiguous along k) with the rows repeated past the
        // GEMV limit.
        let a8 = Tensor::cat(&[&a, &a, &a], 0).unwrap();
        let w = b.t().unwrap().contiguous().unwrap();
        total += check(
            &format!("float route hard rows {dt:?}, weight layout"),
            &a8,
            &w.t().unwrap(),
            None,
            out,
        );
    }
    println!("float route hard rows: {total} outputs, 0 misrounded");
}
