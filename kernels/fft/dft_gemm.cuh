// Device mirror of core/src/fft/dft_gemm.rs (n <= 16): output k of X = W x as four real dot
// products in the fixed order j = 0, 1, .., n-1,
//   X_re[k] = S(W_re[k], x_re) - S(W_im[k], x_im),  X_im[k] = S(W_re[k], x_im) + S(W_im[k], x_re),
// with the plan's W (uploaded, same bytes). Precision::Ozaki evaluates the same product on
// the plan's bf16 slices of the 2n x 2n real matrix (ozaki.cuh). Compiles as CUDA and as
// host C++.
#pragma once

#include "fft/butterflies.cuh"
#include "fft/ozaki.cuh"

namespace repro {
namespace fft {

// dft_gemm::dot: S(a, b) = (..(a_0 b_0 + a_1 b_1) + ..) + a_{n-1} b_{n-1}.
template <class T>
RM_FN T gemm_dot(const T* a, const T* b, int n) {
    T acc = a[0] * b[0];
    for (int j = 1; j < n; j++) acc = acc + a[j] * b[j];
    return acc;
}

// Output k of DftGemm::forward.
template <class T>
RM_FN Cx<T> gemm_output(int n, int k, const T* w_re, const T* w_im, const T* x_re,
                        const T* x_im) {
    const T* wr = w_re + (size_t)k * n;
    const T* wi = w_im + (size_t)k * n;
    T rr = gemm_dot(wr, x_re, n);
    T ii = gemm_dot(wi, x_im, n);
    T ri = gemm_dot(wr, x_im, n);
    T ir = gemm_dot(wi, x_re, n);
    return cx<T>(rr - ii, ri + ir);
}

// Real output `row` (0 <= row < 2n: re parts, then im parts) of the Ozaki DFT-GEMM: the
// whole row of the input is split (one scale for its 2n reals), then one row of the sliced
// product. Every thread of a row splits the same values the same way.
RM_FN float gemm_ozaki_output(int n, int row, const float* digits, const float* x_re,
                              const float* x_im) {
    float x[32];
    float xd[RM_FFT_SLICES * 32];
    for (int c = 0; c < n; c++) {
        x[c] = x_re[c];
        x[n + c] = x_im[c];
    }
    int e = 0;
    int status = ozaki_split<32>(x, 2 * n, xd, &e);
    return ozaki_output<32>(status, digits, 2 * n, row, xd, e);
}

}  // namespace fft
}  // namespace repro
