// softmax over the last dimension: one block per row (grid-stride over rows), the row's
// elements strided over the block's threads. Every thread sums its elements exactly
// (softmax_math.cuh); the block adds the 128-bit partial sums in shared memory, in an
// order that cannot matter (integer addition), so each row gets the CPU's bits whatever
// the block size or the GPU.
//
// Kernels repro_softmax_<f32|bf16|f16>(rows, n, inp, out): `inp` contiguous, starting at
// the layout's offset; `out` contiguous. bf16 and f16 as their 16-bit patterns.
#include "softmax_math.cuh"

#define REPRO_SOFTMAX_BLOCK 256

namespace {

template <class F>
__device__ void softmax_rows(size_t rows, size_t n, const typename F::T* inp,
                             typename F::T* out) {
    using namespace repro;
    using namespace repro::softmax;
    __shared__ float s_max[REPRO_SOFTMAX_BLOCK];
    __shared__ __int128 s_hi[REPRO_SOFTMAX_BLOCK];
    __shared__ __int128 s_lo[REPRO_SOFTMAX_BLOCK];
    __shared__ unsigned long long s_k[REPRO_SOFTMAX_BLOCK];
    __shared__ unsigned long long s_le[REPRO_SOFTMAX_BLOCK];
    __shared__ int s_nan[REPRO_SOFTMAX_BLOCK];
    const size_t T = blockDim.x;
    const size_t t = threadIdx.x;
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const typename F::T* x = inp + row * n;
        typename F::T* o = out + row * n;
        // 1. The maximum (order-free).
        s_max[t] = max_partial<F>(x, n, t, T);
        __syncthreads();
        for (size_t w = T / 2; w > 0; w /= 2) {
            if (t < w) {
                float a = s_max[t], b = s_max[t + w];
                s_max[t] = b > a ? b : a;
            }
            __syncthreads();
        }
        float m = s_max[0];
        __syncthreads();
        if (!is_finite_f32(m)) {
            // 2'. Special row: counts of the maxima and of the non-NaN entries.
            unsigned long long k, le;
            count_partial<F>(x, n, m, t, T, &k, &le);
            s_k[t] = k;
            s_le[t] = le;
            __syncthreads();
            for (size_t w = T / 2; w > 0; w /= 2) {
                if (t < w) {
                    s_k[t] += s_k[t + w];
                    s_le[t] += s_le[t + w];
                }
                __syncthreads();
            }
            typename F::T on, off;
            softmax_special<F>(s_le[0] != (unsigned long long)n, m, s_k[0], &on, &off);
            __syncthreads();
            for (size_t i = t; i < n; i += T) {
                o[i] = F::to_f32(x[i]) == f32_from_bits(0x7F800000u) ? on : off;
            }
            continue;
        }
        // 2. The exact sum (order-free integers).
        Partial p = sum_partial<F>(x, n, m, t, T);
        s_hi[t] = p.hi;
        s_lo[t] = p.lo;
        s_nan[t] = p.nan ? 1 : 0;
        __syncthreads();
        for (size_t w = T / 2; w > 0; w /= 2) {
            if (t < w) {
                s_hi[t] += s_hi[t + w];
                s_lo[t] += s_lo[t + w];
                s_nan[t] |= s_nan[t + w];
            }
            __syncthreads();
        }
        Partial total;
        total.hi = s_hi[0];
        total.lo = s_lo[0];
        total.nan = s_nan[0] != 0;
        __syncthreads();
        // 3. The outputs.
        if (total.nan) {
            typename F::T q = F::round(f64_from_bits(0x7FF8000000000000ULL));
            for (size_t i = t; i < n; i += T) {
                o[i] = q;
            }
            continue;
        }
        double r = softmax_recip(total);
        for (size_t i = t; i < n; i += T) {
            o[i] = softmax_value<F>(F::to_f32(x[i]), m, r);
        }
    }
}

}  // namespace

#define REPRO_SOFTMAX_KERNEL(FMT, SUFFIX)                                                  \
    extern "C" __global__ void __launch_bounds__(REPRO_SOFTMAX_BLOCK)                      \
        repro_softmax_##SUFFIX(const size_t rows, const size_t n, const repro::FMT::T* inp, \
                               repro::FMT::T* out) {                                       \
        softmax_rows<repro::FMT>(rows, n, inp, out);                                       \
    }

REPRO_SOFTMAX_KERNEL(F32, f32)
REPRO_SOFTMAX_KERNEL(BF16, bf16)
REPRO_SOFTMAX_KERNEL(F16, f16)
