// Mirror of core/src/norm/cpu.rs and core/src/norm/exact.rs: the norms' per-row statistics from
// their sums, tier 1 on one element, the exact tier (the row's exact sums, the sign of
// y - m in integers, the bisection) and the special values. Only the row sums are
// computed differently on the device (a block's threads and a tree, kernels/norm/norm.cu):
// the mean's bound holds for any order, the sum of squares' bound takes the order's count
// of additions (block_square_additions below, cpu_square_additions on the CPU), and the
// outputs, correctly rounded, are the CPU's bits whatever the bounds. Runs on the emulated
// device in tests/emulated_device.rs (kernels/norm/norm.cu at several block sizes).
#pragma once

#include "../math/bigint.cuh"
#include "../math/common.cuh"
#include "../math/dd.cuh"
#include "../math/exact_dot.cuh"
#include "../math/exact_round.cuh"
#include "../math/round.cuh"

namespace repro {
namespace norm {

#define RM_NORM_U F64(0x3CA0000000000000)
#define RM_NORM_SLACK F64(0x3FF0040000000000)

struct RowStats {
    double mu, delta_mu, r, e_r;
};

// mean_from_sums of cpu.rs.
RM_FN void mean_from_sums(size_t n, double sx, double abs, size_t lanes, double* mu,
                          double* delta_mu) {
    double nf = (double)n;
    abs = abs * F64(0x3FF0000100000000);
    double m = (double)(n + lanes);
    double e_sx = fabs_(sx) * RM_NORM_U + m * m * F64(0x3950000100000000) * abs;
    *mu = sx / nf;
    *delta_mu = (e_sx / nf + RM_NORM_U * fabs_(*mu)) * RM_NORM_SLACK;
}

// The most additions with two nonzero operands that one square passes through in
// norm.cu's sum of squares over a block of T threads (T a power of two): thread t's chain
// over elements t, t + T, .. from 0.0, then the tree s[j] += s[j + k], k = T/2, .., 1.
// Thread 0's chain is the longest, ceil(n/T) - 1 additions; at level k the addition of
// slot j has a nonzero partner only if j + k < min(n, T), and thread 0 (slot 0) meets
// every such level, ceil(log2 min(n, T)) of them (the derivation is in core/src/norm/mod.rs's
// header). n - 1 at one thread per block.
RM_FN size_t block_square_additions(size_t n, size_t T) {
    if (n == 0) return 0;
    size_t m = n < T ? n : T;
    size_t levels = 0;
    while (((size_t)1 << levels) < m) levels++;
    return (n + T - 1) / T - 1 + levels;
}

// stats_from_sums of cpu.rs (adds: the additions count of the order ss was summed in);
// false for V = 0.
RM_FN bool stats_from_sums(size_t n, size_t adds, double mu, double delta_mu, double ss,
                           float eps, RowStats* st) {
    double nf = (double)n;
    double e_ss = (((double)adds + 5.0) * RM_NORM_U * ss + 2.0 * nf * delta_mu * delta_mu) *
                  RM_NORM_SLACK;
    double v = ss / nf + (double)eps;
    if (v == 0.0) return false;
    double e_v = (e_ss / nf) / v + 2.0 * RM_NORM_U;
    st->mu = mu;
    st->delta_mu = delta_mu;
    st->r = 1.0 / sqrt(v);
    st->e_r = (e_v * 0.5 + 2.0 * RM_NORM_U) * RM_NORM_SLACK;
    return true;
}

// element_tier1 of cpu.rs.
RM_FN void element_tier1(float x, float w, bool has_b, float b, const RowStats& st, double* y,
                         double* err) {
    double wi = (double)w;
    double d = (double)x - st.mu;
    double z = d * wi * st.r;
    *y = has_b ? z + (double)b : z;
    *err = (st.r * fabs_(wi) * st.delta_mu + fabs_(z) * (3.0 * RM_NORM_U + st.e_r) +
            RM_NORM_U * fabs_(*y)) *
           RM_NORM_SLACK;
}

// ExactDot::to_big of exact_dot.rs: (negative, |N|), false when a term was not finite.
RM_FN bool exact_to_big(const ExactDot& s, bool* negative, Big* out) {
    if (s.nan || s.pos_inf || s.neg_inf) return false;
    ExactDot acc = s;
    acc.normalize();
    *negative = acc.limbs[RM_XD_DIGITS - 1] < 0;
    if (*negative) {
        for (int i = 0; i < RM_XD_DIGITS; i++) acc.limbs[i] = -acc.limbs[i];
        acc.normalize();
    }
    *out = Big::zero();
    for (int i = 0; i < RM_XD_DIGITS; i++) {
        uint64_t d = (uint64_t)acc.limbs[i];
        out->limbs[i / 2] |= d << (32 * (i % 2));
    }
    return true;
}

// ExactRow of exact.rs: sx at scale 2^-298, W at 2^-596.
struct ExactRow {
    uint64_t n;
    bool remove_mean;
    SBig sx;
    Big w;
};

template <class L>
RM_FN ExactRow exact_row(size_t n, const L& x, bool remove_mean, float eps) {
    ExactDot sxx, sx;
    sxx.init();
    sx.init();
    for (size_t i = 0; i < n; i++) {
        float v = x(i);
        sxx.add_product(v, v);
        if (remove_mean) sx.add(v);
    }
    bool neg = false;
    Big n2, nx;
    exact_to_big(sxx, &neg, &n2);
    exact_to_big(sx, &neg, &nx);
    ExactRow row;
    row.n = (uint64_t)n;
    row.remove_mean = remove_mean;
    row.sx = SBig::make(neg, nx);
    SBig n_sxx = SBig::make(false, n2.mul_u64(row.n).shl((uint32_t)(-RM_XD_BASE_EXP)));
    SBig sx2 = row.sx.mul(row.sx);
    bool eneg;
    uint64_t me;
    int32_t ee;
    decompose_f64((double)eps, &eneg, &me, &ee);
    SBig n2_eps = scaled(false, me, ee, 2 * RM_XD_BASE_EXP)
                      .mul(SBig::make(false, Big::from_u128((unsigned __int128)row.n * row.n)));
    SBig w = n_sxx.add(SBig::make(!sx2.neg, sx2.mag)).add(n2_eps);
    row.w = w.mag;
    return row;
}

struct Element {
    SBig a;
    int32_t a_scale;
    Big a2;
    bool has_b;
    float b;
    bool a_zero_negative;
};

RM_FN Element exact_element_of(const ExactRow& row, float x, float w, bool has_b, float b) {
    bool xneg;
    uint64_t mx;
    int32_t ex;
    decompose_f64((double)x, &xneg, &mx, &ex);
    SBig nx = scaled(xneg, (unsigned __int128)mx * row.n, ex, RM_XD_BASE_EXP);
    SBig z = row.remove_mean ? nx.add(SBig::make(!row.sx.neg, row.sx.mag)) : nx;
    bool wneg;
    uint64_t mw;
    int32_t ew;
    decompose_f64((double)w, &wneg, &mw, &ew);
    Element e;
    e.a = z.mul(SBig::make(wneg, Big::from_u128(mw)));
    e.a2 = e.a.mag.mul(e.a.mag);
    e.a_scale = RM_XD_BASE_EXP + ew;
    e.has_b = has_b;
    e.b = b;
    bool z_zero_negative = !row.remove_mean && xneg;
    e.a_zero_negative = z_zero_negative != wneg;
    return e;
}

// decide of exact.rs: -1, 0, 1 as y <, ==, > m.
RM_FN int32_t decide(const ExactRow& row, const Element& e, double m) {
    bool mneg, bneg;
    uint64_t mm, mb;
    int32_t em, eb;
    decompose_f64(m, &mneg, &mm, &em);
    decompose_f64(e.has_b ? (double)e.b : 0.0, &bneg, &mb, &eb);
    int32_t sc;
    if (mm == 0 && mb == 0) {
        sc = 0;
    } else if (mm == 0) {
        sc = eb;
    } else if (mb == 0) {
        sc = em;
    } else {
        sc = em < eb ? em : eb;
    }
    SBig c = scaled(mneg, mm, em, sc).add(scaled(!bneg, mb, eb, sc));
    int32_t c_sign = c.is_zero() ? 0 : (c.neg ? -1 : 1);
    if (e.a.is_zero()) return -c_sign;
    if (!e.a.neg && c_sign <= 0) return 1;
    if (e.a.neg && c_sign >= 0) return -1;
    int32_t e_l = 2 * e.a_scale - 2 * RM_XD_BASE_EXP;
    int32_t e_r = 2 * sc;
    int32_t base = e_l < e_r ? e_l : e_r;
    Big l = e.a2.shl((uint32_t)(e_l - base));
    Big r = c.mag.mul(c.mag).mul(row.w).shl((uint32_t)(e_r - base));
    int32_t ord = l.cmp(r);
    return e.a.neg ? -ord : ord;
}

// Element::zero_negative of exact.rs.
RM_FN bool zero_negative(const ExactRow& row, const Element& e) {
    int32_t o = decide(row, e, 0.0);
    if (o < 0) return true;
    if (o > 0) return false;
    if (!e.a.is_zero()) return false;
    if (e.has_b) return e.a_zero_negative && (f32_to_bits(e.b) >> 31) == 1;
    return e.a_zero_negative;
}

struct DecideAt {
    const ExactRow* row;
    const Element* e;
    RM_FN int32_t operator()(double m) const { return decide(*row, *e, m); }
};

struct ZeroNeg {
    const ExactRow* row;
    const Element* e;
    RM_FN bool operator()() const { return zero_negative(*row, *e); }
};

// special_one of cpu.rs.
template <class F>
RM_FN typename F::T special_one(const ExactRow& row, float x, float w, bool has_b, float b,
                                const RowStats& st) {
    double z;
    if (is_finite_f32(w)) {
        z = 0.0;
    } else {
        Element e = exact_element_of(row, x, 1.0f, false, 0.0f);
        double d;
        if (e.a.is_zero()) {
            d = e.a_zero_negative ? -0.0 : 0.0;
        } else if (e.a.neg) {
            d = -1.0;
        } else {
            d = 1.0;
        }
        z = d * (double)w * st.r;
    }
    return F::round(has_b ? z + (double)b : z);
}

// exact_element of cpu.rs: the row (x as a loader) finite with tier 1's V > 0.
template <class F, class L>
RM_SLOW_FN typename F::T exact_element(size_t n, const L& xrow, bool remove_mean, float eps, float x,
                                  float w, bool has_b, float b, typename F::T lo,
                                  typename F::T hi, const RowStats& st) {
    ExactRow row = exact_row(n, xrow, remove_mean, eps);
    if (row.w.is_zero()) return F::round(f64_from_bits(0x7FF8000000000000ULL));
    if (!is_finite_f32(w) || (has_b && !is_finite_f32(b))) {
        return special_one<F>(row, x, w, has_b, b, st);
    }
    Element e = exact_element_of(row, x, w, has_b, b);
    DecideAt cmp = {&row, &e};
    ZeroNeg zn = {&row, &e};
    return round_by_comparison<F>(lo, hi, cmp, zn);
}

// One output of a finite row with tier 1's statistics: tier 1, else the exact tier.
template <class F, class L>
RM_FN typename F::T finish_element(size_t n, const L& xrow, bool remove_mean, float eps,
                                   bool exact_only, float x, float w, bool has_b, float b,
                                   const RowStats& st) {
    double y, err;
    element_tier1(x, w, has_b, b, st, &y, &err);
    typename F::T v;
    bool sure = round_within_parts<F>(y, err, &v);
    if (sure && !(y == 0.0 && err == 0.0) && !exact_only) return v;
    typename F::T lo = F::round(y - err * 2.0);
    typename F::T hi = F::round(y + err * 2.0);
    return exact_element<F>(n, xrow, remove_mean, eps, x, w, has_b, b, lo, hi, st);
}

// An element of a row with an infinity or NaN (special_row of cpu.rs), from the row's
// IEEE mean and 1/sqrt(V).
template <class F>
RM_FN typename F::T special_element(float x, float w, bool has_b, float b, double mu, double r) {
    double d = (double)x - mu;
    double z = d * (double)w * r;
    return F::round(has_b ? z + (double)b : z);
}

}  // namespace norm
}  // namespace repro
