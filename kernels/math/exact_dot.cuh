// Mirror of core/src/math/exact_dot.rs: the exact sum of products of f32 values (32-bit digits
// in 64-bit limbs, rounded to odd in f64), with the wide products of an f32 and an f64
// (add_product_wide: the quantized weights' exact values), and the compensated dot
// products (dot2, dot2_wide) with their bound. The same operations in the same order; see
// the Rust file for the reasoning.
#pragma once

#include "common.cuh"
#include "dd.cuh"
#include "round.cuh"

namespace repro {

#define RM_XD_BASE_EXP (-298)
#define RM_XD_DIGITS 20
#define RM_XD_NORMALIZE_EVERY (1u << 30)
#define RM_DOT2_LANES 8

// u64::trailing_zeros of a nonzero value.
RM_FN uint32_t xd_trailing_zeros(uint64_t v) {
#if defined(__CUDA_ARCH__)
    return (uint32_t)(__ffsll((long long)v) - 1);
#else
    return (uint32_t)__builtin_ctzll(v);
#endif
}

// |x| = m 2^e for a finite f32.
RM_FN void xd_decompose(float x, uint64_t* m, int32_t* e) {
    uint32_t bits = f32_to_bits(x) & 0x7FFFFFFFu;
    int32_t field = (int32_t)(bits >> 23);
    uint64_t frac = (uint64_t)(bits & 0x7FFFFFu);
    if (field == 0) {
        *m = frac;
        *e = -149;
    } else {
        *m = frac | 0x800000u;
        *e = field - 150;
    }
}

struct ExactDot {
    int64_t limbs[RM_XD_DIGITS];
    uint32_t since_normalize;
    bool nan, pos_inf, neg_inf, all_neg_zero, any_term;

    RM_FN void init() {
        for (int i = 0; i < RM_XD_DIGITS; i++) limbs[i] = 0;
        since_normalize = 0;
        nan = pos_inf = neg_inf = false;
        all_neg_zero = true;
        any_term = false;
    }

    RM_FN void normalize() {
        for (int i = 0; i < RM_XD_DIGITS - 1; i++) {
            int64_t carry = limbs[i] >> 32;
            limbs[i] -= (int64_t)((uint64_t)carry << 32);
            limbs[i + 1] += carry;
        }
        since_normalize = 0;
    }

    RM_FN void add_product(float a, float b) {
        any_term = true;
        bool negative = ((f32_to_bits(a) ^ f32_to_bits(b)) >> 31) == 1;
        if (!is_finite_f32(a) || !is_finite_f32(b)) {
            all_neg_zero = false;
            if (is_nan_f32(a) || is_nan_f32(b) || a == 0.0f || b == 0.0f) {
                nan = true;
            } else if (negative) {
                neg_inf = true;
            } else {
                pos_inf = true;
            }
            return;
        }
        uint64_t ma, mb;
        int32_t ea, eb;
        xd_decompose(a, &ma, &ea);
        xd_decompose(b, &mb, &eb);
        uint64_t m = ma * mb;
        if (m == 0) {
            all_neg_zero = all_neg_zero && negative;
            return;
        }
        all_neg_zero = false;
        uint32_t shift = (uint32_t)(ea + eb - RM_XD_BASE_EXP);
        uint32_t limb = shift / 32;
        unsigned __int128 v = ((unsigned __int128)m) << (shift % 32);
        int64_t d0 = (int64_t)((uint64_t)v & 0xFFFFFFFFULL);
        int64_t d1 = (int64_t)((uint64_t)(v >> 32) & 0xFFFFFFFFULL);
        int64_t d2 = (int64_t)(uint64_t)(v >> 64);
        if (negative) {
            limbs[limb] -= d0;
            limbs[limb + 1] -= d1;
            limbs[limb + 2] -= d2;
        } else {
            limbs[limb] += d0;
            limbs[limb + 1] += d1;
            limbs[limb + 2] += d2;
        }
        since_normalize += 1;
        if (since_normalize == RM_XD_NORMALIZE_EVERY) {
            normalize();
        }
    }

    // The exact product a b of an f32 and an f64 b that is a multiple of 2^-149 below
    // 2^137 (or not finite): up to 108 bits added to four consecutive limbs.
    RM_FN void add_product_wide(float a, double b) {
        any_term = true;
        bool negative = (((uint64_t)(f32_to_bits(a) >> 31)) ^ (f64_to_bits(b) >> 63)) == 1;
        if (!is_finite_f32(a) || !is_finite(b)) {
            all_neg_zero = false;
            if (is_nan_f32(a) || is_nan(b) || a == 0.0f || b == 0.0) {
                nan = true;
            } else if (negative) {
                neg_inf = true;
            } else {
                pos_inf = true;
            }
            return;
        }
        uint64_t ma;
        int32_t ea;
        xd_decompose(a, &ma, &ea);
        uint64_t bits = f64_to_bits(b) & 0x7FFFFFFFFFFFFFFFULL;
        int32_t field = (int32_t)(bits >> 52);
        uint64_t frac = bits & ((1ULL << 52) - 1);
        uint64_t mb;
        int32_t eb;
        if (field == 0) {
            mb = frac;
            eb = -1074;
        } else {
            mb = frac | (1ULL << 52);
            eb = field - 1075;
        }
        if (ma == 0 || mb == 0) {
            all_neg_zero = all_neg_zero && negative;
            return;
        }
        all_neg_zero = false;
        uint32_t tz = xd_trailing_zeros(mb);
        mb >>= tz;
        eb += (int32_t)tz;
        uint32_t shift = (uint32_t)(ea + eb - RM_XD_BASE_EXP);
        uint32_t limb = shift / 32;
        unsigned __int128 v = ((unsigned __int128)ma * (unsigned __int128)mb) << (shift % 32);
        int64_t digits[4] = {
            (int64_t)((uint64_t)v & 0xFFFFFFFFULL),
            (int64_t)((uint64_t)(v >> 32) & 0xFFFFFFFFULL),
            (int64_t)((uint64_t)(v >> 64) & 0xFFFFFFFFULL),
            (int64_t)(uint64_t)(v >> 96),
        };
        for (int l = 0; l < 4; l++) {
            if (negative) {
                limbs[limb + l] -= digits[l];
            } else {
                limbs[limb + l] += digits[l];
            }
        }
        since_normalize += 1;
        if (since_normalize == RM_XD_NORMALIZE_EVERY) {
            normalize();
        }
    }

    RM_FN void add(float x) { add_product(x, 1.0f); }

    // The exact sum rounded to odd in f64 (special values as in the Rust file). Works on
    // a copy: the accumulator stays usable.
    RM_FN double finish() const {
        if (nan || (pos_inf && neg_inf)) return f64_from_bits(0x7FF8000000000000ULL);
        if (pos_inf) return f64_from_bits(0x7FF0000000000000ULL);
        if (neg_inf) return f64_from_bits(0xFFF0000000000000ULL);
        ExactDot acc = *this;
        acc.normalize();
        bool negative = acc.limbs[RM_XD_DIGITS - 1] < 0;
        if (negative) {
            for (int i = 0; i < RM_XD_DIGITS; i++) acc.limbs[i] = -acc.limbs[i];
            acc.normalize();
        }
        int top = -1;
        for (int i = RM_XD_DIGITS - 1; i >= 0; i--) {
            if (acc.limbs[i] != 0) {
                top = i;
                break;
            }
        }
        if (top < 0) {
            bool neg_zero = any_term && all_neg_zero;
            return neg_zero ? -0.0 : 0.0;
        }
        unsigned __int128 w = ((unsigned __int128)(uint64_t)acc.limbs[top]) << 64;
        if (top >= 1) w |= ((unsigned __int128)(uint64_t)acc.limbs[top - 1]) << 32;
        if (top >= 2) w |= (unsigned __int128)(uint64_t)acc.limbs[top - 2];
        bool sticky = false;
        for (int i = 0; i + 2 < top; i++) sticky = sticky || acc.limbs[i] != 0;
        // leading zeros of w (w >= 2^64: the high word is nonzero)
        uint64_t high = (uint64_t)(w >> 64);
        uint32_t lz = 0;
        while ((high & 0x8000000000000000ULL) == 0) {
            high <<= 1;
            lz++;
        }
        unsigned __int128 aligned = w << lz;
        uint64_t m53 = (uint64_t)(aligned >> 75);
        unsigned __int128 rest = aligned & ((((unsigned __int128)1) << 75) - 1);
        if (rest != 0 || sticky) m53 |= 1;
        int32_t e = 75 - (int32_t)lz + 32 * (top - 2) + RM_XD_BASE_EXP;
        double v = (double)m53 * pow2(e);
        return negative ? -v : v;
    }
};

// The compensated sum of a[i] b[i] (+ bias) for i < n, with A(i) and B(i) loaders giving
// f32 values: lanes i mod RM_DOT2_LANES, TwoSum chains, the lanes combined in order.
template <class A, class B>
RM_FN double dot2(size_t n, const A& a, const B& b, bool has_bias, float bias) {
    double s[RM_DOT2_LANES];
    double q[RM_DOT2_LANES];
    for (int l = 0; l < RM_DOT2_LANES; l++) {
        s[l] = 0.0;
        q[l] = 0.0;
    }
    size_t full = n / RM_DOT2_LANES * RM_DOT2_LANES;
    size_t i = 0;
    for (; i < full; i += RM_DOT2_LANES) {
        for (int l = 0; l < RM_DOT2_LANES; l++) {
            double p = (double)a(i + l) * (double)b(i + l);
            double t, e;
            two_sum(s[l], p, &t, &e);
            s[l] = t;
            q[l] += e;
        }
    }
    for (int l = 0; i < n; i++, l++) {
        double p = (double)a(i) * (double)b(i);
        double t, e;
        two_sum(s[l], p, &t, &e);
        s[l] = t;
        q[l] += e;
    }
    double total = s[0];
    double err = q[0];
    for (int l = 1; l < RM_DOT2_LANES; l++) {
        double t, e;
        two_sum(total, s[l], &t, &e);
        total = t;
        err += e + q[l];
    }
    if (has_bias) {
        double t, e;
        two_sum(total, (double)bias, &t, &e);
        total = t;
        err += e;
    }
    return total + err;
}

// dot2 for f32 values A(i) and f64 values B(i) whose products are not exact in f64 (the
// quantized weights' exact values): each product split by Dekker's TwoProduct, the high
// parts chained with TwoSum in lanes i mod RM_DOT2_LANES, both error terms summed apart.
// `b` may be a stateful loader (it is called with i = 0, 1, .., n - 1 in order).
template <class A, class B>
RM_FN double dot2_wide(size_t n, const A& a, B& b, bool has_bias, float bias) {
    double s[RM_DOT2_LANES];
    double q[RM_DOT2_LANES];
    for (int l = 0; l < RM_DOT2_LANES; l++) {
        s[l] = 0.0;
        q[l] = 0.0;
    }
    for (size_t i = 0; i < n; i++) {
        size_t l = i % RM_DOT2_LANES;
        double p, e;
        two_prod((double)a(i), b(i), &p, &e);
        double t, r;
        two_sum(s[l], p, &t, &r);
        s[l] = t;
        q[l] += r + e;
    }
    double total = s[0];
    double err = q[0];
    for (int l = 1; l < RM_DOT2_LANES; l++) {
        double t, e;
        two_sum(total, s[l], &t, &e);
        total = t;
        err += e + q[l];
    }
    if (has_bias) {
        double t, e;
        two_sum(total, (double)bias, &t, &e);
        total = t;
        err += e;
    }
    return total + err;
}

RM_FN double dot2_bound(size_t n, double r, double abs_bound) {
    double m = (double)(n + RM_DOT2_LANES);
    double c = m * m * F64(0x3950000100000000);
    return fabs_(r) * F64(0x3CB0000000000000) + c * abs_bound;
}

}  // namespace repro
