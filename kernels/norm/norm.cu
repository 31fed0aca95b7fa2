// RMSNorm and LayerNorm over the last dimension (src/norm/cuda.rs launches these), with
// the definition of core/src/norm/mod.rs: one block of REPRO_NORM_BLOCK threads per row
// (grid-stride over rows). The block sums the row in its own order (each thread a
// TwoSum chain over strided elements, then a shared-memory tree of TwoSums; plain sums
// for |x| and the squared deviations, whose bound counts the additions of this order at
// the block's size: block_square_additions), takes the statistics and every output
// through norm/row.cuh, the mirror of the CPU's steps, so the outputs are the CPU's bits.
//
// Kernels (<fmt> f32, bf16, f16, 16-bit formats as their bits; rows contiguous of n):
//   repro_norm_<fmt>(rows, n, x, w, b, has_bias, remove_mean, eps, exact_only, out)
#include "norm/row.cuh"

#define REPRO_NORM_BLOCK 256

namespace {

using namespace repro;
using namespace repro::norm;

template <class F>
struct RowLoader {
    const typename F::T* x;
    RM_FN float operator()(size_t i) const { return F::to_f32(x[i]); }
};

template <class F>
__device__ void norm_rows(uint64_t rows, uint64_t n, const typename F::T* x,
                          const typename F::T* w, const typename F::T* b, int32_t has_bias,
                          int32_t remove_mean, float eps, int32_t exact_only,
                          typename F::T* out) {
    REPRO_SHARED(double, s_s, [REPRO_NORM_BLOCK]);
    REPRO_SHARED(double, s_q, [REPRO_NORM_BLOCK]);
    REPRO_SHARED(double, s_a, [REPRO_NORM_BLOCK]);
    REPRO_SHARED(int, s_bad, [REPRO_NORM_BLOCK]);
    const uint32_t T = blockDim.x;
    const uint32_t t = threadIdx.x;
    for (uint64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const typename F::T* xr = x + row * n;
        typename F::T* o = out + row * n;
        // 1. The compensated sum of x, the sum of |x|, and whether all are finite.
        double s = 0.0, q = 0.0, a = 0.0;
        int bad = 0;
        for (uint64_t i = t; i < n; i += T) {
            float v = F::to_f32(xr[i]);
            // bit 0: NaN, bit 1: +inf, bit 2: -inf.
            bad |= is_nan_f32(v) ? 1 : 0;
            bad |= v == f32_from_bits(0x7F800000u) ? 2 : 0;
            bad |= v == f32_from_bits(0xFF800000u) ? 4 : 0;
            double e2, t2;
            two_sum(s, (double)v, &t2, &e2);
            s = t2;
            q += e2;
            a += fabs_((double)v);
        }
        s_s[t] = s;
        s_q[t] = q;
        s_a[t] = a;
        s_bad[t] = bad;
        __syncthreads();
        for (uint32_t k = T / 2; k > 0; k /= 2) {
            if (t < k) {
                double t2, e2;
                two_sum(s_s[t], s_s[t + k], &t2, &e2);
                s_s[t] = t2;
                s_q[t] = s_q[t] + s_q[t + k] + e2;
                s_a[t] += s_a[t + k];
                s_bad[t] |= s_bad[t + k];
            }
            __syncthreads();
        }
        const bool finite = s_bad[0] == 0;
        double mu = 0.0, delta_mu = 0.0;
        if (!finite) {
            // The IEEE mean of a row with an infinity or NaN, as any order of plain sums
            // gives it: NaN with a NaN or both infinities, else the infinity.
            int f = s_bad[0];
            double inf = f64_from_bits(0x7FF0000000000000ULL);
            double m = ((f & 1) || (f & 6) == 6) ? f64_from_bits(0x7FF8000000000000ULL)
                                                : ((f & 2) ? inf : -inf);
            mu = remove_mean ? m : 0.0;
        } else if (remove_mean) {
            mean_from_sums((size_t)n, s_s[0] + s_q[0], s_a[0], (size_t)T, &mu, &delta_mu);
        }
        __syncthreads();
        // 2. The sum of squared deviations.
        double ss = 0.0;
        for (uint64_t i = t; i < n; i += T) {
            double d = (double)F::to_f32(xr[i]) - mu;
            ss += d * d;
        }
        s_s[t] = ss;
        __syncthreads();
        for (uint32_t k = T / 2; k > 0; k /= 2) {
            if (t < k) s_s[t] += s_s[t + k];
            __syncthreads();
        }
        ss = s_s[0];
        __syncthreads();
        // 3. The outputs.
        if (!finite) {
            double r = 1.0 / sqrt(ss / (double)n + (double)eps);
            for (uint64_t i = t; i < n; i += T) {
                o[i] = special_element<F>(F::to_f32(xr[i]), F::to_f32(w[i]), has_bias != 0,
                                          has_bias ? F::to_f32(b[i]) : 0.0f, mu, r);
            }
            continue;
        }
        RowStats st;
        size_t adds = block_square_additions((size_t)n, (size_t)T);
        if (!stats_from_sums((size_t)n, adds, mu, delta_mu, ss, eps, &st)) {
            for (uint64_t i = t; i < n; i += T) o[i] = F::round(f64_from_bits(0x7FF8000000000000ULL));
            continue;
        }
        RowLoader<F> loader = {xr};
        for (uint64_t i = t; i < n; i += T) {
            o[i] = finish_element<F>((size_t)n, loader, remove_mean != 0, eps, exact_only != 0,
                                     F::to_f32(xr[i]), F::to_f32(w[i]), has_bias != 0,
                                     has_bias ? F::to_f32(b[i]) : 0.0f, st);
        }
    }
}

}  // namespace

#define REPRO_NORM(name, F)                                                                    \
    extern "C" __global__ void __launch_bounds__(REPRO_NORM_BLOCK) repro_norm_##name(          \
        uint64_t rows, uint64_t n, const F::T* x, const F::T* w, const F::T* b,                \
        int32_t has_bias, int32_t remove_mean, float eps, int32_t exact_only, F::T* out) {     \
        norm_rows<F>(rows, n, x, w, b, has_bias, remove_mean, eps, exact_only, out);           \
    }

REPRO_NORM(f32, repro::F32)
REPRO_NORM(bf16, repro::BF16)
REPRO_NORM(f16, repro::F16)
