// Mirror of core/src/math/gelu.rs (the tanh-approximation GELU, x / (1 + e^-w) with
// w = x (A + B x^2), over the exp cores and recip). Constants generated from the Rust file by
// tools/kernel-hostcheck/scripts/rust_consts_to_cuh.py; same operations in the same order;
// see the Rust file for the algorithm and its bounds.
#pragma once

#include "exp.cuh"
#include "recip.cuh"

namespace repro {
namespace m_gelu {

constexpr double U = 0x1.0000000000000p-53;  // 0x3CA0000000000000
constexpr double GELU_FAST_REL_ERR = 0x1.0000000000000p-42;  // 0x3D50000000000000
constexpr double W_MAX = 0x1.1d00000000000p+7;  // 0x4061D00000000000
constexpr double LOW = -0x1.8000000000000p+3;  // 0xC028000000000000
constexpr double HIGH = 0x1.0000000000000p+3;  // 0x4020000000000000
constexpr double TANH_MAX = 0x1.0000000000000p+0;  // 0x3FF0000000000000
constexpr double TINY = 0x0.0000000000001p-1022;  // 0x0000000000000001
constexpr double A_F64 = 0x1.9884533d43651p+0;  // 0x3FF9884533D43651
constexpr double B_F64 = 0x1.2444f2a4d8b4bp-4;  // 0x3FB2444F2A4D8B4B
RM_FN DD A_DD() { return DD::make(0x1.9884533d43651p+0, -0x1.cbc0d30ebfd15p-54); }  // 0x3FF9884533D43651, 0xBC9CBC0D30EBFD15
RM_FN DD B_DD() { return DD::make(0x1.2444f2a4d8b4bp-4, -0x1.6c843a29d1c70p-61); }  // 0x3FB2444F2A4D8B4B, 0xBC26C843A29D1C70

RM_FN DD gelu_dd(double x) {
    DD w = B_DD().mul_f64(x * x).add(A_DD()).mul_f64(x);
    if (fabs_(x) < TANH_MAX) {
        DD m = m_exp::expm1_dd(w.neg());
        DD t = m.neg().div(m.add_f64(2.0));
        return t.mul_f64(x).add_f64(x).scale(0.5);
    } else if (x > 0.0) {
        return DD::from_f64(x).div(m_exp::exp_dd(w.neg()).add_f64(1.0));
    } else {
        DD e = m_exp::exp_dd(w);
        return e.div(e.add_f64(1.0)).mul_f64(x);
    }
}

}  // namespace m_gelu

struct Gelu {
    RM_FN static double fast_rel_err() { return m_gelu::GELU_FAST_REL_ERR; }
    RM_FN static bool in_fast_domain(float x) {
        return (double)x >= m_gelu::LOW && x <= 0x1.fffffep127f;
    }
    RM_FN static double fast(float xf) {
        using namespace m_gelu;
        double x = (double)xf;
        double w = x * fma_f64(B_F64, x * x, A_F64);
        double e = m_exp::exp_fast_f64(-fabs_(w));
        double r = m_recip::recip(1.0 + e);
        double s = x >= 0.0 ? r : e * r;
        return x * s;
    }
    RM_FN static double accurate(float xf) {
        using namespace m_gelu;
        double x = (double)xf;
        if (is_nan(x) || x == 0.0 || x == F64(0x7FF0000000000000)) {
            return x;
        } else if (x >= HIGH) {
            return f64_from_bits(f64_to_bits(x) - 1);
        } else if (x == F64(0xFFF0000000000000)) {
            return -0.0;
        } else if (x < LOW) {
            return -TINY;
        } else {
            return round_odd(gelu_dd(x));
        }
    }
};

}  // namespace repro
