// Mirror of core/src/math/unary.rs: the fast path, the rounding test, the accurate path.
//
// A function is a struct with the members of the Rust trait CrUnary:
//   static double fast_rel_err();            // CrUnary::FAST_REL_ERR
//   static bool in_fast_domain(float x);
//   static double fast(float x);
//   static double accurate(float x);
// The Rust slice kernels (map_generic) give the same bits as the scalar `eval`: their
// cheaper vector rounding test (Format::round_if_certain_fast) is sound and hands every
// lane it does not settle to `eval`. So the device kernels simply run `eval` on every
// element.
#pragma once

#include "round.cuh"

namespace repro {

// FAST_REL_ERR + f64::EPSILON (2^-52), the bound used by the rounding test.
template <class U>
RM_FN double test_err() {
    return U::fast_rel_err() + F64(0x3CB0000000000000);
}

// f(x) correctly rounded to F.
template <class U, class F>
RM_FN typename F::T eval(float x) {
    if (U::in_fast_domain(x)) {
        typename F::T r;
        bool sure = round_if_certain<F>(U::fast(x), test_err<U>(), &r);
        if (sure) {
            return r;
        }
    }
    return F::round(U::accurate(x));
}

// f of a stored value of format F (what the elementwise kernels compute).
template <class U, class F>
RM_FN typename F::T eval_stored(typename F::T v) {
    return eval<U, F>(F::to_f32(v));
}

}  // namespace repro
