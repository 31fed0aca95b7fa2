// Shared definitions of the device math (kernels/math/all.cuh): function qualifiers, bit
// casts, constant tables and the conversions whose Rust semantics C++ does not give by
// default. The same text compiles as CUDA (nvcc, device and host) and as plain host C++
// (the cross-check in tools/kernel-hostcheck, built with -ffp-contract=off).
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define RM_FN __host__ __device__ __forceinline__
// For the rare slow paths: kept out of line so that they do not weigh on the registers of
// the fast path around them.
#define RM_SLOW_FN __host__ __device__ __noinline__
#else
#define RM_FN inline __attribute__((always_inline))
#define RM_SLOW_FN __attribute__((noinline))
#endif

// Full unrolling of a loop with a compile-time trip count, for loops that index register
// arrays: without it nvcc may keep such an array in local memory (the stack frame in
// ptxas -v). Host builds need no hint.
#if defined(__CUDACC__)
#define RM_UNROLL _Pragma("unroll")
#else
#define RM_UNROLL
#endif

// Shared memory: REPRO_SHARED(T, name, [dims]) is `__shared__ T name[dims]`. The emulated
// device (tools/cuda-emu/include/cuda_emu.h) defines it first, to see every access.
#if !defined(REPRO_SHARED)
#define REPRO_SHARED(T, name, dims) __shared__ T name dims
#endif

// A constant table readable from device and host code: nvcc needs the device copy in
// __device__ memory; the host copy is an ordinary array. RM_TABLE(name)[i] picks the one for
// the code being compiled. Tables hold bit patterns (uint64_t), as the Rust ones do.
#if defined(__CUDACC__)
#define RM_DEFINE_TABLE(type, name, ...)                                                 \
    static __device__ const type name##_dev[] = __VA_ARGS__;                              \
    static const type name##_host[] = __VA_ARGS__;
#if defined(__CUDA_ARCH__)
#define RM_TABLE(name) name##_dev
#else
#define RM_TABLE(name) name##_host
#endif
#else
#define RM_DEFINE_TABLE(type, name, ...) static const type name##_host[] = __VA_ARGS__;
#define RM_TABLE(name) name##_host
#endif

namespace repro {

// f64::from_bits / to_bits, f32::from_bits / to_bits.
RM_FN double f64_from_bits(uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double((long long)b);
#else
    double d;
    memcpy(&d, &b, 8);
    return d;
#endif
}

RM_FN uint64_t f64_to_bits(double d) {
#if defined(__CUDA_ARCH__)
    return (uint64_t)__double_as_longlong(d);
#else
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
#endif
}

RM_FN float f32_from_bits(uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(b);
#else
    float f;
    memcpy(&f, &b, 4);
    return f;
#endif
}

RM_FN uint32_t f32_to_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
#endif
}

// Shorthand for constants written as bit patterns, as in the Rust source.
#define F64(bits) ::repro::f64_from_bits((uint64_t)(bits##ULL))

// `f64 as f32`: IEEE round to nearest even (subnormals and overflow included).
RM_FN float f64_to_f32(double y) {
#if defined(__CUDA_ARCH__)
    return __double2float_rn(y);
#else
    return (float)y;
#endif
}

// x.is_nan(), x.is_finite(), x.abs() on bits (no dependence on compiler flags).
RM_FN bool is_nan(double x) { return (f64_to_bits(x) & 0x7FFFFFFFFFFFFFFFULL) > 0x7FF0000000000000ULL; }
RM_FN bool is_nan_f32(float x) { return (f32_to_bits(x) & 0x7FFFFFFFu) > 0x7F800000u; }
RM_FN bool is_finite(double x) { return (f64_to_bits(x) & 0x7FF0000000000000ULL) != 0x7FF0000000000000ULL; }
RM_FN bool is_finite_f32(float x) { return (f32_to_bits(x) & 0x7F800000u) != 0x7F800000u; }
RM_FN double fabs_(double x) { return f64_from_bits(f64_to_bits(x) & 0x7FFFFFFFFFFFFFFFULL); }
RM_FN float fabs_f32(float x) { return f32_from_bits(f32_to_bits(x) & 0x7FFFFFFFu); }

// The fused flavour of Rust's madd (core/src/math/madd.rs): a * b + c rounded once (IEEE
// fusedMultiplyAdd), called where the Rust code calls madd. --fmad=false and
// -ffp-contract=off leave every other a * b + c unfused.
RM_FN double fma_f64(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
    return __fma_rn(a, b, c);
#else
    return ::fma(a, b, c);
#endif
}

// Rust's saturating float -> integer casts (`x as i32`, `x as i64`, `x as u32`, `x as u64`):
// truncate toward zero, clamp to the range, NaN gives 0. PTX cvt.rzi has exactly these
// semantics; on the host they are spelled out (a plain C++ cast is undefined out of range).
RM_FN int32_t f64_to_i32(double x) {
#if defined(__CUDA_ARCH__)
    return __double2int_rz(x);
#else
    if (is_nan(x)) return 0;
    if (x <= -2147483648.0) return INT32_MIN;
    if (x >= 2147483647.0) return INT32_MAX;
    return (int32_t)x;
#endif
}

RM_FN int64_t f64_to_i64(double x) {
#if defined(__CUDA_ARCH__)
    return __double2ll_rz(x);
#else
    if (is_nan(x)) return 0;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    if (x >= 9223372036854775808.0) return INT64_MAX;
    return (int64_t)x;
#endif
}

RM_FN uint32_t f64_to_u32(double x) {
#if defined(__CUDA_ARCH__)
    return __double2uint_rz(x);
#else
    if (is_nan(x) || x <= 0.0) return 0;
    if (x >= 4294967295.0) return UINT32_MAX;
    return (uint32_t)x;
#endif
}

RM_FN uint64_t f64_to_u64(double x) {
#if defined(__CUDA_ARCH__)
    return __double2ull_rz(x);
#else
    if (is_nan(x) || x <= 0.0) return 0;
    if (x >= 18446744073709551616.0) return UINT64_MAX;
    return (uint64_t)x;
#endif
}

RM_FN int32_t f32_to_i32(float x) {
#if defined(__CUDA_ARCH__)
    return __float2int_rz(x);
#else
    if (is_nan_f32(x)) return 0;
    if (x <= -2147483648.0f) return INT32_MIN;
    if (x >= 2147483648.0f) return INT32_MAX;
    return (int32_t)x;
#endif
}

}  // namespace repro
