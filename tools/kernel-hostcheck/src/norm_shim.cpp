// The norm kernel (kernels/norm.cu) on the host: each row as a block of T "threads" runs
// it, the same strided partial sums and the same shared-memory tree, then every output
// through kernels/norm/row.cuh. T is a parameter: the test shows it changes nothing.
#include <stddef.h>
#include <vector>

#include "norm/row.cuh"

using namespace repro;
using namespace repro::norm;

namespace {

template <class F>
struct Loader {
    const typename F::T* x;
    float operator()(size_t i) const { return F::to_f32(x[i]); }
};

template <class F>
void norm_rows(uint64_t rows, uint64_t n, const typename F::T* x, const typename F::T* w,
               const typename F::T* b, int32_t has_bias, int32_t remove_mean, float eps,
               int32_t exact_only, uint32_t T, typename F::T* out) {
    std::vector<double> s_s(T), s_q(T), s_a(T);
    std::vector<int> s_bad(T);
    for (uint64_t row = 0; row < rows; row++) {
        const typename F::T* xr = x + row * n;
        typename F::T* o = out + row * n;
        for (uint32_t t = 0; t < T; t++) {
            double s = 0.0, q = 0.0, a = 0.0;
            int bad = 0;
            for (uint64_t i = t; i < n; i += T) {
                float v = F::to_f32(xr[i]);
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
        }
        for (uint32_t k = T / 2; k > 0; k /= 2) {
            for (uint32_t t = 0; t < k; t++) {
                double t2, e2;
                two_sum(s_s[t], s_s[t + k], &t2, &e2);
                s_s[t] = t2;
                s_q[t] = s_q[t] + s_q[t + k] + e2;
                s_a[t] += s_a[t + k];
                s_bad[t] |= s_bad[t + k];
            }
        }
        bool finite = s_bad[0] == 0;
        double mu = 0.0, delta_mu = 0.0;
        if (!finite) {
            int f = s_bad[0];
            double inf = f64_from_bits(0x7FF0000000000000ULL);
            double m = ((f & 1) || (f & 6) == 6) ? f64_from_bits(0x7FF8000000000000ULL)
                                                : ((f & 2) ? inf : -inf);
            mu = remove_mean ? m : 0.0;
        } else if (remove_mean) {
            mean_from_sums((size_t)n, s_s[0] + s_q[0], s_a[0], (size_t)T, &mu, &delta_mu);
        }
        for (uint32_t t = 0; t < T; t++) {
            double ss = 0.0;
            for (uint64_t i = t; i < n; i += T) {
                double d = (double)F::to_f32(xr[i]) - mu;
                ss += d * d;
            }
            s_s[t] = ss;
        }
        for (uint32_t k = T / 2; k > 0; k /= 2)
            for (uint32_t t = 0; t < k; t++) s_s[t] += s_s[t + k];
        double ss = s_s[0];
        if (!finite) {
            double r = 1.0 / sqrt(ss / (double)n + (double)eps);
            for (uint64_t i = 0; i < n; i++)
                o[i] = special_element<F>(F::to_f32(xr[i]), F::to_f32(w[i]), has_bias != 0,
                                          has_bias ? F::to_f32(b[i]) : 0.0f, mu, r);
            continue;
        }
        RowStats st;
        if (!stats_from_sums((size_t)n, mu, delta_mu, ss, eps, &st)) {
            for (uint64_t i = 0; i < n; i++) o[i] = F::round(f64_from_bits(0x7FF8000000000000ULL));
            continue;
        }
        Loader<F> loader = {xr};
        for (uint64_t i = 0; i < n; i++)
            o[i] = finish_element<F>((size_t)n, loader, remove_mean != 0, eps, exact_only != 0,
                                     F::to_f32(xr[i]), F::to_f32(w[i]), has_bias != 0,
                                     has_bias ? F::to_f32(b[i]) : 0.0f, st);
    }
}

}  // namespace

extern "C" {
#define RM_NORM_SHIM(name, F)                                                                  \
    void rm_norm_##name(uint64_t rows, uint64_t n, const F::T* x, const F::T* w, const F::T* b, \
                        int32_t has_bias, int32_t remove_mean, float eps, int32_t exact_only,  \
                        uint32_t threads, F::T* out) {                                         \
        norm_rows<F>(rows, n, x, w, b, has_bias, remove_mean, eps, exact_only, threads, out);  \
    }
RM_NORM_SHIM(f32, F32)
RM_NORM_SHIM(bf16, BF16)
RM_NORM_SHIM(f16, F16)
}
