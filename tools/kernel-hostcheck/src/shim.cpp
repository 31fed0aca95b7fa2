// The device math (kernels/math/all.cuh) as host functions with C linkage: for every
// function, f32 / bf16 / f16 entry points on bit patterns and a batch variant over slices.
#include <stddef.h>

#include "math/all.cuh"

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

// The parts of each function (CrUnary's members), to compare the mirror operation by
// operation rather than only through the final rounding: the bound, the domain test and
// the f64 bits of the fast and accurate paths.
#define RM_SHIM_PARTS(NAME, FN)                                                             \
    extern "C" uint64_t rm_##NAME##_fast_rel_err(void) {                                    \
        return repro::f64_to_bits(repro::FN::fast_rel_err());                               \
    }                                                                                       \
    extern "C" void rm_##NAME##_fast_batch(const uint32_t* x, uint8_t* in_domain,           \
                                           uint64_t* fast, size_t n) {                      \
        for (size_t i = 0; i < n; i++) {                                                    \
            float xf = repro::f32_from_bits(x[i]);                                          \
            in_domain[i] = repro::FN::in_fast_domain(xf) ? 1 : 0;                           \
            fast[i] = repro::f64_to_bits(repro::FN::fast(xf));                              \
        }                                                                                   \
    }                                                                                       \
    extern "C" uint64_t rm_##NAME##_accurate(uint32_t x) {                                  \
        return repro::f64_to_bits(repro::FN::accurate(repro::f32_from_bits(x)));            \
    }

REPRO_FOR_EACH_UNARY(RM_SHIM_PARTS)
