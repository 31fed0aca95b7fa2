// The device math of candle-repro: an operation-for-operation mirror of core/src/math, one header
// per Rust file under kernels/math/. Same algorithms, the same constants (as bit patterns),
// the same tables, the same operation order and branches; C++ `double` operations compiled
// without contraction (--fmad=false on the device, -ffp-contract=off on the host), so every
// function returns the same bits as the Rust one. The text compiles both as CUDA and as
// plain host C++: tests/cuda_host_crosscheck.rs compares it bit for bit with the Rust code.
//
// Entry point: repro::eval<Function, Format>(float x) -> Format::T, with Function one of
// Exp, Expm1, Log, Log1p, Log10, Sin, Cos, Tanh, Sigmoid, Silu, Softplus, Erf, Gelu, GeluErf
// and Format one of F32, BF16, F16 (16-bit formats as their bits).
#pragma once

#include "math/common.cuh"
#include "math/round.cuh"
#include "math/dd.cuh"
#include "math/recip.cuh"
#include "math/unary.cuh"
#include "math/exp.cuh"
#include "math/log.cuh"
#include "math/trig.cuh"
#include "math/tanh.cuh"
#include "math/sigmoid.cuh"
#include "math/softplus.cuh"
#include "math/erf.cuh"
#include "math/gelu.cuh"

// X-macro over every function: X(kernel name, struct).
#define REPRO_FOR_EACH_UNARY(X) \
    X(exp, Exp)                 \
    X(expm1, Expm1)             \
    X(log, Log)                 \
    X(log1p, Log1p)             \
    X(log10, Log10)             \
    X(sin, Sin)                 \
    X(cos, Cos)                 \
    X(tanh, Tanh)               \
    X(sigmoid, Sigmoid)         \
    X(silu, Silu)               \
    X(softplus, Softplus)       \
    X(erf, Erf)                 \
    X(gelu, Gelu)               \
    X(gelu_erf, GeluErf)
