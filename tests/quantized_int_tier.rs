//! The integer first tier of the quantized GEMV (`candle_repro::quantized::int_tier`):
//! * its integer scales (and codes) equal the block decoder's a and c (and q), bit for bit, on random and
//!   wild blocks of every type;
//! * its kernels (scalar, AVX2 `vpmaddwd`, AVX-512 VNNI `vpdpwssd`, each where the CPU
//!   has it) give the exact block sums on extreme slices and codes (the i32 lanes' limits);
//! * products through it on each vector path forced equal MPFR's exact sums rounded once:
//!   every quantized type, f32/bf16/f16 x, random x, x spread over 2^-40..2^40 inside one
//!   block (the tail the slices leave), cancelling rows, NaN/inf rows, a built row whose
//!   rounding only the tail decides;
//! * its rounding coefficient (nb + 8) 2^-53 is needed in full: rows built so that the
//!   tier's own block-order sum loses 62 small blocks whole while Cauchy-Schwarz is tight
//!   (error about 0.86 of the bound, each row asserting it), so that half the coefficient
//!   accepts the wrong neighbour (issue 31); the same rows through the CUDA product on the
//!   emulated device (which has no integer tier: a bits check);
//! * on typical data it decides nearly every output itself (it is not silently deferring
//!   everything to the f64 tier).
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::DType;
use candle_core::quantized::GgmlDType;
use candle_repro::math::VectorPath;
use candle_repro::matmul::CpuConfig;
use candle_repro::quantized::int_tier::{
    IntPath, block_sums, block_sums_32x8, block_sums_of, check_scales,
};
use candle_repro::quantized::{QMatMul, int_tier_decided, qmatmul_with_config};

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;
#[path = "common/emu.rs"]
mod emu;
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

/// The block sums of whole 256-weight blocks as the GEMV's kernels form them (the codes
/// unpacked in registers for Q4_K and Q6_K on the vector kernels, through a buffer
/// otherwise) equal the exact sums against candle's own weights: each block's d set to 1
/// and its min scale to 0, so that candle's weight is the code times its sub-scale,
/// cq = sc q, exactly. Random codes and the extremes (every code and sub-scale at its
/// largest magnitude, facing slices of +-(2^15 - 1): the i32 lanes' limits).
#[test]
fn kernels_unpack_the_kquant_codes_exactly() {
    let mut rng = Lcg(13);
    let kernels = IntPath::available();
    let one = half::f16::from_f64(1.0).to_bits().to_le_bytes();
    for ty in [
        GgmlDType::Q4K,
        GgmlDType::Q6K,
        GgmlDType::Q2K,
        GgmlDType::Q3K,
        GgmlDType::Q5K,
        GgmlDType::Q8K,
    ] {
        let (len, size) = block_geometry(ty);
        assert_eq!(len, 256);
        let (d, dmin) = scale_offsets(ty);
        let nb = 24;
        // Random bytes in every block (not `random_blocks`, which may draw whole runs of
        // equal bytes, where a code read from the wrong bits or a sub-scale taken from
        // the wrong group can go unseen); the scales are set below.
        let mut bytes: Vec<u8> = (0..nb * size).map(|_| rng.below(256) as u8).collect();
        for (b, blk) in bytes.chunks_exact_mut(size).enumerate() {
            match b {
                // Every byte 0xFF (Q4_K: q = 15, sc = 63) or 0 with Q6_K's sub-scales at
                // -128 (q = -32: cq = 4096, the largest of any type).
                0 => blk.fill(0xFF),
                1 => {
                    blk.fill(0);
                    if ty == GgmlDType::Q6K {
                        blk[192..208].fill(0x80);
                    }
                }
                _ => {}
            }
            if ty == GgmlDType::Q8K {
                blk[..4].copy_from_slice(&1f32.to_le_bytes());
            } else {
                blk[d..d + 2].copy_from_slice(&one);
            }
            if let Some(o) = dmin {
                blk[o..o + 2].fill(0);
            }
        }
        let w = oracle_weights(ty, &bytes);
        for (b, blk) in bytes.chunks_exact(size).enumerate() {
            let cq = &w[b * 256..(b + 1) * 256];
            assert!(cq.iter().all(|&c| c == c.trunc() && c.abs() <= 4096.0));
            for s in [2usize, 3] {
                let x: Vec<i16> = match b % 4 {
                    0 => vec![-32767; s * 256],
                    1 => vec![32767; s * 256],
                    _ => (0..s * 256)
                        .map(|_| rng.below(65535) as i16 - 32767)
                        .collect(),
                };
                let u: Vec<i64> = (0..s)
                    .map(|i| (0..256).map(|t| x[i * 256 + t] as i64 * cq[t] as i64).sum())
                    .collect();
                // The two exact parts the sum T is formed from (the module header).
                let want = if s == 3 {
                    vec![u[0], (u[1] << 15) + u[2]]
                } else {
                    vec![0, (u[0] << 15) + u[1]]
                };
                for &k in &kernels {
                    let got = block_sums_of(k, ty, blk, &x);
                    assert_eq!(got, want, "{ty:?} {k:?} block {b} s {s}");
                }
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
            int_tier: Some(true),
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
            int_tier: Some(true),
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

/// A K-quant block (Q6_K or Q4_K) with d = `d` (a power of two, f16), every code 0 but the
/// `entries` (index, sc, q) (sc per group: the entries' groups distinct), mins and dmin 0.
fn kquant_block(ty: GgmlDType, d: f64, entries: &[(usize, i32, i32)]) -> Vec<u8> {
    let dbits = half::f16::from_f64(d);
    assert_eq!(dbits.to_f64(), d, "d = {d:e} is not an f16");
    let mut b = vec![0u8; block_geometry(ty).1];
    match ty {
        GgmlDType::Q6K => {
            // Code q + 32 in 6 bits: the low 4 in ql, the high 2 in qh (ggml's layout).
            let put = |b: &mut [u8], idx: usize, raw: u8| {
                let (h, r) = (idx / 128, idx % 128);
                let (part, l) = (r / 32, r % 32);
                let ql = 64 * h + l + 32 * (part & 1);
                b[ql] = (b[ql] & !(0xF << (4 * (part >> 1)))) | ((raw & 0xF) << (4 * (part >> 1)));
                let qh = 128 + 32 * h + l;
                b[qh] = (b[qh] & !(3 << (2 * part))) | ((raw >> 4) << (2 * part));
            };
            for idx in 0..256 {
                put(&mut b, idx, 32);
            }
            for &(idx, sc, q) in entries {
                assert!((-32..32).contains(&q) && (-128..128).contains(&sc));
                put(&mut b, idx, (q + 32) as u8);
                b[192 + idx / 16] = sc as i8 as u8;
            }
            b[208..210].copy_from_slice(&dbits.to_bits().to_le_bytes());
        }
        GgmlDType::Q4K => {
            for &(idx, sc, q) in entries {
                // Groups 0..3 only: their 6-bit scales are the low bits of bytes 4..8.
                assert!(idx < 128 && (0..16).contains(&q) && (0..64).contains(&sc));
                let (j, r) = (idx / 64, idx % 64);
                let at = 16 + 32 * j + r % 32;
                b[at] |= (q as u8) << (4 * (r / 32));
                b[4 + idx / 32] = sc as u8;
            }
            b[0..2].copy_from_slice(&dbits.to_bits().to_le_bytes());
        }
        _ => unreachable!(),
    }
    b
}

/// The precision of a dtype.
fn precision(dt: DType) -> i32 {
    match dt {
        DType::F32 => 24,
        DType::BF16 => 8,
        _ => 11,
    }
}

/// v (a normal f64 in dt's normal range) rounded to dt's precision, nearest even, once.
fn round_once(v: f64, dt: DType) -> f64 {
    let e = ((v.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    let q = 2f64.powi(e + 1 - precision(dt));
    (v / q).round_ties_even() * q
}

/// The largest value of dt below v (v > 0, a dt value).
fn below(v: f64, dt: DType) -> f64 {
    match dt {
        DType::F32 => f32::from_bits((v as f32).to_bits() - 1) as f64,
        DType::BF16 => half::bf16::from_bits(half::bf16::from_f64(v).to_bits() - 1).to_f64(),
        _ => half::f16::from_bits(half::f16::from_f64(v).to_bits() - 1).to_f64(),
    }
}

/// v as an integer multiple of 2^-100 (exactly; checked).
fn fixed(v: f64) -> i128 {
    let s = v * 2f64.powi(100);
    assert!(
        s.fract() == 0.0 && s.abs() < 2f64.powi(120),
        "{v:e} is not fixed-point"
    );
    s as i128
}

/// Rows whose rounding only the full coefficient (nb + 8) 2^-53 of the integer tier's
/// bound decides (issue 31), for a weight `ty` (Q6_K, or Q4_K with dmin 0) and x of `dt`,
/// k = 64 blocks of 256. Block 0 holds two products, X W = 2^e and X' W' = 2^(e-p) (p the
/// output's precision), so its value is the output midpoint 2^e (1 + 2^-p); block 1 one
/// product, +-g ulp (ulp = 2^(e-52), g = 25); blocks 2..63 one product each, -+(1 - delta)
/// half an ulp (delta = 2^-p or 2^-10). Every product and every block's value is exact
/// in f64 and d is a power of two, so each block's T and T (A 2^(E-F)) are exact: the
/// only roundings are the tier's additions of the blocks in order (the module header),
/// and each of the 62 small blocks is lost whole. The computed sum is y = midpoint +- 25
/// ulp, the exact one y -+ 62 (1 - delta)/2 ulp: across the midpoint. Cauchy-Schwarz is
/// tight (|x| |w| within 2^-8 of the sum of |x w|), so the error, 31 (1 - delta) ulp, is
/// about 0.86 of the proven bound (64 + 8) 2^-53 |x| P_j = 36 ulp: the bound at 1/2 (18
/// ulp, and the rounding test's own widening 2 ulp) accepts round(y), the wrong
/// neighbour; the whole bound sends the output on. The four rows: both signs of the
/// output, both directions of the lost blocks. Each row asserts these properties itself.
/// Returns (x, the weight bytes, the wanted bits).
fn coefficient_rows(ty: GgmlDType, dt: DType) -> (Vec<f64>, Vec<u8>, Vec<u32>) {
    const NB: usize = 64;
    const G: f64 = 25.0;
    let k = NB * 256;
    let p = precision(dt);
    // (e, d of block 0, its codes W = d cq, W' = d: cq = 2^b; X and X'; d of the others).
    let b = if dt == DType::F32 { 8 } else { 4 };
    let cq = 1 << b;
    let (e, d0, ds) = match dt {
        DType::F32 | DType::BF16 => (0, 2f64.powi(-b), 2f64.powi(-14)),
        // f16: x needs its subnormals and the weights an f16 d of 2^-24 for the small
        // products at 2^(e-53); e = 15 keeps the output below f16's largest value.
        _ => (15, 16.0, 2f64.powi(-24)),
    };
    let (w0, w1) = (d0 * cq as f64, d0);
    let (x0, x1) = (2f64.powi(e) / w0, 2f64.powi(e - p) / w1);
    let ulp = 2f64.powi(e - 52);
    let gap_x = G * ulp / ds;
    let small_x = below(0.5 * ulp / ds, dt);
    // Block 0's cq = sc q, within both types' code ranges.
    let (sc0, q0) = if b == 8 { (32, 8) } else { (2, 8) };
    let mut w = kquant_block(ty, d0, &[(0, sc0, q0), (32, 1, 1)]);
    for _ in 1..NB {
        w.extend(kquant_block(ty, ds, &[(0, 1, 1)]));
    }
    let wv = oracle_weights(ty, &w);
    assert_eq!(
        (wv[0], wv[32], wv[256], wv[512]),
        (w0, w1, ds, ds),
        "{ty:?} block layout"
    );
    assert_eq!(wv.iter().filter(|&&v| v != 0.0).count(), NB + 1);
    let mut xs = Vec::new();
    let mut want = Vec::new();
    for (sign, up) in [(1.0, true), (1.0, false), (-1.0, true), (-1.0, false)] {
        // up: y below the midpoint, the lost blocks positive (the exact sum above it).
        let dir = if up { 1.0 } else { -1.0 };
        let mut x = vec![0f64; k];
        x[0] = sign * x0;
        x[32] = sign * x1;
        x[256] = -sign * dir * gap_x;
        for bl in 2..NB {
            x[256 * bl] = sign * dir * small_x;
        }
        for &v in &x {
            assert_eq!(into_dtype(v, dt), v, "{v:e} is not a {dt:?}");
        }
        // Each block's value (exact: checked in fixed point), added in block order.
        let block = |bl: usize| -> (f64, i128) {
            let r = 256 * bl..256 * (bl + 1);
            let exact: i128 = r.clone().map(|t| fixed(x[t] * wv[t])).sum();
            let v: f64 = r.map(|t| x[t] * wv[t]).sum();
            assert_eq!(fixed(v), exact, "block {bl} is not exact in f64");
            (v, exact)
        };
        let (mut y, mut exact) = (0f64, 0i128);
        for bl in 0..NB {
            let (v, e) = block(bl);
            y += v;
            exact += e;
        }
        let mid = sign * 2f64.powi(e) * (1.0 + 2f64.powi(-p));
        assert_eq!(y, mid - sign * dir * G * ulp, "the lost blocks");
        let err = (exact - fixed(y)).unsigned_abs() as f64 * 2f64.powi(-100);
        let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
        let bound =
            (NB + 8) as f64 * 2f64.powi(-53) * (1.0 + 2f64.powi(-20)) * norm(&x) * norm(&wv);
        let ratio = err / bound;
        assert!(ratio > 0.8, "{ty:?} {dt:?}: error / bound {ratio}");
        // The rounding test with half the coefficient (its widening included) accepts
        // round(y); the exact sum lies across the midpoint.
        let d = 0.5 * bound * (1.0 + 2f64.powi(-36)) + y.abs() * 2f64.powi(-51);
        let wrong = round_once(y, dt);
        assert_eq!(round_once(y - d, dt), wrong);
        assert_eq!(round_once(y + d, dt), wrong);
        assert!(
            (exact - fixed(mid)) * (fixed(y) - fixed(mid)) < 0,
            "not across"
        );
        let right = mpfr_oracle::dot(&x, &wv, None, fmt(dt));
        assert_eq!(
            right,
            2.0 * mid - wrong,
            "MPFR: the neighbour across the midpoint"
        );
        // and the whole bound does not decide.
        let d = bound + y.abs() * 2f64.powi(-51);
        assert_ne!(round_once(y - d, dt), round_once(y + d, dt));
        want.push(expected_bits(right, dt));
        xs.extend(x);
    }
    (xs, w, want)
}

/// The integer tier's rounding coefficient, (nb + 8) 2^-53 (1 + 2^-20), is needed in
/// full: `coefficient_rows` on every vector path (the tier is on by default for the
/// K-quants), four rows at once (R = 4) and the first alone (R = 1), f32/bf16/f16 x.
#[test]
fn the_rounding_coefficient_is_needed_in_full() {
    let k = 64 * 256;
    for ty in [GgmlDType::Q6K, GgmlDType::Q4K] {
        for dt in DTYPES {
            let (x, wbytes, want) = coefficient_rows(ty, dt);
            let q = QMatMul::from_qtensor(qtensor(ty, &wbytes, 1, k)).unwrap();
            for (m, want) in [(4, &want[..]), (1, &want[..1])] {
                let (_, xt) = input(&x[..m * k], dt, (m, k));
                for path in paths() {
                    let cfg = CpuConfig {
                        path,
                        int_tier: Some(true),
                        ..CpuConfig::default()
                    };
                    let got = out_bits(&qmatmul_with_config(&q, &xt, None, cfg).unwrap());
                    assert_eq!(got, want, "{ty:?} {dt:?} m = {m} on {path:?}");
                }
            }
        }
    }
}

/// The same rows through the CUDA quantized product on the emulated device (a bits check:
/// the CUDA kernels have no integer tier; their f64 tier 1 with its own bound, then tiers 2
/// and 3, decide these outputs): the decode kernel (m = 4 and 1) equals MPFR.
#[test]
fn the_coefficient_rows_on_the_emulated_device() {
    use emu::{Emu, download, upload};
    let k = 64 * 256;
    for ty in [GgmlDType::Q6K, GgmlDType::Q4K] {
        for dt in DTYPES {
            let (x, wbytes, want) = coefficient_rows(ty, dt);
            let q = QMatMul::from_qtensor(qtensor(ty, &wbytes, 1, k)).unwrap();
            let w = candle_repro::quantized::cuda::upload_weight(&Emu, &q).unwrap();
            for (m, want) in [(4, &want[..]), (1, &want[..1])] {
                let (_, xt) = input(&x[..m * k], dt, (m, k));
                let (xb, xl) = upload(&xt);
                let (dev, shape) =
                    candle_repro::quantized::cuda::qmatmul(&Emu, (&xb, &xl), &w, None, None)
                        .unwrap();
                let got = out_bits(&download(&dev, shape));
                assert_eq!(got, want, "{ty:?} {dt:?} m = {m} on the emulated device");
            }
        }
    }
}
