// The quantized product on CUDA (src/quantized/cuda.rs launches it), with the definition of
// src/quantized/mod.rs: every output the exact sum of x times the weights' exact values
// (plus bias) rounded once into x's dtype, decided as src/quantized/cpu.rs decides it.
//
// Two kernels, chosen by src/quantized/cuda.rs on m alone (GEMV_MAX_ROWS): both decide
// every output with the CPU's tiers, so they give the same bits.
//
// repro_qmatmul_* (m > 4): one thread per output (i, j), in a grid-stride loop over the m n
// outputs (j fastest): tier 1 decodes weight row j block by block (quantized/blocks.cuh:
// the codes unpacked, each weight a q - c formed exactly) and sums its products with x row
// i in f64 in index order, each product fused into the running sum (one rounding per term:
// within the k + 8 roundings of the CPU's bound, which holds for every order). Simplicity
// over speed: each thread re-decodes its weight row.
//
// repro_qgemv_* (decode, m <= 4): one warp per output column j (REPRO_QGEMV_WARPS columns
// per block, a grid-stride loop over the columns), all m rows of x at once: the weight row
// is read and decoded once for every row, with m f64 partial sums per lane in registers.
// The row is walked in chunks of 256 weights; lane l takes weights [c + 8 l, c + 8 l + 8)
// of chunk c (one block and one group of it: GROUP >= 16; for the 32-weight types a chunk
// spans 8 blocks, and in a last partial chunk the lanes past k idle), decodes them with the
// per-element code / group_scale of blocks.cuh (no local arrays), reads the same 8
// consecutive elements of each x row (a warp reads 256 consecutive x values: coalesced),
// and adds into its sums (lane_quant below):
//   * types with an offset c (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K): w = fma(a, q, -c), exact, then
//     s_r = fma(x_r, w, s_r) per weight;
//   * types without (c = 0): per row u = x_0 q_0 (exact: 24 bits times at most 8), then
//     u = fma(x_t, q_t, u) for t = 1..7, then s_r = fma(a, u, s_r) (a q = w exactly, so
//     this is an evaluation of the sum of the products x w);
//   * F32, F16, BF16 (decode_float, each element checked against k): s_r = fma(x_r, w, s_r).
// Then a fixed butterfly (__shfl_xor_sync, offsets 16, 8, 4, 2, 1: each partial sum through
// exactly 5 additions; every lane ends with the same value, IEEE addition being
// commutative), and lane i (i < m) decides output (i, j) as the other kernel does (decide:
// the bias added, tier 1's test with the same coefficient, an exact zero's sign from the
// sign classes, else slow_output: tiers 2 and 3, rare) and writes it.
//
// Why tier 1's bound holds for the decode kernel's order. The CPU's bound (src/quantized/
// mod.rs) is Higham's for any evaluation tree of the exact products and sums where every
// term x_e w_e meets at most h = k + 8 roundings on its way to the total (+1 for the bias's
// addition). In the decode kernel a term meets: in its own chunk at most 8 roundings (the
// fma chain's 7 and the fma into s_r; with an offset or a float type: its own fma and the
// at most 7 after it in the lane), then one per later chunk of its lane, then the 5
// additions of the butterfly, then the bias's. With C = ceil(k / 256) chunks that is at
// most C + 12 (no offset) or 8 C + 5 (offset, float types), and as each rounding in the
// lane belongs to one of the lane's weights (at most min(k, 8 C) of them), and a butterfly
// level adding a lane that holds no weight adds an exact +0, also at most k + 5: never more
// than k + 8 (for k >= 5 the first form, C + 12 <= k + 8; below, k + 5). So the same
// coefficient tier1_coeff(k) bounds the error, and an accepted output is the correctly
// rounded one. (The bound is far from tight for this order: about k / 32 + 13 roundings on
// the longest path, so a coefficient at 1/2 would still be a valid bound here; see
// tests/hard_sums.rs.) Non-finite values: a NaN or infinite x or weight makes the row's
// norm, and so err, non-finite, so tier 1 never accepts them (tier 2 and 3 decide).
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
//   repro_qgemv_<x>_<b>: the same arguments, m <= REPRO_QGEMV_MAX_ROWS; launched with
//       REPRO_QGEMV_WARPS warps per block (any number of blocks).
#include "math/exact_dot.cuh"
#include "matmul/tiers.cuh"
#include "quantized/blocks.cuh"

#define REPRO_QMM_BLOCK 128
// The decode kernels: warps per block (one output column each), and rows of x at most
// (GEMV_MAX_ROWS of src/quantized/cuda.rs).
#define REPRO_QGEMV_WARPS 4
#define REPRO_QGEMV_MAX_ROWS 4
// Blocks per SM the register allocation must allow (__launch_bounds__): enough resident
// warps to keep the loads in flight; a register budget, no effect on the bits.
#ifndef REPRO_QGEMV_MIN_BLOCKS
#define REPRO_QGEMV_MIN_BLOCKS 4
#endif
// Full unrolling of the decode kernel's short constant loops (its per-row sums and the 8
// weights of a lane then live in registers); nothing on the emulated device.
// RQ_UNROLL_CHUNKS: the chunk loop unrolled by a few, so that a warp has several chunks'
// loads in flight (the same sums in the same order).
#if defined(__CUDACC__)
#define RQ_UNROLL _Pragma("unroll")
#ifndef RQ_UNROLL_CHUNKS
#define RQ_UNROLL_CHUNKS _Pragma("unroll 4")
#endif
#else
#define RQ_UNROLL
#define RQ_UNROLL_CHUNKS
#endif

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

// Output (i, j) from tier 1's f64 sum `s` of its products (bias not yet added; k > 0):
// Shared::tier1 of cpu.rs (the sum with the bias accepted when every number within
// coeff (|x row| |w row| + |bias|) of it rounds to one value; an exact zero's sign from the
// sign classes), else slow_output. Shared by both product kernels.
template <class In, class O>
RM_FN typename O::T decide(double s, const typename In::T* xrow, uint32_t ty,
                           const uint8_t* wrow, uint64_t k, bool hb, float bf, double x_norm,
                           double w_norm, uint8_t x_signs, uint8_t w_signs, double coeff,
                           int32_t start_tier) {
    double b = hb ? (double)bf : 0.0;
    double y = s + b;
    double err = coeff * x_norm * w_norm + coeff * fabs_(b);
    typename O::T v;
    bool sure = round_within_parts<O>(y, err, &v);
    if (y == 0.0 && err == 0.0) {
        // Every product is zero: the sign of the exact zero from the sign classes.
        int32_t z = matmul::zero_sign(x_signs, w_signs, (size_t)k, hb, bf);
        if (z >= 0) return O::round(z == 1 ? -0.0 : 0.0);
    } else if (sure) {
        return v;
    }
    return slow_output<In, O>(xrow, ty, wrow, (size_t)k, hb, bf, x_norm, w_norm, start_tier);
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
        out[t] = decide<In, O>(s, xrow, ty, wrow, k, hb, bf, x_norm[i], w_norm[j], x_signs[i],
                               w_signs[j], coeff, start_tier);
    }
}

// ---- The decode product (m <= REPRO_QGEMV_MAX_ROWS): one warp per output column ----

// Code q (-128 <= q < 128) as an exact f64 without a conversion instruction (the
// conversion units are a quarter of the FP64 rate): the bits of 2^52 + (q + 1024), an
// integer below 2^53 and so exact, minus 2^52 + 1024 (exact: Sterbenz).
RM_FN double code_f64(int32_t q) {
    return f64_from_bits(0x4330000000000000ULL | (uint64_t)(uint32_t)(q + 1024)) -
           F64(0x4330000000000400);
}

// Lane `lane`'s share of one column: weights [c0 + 8 lane, + 8) of every chunk c0 (a
// multiple of 256) below k, of the quantized weight row `row`, times the same elements of
// the m rows of x, into s[0..m) (the lane's partial sums, in chunk order). The 8 weights lie
// in one block and one group (GROUP >= 16, 8 | GROUP), decoded with code / group_scale.
// HAS_MIN types: each weight a q - c formed exactly (one fma: the value is exact in f64,
// blocks.rs) and fused into each row's sum. Types without c: per row the 8 products x q
// (each exact: x has at most 24 significant bits, |q| <= 128) summed in a chain of fmas
// from the first product, then the chain's sum times a fused into the row's sum (a q is the
// exact weight, so this is a sum of the products x w).
template <class In, class B>
RM_FN void lane_quant(const typename In::T* x, uint64_t k, uint32_t m, const uint8_t* row,
                      uint32_t lane, double* s) {
RQ_UNROLL_CHUNKS
    for (uint64_t c0 = 0; c0 < k; c0 += 256) {
        const uint64_t e0 = c0 + 8 * (uint64_t)lane;
        if (e0 >= k) continue;  // k is whole blocks: a lane's 8 weights are all in or out
        const uint8_t* blk = row + e0 / B::LEN * B::BYTES;
        // The lane's first weight in its block, as 8 e8: the compiler sees that e8 8 + t
        // (t < 8) shares everything above its low 3 bits with e8 8 (one address for all 8).
        const uint32_t e8 = (uint32_t)(e0 % B::LEN) / 8;
        double a, c;
        B::group_scale(blk, e8 * 8 / B::GROUP, &a, &c);
        double q[8];
RQ_UNROLL
        for (uint32_t t = 0; t < 8; t++) q[t] = code_f64(B::code(blk, e8 * 8 + t));
        if (B::HAS_MIN) {
RQ_UNROLL
            for (uint32_t t = 0; t < 8; t++) {
                const double w = fma_f64(a, q[t], -c);  // exact (blocks.rs's header)
RQ_UNROLL
                for (uint32_t r = 0; r < REPRO_QGEMV_MAX_ROWS; r++) {
                    if (r < m) s[r] = fma_f64((double)In::widen(x[r * k + e0 + t]), w, s[r]);
                }
            }
        } else {
RQ_UNROLL
            for (uint32_t r = 0; r < REPRO_QGEMV_MAX_ROWS; r++) {
                if (r < m) {
                    const typename In::T* xr = x + r * k + e0;
                    double u = (double)In::widen(xr[0]) * q[0];  // exact
RQ_UNROLL
                    for (uint32_t t = 1; t < 8; t++) u = fma_f64((double)In::widen(xr[t]), q[t], u);
                    s[r] = fma_f64(a, u, s[r]);
                }
            }
        }
    }
}

// The same for a float weight type (F32, F16, BF16: elements decoded in place; k any, each
// element checked against k): each product fused into each row's sum.
template <class In>
RM_FN void lane_float(uint32_t ty, const typename In::T* x, uint64_t k, uint32_t m,
                      const uint8_t* row, uint32_t lane, double* s) {
    for (uint64_t c0 = 0; c0 < k; c0 += 256) {
        const uint64_t e0 = c0 + 8 * (uint64_t)lane;
RQ_UNROLL
        for (uint32_t t = 0; t < 8; t++) {
            if (e0 + t < k) {
                const double w = decode_float(ty, row, (size_t)(e0 + t));
RQ_UNROLL
                for (uint32_t r = 0; r < REPRO_QGEMV_MAX_ROWS; r++) {
                    if (r < m) s[r] = fma_f64((double)In::widen(x[r * k + e0 + t]), w, s[r]);
                }
            }
        }
    }
}

// decide, out of line for the decode kernel: once per output, off its hot loop (inlined it
// would take registers from the loop).
template <class In, class O>
RM_SLOW_FN typename O::T decide_slow(double s, const typename In::T* xrow, uint32_t ty,
                                     const uint8_t* wrow, uint64_t k, bool hb, float bf,
                                     double x_norm, double w_norm, uint8_t x_signs,
                                     uint8_t w_signs, double coeff, int32_t start_tier) {
    return decide<In, O>(s, xrow, ty, wrow, k, hb, bf, x_norm, w_norm, x_signs, w_signs, coeff,
                         start_tier);
}

// One lane's partial sums of column j's row `row` (the type dispatched once per column).
template <class In>
RM_FN void lane_sums(uint32_t ty, const typename In::T* x, uint64_t k, uint32_t m,
                     const uint8_t* row, uint32_t lane, double* s) {
    switch (ty) {
#define RQ_LANE_CASE(id, B)                          \
    case id:                                         \
        lane_quant<In, B>(x, k, m, row, lane, s);    \
        return;
        RQ_FOR_EACH_QUANT_BLOCK(RQ_LANE_CASE)
#undef RQ_LANE_CASE
        default:
            lane_float<In>(ty, x, k, m, row, lane, s);
    }
}

template <class In, class O, class Bias>
__device__ void gemv(uint64_t m, uint64_t n, uint64_t k, uint32_t ty, const typename In::T* x,
                     const uint8_t* w, const double* x_norm, const uint8_t* x_signs,
                     const double* w_norm, const uint8_t* w_signs, const typename Bias::T* bias,
                     uint64_t bias_base, uint64_t bias_stride, int32_t has_bias, double coeff,
                     int32_t start_tier, typename In::T* out) {
    uint32_t len, bytes;
    geometry(ty, &len, &bytes);
    if (len == 0 || m > REPRO_QGEMV_MAX_ROWS) return;  // the launch code never passes these
    const uint64_t row_bytes = k / len * bytes;
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint32_t mm = (uint32_t)m;
    // Every lane of a warp has the same j: the loop and the reduction are warp-uniform.
    for (uint64_t j = (uint64_t)blockIdx.x * REPRO_QGEMV_WARPS + warp; j < n;
         j += (uint64_t)gridDim.x * REPRO_QGEMV_WARPS) {
        const uint8_t* wrow = w + j * row_bytes;
        double s[REPRO_QGEMV_MAX_ROWS] = {0.0, 0.0, 0.0, 0.0};
        lane_sums<In>(ty, x, k, mm, wrow, lane, s);
        // The fixed butterfly: offsets 16, 8, 4, 2, 1. Every lane ends with the same sums
        // (IEEE addition is commutative), lane 0's being
        // (((((s_0 + s_16) + (s_8 + s_24)) + ...: each partial through exactly 5 additions.
RQ_UNROLL
        for (uint32_t r = 0; r < REPRO_QGEMV_MAX_ROWS; r++) {
            if (r < mm) {
                double v = s[r];
                double o = __shfl_xor_sync(0xFFFFFFFFu, v, 16);
                v = v + o;
                o = __shfl_xor_sync(0xFFFFFFFFu, v, 8);
                v = v + o;
                o = __shfl_xor_sync(0xFFFFFFFFu, v, 4);
                v = v + o;
                o = __shfl_xor_sync(0xFFFFFFFFu, v, 2);
                v = v + o;
                o = __shfl_xor_sync(0xFFFFFFFFu, v, 1);
                v = v + o;
                s[r] = v;
            }
        }
        if (lane < mm) {
            // Lane i decides output (i, j).
            const uint64_t i = lane;
            double sum = s[0];
RQ_UNROLL
            for (uint32_t r = 1; r < REPRO_QGEMV_MAX_ROWS; r++) {
                if (lane == r) sum = s[r];
            }
            const typename In::T* xrow = x + i * k;
            const bool hb = has_bias != 0;
            const float bf = hb ? Bias::to_f32(bias[bias_base + j * bias_stride]) : 0.0f;
            typename In::T* o = out + i * n + j;
            if (k == 0) {
                // Empty sums: the bias, or +0 (straight to the slow tiers, as on the CPU).
                *o = slow_output<In, O>(xrow, ty, wrow, 0, hb, bf, x_norm[i], w_norm[j],
                                        start_tier);
            } else {
                *o = decide_slow<In, O>(sum, xrow, ty, wrow, k, hb, bf, x_norm[i], w_norm[j],
                                        x_signs[i], w_signs[j], coeff, start_tier);
            }
        }
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

#define REPRO_QGEMV(xname, In, O, bname, Bias)                                                \
    extern "C" __global__ void __launch_bounds__(REPRO_QGEMV_WARPS * 32, REPRO_QGEMV_MIN_BLOCKS) \
        repro_qgemv_##xname##_##bname(                                                        \
            uint64_t m, uint64_t n, uint64_t k, uint32_t ty, const In::T* x, const uint8_t* w, \
            const double* x_norm, const uint8_t* x_signs, const double* w_norm,               \
            const uint8_t* w_signs, const Bias::T* bias, uint64_t bias_base,                  \
            uint64_t bias_stride, int32_t has_bias, double coeff, int32_t start_tier,         \
            In::T* out) {                                                                     \
        gemv<In, O, Bias>(m, n, k, ty, x, w, x_norm, x_signs, w_norm, w_signs, bias,          \
                          bias_base, bias_stride, has_bias, coeff, start_tier, out);          \
    }

#define REPRO_QMM_BIASES(xname, In, O)            \
    REPRO_QMM(xname, In, O, f32, repro::F32)     \
    REPRO_QMM(xname, In, O, bf16, repro::BF16)   \
    REPRO_QMM(xname, In, O, f16, repro::F16)     \
    REPRO_QGEMV(xname, In, O, f32, repro::F32)   \
    REPRO_QGEMV(xname, In, O, bf16, repro::BF16) \
    REPRO_QGEMV(xname, In, O, f16, repro::F16)

REPRO_QMM_BIASES(f32, repro::matmul::InF32, repro::F32)
REPRO_QMM_BIASES(bf16, repro::matmul::InBF16, repro::BF16)
REPRO_QMM_BIASES(f16, repro::matmul::InF16, repro::F16)
