// Device mirror of src/fft/butterflies.rs: the complex value in registers, its add / sub /
// multiply, and the DFT2 / DFT4 / DFT8 operation DAGs, operation for operation and in the
// Rust order. Compiled without contraction (--fmad=false on the device, -ffp-contract=off
// on the host), so a butterfly's output bits are a pure function of its inputs on both.
// Templated on the working type: float (Precision::F32 and Ozaki) or double (F64Internal).
// Compiles as CUDA and as host C++ (the emulated device, tools/cuda-emu).
#pragma once

#include "math/common.cuh"

namespace repro {
namespace fft {

// Cx<T>.
template <class T>
struct Cx {
    T re;
    T im;
};

template <class T>
RM_FN Cx<T> cx(T re, T im) {
    Cx<T> z;
    z.re = re;
    z.im = im;
    return z;
}

template <class T>
RM_FN Cx<T> cx_add(Cx<T> a, Cx<T> b) {
    return cx<T>(a.re + b.re, a.im + b.im);
}

template <class T>
RM_FN Cx<T> cx_sub(Cx<T> a, Cx<T> b) {
    return cx<T>(a.re - b.re, a.im - b.im);
}

// Cx::mul: (a c - b d, a d + b c), each product rounded, then the sum / difference.
template <class T>
RM_FN Cx<T> cx_mul(Cx<T> a, Cx<T> w) {
    T rr = a.re * w.re;
    T ii = a.im * w.im;
    T ri = a.re * w.im;
    T ir = a.im * w.re;
    return cx<T>(rr - ii, ri + ir);
}

// Cx::mul_neg_i: multiplication by -i (exact).
template <class T>
RM_FN Cx<T> cx_mul_neg_i(Cx<T> a) {
    return cx<T>(a.im, -a.re);
}

// FftScalar::FRAC_1_SQRT_2: 1/sqrt(2) rounded to nearest in the type.
template <class T>
struct Consts;
template <>
struct Consts<float> {
    RM_FN static float frac_1_sqrt_2() { return f32_from_bits(0x3F3504F3u); }
};
template <>
struct Consts<double> {
    RM_FN static double frac_1_sqrt_2() { return F64(0x3FE6A09E667F3BCD); }
};

template <class T>
RM_FN void dft2(Cx<T>* v) {
    Cx<T> a = v[0], b = v[1];
    v[0] = cx_add(a, b);
    v[1] = cx_sub(a, b);
}

template <class T>
RM_FN void dft4(Cx<T>* v) {
    Cx<T> p0 = cx_add(v[0], v[2]);
    Cx<T> p1 = cx_sub(v[0], v[2]);
    Cx<T> p2 = cx_add(v[1], v[3]);
    Cx<T> p3 = cx_mul_neg_i(cx_sub(v[1], v[3]));
    v[0] = cx_add(p0, p2);
    v[1] = cx_add(p1, p3);
    v[2] = cx_sub(p0, p2);
    v[3] = cx_sub(p1, p3);
}

template <class T>
RM_FN void dft8(Cx<T>* v) {
    const T c = Consts<T>::frac_1_sqrt_2();
    Cx<T> a[4];
    a[0] = cx_add(v[0], v[4]);
    a[1] = cx_add(v[1], v[5]);
    a[2] = cx_add(v[2], v[6]);
    a[3] = cx_add(v[3], v[7]);
    Cx<T> d1 = cx_sub(v[1], v[5]);
    Cx<T> d3 = cx_sub(v[3], v[7]);
    Cx<T> b[4];
    b[0] = cx_sub(v[0], v[4]);
    b[1] = cx<T>((d1.re + d1.im) * c, (d1.im - d1.re) * c);
    b[2] = cx_mul_neg_i(cx_sub(v[2], v[6]));
    b[3] = cx<T>((d3.im - d3.re) * c, -((d3.re + d3.im) * c));
    dft4(a);
    dft4(b);
    v[0] = a[0];
    v[1] = b[0];
    v[2] = a[1];
    v[3] = b[1];
    v[4] = a[2];
    v[5] = b[2];
    v[6] = a[3];
    v[7] = b[3];
}

// dft::<T, R>.
template <class T, int R>
RM_FN void dft(Cx<T>* v) {
    if (R == 2) {
        dft2(v);
    } else if (R == 4) {
        dft4(v);
    } else {
        dft8(v);
    }
}

}  // namespace fft
}  // namespace repro
