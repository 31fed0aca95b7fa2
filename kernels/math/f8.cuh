// Mirror of core/src/math/f8.rs: float8 E4M3 ("fn": no infinities, NaN = S.1111.111), widened
// exactly to f32 and narrowed with one rounding and an explicit overflow rule.
#pragma once

#include "round.cuh"

namespace repro {

// Overflow rules (core/src/math/f8.rs Overflow): 0 saturate to +-448, 1 NaN.
#define RM_F8_SATURATE 0
#define RM_F8_NAN 1
#define RM_F8E4M3_NAN 0x7Fu

RM_FN float f8e4m3_to_f32(uint8_t bits) {
    bool negative = (bits & 0x80) != 0;
    int32_t field = (int32_t)((bits >> 3) & 0xF);
    int32_t frac = (int32_t)(bits & 7);
    if (field == 0xF && frac == 7) {
        return f32_from_bits(0x7FC00000u);
    }
    float mag;
    if (field == 0) {
        mag = (float)frac * f32_from_bits(0x3B000000u);  // 2^-9
    } else {
        mag = (float)(8 + frac) * f64_to_f32(pow2(field - 10));
    }
    return negative ? -mag : mag;
}

RM_FN uint8_t f8e4m3_encode_exact(double r) {
    if (r < F64(0x3F90000000000000)) {
        return (uint8_t)f64_to_u32(r * 512.0);
    } else {
        uint64_t b = f64_to_bits(r);
        int32_t e = ((int32_t)(b >> 52)) - 1023;
        uint8_t frac = (uint8_t)((b >> 49) & 7);
        return (uint8_t)((((uint8_t)(e + 7)) << 3) | frac);
    }
}

RM_FN uint8_t f32_to_f8e4m3(float x, int32_t overflow) {
    if (is_nan_f32(x)) {
        return (uint8_t)RM_F8E4M3_NAN;
    }
    uint8_t sign = (uint8_t)((f32_to_bits(x) >> 24) & 0x80);
    double a = fabs_((double)x);
    double r = is_finite(a) ? round_magnitude(a, 4, -6) : a;
    if (r > 448.0) {
        return overflow == RM_F8_SATURATE ? (uint8_t)(sign | 0x7E) : (uint8_t)RM_F8E4M3_NAN;
    }
    return (uint8_t)(sign | f8e4m3_encode_exact(r));
}

}  // namespace repro
