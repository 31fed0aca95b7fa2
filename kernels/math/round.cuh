// Mirror of core/src/math/round.rs: rounding an f64 once to f32, bf16 or f16, and the rounding
// test. Same operations in the same order; see the Rust file for the reasoning.
#pragma once

#include "common.cuh"

namespace repro {

// 2^k as an f64, for -1022 <= k <= 1023, built from its bits.
RM_FN double pow2(int32_t k) { return f64_from_bits(((uint64_t)(int64_t)(k + 1023)) << 52); }

// 1.5 * 2^52 (0x4338000000000000).
#define RM_ROUND_INT_MAGIC F64(0x4338000000000000)

RM_FN double round_magnitude(double a, int32_t p, int32_t emin) {
    int32_t e = ((int32_t)(f64_to_bits(a) >> 52)) - 1023;
    e = e < emin ? emin : e;
    double quantum = pow2(e - p + 1);
    double scaled = a / quantum;
    double n = (scaled + RM_ROUND_INT_MAGIC) - RM_ROUND_INT_MAGIC;
    return n * quantum;
}

// Widen f16 bits to f32 exactly (integer operations and one exact f32 product).
RM_FN float f16_bits_to_f32(uint16_t h) {
    uint32_t sign = ((uint32_t)(h & 0x8000)) << 16;
    uint32_t exp = (uint32_t)((h >> 10) & 0x1F);
    uint32_t man = (uint32_t)(h & 0x3FF);
    uint32_t mag;
    if (exp == 0x1F) {
        mag = 0x7F800000u | (man << 13);
    } else if (exp != 0) {
        mag = ((exp + 112) << 23) | (man << 13);
    } else {
        mag = f32_to_bits((float)man * f32_from_bits(0x33800000u));  // 2^-24
    }
    return f32_from_bits(sign | mag);
}

// Encode a non-negative f64 that is exactly an f16 value (0, subnormal or normal).
RM_FN uint16_t f64_exact_to_f16_bits(double r) {
    if (r < F64(0x3F10000000000000)) {
        return (uint16_t)f64_to_u32(r * F64(0x4170000000000000));  // * 2^24
    } else {
        uint64_t b = f64_to_bits(r);
        int32_t e = ((int32_t)(b >> 52)) - 1023 + 15;
        uint16_t m = (uint16_t)((b >> 42) & 0x3FF);
        return (uint16_t)(((uint16_t)e << 10) | m);
    }
}

// The output formats. `T` is the storage type (bf16 and f16 as their bits); `bits` widens a
// value to u32 for comparisons, as Format::bits does.
struct F32 {
    typedef float T;
    static const uint32_t NAN_BITS = 0x7FC00000u;
    RM_FN static float to_f32(float v) { return v; }
    RM_FN static float round(double y) {
        if (is_nan(y)) {
            return f32_from_bits(NAN_BITS);
        } else {
            return f64_to_f32(y);
        }
    }
    RM_FN static uint32_t bits(float v) { return f32_to_bits(v); }
};

struct BF16 {
    typedef uint16_t T;
    static const uint32_t NAN_BITS = 0x7FC0u;
    RM_FN static float to_f32(uint16_t v) { return f32_from_bits(((uint32_t)v) << 16); }
    RM_FN static uint16_t round(double y) {
        if (is_nan(y)) {
            return (uint16_t)NAN_BITS;
        }
        double a = fabs_(y);
        double r;
        if (a >= F64(0x47F0000000000000)) {
            r = f64_from_bits(0x7FF0000000000000ULL);  // infinity
        } else {
            r = round_magnitude(a, 8, -126);
        }
        uint16_t bits = (uint16_t)(f32_to_bits(f64_to_f32(r)) >> 16);
        return (uint16_t)(bits | (((uint16_t)(f64_to_bits(y) >> 48)) & 0x8000));
    }
    RM_FN static uint32_t bits(uint16_t v) { return (uint32_t)v; }
};

struct F16 {
    typedef uint16_t T;
    static const uint32_t NAN_BITS = 0x7E00u;
    RM_FN static float to_f32(uint16_t v) { return f16_bits_to_f32(v); }
    RM_FN static uint16_t round(double y) {
        if (is_nan(y)) {
            return (uint16_t)NAN_BITS;
        }
        double a = fabs_(y);
        double r;
        if (a >= 65536.0) {
            r = 65536.0;
        } else {
            r = round_magnitude(a, 11, -14);
        }
        uint16_t bits;
        if (r >= 65536.0) {
            bits = 0x7C00;
        } else {
            bits = f64_exact_to_f16_bits(r);
        }
        return (uint16_t)(bits | (((uint16_t)(f64_to_bits(y) >> 48)) & 0x8000));
    }
    RM_FN static uint32_t bits(uint16_t v) { return (uint32_t)v; }
};

// The rounding test: true when every number within relative distance `err` of `y` rounds
// to the same value of F, which is stored in *out.
template <class F>
RM_FN bool round_if_certain(double y, double err, typename F::T* out) {
    double d = y * err;
    typename F::T lo = F::round(y - d);
    typename F::T hi = F::round(y + d);
    *out = lo;
    return F::bits(lo) == F::bits(hi);
}

// Mirror of round_within_parts: the rounding test for an absolute bound `err` (see
// core/src/math/round.rs); *out gets the rounding of the lower end, the result says whether
// the whole widened interval rounds to it.
template <class F>
RM_FN bool round_within_parts(double y, double err, typename F::T* out) {
    double d = err * F64(0x3FF0000000010000) + fabs_(y) * F64(0x3CC0000000000000);
    typename F::T lo = F::round(y - d);
    typename F::T hi = F::round(y + d);
    *out = lo;
    return (F::bits(lo) == F::bits(hi)) & is_finite(d);
}

}  // namespace repro
