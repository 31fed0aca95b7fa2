// The per-thread bodies of the kernels in kernels/fft/fft.cu: thread `tid` of a launch over a
// batch of rows does exactly this, whether it runs on the GPU (fft.cu, grid-stride loops)
// or on the emulated device (tests/emulated_device.rs). Buffers
// are split (re, im) rows of the working type T, row after row; the index maps are the ones
// of src/fft (plan.rs process_rows, stockham.rs, dft_gemm.rs, bluestein.rs).
#pragma once

#include "fft/bluestein.cuh"
#include "fft/butterflies.cuh"
#include "fft/dft_gemm.cuh"
#include "fft/ozaki.cuh"
#include "fft/stockham.cuh"

namespace repro {
namespace fft {

// FftScalar::to_f32: identity for float, round to nearest for double.
RM_FN float to_f32(float x) { return x; }
RM_FN float to_f32(double x) { return f64_to_f32(x); }

// plan.rs canonical(): every NaN becomes 0x7FC00000.
RM_FN float canonical_nan(float v) { return is_nan_f32(v) ? f32_from_bits(0x7FC00000u) : v; }

// process_rows, the load: (rows, n, 2) f32 -> split rows of T; the inverse transform is
// conj(forward(conj x)), so the imaginary part is negated on the way in (exact).
// deinterleave_value: one value (a, b) as the working type (the fused kernel of fft.cu
// loads the values first and converts them with this same function).
template <class T>
RM_FN Cx<T> deinterleave_value(int inverse, float a, float b) {
    return cx<T>((T)a, (T)(inverse ? -b : b));
}

template <class T>
RM_FN void thread_deinterleave(size_t tid, int inverse, const float* inp, T* re, T* im) {
    float a = inp[2 * tid];
    float b = inp[2 * tid + 1];
    Cx<T> z = deinterleave_value<T>(inverse, a, b);
    re[tid] = z.re;
    im[tid] = z.im;
}

// process_rows, the store: rounded once to f32, conjugated back for the inverse, NaNs made
// canonical.
// (interleave_value: one value's two output floats; the swizzled fused kernels of fft.cu
// read the value from their shared buffer and store the pair with this same function.)
template <class T>
RM_FN Cx<float> interleave_value(int inverse, T re, T im) {
    float a = to_f32(re);
    float b = to_f32(im);
    return cx<float>(canonical_nan(a), canonical_nan(inverse ? -b : b));
}

template <class T>
RM_FN void thread_interleave(size_t tid, int inverse, const T* re, const T* im, float* out) {
    Cx<float> z = interleave_value<T>(inverse, re[tid], im[tid]);
    out[2 * tid] = z.re;
    out[2 * tid + 1] = z.im;
}

// One Stockham stage over rows of length len: tid < rows * (len / R).
template <class T, int R>
RM_FN void thread_stockham(size_t tid, size_t len, size_t ns, const T* src_re, const T* src_im,
                           T* dst_re, T* dst_im, const T* tw_re, const T* tw_im) {
    size_t per_row = len / R;
    size_t row = tid / per_row, i = tid % per_row;
    size_t base = row * len;
    stockham_butterfly<T, R>(i, ns, per_row, src_re + base, src_im + base, dst_re + base,
                             dst_im + base, tw_re, tw_im);
}

// A radix-8 stage under Precision::Ozaki: tid < rows * (len / 8).
RM_FN void thread_stockham8_ozaki(size_t tid, size_t len, size_t ns, const float* src_re,
                                  const float* src_im, float* dst_re, float* dst_im,
                                  const float* tw_re, const float* tw_im,
                                  const float* w8_digits) {
    size_t per_row = len / 8;
    size_t row = tid / per_row, i = tid % per_row;
    size_t base = row * len;
    stockham_butterfly8_ozaki(i, ns, per_row, src_re + base, src_im + base, dst_re + base,
                              dst_im + base, tw_re, tw_im, w8_digits);
}

// DFT-GEMM, output k of a row: tid < rows * n.
template <class T>
RM_FN void thread_gemm(size_t tid, int n, const T* x_re, const T* x_im, T* out_re, T* out_im,
                       const T* w_re, const T* w_im) {
    size_t row = tid / (size_t)n;
    int k = (int)(tid % (size_t)n);
    size_t base = row * (size_t)n;
    Cx<T> y = gemm_output<T>(n, k, w_re, w_im, x_re + base, x_im + base);
    out_re[tid] = y.re;
    out_im[tid] = y.im;
}

// Ozaki DFT-GEMM, real output r of a row (re parts, then im parts): tid < rows * 2n.
RM_FN void thread_gemm_ozaki(size_t tid, int n, const float* x_re, const float* x_im,
                             float* out_re, float* out_im, const float* digits) {
    size_t two_n = 2 * (size_t)n;
    size_t row = tid / two_n;
    int r = (int)(tid % two_n);
    size_t base = row * (size_t)n;
    float v = gemm_ozaki_output(n, r, digits, x_re + base, x_im + base);
    if (r < n) {
        out_re[base + r] = v;
    } else {
        out_im[base + (r - n)] = v;
    }
}

// Bluestein, a = x c zero-padded: rows of n in, rows of m out, tid < rows * m.
template <class T>
RM_FN void thread_bluestein_in(size_t tid, size_t n, size_t m, const T* x_re, const T* x_im,
                               T* a_re, T* a_im, const T* chirp_re, const T* chirp_im) {
    size_t row = tid / m, j = tid % m;
    Cx<T> a = bluestein_in<T>(j, n, x_re + row * n, x_im + row * n, chirp_re, chirp_im);
    a_re[tid] = a.re;
    a_im[tid] = a.im;
}

// Bluestein, A = conj(A B) in place: tid < rows * m.
template <class T>
RM_FN void thread_bluestein_mul(size_t tid, size_t m, T* a_re, T* a_im, const T* k_re,
                                const T* k_im) {
    size_t k = tid % m;
    Cx<T> p = bluestein_mul<T>(cx<T>(a_re[tid], a_im[tid]), k_re[k], k_im[k]);
    a_re[tid] = p.re;
    a_im[tid] = p.im;
}

// Bluestein, X = conj(y) c: rows of m in, rows of n out, tid < rows * n.
template <class T>
RM_FN void thread_bluestein_out(size_t tid, size_t n, size_t m, const T* a_re, const T* a_im,
                                T* x_re, T* x_im, const T* chirp_re, const T* chirp_im) {
    size_t row = tid / n, k = tid % n;
    size_t s = row * m + k;
    Cx<T> x = bluestein_out<T>(cx<T>(a_re[s], a_im[s]), chirp_re[k], chirp_im[k]);
    x_re[tid] = x.re;
    x_im[tid] = x.im;
}


// ---- The candle ops around the transform (src/ops/fft.rs), all on f32 values. ----

// fft::ops scaled(): v / d (IEEE division; has_d = 0 leaves v), NaN made canonical.
RM_FN float op_scaled(float v, int has_d, float d) {
    float y = has_d ? v / d : v;
    return canonical_nan(y);
}

// fft / ifft under a norm: every value scaled (total = 2 rows n values).
RM_FN void thread_op_scale(size_t tid, int has_d, float d, const float* inp, float* out) {
    out[tid] = op_scaled(inp[tid], has_d, d);
}

// rfft's input: the real row as complex values (v, +0) (total = rows n).
RM_FN void thread_op_real_to_complex(size_t tid, const float* inp, float* out) {
    out[2 * tid] = inp[tid];
    out[2 * tid + 1] = 0.0f;
}

// rfft's output: the first half = n/2 + 1 values of each transformed row, scaled
// (total = rows half).
RM_FN void thread_op_take_half(size_t tid, size_t n, size_t half, int has_d, float d,
                               const float* inp, float* out) {
    size_t row = tid / half, k = tid % half;
    const float* z = inp + row * 2 * n + 2 * k;
    out[2 * tid] = op_scaled(z[0], has_d, d);
    out[2 * tid + 1] = op_scaled(z[1], has_d, d);
}

// repro_core::fft::rows hermitian_row, value k <= n/2 before the mirror: x_k (0 beyond m), imaginary
// parts of X_0 and (n even) X_{n/2} set to +0.
RM_FN void op_hermitian_low(const float* x, size_t m, size_t n, size_t k, float* re, float* im) {
    float a = 0.0f, b = 0.0f;
    if (k < m) {
        a = x[2 * k];
        b = x[2 * k + 1];
    }
    if (k == 0 || (n % 2 == 0 && k == n / 2)) b = 0.0f;
    *re = a;
    *im = b;
}

// irfft's input: the full spectrum X_k of each row from the half spectrum (rows of m
// complex values in, rows of n out; total = rows n): X_k for k <= n/2 as above,
// X_k = conj(X_{n-k}) beyond.
RM_FN void thread_op_hermitian(size_t tid, size_t m, size_t n, const float* inp, float* out) {
    size_t row = tid / n, k = tid % n;
    const float* x = inp + row * 2 * m;
    size_t half = n / 2;
    float re, im;
    if (k <= half) {
        op_hermitian_low(x, m, n, k, &re, &im);
    } else {
        op_hermitian_low(x, m, n, n - k, &re, &im);
        im = -im;
    }
    out[2 * tid] = re;
    out[2 * tid + 1] = im;
}

// irfft's output: the real parts, scaled (total = rows n).
RM_FN void thread_op_real_part(size_t tid, int has_d, float d, const float* inp, float* out) {
    out[tid] = op_scaled(inp[2 * tid], has_d, d);
}

}  // namespace fft
}  // namespace repro
