// Mirror of core/src/math/sigmoid.rs (sigmoid and silu over the exp and tanh cores).
// Constants generated from the Rust file by
// tools/kernel-hostcheck/scripts/rust_consts_to_cuh.py; same operations in the same order;
// see the Rust file for the algorithm and its bounds.
#pragma once

#include "exp.cuh"
#include "recip.cuh"
#include "tanh.cuh"

namespace repro {
namespace m_sigmoid {

constexpr double U = 0x1.0000000000000p-53;  // 0x3CA0000000000000
constexpr double FAST_MAX = 0x1.0000000000000p+7;  // 0x4060000000000000
constexpr double SAT_HIGH = 0x1.4000000000000p+5;  // 0x4044000000000000
constexpr double SAT_LOW = -0x1.0000000000000p+7;  // 0xC060000000000000
constexpr double ONE_MINUS_U = 0x1.fffffffffffffp-1;  // 0x3FEFFFFFFFFFFFFF
constexpr double TINY = 0x0.0000000000001p-1022;  // 0x0000000000000001


RM_FN double sigmoid_fast(float x) {
    double e = m_exp::exp_f32_fast(-fabs_f32(x));
    double r = m_recip::recip(1.0 + e);
    return x >= 0.0f ? r : e * r;
}

RM_FN DD sigmoid_dd(double x) {
    if (x >= -1.0) {
        return m_tanh::tanh_dd(0.5 * x).scale(0.5).add_f64(0.5);
    } else {
        DD e = m_exp::exp_dd(DD::from_f64(x));
        return e.div(e.add_f64(1.0));
    }
}

constexpr double FAST_REL_ERR = 1.5 * m_exp::F32_FAST_REL_ERR + m_recip::RECIP_REL_ERR + 4.0 * U;

}  // namespace m_sigmoid

struct Sigmoid {
    RM_FN static double fast_rel_err() { return m_sigmoid::FAST_REL_ERR; }
    RM_FN static bool in_fast_domain(float x) { return fabs_((double)x) <= m_sigmoid::FAST_MAX; }
    RM_FN static double fast(float x) { return m_sigmoid::sigmoid_fast(x); }
    RM_FN static double accurate(float xf) {
        using namespace m_sigmoid;
        double x = (double)xf;
        if (is_nan(x)) {
            return x;
        } else if (x == F64(0x7FF0000000000000)) {
            return 1.0;
        } else if (x >= SAT_HIGH) {
            return ONE_MINUS_U;
        } else if (x == F64(0xFFF0000000000000)) {
            return 0.0;
        } else if (x < SAT_LOW) {
            return TINY;
        } else {
            return round_odd(sigmoid_dd(x));
        }
    }
};

struct Silu {
    RM_FN static double fast_rel_err() { return m_sigmoid::FAST_REL_ERR; }
    RM_FN static bool in_fast_domain(float x) { return fabs_((double)x) <= m_sigmoid::FAST_MAX; }
    RM_FN static double fast(float x) { return ((double)x) * m_sigmoid::sigmoid_fast(x); }
    RM_FN static double accurate(float xf) {
        using namespace m_sigmoid;
        double x = (double)xf;
        if (is_nan(x) || x == 0.0 || x == F64(0x7FF0000000000000)) {
            return x;
        } else if (x >= SAT_HIGH) {
            return f64_from_bits(f64_to_bits(x) - 1);
        } else if (x == F64(0xFFF0000000000000)) {
            return -0.0;
        } else if (x < SAT_LOW) {
            return -TINY;
        } else if (x >= -1.0) {
            DD t = m_tanh::tanh_dd(0.5 * x);
            return round_odd(t.mul_f64(x).add_f64(x).scale(0.5));
        } else {
            return round_odd(sigmoid_dd(x).mul_f64(x));
        }
    }
};

}  // namespace repro
