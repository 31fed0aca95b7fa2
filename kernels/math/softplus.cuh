// Mirror of src/math/softplus.rs (softplus over the exp and log1p cores). Constants
// generated from the Rust file by tools/kernel-hostcheck/scripts/rust_consts_to_cuh.py;
// same operations in the same order; see the Rust file for the algorithm and its bounds.
#pragma once

#include "exp.cuh"
#include "log.cuh"

namespace repro {
namespace m_softplus {

constexpr double U = 0x1.0000000000000p-53;  // 0x3CA0000000000000
constexpr double FAST_MIN = -0x1.5e00000000000p+9;  // 0xC085E00000000000
constexpr double SAT_HIGH = 0x1.4000000000000p+5;  // 0x4044000000000000
constexpr double SAT_LOW = -0x1.9000000000000p+7;  // 0xC069000000000000
constexpr double TINY = 0x0.0000000000001p-1022;  // 0x0000000000000001


constexpr double FAST_REL_ERR = m_exp::EXP_FAST_F64_REL_ERR + m_log::LOG1P_FAST_F64_REL_ERR + 2.0 * U;

}  // namespace m_softplus

struct Softplus {
    RM_FN static double fast_rel_err() { return m_softplus::FAST_REL_ERR; }
    RM_FN static bool in_fast_domain(float xf) {
        double x = (double)xf;
        return x >= m_softplus::FAST_MIN && x < F64(0x7FF0000000000000);
    }
    RM_FN static double fast(float xf) {
        double x = (double)xf;
        double l = m_log::log1p_fast_f64(m_exp::exp_fast_f64(-fabs_(x)));
        double p = x > 0.0 ? x : 0.0;
        return p + l;
    }
    RM_FN static double accurate(float xf) {
        using namespace m_softplus;
        double x = (double)xf;
        if (is_nan(x) || x == F64(0x7FF0000000000000)) {
            return x;
        } else if (x >= SAT_HIGH) {
            return f64_from_bits(f64_to_bits(x) + 1);
        } else if (x < SAT_LOW) {
            return x == F64(0xFFF0000000000000) ? 0.0 : TINY;
        } else if (x > 0.0) {
            return round_odd(m_log::log1p_dd(m_exp::exp_dd(DD::from_f64(-x))).add_f64(x));
        } else {
            return round_odd(m_log::log1p_dd(m_exp::exp_dd(DD::from_f64(x))));
        }
    }
};

}  // namespace repro
