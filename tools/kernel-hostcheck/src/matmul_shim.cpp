// The matmul kernels' math (the exact and compensated dot products, the f8e4m3
// conversions) as host functions with C linkage, for the bit comparison with core/src/math.
// The kernels themselves run on the emulated device (tests/emulated_device.rs).
#include <stddef.h>

#include "math/exact_dot.cuh"
#include "math/f8.cuh"
#include "math/round.cuh"
#include "matmul/ozaki.cuh"

using namespace repro;

namespace {

struct Slice {
    const float* v;
    float operator()(size_t i) const { return v[i]; }
};

}  // namespace

extern "C" {

uint64_t rm_exact_dot(size_t n, const float* a, const float* b, int32_t has_bias, float bias) {
    ExactDot acc;
    acc.init();
    for (size_t i = 0; i < n; i++) acc.add_product(a[i], b[i]);
    if (has_bias) acc.add(bias);
    return f64_to_bits(acc.finish());
}

uint64_t rm_dot2(size_t n, const float* a, const float* b, int32_t has_bias, float bias) {
    Slice sa = {a}, sb = {b};
    return f64_to_bits(dot2(n, sa, sb, has_bias != 0, bias));
}

// The integer tier's slicing of one line of n f32 values (matmul/ozaki.cuh) with S = 4 or
// 6 slices: ceil(n / 64) blocks of S * 64 digits into out, their 8 E + L, the tail norm.
void rm_oz_slice_line(int32_t slices, size_t n, const float* x, int8_t* out, int32_t* exps,
                      double* tail) {
    Slice line = {x};
    size_t nb = (n + RM_OZ_KB - 1) / RM_OZ_KB;
    if (slices == 4) {
        matmul::oz_slice_line<4>(line, n, nb, (uint8_t*)out, exps, tail);
    } else {
        matmul::oz_slice_line<6>(line, n, nb, (uint8_t*)out, exps, tail);
    }
}

uint32_t rm_f8e4m3_to_f32(uint8_t x) { return f32_to_bits(f8e4m3_to_f32(x)); }

uint8_t rm_f32_to_f8e4m3(uint32_t x, int32_t overflow) {
    return f32_to_f8e4m3(f32_from_bits(x), overflow);
}

// The elementwise kernels' rounding test (round_if_certain of math/round.cuh) for an f64
// y and relative bound err (bits): format 0 f32, 1 bf16, 2 f16; the value's bits in *out.
int32_t rm_round_if_certain(int32_t format, uint64_t y, uint64_t err, uint32_t* out) {
    double yd = f64_from_bits(y), e = f64_from_bits(err);
    bool ok;
    if (format == 0) {
        float v;
        ok = round_if_certain<F32>(yd, e, &v);
        *out = f32_to_bits(v);
    } else if (format == 1) {
        uint16_t v;
        ok = round_if_certain<BF16>(yd, e, &v);
        *out = v;
    } else {
        uint16_t v;
        ok = round_if_certain<F16>(yd, e, &v);
        *out = v;
    }
    return ok ? 1 : 0;
}

}
