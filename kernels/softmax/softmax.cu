// softmax over the last dimension: one block per row (grid-stride over rows), the row's
// elements strided over the block's threads. Every thread sums its elements exactly
// (softmax/row.cuh); the block adds the 128-bit partial sums in shared memory, in an
// order that cannot matter (integer addition), so each row gets the CPU's bits whatever
// the block size or the GPU.
//
// Kernels, <fmt> one of f32, bf16, f16 (16-bit formats as their bit patterns), all arrays
// contiguous rows of length n:
//   repro_softmax_<fmt>(rows, n, inp, out), repro_log_softmax_<fmt>(rows, n, inp, out);
//   repro_softmax_bwd_<fmt>(rows, n, y, g, out), repro_log_softmax_bwd_<fmt>(rows, n, y, g,
//   out): y the forward output, g the output's gradient, out the input's gradient.
// tests/emulated_device.rs runs them on the emulated device, with the planned block and
// with others, against the Rust code.
#include "softmax/row.cuh"

#define REPRO_SOFTMAX_BLOCK 256

namespace {

template <class F>
__device__ void softmax_rows(size_t rows, size_t n, const typename F::T* inp,
                             typename F::T* out) {
    using namespace repro;
    using namespace repro::softmax;
    REPRO_SHARED(float, s_max, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(__int128, s_hi, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(__int128, s_lo, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(unsigned long long, s_k, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(unsigned long long, s_le, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(int, s_nan, [REPRO_SOFTMAX_BLOCK]);
    const size_t T = blockDim.x;
    const size_t t = threadIdx.x;
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const typename F::T* x = inp + row * n;
        typename F::T* o = out + row * n;
        // 1. The maximum (order-free).
        s_max[t] = max_pass<F>(x, n, t, T);
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
            float x2;  // unused here (log-softmax's scale)
            count_pass<F>(x, n, m, t, T, &k, &le, &x2);
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
            special_values<F>(false, s_le[0] != (unsigned long long)n, m, s_k[0], &on, &off);
            __syncthreads();
            for (size_t i = t; i < n; i += T) {
                o[i] = F::to_f32(x[i]) == f32_from_bits(0x7F800000u) ? on : off;
            }
            continue;
        }
        // 2. The exact sum (order-free integers).
        Partial p = sum_pass<F, false>(x, n, m, 1.0, t, T);
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


// log-softmax in one kernel, like softmax: the maximum, then #{x == m}, #{x <= m} and
// max {x < m} (NaN and special rows), then the exact scaled total of the non-maximal terms,
// then L = log1p(T) with the device double-double log1p (every thread computes the same L
// from the same totals: no extra synchronization, no host step), then (x - m) - L.
template <class F>
__device__ void log_softmax_rows(size_t rows, size_t n, const typename F::T* inp,
                                 typename F::T* out) {
    using namespace repro;
    using namespace repro::softmax;
    REPRO_SHARED(float, s_max, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(float, s_x2, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(__int128, s_hi, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(__int128, s_lo, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(unsigned long long, s_k, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(unsigned long long, s_le, [REPRO_SOFTMAX_BLOCK]);
    const size_t T = blockDim.x;
    const size_t t = threadIdx.x;
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const typename F::T* x = inp + row * n;
        typename F::T* o = out + row * n;
        // 1. The maximum.
        s_max[t] = max_pass<F>(x, n, t, T);
        __syncthreads();
        for (size_t w = T / 2; w > 0; w /= 2) {
            if (t < w) {
                float a = s_max[t], b = s_max[t + w];
                s_max[t] = b > a ? b : a;
            }
            __syncthreads();
        }
        float m = s_max[0];
        // 2. Counts and the largest non-maximal entry.
        unsigned long long k, le;
        float x2;
        count_pass<F>(x, n, m, t, T, &k, &le, &x2);
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
        bool nan = le != (unsigned long long)n;
        if (nan || !is_finite_f32(m)) {
            // 3'. Special row (block-uniform branch).
            typename F::T on, off;
            special_values<F>(true, nan, m, k, &on, &off);
            for (size_t i = t; i < n; i += T) {
                o[i] = F::to_f32(x[i]) == f32_from_bits(0x7F800000u) ? on : off;
            }
            __syncthreads();
            continue;
        }
        // 3. The exact scaled total of the non-maximal terms.
        int32_t se = log_scale_exp(m, x2);
        Partial p = sum_pass<F, true>(x, n, m, pow2(-se), t, T);
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
        Partial total = partial_zero();
        total.hi = s_hi[0];
        total.lo = s_lo[0];
        // 4. L = log1p(T) and the outputs.
        DD l = m_log::log1p_dd(log_total(k, total, se));
        for (size_t i = t; i < n; i += T) {
            o[i] = log_softmax_value<F>(F::to_f32(x[i]), m, l);
        }
        __syncthreads();
    }
}

// Backward of softmax (LOG = false: dx = (g - s) y, s = sum g_j y_j) and of log-softmax
// (LOG = true: dx = g - e^y G, G = sum g_j), one block per row like the forward kernels:
// the scan (max |v|, non-finite terms), then the exact fixed-point sum relative to max |v|
// in 128-bit integers (softmax::exact_row_sum), then the elementwise outputs.
template <class F, bool LOG>
__device__ void softmax_bwd_rows(size_t rows, size_t n, const typename F::T* y,
                                 const typename F::T* g, typename F::T* out) {
    using namespace repro;
    using namespace repro::softmax;
    REPRO_SHARED(double, s_amax, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(int, s_flags, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(__int128, s_hi, [REPRO_SOFTMAX_BLOCK]);
    REPRO_SHARED(__int128, s_lo, [REPRO_SOFTMAX_BLOCK]);
    const size_t T = blockDim.x;
    const size_t t = threadIdx.x;
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const typename F::T* yr = y + row * n;
        const typename F::T* gr = g + row * n;
        typename F::T* o = out + row * n;
        // 1. The scan.
        BwdScan sc = bwd_scan_pass<F, LOG>(yr, gr, n, t, T);
        s_amax[t] = sc.amax;
        s_flags[t] = (sc.nan ? 1 : 0) | (sc.pinf ? 2 : 0) | (sc.ninf ? 4 : 0);
        __syncthreads();
        for (size_t w = T / 2; w > 0; w /= 2) {
            if (t < w) {
                double a = s_amax[t], b = s_amax[t + w];
                s_amax[t] = b > a ? b : a;
                s_flags[t] |= s_flags[t + w];
            }
            __syncthreads();
        }
        BwdScan all;
        all.amax = s_amax[0];
        all.nan = (s_flags[0] & 1) != 0;
        all.pinf = (s_flags[0] & 2) != 0;
        all.ninf = (s_flags[0] & 4) != 0;
        // 2. The sum (block-uniform branch).
        double s;
        if (!bwd_sum_special(all, &s)) {
            int32_t e = exponent_floor(all.amax) + 1;
            Partial p = bwd_sum_pass<F, LOG>(yr, gr, n, pow2(-e), t, T);
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
            Partial total = partial_zero();
            total.hi = s_hi[0];
            total.lo = s_lo[0];
            s = total_to_dd(total, e).hi;
        }
        // 3. The outputs.
        for (size_t i = t; i < n; i += T) {
            o[i] = bwd_value<F, LOG>(yr[i], gr[i], s);
        }
        __syncthreads();
    }
}

}  // namespace

#define REPRO_SOFTMAX_KERNEL(FMT, SUFFIX)                                                   \
    extern "C" __global__ void __launch_bounds__(REPRO_SOFTMAX_BLOCK)                       \
        repro_softmax_##SUFFIX(const size_t rows, const size_t n, const repro::FMT::T* inp,  \
                               repro::FMT::T* out) {                                        \
        softmax_rows<repro::FMT>(rows, n, inp, out);                                        \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(REPRO_SOFTMAX_BLOCK)                       \
        repro_log_softmax_##SUFFIX(const size_t rows, const size_t n,                       \
                                   const repro::FMT::T* inp, repro::FMT::T* out) {          \
        log_softmax_rows<repro::FMT>(rows, n, inp, out);                                    \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(REPRO_SOFTMAX_BLOCK)                       \
        repro_softmax_bwd_##SUFFIX(const size_t rows, const size_t n,                       \
                                   const repro::FMT::T* y, const repro::FMT::T* g,          \
                                   repro::FMT::T* out) {                                    \
        softmax_bwd_rows<repro::FMT, false>(rows, n, y, g, out);                            \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(REPRO_SOFTMAX_BLOCK)                       \
        repro_log_softmax_bwd_##SUFFIX(const size_t rows, const size_t n,                   \
                                       const repro::FMT::T* y, const repro::FMT::T* g,      \
                                       repro::FMT::T* out) {                                \
        softmax_bwd_rows<repro::FMT, true>(rows, n, y, g, out);                             \
    }

REPRO_SOFTMAX_KERNEL(F32, f32)
REPRO_SOFTMAX_KERNEL(BF16, bf16)
REPRO_SOFTMAX_KERNEL(F16, f16)
