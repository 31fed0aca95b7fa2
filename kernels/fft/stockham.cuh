// Device mirror of one butterfly of a Stockham stage (core/src/fft/stockham.rs): stage radix R,
// ns = product of the radices before it, stride = n / R, butterfly i (j = i mod ns,
// k = i / ns):
//   v_r = src[i + r stride];  v_r = v_r * tw[(r - 1) ns + j] (r >= 1, ns > 1, j = 0 too);
//   v = DFT_R(v) (butterflies.cuh) or, Precision::Ozaki radix 8, the sliced W8 product;
//   dst[k ns R + r ns + j] = v_r.
// The twiddles are the plan's table of the stage (uploaded, same bytes), tw_re / tw_im of
// length (R - 1) ns. Compiles as CUDA and as host C++.
#pragma once

#include "fft/butterflies.cuh"
#include "fft/ozaki.cuh"

namespace repro {
namespace fft {

// Where position o of a row lives in src / dst: o itself, except in the fused kernel's
// swizzled shared buffer (fft.cu FusedSwizzle). Only an address, never a value.
struct IdentityIndex {
    RM_FN size_t operator()(size_t o) const { return o; }
};

template <class T, int R, class Map = IdentityIndex>
RM_FN void stockham_load(size_t i, size_t ns, size_t stride, const T* src_re, const T* src_im,
                         const T* tw_re, const T* tw_im, Cx<T>* v, Map map = Map()) {
    size_t j = i % ns;
    for (int r = 0; r < R; r++) {
        size_t at = map(i + (size_t)r * stride);
        Cx<T> x = cx<T>(src_re[at], src_im[at]);
        if (ns > 1 && r > 0) {
            size_t t = (size_t)(r - 1) * ns + j;
            x = cx_mul(x, cx<T>(tw_re[t], tw_im[t]));
        }
        v[r] = x;
    }
}

template <class T, int R, class Map = IdentityIndex>
RM_FN void stockham_store(size_t i, size_t ns, T* dst_re, T* dst_im, const Cx<T>* v,
                          Map map = Map()) {
    size_t j = i % ns, k = i / ns;
    for (int r = 0; r < R; r++) {
        size_t o = map(k * ns * R + (size_t)r * ns + j);
        dst_re[o] = v[r].re;
        dst_im[o] = v[r].im;
    }
}

// Butterfly i of a stage with the DAG of butterflies.cuh.
template <class T, int R>
RM_FN void stockham_butterfly(size_t i, size_t ns, size_t stride, const T* src_re,
                              const T* src_im, T* dst_re, T* dst_im, const T* tw_re,
                              const T* tw_im) {
    Cx<T> v[R];
    stockham_load<T, R>(i, ns, stride, src_re, src_im, tw_re, tw_im, v);
    dft<T, R>(v);
    stockham_store<T, R>(i, ns, dst_re, dst_im, v);
}

// ozaki::apply_complex: m complex values as [re; im] (2m reals), the sliced 2m x 2m real
// matrix applied, written back.
template <int M>
RM_FN void ozaki_apply_complex(const float* digits, Cx<float>* v) {
    float x[2 * M], y[2 * M];
    for (int c = 0; c < M; c++) {
        x[c] = v[c].re;
        x[M + c] = v[c].im;
    }
    ozaki_apply<2 * M>(digits, 2 * M, x, y);
    for (int c = 0; c < M; c++) v[c] = cx<float>(y[c], y[M + c]);
}

// Butterfly i of a radix-8 stage under Precision::Ozaki: the W8 product on bf16 slices
// (w8_digits: the plan's ozaki::w8(), SLICES matrices of 16 x 16).
RM_FN void stockham_butterfly8_ozaki(size_t i, size_t ns, size_t stride, const float* src_re,
                                     const float* src_im, float* dst_re, float* dst_im,
                                     const float* tw_re, const float* tw_im,
                                     const float* w8_digits) {
    Cx<float> v[8];
    stockham_load<float, 8>(i, ns, stride, src_re, src_im, tw_re, tw_im, v);
    ozaki_apply_complex<8>(w8_digits, v);
    stockham_store<float, 8>(i, ns, dst_re, dst_im, v);
}

}  // namespace fft
}  // namespace repro
