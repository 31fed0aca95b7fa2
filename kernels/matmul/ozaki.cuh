// The integer first tier of the CUDA matmul (issue 27): the products of f32, bf16 and f16
// inputs on the int8 tensor cores (`mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32`),
// Ozaki-style, with a rigorous bound; the output then goes through the same decision and
// tiers 2 and 3 as the f64 tier's (tiers.cuh `decide_output`), so every output is still
// the exact sum rounded once and no bit depends on which tier 1 ran. The definition is
// core/src/matmul/mod.rs's; this tier exists on the device only (the CPU has its own tier 1).
//
// # Slices
// Each row of A and each column of B (a "line") is cut into blocks of KB = 64 consecutive
// k (zeros past k). In a block with largest |x_q| = M > 0 let E be the integer with
// 2^(E-1) <= M < 2^E (M's exponent, read off its f64 bits), F = 7 S the fraction bits
// (S = 6 slices for f32 inputs, F = 42; S = 4 for bf16 and f16, F = 28: a function of the
// dtype), and
//
//     Y_q = trunc(x_q 2^(F-E))         (exact in f64: a power of two times an f32; |Y_q| < 2^F)
//     x~_q = Y_q 2^(E-F),  tau_q = x_q - x~_q  (exact in f64: the low bits of x_q's
//                                               significand), |tau_q| < 2^(E-F), |x~_q| <= |x_q|.
//
// |Y_q| is written in base 2^7 with the sign on every digit: Y_q = sum_{s=0}^{S-1}
// sigma_s,q 2^(7 (S-1-s)), |sigma_s,q| <= 127 (an s8), and sum_s |sigma_s,q| 2^(7 (S-1-s))
// = |Y_q|. An element is covered exactly (tau = 0) when |x_q| >= 2^(E-F+p-1), p = 24, 8, 11
// the dtype's precision: within 2^18 (f32), 2^20 (bf16), 2^17 (f16) of its block's maximum.
// The block's level count L (0..S) is one more than the last digit index s at which some
// element of the block has a nonzero digit: digits s >= L are all zero there. A zero block
// has L = 0 (its E is never used: its products are 0). A line with
// an infinity or a NaN is sliced as zeros and its tail norm is NaN, so every output it
// touches is refused below and goes to tiers 2 and 3, which define them.
//
// # The exact integer sums
// For output (i, j) and block b, with sigma the slices of row i of A and rho those of
// column j of B, the tensor cores add D_d = sum_{s+t=d} sum_{q in b} sigma_s,q rho_t,q for
// d = 0 .. 2S-2 into one s32 accumulator per d: at most S KB 127^2 = 6 64 16129 < 2^23 in
// magnitude, so every partial sum in every order is exact in s32 (no wrap; the tensor
// core's adder order does not matter). The pairs (s, t) with s >= La or t >= Lb (La the
// largest level count of the 16 rows of A of a warp's tile in this block, Lb of its 8
// columns of B) are skipped: their digits are all zero, so D_d is the same integer. No
// pair with a nonzero product is dropped. Then
//
//     sum_{q in b} x~_A,q x~_B,q = 2^(E_A + E_B - 2F) sum_d D_d 2^(7 (2S-2-d)),
//
// and sum_d |D_d| 2^(7 (2S-2-d)) <= sum_q |Y_A,q| |Y_B,q| (the sign-magnitude digits).
//
// # The evaluation and its bound
// Each v_b,d = D_d 2^(E_A + E_B - 2F + 7 (2S-2-d)) is exact in f64 (|D_d| < 2^23, the
// exponent within [-380, 242] for every E in [-148, 128]); the kernel adds them into one
// f64 sum per output (block by block, d in order: a fixed order, though the bound holds
// for any), then the bias: N = nb (2S-1) + (1 with a bias) terms, nb = ceil(k / KB), so
// (Higham, 2nd ed., 4.2) |y - covered - bias| <= gamma_N (sum |v| + |bias|) with
// sum |v| <= sum_q |x~_A,q x~_B,q| <= |a_i|_2 |b_j|_2. The uncovered part is
// sum_q (a_q b_q - x~_A,q x~_B,q) = sum_q (tau_A,q b_q + x~_A,q tau_B,q), at most
// |tau_A|_2 |b_j|_2 + |a_i|_2 |tau_B|_2 (Cauchy-Schwarz, |x~| <= |x|), each tail norm the
// line's over all its blocks. The norms are f64 sums of squares of exact values (any
// order), within (1 + (k + 2) u) of the true ones for k < 2^26, so
//
//     err = c (|a_i| |b_j| + |bias|) + (|tau_A| |b_j| + |a_i| |tau_B|) (1 + 2^-19),
//     c = N 2^-53 (1 + 2^-20)              (`ozaki_coeff` of src/matmul/cuda.rs)
//
// bounds |y - exact| with room for its own few roundings (the same argument as tier 1's
// k 2^-53 (1 + 2^-20), cpu.rs, with N < 2^26 in place of k + 1). The output is accepted
// when every number within err of y rounds to one value (`round_within_parts`), else it
// goes on exactly as from the f64 tier (`decide_output`): an exact zero's sign from the
// sign classes, tiers 2 and 3.
//
// # The tiled kernel
// `repro_matmul_ozakit_*` forms the same integers D_d from shared-memory tiles (64 rows of A
// and 8 NT columns of B per block of 4 warps; NT = 4 for bf16 and f16, 2 for f32, whose S = 6
// levels need more accumulator registers) and combines them per k-block in pairs,
// X_j = 2^7 D_2j + D_2j+1 (D_ND = 0), as the tensor cores accumulate them: an even-diagonal
// product is formed from zero and added times 2^7, an odd one accumulated in place. Every
// partial X_j is at most (2^7 + 1) S KB 127^2 <= 129 6 64 16129 < 2^30 in magnitude (each
// diagonal has at most S pairs), so s32 holds it exactly in every order. Then
// Z_i = 2^14 X_2i + X_2i+1 (i < S / 2; |Z_i| < 2^45, exact in s64 and in f64) and
// v_b,i = Z_i 2^(E_A + E_B - 2F + 7 (ND - 4 - 4 i)), added in i order: S / 2 <= 2S - 1 terms
// per block, sum |v| <= the same sum_q |x~_A,q x~_B,q|, so the bound above (its N counts
// 2S - 1 terms per block) holds unchanged. The warp's level
// counts La, Lb are those of its 16 rows and 8 NT columns; a line's levels at or past its
// own L are staged as zeros, so the skipped and the zero pairs give the same integers.
//
// # Cost
// Per 16 x 8 outputs and 32 k: La Lb mma (at most 36 for f32, 16 for bf16 and f16; on
// normal(0, 1) data mostly 9 for bf16, whose 8-bit significands span two or three 7-bit
// digits) on (16 La + 8 Lb) 32 bytes of slices; per 64 k and lane, 4 (2S-1) f64 products
// and sums. See docs/PERFORMANCE.md
// ("Matmul on the int8 tensor cores") for the roofline estimate against cuBLAS.
#pragma once

#include "matmul/tiers.cuh"

namespace repro {
namespace matmul {

// Elements per block of one scale: two m16n8k32 steps.
#define RM_OZ_KB 64

// Slices per input dtype.
template <class In>
struct OzSlices;
template <>
struct OzSlices<InF32> {
    static const int S = 6;
};
template <>
struct OzSlices<InBF16> {
    static const int S = 4;
};
template <>
struct OzSlices<InF16> {
    static const int S = 4;
};

// The tiled kernel: rows of A per block, n8 tiles per warp per input dtype, and the
// shared-memory words per staged line (S levels of 64 bytes, plus 4 words so that the 8
// lines of one fragment load fall in 8 different groups of banks).
#define RM_OZT_BM 64
#define RM_OZT_LINE_WORDS(S) (16 * (S) + 4)
template <class In>
struct OzTile;
template <>
struct OzTile<InF32> {
    static const int NT = 2;
};
template <>
struct OzTile<InBF16> {
    static const int NT = 4;
};
template <>
struct OzTile<InF16> {
    static const int NT = 4;
};

RM_FN int32_t max_i32(int32_t a, int32_t b) { return a > b ? a : b; }

// x as an f64, exactly, for |x| < 2^51: x added to the integer field of 1.5 2^52, then
// 1.5 2^52 subtracted (both exact). An integer add and an f64 subtraction, where the
// integer-to-f64 conversion instructions run at a quarter of the f64 rate or less.
RM_FN double oz_i64_to_f64(int64_t x) {
    return f64_from_bits(0x4338000000000000ULL + (uint64_t)x) - F64(0x4338000000000000);
}

// 2^e for e in f64's normal range.
RM_FN double oz_pow2(int32_t e) { return f64_from_bits((uint64_t)(int64_t)(e + 1023) << 52); }

// The E with 2^(E-1) <= m < 2^E, for a finite m > 0 (f32, exact and normal in f64).
RM_FN int32_t oz_block_exponent(float m) {
    return (int32_t)((f64_to_bits((double)m) >> 52) & 0x7FF) - 1022;
}

// The digits of one finite element x of a block of exponent e: digit s at out[s KB] (an s8),
// the square of its tail added to *tail_sq; returns one more than its last nonzero digit's
// index (0 for no nonzero digit).
template <int S>
RM_FN int32_t oz_slice_element(float x, int32_t e, uint8_t* out, double* tail_sq) {
    const double up = oz_pow2(7 * S - e), down = oz_pow2(e - 7 * S);
    int64_t y = f64_to_i64((double)x * up);
    double tau = (double)x - (double)y * down;
    *tail_sq += tau * tau;
    uint64_t mag = (uint64_t)(y < 0 ? -y : y);
    int32_t levels = 0;
    for (int s = 0; s < S; s++) {
        uint32_t digit = (uint32_t)(mag >> (7 * (S - 1 - s))) & 127u;
        out[s * RM_OZ_KB] = (uint8_t)(y < 0 ? 0u - digit : digit);
        if (digit != 0) levels = s + 1;
    }
    return levels;
}

// Slices block `b` of a line (elements q0 = b KB .. q0 + KB - 1 of `len`, zeros past it)
// into out[s KB + q] (digit s of element q0 + q, an s8), returns 8 E + L (E its exponent,
// L its level count; `oz_exp`, `oz_levels` read them back) and adds the squares of its
// tails to *tail_sq. Non-finite elements are sliced as zeros (the caller makes the line's
// tail norm NaN).
template <int S, class L>
RM_FN int32_t oz_slice_block(const L& line, size_t len, size_t b, uint8_t* out,
                             double* tail_sq) {
    const size_t q0 = b * RM_OZ_KB;
    float mx = 0.0f;
    for (int q = 0; q < RM_OZ_KB; q++) {
        float x = q0 + q < len ? line(q0 + q) : 0.0f;
        float ax = is_finite_f32(x) ? fabs_f32(x) : 0.0f;
        mx = ax > mx ? ax : mx;
    }
    const int32_t e = mx > 0.0f ? oz_block_exponent(mx) : 0;
    int32_t levels = 0;
    for (int q = 0; q < RM_OZ_KB; q++) {
        float x = q0 + q < len ? line(q0 + q) : 0.0f;
        if (!is_finite_f32(x)) x = 0.0f;
        levels = max_i32(levels, oz_slice_element<S>(x, e, out + q, tail_sq));
    }
    return 8 * e + levels;
}

// The level count and the exponent of a block from 8 E + L.
RM_FN int32_t oz_levels(int32_t packed) { return packed & 7; }
RM_FN int32_t oz_exp(int32_t packed) { return (packed - (packed & 7)) / 8; }

// Every block of one line: slices at out[b S KB ..], 8 E + L at exps[b], the tail norm (NaN
// if an element is not finite).
template <int S, class L>
RM_FN void oz_slice_line(const L& line, size_t len, size_t nb, uint8_t* out, int32_t* exps,
                         double* tail) {
    double sq = 0.0;
    bool finite = true;
    for (size_t q = 0; q < len; q++) finite = finite && is_finite_f32(line(q));
    for (size_t b = 0; b < nb; b++) {
        exps[b] = oz_slice_block<S>(line, len, b, out + b * S * RM_OZ_KB, &sq);
    }
    *tail = finite ? sqrt(sq) : f64_from_bits(0x7FF8000000000000ULL);
}

// The bound of the header for output (i, j) of the integer tier's sum y (bias added).
template <class In>
RM_FN double oz_err(const OutputCtx<In>& c, double tail_a, double tail_b) {
    double tails = tail_a * c.col_norm + c.row_norm * tail_b;
    return c.row_err * c.col_norm + c.bias_err + tails * F64(0x3FF0000200000000);
}

}  // namespace matmul
}  // namespace repro
