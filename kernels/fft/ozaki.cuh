// Device mirror of core/src/fft/ozaki.rs (Precision::Ozaki): one power-of-two scale per vector,
// the vector cut into SLICES = 4 balanced base-256 digits (rint by the 1.5 2^23 magic, -0
// mapped to +0), the slice products (exact: the bit budget 2 * 7 + log2 K <= 24 of ozaki.rs
// makes every partial sum an integer that f32 holds, so neither the summation order of
// this loop nor a tensor core's adder tree can change them), and the combination of the
// products in the one fixed order that rounds. The matrix digits are not cut here: the
// plan's SlicedMatrix is uploaded (same bytes), laid out as SLICES row-major K x K matrices
// one after the other. Compiles as CUDA and as host C++.
#pragma once

#include "math/common.cuh"

namespace repro {
namespace fft {

// ozaki::SLICES.
#define RM_FFT_SLICES 4

// ozaki::pow2: 2^k as f32 for -126 <= k <= 127 (built from the exponent bits).
RM_FN float ozaki_pow2(int k) { return f32_from_bits(((uint32_t)(k + 127)) << 23); }

// ozaki::rint: round to nearest even for |t| < 2^22 by the 1.5 2^23 magic, then + 0 so
// that -0 becomes +0.
RM_FN float ozaki_rint(float t) {
    const float magic = f32_from_bits(0x4B400000u);  // 12582912 = 1.5 2^23
    return ((t + magic) - magic) + 0.0f;
}

RM_FN int ozaki_clz32(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return __clz((int)x);
#else
    return x == 0 ? 32 : __builtin_clz(x);
#endif
}

// ozaki::scale_exponent: e with 2^(e-1) <= m < 2^e for a finite m > 0 (subnormals too).
RM_FN int ozaki_scale_exponent(float m) {
    uint32_t b = f32_to_bits(m);
    int biased = (int)(b >> 23);
    if (biased == 0) {
        uint32_t mant = b & 0x7FFFFFu;
        return (31 - ozaki_clz32(mant)) - 149 + 1;
    }
    return biased - 127 + 1;
}

// What SlicedMatrix::apply found in its input vector.
enum OzakiSplit { OZAKI_OK = 0, OZAKI_NAN = 1, OZAKI_ZERO = 2 };

// The first half of SlicedMatrix::apply: the max, the special cases, the exponent e and the
// digits xd[d * KMAX + c] of the k inputs (k <= KMAX).
template <int KMAX>
RM_FN int ozaki_split(const float* x, int k, float* xd, int* e_out) {
    float m = 0.0f;
    for (int c = 0; c < k; c++) {
        float a = fabs_f32(x[c]);
        if (a > m || is_nan_f32(a)) {
            m = is_nan_f32(a) ? f32_from_bits(0x7FC00000u) : a;
        }
    }
    if (!is_finite_f32(m)) return OZAKI_NAN;
    if (m == 0.0f) return OZAKI_ZERO;
    int e = ozaki_scale_exponent(m);
    // x * 2^(7 - e) in two exact power-of-two steps (7 - e may exceed 127).
    int a = 7 - e;
    int a1 = a / 2, a2 = a - a / 2;
    float p1 = ozaki_pow2(a1), p2 = ozaki_pow2(a2);
    for (int c = 0; c < k; c++) {
        float t = (x[c] * p1) * p2;
        for (int d = 0; d < RM_FFT_SLICES; d++) {
            float r = ozaki_rint(t);
            xd[d * KMAX + c] = r;
            t = (t - r) * 256.0f;
        }
    }
    *e_out = e;
    return OZAKI_OK;
}

// One slice product P_ij[row] = sum_c W_i[row][c] d_j[c] (exact, see the header comment).
template <int KMAX>
RM_FN float ozaki_slice_product(const float* digits, int k, int row, int i, int j,
                                const float* xd) {
    const float* w = digits + (size_t)i * k * k + (size_t)row * k;
    float p = 0.0f;
    for (int c = 0; c < k; c++) {
        p = p + w[c] * xd[j * KMAX + c];
    }
    return p;
}

// The second half of SlicedMatrix::apply for one output row: the kept pairs combined from
// the highest level down, acc = acc + P_ij 2^(-8 level), then the two power-of-two factors.
template <int KMAX>
RM_FN float ozaki_row(const float* digits, int k, int row, const float* xd, int e) {
    float acc = 0.0f;
    for (int level = RM_FFT_SLICES - 1; level >= 0; level--) {
        for (int i = 0; i <= level; i++) {
            int j = level - i;
            float p = ozaki_slice_product<KMAX>(digits, k, row, i, j, xd);
            acc = acc + p * ozaki_pow2(-8 * level);
        }
    }
    int h = (e - 14) / 2;
    float s1 = ozaki_pow2(e - 14 - h), s2 = ozaki_pow2(h);
    return (acc * s1) * s2;
}

// One output of SlicedMatrix::apply given the split's status.
template <int KMAX>
RM_FN float ozaki_output(int status, const float* digits, int k, int row, const float* xd,
                         int e) {
    if (status == OZAKI_NAN) return f32_from_bits(0x7FC00000u);
    if (status == OZAKI_ZERO) return 0.0f;
    return ozaki_row<KMAX>(digits, k, row, xd, e);
}

// SlicedMatrix::apply: out = W x (square k x k, k <= KMAX).
template <int KMAX>
RM_FN void ozaki_apply(const float* digits, int k, const float* x, float* out) {
    float xd[RM_FFT_SLICES * KMAX];
    int e = 0;
    int status = ozaki_split<KMAX>(x, k, xd, &e);
    for (int row = 0; row < k; row++) {
        out[row] = ozaki_output<KMAX>(status, digits, k, row, xd, e);
    }
}

}  // namespace fft
}  // namespace repro
