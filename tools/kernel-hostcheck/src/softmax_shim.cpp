// The softmax kernels' row math (kernels/softmax_math.cuh) as host functions with C linkage.
// Each row runs exactly as a block of kernels/softmax.cu runs it: T "threads" over strided
// elements, their partial maxima, counts and exact sums combined (here in reverse thread
// order: any order gives the same totals), then the outputs. T is a parameter so that the
// test can show that the thread count changes nothing.
#include <stddef.h>

#include "softmax_math.cuh"

using namespace repro;
using namespace repro::softmax;

namespace {

const float NEG_INF_F32 = f32_from_bits(0xFF800000u);
const float POS_INF_F32 = f32_from_bits(0x7F800000u);

template <class F>
float row_max(const typename F::T* x, size_t n, size_t T) {
    float m = NEG_INF_F32;
    for (size_t t = 0; t < T; t++) {
        float a = max_partial<F>(x, n, t, T);
        m = a > m ? a : m;
    }
    return m;
}

// softmax_rows in kernels/softmax.cu.
template <class F>
void softmax_row(const typename F::T* x, size_t n, size_t T, typename F::T* o) {
    float m = row_max<F>(x, n, T);
    if (!is_finite_f32(m)) {
        unsigned long long k = 0, le = 0;
        for (size_t t = 0; t < T; t++) {
            unsigned long long a, b;
            count_partial<F>(x, n, m, t, T, &a, &b);
            k += a;
            le += b;
        }
        typename F::T on, off;
        softmax_special<F>(le != (unsigned long long)n, m, k, &on, &off);
        for (size_t i = 0; i < n; i++) o[i] = F::to_f32(x[i]) == POS_INF_F32 ? on : off;
        return;
    }
    Partial total = partial_zero();
    for (size_t t = T; t-- > 0;) total = merge(total, sum_partial<F>(x, n, m, t, T));
    if (total.nan) {
        typename F::T q = F::round(f64_from_bits(0x7FF8000000000000ULL));
        for (size_t i = 0; i < n; i++) o[i] = q;
        return;
    }
    double r = softmax_recip(total);
    for (size_t i = 0; i < n; i++) o[i] = softmax_value<F>(F::to_f32(x[i]), m, r);
}

// log_softmax_rows in kernels/softmax.cu.
template <class F>
void log_softmax_row(const typename F::T* x, size_t n, size_t T, typename F::T* o) {
    float m = row_max<F>(x, n, T);
    unsigned long long k = 0, le = 0;
    float x2 = NEG_INF_F32;
    for (size_t t = 0; t < T; t++) {
        unsigned long long a, b;
        float c;
        count2_partial<F>(x, n, m, t, T, &a, &b, &c);
        k += a;
        le += b;
        x2 = c > x2 ? c : x2;
    }
    bool nan = le != (unsigned long long)n;
    if (nan || !is_finite_f32(m)) {
        typename F::T on, off;
        log_softmax_special<F>(nan, m, k, &on, &off);
        for (size_t i = 0; i < n; i++) o[i] = F::to_f32(x[i]) == POS_INF_F32 ? on : off;
        return;
    }
    int32_t se = log_scale_exp(m, x2);
    Partial total = partial_zero();
    for (size_t t = T; t-- > 0;) total = merge(total, log_sum_partial<F>(x, n, m, pow2(-se), t, T));
    DD l = log_softmax_l(k, total, se);
    for (size_t i = 0; i < n; i++) o[i] = log_softmax_value<F>(F::to_f32(x[i]), m, l);
}

// softmax_bwd_rows in kernels/softmax.cu.
template <class F, bool LOG>
void bwd_row(const typename F::T* y, const typename F::T* g, size_t n, size_t T, typename F::T* o) {
    BwdScan all = bwd_scan_zero();
    for (size_t t = 0; t < T; t++) all = bwd_scan_merge(all, bwd_scan_partial<F, LOG>(y, g, n, t, T));
    double s;
    if (!bwd_sum_special(all, &s)) {
        int32_t e = exponent_floor(all.amax) + 1;
        Partial total = partial_zero();
        for (size_t t = T; t-- > 0;) total = merge(total, bwd_sum_partial<F, LOG>(y, g, n, pow2(-e), t, T));
        s = total_to_dd(total, e).hi;
    }
    for (size_t i = 0; i < n; i++) o[i] = bwd_value<F, LOG>(y[i], g[i], s);
}

template <class F>
void fwd_rows(bool log, size_t rows, size_t n, size_t T, const void* x, void* out) {
    const typename F::T* xs = (const typename F::T*)x;
    typename F::T* os = (typename F::T*)out;
    for (size_t r = 0; r < rows; r++) {
        if (log) {
            log_softmax_row<F>(xs + r * n, n, T, os + r * n);
        } else {
            softmax_row<F>(xs + r * n, n, T, os + r * n);
        }
    }
}

template <class F>
void bwd_rows(bool log, size_t rows, size_t n, size_t T, const void* y, const void* g, void* out) {
    const typename F::T* ys = (const typename F::T*)y;
    const typename F::T* gs = (const typename F::T*)g;
    typename F::T* os = (typename F::T*)out;
    for (size_t r = 0; r < rows; r++) {
        if (log) {
            bwd_row<F, true>(ys + r * n, gs + r * n, n, T, os + r * n);
        } else {
            bwd_row<F, false>(ys + r * n, gs + r * n, n, T, os + r * n);
        }
    }
}

}  // namespace

// fmt: 0 f32, 1 bf16, 2 f16 (16-bit formats as their bits); rows * n elements in and out.
extern "C" int rm_softmax_rows(uint32_t fmt, uint32_t log, size_t rows, size_t n, size_t T,
                               const void* x, void* out) {
    switch (fmt) {
        case 0: fwd_rows<F32>(log != 0, rows, n, T, x, out); return 0;
        case 1: fwd_rows<BF16>(log != 0, rows, n, T, x, out); return 0;
        case 2: fwd_rows<F16>(log != 0, rows, n, T, x, out); return 0;
    }
    return 1;
}

extern "C" int rm_softmax_bwd_rows(uint32_t fmt, uint32_t log, size_t rows, size_t n, size_t T,
                                   const void* y, const void* g, void* out) {
    switch (fmt) {
        case 0: bwd_rows<F32>(log != 0, rows, n, T, y, g, out); return 0;
        case 1: bwd_rows<BF16>(log != 0, rows, n, T, y, g, out); return 0;
        case 2: bwd_rows<F16>(log != 0, rows, n, T, y, g, out); return 0;
    }
    return 1;
}
