// The device math (kernels/repro_math.cuh) as host functions with C linkage: for every
// function, f32 / bf16 / f16 entry points on bit patterns and a batch variant over slices.
#include <stddef.h>

#include "repro_math.cuh"

#define RM_SHIM(NAME, FN)                                                                   \
    extern "C" uint32_t rm_##NAME##_f32(uint32_t x) {                                       \
        return repro::F32::bits(repro::eval<repro::FN, repro::F32>(repro::f32_from_bits(x))); \
    }                                                                                       \
    extern "C" uint16_t rm_##NAME##_bf16(uint16_t x) {                                      \
        return repro::eval_stored<repro::FN, repro::BF16>(x);                               \
    }                                                                                       \
    extern "C" uint16_t rm_##NAME##_f16(uint16_t x) {                                       \
        return repro::eval_stored<repro::FN, repro::F16>(x);                                \
    }                                                                                       \
    extern "C" void rm_##NAME##_f32_batch(const uint32_t* x, uint32_t* out, size_t n) {     \
        for (size_t i = 0; i < n; i++) out[i] = rm_##NAME##_f32(x[i]);                      \
    }

REPRO_FOR_EACH_UNARY(RM_SHIM)
