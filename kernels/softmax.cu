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


// log-softmax, in two kernels around a per-row step on the host (log1p of the row's exact
// total with the CPU's double-double log, the same function the CPU path calls):
//   repro_log_softmax_stats_<fmt>(rows, n, inp, stats): per row 8 u64: the maximum's f32
//     bits, k = #{x == m}, #{x <= m}, E2 + 1 (as i64), and the exact scaled total of the
//     non-maximal terms (hi and lo as two's-complement 128-bit integers, low word first);
//   repro_log_softmax_out_<fmt>(rows, n, inp, params, out): per row 4 f64: mode (0 normal,
//     1 special), then L = log1p(T) as hi, lo (mode 0) or the values of the +inf entries
//     and of the others (mode 1), then m.
template <class F>
__device__ void log_softmax_stats(size_t rows, size_t n, const typename F::T* inp,
                                  unsigned long long* stats) {
    using namespace repro;
    using namespace repro::softmax;
    __shared__ float s_max[REPRO_SOFTMAX_BLOCK];
    __shared__ float s_x2[REPRO_SOFTMAX_BLOCK];
    __shared__ __int128 s_hi[REPRO_SOFTMAX_BLOCK];
    __shared__ __int128 s_lo[REPRO_SOFTMAX_BLOCK];
    __shared__ unsigned long long s_k[REPRO_SOFTMAX_BLOCK];
    __shared__ unsigned long long s_le[REPRO_SOFTMAX_BLOCK];
    const size_t T = blockDim.x;
    const size_t t = threadIdx.x;
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const typename F::T* x = inp + row * n;
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
        unsigned long long k, le;
        float x2;
        count2_partial<F>(x, n, m, t, T, &k, &le, &x2);
        s_k[t] = k;
        s_le[t] = le;
        s_x2[t] = x2;
        __syncthreads();
        for (size_t w = T / 2; w > 0; w /= 2) {
            if (t < w) {
                s_k[t] += s_k[t + w];
                s_le[t] += s_le[t + w];
                float a = s_x2[t], b = s_x2[t + w];
                s_x2[t] = b > a ? b : a;
            }
            __syncthreads();
        }
        k = s_k[0];
        le = s_le[0];
        x2 = s_x2[0];
        bool special = le != (unsigned long long)n || !is_finite_f32(m);
        int32_t se = special ? 0 : log_scale_exp(m, x2);
        Partial p = special ? partial_zero() : log_sum_partial<F>(x, n, m, pow2(-se), t, T);
        s_hi[t] = p.hi;
        s_lo[t] = p.lo;
        __syncthreads();
        for (size_t w = T / 2; w > 0; w /= 2) {
            if (t < w) {
                s_hi[t] += s_hi[t + w];
                s_lo[t] += s_lo[t + w];
            }
            __syncthreads();
        }
        if (t == 0) {
            unsigned long long* st = stats + row * 8;
            unsigned __int128 hi = (unsigned __int128)s_hi[0];
            unsigned __int128 lo = (unsigned __int128)s_lo[0];
            st[0] = f32_to_bits(m);
            st[1] = k;
            st[2] = le;
            st[3] = (unsigned long long)(long long)se;
            st[4] = (unsigned long long)hi;
            st[5] = (unsigned long long)(hi >> 64);
            st[6] = (unsigned long long)lo;
            st[7] = (unsigned long long)(lo >> 64);
        }
        __syncthreads();
    }
}

template <class F>
__device__ void log_softmax_out(size_t rows, size_t n, const typename F::T* inp,
                                const double* params, typename F::T* out) {
    using namespace repro;
    using namespace repro::softmax;
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const typename F::T* x = inp + row * n;
        typename F::T* o = out + row * n;
        const double* pr = params + row * 4;
        float m = (float)pr[3];
        if (pr[0] != 0.0) {
            typename F::T on = F::round(pr[1]);
            typename F::T off = F::round(pr[2]);
            for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
                o[i] = F::to_f32(x[i]) == f32_from_bits(0x7F800000u) ? on : off;
            }
        } else {
            DD l = DD::make(pr[1], pr[2]);
            for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
                o[i] = log_softmax_value<F>(F::to_f32(x[i]), m, l);
            }
        }
    }
}

}  // namespace

#define REPRO_SOFTMAX_KERNEL(FMT, SUFFIX)                                                  \
    extern "C" __global__ void __launch_bounds__(REPRO_SOFTMAX_BLOCK)                      \
        repro_softmax_##SUFFIX(const size_t rows, const size_t n, const repro::FMT::T* inp, \
                               repro::FMT::T* out) {                                       \
        softmax_rows<repro::FMT>(rows, n, inp, out);                                       \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(REPRO_SOFTMAX_BLOCK)                      \
        repro_log_softmax_stats_##SUFFIX(const size_t rows, const size_t n,                \
                                         const repro::FMT::T* inp, unsigned long long* st) { \
        log_softmax_stats<repro::FMT>(rows, n, inp, st);                                   \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(REPRO_SOFTMAX_BLOCK)                      \
        repro_log_softmax_out_##SUFFIX(const size_t rows, const size_t n,                  \
                                       const repro::FMT::T* inp, const double* params,     \
                                       repro::FMT::T* out) {                               \
        log_softmax_out<repro::FMT>(rows, n, inp, params, out);                            \
    }

REPRO_SOFTMAX_KERNEL(F32, f32)
REPRO_SOFTMAX_KERNEL(BF16, bf16)
REPRO_SOFTMAX_KERNEL(F16, f16)
