// Mirror of core/src/math/recip.rs: 1/d as an f32-division seed and one Newton step in f64
// (relative error 2^-45 for 2^-125 <= d <= 2^125; see the Rust file for the bound).
// The f32 division is IEEE (nvcc -prec-div=true), the rest plain f64 operations in the
// Rust order.
#pragma once

#include "common.cuh"

namespace repro {
namespace m_recip {

constexpr double RECIP_REL_ERR = 0x1.0000000000000p-45;  // 0x3D20000000000000

RM_FN double recip(double d) {
    double r0 = (double)(1.0f / f64_to_f32(d));
    double e = fma_f64(-d, r0, 1.0);
    return fma_f64(r0, e, r0);
}

}  // namespace m_recip
}  // namespace repro
