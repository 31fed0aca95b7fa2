// The correctly rounded matmul on CUDA (src/matmul/cuda.rs launches these), with the
// definition of core/src/matmul/mod.rs: every output the exact sum of products (plus bias)
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
//       bf16, f16; one warp per line);
//   repro_matmul_ozaki_<in>_<in>(the arguments of repro_matmul_<in>_<out> up to col_signs,
//       then a_slices, a_exps, a_tail, b_slices, b_exps, b_tail, out): the product with the
//       integer tier as tier 1 (int8 tensor cores, sm_80+; one warp per 16 x 8 outputs);
//   repro_matmul_ozakit_<in>_<in>(the same arguments): the same from shared-memory tiles
//       (64 x 8 NT outputs per block of 4 warps, matmul/ozaki.cuh "The tiled kernel");
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
// The tiled integer tier: warps per block (along m).
#define REPRO_MM_OZT_WARPS 4

namespace {

using namespace repro;
using namespace repro::matmul;

// The norm and sign classes of `lines` lines (tiers.cuh's line_stats: the norm a bound
// only, its squares added in any order). Lines whose elements are contiguous
// (elem_stride == 1) take one warp each, lane q reading elements q, q + 32, ... (coalesced;
// the launch gives them 32 threads per line). Strided lines take 8 threads each: a block
// holds 32 neighbouring lines (lane = line, so that the loads coalesce) times 8 chunks of
// k (warp = chunk), whose partial sums are added in chunk order (8 threads per line).
#define REPRO_MM_STATS_CHUNKS 8
template <class In>
__device__ void stats(uint64_t lines, uint64_t len, const typename In::T* data,
                      const uint64_t* bases, uint64_t per_batch, uint64_t line_stride,
                      uint64_t elem_stride, double* norm, uint8_t* signs) {
    const uint64_t thread = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint64_t threads = (uint64_t)gridDim.x * blockDim.x;
    if (elem_stride != 1) {
        REPRO_SHARED(double, part_sq, [REPRO_MM_STATS_CHUNKS][32]);
        REPRO_SHARED(uint8_t, part_signs, [REPRO_MM_STATS_CHUNKS][32]);
        const uint32_t lane = threadIdx.x & 31u, chunk = threadIdx.x >> 5;
        const uint64_t per_chunk = (len + REPRO_MM_STATS_CHUNKS - 1) / REPRO_MM_STATS_CHUNKS;
        const uint64_t first = chunk * per_chunk;
        const uint64_t last = first + per_chunk < len ? first + per_chunk : len;
        for (uint64_t l0 = (uint64_t)blockIdx.x * 32; l0 < lines; l0 += (uint64_t)gridDim.x * 32) {
            const uint64_t l = l0 + lane;
            double sq = 0.0;
            uint8_t sg = 0;
            if (l < lines && first < last) {
                Operand<In> op = {data, bases[l / per_batch], line_stride, elem_stride};
                Line<In> line = {op, l % per_batch, true};
                line_stats(first, last, 1, line, &sq, &sg);
            }
            part_sq[chunk][lane] = sq;
            part_signs[chunk][lane] = sg;
            __syncthreads();
            if (chunk == 0 && l < lines) {
                double total = 0.0;
                uint32_t bits = 0;
                for (int c = 0; c < REPRO_MM_STATS_CHUNKS; c++) {
                    total += part_sq[c][lane];
                    bits |= part_signs[c][lane];
                }
                norm[l] = sqrt(total);
                signs[l] = (uint8_t)bits;
            }
            __syncthreads();
        }
        return;
    }
    const uint32_t lane = threadIdx.x & 31u;
    for (uint64_t l = thread / 32; l < lines; l += threads / 32) {
        Operand<In> op = {data, bases[l / per_batch], line_stride, elem_stride};
        Line<In> line = {op, l % per_batch, true};
        double sq;
        uint8_t sg;
        line_stats(lane, len, 32, line, &sq, &sg);
        uint32_t bits = sg;
        for (int w = 16; w >= 1; w /= 2) {
            sq += __shfl_xor_sync(0xFFFFFFFFu, sq, w);
            bits |= __shfl_xor_sync(0xFFFFFFFFu, bits, w);
        }
        if (lane == 0) {
            norm[l] = sqrt(sq);
            signs[l] = (uint8_t)bits;
        }
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
        RM_UNROLL
        for (int r = 0; r < 4; r++)
            RM_UNROLL
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
            RM_UNROLL
            for (int q = 0; q < REPRO_MM_KT; q++) {
                double av[4], bv[4];
                RM_UNROLL
                for (int r = 0; r < 4; r++) av[r] = As[q][ty + 16 * r];
                RM_UNROLL
                for (int c = 0; c < 4; c++) bv[c] = Bs[q][tx + 16 * c];
                // Every product is exact in f64: fused or not, the same sum.
                RM_UNROLL
                for (int r = 0; r < 4; r++)
                    RM_UNROLL
                    for (int c = 0; c < 4; c++) acc[r][c] = fma_f64(av[r], bv[c], acc[r][c]);
            }
            __syncthreads();
        }
        RM_UNROLL
        for (int r = 0; r < 4; r++) {
            uint64_t i = i0 + ty + 16 * r;
            if (i >= m) continue;
            RM_UNROLL
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

// The integer tier's slices of `lines` lines (as `stats`), one warp per line: line l's
// blocks at slices[l nb S KB ..], exponents at exps[l nb ..], tail norm at tail[l]; the
// values of ozaki.cuh's oz_slice_line (lane q slices elements q and q + 32 of each block
// with oz_slice_element), its tail's squares added in the lanes' order and then over the
// warp (the bound admits any order).
template <class In>
__device__ void slices(uint64_t lines, uint64_t len, const typename In::T* data,
                       const uint64_t* bases, uint64_t per_batch, uint64_t line_stride,
                       uint64_t elem_stride, uint64_t nb, uint8_t* out, int32_t* exps,
                       double* tail) {
    const int S = OzSlices<In>::S;
    const uint32_t lane = threadIdx.x & 31u;
    const uint64_t warps = (uint64_t)gridDim.x * (blockDim.x / 32);
    for (uint64_t l = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; l < lines;
         l += warps) {
        Operand<In> op = {data, bases[l / per_batch], line_stride, elem_stride};
        Line<In> line = {op, l % per_batch, true};
        double sq = 0.0;
        bool finite = true;
        for (uint64_t blk = 0; blk < nb; blk++) {
            float x[2];
            float mx = 0.0f;
            for (int h = 0; h < 2; h++) {
                const uint64_t q = blk * RM_OZ_KB + lane + 32 * h;
                x[h] = q < len ? line(q) : 0.0f;
                if (!is_finite_f32(x[h])) {
                    finite = false;
                    x[h] = 0.0f;
                }
                const float ax = fabs_f32(x[h]);
                mx = ax > mx ? ax : mx;
            }
            for (int w = 16; w >= 1; w /= 2) {
                const float o = __shfl_xor_sync(0xFFFFFFFFu, mx, w);
                mx = o > mx ? o : mx;
            }
            const int32_t e = mx > 0.0f ? oz_block_exponent(mx) : 0;
            uint8_t* o = out + (l * nb + blk) * S * RM_OZ_KB + lane;
            int32_t levels = 0;
            for (int h = 0; h < 2; h++)
                levels = max_i32(levels, oz_slice_element<S>(x[h], e, o + 32 * h, &sq));
            for (int w = 16; w >= 1; w /= 2)
                levels = max_i32(levels, __shfl_xor_sync(0xFFFFFFFFu, levels, w));
            if (lane == 0) exps[l * nb + blk] = 8 * e + levels;
        }
        for (int w = 16; w >= 1; w /= 2) sq += __shfl_xor_sync(0xFFFFFFFFu, sq, w);
        finite = __all_sync(0xFFFFFFFFu, finite);
        if (lane == 0) tail[l] = finite ? sqrt(sq) : f64_from_bits(0x7FF8000000000000ULL);
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

// Output (i, j) of batch bi from the integer tier's sum `acc` (bias not yet added): the bound
// of ozaki.cuh and the decision of tiers.cuh. Both integer-tier kernels end here.
template <class In, class O>
__device__ void ozaki_output(double acc, uint64_t bi, uint64_t i, uint64_t j, uint64_t m,
                             uint64_t n, uint64_t k, const typename In::T* a,
                             const uint64_t* a_bases, uint64_t a_rs, uint64_t a_cs,
                             const typename In::T* b, const uint64_t* b_bases, uint64_t b_rs,
                             uint64_t b_cs, const typename O::T* bias, uint64_t bias_base,
                             uint64_t bias_stride, int32_t has_bias, double coeff,
                             int32_t start_tier, const double* row_norm,
                             const uint8_t* row_signs, const double* col_norm,
                             const uint8_t* col_signs, const double* a_tail,
                             const double* b_tail, typename O::T* out) {
    const Operand<In> A = {a, a_bases[bi], a_rs, a_cs};
    const Operand<In> B = {b, b_bases[bi], b_rs, b_cs};
    const OutputCtx<In> ctx = output_ctx<In, O>(
        A, B, k, bias, bias_base + j * bias_stride, has_bias, coeff, start_tier,
        row_norm[bi * m + i], row_signs[bi * m + i], col_norm[bi * n + j], col_signs[bi * n + j]);
    const double y = acc + (double)ctx.bias;
    const double err = oz_err<In>(ctx, a_tail[bi * m + i], b_tail[bi * n + j]);
    out[(bi * m + i) * n + j] = decide_output<In, O>(y, err, ctx, i, j);
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
            ozaki_output<In, O>(acc[r], bi, i, j, m, n, k, a, a_bases, a_rs, a_cs, b, b_bases,
                                b_rs, b_cs, bias, bias_base, bias_stride, has_bias, coeff,
                                start_tier, row_norm, row_signs, col_norm, col_signs, a_tail,
                                b_tail, out);
        }
    }
}

// 16 slice bytes: the unit of the tiled kernel's staging loads (one 128-bit load where the
// address is 16-byte aligned, which the slice layout guarantees).
struct alignas(16) OzQuad {
    uint32_t w[4];
};

// The product through the integer tier, tiled (ozaki.cuh's "# The tiled kernel"): a block
// of REPRO_MM_OZT_WARPS = 4 warps computes 64 x BN outputs (BN = 8 NT); per 64-block of k it
// stages the slices and packed exponents of its 64 rows of A and BN columns of B in shared
// memory (one thread per line), and warp w runs rows 16 w .. 16 w + 15 and all BN columns
// (NT n8 tiles) from there. Two blocks fit an SM (the registers of 4 warps), so one block's
// staging overlaps the other's products. The sums of each output are the same integers as in
// product_ozaki, combined per k-block in pairs of diagonals (X_j = 2^7 D_2j + D_2j+1).
template <class In, class O>
__device__ void product_ozaki_tiled(
    uint64_t batch, uint64_t m, uint64_t n, uint64_t k, const typename In::T* a,
    const uint64_t* a_bases, uint64_t a_rs, uint64_t a_cs, const typename In::T* b,
    const uint64_t* b_bases, uint64_t b_rs, uint64_t b_cs, const typename O::T* bias,
    uint64_t bias_base, uint64_t bias_stride, int32_t has_bias, double coeff,
    int32_t start_tier, const double* row_norm, const uint8_t* row_signs,
    const double* col_norm, const uint8_t* col_signs, const uint8_t* a_sl, const int32_t* a_exp,
    const double* a_tail, const uint8_t* b_sl, const int32_t* b_exp, const double* b_tail,
    typename O::T* out) {
    const int S = OzSlices<In>::S;
    const int F = 7 * S;
    const int ND = 2 * S - 1;
    const int NT = OzTile<In>::NT;
    const int BN = 8 * NT;
    const int LINES = RM_OZT_BM + BN;
    const int LW = RM_OZT_LINE_WORDS(S);
    // The staged slices as 16-byte units (so that the staging stores are 16-byte stores),
    // read by the fragments as words.
    REPRO_SHARED(OzQuad, oz_slq,
                 [(RM_OZT_BM + 8 * OzTile<In>::NT) * RM_OZT_LINE_WORDS(OzSlices<In>::S) / 4]);
    REPRO_SHARED(int32_t, oz_ex, [RM_OZT_BM + 8 * OzTile<In>::NT]);
    const uint32_t* oz_sl = reinterpret_cast<const uint32_t*>(&oz_slq[0]);
    const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    const uint32_t g = lane >> 2, t = lane & 3u;
    const uint32_t wm = warp;
    const uint64_t nb = (k + RM_OZ_KB - 1) / RM_OZ_KB;
    const uint64_t line_bytes = nb * S * RM_OZ_KB;
    const uint64_t mt = (m + RM_OZT_BM - 1) / RM_OZT_BM, nt = (n + BN - 1) / BN;
    const uint64_t tiles = batch * mt * nt;
    // This warp's rows and columns inside the tile (shared-memory line indices).
    const uint32_t ra = 16 * wm + g, cb = RM_OZT_BM + g;
    const uint32_t stage_l = tid;
    for (uint64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const uint64_t bi = tile / (mt * nt);
        const uint64_t i0 = (tile / nt % mt) * RM_OZT_BM, j0 = tile % nt * BN;
        // This thread's staging line (tile line stage_l = tid): its slices and exponents in
        // global memory, or null past the operand's edge.
        const uint8_t* stage_line = nullptr;
        const int32_t* stage_exp = nullptr;
        if (stage_l < (uint32_t)LINES) {
            const bool isa = stage_l < RM_OZT_BM;
            const uint64_t r = isa ? i0 + stage_l : j0 + (stage_l - RM_OZT_BM);
            if (r < (isa ? m : n)) {
                const uint64_t line = isa ? bi * m + r : bi * n + r;
                stage_line = (isa ? a_sl : b_sl) + line * line_bytes;
                stage_exp = (isa ? a_exp : b_exp) + line * nb;
            }
        }
        double acc[NT][4];
        RM_UNROLL
        for (int c = 0; c < NT; c++)
            RM_UNROLL
            for (int r = 0; r < 4; r++) acc[c][r] = 0.0;
        for (uint64_t blk = 0; blk < nb; blk++) {
            // Stage the packed exponents (8 E + L; a line past the operand has L = 0) and
            // each line's levels below its own L (the others are zero digits).
            if (stage_line != nullptr) {
                const int32_t packed = stage_exp[blk];
                oz_ex[stage_l] = packed;
                const int32_t lv = oz_levels(packed);
                const uint8_t* src = stage_line + blk * S * RM_OZ_KB;
                RM_UNROLL
                for (int s = 0; s < S; s++)
                    RM_UNROLL
                    for (int h = 0; h < 4; h++) {
                        OzQuad v = {{0u, 0u, 0u, 0u}};
                        if (s < lv)
                            v = *reinterpret_cast<const OzQuad*>(src + s * RM_OZ_KB + 16 * h);
                        oz_slq[stage_l * (LW / 4) + s * 4 + h] = v;
                    }
            } else if (stage_l < (uint32_t)LINES) {
                oz_ex[stage_l] = 0;
                RM_UNROLL
                for (int s = 0; s < S; s++)
                    RM_UNROLL
                    for (int h = 0; h < 4; h++)
                        oz_slq[stage_l * (LW / 4) + s * 4 + h] = OzQuad{{0u, 0u, 0u, 0u}};
            }
            __syncthreads();
            // The warp's level counts: the largest of its 16 rows and of its 8 NT columns.
            int32_t lva = oz_levels(oz_ex[16 * wm + (lane & 15u)]);
            int32_t lvb = lane < 8u * NT ? oz_levels(oz_ex[RM_OZT_BM + lane]) : 0;
            for (int w = 16; w >= 1; w /= 2) {
                lva = max_i32(lva, __shfl_xor_sync(0xFFFFFFFFu, lva, w));
                lvb = max_i32(lvb, __shfl_xor_sync(0xFFFFFFFFu, lvb, w));
            }
            // x[j] = 2^7 D_2j + D_2j+1 (ozaki.cuh: exact in s32).
            int32_t x[S][NT][4];
            RM_UNROLL
            for (int j = 0; j < S; j++)
                RM_UNROLL
                for (int c = 0; c < NT; c++)
                    RM_UNROLL
                    for (int r = 0; r < 4; r++) x[j][c][r] = 0;
            RM_UNROLL
            for (int step = 0; step < RM_OZ_KB / 32; step++) {
                // Levels at or past the warp's counts are not read (their pairs are
                // skipped below); zeros keep every register defined.
                uint32_t fa[S][4], fb[S][NT][2];
                RM_UNROLL
                for (int s = 0; s < S; s++) {
                    const uint32_t w0 = s * 16 + 8 * step + t;
                    const bool on = s < lva;
                    fa[s][0] = on ? oz_sl[ra * LW + w0] : 0u;
                    fa[s][1] = on ? oz_sl[(ra + 8) * LW + w0] : 0u;
                    fa[s][2] = on ? oz_sl[ra * LW + w0 + 4] : 0u;
                    fa[s][3] = on ? oz_sl[(ra + 8) * LW + w0 + 4] : 0u;
                }
                RM_UNROLL
                for (int u = 0; u < S; u++) {
                    const uint32_t w0 = u * 16 + 8 * step + t;
                    const bool on = u < lvb;
                    RM_UNROLL
                    for (int c = 0; c < NT; c++) {
                        fb[u][c][0] = on ? oz_sl[(cb + 8 * c) * LW + w0] : 0u;
                        fb[u][c][1] = on ? oz_sl[(cb + 8 * c) * LW + w0 + 4] : 0u;
                    }
                }
                // lva and lvb are the same in every lane: whole warps take each branch.
                RM_UNROLL
                for (int s = 0; s < S; s++)
                    RM_UNROLL
                    for (int u = 0; u < S; u++) {
                        if (s >= lva || u >= lvb) continue;
                        const int j = (s + u) / 2;
                        RM_UNROLL
                        for (int c = 0; c < NT; c++) {
                            if ((s + u) % 2 == 1) {
                                oz_mma(fa[s], fb[u][c], x[j][c]);
                            } else {
                                int32_t y[4] = {0, 0, 0, 0};
                                oz_mma(fa[s], fb[u][c], y);
                                RM_UNROLL
                                for (int r = 0; r < 4; r++) x[j][c][r] += y[r] * 128;
                            }
                        }
                    }
            }
            // z_i = 2^14 x[2i] + x[2i+1] (exact in s64 and f64, ozaki.cuh) weighs
            // 2^(E_A + E_B - 2F + 7 (ND - 4 - 4 i)); added in i order.
            const int32_t ea[2] = {oz_exp(oz_ex[ra]), oz_exp(oz_ex[ra + 8])};
            RM_UNROLL
            for (int c = 0; c < NT; c++)
                RM_UNROLL
                for (int r = 0; r < 4; r++) {
                    const int32_t e =
                        ea[r / 2] +
                        oz_exp(oz_ex[RM_OZT_BM + 8 * c + 2 * t + r % 2]) - 2 * F;
                    RM_UNROLL
                    for (int i = 0; i < S / 2; i++) {
                        const int64_t z = (int64_t)x[2 * i][c][r] * 16384 + x[2 * i + 1][c][r];
                        acc[c][r] = fma_f64(oz_i64_to_f64(z), oz_pow2(e + 7 * (ND - 4 - 4 * i)),
                                            acc[c][r]);
                    }
                }
            // The next block's staging overwrites what this one read.
            __syncthreads();
        }
        RM_UNROLL
        for (int c = 0; c < NT; c++)
            RM_UNROLL
            for (int r = 0; r < 4; r++) {
                const uint64_t i = i0 + 16 * wm + g + 8 * (r / 2);
                const uint64_t j = j0 + 8 * c + 2 * t + r % 2;
                if (i >= m || j >= n) continue;
                ozaki_output<In, O>(acc[c][r], bi, i, j, m, n, k, a, a_bases, a_rs, a_cs, b,
                                    b_bases, b_rs, b_cs, bias, bias_base, bias_stride, has_bias,
                                    coeff, start_tier, row_norm, row_signs, col_norm, col_signs,
                                    a_tail, b_tail, out);
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

// Both integer-tier products: kernel repro_matmul_<kname>_<in>_<out> running `fn` with
// `warps` warps per block, the same arguments.
#define REPRO_MM_OZAKI_KERNEL(kname, fn, warps, iname, In, oname, O)                          \
    extern "C" __global__ void __launch_bounds__(32 * (warps))                                \
        repro_matmul_##kname##_##iname##_##oname(                                             \
            uint64_t batch, uint64_t m, uint64_t n, uint64_t k, const In::T* a,               \
            const uint64_t* a_bases, uint64_t a_rs, uint64_t a_cs, const In::T* b,            \
            const uint64_t* b_bases, uint64_t b_rs, uint64_t b_cs, const O::T* bias,          \
            uint64_t bias_base, uint64_t bias_stride, int32_t has_bias, double coeff,         \
            int32_t start_tier, const double* row_norm, const uint8_t* row_signs,             \
            const double* col_norm, const uint8_t* col_signs, const uint8_t* a_sl,            \
            const int32_t* a_exp, const double* a_tail, const uint8_t* b_sl,                  \
            const int32_t* b_exp, const double* b_tail, O::T* out) {                          \
        fn<In, O>(batch, m, n, k, a, a_bases, a_rs, a_cs, b, b_bases, b_rs, b_cs, bias,       \
                  bias_base, bias_stride, has_bias, coeff, start_tier, row_norm, row_signs,   \
                  col_norm, col_signs, a_sl, a_exp, a_tail, b_sl, b_exp, b_tail, out);        \
    }
#define REPRO_MM_OZAKI(iname, In, oname, O) \
    REPRO_MM_OZAKI_KERNEL(ozaki, product_ozaki, REPRO_MM_OZ_WARPS, iname, In, oname, O)
#define REPRO_MM_OZAKI_TILED(iname, In, oname, O) \
    REPRO_MM_OZAKI_KERNEL(ozakit, product_ozaki_tiled, REPRO_MM_OZT_WARPS, iname, In, oname, O)

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
REPRO_MM_OZAKI_TILED(f32, repro::matmul::InF32, f32, repro::F32)
REPRO_MM_OZAKI_TILED(bf16, repro::matmul::InBF16, bf16, repro::BF16)
REPRO_MM_OZAKI_TILED(f16, repro::matmul::InF16, f16, repro::F16)
