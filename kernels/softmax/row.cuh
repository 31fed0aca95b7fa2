// Device mirror of the softmax row math in core/src/softmax/mod.rs and core/src/math/exact_sum.rs:
// the same per-element operations (exp_fast_f64 of x - m in f64, the two-piece split with
// quanta 2^-40 and 2^-80, e * (1/S) rounded once), and the same exact integer totals. The
// integer sums do not depend on how the row is divided among threads, warps or blocks, so a
// CUDA block reducing its threads' partial sums in shared memory (in any order) gets the
// CPU's totals, hence its bits. The elementary functions are the math core's own device
// mirror (repro::m_exp::exp_fast_f64, repro::m_log::log1p_dd / log_dd from
// kernels/math/, cross-checked against core/src/math by tests/cuda_host_crosscheck.rs).
// The functions carry the names of their Rust counterparts (max_pass, count_pass, sum_pass,
// softmax_value, log_softmax_value, special_values, log_total, bwd_value); a `_pass` here
// covers the elements t, t + T, ... of one thread where the Rust one covers a block.
// Compiles as CUDA and as host C++: the kernels run on the emulated device in
// tests/emulated_device.rs (any block size) against the Rust code.
#pragma once

#include "math/all.cuh"

namespace repro {
namespace softmax {

// 1.5 * 2^12 (ulp 2^-40), 1.5 * 2^-28 (ulp 2^-80), 2^40, 2^80, 2^64, 2^32.
#define RM_SM_C_HI F64(0x40B8000000000000)
#define RM_SM_C_LO F64(0x3E38000000000000)
#define RM_SM_TWO_P40 F64(0x4270000000000000)
#define RM_SM_TWO_P80 F64(0x44F0000000000000)
#define RM_SM_TWO_P64 F64(0x43F0000000000000)
#define RM_SM_TWO_P32 F64(0x41F0000000000000)

// Summands per thread between flushes: |hi| stays below 2^12 (exact lane additions).
#define RM_SM_FLUSH 2048

// An exact partial sum (units 2^-40 and 2^-80) and whether a NaN entered.
struct Partial {
    __int128 hi;
    __int128 lo;
    bool nan;
};

RM_FN Partial partial_zero() {
    Partial p;
    p.hi = 0;
    p.lo = 0;
    p.nan = false;
    return p;
}

RM_FN Partial merge(Partial a, Partial b) {
    Partial p;
    p.hi = a.hi + b.hi;
    p.lo = a.lo + b.lo;
    p.nan = a.nan || b.nan;
    return p;
}

// exact_sum::split
RM_FN void split(double v, double* hi, double* lo) {
    double h = (v + RM_SM_C_HI) - RM_SM_C_HI;
    *hi = h;
    *lo = ((v - h) + RM_SM_C_LO) - RM_SM_C_LO;
}

// A flush: the lanes are integer multiples of their quanta below 2^53 (exact conversions).
RM_FN void flush(Partial* p, double* hi, double* lo) {
    p->nan = p->nan || is_nan(*hi);
    p->hi += (__int128)f64_to_i64(*hi * RM_SM_TWO_P40);
    p->lo += (__int128)f64_to_i64(*lo * RM_SM_TWO_P80);
    *hi = 0.0;
    *lo = 0.0;
}

// e^(x - m) (softmax::term).
RM_FN double term(float x, float m) { return m_exp::exp_fast_f64((double)x - (double)m); }

// Max of the elements i = t, t + T, ... of a row (NaN ignored).
template <class F>
RM_FN float max_pass(const typename F::T* x, size_t n, size_t t, size_t T) {
    float m = f32_from_bits(0xFF800000u);
    for (size_t i = t; i < n; i += T) {
        float v = F::to_f32(x[i]);
        m = v > m ? v : m;
    }
    return m;
}

// The exact sum over the elements i = t, t + T, ... of softmax's terms e^(x_i - m)
// (`LOG = false`, `scale` unused) or log-softmax's non-maximal terms scaled by `scale`
// (`LOG = true`, the maxima give 0); a NaN term marks the partial.
template <class F, bool LOG>
RM_FN Partial sum_pass(const typename F::T* x, size_t n, float m, double scale, size_t t,
                       size_t T) {
    Partial p = partial_zero();
    double hi = 0.0, lo = 0.0;
    unsigned int count = 0;
    for (size_t i = t; i < n; i += T) {
        float xf = F::to_f32(x[i]);
        double e = term(xf, m);
        double v = LOG ? (xf < m ? e * scale : 0.0) : e;
        double h, l;
        split(v, &h, &l);
        hi = hi + h;
        lo = lo + l;
        count++;
        if (count == RM_SM_FLUSH) {
            flush(&p, &hi, &lo);
            count = 0;
        }
    }
    flush(&p, &hi, &lo);
    return p;
}

// FixedSum::to_dd(exp): (hi 2^40 + lo) 2^-80 2^exp as a double-double.
RM_FN DD total_to_dd(Partial s, int32_t exp) {
    __int128 n = (s.hi << 40) + s.lo;
    bool neg = n < 0;
    unsigned __int128 a = neg ? (unsigned __int128)0 - (unsigned __int128)n : (unsigned __int128)n;
    double top = (double)(uint64_t)(a >> 64) * RM_SM_TWO_P64;
    double mid = (double)(((uint64_t)(a >> 32)) & 0xFFFFFFFFULL) * RM_SM_TWO_P32;
    double low = (double)(((uint64_t)a) & 0xFFFFFFFFULL);
    DD v = DD::from_f64(top).add_f64(mid).add_f64(low);
    v = v.scale(pow2(-80)).scale(pow2(exp));
    return neg ? v.neg() : v;
}

// 1/S for softmax from the row's exact total.
RM_FN double softmax_recip(Partial total) { return 1.0 / total_to_dd(total, 0).hi; }

// One softmax output: e^(x - m) * (1/S), rounded once.
template <class F>
RM_FN typename F::T softmax_value(float x, float m, double r) {
    return F::round(term(x, m) * r);
}

// The values of a special row (NaN anywhere, or a non-finite maximum): *on for the +inf
// entries, *off for the others; both NaN when the row has a NaN or is all -inf. Otherwise
// (m = +inf, k entries) softmax gives 1/k and 0, log-softmax -ln k and -inf.
template <class F>
RM_FN void special_values(bool log, bool nan, float m, unsigned long long k,
                          typename F::T* on, typename F::T* off) {
    if (nan || m == f32_from_bits(0xFF800000u)) {
        *on = F::round(f64_from_bits(0x7FF8000000000000ULL));
        *off = *on;
        return;
    }
    DD kd = DD::from_f64((double)k);
    if (log) {
        *on = F::round(round_odd(DD::from_f64(0.0).sub(m_log::log_dd(kd))));
        *off = F::round(f64_from_bits(0xFFF0000000000000ULL));
    } else {
        *on = F::round(round_odd(DD::from_f64(1.0).div(kd)));
        *off = F::round(0.0);
    }
}


// ---------------------------------------------------------------------------------------
// log-softmax (softmax, `LOG = true` paths)
// ---------------------------------------------------------------------------------------

// #{x == m}, #{x <= m} and max {x < m} over the elements i = t, t + T, ...
template <class F>
RM_FN void count_pass(const typename F::T* x, size_t n, float m, size_t t, size_t T,
                      unsigned long long* k, unsigned long long* le, float* x2) {
    unsigned long long kk = 0, ll = 0;
    float mm = f32_from_bits(0xFF800000u);
    for (size_t i = t; i < n; i += T) {
        float v = F::to_f32(x[i]);
        kk += v == m ? 1 : 0;
        ll += v <= m ? 1 : 0;
        mm = (v < m && v > mm) ? v : mm;
    }
    *k = kk;
    *le = ll;
    *x2 = mm;
}

// exact_sum::exponent_floor
RM_FN int32_t exponent_floor(double x) {
    int32_t e = (int32_t)((f64_to_bits(x) >> 52) & 0x7FF);
    e = e == 0 ? 1 : e;
    return e - 1023;
}

// RowParams::new: E2 + 1 from the row maximum and the largest non-maximal entry.
RM_FN int32_t log_scale_exp(float m, float x2) {
    return exponent_floor(m_exp::exp_fast_f64((double)x2 - (double)m)) + 1;
}

// One log-softmax output: (x - m) - L, L = log1p(T) as a double-double, rounded to odd and
// then once to F; -inf entries give -inf (log_softmax_out).
template <class F>
RM_FN typename F::T log_softmax_value(float x, float m, DD l) {
    double dh, dl;
    two_sum((double)x, -(double)m, &dh, &dl);
    double y = round_odd(DD::make(dh, dl).sub(l));
    return F::round(x == f32_from_bits(0xFF800000u) ? f64_from_bits(0xFFF0000000000000ULL) : y);
}

// T = S - 1 = (k - 1) + the exact scaled total; the kernel takes L = log1p(T) with the
// math core's double-double log1p, per row on the device.
RM_FN DD log_total(unsigned long long k, Partial total, int32_t se) {
    return total_to_dd(total, se).add_f64((double)(k - 1));
}

// ---------------------------------------------------------------------------------------
// Backward (softmax::bwd_row, exact_row_sum)
// ---------------------------------------------------------------------------------------

// The summand of element i: softmax g_i y_i (exact in f64: two 24-bit significands),
// log-softmax g_i.
template <class F, bool LOG>
RM_FN double bwd_term(const typename F::T* y, const typename F::T* g, size_t i) {
    double gv = (double)F::to_f32(g[i]);
    return LOG ? gv : gv * (double)F::to_f32(y[i]);
}

// What exact_row_sum's first loop finds: max |v| (NaN ignored) and which non-finite
// values occur. Each part is an order-free reduction.
struct BwdScan {
    double amax;
    bool nan;
    bool pinf;
    bool ninf;
};

RM_FN BwdScan bwd_scan_zero() {
    BwdScan s;
    s.amax = 0.0;
    s.nan = false;
    s.pinf = false;
    s.ninf = false;
    return s;
}

RM_FN BwdScan bwd_scan_merge(BwdScan a, BwdScan b) {
    BwdScan s;
    s.amax = b.amax > a.amax ? b.amax : a.amax;
    s.nan = a.nan || b.nan;
    s.pinf = a.pinf || b.pinf;
    s.ninf = a.ninf || b.ninf;
    return s;
}

template <class F, bool LOG>
RM_FN BwdScan bwd_scan_pass(const typename F::T* y, const typename F::T* g, size_t n,
                            size_t t, size_t T) {
    BwdScan s = bwd_scan_zero();
    for (size_t i = t; i < n; i += T) {
        double v = bwd_term<F, LOG>(y, g, i);
        double a = fabs_(v);
        s.amax = a > s.amax ? a : s.amax;
        s.nan = s.nan || is_nan(v);
        s.pinf = s.pinf || v == f64_from_bits(0x7FF0000000000000ULL);
        s.ninf = s.ninf || v == f64_from_bits(0xFFF0000000000000ULL);
    }
    return s;
}

// exact_row_sum without the sum: true and *s when the row's sum follows from the scan alone
// (a non-finite term, or every term zero).
RM_FN bool bwd_sum_special(BwdScan sc, double* s) {
    if (sc.nan || (sc.pinf && sc.ninf)) {
        *s = f64_from_bits(0x7FF8000000000000ULL);
        return true;
    }
    if (sc.pinf) {
        *s = f64_from_bits(0x7FF0000000000000ULL);
        return true;
    }
    if (sc.ninf) {
        *s = f64_from_bits(0xFFF0000000000000ULL);
        return true;
    }
    if (sc.amax == 0.0) {
        *s = 0.0;
        return true;
    }
    return false;
}

// exact_sum::sum_scaled over the elements i = t, t + T, ...: v_i * scale split and summed
// exactly (|v_i * scale| < 1).
template <class F, bool LOG>
RM_FN Partial bwd_sum_pass(const typename F::T* y, const typename F::T* g, size_t n,
                           double scale, size_t t, size_t T) {
    Partial p = partial_zero();
    double hi = 0.0, lo = 0.0;
    unsigned int count = 0;
    for (size_t i = t; i < n; i += T) {
        double h, l;
        split(bwd_term<F, LOG>(y, g, i) * scale, &h, &l);
        hi = hi + h;
        lo = lo + l;
        count++;
        if (count == RM_SM_FLUSH) {
            flush(&p, &hi, &lo);
            count = 0;
        }
    }
    flush(&p, &hi, &lo);
    return p;
}

// One gradient element: softmax (g_i - s) y_i, log-softmax g_i - e^(y_i) s, in f64,
// rounded once.
template <class F, bool LOG>
RM_FN typename F::T bwd_value(typename F::T y, typename F::T g, double s) {
    double gv = (double)F::to_f32(g);
    double yv = (double)F::to_f32(y);
    return LOG ? F::round(gv - m_exp::exp_fast_f64(yv) * s) : F::round((gv - s) * yv);
}

}  // namespace softmax
}  // namespace repro
