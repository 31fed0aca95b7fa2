//! The integer first tier of the quantized GEMV (`candle_repro::quantized::int_tier`):
//! * its integer scales (and codes) equal the block decoder's a and c (and q), bit for bit, on random and
//!   wild blocks of every type;
//! * its kernels (scalar, AVX2 `vpmaddwd`, AVX-512 VNNI `vpdpwssd`, each where the CPU
//!   has it) give the exact block sums on extreme slices and codes (the i32 lanes' limits);
//! * products through it on each vector path forced equal MPFR's exact sums rounded once:
//!   every quantized type, f32/bf16/f16 x, random x, x spread over 2^-40..2^40 inside one
//!   block (the tail the slices leave), cancelling rows, NaN/inf rows, a built row whose
//!   rounding only the tail decides;
//! * on typical data it decides nearly every output itself (it is not silently deferring
//!   everything to the f64 tier).
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::DType;
use candle_core::quantized::GgmlDType;
use candle_repro::math::VectorPath;
use candle_repro::matmul::CpuConfig;
use candle_repro::quantized::int_tier::{IntPath, block_sums, block_sums_32x8, check_scales};
use candle_repro::quantized::{QMatMul, int_tier_decided, qmatmul_with_config};

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;
#[path = "common/quant_oracle.rs"]
mod quant_oracle;
use quant_oracle::*;

const QTYPES: [GgmlDType; 12] = [
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

const DTYPES: [DType; 3] = [DType::F32, DType::BF16, DType::F16];

/// The vector paths this CPU runs (each maps to an integer kernel: `IntPath::of`).
fn paths() -> Vec<VectorPath> {
    VectorPath::available()
}

#[test]
fn integer_scales_equal_the_decoders() {
    let mut rng = Lcg(3);
    for ty in QTYPES {
        let (len, size) = block_geometry(ty);
        let nb = 8192 / len;
        let mut checked = 0;
        for trial in 0..6 {
            let bytes = if trial < 4 {
                random_blocks(ty, nb, &mut rng, trial % 2 == 0)
            } else {
                (0..nb * size).map(|_| rng.below(256) as u8).collect()
            };
            checked += check_scales(ty, &bytes).unwrap_or_else(|e| panic!("{ty:?}: {e}"));
        }
        assert!(
            checked > nb,
            "{ty:?}: only {checked} blocks with finite scales"
        );
    }
}

#[test]
fn kernels_give_the_exact_block_sums_at_the_lane_limits() {
    let mut rng = Lcg(11);
    let kernels = IntPath::available();
    println!("integer kernels on this CPU: {kernels:?}");
    for len in [32usize, 256] {
        for s in [2usize, 3] {
            for case in 0..40 {
                // Codes up to |sc q| = 2^12 (the largest of any type), slices up to
                // 2^15 - 1; the extreme cases put every product at its largest, one sign.
                let (cq, x): (Vec<i16>, Vec<i16>) = match case {
                    0 => (vec![-4096; len], vec![-32767; s * len]),
                    1 => (vec![4096; len], vec![-32767; s * len]),
                    2 => (vec![-4096; len], vec![32767; s * len]),
                    3 => (
                        (0..len)
                            .map(|t| if t % 2 == 0 { 4096 } else { -4096 })
                            .collect(),
                        (0..s * len)
                            .map(|t| if t % 2 == 0 { 32767 } else { -32767 })
                            .collect(),
                    ),
                    _ => (
                        (0..len).map(|_| rng.below(8193) as i16 - 4096).collect(),
                        (0..s * len)
                            .map(|_| rng.below(65535) as i16 - 32767)
                            .collect(),
                    ),
                };
                let want: Vec<i64> = (0..s)
                    .map(|i| (0..len).map(|t| x[i * len + t] as i64 * cq[t] as i64).sum())
                    .collect();
                for &k in &kernels {
                    let got = block_sums(k, len, s, &cq, &x);
                    assert_eq!(got, want, "{k:?} len {len} s {s} case {case}");
                }
            }
        }
    }
    // Eight blocks of 32 at a time (the kernels of the 32-weight types, whose codes have
    // no sub-scale: |cq| <= 128).
    for s in [2usize, 3] {
        for case in 0..40 {
            let (cq, x): (Vec<i16>, Vec<i16>) = match case {
                0 => (vec![-128; 256], vec![-32767; 256 * s]),
                1 => (vec![128; 256], vec![-32767; 256 * s]),
                _ => (
                    (0..256).map(|_| rng.below(257) as i16 - 128).collect(),
                    (0..256 * s)
                        .map(|_| rng.below(65535) as i16 - 32767)
                        .collect(),
                ),
            };
            let want: Vec<i64> = (0..s * 8)
                .map(|ib| {
                    let (i, b) = (ib / 8, ib % 8);
                    (0..32)
                        .map(|t| x[(b * s + i) * 32 + t] as i64 * cq[32 * b + t] as i64)
                        .sum()
                })
                .collect();
            for &k in &kernels {
                let got = block_sums_32x8(k, s, &cq, &x);
                assert_eq!(got, want, "{k:?} 8 blocks of 32, s {s} case {case}");
            }
        }
    }
}

/// The exact outputs (as dtype bits) of x (m, k) times the weight (n, k).
fn oracle(x: &[f64], w: &[f64], m: usize, n: usize, k: usize, dt: DType) -> Vec<u32> {
    (0..m * n)
        .map(|o| {
            let (i, j) = (o / n, o % n);
            let v = mpfr_oracle::dot(
                &x[i * k..(i + 1) * k],
                &w[j * k..(j + 1) * k],
                None,
                fmt(dt),
            );
            expected_bits(v, dt)
        })
        .collect()
}

/// x (m, k) times the weight on every vector path forced: each equals the oracle.
#[allow(clippy::too_many_arguments)]
fn check_paths(
    ty: GgmlDType,
    q: &QMatMul,
    w: &[f64],
    x: &[f64],
    m: usize,
    n: usize,
    k: usize,
    dt: DType,
    what: &str,
) {
    let (xv, xt) = input(x, dt, (m, k));
    let want = oracle(&xv, w, m, n, k, dt);
    for path in paths() {
        let cfg = CpuConfig {
            path,
            int_tier_short_blocks: true,
            ..CpuConfig::default()
        };
        let got = out_bits(&qmatmul_with_config(q, &xt, None, cfg).unwrap());
        for o in 0..m * n {
            assert_eq!(
                got[o],
                want[o],
                "{what}: {ty:?} {dt:?} k={k} output ({}, {}) on {path:?}: {:#x}, exact {:#x}",
                o / n,
                o % n,
                got[o],
                want[o]
            );
        }
    }
}

#[test]
fn products_on_every_path_are_correctly_rounded() {
    let mut rng = Lcg(29);
    for ty in QTYPES {
        let (len, _) = block_geometry(ty);
        let k = 512;
        let (m, n) = (4, 12);
        for (t, dt) in DTYPES.into_iter().enumerate() {
            let wbytes = random_blocks(ty, n * k / len, &mut rng, t != 2);
            let q = QMatMul::from_qtensor(qtensor(ty, &wbytes, n, k)).unwrap();
            let w = oracle_weights(ty, &wbytes);
            let (lo, hi) = if dt == DType::F16 {
                (-14, 14)
            } else {
                (-40, 40)
            };
            // Row 0: normal; row 1: spread over 2^lo..2^hi element by element; row 2: one
            // large element per block of 32 over tiny ones (the slices' tail); row 3:
            // specials (NaN, inf, signed zeros) among the spread.
            let mut x = vec![0f64; m * k];
            for q in 0..k {
                x[q] = rng.normal();
                x[k + q] = rng.value(false, lo, hi);
                x[2 * k + q] = if q % 32 == 5 {
                    rng.sign() * 2f64.powi(hi / 2)
                } else {
                    rng.normal() * 2f64.powi(lo / 2)
                };
                x[3 * k + q] = rng.value(q % 64 == 7, lo, hi);
            }
            check_paths(ty, &q, &w, &x, m, n, k, dt, "mixed rows");
            // One row alone (the R = 1 kernels) and two rows (R = 2).
            check_paths(ty, &q, &w, &x[k..2 * k], 1, n, k, dt, "one row");
            check_paths(ty, &q, &w, &x[..2 * k], 2, n, k, dt, "two rows");
        }
    }
}

#[test]
fn cancelling_rows_are_correctly_rounded() {
    // x_j chosen so that x w_j cancels to a tiny residue for one weight row j: the first
    // half of the row repeats with the opposite sign where the weights repeat.
    let mut rng = Lcg(31);
    for ty in [
        GgmlDType::Q8_0,
        GgmlDType::Q4K,
        GgmlDType::Q6K,
        GgmlDType::Q4_1,
    ] {
        let (len, size) = block_geometry(ty);
        let k = 512;
        let n = 4;
        let mut wbytes = random_blocks(ty, n * k / len, &mut rng, true);
        // Row 0: its second half a copy of its first half.
        let half = k / len / 2 * size;
        let (a, b) = wbytes.split_at_mut(half);
        b[..half].copy_from_slice(&a[..half]);
        let q = QMatMul::from_qtensor(qtensor(ty, &wbytes, n, k)).unwrap();
        let w = oracle_weights(ty, &wbytes);
        for dt in DTYPES {
            let mut x = vec![0f64; k];
            for t in 0..k / 2 {
                x[t] = rng.normal();
                x[t + k / 2] = -x[t];
            }
            x[3] += 2f64.powi(-30);
            check_paths(ty, &q, &w, &x, 1, n, k, dt, "cancelling");
        }
    }
}

/// A Q8_0 row built so that only the slices' tail decides the rounding (f32 x): the
/// covered part of the sum sits 3/4 of the tail's product below an f32 rounding midpoint,
/// the tail (one element below the slice window of its block) puts the exact sum above
/// it, and the weights' norm is within 2^-13 of that element's weight, so the tail bound
/// |tau| |w| is within 2^-13 of the tail's product: a bound half as large accepts the
/// wrong side (the rounding term of the bound is 1/11 of the margin).
#[test]
fn a_rounding_only_the_tail_decides() {
    let k = 128; // four Q8_0 blocks
    let mut wbytes = vec![0u8; 4 * 34];
    let one = half::f16::from_f64(1.0).to_bits().to_le_bytes();
    for b in 0..4 {
        wbytes[b * 34..b * 34 + 2].copy_from_slice(&one); // d = 1, codes 0 ...
    }
    // Weights (codes, d = 1): w[0] = 1 (block 0), w[1] = 127 (block 0), w[32] = 1
    // (block 1), w[64] = 1 (block 2).
    wbytes[2] = 1;
    wbytes[3] = 127;
    wbytes[34 + 2] = 1;
    wbytes[68 + 2] = 1;
    let q = QMatMul::from_qtensor(qtensor(GgmlDType::Q8_0, &wbytes, 1, k)).unwrap();
    let w = oracle_weights(GgmlDType::Q8_0, &wbytes);
    // Just below block 0's window (2^(1 - 44)), so that the tail's product (about 2^-37)
    // outweighs the rounding term of the bound (about 12 2^-53 |x| |w|, 2^-42.4).
    let xt = 2f64.powi(-44);
    let eps = xt * 127.0; // the tail's product
    let mut x = vec![0f64; k];
    x[0] = 1.0 + 2f64.powi(-23); // an f32 value
    x[1] = xt;
    x[32] = 2f64.powi(-24); // with x[0]: the midpoint between 1 + 2^-23 and 1 + 2^-22
    x[64] = -0.75 * eps; // exact in f32, covered by its own block
    for v in &x {
        assert_eq!(*v as f32 as f64, *v);
    }
    let (xv, xtensor) = input(&x, DType::F32, (1, k));
    let want = oracle(&xv, &w, 1, 1, k, DType::F32);
    assert_eq!(want[0], (1.0f32 + 2f32.powi(-22)).to_bits(), "rounds up");
    for path in paths() {
        let cfg = CpuConfig {
            path,
            int_tier_short_blocks: true,
            ..CpuConfig::default()
        };
        let got = out_bits(&qmatmul_with_config(&q, &xtensor, None, cfg).unwrap());
        assert_eq!(got, want, "on {path:?}");
    }
}

#[test]
fn the_integer_tier_decides_nearly_every_typical_output() {
    let mut rng = Lcg(37);
    let (k, n) = (4096, 48);
    for ty in QTYPES {
        let (len, _) = block_geometry(ty);
        let wbytes = random_blocks(ty, n * k / len, &mut rng, true);
        let q = QMatMul::from_qtensor(qtensor(ty, &wbytes, n, k)).unwrap();
        for dt in DTYPES {
            for m in [1, 4] {
                let x: Vec<f64> = (0..m * k).map(|_| rng.normal()).collect();
                let (_, xt) = input(&x, dt, (m, k));
                for path in paths() {
                    let (decided, total) = int_tier_decided(&q, &xt, path).unwrap();
                    let share = decided as f64 / total as f64;
                    if path == paths()[0] && m == 1 {
                        println!("{ty:?} {dt:?}: {decided} of {total} decided");
                    }
                    // random_blocks draws some blocks with all-0xFF bytes (codes at their
                    // extremes) and all-zero blocks; the shares are still near 1.
                    assert!(
                        share >= 0.97,
                        "{ty:?} {dt:?} m={m} {path:?}: the integer tier decided \
                         {decided} of {total}"
                    );
                }
            }
        }
    }
}

/// A weight block with an infinite scale facing a block of x that is all zeros: the exact
/// sum has inf * 0 = NaN in it, whatever the other blocks hold (the tier must not skip the
/// block because x is zero there).
#[test]
fn an_infinite_scale_facing_zeros_is_nan() {
    let mut rng = Lcg(41);
    for ty in [GgmlDType::Q4K, GgmlDType::Q6K, GgmlDType::Q8_0] {
        let (len, size) = block_geometry(ty);
        let (d, _) = scale_offsets(ty);
        let k = 2 * len.max(256);
        let n = 3;
        let mut wbytes = random_blocks(ty, n * k / len, &mut rng, true);
        // Row 1: its first block's d is +inf.
        let at = (k / len) * size + d;
        wbytes[at..at + 2].copy_from_slice(&0x7C00u16.to_le_bytes());
        let q = QMatMul::from_qtensor(qtensor(ty, &wbytes, n, k)).unwrap();
        let w = oracle_weights(ty, &wbytes);
        let mut x: Vec<f64> = (0..k).map(|_| rng.normal()).collect();
        x[..len].fill(0.0);
        check_paths(
            ty,
            &q,
            &w,
            &x,
            1,
            n,
            k,
            DType::F32,
            "inf scale facing zeros",
        );
    }
}
