// Device mirror of core/src/fft/butterflies.rs: the complex value in registers, its add / sub /
// multiply, and the DFT2 / DFT3 / DFT4 / DFT5 / DFT7 / DFT8 operation DAGs, operation for operation and in the
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

// FftScalar::BFLY: the odd-radix constants (cos and sin of 2 pi k / R) rounded to nearest,
// as the bit patterns tools/gen_fft_butterfly_consts.py prints (core/src/fft/scalar.rs holds the
// same lines; tests/fft_butterfly_consts.rs checks both against the generator). Index:
// 0 C3_1, 1 S3_1, 2 C5_1, 3 C5_2, 4 S5_1, 5 S5_2, 6 C7_1 .. 8 C7_3, 9 S7_1 .. 11 S7_3.
RM_FN uint32_t bfly_bits_f32(int i) {
    switch (i) {
        case 0: return 0xBF000000u;  // C3_1 = cos(2 pi 1/3)
        case 1: return 0x3F5DB3D7u;  // S3_1 = sin(2 pi 1/3)
        case 2: return 0x3E9E377Au;  // C5_1 = cos(2 pi 1/5)
        case 3: return 0xBF4F1BBDu;  // C5_2 = cos(2 pi 2/5)
        case 4: return 0x3F737871u;  // S5_1 = sin(2 pi 1/5)
        case 5: return 0x3F167918u;  // S5_2 = sin(2 pi 2/5)
        case 6: return 0x3F1F9D07u;  // C7_1 = cos(2 pi 1/7)
        case 7: return 0xBE63DC87u;  // C7_2 = cos(2 pi 2/7)
        case 8: return 0xBF66A5E5u;  // C7_3 = cos(2 pi 3/7)
        case 9: return 0x3F48261Cu;  // S7_1 = sin(2 pi 1/7)
        case 10: return 0x3F7994E0u;  // S7_2 = sin(2 pi 2/7)
        case 11: return 0x3EDE2602u;  // S7_3 = sin(2 pi 3/7)
        default: return 0u;
    }
}
RM_FN uint64_t bfly_bits_f64(int i) {
    switch (i) {
        case 0: return 0xBFE0000000000000ull;  // C3_1 = cos(2 pi 1/3)
        case 1: return 0x3FEBB67AE8584CAAull;  // S3_1 = sin(2 pi 1/3)
        case 2: return 0x3FD3C6EF372FE950ull;  // C5_1 = cos(2 pi 1/5)
        case 3: return 0xBFE9E3779B97F4A8ull;  // C5_2 = cos(2 pi 2/5)
        case 4: return 0x3FEE6F0E134454FFull;  // S5_1 = sin(2 pi 1/5)
        case 5: return 0x3FE2CF2304755A5Eull;  // S5_2 = sin(2 pi 2/5)
        case 6: return 0x3FE3F3A0E28BEDD1ull;  // C7_1 = cos(2 pi 1/7)
        case 7: return 0xBFCC7B90E3024582ull;  // C7_2 = cos(2 pi 2/7)
        case 8: return 0xBFECD4BCA9CB5C71ull;  // C7_3 = cos(2 pi 3/7)
        case 9: return 0x3FE904C37505DE4Bull;  // S7_1 = sin(2 pi 1/7)
        case 10: return 0x3FEF329C0558E969ull;  // S7_2 = sin(2 pi 2/7)
        case 11: return 0x3FDBC4C04D71ABC1ull;  // S7_3 = sin(2 pi 3/7)
        default: return 0ull;
    }
}
template <class T>
struct Bfly;
template <>
struct Bfly<float> {
    RM_FN static float at(int i) { return f32_from_bits(bfly_bits_f32(i)); }
};
template <>
struct Bfly<double> {
    RM_FN static double at(int i) { return f64_from_bits(bfly_bits_f64(i)); }
};

// scalar.rs bfly_cos: index of C_R_1.
RM_FN constexpr int bfly_cos(int r) { return r == 3 ? 0 : (r == 5 ? 2 : 6); }

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

// dft_odd::<T, R>, R = 3, 5, 7: the symmetric DAG of butterflies.rs (sums left to right,
// every product rounded on its own).
template <class T, int R>
RM_FN void dft_odd(Cx<T>* v) {
    constexpr int m = (R - 1) / 2;
    const int c0 = bfly_cos(R);
    Cx<T> x0 = v[0];
    Cx<T> a[3], b[3];
    for (int k = 1; k <= m; k++) {
        a[k - 1] = cx_add(v[k], v[R - k]);
        b[k - 1] = cx_sub(v[k], v[R - k]);
    }
    Cx<T> y0 = x0;
    for (int k = 0; k < m; k++) y0 = cx_add(y0, a[k]);
    v[0] = y0;
    for (int q = 1; q <= m; q++) {
        T ar = x0.re, ai = x0.im, br = x0.re, bi = x0.im;
        for (int k = 1; k <= m; k++) {
            int p = (q * k) % R;
            bool neg = p > m;
            int i = neg ? R - p : p;
            T c = Bfly<T>::at(c0 + i - 1);
            T s = Bfly<T>::at(c0 + m + i - 1);
            T car = c * a[k - 1].re;
            ar = ar + car;
            T cai = c * a[k - 1].im;
            ai = ai + cai;
            T tr = s * b[k - 1].re, ti = s * b[k - 1].im;
            if (k == 1) {
                br = tr;
                bi = ti;
            } else if (neg) {
                br = br - tr;
                bi = bi - ti;
            } else {
                br = br + tr;
                bi = bi + ti;
            }
        }
        v[q] = cx<T>(ar + bi, ai - br);
        v[R - q] = cx<T>(ar - bi, ai + br);
    }
}

// dft::<T, R>.
template <class T, int R>
RM_FN void dft(Cx<T>* v) {
    if (R == 3 || R == 5 || R == 7) {
        dft_odd<T, (R == 3 || R == 5 || R == 7) ? R : 3>(v);
    } else if (R == 2) {
        dft2(v);
    } else if (R == 4) {
        dft4(v);
    } else {
        dft8(v);
    }
}

}  // namespace fft
}  // namespace repro
