// Mirror of src/math/log.rs. PLACEHOLDER: mirrors the Rust placeholder (no fast path,
// NaN from the accurate path) until the Rust implementation lands.
#pragma once

#include "dd.cuh"
#include "unary.cuh"

namespace repro {

struct Log {
    RM_FN static double fast_rel_err() { return 0.0; }
    RM_FN static bool in_fast_domain(float) { return false; }
    RM_FN static double fast(float) { return F64(0x7FF8000000000000); }
    RM_FN static double accurate(float) { return F64(0x7FF8000000000000); }
};

struct Log1p {
    RM_FN static double fast_rel_err() { return 0.0; }
    RM_FN static bool in_fast_domain(float) { return false; }
    RM_FN static double fast(float) { return F64(0x7FF8000000000000); }
    RM_FN static double accurate(float) { return F64(0x7FF8000000000000); }
};

}  // namespace repro
