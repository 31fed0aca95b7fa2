// The FFT kernels of kernels/fft.cu on the host: every entry point runs the kernel's
// per-thread body (kernels/fft/threads.cuh, the same text nvcc compiles) for every thread
// index of the launch, as the kernel's grid-stride loop does. The threads of a launch are
// independent (each writes only its own outputs; stages are out of place), so the order
// they run in cannot matter; here they run in reverse order, the GPU runs them in any.
// `f64` selects the working type (0: float, Precision::F32 / Ozaki; 1: double,
// Precision::F64Internal); buffers are passed as void pointers of that type. Test support
// for tests/fft_kernel_hostcheck.rs, which replays a DevicePlan's steps through these.
#include <stddef.h>

#include "fft/threads.cuh"

using namespace repro::fft;

#define RM_FFT_THREADS(total) for (size_t tid = (total); tid-- > 0;)

namespace {

template <class T>
void deinterleave(size_t total, int inverse, const float* inp, void* re, void* im) {
    RM_FFT_THREADS(total) thread_deinterleave<T>(tid, inverse, inp, (T*)re, (T*)im);
}

template <class T>
void interleave(size_t total, int inverse, const void* re, const void* im, float* out) {
    RM_FFT_THREADS(total) thread_interleave<T>(tid, inverse, (const T*)re, (const T*)im, out);
}

template <class T, int R>
void stockham(size_t total, size_t len, size_t ns, const void* sr, const void* si, void* dr,
              void* di, const void* tr, const void* ti) {
    RM_FFT_THREADS(total)
    thread_stockham<T, R>(tid, len, ns, (const T*)sr, (const T*)si, (T*)dr, (T*)di,
                          (const T*)tr, (const T*)ti);
}

template <class T>
int stockham_radix(int radix, size_t total, size_t len, size_t ns, const void* sr,
                   const void* si, void* dr, void* di, const void* tr, const void* ti) {
    switch (radix) {
        case 2: stockham<T, 2>(total, len, ns, sr, si, dr, di, tr, ti); return 0;
        case 4: stockham<T, 4>(total, len, ns, sr, si, dr, di, tr, ti); return 0;
        case 8: stockham<T, 8>(total, len, ns, sr, si, dr, di, tr, ti); return 0;
        default: return 1;
    }
}

template <class T>
void gemm(size_t total, int n, const void* xr, const void* xi, void* yr, void* yi,
          const void* wr, const void* wi) {
    RM_FFT_THREADS(total)
    thread_gemm<T>(tid, n, (const T*)xr, (const T*)xi, (T*)yr, (T*)yi, (const T*)wr,
                   (const T*)wi);
}

template <class T>
void bluestein_in(size_t total, size_t n, size_t m, const void* xr, const void* xi, void* ar,
                  void* ai, const void* cr, const void* ci) {
    RM_FFT_THREADS(total)
    thread_bluestein_in<T>(tid, n, m, (const T*)xr, (const T*)xi, (T*)ar, (T*)ai,
                           (const T*)cr, (const T*)ci);
}

template <class T>
void bluestein_mul(size_t total, size_t m, void* ar, void* ai, const void* kr, const void* ki) {
    RM_FFT_THREADS(total)
    thread_bluestein_mul<T>(tid, m, (T*)ar, (T*)ai, (const T*)kr, (const T*)ki);
}

template <class T>
void bluestein_out(size_t total, size_t n, size_t m, const void* ar, const void* ai, void* xr,
                   void* xi, const void* cr, const void* ci) {
    RM_FFT_THREADS(total)
    thread_bluestein_out<T>(tid, n, m, (const T*)ar, (const T*)ai, (T*)xr, (T*)xi,
                            (const T*)cr, (const T*)ci);
}

}  // namespace

extern "C" void rm_fft_deinterleave(int f64, size_t total, int inverse, const float* inp,
                                    void* re, void* im) {
    if (f64) deinterleave<double>(total, inverse, inp, re, im);
    else deinterleave<float>(total, inverse, inp, re, im);
}

extern "C" void rm_fft_interleave(int f64, size_t total, int inverse, const void* re,
                                  const void* im, float* out) {
    if (f64) interleave<double>(total, inverse, re, im, out);
    else interleave<float>(total, inverse, re, im, out);
}

extern "C" int rm_fft_stockham(int f64, int radix, size_t total, size_t len, size_t ns,
                               const void* sr, const void* si, void* dr, void* di,
                               const void* tr, const void* ti) {
    if (f64) return stockham_radix<double>(radix, total, len, ns, sr, si, dr, di, tr, ti);
    return stockham_radix<float>(radix, total, len, ns, sr, si, dr, di, tr, ti);
}

extern "C" void rm_fft_stockham8_ozaki(size_t total, size_t len, size_t ns, const float* sr,
                                       const float* si, float* dr, float* di, const float* tr,
                                       const float* ti, const float* w8) {
    RM_FFT_THREADS(total) thread_stockham8_ozaki(tid, len, ns, sr, si, dr, di, tr, ti, w8);
}

extern "C" void rm_fft_gemm(int f64, size_t total, int n, const void* xr, const void* xi,
                            void* yr, void* yi, const void* wr, const void* wi) {
    if (f64) gemm<double>(total, n, xr, xi, yr, yi, wr, wi);
    else gemm<float>(total, n, xr, xi, yr, yi, wr, wi);
}

extern "C" void rm_fft_gemm_ozaki(size_t total, int n, const float* xr, const float* xi,
                                  float* yr, float* yi, const float* digits) {
    RM_FFT_THREADS(total) thread_gemm_ozaki(tid, n, xr, xi, yr, yi, digits);
}

extern "C" void rm_fft_bluestein_in(int f64, size_t total, size_t n, size_t m, const void* xr,
                                    const void* xi, void* ar, void* ai, const void* cr,
                                    const void* ci) {
    if (f64) bluestein_in<double>(total, n, m, xr, xi, ar, ai, cr, ci);
    else bluestein_in<float>(total, n, m, xr, xi, ar, ai, cr, ci);
}

extern "C" void rm_fft_bluestein_mul(int f64, size_t total, size_t m, void* ar, void* ai,
                                     const void* kr, const void* ki) {
    if (f64) bluestein_mul<double>(total, m, ar, ai, kr, ki);
    else bluestein_mul<float>(total, m, ar, ai, kr, ki);
}

extern "C" void rm_fft_bluestein_out(int f64, size_t total, size_t n, size_t m, const void* ar,
                                     const void* ai, void* xr, void* xi, const void* cr,
                                     const void* ci) {
    if (f64) bluestein_out<double>(total, n, m, ar, ai, xr, xi, cr, ci);
    else bluestein_out<float>(total, n, m, ar, ai, xr, xi, cr, ci);
}

// The op kernels around the transform (src/ops/fft.rs's pre- and post-processing).
extern "C" void rm_fft_op_scale(size_t total, int has_d, float d, const float* inp,
                                float* out) {
    RM_FFT_THREADS(total) thread_op_scale(tid, has_d, d, inp, out);
}

extern "C" void rm_fft_op_real_to_complex(size_t total, const float* inp, float* out) {
    RM_FFT_THREADS(total) thread_op_real_to_complex(tid, inp, out);
}

extern "C" void rm_fft_op_take_half(size_t total, size_t n, size_t half, int has_d, float d,
                                    const float* inp, float* out) {
    RM_FFT_THREADS(total) thread_op_take_half(tid, n, half, has_d, d, inp, out);
}

extern "C" void rm_fft_op_hermitian(size_t total, size_t m, size_t n, const float* inp,
                                    float* out) {
    RM_FFT_THREADS(total) thread_op_hermitian(tid, m, n, inp, out);
}

extern "C" void rm_fft_op_real_part(size_t total, int has_d, float d, const float* inp,
                                    float* out) {
    RM_FFT_THREADS(total) thread_op_real_part(tid, has_d, d, inp, out);
}
