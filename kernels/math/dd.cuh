// Mirror of core/src/math/dd.rs: double-double arithmetic without fused multiply-add. Every
// function performs the Rust function's IEEE operations in the same order (the host build
// uses -ffp-contract=off and the device build --fmad=false, so nothing is fused).
#pragma once

#include "common.cuh"

namespace repro {

// 2^27 + 1 (0x41A0000002000000): Veltkamp's splitting constant.
#define RM_SPLITTER F64(0x41A0000002000000)

// s + e = a + b exactly (TwoSum).
RM_FN void two_sum(double a, double b, double* s_out, double* e_out) {
    double s = a + b;
    double bb = s - a;
    double e = (a - (s - bb)) + (b - bb);
    *s_out = s;
    *e_out = e;
}

// s + e = a + b exactly, |a| >= |b| or a = 0 (FastTwoSum).
RM_FN void fast_two_sum(double a, double b, double* s_out, double* e_out) {
    double s = a + b;
    double e = b - (s - a);
    *s_out = s;
    *e_out = e;
}

// a = h + l, h holding the top 26 bits (Veltkamp).
RM_FN void split(double a, double* h_out, double* l_out) {
    double t = RM_SPLITTER * a;
    double h = t - (t - a);
    *h_out = h;
    *l_out = a - h;
}

// p + e = a * b exactly (Dekker's TwoProduct).
RM_FN void two_prod(double a, double b, double* p_out, double* e_out) {
    double p = a * b;
    double ah, al, bh, bl;
    split(a, &ah, &al);
    split(b, &bh, &bl);
    double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    *p_out = p;
    *e_out = e;
}

struct DD {
    double hi;
    double lo;

    RM_FN static DD make(double hi, double lo) {
        DD r;
        r.hi = hi;
        r.lo = lo;
        return r;
    }
    RM_FN static DD from_f64(double x) { return make(x, 0.0); }
    RM_FN static DD from_bits(uint64_t hi, uint64_t lo) {
        return make(f64_from_bits(hi), f64_from_bits(lo));
    }

    RM_FN DD neg() const { return make(-hi, -lo); }

    RM_FN DD add(DD other) const {
        double s, e, t, f;
        two_sum(hi, other.hi, &s, &e);
        two_sum(lo, other.lo, &t, &f);
        e = e + t;
        fast_two_sum(s, e, &s, &e);
        e = e + f;
        double h, l;
        fast_two_sum(s, e, &h, &l);
        return make(h, l);
    }

    RM_FN DD sub(DD other) const { return add(other.neg()); }

    RM_FN DD add_f64(double b) const {
        double s, e;
        two_sum(hi, b, &s, &e);
        e = e + lo;
        double h, l;
        fast_two_sum(s, e, &h, &l);
        return make(h, l);
    }

    RM_FN DD mul(DD other) const {
        double p, e;
        two_prod(hi, other.hi, &p, &e);
        e = e + (hi * other.lo + lo * other.hi);
        double h, l;
        fast_two_sum(p, e, &h, &l);
        return make(h, l);
    }

    RM_FN DD mul_f64(double b) const {
        double p, e;
        two_prod(hi, b, &p, &e);
        e = e + lo * b;
        double h, l;
        fast_two_sum(p, e, &h, &l);
        return make(h, l);
    }

    RM_FN DD div(DD other) const {
        double q1 = hi / other.hi;
        DD r = sub(other.mul_f64(q1));
        double q2 = r.hi / other.hi;
        r = r.sub(other.mul_f64(q2));
        double q3 = r.hi / other.hi;
        double s, e;
        fast_two_sum(q1, q2, &s, &e);
        return make(s, e).add_f64(q3);
    }

    RM_FN DD scale(double pow2) const { return make(hi * pow2, lo * pow2); }
};

// hi + lo rounded to odd to 53 bits.
RM_FN double round_odd(DD x) {
    double hi = x.hi;
    double lo = x.lo;
    if (lo == 0.0 || !is_finite(hi) || (f64_to_bits(hi) & 1) == 1) {
        return hi;
    }
    bool towards_larger_magnitude = (lo > 0.0) == (hi > 0.0);
    uint64_t b = f64_to_bits(hi);
    return f64_from_bits(towards_larger_magnitude ? b + 1 : b - 1);
}

}  // namespace repro
