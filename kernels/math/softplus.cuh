// Mirror of core/src/math/softplus.rs (softplus over the exp and log1p cores). Constants
// generated from the Rust file by tools/kernel-hostcheck/scripts/rust_consts_to_cuh.py;
// same operations in the same order; see the Rust file for the algorithm and its bounds.
#pragma once

#include "exp.cuh"
#include "log.cuh"
#include "recip.cuh"

namespace repro {
namespace m_softplus {

constexpr double H0 = 0x1.5555555555555p-2;  // 0x3FD5555555555555
constexpr double H1 = 0x1.999999999a3ddp-3;  // 0x3FC999999999A3DD
constexpr double H2 = 0x1.24924923d44c6p-3;  // 0x3FC24924923D44C6
constexpr double H3 = 0x1.c71c727143318p-4;  // 0x3FBC71C727143318
constexpr double H4 = 0x1.745cf0b0e03bdp-4;  // 0x3FB745CF0B0E03BD
constexpr double H5 = 0x1.3b18b294bebf9p-4;  // 0x3FB3B18B294BEBF9
constexpr double H6 = 0x1.10ac75dc602b1p-4;  // 0x3FB10AC75DC602B1
constexpr double H7 = 0x1.eb905e8575054p-5;  // 0x3FAEB905E8575054
constexpr double H8 = 0x1.687a6e7c95176p-5;  // 0x3FA687A6E7C95176
constexpr double H9 = 0x1.4b0a26c5f2aefp-4;  // 0x3FB4B0A26C5F2AEF
constexpr double FAST_MAX = 0x1.0000000000000p+7;  // 0x4060000000000000
constexpr double SAT_HIGH = 0x1.4000000000000p+5;  // 0x4044000000000000
constexpr double SAT_LOW = -0x1.0000000000000p+7;  // 0xC060000000000000
constexpr double TINY = 0x0.0000000000001p-1022;  // 0x0000000000000001

constexpr double FAST_REL_ERR = 2.0 * m_exp::F32_FAST_REL_ERR;

}  // namespace m_softplus

struct Softplus {
    RM_FN static double fast_rel_err() { return m_softplus::FAST_REL_ERR; }
    RM_FN static bool in_fast_domain(float xf) {
        return fabs_((double)xf) <= m_softplus::FAST_MAX;
    }
    RM_FN static double fast(float xf) {
        using namespace m_softplus;
        double e = m_exp::exp_f32_fast(-fabs_f32(xf));
        double x = (double)xf;
        double s = e * m_recip::recip(2.0 + e);
        double t = s * s;
        double t2 = t * t;
        double t4 = t2 * t2;
        double b0 = fma_f64(t2, fma_f64(t, H3, H2), fma_f64(t, H1, H0));
        double b1 = fma_f64(t2, fma_f64(t, H7, H6), fma_f64(t, H5, H4));
        double h = fma_f64(t4 * t4, fma_f64(t, H9, H8), fma_f64(t4, b1, b0));
        double s2 = s + s;
        double l = fma_f64(s2, t * h, s2);
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
