// The quantized product on CUDA (src/quantized/cuda.rs launches it), with the definition of
// src/quantized/mod.rs: every output the exact sum of x times the weights' exact values
// (plus bias) rounded once into x's dtype, decided as src/quantized/cpu.rs decides it.
//
// One thread per output (i, j), in a grid-stride loop over the m n outputs (j fastest):
// tier 1 decodes weight row j block by block (quantized/blocks.cuh: the codes unpacked, each
// weight a q - c formed exactly) and sums its products with x row i in f64 in index order,
// each product fused into the running sum (one rounding per term: within the k + 8
// roundings of the CPU's bound, which holds for every order). The decision, the sign of an
// exact zero and tiers 2 and 3 (dot2_wide, then ExactDot::add_product_wide over the decoded
// row) mirror Shared::tier1 and Shared::slow of cpu.rs operation for operation, so the
// outputs are the CPU's bits. Simplicity over speed: each thread re-decodes its weight row
// (a decode costs integer operations per weight, beside the f64 product), the weight bytes
// are read straight from global memory.
//
// Kernels (<x> the input and output dtype, <b> the bias's; each f32, bf16 or f16, 16-bit
// formats as their bits; every index 64-bit):
//   repro_qmatmul_<x>_<b>(m, n, k, ty, x, w, x_norm, x_signs, w_norm, w_signs, bias,
//       bias_base, bias_stride, has_bias, coeff, start_tier, out): x (m, k) contiguous; the
//       weight's n rows of k weights of type id `ty` (quantized/blocks.cuh's table), row j's
//       blocks at w + j (k / LEN) BYTES; the row norms and sign classes of x
//       (repro_matmul_stats_<x>) and of the weight (computed once on the host); bias element
//       j at bias_base + j bias_stride (read only when has_bias); coeff tier 1's
//       coefficient (NaN: tier 1 off); start_tier 1, 2 (tier 2 on) or 3; out (m, n).
#include "math/exact_dot.cuh"
#include "matmul/tiers.cuh"
#include "quantized/blocks.cuh"

#define REPRO_QMM_BLOCK 128

namespace {

using namespace repro;
using namespace repro::quantized;

// Row i of x as a loader of its widened elements.
template <class In>
struct XRow {
    const typename In::T* x;
    RM_FN float operator()(size_t q) const { return In::widen(x[q]); }
};

// One quantized block decoded (decode_quant through the type id), out of line: one copy
// for all the slow paths.
RM_SLOW_FN void decode_block(uint32_t ty, const uint8_t* b, double* out) {
    decode_quant_id(ty, b, out);
}

// A weight row's exact values by index, for the in-order loops of tiers 2 and 3
// (QRows::decode_row of cpu.rs, one block at a time): a float type's element decoded in
// place, a quantized block decoded whole when the index first enters it.
struct WRow {
    uint32_t ty, len, bytes;
    const uint8_t* row;
    size_t block;
    double vals[256];

    RM_FN void init(uint32_t type, const uint8_t* r) {
        ty = type;
        row = r;
        geometry(ty, &len, &bytes);
        block = (size_t)-1;
    }

    RM_FN double operator()(size_t q) {
        if (len == 1) return decode_float(ty, row, q);
        size_t bi = q / len;
        if (bi != block) {
            decode_block(ty, row + bi * bytes, vals);
            block = bi;
        }
        return vals[q - bi * len];
    }
};

// Tier 1's f64 sum of x row `x` with a quantized weight row (dot_quant of cpu.rs, in index
// order): per block the codes unpacked, each weight a q - c formed exactly.
template <class In, class B>
RM_FN double row_dot_quant(const typename In::T* x, const uint8_t* row, size_t k) {
    int8_t q[256];
    double a[16];
    double c[16];
    double s = 0.0;
    for (size_t bi = 0; bi < k / B::LEN; bi++) {
        B::unpack(row + bi * B::BYTES, q, a, c);
        const typename In::T* xb = x + bi * B::LEN;
        for (uint32_t e = 0; e < B::LEN; e++) {
            uint32_t g = e / B::GROUP;
            double w = B::HAS_MIN ? a[g] * (double)q[e] - c[g] : a[g] * (double)q[e];
            s = fma_f64((double)In::widen(xb[e]), w, s);
        }
    }
    return s;
}

// Tier 1's f64 sum for any weight type (the float types widened in place). Out of line:
// one copy per input dtype, shared by the kernels of the three bias dtypes.
template <class In>
RM_SLOW_FN double row_dot(uint32_t ty, const typename In::T* x, const uint8_t* row, size_t k) {
    switch (ty) {
#define RQ_ROW_DOT_CASE(id, B) \
    case id:                   \
        return row_dot_quant<In, B>(x, row, k);
        RQ_FOR_EACH_QUANT_BLOCK(RQ_ROW_DOT_CASE)
#undef RQ_ROW_DOT_CASE
        default:
            break;
    }
    double s = 0.0;
    for (size_t q = 0; q < k; q++) {
        s = fma_f64((double)In::widen(x[q]), decode_float(ty, row, q), s);
    }
    return s;
}

// Output (i, j) when tier 1 could not decide (Shared::slow of cpu.rs): tier 2 (the
// compensated sum over the decoded row, tested the same way), else the exact sum rounded
// once.
template <class In, class O>
RM_SLOW_FN typename O::T slow_output(const typename In::T* xrow, uint32_t ty,
                                     const uint8_t* wrow, size_t k, bool has_bias, float bias,
                                     double x_norm, double w_norm, int32_t start_tier) {
    XRow<In> x = {xrow};
    WRow w;
    w.init(ty, wrow);
    if (start_tier <= 2 && k < RM_MM_FAST_MAX_K) {
        double r = dot2_wide(k, x, w, has_bias, bias);
        double norms = x_norm * w_norm * RM_MM_NORM_SLACK;
        double err = dot2_bound(2 * k, r, norms + (has_bias ? (double)fabs_f32(bias) : 0.0));
        typename O::T v;
        // An exact zero needs its sign from the exact sum.
        if (!(r == 0.0 && err == 0.0) && round_within_parts<O>(r, err, &v)) {
            return v;
        }
    }
    ExactDot acc;
    acc.init();
    for (size_t q = 0; q < k; q++) {
        acc.add_product_wide(x(q), w(q));
    }
    if (has_bias) acc.add(bias);
    return O::round(acc.finish());
}

template <class In, class O, class Bias>
__device__ void product(uint64_t m, uint64_t n, uint64_t k, uint32_t ty,
                        const typename In::T* x, const uint8_t* w, const double* x_norm,
                        const uint8_t* x_signs, const double* w_norm, const uint8_t* w_signs,
                        const typename Bias::T* bias, uint64_t bias_base, uint64_t bias_stride,
                        int32_t has_bias, double coeff, int32_t start_tier,
                        typename In::T* out) {
    uint32_t len, bytes;
    geometry(ty, &len, &bytes);
    if (len == 0) return;  // unknown type id: the launch code never passes one
    const uint64_t row_bytes = k / len * bytes;
    for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; t < m * n;
         t += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t i = t / n, j = t % n;
        const typename In::T* xrow = x + i * k;
        const uint8_t* wrow = w + j * row_bytes;
        const bool hb = has_bias != 0;
        const float bf = hb ? Bias::to_f32(bias[bias_base + j * bias_stride]) : 0.0f;
        if (k == 0) {
            // Empty sums: the bias, or +0 (straight to the slow tiers, as on the CPU).
            out[t] = slow_output<In, O>(xrow, ty, wrow, 0, hb, bf, x_norm[i], w_norm[j],
                                        start_tier);
            continue;
        }
        // Tier 1 (Shared::tier1 of cpu.rs).
        double s = row_dot<In>(ty, xrow, wrow, (size_t)k);
        double b = hb ? (double)bf : 0.0;
        double y = s + b;
        double err = coeff * x_norm[i] * w_norm[j] + coeff * fabs_(b);
        typename O::T v;
        bool sure = round_within_parts<O>(y, err, &v);
        if (y == 0.0 && err == 0.0) {
            // Every product is zero: the sign of the exact zero from the sign classes.
            int32_t z = matmul::zero_sign(x_signs[i], w_signs[j], (size_t)k, hb, bf);
            if (z >= 0) {
                out[t] = O::round(z == 1 ? -0.0 : 0.0);
                continue;
            }
        } else if (sure) {
            out[t] = v;
            continue;
        }
        out[t] = slow_output<In, O>(xrow, ty, wrow, (size_t)k, hb, bf, x_norm[i], w_norm[j],
                                    start_tier);
    }
}

}  // namespace

#define REPRO_QMM(xname, In, O, bname, Bias)                                                  \
    extern "C" __global__ void __launch_bounds__(REPRO_QMM_BLOCK)                             \
        repro_qmatmul_##xname##_##bname(                                                      \
            uint64_t m, uint64_t n, uint64_t k, uint32_t ty, const In::T* x, const uint8_t* w, \
            const double* x_norm, const uint8_t* x_signs, const double* w_norm,               \
            const uint8_t* w_signs, const Bias::T* bias, uint64_t bias_base,                  \
            uint64_t bias_stride, int32_t has_bias, double coeff, int32_t start_tier,         \
            In::T* out) {                                                                     \
        product<In, O, Bias>(m, n, k, ty, x, w, x_norm, x_signs, w_norm, w_signs, bias,       \
                             bias_base, bias_stride, has_bias, coeff, start_tier, out);       \
    }

#define REPRO_QMM_BIASES(xname, In, O)          \
    REPRO_QMM(xname, In, O, f32, repro::F32)   \
    REPRO_QMM(xname, In, O, bf16, repro::BF16) \
    REPRO_QMM(xname, In, O, f16, repro::F16)

REPRO_QMM_BIASES(f32, repro::matmul::InF32, repro::F32)
REPRO_QMM_BIASES(bf16, repro::matmul::InBF16, repro::BF16)
REPRO_QMM_BIASES(f16, repro::matmul::InF16, repro::F16)
