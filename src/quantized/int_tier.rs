//! The integer first tier of the quantized GEMV (issues 27 and 24): the product of x (at
//! most four rows) with a weight kept in its GGUF blocks, computed on the integer units
//! (AVX-512 VNNI `vpdpwssd`, AVX2 `vpmaddwd`, or plain integer code) and accepted under a
//! rigorous error bound; what it cannot decide goes on to the f64 tier 1 of `super::cpu`
//! and then tiers 2 and 3, so every output stays the exact sum rounded once and no bit
//! depends on this tier (`super`'s header has the definition).
//!
//! # The weight side: integers already
//! Every quantized weight is w_k = a_g q_k - c_g (`super::blocks`), and in every type
//! a_g = A sc_g and c_g = C m_g with A, C one or two scales per block (f16; Q8_K's d is an
//! f32) and sc_g, m_g small integers (`IntScales::scales`: Q4_K/Q5_K (d, dmin, 6-bit sc
//! and m), Q2_K (d, dmin, 4-bit sc and m), Q3_K (d, sc - 32), Q6_K (d, sc an i8), Q4_1 and
//! Q5_1 (A = d, C = -m, m_g = 1), the others (A = d, sc_g = 1, no C)). The product
//! cq_k = sc_g q_k is an i16 with |cq_k| <= 2^12 in every type (the largest: Q6_K,
//! |sc| <= 128, |q| <= 32; then Q5_K 63 * 31, Q4_K 63 * 15, Q3_K 32 * 4, the 8-bit codes
//! 128). A block of LEN weights then is A (sc q) - C m: two f64 scales and integers.
//!
//! # The x side: slices under one power of two per block
//! Each row of x is cut into the weight's blocks (LEN = 32 or 256 elements). In a block
//! with largest |x_k| = M > 0 let E be the integer with 2^(E-1) <= M < 2^E (read off M's
//! f64 exponent), F = 15 S - 1 the fraction bits (S = 3 slices, F = 44, for f32 x;
//! S = 2, F = 29, for bf16 and f16 x: chosen by the dtype, a parameter), and
//!
//! ```text
//!     Y_k = trunc(x_k 2^(F-E))            (x_k 2^(F-E) is exact in f64; |Y_k| < 2^F)
//!     x~_k = Y_k 2^(E-F),   tau_k = x_k - x~_k,   |tau_k| < 2^(E-F),  |tau_k| <= |x_k|,
//!     |x~_k| <= |x_k|       (truncation toward zero)
//! ```
//!
//! |Y_k| is written in base 2^15 with the sign on every digit (sign-magnitude, so that
//! sum_i |sigma_i,k| 2^(15 (S-i)) = |Y_k|, which the rounding bound below needs):
//! Y_k = sum_{i=1..S} sigma_i,k 2^(15 (S-i)), |sigma_1| <= 2^14 - 1 (as |Y_k| < 2^(15S-1)),
//! |sigma_i| <= 2^15 - 1: every slice is an i16. The tail tau_k is what the slices do not
//! cover: zero for every element with |x_k| >= 2^(E - F + p - 1) (p = 24, 8, 11 the
//! dtype's precision), i.e. within 2^20 (f32) or 2^21 (bf16), 2^18 (f16) of the block's
//! maximum; a wider spread inside one block leaves a tail that the bound carries.
//!
//! # The exact integer sums
//! Per block b and slice i the kernels compute U_i,b = sum_{k in b} sigma_i,k cq_k
//! exactly. Each vector path adds products into i32 lanes: VNNI `vpdpwssd` adds two
//! products per lane per 32 codes, so a lane of a 256-block gets 16 products; AVX2
//! `vpmaddwd` + `vpaddd` alternates two accumulators, 16 products per lane again; every
//! product is at most (2^15 - 1) 2^12, so a lane stays below 16 (2^15 - 1) 2^12 < 2^31:
//! no i32 wraps (not even the non-saturating `vpdpwssd`'s intermediate pair sums, which
//! are below 2^28). The lanes are then added in i64 (|U_i,b| < 256 2^27 = 2^35). The
//! scalar path adds in i64. So every path gives the same integers U_i,b, and everything
//! after them is the same code: the same bits out of this tier, and the same outputs
//! decided, on every path.
//!
//! What the f64 steps below read of a 256-block is two integers formed from the U_i,b
//! (`t_parts`): S = 3: U_1 and U_2 2^15 + U_3; S = 2: U_1 2^15 + U_2. For Q4_K and Q6_K
//! the AVX-512 VNNI kernel forms them lane by lane instead: each i32 lane (|lane| < 2^31)
//! widened, pairs added in i64 (< 2^32), the middle slice's lanes times 2^15 plus the
//! last's (< 2^48), and the 8 lanes of each part added in i64: every step exact, so the
//! same two integers. The vector kernels unpack those two types' codes in registers
//! (nibbles and bit pairs masked and shifted, widened to i16, times sc_g by `vpmullw`:
//! the same cq_k, |cq_k| <= 2^12, and the same number of products per lane as above).
//!
//! With the offset term X_g,b = sum_{k in group g} Y_k (i64; |X| < 32 2^44 = 2^49 for the
//! types with a C, whose groups have at most 32 weights) and N_b = sum_g m_g X_g,b
//! (|N| < 16 63 2^49 < 2^59, i64), the covered part of the sum is exactly
//!
//! ```text
//!     sum_k x~_k w_k = sum_b 2^(E_b - F) ( A_b T_b - C_b N_b ),
//!     T_b = sum_i 2^(15 (S-i)) U_i,b = sum_{k in b} Y_k cq_k      (|T_b| < 2^64)
//! ```
//!
//! # The evaluation and its bound
//! Per block: S = 3: T = U_1 2^30 + ((U_2 2^15 + U_3) in i64, below 2^51: exact in f64),
//! one f64 rounding; S = 2: T = U_1 2^15 + U_2 in i64, below 2^50, exact. Then
//! v_b = T (A_b 2^(E_b-F)) (the scale product is exact: a power of two times an f16 or
//! f32, within f64's normal range for every E in [-148, 129]), one rounding; with a C:
//! v_b -= fl(N_b) (C_b 2^(E_b-F)): the conversion, the product and the difference, three
//! roundings; then the row's sum adds the blocks in order (at most nb roundings on any
//! term's path, nb = k / LEN) and the bias (one more). Every term of the exact covered sum
//! (2^(E-F) A T_b, 2^(E-F) C N_b, the bias) thus meets at most h = nb + 4 roundings, and
//! (Higham, 2nd ed., 3.1 and 4.2) |computed - covered - bias| <= gamma_h (sum of the
//! terms' absolute values). By the sign-magnitude slices and |x~| <= |x|,
//!
//! ```text
//!     sum_b |2^(E-F) A T_b| + |2^(E-F) C N_b| <= sum_k |x_k| (|a_g q_k| + |c_g|)
//!                                           <= |x|_2 P_j,
//! ```
//!
//! P_j the norm of (|a_g q_k| + |c_g|)_k, row j's stat computed once at load (for the
//! types without a C it is |w_j|_2, the existing `LineStats::norm`). The uncovered tail:
//! |sum_k tau_k w_k| <= |tau|_2 |w_j|_2 (Cauchy-Schwarz), |tau|_2 per row of x per call.
//! The norms are computed in f64 within (1 + (k + 2) u) of the true ones (k < 2^26), so
//!
//! ```text
//!     err = ((nb + 8) 2^-53 (1 + 2^-20) (|x| P_j + |bias|)
//!            + |tau| |w_j| (1 + 2^-19)) (1 + 2^-40)
//! ```
//!
//! bounds |y - exact| with room for its own evaluation, and the output is accepted when
//! every number within err of y rounds to one value (`round_within`). The coefficient is
//! close to tight: rows whose block sum loses nb - 2 blocks of just under half an ulp
//! each, with Cauchy-Schwarz tight, err by about 0.86 of it at nb = 64, so half of it is
//! not a bound (`tests/quantized_int_tier.rs`,
//! `the_rounding_coefficient_is_needed_in_full`). Not decided here, and left to the f64
//! tier: a row of x with a NaN or an infinity, a weight row with a
//! non-finite scale (its weights are NaN or infinite; checked per block as an early exit,
//! and its norms are then not finite, so the test would refuse it anyway), y = 0 (the sign of an exact zero),
//! k >= 2^26, tier 1 switched off by the configuration, and whatever the test refuses.
//!
//! # Cost (per 256 weights, one row of f32 x)
//! Unpacking the codes, cq = sc q (8 vectors of 32 i16), 24 `vpdpwssd`, the lane
//! reductions (for Q4_K and Q6_K on VNNI one tree per 8 blocks), a few f64 steps; the
//! f64 tier does 32 f64 vectors of decode, convert and fused multiply-add. i16 slices rather than the u8 x i8 `vpdpbusd`: the same bits
//! per instruction (32 products of 15-bit slices against 64 of 7-bit ones), but no offset
//! to correct (`vpdpwssd` is signed x signed, and the codes are signed in half the types),
//! the group scale folded into the codes (sc q fits an i16, not a u8), 3 slices instead of
//! 6 for f32 x, and no i32 overflow at 256 weights per block.
//!
//! # Status (2026-11-26; for whoever picks this up)
//! * Runs in the GEMV (m <= 4) of every quantized type, f32/bf16/f16 x, on three kernels:
//!   scalar (i64), AVX2 (`vpmaddwd`), AVX-512 VNNI (`vpdpwssd`); the 32-weight types take
//!   8 blocks per call with a transposing lane reduction; Q4_K and Q6_K unpack their codes
//!   in registers on both vector kernels (`IntScales::REG`). On by default for the
//!   256-weight types (K-quants) on the AVX-512 VNNI kernel only, the one measured faster
//!   than the f64 tier (below; the default differs by path, the bits do not);
//!   `CpuConfig::int_tier = Some(true)` runs it on any path, `Some(false)` is the f64 tier
//!   alone; `CpuConfig::int_tier_short_blocks` adds the 32-weight types, where it is still
//!   slower than the f64 tier (below). On typical data it decides every
//!   output of the tests' samples (`tests/quantized_int_tier.rs`, >= 97% required).
//! * Measured (`cargo run --release --example qgemv_speed 3 Q4K,Q6K [avx2]`, (1, 4096) x
//!   (4096, 4096)^T, f32 x, 2 threads, AMD Zen 5 with AVX-512 VNNI, 2 cores shared with
//!   other sessions' builds: absolute times inflated; ratios from one interleaved run,
//!   ranges over 3 runs each, alternating with the previous version's binary):
//!   AVX-512 VNNI path: int tier / f64 tier Q4_K 0.59-0.62 (before: 0.55-0.60, unchanged
//!   within the noise; about 1130 us), Q6_K 0.45-0.51 (before 0.54-0.57; about 870 us
//!   against 1020 before). AVX2 path (forced): Q4_K 1.27-1.30 and Q6_K 1.10-1.18 (before
//!   1.64-1.66 and 1.50-1.55): faster by a fifth but still slower than the f64 tier there,
//!   hence off by default on the AVX2 and scalar kernels.
//!   Stock candle's `QMatMul` on Q4_K: 118-174 us in the same runs, still 7-9x faster;
//!   its Q6_K times swing from 260 to 3900 us between rounds (not a usable reference).
//!   Q8_0 and Q4_0 unchanged (0.8x and 0.7x of the f64 tier before), hence still off by
//!   default.
//! * Since 2026-11-27 the VNNI kernel runs Q4_K and Q6_K eight blocks at a time
//!   (`rows_vnni_reg`): the scales parsed in vectors (word-parallel 6-bit fields, F16C
//!   for d and dmin), each block's accumulators widened lane by lane to the two parts of
//!   T, one transposing tree for 8 blocks' parts and offset products, the f64 steps on 8
//!   lanes (elementwise, so the same y as `rows_with`), the x loads folded into
//!   `vpdpwssd` (`dpwssd_mem`). Measured (`cargo run --release --example qgemv_speed 5
//!   Q4K,Q6K`, 2 threads, Zen 5 with AVX-512 VNNI, three runs alternating with the
//!   previous binary, medians per run): Q4_K 890-1303 us against 1539-1620 before
//!   (stock 157-270 us), Q6_K 1099-2062 against 1046-1808 (no gain beyond the noise;
//!   stock 453-650). The block loop was 172 instructions for Q4_K with f32 x before the
//!   loads were folded (about 23 ns per block on one thread, 60 cycles at the nominal
//!   2.6 GHz): the 24 `vpdpwssd` and their loads, 8 code unpacks (mask or shift, widen,
//!   scale multiply), the lane widening of 3 slices and the scale parsing. Next: fewer
//!   instructions per code (the widening and the sc multiply are a third of the loop);
//!   several weight rows per pass would share x's loads, but those are folded into
//!   `vpdpwssd` and not what bounds the loop.
//! * Not done (issue 27's wider scope): the prefill GEMM on integer units, `matmul` and
//!   `Linear` with float weights, a slice count chosen per block from the exponent spread
//!   (today 3 slices for f32 x, 2 for bf16/f16: fixed by the dtype), AVX-VNNI, and a
//!   CUDA int8 tensor-core kernel for this product (the matmul has one:
//!   `kernels/matmul/ozaki.cuh`).

// The kernels index several arrays (rows, slices, blocks) by the same loop variables.
#![allow(clippy::needless_range_loop)]

use super::blocks::QRows;
use super::blocks::{self, QuantBlock, f16_at, scale_min_k4};
use crate::math::VectorPath;
use crate::math::vector::runnable;
use crate::matmul::Input;
use crate::matmul::cpu::GAMMA_UNIT;
use rayon::prelude::*;

/// The slack of the tail's norms product: covers (1 + (k + 2) u)^2 (1 + u)^2, k < 2^26.
const TAIL_SLACK: f64 = f64::from_bits(0x3FF0_0002_0000_0000); // 1 + 2^-19
/// The slack of the final sum of the two error terms.
const ERR_SLACK: f64 = f64::from_bits(0x3FF0_0000_0000_1000); // 1 + 2^-40

/// Which integer kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntPath {
    /// Plain integer code (i64 sums).
    Scalar,
    /// AVX2 `vpmaddwd` + `vpaddd` on 256-bit vectors.
    Avx2,
    /// AVX-512 VNNI `vpdpwssd` on 512-bit vectors.
    Avx512Vnni,
}

/// Whether the CPU has AVX-512 VNNI (and the F, BW, DQ, AVX2 and F16C it is used with).
fn has_vnni() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static V: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *V.get_or_init(|| {
            std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512vnni")
                && std::is_x86_feature_detected!("avx512dq")
                && std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("f16c")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

impl IntPath {
    /// The kernels this CPU runs (for tests that compare them).
    pub fn available() -> Vec<IntPath> {
        let mut v = vec![IntPath::Scalar];
        if runnable(VectorPath::Avx2) != VectorPath::Baseline {
            v.push(IntPath::Avx2);
        }
        if IntPath::of(VectorPath::Avx512) == IntPath::Avx512Vnni {
            v.push(IntPath::Avx512Vnni);
        }
        v
    }

    /// The kernel of a vector path: the one the crate's dispatch runs (`runnable`: the
    /// path asked for or the widest below it that the CPU has); AVX-512 without VNNI runs
    /// the AVX2 kernel. Every kernel gives the same integers (module header).
    pub fn of(path: VectorPath) -> IntPath {
        match runnable(path) {
            VectorPath::Baseline => IntPath::Scalar,
            VectorPath::Avx2 => IntPath::Avx2,
            VectorPath::Avx512 if has_vnni() => IntPath::Avx512Vnni,
            VectorPath::Avx512 => IntPath::Avx2,
        }
    }
}

/// A block format's scales as integers: a_g = A sc_g, c_g = C m_g (module header).
pub(crate) trait IntScales: QuantBlock {
    /// Whether sc_g can differ from 1 (then the codes are multiplied by it).
    const SCALED: bool;
    /// (A, C) of the block `b` (C = 0 without a C), sc_g and m_g of its groups.
    fn scales(b: &[u8], sc: &mut [i16; 16], m: &mut [i16; 16]) -> (f64, f64);

    /// The codes q[..LEN] of the block `b`: those of `QuantBlock::unpack` (the types on
    /// the hot paths override it with a loop that skips the f64 scales).
    #[inline(always)]
    fn codes(b: &[u8], q: &mut [i8]) {
        let (mut a, mut c) = ([0f64; 16], [0f64; 16]);
        Self::unpack(b, q, &mut a, &mut c);
    }

    /// Whether the vector kernels unpack this type's codes in registers
    /// ([`Kernel::sums_block`]) rather than through `codes` and a buffer.
    const REG: RegCodes = RegCodes::Buffer;
}

/// How the vector kernels get a 256-weight block's codes cq = sc q (`IntScales::REG`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum RegCodes {
    /// `IntScales::codes` into a buffer, times sc, then `Kernel::sums`.
    Buffer,
    /// Q4_K: the nibbles of 32 bytes are groups 2j and 2j + 1, each times its sc.
    Q4K,
    /// Q6_K: low nibbles and 2 high bits, minus 32, times the sc of each 16 weights.
    Q6K,
}

macro_rules! plain_scales {
    ($($t:ident => |$b:ident| $a:expr, $c:expr $(, codes |$cb:ident, $q:ident| $codes:block)?;)*) => {$(
        impl IntScales for blocks::$t {
            const SCALED: bool = false;
            #[inline(always)]
            fn scales($b: &[u8], sc: &mut [i16; 16], m: &mut [i16; 16]) -> (f64, f64) {
                sc[0] = 1;
                m[0] = 1;
                ($a, $c)
            }
            $(
            #[inline(always)]
            fn codes($cb: &[u8], $q: &mut [i8]) $codes
            )?
        }
    )*};
}

plain_scales! {
    Q4_0 => |b| f16_at(b, 0), 0.0, codes |b, q| {
        for j in 0..16 {
            q[j] = (b[2 + j] & 0xF) as i8 - 8;
            q[j + 16] = (b[2 + j] >> 4) as i8 - 8;
        }
    };
    Q4_1 => |b| f16_at(b, 0), -f16_at(b, 2);
    Q5_0 => |b| f16_at(b, 0), 0.0;
    Q5_1 => |b| f16_at(b, 0), -f16_at(b, 2);
    Q8_0 => |b| f16_at(b, 0), 0.0, codes |b, q| {
        for j in 0..32 {
            q[j] = b[2 + j] as i8;
        }
    };
    Q8_1 => |b| f16_at(b, 0), 0.0;
    Q8K => |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64, 0.0;
}

impl IntScales for blocks::Q2K {
    const SCALED: bool = true;
    #[inline(always)]
    fn scales(b: &[u8], sc: &mut [i16; 16], m: &mut [i16; 16]) -> (f64, f64) {
        for g in 0..16 {
            sc[g] = (b[g] & 0xF) as i16;
            m[g] = (b[g] >> 4) as i16;
        }
        (f16_at(b, 80), f16_at(b, 82))
    }
}

impl IntScales for blocks::Q3K {
    const SCALED: bool = true;
    #[inline(always)]
    fn scales(b: &[u8], sc: &mut [i16; 16], _m: &mut [i16; 16]) -> (f64, f64) {
        let s = &b[96..108];
        for g in 0..16 {
            let low = if g < 8 { s[g] & 0xF } else { s[g - 8] >> 4 };
            let high = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
            sc[g] = (low | (high << 4)) as i16 - 32;
        }
        (f16_at(b, 108), 0.0)
    }
}

macro_rules! k4_scales {
    ($($t:ident),*) => {$(
        impl IntScales for blocks::$t {
            const SCALED: bool = true;
            #[inline(always)]
            fn scales(b: &[u8], sc: &mut [i16; 16], m: &mut [i16; 16]) -> (f64, f64) {
                for g in 0..8 {
                    let (s, mm) = scale_min_k4(g, &b[4..16]);
                    sc[g] = s as i16;
                    m[g] = mm as i16;
                }
                (f16_at(b, 0), f16_at(b, 2))
            }
        }
    )*};
}
k4_scales!(Q5K);

impl IntScales for blocks::Q4K {
    const SCALED: bool = true;
    const REG: RegCodes = RegCodes::Q4K;
    #[inline(always)]
    fn scales(b: &[u8], sc: &mut [i16; 16], m: &mut [i16; 16]) -> (f64, f64) {
        for g in 0..8 {
            let (s, mm) = scale_min_k4(g, &b[4..16]);
            sc[g] = s as i16;
            m[g] = mm as i16;
        }
        (f16_at(b, 0), f16_at(b, 2))
    }
    #[inline(always)]
    fn codes(b: &[u8], q: &mut [i8]) {
        let q = &mut q[..256];
        for j in 0..4 {
            for l in 0..32 {
                let v = b[16 + 32 * j + l];
                q[64 * j + l] = (v & 0xF) as i8;
                q[64 * j + 32 + l] = (v >> 4) as i8;
            }
        }
    }
}

impl IntScales for blocks::Q6K {
    const SCALED: bool = true;
    const REG: RegCodes = RegCodes::Q6K;
    #[inline(always)]
    fn scales(b: &[u8], sc: &mut [i16; 16], _m: &mut [i16; 16]) -> (f64, f64) {
        for g in 0..16 {
            sc[g] = (b[192 + g] as i8) as i16;
        }
        (f16_at(b, 208), 0.0)
    }
    #[inline(always)]
    fn codes(b: &[u8], q: &mut [i8]) {
        let q = &mut q[..256];
        for h in 0..2 {
            let (ql, qh) = (&b[64 * h..64 * h + 64], &b[128 + 32 * h..128 + 32 * h + 32]);
            for l in 0..32 {
                let o = 128 * h + l;
                q[o] = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) as i8 - 32;
                q[o + 32] = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) as i8 - 32;
                q[o + 64] = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i8 - 32;
                q[o + 96] = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i8 - 32;
            }
        }
    }
}

/// x's rows as slices (module header), for one product.
pub(crate) struct XSlices {
    /// Slices per element (3 for f32 x, 2 otherwise).
    s: usize,
    len: usize,
    groups: usize,
    nb: usize,
    /// Blocks per row in `slices`: nb, rounded up to a multiple of 8 for LEN = 32 (the
    /// kernels take 8 such blocks at a time; the padding is zeros).
    nbp: usize,
    /// Row r, block b, slice i: LEN i16 at ((r nbp + b) s + i) LEN.
    slices: Vec<i16>,
    /// Row r, block b: 2^(E - F), or 0 for a block of zeros.
    pscale: Vec<f64>,
    /// Row r, block b, group g: X_g (only for the types with a C).
    xg: Vec<i64>,
    /// Per row: |tau|_2 as computed (sqrt of the f64 sum of squares).
    pub tail: Vec<f64>,
    /// Per row: every element finite.
    pub ok: Vec<bool>,
}

/// The slices of m rows of x (row i's element q at `x(i, q)`) for blocks of `len` and
/// groups of `group`; `offsets`: whether the X_g are needed.
pub(crate) fn slice_x(
    m: usize,
    k: usize,
    s: usize,
    len: usize,
    group: usize,
    offsets: bool,
    x: impl Fn(usize, usize) -> f32,
) -> XSlices {
    let nb = k / len;
    let nbp = if len == 32 { nb.div_ceil(8) * 8 } else { nb };
    let groups = len / group;
    let f = 15 * s as i32 - 1;
    let mut xs = XSlices {
        s,
        len,
        groups,
        nb,
        nbp,
        slices: vec![0i16; m * nbp * s * len],
        pscale: vec![0.0; m * nb],
        xg: if offsets {
            vec![0i64; m * nb * groups]
        } else {
            Vec::new()
        },
        tail: vec![0.0; m],
        ok: vec![true; m],
    };
    let mut vals = vec![0f64; len];
    for r in 0..m {
        let mut tail2 = 0f64;
        for b in 0..nb {
            let mut mx = 0f64;
            for (t, v) in vals.iter_mut().enumerate() {
                *v = x(r, b * len + t) as f64;
                mx = mx.max(v.abs());
            }
            if !vals.iter().all(|v| v.is_finite()) {
                xs.ok[r] = false;
                continue;
            }
            if mx == 0.0 {
                continue; // pscale 0: the block adds nothing
            }
            // 2^(e-1) <= mx < 2^e (mx is a normal f64).
            let e = ((mx.to_bits() >> 52) as i32) - 1022;
            let up = f64::from_bits(((1023 + f - e) as u64) << 52);
            let down = f64::from_bits(((1023 - f + e) as u64) << 52);
            xs.pscale[r * nb + b] = down;
            let base = (r * nbp + b) * s * len;
            for (t, &v) in vals.iter().enumerate() {
                let scaled = v * up; // exact: a power of two
                let y = scaled as i64; // truncation toward zero, |y| < 2^f
                let tau = (scaled - y as f64) * down; // both steps exact
                tail2 += tau * tau;
                let (neg, mut mag) = (y < 0, y.unsigned_abs());
                for i in (0..s).rev() {
                    let d = (mag & 0x7FFF) as i16;
                    xs.slices[base + i * len + t] = if neg { -d } else { d };
                    mag >>= 15;
                }
                if offsets {
                    xs.xg[(r * nb + b) * groups + t / group] += y;
                }
            }
        }
        xs.tail[r] = tail2.sqrt();
    }
    xs
}

/// Per weight row of a type with a C: the norm of (|a_g q_k| + |c_g|)_k, computed in f64
/// (any order: a bound only); empty for the other types (their P_j is |w_j|).
pub(crate) fn abs_norms(w: QRows) -> Vec<f64> {
    fn go<B: QuantBlock>(w: QRows) -> Vec<f64> {
        if !B::HAS_MIN {
            return Vec::new();
        }
        (0..w.n)
            .into_par_iter()
            .map(|j| {
                let (mut q, mut a, mut c) = ([0i8; 256], [0f64; 16], [0f64; 16]);
                let mut sq = 0f64;
                for blk in w.row(j).chunks_exact(B::BYTES) {
                    B::unpack(blk, &mut q[..B::LEN], &mut a, &mut c);
                    for (t, &q) in q[..B::LEN].iter().enumerate() {
                        let g = t / B::GROUP;
                        let v = (a[g] * q as f64).abs() + c[g].abs();
                        sq += v * v;
                    }
                }
                sq.sqrt()
            })
            .collect()
    }
    blocks::with_block!(w.ty, B => go::<B>(w), float => Vec::new())
}

/// The block sums U[r][i] = sum_t x_slices[r][i][t] cq[t] of one block of LEN codes.
trait Kernel {
    /// # Safety
    /// `cq` holds LEN i16, each `x[r]` S LEN i16 (slice i at i LEN); LEN a multiple of 32;
    /// the CPU has the kernel's instruction set.
    unsafe fn sums<const LEN: usize, const S: usize, const R: usize>(
        cq: *const i16,
        x: [*const i16; R],
    ) -> [[i64; S]; R];

    /// The block sums of one 256-weight block of type B (its bytes `blk`, its sc_g from
    /// `B::scales`) against the slices at x[r] (slice i at i 256), as the two exact
    /// integers T is formed from ([`t_parts`]): the codes cq = sc q unpacked into a buffer
    /// (`IntScales::codes`), then [`Kernel::sums`]; the vector kernels override it for the
    /// types they unpack in registers (`IntScales::REG`).
    /// # Safety
    /// As [`Kernel::sums`] with LEN = 256; `blk` is B::BYTES long.
    #[inline(always)]
    unsafe fn sums_block<B: IntScales, const S: usize, const R: usize>(
        blk: &[u8],
        sc: &[i16; 16],
        x: [*const i16; R],
    ) -> [[i64; 2]; R] {
        // SAFETY: the caller's.
        let u = unsafe { buffer_block::<Self, B, S, R>(blk, sc, x) };
        u.map(|u| t_parts(&u))
    }

    /// The sums of 8 blocks of 32: U[r][i][b] of the codes cq[32 b..] against the slices
    /// at x[r] + (b S + i) 32.
    /// # Safety
    /// As [`Kernel::sums`], with 256 codes and 8 blocks of S 32 slices behind each x[r];
    /// |cq| <= 128 (the 32-weight types have no sub-scale), so that a block's sum stays
    /// below 32 (2^15 - 1) 128 < 2^27 and its i32 lanes (added in i32 here) cannot wrap.
    #[inline(always)]
    unsafe fn sums32x8<const S: usize, const R: usize>(
        cq: *const i16,
        x: [*const i16; R],
    ) -> [[[i64; 8]; S]; R] {
        let mut out = [[[0i64; 8]; S]; R];
        for b in 0..8 {
            // SAFETY: the caller's.
            let u = unsafe {
                Self::sums::<32, S, R>(
                    cq.add(32 * b),
                    std::array::from_fn(|r| x[r].add(b * S * 32)),
                )
            };
            for r in 0..R {
                for i in 0..S {
                    out[r][i][b] = u[r][i];
                }
            }
        }
        out
    }
}

/// The block sum T = sum_i 2^(15 (S-i)) U_i as two exact integers: S = 3: [U_1,
/// U_2 2^15 + U_3] (the second below 2^51), T = fl(U_1 2^30 + second); S = 2:
/// [0, U_1 2^15 + U_2] (below 2^50), T = the second (module header). The vector kernels
/// form the same two integers lane by lane (every lane sum exact in i64).
#[inline(always)]
fn t_parts<const S: usize>(u: &[i64; S]) -> [i64; 2] {
    if S == 3 {
        [u[0], (u[1] << 15) + u[2]]
    } else {
        [0, (u[0] << 15) + u[1]]
    }
}

/// T of the two parts of [`t_parts`], as f64 (one rounding for S = 3, exact for S = 2).
#[inline(always)]
fn t_of<const S: usize>([hi, lo]: [i64; 2]) -> f64 {
    if S == 3 {
        (hi as f64) * 32768.0 * 32768.0 + lo as f64 // lo below 2^51: exact in f64
    } else {
        lo as f64 // below 2^50: exact
    }
}

/// [`Kernel::sums_block`] through a buffer of codes (the sums U_i, not yet parts).
/// # Safety
/// As [`Kernel::sums_block`].
#[inline(always)]
unsafe fn buffer_block<K: Kernel + ?Sized, B: IntScales, const S: usize, const R: usize>(
    blk: &[u8],
    sc: &[i16; 16],
    x: [*const i16; R],
) -> [[i64; S]; R] {
    debug_assert!(B::LEN == 256);
    let mut q = [0i8; 256];
    let mut cq = [0i16; 256];
    B::codes(blk, &mut q);
    if B::SCALED {
        for (g, (cq, q)) in cq
            .chunks_exact_mut(B::GROUP)
            .zip(q.chunks_exact(B::GROUP))
            .enumerate()
        {
            let s = sc[g];
            for (o, &v) in cq.iter_mut().zip(q) {
                *o = v as i16 * s; // |sc q| <= 2^12
            }
        }
    } else {
        for (o, &v) in cq.iter_mut().zip(&q) {
            *o = v as i16;
        }
    }
    // SAFETY: the caller's; cq holds 256 codes.
    unsafe { K::sums::<256, S, R>(cq.as_ptr(), x) }
}

struct ScalarK;
impl Kernel for ScalarK {
    #[inline(always)]
    unsafe fn sums<const LEN: usize, const S: usize, const R: usize>(
        cq: *const i16,
        x: [*const i16; R],
    ) -> [[i64; S]; R] {
        // SAFETY: the caller's.
        unsafe {
            let cq = std::slice::from_raw_parts(cq, LEN);
            std::array::from_fn(|r| {
                std::array::from_fn(|i| {
                    let xs = std::slice::from_raw_parts(x[r].add(i * LEN), LEN);
                    let mut acc = 0i64;
                    for t in 0..LEN {
                        acc += xs[t] as i64 * cq[t] as i64;
                    }
                    acc
                })
            })
        }
    }
}

/// The sum of the i32 lanes of two vectors, in i64.
/// # Safety
/// AVX2 present.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn avx2_sum([a, b]: [std::arch::x86_64::__m256i; 2]) -> i64 {
    use std::arch::x86_64::*;
    // SAFETY: the caller's.
    unsafe {
        macro_rules! wide {
            ($v:expr) => {
                _mm256_add_epi64(
                    _mm256_cvtepi32_epi64(_mm256_castsi256_si128($v)),
                    _mm256_cvtepi32_epi64(_mm256_extracti128_si256($v, 1)),
                )
            };
        }
        let s = _mm256_add_epi64(wide!(a), wide!(b));
        let mut l = [0i64; 4];
        _mm256_storeu_si256(l.as_mut_ptr() as *mut __m256i, s);
        l[0] + l[1] + l[2] + l[3]
    }
}

/// A Q6_K block's codes plus 32, as bytes, of the half `h`: [c] holds weights
/// 128 h + 32 c .. + 32, (ql & 0xF or ql >> 4) | (2 bits of qh) << 4 (`IntScales::codes`
/// of Q6K). No closures: the intrinsics must inline into the caller's target features.
/// # Safety
/// AVX2 present; 192 bytes behind `p`; h < 2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn q6k_codes256(p: *const u8, h: usize) -> [std::arch::x86_64::__m256i; 4] {
    use std::arch::x86_64::*;
    // SAFETY: the caller's.
    unsafe {
        let m4 = _mm256_set1_epi8(0xF);
        let m30 = _mm256_set1_epi8(0x30);
        let ql0 = _mm256_loadu_si256(p.add(64 * h) as *const __m256i);
        let ql1 = _mm256_loadu_si256(p.add(64 * h + 32) as *const __m256i);
        let qh = _mm256_loadu_si256(p.add(128 + 32 * h) as *const __m256i);
        // qh's bit pairs 0, 2, 4, 6 moved to bits 4-5 of each byte (the 16-bit shifts
        // move bits across bytes only into the bits the mask clears).
        [
            _mm256_or_si256(
                _mm256_and_si256(ql0, m4),
                _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30),
            ),
            _mm256_or_si256(
                _mm256_and_si256(ql1, m4),
                _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30),
            ),
            _mm256_or_si256(
                _mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                _mm256_and_si256(qh, m30),
            ),
            _mm256_or_si256(
                _mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30),
            ),
        ]
    }
}

#[cfg(target_arch = "x86_64")]
struct Avx2K;
#[cfg(target_arch = "x86_64")]
impl Kernel for Avx2K {
    #[inline(always)]
    unsafe fn sums<const LEN: usize, const S: usize, const R: usize>(
        cq: *const i16,
        x: [*const i16; R],
    ) -> [[i64; S]; R] {
        use std::arch::x86_64::*;
        // SAFETY: the caller's (AVX2 present; LEN i16 behind each pointer).
        unsafe {
            // Two accumulators per sum, alternating: at most LEN / 32 vpmaddwd each, 2
            // products per lane per vpmaddwd: 16 products per lane for LEN = 256.
            let mut acc = [[[_mm256_setzero_si256(); 2]; S]; R];
            for c in 0..LEN / 16 {
                let w = _mm256_loadu_si256(cq.add(c * 16) as *const __m256i);
                for r in 0..R {
                    for i in 0..S {
                        let xv = _mm256_loadu_si256(x[r].add(i * LEN + c * 16) as *const __m256i);
                        let p = _mm256_madd_epi16(xv, w);
                        acc[r][i][c % 2] = _mm256_add_epi32(acc[r][i][c % 2], p);
                    }
                }
            }
            std::array::from_fn(|r| std::array::from_fn(|i| avx2_sum(acc[r][i])))
        }
    }

    #[inline(always)]
    unsafe fn sums_block<B: IntScales, const S: usize, const R: usize>(
        blk: &[u8],
        sc: &[i16; 16],
        x: [*const i16; R],
    ) -> [[i64; 2]; R] {
        use std::arch::x86_64::*;
        if B::REG == RegCodes::Buffer {
            // SAFETY: the caller's.
            let u = unsafe { buffer_block::<Self, B, S, R>(blk, sc, x) };
            return u.map(|u| t_parts(&u));
        }
        // SAFETY: the caller's (AVX2 present; B::BYTES behind blk, 256 codes per slice).
        unsafe {
            // Two accumulators per sum, one per 16-code half of each group of 32: 8
            // vpmaddwd each, 2 products per lane each: 16 products per lane (as `sums`).
            let mut acc = [[[_mm256_setzero_si256(); 2]; S]; R];
            // The codes of weights 32 g + 16 h .. + 16 (i16), into every sum.
            macro_rules! add {
                ($g:expr, $h:expr, $w:expr) => {{
                    let w = $w;
                    for r in 0..R {
                        for i in 0..S {
                            let xv = _mm256_loadu_si256(
                                x[r].add(i * 256 + 32 * $g + 16 * $h) as *const __m256i
                            );
                            acc[r][i][$h] =
                                _mm256_add_epi32(acc[r][i][$h], _mm256_madd_epi16(xv, w));
                        }
                    }
                }};
            }
            let p = blk.as_ptr();
            let m4 = _mm256_set1_epi8(0xF);
            // Bytes 0..16 and 16..32 of a vector, widened to i16 (macros, not closures:
            // the intrinsics must inline into the caller's target features).
            macro_rules! lo16 {
                ($v:expr) => {
                    _mm256_cvtepu8_epi16(_mm256_castsi256_si128($v))
                };
            }
            macro_rules! hi16 {
                ($v:expr) => {
                    _mm256_cvtepu8_epi16(_mm256_extracti128_si256($v, 1))
                };
            }
            if B::REG == RegCodes::Q4K {
                for j in 0..4 {
                    let v = _mm256_loadu_si256(p.add(16 + 32 * j) as *const __m256i);
                    let nibs = [
                        _mm256_and_si256(v, m4),
                        _mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
                    ];
                    for h in 0..2 {
                        let (g, nib) = (2 * j + h, nibs[h]);
                        let s = _mm256_set1_epi16(sc[g]);
                        add!(g, 0, _mm256_mullo_epi16(lo16!(nib), s));
                        add!(g, 1, _mm256_mullo_epi16(hi16!(nib), s));
                    }
                }
            } else {
                let off = _mm256_set1_epi16(32);
                for h in 0..2 {
                    let q = q6k_codes256(p, h);
                    for c in 0..4 {
                        let q = q[c];
                        let g = 4 * h + c; // weights 32 g ..: sc groups 2 g and 2 g + 1
                        let w0 = _mm256_sub_epi16(lo16!(q), off);
                        let w1 = _mm256_sub_epi16(hi16!(q), off);
                        add!(g, 0, _mm256_mullo_epi16(w0, _mm256_set1_epi16(sc[2 * g])));
                        add!(
                            g,
                            1,
                            _mm256_mullo_epi16(w1, _mm256_set1_epi16(sc[2 * g + 1]))
                        );
                    }
                }
            }
            std::array::from_fn(|r| {
                let u: [i64; S] = std::array::from_fn(|i| avx2_sum(acc[r][i]));
                t_parts(&u)
            })
        }
    }

    #[inline(always)]
    unsafe fn sums32x8<const S: usize, const R: usize>(
        cq: *const i16,
        x: [*const i16; R],
    ) -> [[[i64; 8]; S]; R] {
        use std::arch::x86_64::*;
        // SAFETY: the caller's (AVX2 present; 8 blocks behind each pointer).
        unsafe {
            let w: [__m256i; 16] =
                std::array::from_fn(|h| _mm256_loadu_si256(cq.add(16 * h) as *const __m256i));
            let mut out = [[[0i64; 8]; S]; R];
            for r in 0..R {
                for i in 0..S {
                    // Per block two vpmaddwd (4 products per lane, |lane| < 2^25), then
                    // the 8 vectors' lane sums by vphaddd and a 128-bit exchange.
                    let a: [__m256i; 8] = std::array::from_fn(|b| {
                        let p = x[r].add((b * S + i) * 32);
                        _mm256_add_epi32(
                            _mm256_madd_epi16(_mm256_loadu_si256(p as *const __m256i), w[2 * b]),
                            _mm256_madd_epi16(
                                _mm256_loadu_si256(p.add(16) as *const __m256i),
                                w[2 * b + 1],
                            ),
                        )
                    });
                    let h: [__m256i; 4] =
                        std::array::from_fn(|p| _mm256_hadd_epi32(a[2 * p], a[2 * p + 1]));
                    let g0 = _mm256_hadd_epi32(h[0], h[1]);
                    let g1 = _mm256_hadd_epi32(h[2], h[3]);
                    // g0: blocks 0..4 from each 128-bit half; g1: blocks 4..8.
                    let s = _mm256_add_epi32(
                        _mm256_permute2x128_si256(g0, g1, 0x20),
                        _mm256_permute2x128_si256(g0, g1, 0x31),
                    );
                    let mut l = [0i32; 8];
                    _mm256_storeu_si256(l.as_mut_ptr() as *mut __m256i, s);
                    for b in 0..8 {
                        out[r][i][b] = l[b] as i64;
                    }
                }
            }
            out
        }
    }
}

/// The sum of the i32 lanes of a vector, in i64.
/// # Safety
/// AVX-512 F present.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn vnni_sum(v: std::arch::x86_64::__m512i) -> i64 {
    use std::arch::x86_64::*;
    // SAFETY: the caller's.
    unsafe {
        let lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v));
        let hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, 1));
        _mm512_reduce_add_epi64(_mm512_add_epi64(lo, hi))
    }
}

/// `vpdpwssd` itself, its second factor read from memory (64 bytes at `p`, the load
/// folded into the instruction): LLVM splits `_mm512_dpwssd_epi32` into `vpmaddwd` +
/// `vpaddd` (the same integers, twice the instructions).
/// # Safety
/// AVX-512 F and VNNI present; 64 readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
#[inline]
unsafe fn dpwssd_mem(
    acc: std::arch::x86_64::__m512i,
    a: std::arch::x86_64::__m512i,
    p: *const i16,
) -> std::arch::x86_64::__m512i {
    let mut acc = acc;
    // SAFETY: the caller's; reads 64 bytes at p.
    unsafe {
        std::arch::asm!(
            "vpdpwssd {acc}, {a}, zmmword ptr [{p}]",
            acc = inout(zmm_reg) acc,
            a = in(zmm_reg) a,
            p = in(reg) p,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    acc
}

/// The sums of the i64 lanes of two vectors: [sum of a, sum of b].
/// # Safety
/// AVX-512 F present.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn vnni_pair_sum(a: std::arch::x86_64::__m512i, b: std::arch::x86_64::__m512i) -> [i64; 2] {
    use std::arch::x86_64::*;
    // SAFETY: the caller's.
    unsafe {
        // Per 128-bit chunk [a lanes 2c + 2c+1, b lanes 2c + 2c+1], then the chunks added.
        let t = _mm512_add_epi64(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
        let u = _mm256_add_epi64(_mm512_castsi512_si256(t), _mm512_extracti64x4_epi64(t, 1));
        let v = _mm_add_epi64(_mm256_castsi256_si128(u), _mm256_extracti128_si256(u, 1));
        [_mm_cvtsi128_si64(v), _mm_extract_epi64(v, 1)]
    }
}

#[cfg(target_arch = "x86_64")]
struct VnniK;
#[cfg(target_arch = "x86_64")]
impl Kernel for VnniK {
    #[inline(always)]
    unsafe fn sums<const LEN: usize, const S: usize, const R: usize>(
        cq: *const i16,
        x: [*const i16; R],
    ) -> [[i64; S]; R] {
        use std::arch::x86_64::*;
        // SAFETY: the caller's (AVX-512 F, BW, VNNI present; LEN i16 behind each pointer).
        unsafe {
            // One accumulator per sum: 2 products per lane per vpdpwssd, LEN / 32 of them:
            // 16 products per lane for LEN = 256.
            let mut acc = [[_mm512_setzero_si512(); S]; R];
            for c in 0..LEN / 32 {
                let w = _mm512_loadu_si512(cq.add(c * 32) as *const __m512i);
                for r in 0..R {
                    for i in 0..S {
                        let xv = _mm512_loadu_si512(x[r].add(i * LEN + c * 32) as *const __m512i);
                        acc[r][i] = _mm512_dpwssd_epi32(acc[r][i], xv, w);
                    }
                }
            }
            std::array::from_fn(|r| std::array::from_fn(|i| vnni_sum(acc[r][i])))
        }
    }

    #[inline(always)]
    unsafe fn sums_block<B: IntScales, const S: usize, const R: usize>(
        blk: &[u8],
        sc: &[i16; 16],
        x: [*const i16; R],
    ) -> [[i64; 2]; R] {
        use std::arch::x86_64::*;
        if B::REG == RegCodes::Buffer {
            // SAFETY: the caller's.
            let u = unsafe { buffer_block::<Self, B, S, R>(blk, sc, x) };
            return u.map(|u| t_parts(&u));
        }
        // SAFETY: the caller's (AVX-512 F, BW, VNNI present; B::BYTES behind blk).
        unsafe {
            let scv = _mm512_castsi256_si512(_mm256_loadu_si256(sc.as_ptr() as *const __m256i));
            let acc = vnni_block_acc::<B, S, R>(blk.as_ptr(), scv, x);
            // (A loop, not a closure: the intrinsics must inline into the target features.)
            let mut out = [[0i64; 2]; R];
            for r in 0..R {
                let (hi, lo) = vnni_parts::<S>(acc[r]);
                out[r] = vnni_pair_sum(hi, lo);
            }
            out
        }
    }

    #[inline(always)]
    unsafe fn sums32x8<const S: usize, const R: usize>(
        cq: *const i16,
        x: [*const i16; R],
    ) -> [[[i64; 8]; S]; R] {
        use std::arch::x86_64::*;
        // SAFETY: the caller's (AVX-512 F, BW, VNNI present; 8 blocks behind each pointer).
        unsafe {
            let w: [__m512i; 8] =
                std::array::from_fn(|b| _mm512_loadu_si512(cq.add(32 * b) as *const __m512i));
            let mut out = [[[0i64; 8]; S]; R];
            for r in 0..R {
                for i in 0..S {
                    // One vpdpwssd per block (2 products per lane, |lane| < 2^24), then
                    // the 8 vectors' lane sums by a transposing tree (|sum| < 2^27).
                    let a: [__m512i; 8] = std::array::from_fn(|b| {
                        let xv = _mm512_loadu_si512(x[r].add((b * S + i) * 32) as *const __m512i);
                        _mm512_dpwssd_epi32(_mm512_setzero_si512(), xv, w[b])
                    });
                    let t: [__m512i; 4] = std::array::from_fn(|p| {
                        let (u, v) = (a[2 * p], a[2 * p + 1]);
                        _mm512_add_epi32(_mm512_unpacklo_epi32(u, v), _mm512_unpackhi_epi32(u, v))
                    });
                    let u: [__m512i; 2] = std::array::from_fn(|p| {
                        let (a, b) = (t[2 * p], t[2 * p + 1]);
                        _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b))
                    });
                    // u[p], 128-bit chunk c: the 4 lanes of chunk c of blocks 4p..4p+4.
                    let v = _mm512_add_epi32(
                        _mm512_shuffle_i32x4(u[0], u[1], 0b10_00_10_00),
                        _mm512_shuffle_i32x4(u[0], u[1], 0b11_01_11_01),
                    );
                    let s = _mm512_add_epi32(
                        _mm512_shuffle_i32x4(v, v, 0b00_00_10_00),
                        _mm512_shuffle_i32x4(v, v, 0b00_00_11_01),
                    );
                    let mut l = [0i32; 16];
                    _mm512_storeu_si512(l.as_mut_ptr() as *mut __m512i, s);
                    for b in 0..8 {
                        out[r][i][b] = l[b] as i64;
                    }
                }
            }
            out
        }
    }
}

/// The accumulators of one 256-weight block of a type whose codes the vector kernels
/// unpack in registers (`IntScales::REG`): acc[r][i] holds 16 i32 lanes whose sum is
/// U_i of row r, 16 products per lane (as `Kernel::sums`). `scv`: the block's sc_g as
/// i16 lanes 0..16 (lanes 16..32 unused).
/// # Safety
/// AVX-512 F, BW, VNNI present; B::BYTES behind `p`; S 256 slices behind each x[r].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn vnni_block_acc<B: IntScales, const S: usize, const R: usize>(
    p: *const u8,
    scv: std::arch::x86_64::__m512i,
    x: [*const i16; R],
) -> [[std::arch::x86_64::__m512i; S]; R] {
    use std::arch::x86_64::*;
    // SAFETY: the caller's.
    unsafe {
        // Two accumulators per sum (even and odd groups: chains half as long), one
        // vpdpwssd per group of 32 codes; added at the end: 16 products per lane in all
        // (as `sums`), every partial sum below their absolute sum, so no i32 wraps.
        let mut acc = [[[_mm512_setzero_si512(); S]; R]; 2];
        // The codes of weights 32 g .. 32 g + 32 (i16), into every sum.
        macro_rules! add {
            ($g:expr, $w:expr) => {{
                let w = $w;
                let acc = &mut acc[$g % 2];
                for r in 0..R {
                    for i in 0..S {
                        acc[r][i] = dpwssd_mem(acc[r][i], w, x[r].add(i * 256 + 32 * $g));
                    }
                }
            }};
        }
        if B::REG == RegCodes::Q4K {
            // Group g's multiplier: sc_g in every lane.
            let m4 = _mm256_set1_epi8(0xF);
            for j in 0..4 {
                let v = _mm256_loadu_si256(p.add(16 + 32 * j) as *const __m256i);
                let lo = _mm512_cvtepu8_epi16(_mm256_and_si256(v, m4));
                let hi = _mm512_cvtepu8_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
                let s_lo = _mm512_permutexvar_epi16(_mm512_set1_epi16(2 * j as i16), scv);
                let s_hi = _mm512_permutexvar_epi16(_mm512_set1_epi16(2 * j as i16 + 1), scv);
                add!(2 * j, _mm512_mullo_epi16(lo, s_lo));
                add!(2 * j + 1, _mm512_mullo_epi16(hi, s_hi));
            }
        } else {
            // Lane l of group g's multiplier: sc[2 g + l / 16].
            let upper = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(1), 1);
            let off = _mm512_set1_epi16(32);
            for h in 0..2 {
                let q = q6k_codes256(p, h);
                for c in 0..4 {
                    let q = q[c];
                    let g = 4 * h + c;
                    let idx = _mm512_add_epi16(upper, _mm512_set1_epi16(2 * g as i16));
                    let s = _mm512_permutexvar_epi16(idx, scv);
                    let w = _mm512_sub_epi16(_mm512_cvtepu8_epi16(q), off);
                    add!(g, _mm512_mullo_epi16(w, s));
                }
            }
        }
        std::array::from_fn(|r| {
            std::array::from_fn(|i| _mm512_add_epi32(acc[0][r][i], acc[1][r][i]))
        })
    }
}

/// The two parts of T ([`t_parts`]) lane by lane, from a block's accumulators: 16 i32
/// lanes to 8 i64 (pairs added), the slices combined exactly (|lane| < 2^32 2^15 +
/// 2^32); the lanes of each part add up to that part's integer.
/// # Safety
/// AVX-512 F present.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn vnni_parts<const S: usize>(
    a: [std::arch::x86_64::__m512i; S],
) -> (std::arch::x86_64::__m512i, std::arch::x86_64::__m512i) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's.
    unsafe {
        macro_rules! wide {
            ($v:expr) => {
                _mm512_add_epi64(
                    _mm512_cvtepi32_epi64(_mm512_castsi512_si256($v)),
                    _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64($v, 1)),
                )
            };
        }
        if S == 3 {
            let lo = _mm512_add_epi64(_mm512_slli_epi64(wide!(a[1]), 15), wide!(a[2]));
            (wide!(a[0]), lo)
        } else {
            let lo = _mm512_add_epi64(_mm512_slli_epi64(wide!(a[0]), 15), wide!(a[1]));
            (_mm512_setzero_si512(), lo)
        }
    }
}

/// The lane sums of 8 vectors of i64: lane b of the result is the sum of v[b]'s lanes
/// (a transposing tree; integer adds, so the same integers as any other order).
/// # Safety
/// AVX-512 F present.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn vnni_sums8(v: &[std::arch::x86_64::__m512i; 8]) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    // SAFETY: the caller's.
    unsafe {
        // t[p], 128-bit chunk c: [chunk c of v[2p] added, chunk c of v[2p + 1] added].
        let t: [__m512i; 4] = std::array::from_fn(|p| {
            let (a, b) = (v[2 * p], v[2 * p + 1]);
            _mm512_add_epi64(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b))
        });
        // u[p]: chunks [t[2p] 0 + 1, t[2p] 2 + 3, t[2p + 1] 0 + 1, t[2p + 1] 2 + 3].
        let u: [__m512i; 2] = std::array::from_fn(|p| {
            let (a, b) = (t[2 * p], t[2 * p + 1]);
            _mm512_add_epi64(
                _mm512_shuffle_i64x2(a, b, 0b10_00_10_00),
                _mm512_shuffle_i64x2(a, b, 0b11_01_11_01),
            )
        });
        _mm512_add_epi64(
            _mm512_shuffle_i64x2(u[0], u[1], 0b10_00_10_00),
            _mm512_shuffle_i64x2(u[0], u[1], 0b11_01_11_01),
        )
    }
}

/// `IntScales::scales` of a Q4_K or Q6_K block in vectors: (sc_g as i16 lanes 0..16, m_g
/// as i64 lanes 0..8 (Q4_K; zero for Q6_K), A, C), the same values.
/// # Safety
/// AVX-512 F, BW and F16C present; B::BYTES behind `p`; B::REG is Q4K or Q6K.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn vnni_scales<B: IntScales>(
    p: *const u8,
) -> (
    std::arch::x86_64::__m512i,
    std::arch::x86_64::__m512i,
    f64,
    f64,
) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's.
    unsafe {
        if B::REG == RegCodes::Q4K {
            // d, dmin (f16, exact in f32); the 12 scale bytes word-parallel
            // (`scale_min_k4`): groups 0..4 are the low 6 bits of bytes 0..4 (sc) and 4..8
            // (m); groups 4..8 take 4 bits from bytes 8..12 and their top 2 from the top
            // bits of bytes 0..4 (sc) and 4..8 (m). A u32 shift moves a neighbour's bits
            // only into bits the masks clear.
            let dd = _mm_cvtph_ps(_mm_cvtsi32_si128((p as *const i32).read_unaligned()));
            let (d, dmin) = (_mm_cvtss_f32(dd), _mm_cvtss_f32(_mm_movehdup_ps(dd)));
            let w = |o: usize| (p.add(4 + o) as *const u32).read_unaligned();
            let (a, b, c) = (w(0), w(4), w(8));
            let sc_lo = a & 0x3F3F_3F3F;
            let m_lo = b & 0x3F3F_3F3F;
            let sc_hi = (c & 0x0F0F_0F0F) | ((a >> 2) & 0x3030_3030);
            let m_hi = ((c >> 4) & 0x0F0F_0F0F) | ((b >> 2) & 0x3030_3030);
            let sc = sc_lo as u64 | (sc_hi as u64) << 32;
            let m = m_lo as u64 | (m_hi as u64) << 32;
            let scv = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_cvtsi64_si128(sc as i64)));
            let mv = _mm512_cvtepu8_epi64(_mm_cvtsi64_si128(m as i64));
            (scv, mv, d as f64, dmin as f64)
        } else {
            let d = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(
                (p.add(208) as *const u16).read_unaligned() as i32,
            )));
            let scv = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(_mm_loadu_si128(
                p.add(192) as *const __m128i
            )));
            (scv, _mm512_setzero_si512(), d as f64, 0.0)
        }
    }
}

/// [`vnni_scales`] as arrays (sc_g, m_g, A's bits, C's bits), for `check_scales`.
/// # Safety
/// As [`vnni_scales`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx2,f16c")]
unsafe fn vnni_scales_array<B: IntScales>(blk: &[u8]) -> ([i16; 16], [i16; 16], u64, u64) {
    use std::arch::x86_64::*;
    let (mut sc, mut m) = ([0i16; 16], [0i64; 8]);
    // SAFETY: the caller's; the stores write 32 and 64 bytes into the arrays.
    unsafe {
        let (scv, mv, a, c) = vnni_scales::<B>(blk.as_ptr());
        _mm256_storeu_si256(sc.as_mut_ptr() as *mut __m256i, _mm512_castsi512_si256(scv));
        _mm512_storeu_si512(m.as_mut_ptr() as *mut __m512i, mv);
        let mut m16 = [0i16; 16];
        for (o, v) in m16.iter_mut().zip(m) {
            *o = v as i16;
        }
        (sc, m16, a.to_bits(), c.to_bits())
    }
}

/// [`rows_with`] for the types the VNNI kernel unpacks in registers (Q4_K, Q6_K), eight
/// blocks at a time: each block's accumulators are widened to the two parts of T lane by
/// lane ([`vnni_parts`]), the parts of 8 blocks (and the products m_g X_g of the offset
/// term) are added lane-wise by one transposing tree ([`vnni_sums8`]), and the f64 steps
/// of `rows_with` run on 8 blocks' lanes at once, operation for operation (each one
/// elementwise and correctly rounded), before the blocks are added into the row's sum in
/// their order. So the same integers and the same f64 values, hence the same y, as
/// `rows_with` on every kernel; only the per-block horizontal work and the scalar scale
/// parsing are gone.
/// # Safety
/// AVX-512 F, BW, VNNI, AVX2 and F16C present; B::REG is Q4K or Q6K.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vnni,avx2,f16c")]
unsafe fn rows_vnni_reg<B: IntScales, const R: usize, const S: usize>(
    xs: &XSlices,
    w: QRows,
    j0: usize,
    out: &mut [[f64; R]],
) {
    use std::arch::x86_64::*;
    let nb = xs.nb;
    debug_assert!(B::LEN == 256 && B::REG != RegCodes::Buffer && xs.s == S);
    debug_assert!(!B::HAS_MIN || xs.groups == 8);
    // SAFETY (whole body): the features are this function's; B::BYTES behind each blk,
    // S 256 slices of block b behind each x pointer and 8 X_g per row and block (slice_x).
    unsafe {
        let zero = _mm512_setzero_si512();
        for (t, o) in out.iter_mut().enumerate() {
            let row = w.row(j0 + t);
            let mut acc = [0f64; R];
            let mut finite = true;
            'blocks: for b0 in (0..nb).step_by(8) {
                let cnt = 8.min(nb - b0);
                let (mut asc, mut csc) = ([0f64; 8], [0f64; 8]);
                let mut hi = [[zero; 8]; R];
                let mut lo = [[zero; 8]; R];
                let mut nm = [[zero; 8]; R];
                for bb in 0..cnt {
                    let b = b0 + bb;
                    let blk = row[b * B::BYTES..(b + 1) * B::BYTES].as_ptr();
                    let (scv, mv, a, c) = vnni_scales::<B>(blk);
                    if !(a.is_finite() && c.is_finite()) {
                        finite = false;
                        break 'blocks;
                    }
                    (asc[bb], csc[bb]) = (a, c);
                    let ptrs: [*const i16; R] =
                        std::array::from_fn(|r| xs.slices[(r * xs.nbp + b) * S * 256..].as_ptr());
                    let accs = vnni_block_acc::<B, S, R>(blk, scv, ptrs);
                    for r in 0..R {
                        (hi[r][bb], lo[r][bb]) = vnni_parts::<S>(accs[r]);
                        if B::HAS_MIN {
                            // m_g X_g, |.| < 2^6 2^49: exact in i64.
                            let xg = xs.xg[(r * nb + b) * 8..].as_ptr() as *const __m512i;
                            nm[r][bb] = _mm512_mullo_epi64(_mm512_loadu_si512(xg), mv);
                        }
                    }
                }
                let mut ps = [0f64; 8];
                for r in 0..R {
                    ps[..cnt].copy_from_slice(&xs.pscale[r * nb + b0..r * nb + b0 + cnt]);
                    let p = _mm512_loadu_pd(ps.as_ptr());
                    let (h, l) = (vnni_sums8(&hi[r]), vnni_sums8(&lo[r]));
                    // `t_of`: S = 3: fl(hi 2^30 + lo), S = 2: lo (both conversions exact).
                    let tv = if S == 3 {
                        let h = _mm512_mul_pd(_mm512_cvtepi64_pd(h), _mm512_set1_pd(1073741824.0));
                        _mm512_add_pd(h, _mm512_cvtepi64_pd(l))
                    } else {
                        _mm512_cvtepi64_pd(l)
                    };
                    // v = t (A p), then v -= fl(N) (C p).
                    let mut v = _mm512_mul_pd(tv, _mm512_mul_pd(_mm512_loadu_pd(asc.as_ptr()), p));
                    if B::HAS_MIN {
                        let n = _mm512_cvtepi64_pd(vnni_sums8(&nm[r]));
                        let cp = _mm512_mul_pd(_mm512_loadu_pd(csc.as_ptr()), p);
                        v = _mm512_sub_pd(v, _mm512_mul_pd(n, cp));
                    }
                    let mut vs = [0f64; 8];
                    _mm512_storeu_pd(vs.as_mut_ptr(), v);
                    for bb in 0..cnt {
                        if ps[bb] != 0.0 {
                            acc[r] += vs[bb];
                        }
                    }
                }
            }
            for r in 0..R {
                o[r] = if finite && xs.ok[r] { acc[r] } else { f64::NAN };
            }
        }
    }
}

/// The integer tier's sums of weight rows [j0, j0 + out.len()) against the R rows of x:
/// out[t][r] the computed y (bias not added) or NaN where this tier does not decide (a
/// row of x with a non-finite element, a weight row with a non-finite scale).
#[inline(always)]
fn rows_with<B: IntScales, K: Kernel, const R: usize, const S: usize>(
    xs: &XSlices,
    w: QRows,
    j0: usize,
    out: &mut [[f64; R]],
) {
    let nb = xs.nb;
    let len = B::LEN;
    debug_assert!(xs.len == len && xs.s == S && xs.groups == B::LEN / B::GROUP);
    let mut q = [0i8; 256];
    let mut cq = [0i16; 256];
    let mut sc = [0i16; 16];
    // Blocks per kernel call: 8 of 32 weights, or one of 256.
    let per = 256 / len;
    let (mut ascs, mut cscs) = ([0f64; 8], [0f64; 8]);
    let mut mis = [[0i16; 16]; 8];
    for (t, o) in out.iter_mut().enumerate() {
        let row = w.row(j0 + t);
        let mut acc = [0f64; R];
        let mut finite = true;
        'blocks: for b0 in (0..nb).step_by(per) {
            let cnt = per.min(nb - b0);
            for bb in 0..per {
                let cq = &mut cq[bb * len..(bb + 1) * len];
                if bb >= cnt {
                    cq.fill(0); // padding: the slices there are zeros too
                    continue;
                }
                let blk = &row[(b0 + bb) * B::BYTES..(b0 + bb + 1) * B::BYTES];
                let (asc, csc) = B::scales(blk, &mut sc, &mut mis[bb]);
                if !(asc.is_finite() && csc.is_finite()) {
                    finite = false;
                    break 'blocks;
                }
                (ascs[bb], cscs[bb]) = (asc, csc);
                if len == 256 {
                    break; // the codes in `sums_block`
                }
                B::codes(blk, &mut q[..len]);
                if B::SCALED {
                    for (g, (cq, q)) in cq
                        .chunks_exact_mut(B::GROUP)
                        .zip(q[..len].chunks_exact(B::GROUP))
                        .enumerate()
                    {
                        let s = sc[g];
                        for (o, &v) in cq.iter_mut().zip(q) {
                            *o = v as i16 * s; // |sc q| <= 2^12
                        }
                    }
                } else {
                    for (o, &v) in cq.iter_mut().zip(&q[..len]) {
                        *o = v as i16;
                    }
                }
            }
            let ptrs: [*const i16; R] =
                std::array::from_fn(|r| xs.slices[((r * xs.nbp + b0) * S) * len..].as_ptr());
            // SAFETY: cq holds `per` blocks of codes, each row's slices `per` blocks from
            // b0 (`slice_x` pads 32-blocks to a multiple of 8); the caller runs K only
            // where the CPU has it.
            // The parts of T ([`t_parts`]) per row and block.
            let parts: [[[i64; 2]; 8]; R] = unsafe {
                if B::LEN == 32 {
                    let u = K::sums32x8::<S, R>(cq.as_ptr(), ptrs);
                    std::array::from_fn(|r| {
                        std::array::from_fn(|bb| {
                            t_parts::<S>(&std::array::from_fn(|i| u[r][i][bb]))
                        })
                    })
                } else {
                    let blk = &row[b0 * B::BYTES..(b0 + 1) * B::BYTES];
                    let u = K::sums_block::<B, S, R>(blk, &sc, ptrs);
                    std::array::from_fn(|r| {
                        std::array::from_fn(|bb| u[r].map(|v| if bb == 0 { v } else { 0 }))
                    })
                }
            };
            for bb in 0..cnt {
                let b = b0 + bb;
                for r in 0..R {
                    let p = xs.pscale[r * nb + b];
                    if p == 0.0 {
                        continue;
                    }
                    let tsum = t_of::<S>(parts[r][bb]);
                    let mut v = tsum * (ascs[bb] * p);
                    if B::HAS_MIN {
                        let xg = &xs.xg[(r * nb + b) * xs.groups..][..xs.groups];
                        let n: i64 = xg.iter().zip(&mis[bb]).map(|(&x, &m)| x * m as i64).sum();
                        v -= n as f64 * (cscs[bb] * p);
                    }
                    acc[r] += v;
                }
            }
        }
        for r in 0..R {
            o[r] = if finite && xs.ok[r] { acc[r] } else { f64::NAN };
        }
    }
}

macro_rules! entry {
    ($name:ident, $k:ty, $($feat:literal)?) => {
        $(#[target_feature(enable = $feat)])?
        #[allow(unused_unsafe)]
        unsafe fn $name<B: IntScales, const R: usize, const S: usize>(
            xs: &XSlices,
            w: QRows,
            j0: usize,
            out: &mut [[f64; R]],
        ) {
            rows_with::<B, $k, R, S>(xs, w, j0, out)
        }
    };
}
entry!(rows_scalar, ScalarK,);
#[cfg(target_arch = "x86_64")]
entry!(rows_avx2, Avx2K, "avx2");
#[cfg(target_arch = "x86_64")]
entry!(rows_vnni, VnniK, "avx512f,avx512bw,avx512vnni,avx2");

/// [`rows_with`] on `path`'s kernel.
#[inline(always)]
pub(crate) fn int_rows<B: IntScales, const R: usize>(
    path: IntPath,
    xs: &XSlices,
    w: QRows,
    j0: usize,
    out: &mut [[f64; R]],
) {
    macro_rules! go {
        ($s:literal) => {
            // SAFETY: IntPath::of gives a vector kernel only where the CPU has it.
            unsafe {
                match path {
                    #[cfg(target_arch = "x86_64")]
                    IntPath::Avx512Vnni if B::REG != RegCodes::Buffer => {
                        rows_vnni_reg::<B, R, $s>(xs, w, j0, out)
                    }
                    #[cfg(target_arch = "x86_64")]
                    IntPath::Avx512Vnni => rows_vnni::<B, R, $s>(xs, w, j0, out),
                    #[cfg(target_arch = "x86_64")]
                    IntPath::Avx2 => rows_avx2::<B, R, $s>(xs, w, j0, out),
                    _ => rows_scalar::<B, R, $s>(xs, w, j0, out),
                }
            }
        };
    }
    if xs.s == 3 { go!(3) } else { go!(2) }
}

/// What the decisions of one product need.
pub(crate) struct IntCtx {
    pub path: IntPath,
    pub xs: XSlices,
    /// (nb + 8) 2^-53 (1 + 2^-20): the coefficient of |x| P_j + |bias|.
    pub coeff: f64,
}

impl IntCtx {
    /// The context of a product of m rows of x (element (i, q) at `x(i, q)`) with a
    /// weight of type `ty` (quantized) and rows of k, on `path`.
    pub(crate) fn new<T: Input>(
        path: VectorPath,
        ty: candle_core::quantized::GgmlDType,
        m: usize,
        k: usize,
        x: impl Fn(usize, usize) -> f32,
    ) -> Option<IntCtx> {
        let (len, group, has_min) =
            blocks::with_block!(ty, B => (B::LEN, B::GROUP, B::HAS_MIN), float => return None);
        let s = if std::mem::size_of::<T>() == 4 { 3 } else { 2 };
        let xs = slice_x(m, k, s, len, group, has_min, x);
        Some(IntCtx {
            path: IntPath::of(path),
            coeff: (k / len + 8) as f64 * GAMMA_UNIT,
            xs,
        })
    }

    /// The error bound of output (i, j): y's distance to the exact sum (+ bias) is at
    /// most this (module header). `x_norm` |x_i|, `p` P_j, `w_norm` |w_j|.
    #[inline(always)]
    pub(crate) fn err(&self, i: usize, x_norm: f64, p: f64, w_norm: f64, bias: f64) -> f64 {
        (self.coeff * (x_norm * p + bias.abs()) + self.xs.tail[i] * w_norm * TAIL_SLACK) * ERR_SLACK
    }
}

/// The block sums of one block (`cq` LEN codes, `x` S slices of LEN) on `path`'s kernel,
/// for tests that compare the kernels on extreme values.
#[doc(hidden)]
pub fn block_sums(path: IntPath, len: usize, s: usize, cq: &[i16], x: &[i16]) -> Vec<i64> {
    assert!(cq.len() == len && x.len() == s * len && (len == 32 || len == 256));
    assert!(
        IntPath::available().contains(&path),
        "{path:?} is not available"
    );
    #[inline(always)]
    fn on<K: Kernel>(len: usize, s: usize, cq: &[i16], x: &[i16]) -> Vec<i64> {
        // SAFETY: sizes checked by the caller; the path is available (asserted).
        unsafe {
            match (len, s) {
                (32, 2) => K::sums::<32, 2, 1>(cq.as_ptr(), [x.as_ptr()])[0].to_vec(),
                (32, 3) => K::sums::<32, 3, 1>(cq.as_ptr(), [x.as_ptr()])[0].to_vec(),
                (256, 2) => K::sums::<256, 2, 1>(cq.as_ptr(), [x.as_ptr()])[0].to_vec(),
                _ => K::sums::<256, 3, 1>(cq.as_ptr(), [x.as_ptr()])[0].to_vec(),
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2")]
        fn avx2(len: usize, s: usize, cq: &[i16], x: &[i16]) -> Vec<i64> {
            on::<Avx2K>(len, s, cq, x)
        }
        #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2")]
        fn vnni(len: usize, s: usize, cq: &[i16], x: &[i16]) -> Vec<i64> {
            on::<VnniK>(len, s, cq, x)
        }
        match path {
            // SAFETY: the CPU has the path (asserted).
            IntPath::Avx2 => return unsafe { avx2(len, s, cq, x) },
            IntPath::Avx512Vnni => return unsafe { vnni(len, s, cq, x) },
            IntPath::Scalar => {}
        }
    }
    on::<ScalarK>(len, s, cq, x)
}

/// The sums of 8 blocks of 32 (`cq` 256 codes, `x` 8 blocks of S slices of 32, block b's
/// slice i at (b S + i) 32) on `path`'s kernel: U[i][b] at i 8 + b.
#[doc(hidden)]
pub fn block_sums_32x8(path: IntPath, s: usize, cq: &[i16], x: &[i16]) -> Vec<i64> {
    assert!(cq.len() == 256 && x.len() == 256 * s && (s == 2 || s == 3));
    assert!(
        IntPath::available().contains(&path),
        "{path:?} is not available"
    );
    #[inline(always)]
    fn on<K: Kernel>(s: usize, cq: &[i16], x: &[i16]) -> Vec<i64> {
        // SAFETY: sizes checked by the caller; the path is available (asserted).
        unsafe {
            match s {
                2 => K::sums32x8::<2, 1>(cq.as_ptr(), [x.as_ptr()])[0].concat(),
                _ => K::sums32x8::<3, 1>(cq.as_ptr(), [x.as_ptr()])[0].concat(),
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2")]
        fn avx2(s: usize, cq: &[i16], x: &[i16]) -> Vec<i64> {
            on::<Avx2K>(s, cq, x)
        }
        #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2")]
        fn vnni(s: usize, cq: &[i16], x: &[i16]) -> Vec<i64> {
            on::<VnniK>(s, cq, x)
        }
        match path {
            // SAFETY: the CPU has the path (asserted).
            IntPath::Avx2 => return unsafe { avx2(s, cq, x) },
            IntPath::Avx512Vnni => return unsafe { vnni(s, cq, x) },
            IntPath::Scalar => {}
        }
    }
    on::<ScalarK>(s, cq, x)
}

/// The block sum of one block of a 256-weight type (`blk` its bytes, `x` S slices of 256)
/// on `path`'s kernel as its two exact parts, S = 3: [U_1, U_2 2^15 + U_3], S = 2:
/// [0, U_1 2^15 + U_2], the codes unpacked as that kernel does in the GEMV
/// (`Kernel::sums_block`: in registers for Q4_K and Q6_K on the vector kernels).
#[doc(hidden)]
pub fn block_sums_of(
    path: IntPath,
    ty: candle_core::quantized::GgmlDType,
    blk: &[u8],
    x: &[i16],
) -> Vec<i64> {
    assert!(
        IntPath::available().contains(&path),
        "{path:?} is not available"
    );
    #[inline(always)]
    fn on<K: Kernel, B: IntScales>(blk: &[u8], x: &[i16]) -> Vec<i64> {
        assert!(B::LEN == 256 && blk.len() == B::BYTES && (x.len() == 512 || x.len() == 768));
        let (mut sc, mut m) = ([0i16; 16], [0i16; 16]);
        B::scales(blk, &mut sc, &mut m);
        // SAFETY: sizes asserted; the path is available (asserted by the caller).
        unsafe {
            if x.len() == 512 {
                K::sums_block::<B, 2, 1>(blk, &sc, [x.as_ptr()])[0].to_vec()
            } else {
                K::sums_block::<B, 3, 1>(blk, &sc, [x.as_ptr()])[0].to_vec()
            }
        }
    }
    fn go<B: IntScales>(path: IntPath, blk: &[u8], x: &[i16]) -> Vec<i64> {
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx2")]
            fn avx2<B: IntScales>(blk: &[u8], x: &[i16]) -> Vec<i64> {
                on::<Avx2K, B>(blk, x)
            }
            #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2")]
            fn vnni<B: IntScales>(blk: &[u8], x: &[i16]) -> Vec<i64> {
                on::<VnniK, B>(blk, x)
            }
            match path {
                // SAFETY: the CPU has the path (asserted).
                IntPath::Avx2 => return unsafe { avx2::<B>(blk, x) },
                IntPath::Avx512Vnni => return unsafe { vnni::<B>(blk, x) },
                IntPath::Scalar => {}
            }
        }
        on::<ScalarK, B>(blk, x)
    }
    blocks::with_block!(ty, B => go::<B>(path, blk, x), float => panic!("a float type"))
}

/// Checks the integer scales against the block decoder: for every block of `bytes`
/// (whole blocks of `ty`, quantized) with finite scales, A sc_g equals the decoder's a_g
/// and C m_g its c_g, bit for bit. Returns the number of blocks checked.
#[doc(hidden)]
pub fn check_scales(ty: candle_core::quantized::GgmlDType, bytes: &[u8]) -> Result<usize, String> {
    fn go<B: IntScales>(bytes: &[u8]) -> Result<usize, String> {
        let mut n = 0;
        for (bi, blk) in bytes.chunks_exact(B::BYTES).enumerate() {
            let (mut q, mut a, mut c) = ([0i8; 256], [0f64; 16], [0f64; 16]);
            let (mut sc, mut mi) = ([0i16; 16], [0i16; 16]);
            let (asc, csc) = B::scales(blk, &mut sc, &mut mi);
            if !(asc.is_finite() && csc.is_finite()) {
                continue;
            }
            #[cfg(target_arch = "x86_64")]
            if B::REG != RegCodes::Buffer && has_vnni() {
                // The VNNI kernel's own parsing of the scales (`vnni_scales`).
                // SAFETY: the CPU has the features; blk is one whole block.
                let v = unsafe { vnni_scales_array::<B>(blk) };
                let m = if B::HAS_MIN { mi } else { [0; 16] };
                if v != (sc, m, asc.to_bits(), csc.to_bits()) {
                    return Err(format!("block {bi}: the VNNI kernel's scales differ"));
                }
            }
            B::unpack(blk, &mut q[..B::LEN], &mut a, &mut c);
            let mut q2 = [0i8; 256];
            B::codes(blk, &mut q2[..B::LEN]);
            if q2[..B::LEN] != q[..B::LEN] {
                return Err(format!("block {bi}: the codes differ from the decoder's"));
            }
            for g in 0..B::LEN / B::GROUP {
                let (s, m) = if B::SCALED { (sc[g], mi[g]) } else { (1, 1) };
                let (a2, c2) = (
                    asc * s as f64,
                    if B::HAS_MIN { csc * m as f64 } else { 0.0 },
                );
                if a2.to_bits() != a[g].to_bits() && !(a2 == 0.0 && a[g] == 0.0) {
                    return Err(format!("block {bi} group {g}: a {a2:e} vs {:e}", a[g]));
                }
                if c2.to_bits() != c[g].to_bits() && !(c2 == 0.0 && c[g] == 0.0) {
                    return Err(format!("block {bi} group {g}: c {c2:e} vs {:e}", c[g]));
                }
                for &qv in &q[g * B::GROUP..(g + 1) * B::GROUP] {
                    if (qv as i32 * s as i32).abs() > 1 << 12 {
                        return Err(format!("block {bi}: |sc q| above 2^12"));
                    }
                }
            }
            n += 1;
        }
        Ok(n)
    }
    blocks::with_block!(ty, B => go::<B>(bytes), float => Err("a float type".into()))
}
