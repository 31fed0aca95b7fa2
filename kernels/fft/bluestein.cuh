// Device mirror of the pointwise steps of core/src/fft/bluestein.rs, in its order:
//   a_j = x_j c_j (j < n), 0 (n <= j < m)
//   A_k = A_k B_k, then conjugated (for the inverse transform done as a forward one)
//   X_k = conj(y_k) c_k (k < n)
// with the plan's chirp c and kernel B (uploaded, same bytes); the two length-m transforms
// between them are Stockham stages (stockham.cuh). Compiles as CUDA and as host C++.
#pragma once

#include "fft/butterflies.cuh"

namespace repro {
namespace fft {

// a_j for 0 <= j < m (T::ZERO past n).
template <class T>
RM_FN Cx<T> bluestein_in(size_t j, size_t n, const T* x_re, const T* x_im, const T* chirp_re,
                         const T* chirp_im) {
    if (j < n) return cx_mul(cx<T>(x_re[j], x_im[j]), cx<T>(chirp_re[j], chirp_im[j]));
    return cx<T>((T)0, (T)0);
}

// The pointwise product with the kernel, conjugated: (p.re, -p.im).
template <class T>
RM_FN Cx<T> bluestein_mul(Cx<T> a, T k_re, T k_im) {
    Cx<T> p = cx_mul(a, cx<T>(k_re, k_im));
    return cx<T>(p.re, -p.im);
}

// X_k = (a.re, -a.im) c_k.
template <class T>
RM_FN Cx<T> bluestein_out(Cx<T> a, T c_re, T c_im) {
    return cx_mul(cx<T>(a.re, -a.im), cx<T>(c_re, c_im));
}

}  // namespace fft
}  // namespace repro
