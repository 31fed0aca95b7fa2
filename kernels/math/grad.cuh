// Mirror of core/src/math/grad.rs: the backward passes of the elementwise functions.
//
// Derivative<U>::factor(x) gives the derivative factor of function U at x: Times(d), the
// gradient is g*d exactly, rounded once (mul_round); Over(q), the gradient is g/q in f64,
// rounded. The factors use the correctly rounded f32 functions (eval<U, F32>), the core's
// exp_fast_f64 and f64 operations in the order of the Rust code (no contraction).
#pragma once

#include "math/all.cuh"

namespace repro {
namespace m_grad {

struct Factor {
    bool over;  // false: Times(value), true: Over(value)
    double value;
};

RM_FN Factor times(double d) {
    Factor f;
    f.over = false;
    f.value = d;
    return f;
}

RM_FN Factor over(double q) {
    Factor f;
    f.over = true;
    f.value = q;
    return f;
}

#define RM_GRAD_LN10 F64(0x40026BB1BBB55516)
#define RM_GRAD_TWO_OVER_SQRT_PI F64(0x3FF20DD750429B6D)
#define RM_GRAD_INV_SQRT_2PI F64(0x3FD9884533D43651)
#define RM_GRAD_GELU_A F64(0x3FF9884533D43651)
#define RM_GRAD_GELU_B F64(0x3FB2444F2A4D8B4B)
#define RM_GRAD_GELU_3B F64(0x3FCB6676BF7450F0)
#define RM_GRAD_GELU_ERF_SMALL F64(0x3CD0000000000000)

template <class U>
RM_FN double cr(float x) {
    return (double)eval<U, F32>(x);
}

RM_FN bool is_inf_f32(float x) { return !is_finite_f32(x) && !is_nan_f32(x); }

// sigma(w) and sigma(w)*sigma(-w) from exp_fast_f64(-|w|) (sigmoid64_pair in grad.rs).
RM_FN void sigmoid64_pair(double w, double* s_out, double* ss_out) {
    double e = m_exp::exp_fast_f64(-fabs_(w));
    double q = 1.0 / (1.0 + e);
    *s_out = w >= 0.0 ? q : e * q;
    *ss_out = (e * q) * q;
}

RM_FN Factor step_limit(float x) { return times(x > 0.0f ? 1.0 : 0.0); }

}  // namespace m_grad

// The exact product g*d rounded once to F (Dekker's product, round to odd, one rounding).
template <class F>
RM_FN typename F::T mul_round(double g, double d) {
    double p, e;
    two_prod(g, d, &p, &e);
    return F::round(round_odd(DD::make(p, e)));
}

template <class F>
RM_FN typename F::T apply_factor(m_grad::Factor f, double g) {
    if (f.over) {
        return F::round(g / f.value);
    }
    return mul_round<F>(g, f.value);
}

template <class U>
struct Derivative;

template <>
struct Derivative<Exp> {
    RM_FN static m_grad::Factor factor(float x) { return m_grad::times(m_grad::cr<Exp>(x)); }
};

template <>
struct Derivative<Expm1> {
    RM_FN static m_grad::Factor factor(float x) { return m_grad::times(m_grad::cr<Exp>(x)); }
};

template <>
struct Derivative<Log> {
    RM_FN static m_grad::Factor factor(float x) { return m_grad::over((double)x); }
};

template <>
struct Derivative<Log1p> {
    RM_FN static m_grad::Factor factor(float x) { return m_grad::over(1.0 + (double)x); }
};

template <>
struct Derivative<Log10> {
    RM_FN static m_grad::Factor factor(float x) {
        return m_grad::over((double)x * RM_GRAD_LN10);
    }
};

template <>
struct Derivative<Sin> {
    RM_FN static m_grad::Factor factor(float x) { return m_grad::times(m_grad::cr<Cos>(x)); }
};

template <>
struct Derivative<Cos> {
    RM_FN static m_grad::Factor factor(float x) { return m_grad::times(-m_grad::cr<Sin>(x)); }
};

template <>
struct Derivative<Tanh> {
    RM_FN static m_grad::Factor factor(float x) {
        float x2 = 2.0f * x;
        double s = m_grad::cr<Sigmoid>(x2);
        return m_grad::times(4.0 * (s * m_grad::cr<Sigmoid>(-x2)));
    }
};

template <>
struct Derivative<Sigmoid> {
    RM_FN static m_grad::Factor factor(float x) {
        double s = m_grad::cr<Sigmoid>(x);
        return m_grad::times(s * m_grad::cr<Sigmoid>(-x));
    }
};

template <>
struct Derivative<Silu> {
    RM_FN static m_grad::Factor factor(float x) {
        if (m_grad::is_inf_f32(x)) {
            return m_grad::step_limit(x);
        }
        double xd = (double)x;
        double s, ss;
        m_grad::sigmoid64_pair(xd, &s, &ss);
        return m_grad::times(s + xd * ss);
    }
};

template <>
struct Derivative<Softplus> {
    RM_FN static m_grad::Factor factor(float x) { return m_grad::times(m_grad::cr<Sigmoid>(x)); }
};

template <>
struct Derivative<Erf> {
    RM_FN static m_grad::Factor factor(float x) {
        double xd = (double)x;
        return m_grad::times(RM_GRAD_TWO_OVER_SQRT_PI * m_exp::exp_fast_f64(-(xd * xd)));
    }
};

template <>
struct Derivative<Gelu> {
    RM_FN static m_grad::Factor factor(float x) {
        if (m_grad::is_inf_f32(x)) {
            return m_grad::step_limit(x);
        }
        double xd = (double)x;
        double x2 = xd * xd;
        double w = xd * (RM_GRAD_GELU_A + RM_GRAD_GELU_B * x2);
        double s, ss;
        m_grad::sigmoid64_pair(w, &s, &ss);
        return m_grad::times(s + (xd * ss) * (RM_GRAD_GELU_A + RM_GRAD_GELU_3B * x2));
    }
};

template <>
struct Derivative<GeluErf> {
    RM_FN static m_grad::Factor factor(float x) {
        if (m_grad::is_inf_f32(x)) {
            return m_grad::step_limit(x);
        }
        double xd = (double)x;
        double cdf = fabs_(xd) < RM_GRAD_GELU_ERF_SMALL ? 0.5 : m_grad::cr<GeluErf>(x) / xd;
        double pdf = RM_GRAD_INV_SQRT_2PI * m_exp::exp_fast_f64(-(xd * xd) * 0.5);
        return m_grad::times(cdf + xd * pdf);
    }
};

// The gradient of one stored element.
template <class U, class F>
RM_FN typename F::T grad_stored(typename F::T x, typename F::T g) {
    return apply_factor<F>(Derivative<U>::factor(F::to_f32(x)), (double)F::to_f32(g));
}

// softplus_with's factor: 1 where beta*x > threshold (f32), else sigmoid(beta*x).
RM_FN m_grad::Factor softplus_with_factor(float beta, float threshold, float x) {
    float t = beta * x;
    return m_grad::times(t > threshold ? 1.0 : m_grad::cr<Sigmoid>(t));
}

}  // namespace repro
