// Precision::Ozaki radix-8 Stockham stage on tensor cores: the slice products P_ij = W_i d_j
// of ozaki.cuh as `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` (inline PTX,
// sm_80+), one warp per 8 butterflies (the 8 columns of B), the 16 x 16 real W8 digit
// matrices as A. The digits are integers |d| <= 128, exact in bf16, and every partial sum
// of a product is an integer below 2^18 (the bit budget of ozaki.rs), exact in f32, so the
// tensor core's sums equal the plain loop's whatever its adder tree; a zero's sign never
// reaches the output (acc starts at +0 and +0 + -0 = +0). The split, the twiddle products
// and the combination are the same functions as the plain path, in the same order.
//
// UNVERIFIED ON HARDWARE: no GPU was available when this was written; the plain kernel
// (repro_fft_stockham8_ozaki, host-checked bit for bit) is the one src/fft/cuda.rs launches
// unless its OZAKI_MMA constant is set. tests/fft_cuda.rs compares this kernel with the
// CPU when a GPU is present. Device code (warp shuffles and tensor-core PTX): nvcc and the
// emulated device of tools/cuda-emu, whose mma.sync follows the PTX ISA's fragment tables.
#pragma once

#include "fft/ozaki.cuh"
#include "fft/stockham.cuh"

#if defined(__CUDACC__) || defined(REPRO_EMULATED_DEVICE)

namespace repro {
namespace fft {

// Two f32 integers (|v| <= 256, so their low 16 bits are zero) as packed bf16: the element
// with the lower index in the low half.
__device__ __forceinline__ uint32_t mma_pack_bf16(float lo, float hi) {
    return (f32_to_bits(lo) >> 16) | (f32_to_bits(hi) & 0xFFFF0000u);
}

__device__ __forceinline__ void mma_m16n8k16_bf16(const uint32_t a[4], const uint32_t b[2],
                                                  float d[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.0f),
          "f"(0.0f), "f"(0.0f), "f"(0.0f));
#elif defined(REPRO_EMULATED_DEVICE)
    const float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    REPRO_EMU_MMA_M16N8K16_BF16(a, b, c, d);
#else
    __trap();
#endif
}

// One warp: butterflies group * 8 + c (c = 0..7, those below `total`) of a radix-8 stage
// over rows of `len`. Lane = 4 g + t: lanes 4g..4g+3 each load and split butterfly g (the
// same operations, so the same digits), hold W rows g, g+8 and columns 2t, 2t+1, 2t+8,
// 2t+9 of the A fragments and rows (k) 2t, 2t+1, 2t+8, 2t+9 of column g of the B fragments,
// and receive D rows g, g+8 of columns 2t, 2t+1.
__device__ __forceinline__ void warp_stockham8_ozaki_mma(
    size_t group, size_t total, size_t len, size_t ns, const float* src_re, const float* src_im,
    float* dst_re, float* dst_im, const float* tw_re, const float* tw_im, const float* w8) {
    const unsigned lane = threadIdx.x & 31u;
    const int g = (int)(lane >> 2), t = (int)(lane & 3u);
    const size_t per_row = len / 8;

    // The split of butterfly g (a zero vector past the end: status OZAKI_ZERO, not stored).
    size_t b = group * 8 + (size_t)g;
    float x[16];
    float xd[RM_FFT_SLICES * 16];
    int e = 0, status = OZAKI_ZERO;
    if (b < total) {
        size_t row = b / per_row, i = b % per_row, base = row * len;
        Cx<float> v[8];
        stockham_load<float, 8>(i, ns, per_row, src_re + base, src_im + base, tw_re, tw_im, v);
        for (int c = 0; c < 8; c++) {
            x[c] = v[c].re;
            x[8 + c] = v[c].im;
        }
        status = ozaki_split<16>(x, 16, xd, &e);
    }
    if (status != OZAKI_OK) {
        for (int c = 0; c < RM_FFT_SLICES * 16; c++) xd[c] = 0.0f;
    }

    // A fragments of the 4 digit matrices, B fragments of the 4 digit vectors.
    uint32_t a[RM_FFT_SLICES][4], bb[RM_FFT_SLICES][2];
    for (int s = 0; s < RM_FFT_SLICES; s++) {
        const float* w = w8 + s * 256;
        a[s][0] = mma_pack_bf16(w[g * 16 + 2 * t], w[g * 16 + 2 * t + 1]);
        a[s][1] = mma_pack_bf16(w[(g + 8) * 16 + 2 * t], w[(g + 8) * 16 + 2 * t + 1]);
        a[s][2] = mma_pack_bf16(w[g * 16 + 2 * t + 8], w[g * 16 + 2 * t + 9]);
        a[s][3] = mma_pack_bf16(w[(g + 8) * 16 + 2 * t + 8], w[(g + 8) * 16 + 2 * t + 9]);
        const float* d = xd + s * 16;
        bb[s][0] = mma_pack_bf16(d[2 * t], d[2 * t + 1]);
        bb[s][1] = mma_pack_bf16(d[2 * t + 8], d[2 * t + 9]);
    }

    // The combination of ozaki_row, per D element, in its order.
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int level = RM_FFT_SLICES - 1; level >= 0; level--) {
        for (int i = 0; i <= level; i++) {
            int j = level - i;
            float p[4];
            mma_m16n8k16_bf16(a[i], bb[j], p);
            for (int q = 0; q < 4; q++) acc[q] = acc[q] + p[q] * ozaki_pow2(-8 * level);
        }
    }

    // D element q: row r = g + 8 (q / 2) of column c = 2t + q % 2.
    for (int q = 0; q < 4; q++) {
        int c = 2 * t + (q & 1);
        int r = g + 8 * (q >> 1);
        int ec = __shfl_sync(0xFFFFFFFFu, e, c * 4);
        int sc = __shfl_sync(0xFFFFFFFFu, status, c * 4);
        size_t bc = group * 8 + (size_t)c;
        if (bc >= total) continue;
        float y;
        if (sc == OZAKI_NAN) {
            y = f32_from_bits(0x7FC00000u);
        } else if (sc == OZAKI_ZERO) {
            y = 0.0f;
        } else {
            int h = (ec - 14) / 2;
            y = (acc[q] * ozaki_pow2(ec - 14 - h)) * ozaki_pow2(h);
        }
        size_t row = bc / per_row, i = bc % per_row, base = row * len;
        size_t jj = i % ns, k = i / ns;
        size_t o = base + k * ns * 8 + (size_t)(r & 7) * ns + jj;
        if (r < 8) {
            dst_re[o] = y;
        } else {
            dst_im[o] = y;
        }
    }
}

}  // namespace fft
}  // namespace repro

#endif
