// Mirror of core/src/math/tanh.rs (tanh over the expm1 cores). Constants generated from the
// Rust file by tools/kernel-hostcheck/scripts/rust_consts_to_cuh.py; same operations in the
// same order; see the Rust file for the algorithm and its bounds.
#pragma once

#include "exp.cuh"

namespace repro {
namespace m_tanh {

constexpr double U = 0x1.0000000000000p-53;  // 0x3CA0000000000000
constexpr double SATURATE = 0x1.4000000000000p+4;  // 0x4034000000000000
constexpr double SERIES_MAX = 0x1.0000000000000p-25;  // 0x3E60000000000000
constexpr double ONE_MINUS_U = 0x1.fffffffffffffp-1;  // 0x3FEFFFFFFFFFFFFF
constexpr uint64_t SIGN = 0x8000000000000000ULL;


RM_FN DD tanh_dd(double x) {
    double a = fabs_(x);
    DD r;
    if (a == 0.0) {
        return DD::from_f64(x);
    } else if (a < SERIES_MAX) {
        double a2 = a * a;
        double cc = a * a2 / 3.0 - 2.0 * a * a2 * a2 / 15.0;
        double h, l;
        fast_two_sum(a, -cc, &h, &l);
        r = DD::make(h, l);
    } else {
        DD m = m_exp::expm1_dd(DD::from_f64(-2.0 * a));
        r = m.neg().div(m.add_f64(2.0));
    }
    return x < 0.0 ? r.neg() : r;
}

constexpr double FAST_REL_ERR = 2.0 * m_exp::EXPM1_FAST_F64_REL_ERR + 3.0 * U;

}  // namespace m_tanh

struct Tanh {
    RM_FN static double fast_rel_err() { return m_tanh::FAST_REL_ERR; }
    RM_FN static bool in_fast_domain(float x) { return !is_nan_f32(x); }
    RM_FN static double fast(float xf) {
        using namespace m_tanh;
        double x = (double)xf;
        double a = fabs_(x);
        a = a > SATURATE ? SATURATE : a;
        double m = m_exp::expm1_fast_f64(-2.0 * a);
        double t = -m / (2.0 + m);
        return f64_from_bits((f64_to_bits(t) & ~SIGN) | (f64_to_bits(x) & SIGN));
    }
    RM_FN static double accurate(float xf) {
        using namespace m_tanh;
        double x = (double)xf;
        if (is_nan(x)) {
            return x;
        }
        double a = fabs_(x);
        double r;
        if (a == F64(0x7FF0000000000000)) {
            r = 1.0;
        } else if (a >= SATURATE) {
            r = ONE_MINUS_U;
        } else {
            r = round_odd(tanh_dd(a));
        }
        return f64_from_bits(f64_to_bits(r) | (f64_to_bits(x) & SIGN));
    }
};

}  // namespace repro
