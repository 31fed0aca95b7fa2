// Mirror of the per-output steps of core/src/matmul/cpu.rs: the input widenings, the line stats
// (norm and sign classes), tier 1's decision on an f64 sum and its bound, the sign of an
// exact zero, and tiers 2 and 3 (math/exact_dot.cuh). Only tier 1's sum itself is
// computed differently on the device (a shared-memory tiled loop in kernels/matmul/matmul.cu, in
// its own order): the bound holds for every order and each tier returns the correctly
// rounded value or nothing, so the outputs are the CPU's bits. Runs whole, inside
// kernels/matmul/matmul.cu, on the emulated device (tests/emulated_device.rs).
#pragma once

#include "../math/common.cuh"
#include "../math/dd.cuh"
#include "../math/exact_dot.cuh"
#include "../math/f8.cuh"
#include "../math/round.cuh"

namespace repro {
namespace matmul {

// Input element types: their storage and the exact widening to f32.
struct InF32 {
    typedef float T;
    RM_FN static float widen(float v) { return v; }
};
struct InBF16 {
    typedef uint16_t T;
    RM_FN static float widen(uint16_t v) { return f32_from_bits(((uint32_t)v) << 16); }
};
struct InF16 {
    typedef uint16_t T;
    RM_FN static float widen(uint16_t v) { return f16_bits_to_f32(v); }
};
struct InF8 {
    typedef uint8_t T;
    RM_FN static float widen(uint8_t v) { return f8e4m3_to_f32(v); }
};

// One operand of a 2-D product: element (r, c) at base + r rs + c cs.
template <class In>
struct Operand {
    const typename In::T* data;
    uint64_t base, rs, cs;
    RM_FN float at(uint64_t r, uint64_t c) const { return In::widen(data[base + r * rs + c * cs]); }
};

// A row of A (elements (i, q)) or a column of B (elements (q, j)) as a loader over q.
template <class In>
struct Line {
    Operand<In> op;
    uint64_t fixed;
    bool is_row;
    RM_FN float operator()(size_t q) const {
        return is_row ? op.at(fixed, (uint64_t)q) : op.at((uint64_t)q, fixed);
    }
};

// 1 + 2^-20 and the tier limits of cpu.rs. Tier 1's coefficient (k + bias) 2^-53 (1 + 2^-20)
// is not computed here: the launch code passes the one `tier1_coeff` of cpu.rs computes
// (the `coeff` argument of the product kernels).
#define RM_MM_NORM_SLACK F64(0x3FF0000100000000)
#define RM_MM_FAST_MAX_K (1ULL << 26)
#define RM_MM_F8_EXACT_MAX_K (1ULL << 17)

// The stats of elements first, first + step, ... of a line: *sq the f64 sum of their
// squares (the line's norm is the square root of the sum over all its elements, a bound
// only: any order), *signs bit 0 if some element has its sign bit clear, bit 1 if some has
// it set.
template <class L>
RM_FN void line_stats(size_t first, size_t len, size_t step, const L& line, double* sq,
                      uint8_t* signs) {
    double acc = 0.0;
    uint32_t s = 0;
    for (size_t q = first; q < len; q += step) {
        float x = line(q);
        acc += (double)x * (double)x;
        s |= 1u << (f32_to_bits(x) >> 31);
    }
    *sq = acc;
    *signs = (uint8_t)s;
}

// zero_sign: -1 undecided, 0 for +0, 1 for -0.
RM_FN int32_t zero_sign(uint8_t row, uint8_t col, size_t k, bool has_bias, float bias) {
    bool products_negative;
    if (k == 0) {
        products_negative = true;
    } else if ((row == 1 && col == 2) || (row == 2 && col == 1)) {
        products_negative = true;
    } else if (row == 3 && col == 3) {
        return -1;
    } else {
        products_negative = false;
    }
    bool bias_negative = has_bias ? (f32_to_bits(bias) >> 31) == 1 : k > 0;
    return (products_negative && bias_negative) ? 1 : 0;
}

// Tiers 2 and 3 for output (i, j): slow_output of cpu.rs.
template <class In, class O>
RM_SLOW_FN typename O::T slow_output(const Operand<In>& a, const Operand<In>& b, uint64_t i,
                                uint64_t j, size_t k, bool has_bias, float bias, double norms,
                                int32_t start_tier) {
    Line<In> row = {a, i, true};
    Line<In> col = {b, j, false};
    if (start_tier <= 2 && k < RM_MM_FAST_MAX_K) {
        double r = dot2(k, row, col, has_bias, bias);
        double abs = norms * RM_MM_NORM_SLACK + (has_bias ? fabs_((double)bias) : 0.0);
        double err = dot2_bound(k, r, abs);
        typename O::T v;
        if (!(r == 0.0 && err == 0.0) && round_within_parts<O>(r, err, &v)) {
            return v;
        }
    }
    ExactDot acc;
    acc.init();
    for (size_t q = 0; q < k; q++) {
        acc.add_product(row(q), col(q));
    }
    if (has_bias) acc.add(bias);
    return O::round(acc.finish());
}

// Everything one output needs besides tier 1's sum.
template <class In>
struct OutputCtx {
    Operand<In> a, b;
    size_t k;
    bool has_bias;
    float bias;       // bias[j] widened (0 without)
    double row_err;   // c * row norm (c the tier-1 coefficient: 0 for exact sums, NaN off)
    double bias_err;  // c * |bias|
    double row_norm, col_norm;
    uint8_t row_signs, col_signs;
    int32_t start_tier;
};

// One output from a first tier's value y (bias added) and its bound err: the decision
// (finish_row of cpu.rs), else an exact zero's sign (resolve), else tiers 2 and 3.
template <class In, class O>
RM_FN typename O::T decide_output(double y, double err, const OutputCtx<In>& c, uint64_t i,
                                  uint64_t j) {
    typename O::T v;
    bool sure = round_within_parts<O>(y, err, &v);
    if (sure && !(y == 0.0 && err == 0.0)) {
        return v;
    }
    if (y == 0.0 && err == 0.0) {
        int32_t z = zero_sign(c.row_signs, c.col_signs, c.k, c.has_bias, c.bias);
        if (z >= 0) {
            return O::round(z == 1 ? -0.0 : 0.0);
        }
    }
    if (c.start_tier == 0) {
        // Tier 1 alone (tests count what it decides): the outputs it leaves are NaN.
        return O::round(f64_from_bits(0x7FF8000000000000ULL));
    }
    return slow_output<In, O>(c.a, c.b, i, j, c.k, c.has_bias, c.bias, c.row_norm * c.col_norm,
                              c.start_tier < 2 ? 2 : c.start_tier);
}

// One output from tier 1's f64 sum `s` (bias not yet added).
template <class In, class O>
RM_FN typename O::T finish_output(double s, const OutputCtx<In>& c, uint64_t i, uint64_t j) {
    double y = s + (double)c.bias;
    double err = c.row_err * c.col_norm + c.bias_err;
    return decide_output<In, O>(y, err, c, i, j);
}

}  // namespace matmul
}  // namespace repro
