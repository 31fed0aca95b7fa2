// Mirror of src/audio/cpu.rs, element by element (the same names): the source index of a
// padded frame, the power |z|^2 rounded once, Whisper's log10 floor and final map.
#pragma once

#include "math/all.cuh"

namespace repro {
namespace audio {

// Framing::source: the signal index of position i (-pad .. len + pad), or -1 for a zero.
RM_FN int64_t source(int64_t i, int64_t len, int32_t reflect) {
    if (i >= 0 && i < len) return i;
    if (!reflect) return -1;
    return i < 0 ? -i : 2 * (len - 1) - i;
}

// NaN as the canonical NaN.
RM_FN float canonical(float v) { return is_nan_f32(v) ? f32_from_bits(0x7FC00000u) : v; }

// power_one: re^2 + im^2, both squares exact in f64, the exact sum rounded to odd in f64
// and then to f32 (one rounding in effect).
RM_FN float power_one(float re, float im) {
    double s, e;
    two_sum((double)re * (double)re, (double)im * (double)im, &s, &e);
    return canonical(f64_to_f32(round_odd(DD::make(s, e))));
}

// FLOOR: f32's nearest value to 1e-10.
RM_FN float floor_value() { return f32_from_bits(0x2EDBE6FFu); }

// log10_floor: log10(max(m, FLOOR)) correctly rounded; NaN stays NaN.
RM_FN float log10_floor(float m) {
    if (is_nan_f32(m)) return f32_from_bits(0x7FC00000u);
    float c = m > floor_value() ? m : floor_value();
    return eval<Log10, F32>(c);
}

// max_nan: the larger value, NaN if either is NaN.
RM_FN float max_nan(float a, float b) {
    if (is_nan_f32(a) || is_nan_f32(b)) return f32_from_bits(0x7FC00000u);
    return a >= b ? a : b;
}

// finish_one: (max(v, low) + 4) / 4, low = M - 8 already rounded.
RM_FN float finish_one(float v, float low) { return canonical((max_nan(v, low) + 4.0f) * 0.25f); }

}  // namespace audio
}  // namespace repro
