// The matmul kernels' per-output code (kernels/matmul/tiers.cuh and the math it uses) as
// host functions with C linkage: each output computed as a thread of kernels/matmul.cu
// computes it. The kernel's tiled loop adds a thread's products in k order with fma_f64;
// here the same products are added in the same order, so tier 1's sum is the kernel's.
#include <stddef.h>

#include "math/exact_dot.cuh"
#include "math/f8.cuh"
#include "matmul/tiers.cuh"

using namespace repro;
using namespace repro::matmul;

namespace {

struct Slice {
    const float* v;
    float operator()(size_t i) const { return v[i]; }
};

// One (m, k) x (k, n) product, both operands row-major, every output as the kernel's
// thread computes it: the stats kernel's line stats, the k-ordered f64 sum, finish_output.
template <class In, class O>
void product(uint64_t m, uint64_t n, uint64_t k, const typename In::T* a,
             const typename In::T* b, const typename O::T* bias, int32_t has_bias,
             int32_t exact_sums, int32_t start_tier, typename O::T* out) {
    Operand<In> A = {a, 0, k, 1};
    Operand<In> B = {b, 0, n, 1};
    bool tier1_on = start_tier < 2;
    double coeff = tier1_coeff((size_t)k, has_bias != 0, exact_sums != 0, tier1_on);
    for (uint64_t i = 0; i < m; i++) {
        double row_norm;
        uint8_t row_signs;
        Line<In> row = {A, i, true};
        line_stats((size_t)k, row, &row_norm, &row_signs);
        for (uint64_t j = 0; j < n; j++) {
            double col_norm;
            uint8_t col_signs;
            Line<In> col = {B, j, false};
            line_stats((size_t)k, col, &col_norm, &col_signs);
            double s = 0.0;
            for (uint64_t p = 0; p < k; p++) {
                s = fma_f64((double)A.at(i, p), (double)B.at(p, j), s);
            }
            OutputCtx<In> ctx;
            ctx.a = A;
            ctx.b = B;
            ctx.k = (size_t)k;
            ctx.has_bias = has_bias != 0;
            ctx.bias = has_bias ? O::to_f32(bias[j]) : 0.0f;
            ctx.row_err = coeff * row_norm;
            ctx.bias_err = coeff * fabs_((double)ctx.bias);
            ctx.row_norm = row_norm;
            ctx.col_norm = col_norm;
            ctx.row_signs = row_signs;
            ctx.col_signs = col_signs;
            ctx.start_tier = start_tier;
            out[i * n + j] = finish_output<In, O>(s, ctx, i, j);
        }
    }
}

}  // namespace

extern "C" {

uint64_t rm_exact_dot(size_t n, const float* a, const float* b, int32_t has_bias, float bias) {
    ExactDot acc;
    acc.init();
    for (size_t i = 0; i < n; i++) acc.add_product(a[i], b[i]);
    if (has_bias) acc.add(bias);
    return f64_to_bits(acc.finish());
}

uint64_t rm_dot2(size_t n, const float* a, const float* b, int32_t has_bias, float bias) {
    Slice sa = {a}, sb = {b};
    return f64_to_bits(dot2(n, sa, sb, has_bias != 0, bias));
}

uint32_t rm_f8e4m3_to_f32(uint8_t x) { return f32_to_bits(f8e4m3_to_f32(x)); }

uint8_t rm_f32_to_f8e4m3(uint32_t x, int32_t overflow) {
    return f32_to_f8e4m3(f32_from_bits(x), overflow);
}

#define RM_MM_SHIM(name, In, O)                                                                \
    void rm_matmul_##name(uint64_t m, uint64_t n, uint64_t k, const In::T* a, const In::T* b, \
                          const O::T* bias, int32_t has_bias, int32_t exact_sums,              \
                          int32_t start_tier, O::T* out) {                                     \
        product<In, O>(m, n, k, a, b, bias, has_bias, exact_sums, start_tier, out);            \
    }

RM_MM_SHIM(f32_f32, InF32, F32)
RM_MM_SHIM(bf16_bf16, InBF16, BF16)
RM_MM_SHIM(f16_f16, InF16, F16)
RM_MM_SHIM(f8e4m3_f32, InF8, F32)
RM_MM_SHIM(f8e4m3_bf16, InF8, BF16)
}
