// Mirror of core/src/math/exact_round.rs: the correct rounding of a value known only through
// exact comparisons, by bisection over the format's values between two candidates.
#pragma once

#include "round.cuh"

namespace repro {

// The format's constants besides round.cuh's: the sign bit and the overflow power of two.
template <class F> struct FormatBits;
template <> struct FormatBits<F32> {
    static const uint32_t SIGN = 0x80000000u;
    RM_FN static double overflow() { return F64(0x47F0000000000000); }
    RM_FN static float from_bits(uint32_t b) { return f32_from_bits(b); }
};
template <> struct FormatBits<BF16> {
    static const uint32_t SIGN = 0x8000u;
    RM_FN static double overflow() { return F64(0x47F0000000000000); }
    RM_FN static uint16_t from_bits(uint32_t b) { return (uint16_t)b; }
};
template <> struct FormatBits<F16> {
    static const uint32_t SIGN = 0x8000u;
    RM_FN static double overflow() { return 65536.0; }
    RM_FN static uint16_t from_bits(uint32_t b) { return (uint16_t)b; }
};

template <class F>
RM_FN int64_t er_key(typename F::T v) {
    uint32_t b = F::bits(v);
    int64_t mag = (int64_t)(b & ~FormatBits<F>::SIGN);
    return (b & FormatBits<F>::SIGN) ? -mag : mag;
}

template <class F>
RM_FN typename F::T er_value(int64_t k) {
    if (k < 0) return FormatBits<F>::from_bits((uint32_t)(-k) | FormatBits<F>::SIGN);
    return FormatBits<F>::from_bits((uint32_t)k);
}

template <class F>
RM_FN double er_as_f64(int64_t k) {
    double v = (double)F::to_f32(er_value<F>(k));
    if (!is_finite(v)) return v > 0 ? FormatBits<F>::overflow() : -FormatBits<F>::overflow();
    return v;
}

// round_by_comparison: `cmp(m)` is -1, 0, 1 as x <, ==, > m; `zero_negative()` the sign of a
// result that rounds to zero.
template <class F, class Cmp, class ZeroNeg>
RM_FN typename F::T round_by_comparison(typename F::T lo, typename F::T hi, const Cmp& cmp,
                                        const ZeroNeg& zero_negative) {
    int64_t a = er_key<F>(lo), b = er_key<F>(hi);
    while (a < b) {
        int64_t c = a + (b - a) / 2;
        double m = (er_as_f64<F>(c) + er_as_f64<F>(c + 1)) * 0.5;
        int32_t o = cmp(m);
        if (o > 0) {
            a = c + 1;
        } else if (o < 0) {
            b = c;
        } else {
            int64_t even = (F::bits(er_value<F>(c)) & 1) == 0 ? c : c + 1;
            a = even;
            b = even;
        }
    }
    if (a == 0) {
        typename F::T z = F::round(0.0);
        return zero_negative() ? FormatBits<F>::from_bits(F::bits(z) | FormatBits<F>::SIGN) : z;
    }
    return er_value<F>(a);
}

}  // namespace repro
