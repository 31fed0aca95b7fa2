// The correctly rounded matmul on CUDA (src/matmul/cuda.rs launches these), with the
// definition of src/matmul/mod.rs: every output the exact sum of products (plus bias)
// rounded once. Tier 1 is either the integer tier of matmul/ozaki.cuh (s8 slices on the
// tensor cores) or a shared-memory tiled f64 product (64 x 64 outputs per block of
// 256 threads, 4 x 4 per thread, k in steps of 16), its own summation order; each output
// then goes through matmul/tiers.cuh, the operation-for-operation mirror of the CPU's
// decision and of its tiers 2 and 3, so the outputs are the CPU's bits.
//
// Kernels (<in> one of f32, bf16, f16, f8e4m3; <out> f32, bf16, f16; 16-bit formats and f8
// as their bit patterns; every index 64-bit):
//   repro_matmul_stats_<in>(lines, len, data, bases, per_batch, line_stride, elem_stride,
//       norm, signs): the norm and sign classes of `lines` lines (line l of batch
//       l / per_batch: element q at bases[batch] + (l % per_batch) line_stride + q
//       elem_stride);
//   repro_matmul_<in>_<out>(batch, m, n, k, a, a_bases, a_rs, a_cs, b, b_bases, b_rs, b_cs,
//       bias, bias_base, bias_stride, has_bias, coeff, start_tier, row_norm, row_signs,
//       col_norm, col_signs, out): out (batch, m, n) contiguous;
//   repro_matmul_slices_<in>(lines, len, data, bases, per_batch, line_stride, elem_stride,
//       nb, slices, exps, tail): the integer tier's s8 slices, block exponents and tail
//       norms (matmul/ozaki.cuh) of `lines` lines read as by the stats kernel (<in> f32,
//       bf16, f16);
//   repro_matmul_ozaki_<in>_<in>(the arguments of repro_matmul_<in>_<out> up to col_signs,
//       then a_slices, a_exps, a_tail, b_slices, b_exps, b_tail, out): the product with the
//       integer tier as tier 1 (int8 tensor cores, sm_80+; one warp per 16 x 8 outputs);
//   repro_to_f8e4m3_<in>(count, overflow, src, base, rank, dims_strides, out): the cast of
//       src/ops/cast.rs over a strided source (element offsets base + the strided index;
//       dims then strides, `rank` of each).
#include "matmul/ozaki.cuh"
#include "matmul/tiers.cuh"

#define REPRO_MM_BLOCK 256
#define REPRO_MM_TILE 64
#define REPRO_MM_KT 16
// The integer tier: warps per block (each its own 16 x 8 output tile).
#define REPRO_MM_OZ_WARPS 4

namespace {

using namespace repro;
using namespace repro::matmul;

template <class In>
__device__ void stats(uint64_t lines, uint64_t len, const typename In::T* data,
                      const uint64_t* bases, uint64_t per_batch, uint64_t line_stride,
                      uint64_t elem_stride, double* norm, uint8_t* signs) {
    for (uint64_t l = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; l < lines;
         l += (uint64_t)gridDim.x * blockDim.x) {
        Operand<In> op = {data, bases[l / per_batch], line_stride, elem_stride};
        Line<In> line = {op, l % per_batch, true};
        line_stats(len, line, &norm[l], &signs[l]);
    }
}

// Everything output (i, j)'s decision reads besides its first tier's sum: its operands
// (for tiers 2 and 3), the bias element at `bias_at`, the tier-1 coefficient and the line
// stats of row i and column j.
template <class In, class O>
__device__ OutputCtx<In> output_ctx(const Operand<In>& A, const Operand<In>& B, uint64_t k,
                                    const typename O::T* bias, uint64_t bias_at,
                                    int32_t has_bias, double coeff, int32_t start_tier,
                                    double row_norm, uint8_t row_signs, double col_norm,
                                    uint8_t col_signs) {
    OutputCtx<In> ctx;
    ctx.a = A;
    ctx.b = B;
    ctx.k = (size_t)k;
    ctx.has_bias = has_bias != 0;
    ctx.bias = has_bias ? O::to_f32(bias[bias_at]) : 0.0f;
    ctx.row_err = coeff * row_norm;
    ctx.bias_err = coeff * fabs_((double)ctx.bias);
    ctx.row_norm = row_norm;
    ctx.col_norm = col_norm;
    ctx.row_signs = row_signs;
    ctx.col_signs = col_signs;
    ctx.start_tier = start_tier;
    return ctx;
}

template <class In, class O>
__device__ void product(uint64_t batch, uint64_t m, uint64_t n, uint64_t k,
                        const typename In::T* a, const uint64_t* a_bases, uint64_t a_rs,
                        uint64_t a_cs, const typename In::T* b, const uint64_t* b_bases,
                        uint64_t b_rs, uint64_t b_cs, const typename O::T* bias,
                        uint64_t bias_base, uint64_t bias_stride, int32_t has_bias,
                        double coeff, int32_t start_tier, const double* row_norm,
                        const uint8_t* row_signs, const double* col_norm,
                        const uint8_t* col_signs, typename O::T* out) {
    REPRO_SHARED(double, As, [REPRO_MM_KT][REPRO_MM_TILE]);
    REPRO_SHARED(double, Bs, [REPRO_MM_KT][REPRO_MM_TILE]);
    const uint32_t t = threadIdx.x;
    const uint32_t tx = t % 16, ty = t / 16;
    const uint64_t mt = (m + REPRO_MM_TILE - 1) / REPRO_MM_TILE;
    const uint64_t nt = (n + REPRO_MM_TILE - 1) / REPRO_MM_TILE;
    const uint64_t tiles = batch * mt * nt;
    for (uint64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const uint64_t bi = tile / (mt * nt);
        const uint64_t i0 = (tile / nt % mt) * REPRO_MM_TILE;
        const uint64_t j0 = tile % nt * REPRO_MM_TILE;
        Operand<In> A = {a, a_bases[bi], a_rs, a_cs};
        Operand<In> B = {b, b_bases[bi], b_rs, b_cs};
        double acc[4][4];
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) acc[r][c] = 0.0;
        for (uint64_t p0 = 0; p0 < k; p0 += REPRO_MM_KT) {
            // Load the tiles, consecutive threads along whichever index is contiguous.
            for (uint32_t e = t; e < REPRO_MM_KT * REPRO_MM_TILE; e += REPRO_MM_BLOCK) {
                uint32_t r, q;
                if (a_cs == 1) {
                    r = e / REPRO_MM_KT;
                    q = e % REPRO_MM_KT;
                } else {
                    q = e / REPRO_MM_TILE;
                    r = e % REPRO_MM_TILE;
                }
                bool in = i0 + r < m && p0 + q < k;
                As[q][r] = in ? (double)A.at(i0 + r, p0 + q) : 0.0;
                uint32_t c;
                if (b_rs == 1) {
                    c = e / REPRO_MM_KT;
                    q = e % REPRO_MM_KT;
                } else {
                    q = e / REPRO_MM_TILE;
                    c = e % REPRO_MM_TILE;
                }
                in = j0 + c < n && p0 + q < k;
                Bs[q][c] = in ? (double)B.at(p0 + q, j0 + c) : 0.0;
            }
            __syncthreads();
            for (int q = 0; q < REPRO_MM_KT; q++) {
                double av[4], bv[4];
                for (int r = 0; r < 4; r++) av[r] = As[q][ty + 16 * r];
                for (int c = 0; c < 4; c++) bv[c] = Bs[q][tx + 16 * c];
                // Every product is exact in f64: fused or not, the same sum.
                for (int r = 0; r < 4; r++)
                    for (int c = 0; c < 4; c++) acc[r][c] = fma_f64(av[r], bv[c], acc[r][c]);
            }
            __syncthreads();
        }
        for (int r = 0; r < 4; r++) {
            uint64_t i = i0 + ty + 16 * r;
            if (i >= m) continue;
            for (int c = 0; c < 4; c++) {
                uint64_t j = j0 + tx + 16 * c;
                if (j >= n) continue;
                const OutputCtx<In> ctx = output_ctx<In, O>(
                    A, B, k, bias, bias_base + j * bias_stride, has_bias, coeff, start_tier,
                    row_norm[bi * m + i], row_signs[bi * m + i], col_norm[bi * n + j],
                    col_signs[bi * n + j]);
                out[(bi * m + i) * n + j] = finish_output<In, O>(acc[r][c], ctx, i, j);
            }
        }
    }
}

// The integer tier's slices of `lines` lines (as `stats`): line l's blocks at
// slices[l nb S KB ..], exponents at exps[l nb ..], tail norm at tail[l] (ozaki.cuh).
template <class In>
__device__ void slices(uint64_t lines, uint64_t len, const typename In::T* data,
                       const uint64_t* bases, uint64_t per_batch, uint64_t line_stride,
                       uint64_t elem_stride, uint64_t nb, uint8_t* out, int32_t* exps,
                       double* tail) {
    const int S = OzSlices<In>::S;
    for (uint64_t l = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; l < lines;
         l += (uint64_t)gridDim.x * blockDim.x) {
        Operand<In> op = {data, bases[l / per_batch], line_stride, elem_stride};
        Line<In> line = {op, l % per_batch, true};
        oz_slice_line<S>(line, len, nb, out + l * nb * S * RM_OZ_KB, exps + l * nb, &tail[l]);
    }
}

// mma.sync m16n8k32 s8 x s8 + s32 -> s32, accumulating into d.
__device__ __forceinline__ void oz_mma(const uint32_t a[4], const uint32_t b[2], int32_t d[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif defined(REPRO_EMULATED_DEVICE)
    int32_t c[4] = {d[0], d[1], d[2], d[3]};
    REPRO_EMU_MMA_M16N8K32_S8(a, b, c, d);
#else
    __trap();
#endif
}

// Four slice bytes of line `l` (or zeros past the last line) at byte `off` of its slices.
__device__ __forceinline__ uint32_t oz_word(const uint8_t* sl, uint64_t l, bool in,
                                            uint64_t line_bytes, uint64_t off) {
    return in ? *reinterpret_cast<const uint32_t*>(sl + l * line_bytes + off) : 0u;
}

// The product through the integer tier (ozaki.cuh): one warp per 16 x 8 output tile (rows
// i0 + g, i0 + g + 8 and B column j0 + g loaded by lane 4 g + t; outputs at rows g, g + 8,
// columns 2 t, 2 t + 1, the mma's C/D layout), every output then decided by decide_output.
template <class In, class O>
__device__ void product_ozaki(uint64_t batch, uint64_t m, uint64_t n, uint64_t k,
                              const typename In::T* a, const uint64_t* a_bases, uint64_t a_rs,
                              uint64_t a_cs, const typename In::T* b, const uint64_t* b_bases,
                              uint64_t b_rs, uint64_t b_cs, const typename O::T* bias,
                              uint64_t bias_base, uint64_t bias_stride, int32_t has_bias,
                              double coeff, int32_t start_tier, const double* row_norm,
                              const uint8_t* row_signs, const double* col_norm,
                              const uint8_t* col_signs, const uint8_t* a_sl,
                              const int32_t* a_exp, const double* a_tail, const uint8_t* b_sl,
                              const int32_t* b_exp, const double* b_tail, typename O::T* out) {
    const int S = OzSlices<In>::S;
    const int F = 7 * S;
    const int ND = 2 * S - 1;
    const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const uint32_t g = lane >> 2, t = lane & 3u;
    const uint64_t nb = (k + RM_OZ_KB - 1) / RM_OZ_KB;
    const uint64_t line_bytes = nb * S * RM_OZ_KB;
    const uint64_t mt = (m + 15) / 16, nt = (n + 7) / 8;
    const uint64_t tiles = batch * mt * nt;
    for (uint64_t tile = (uint64_t)blockIdx.x * REPRO_MM_OZ_WARPS + warp; tile < tiles;
         tile += (uint64_t)gridDim.x * REPRO_MM_OZ_WARPS) {
        const uint64_t bi = tile / (mt * nt);
        const uint64_t i0 = (tile / nt % mt) * 16, j0 = tile % nt * 8;
        // The lines this lane loads: rows i0 + g, i0 + g + 8 of A, column j0 + g of B.
        const uint64_t ra = i0 + g, rb = i0 + g + 8, cj = j0 + g;
        const bool ina = ra < m, inb = rb < m, inj = cj < n;
        const uint64_t la = bi * m + ra, lb = bi * m + rb, lj = bi * n + cj;
        // The outputs it holds: rows oi[r / 2], columns oj[r % 2].
        const uint64_t oi[2] = {i0 + g, i0 + g + 8}, oj[2] = {j0 + 2 * t, j0 + 2 * t + 1};
        double acc[4] = {0.0, 0.0, 0.0, 0.0};
        for (uint64_t blk = 0; blk < nb; blk++) {
            // The tile's level counts in this block: digits at or past them are all zero.
            int32_t lva = 0, lvb = 0;
            if (ina) lva = oz_levels(a_exp[la * nb + blk]);
            if (inb) lva = max_i32(lva, oz_levels(a_exp[lb * nb + blk]));
            if (inj) lvb = oz_levels(b_exp[lj * nb + blk]);
            for (int w = 16; w >= 1; w /= 2) {
                lva = max_i32(lva, __shfl_xor_sync(0xFFFFFFFFu, lva, w));
                lvb = max_i32(lvb, __shfl_xor_sync(0xFFFFFFFFu, lvb, w));
            }
            int32_t d[ND][4];
            for (int e = 0; e < ND; e++)
                for (int r = 0; r < 4; r++) d[e][r] = 0;
            for (int step = 0; step < RM_OZ_KB / 32; step++) {
                uint32_t fa[S][4], fb[S][2];
                for (int s = 0; s < S; s++) {
                    const uint64_t off = (blk * S + s) * RM_OZ_KB + 32 * step + 4 * t;
                    fa[s][0] = oz_word(a_sl, la, ina && s < lva, line_bytes, off);
                    fa[s][1] = oz_word(a_sl, lb, inb && s < lva, line_bytes, off);
                    fa[s][2] = oz_word(a_sl, la, ina && s < lva, line_bytes, off + 16);
                    fa[s][3] = oz_word(a_sl, lb, inb && s < lva, line_bytes, off + 16);
                    fb[s][0] = oz_word(b_sl, lj, inj && s < lvb, line_bytes, off);
                    fb[s][1] = oz_word(b_sl, lj, inj && s < lvb, line_bytes, off + 16);
                }
                // lva and lvb are the same in every lane: whole warps take each branch.
                for (int s = 0; s < S; s++)
                    for (int u = 0; u < S; u++)
                        if (s < lva && u < lvb) oz_mma(fa[s], fb[u], d[s + u]);
            }
            for (int r = 0; r < 4; r++) {
                const uint64_t i = oi[r / 2], j = oj[r % 2];
                if (i >= m || j >= n) continue;
                const int32_t e = oz_exp(a_exp[(bi * m + i) * nb + blk]) +
                                  oz_exp(b_exp[(bi * n + j) * nb + blk]) - 2 * F;
                // The product by a power of two is exact, so the fused multiply-add rounds
                // once, as the separate product and sum would: the same value.
                for (int dd = 0; dd < ND; dd++)
                    acc[r] = fma_f64((double)d[dd][r], oz_pow2(e + 7 * (ND - 1 - dd)), acc[r]);
            }
        }
        for (int r = 0; r < 4; r++) {
            const uint64_t i = oi[r / 2], j = oj[r % 2];
            if (i >= m || j >= n) continue;
            const Operand<In> A = {a, a_bases[bi], a_rs, a_cs};
            const Operand<In> B = {b, b_bases[bi], b_rs, b_cs};
            const OutputCtx<In> ctx = output_ctx<In, O>(
                A, B, k, bias, bias_base + j * bias_stride, has_bias, coeff, start_tier,
                row_norm[bi * m + i], row_signs[bi * m + i], col_norm[bi * n + j],
                col_signs[bi * n + j]);
            const double y = acc[r] + (double)ctx.bias;
            const double err = oz_err<In>(ctx, a_tail[bi * m + i], b_tail[bi * n + j]);
            out[(bi * m + i) * n + j] = decide_output<In, O>(y, err, ctx, i, j);
        }
    }
}

template <class In>
__device__ void to_f8e4m3(uint64_t count, int32_t overflow, const typename In::T* src,
                          uint64_t base, uint32_t rank, const uint64_t* dims_strides,
                          uint8_t* out) {
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (uint64_t)gridDim.x * blockDim.x) {
        // The strided offset of logical element e (64-bit odometer, last dimension fastest).
        uint64_t rest = e, off = base;
        for (uint32_t d = rank; d-- > 0;) {
            uint64_t dim = dims_strides[d];
            off += (rest % dim) * dims_strides[rank + d];
            rest /= dim;
        }
        out[e] = f32_to_f8e4m3(In::widen(src[off]), overflow);
    }
}

}  // namespace

#define REPRO_MM_STATS(name, In)                                                              \
    extern "C" __global__ void __launch_bounds__(REPRO_MM_BLOCK) repro_matmul_stats_##name(   \
        uint64_t lines, uint64_t len, const In::T* data, const uint64_t* bases,               \
        uint64_t per_batch, uint64_t line_stride, uint64_t elem_stride, double* norm,         \
        uint8_t* signs) {                                                                     \
        stats<In>(lines, len, data, bases, per_batch, line_stride, elem_stride, norm, signs); \
    }

#define REPRO_MM_CAST(name, In)                                                               \
    extern "C" __global__ void __launch_bounds__(REPRO_MM_BLOCK) repro_to_f8e4m3_##name(      \
        uint64_t count, int32_t overflow, const In::T* src, uint64_t base, uint32_t rank,     \
        const uint64_t* dims_strides, uint8_t* out) {                                         \
        to_f8e4m3<In>(count, overflow, src, base, rank, dims_strides, out);                   \
    }

#define REPRO_MM_PRODUCT(iname, In, oname, O)                                                 \
    extern "C" __global__ void __launch_bounds__(REPRO_MM_BLOCK)                              \
        repro_matmul_##iname##_##oname(                                                       \
            uint64_t batch, uint64_t m, uint64_t n, uint64_t k, const In::T* a,               \
            const uint64_t* a_bases, uint64_t a_rs, uint64_t a_cs, const In::T* b,            \
            const uint64_t* b_bases, uint64_t b_rs, uint64_t b_cs, const O::T* bias,          \
            uint64_t bias_base, uint64_t bias_stride, int32_t has_bias, double coeff,         \
            int32_t start_tier, const double* row_norm, const uint8_t* row_signs,             \
            const double* col_norm, const uint8_t* col_signs, O::T* out) {                    \
        product<In, O>(batch, m, n, k, a, a_bases, a_rs, a_cs, b, b_bases, b_rs, b_cs, bias,  \
                       bias_base, bias_stride, has_bias, coeff, start_tier, row_norm,        \
                       row_signs, col_norm, col_signs, out);                                  \
    }

#define REPRO_MM_SLICES(name, In)                                                             \
    extern "C" __global__ void __launch_bounds__(REPRO_MM_BLOCK) repro_matmul_slices_##name(  \
        uint64_t lines, uint64_t len, const In::T* data, const uint64_t* bases,               \
        uint64_t per_batch, uint64_t line_stride, uint64_t elem_stride, uint64_t nb,          \
        uint8_t* out, int32_t* exps, double* tail) {                                          \
        slices<In>(lines, len, data, bases, per_batch, line_stride, elem_stride, nb, out,     \
                   exps, tail);                                                               \
    }

#define REPRO_MM_OZAKI(iname, In, oname, O)                                                   \
    extern "C" __global__ void __launch_bounds__(32 * REPRO_MM_OZ_WARPS)                      \
        repro_matmul_ozaki_##iname##_##oname(                                                 \
            uint64_t batch, uint64_t m, uint64_t n, uint64_t k, const In::T* a,               \
            const uint64_t* a_bases, uint64_t a_rs, uint64_t a_cs, const In::T* b,            \
            const uint64_t* b_bases, uint64_t b_rs, uint64_t b_cs, const O::T* bias,          \
            uint64_t bias_base, uint64_t bias_stride, int32_t has_bias, double coeff,         \
            int32_t start_tier, const double* row_norm, const uint8_t* row_signs,             \
            const double* col_norm, const uint8_t* col_signs, const uint8_t* a_sl,            \
            const int32_t* a_exp, const double* a_tail, const uint8_t* b_sl,                  \
            const int32_t* b_exp, const double* b_tail, O::T* out) {                          \
        product_ozaki<In, O>(batch, m, n, k, a, a_bases, a_rs, a_cs, b, b_bases, b_rs, b_cs,  \
                             bias, bias_base, bias_stride, has_bias, coeff, start_tier,       \
                             row_norm, row_signs, col_norm, col_signs, a_sl, a_exp, a_tail,   \
                             b_sl, b_exp, b_tail, out);                                       \
    }

REPRO_MM_STATS(f32, repro::matmul::InF32)
REPRO_MM_STATS(bf16, repro::matmul::InBF16)
REPRO_MM_STATS(f16, repro::matmul::InF16)
REPRO_MM_STATS(f8e4m3, repro::matmul::InF8)
REPRO_MM_CAST(f32, repro::matmul::InF32)
REPRO_MM_CAST(bf16, repro::matmul::InBF16)
REPRO_MM_CAST(f16, repro::matmul::InF16)
REPRO_MM_PRODUCT(f32, repro::matmul::InF32, f32, repro::F32)
REPRO_MM_PRODUCT(bf16, repro::matmul::InBF16, bf16, repro::BF16)
REPRO_MM_PRODUCT(f16, repro::matmul::InF16, f16, repro::F16)
REPRO_MM_PRODUCT(f8e4m3, repro::matmul::InF8, f32, repro::F32)
REPRO_MM_PRODUCT(f8e4m3, repro::matmul::InF8, bf16, repro::BF16)
REPRO_MM_SLICES(f32, repro::matmul::InF32)
REPRO_MM_SLICES(bf16, repro::matmul::InBF16)
REPRO_MM_SLICES(f16, repro::matmul::InF16)
REPRO_MM_OZAKI(f32, repro::matmul::InF32, f32, repro::F32)
REPRO_MM_OZAKI(bf16, repro::matmul::InBF16, bf16, repro::BF16)
REPRO_MM_OZAKI(f16, repro::matmul::InF16, f16, repro::F16)
