// The deterministic complex FFT on CUDA (src/fft/cuda.rs launches these), bit for bit the
// CPU's src/fft: the per-thread bodies are kernels/fft/threads.cuh over the mirrored
// operation DAGs of kernels/fft/*.cuh, and the twiddle, chirp, Bluestein kernel and Ozaki
// digit tables are the CPU plan's own (src/fft/device_plan.rs, uploaded as the same bytes;
// nothing here computes a twiddle). Every kernel is a grid-stride loop over `total` thread
// indices, each independent of the others, so the grid size, the block size and the
// schedule change no bit. tests/emulated_device.rs runs these kernels on the emulated device
// against the CPU plans.
//
// Kernels, <t> = f32 (Precision::F32 and Ozaki) or f64 (Precision::F64Internal), buffers as
// split (re, im) rows of the working type:
//   repro_fft_deinterleave_<t>(total, inverse, inp, re, im)         total = rows n
//   repro_fft_interleave_<t>(total, inverse, re, im, out)           total = rows n
//   repro_fft_stockham<R>_<t>(total, len, ns, src_re, src_im, dst_re, dst_im, tw_re, tw_im)
//                                                                   R = 2, 4, 8; total = rows len / R
//   repro_fft_stockham8_ozaki(total, len, ns, src.., dst.., tw.., w8_digits)
//   repro_fft_gemm_<t>(total, n, x_re, x_im, out_re, out_im, w_re, w_im)   total = rows n
//   repro_fft_gemm_ozaki(total, n, x_re, x_im, out_re, out_im, digits)     total = rows 2n
//   repro_fft_bluestein_in_<t>(total, n, m, x_re, x_im, a_re, a_im, chirp_re, chirp_im)
//   repro_fft_bluestein_mul_<t>(total, m, a_re, a_im, k_re, k_im)
//   repro_fft_bluestein_out_<t>(total, n, m, a_re, a_im, x_re, x_im, chirp_re, chirp_im)
#include "fft/threads.cuh"
#include "fft/ozaki_mma.cuh"

#define REPRO_FFT_BLOCK 256

#define RM_FFT_LOOP(total)                                                              \
    for (size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x; tid < (total);    \
         tid += (size_t)gridDim.x * blockDim.x)

using namespace repro::fft;

#define RM_FFT_TYPED(T, SUF)                                                                \
    extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)                           \
        repro_fft_deinterleave_##SUF(size_t total, int inverse, const float* inp, T* re,    \
                                     T* im) {                                               \
        RM_FFT_LOOP(total) thread_deinterleave<T>(tid, inverse, inp, re, im);               \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)                           \
        repro_fft_interleave_##SUF(size_t total, int inverse, const T* re, const T* im,     \
                                   float* out) {                                            \
        RM_FFT_LOOP(total) thread_interleave<T>(tid, inverse, re, im, out);                 \
    }                                                                                       \
    RM_FFT_STAGE(T, SUF, 2)                                                                 \
    RM_FFT_STAGE(T, SUF, 4)                                                                 \
    RM_FFT_STAGE(T, SUF, 8)                                                                 \
    extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)                           \
        repro_fft_gemm_##SUF(size_t total, int n, const T* x_re, const T* x_im, T* out_re,  \
                             T* out_im, const T* w_re, const T* w_im) {                     \
        RM_FFT_LOOP(total) thread_gemm<T>(tid, n, x_re, x_im, out_re, out_im, w_re, w_im);  \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)                           \
        repro_fft_bluestein_in_##SUF(size_t total, size_t n, size_t m, const T* x_re,       \
                                     const T* x_im, T* a_re, T* a_im, const T* chirp_re,    \
                                     const T* chirp_im) {                                   \
        RM_FFT_LOOP(total)                                                                  \
        thread_bluestein_in<T>(tid, n, m, x_re, x_im, a_re, a_im, chirp_re, chirp_im);      \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)                           \
        repro_fft_bluestein_mul_##SUF(size_t total, size_t m, T* a_re, T* a_im,             \
                                      const T* k_re, const T* k_im) {                       \
        RM_FFT_LOOP(total) thread_bluestein_mul<T>(tid, m, a_re, a_im, k_re, k_im);         \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)                           \
        repro_fft_bluestein_out_##SUF(size_t total, size_t n, size_t m, const T* a_re,      \
                                      const T* a_im, T* x_re, T* x_im, const T* chirp_re,   \
                                      const T* chirp_im) {                                  \
        RM_FFT_LOOP(total)                                                                  \
        thread_bluestein_out<T>(tid, n, m, a_re, a_im, x_re, x_im, chirp_re, chirp_im);     \
    }

#define RM_FFT_STAGE(T, SUF, R)                                                              \
    extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)                            \
        repro_fft_stockham##R##_##SUF(size_t total, size_t len, size_t ns, const T* src_re,  \
                                      const T* src_im, T* dst_re, T* dst_im,                 \
                                      const T* tw_re, const T* tw_im) {                      \
        RM_FFT_LOOP(total)                                                                   \
        thread_stockham<T, R>(tid, len, ns, src_re, src_im, dst_re, dst_im, tw_re, tw_im);   \
    }

RM_FFT_TYPED(float, f32)
RM_FFT_TYPED(double, f64)

extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)
    repro_fft_stockham8_ozaki(size_t total, size_t len, size_t ns, const float* src_re,
                              const float* src_im, float* dst_re, float* dst_im,
                              const float* tw_re, const float* tw_im, const float* w8_digits) {
    RM_FFT_LOOP(total)
    thread_stockham8_ozaki(tid, len, ns, src_re, src_im, dst_re, dst_im, tw_re, tw_im,
                           w8_digits);
}

extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)
    repro_fft_gemm_ozaki(size_t total, int n, const float* x_re, const float* x_im,
                         float* out_re, float* out_im, const float* digits) {
    RM_FFT_LOOP(total) thread_gemm_ozaki(tid, n, x_re, x_im, out_re, out_im, digits);
}

// The candle ops around the transform (src/ops/fft.rs; see threads.cuh):
//   repro_fft_op_scale(total, has_d, d, inp, out)             total = 2 rows n
//   repro_fft_op_real_to_complex(total, inp, out)             total = rows n
//   repro_fft_op_take_half(total, n, half, has_d, d, inp, out) total = rows half
//   repro_fft_op_hermitian(total, m, n, inp, out)             total = rows n
//   repro_fft_op_real_part(total, has_d, d, inp, out)         total = rows n
extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)
    repro_fft_op_scale(size_t total, int has_d, float d, const float* inp, float* out) {
    RM_FFT_LOOP(total) thread_op_scale(tid, has_d, d, inp, out);
}

extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)
    repro_fft_op_real_to_complex(size_t total, const float* inp, float* out) {
    RM_FFT_LOOP(total) thread_op_real_to_complex(tid, inp, out);
}

extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)
    repro_fft_op_take_half(size_t total, size_t n, size_t half, int has_d, float d,
                           const float* inp, float* out) {
    RM_FFT_LOOP(total) thread_op_take_half(tid, n, half, has_d, d, inp, out);
}

extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)
    repro_fft_op_hermitian(size_t total, size_t m, size_t n, const float* inp, float* out) {
    RM_FFT_LOOP(total) thread_op_hermitian(tid, m, n, inp, out);
}

extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)
    repro_fft_op_real_part(size_t total, int has_d, float d, const float* inp, float* out) {
    RM_FFT_LOOP(total) thread_op_real_part(tid, has_d, d, inp, out);
}

// The tensor-core variant of repro_fft_stockham8_ozaki (fft/ozaki_mma.cuh; UNVERIFIED on
// hardware, launched only when src/fft/cuda.rs's OZAKI_MMA is set): same arguments, one
// warp per 8 butterflies, grid-stride over groups of 8 (warp-uniform loop: mma.sync needs
// the whole warp).
extern "C" __global__ void __launch_bounds__(REPRO_FFT_BLOCK)
    repro_fft_stockham8_ozaki_mma(size_t total, size_t len, size_t ns, const float* src_re,
                                  const float* src_im, float* dst_re, float* dst_im,
                                  const float* tw_re, const float* tw_im,
                                  const float* w8_digits) {
    size_t groups = (total + 7) / 8;
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    for (size_t group = warp; group < groups; group += warps) {
        warp_stockham8_ozaki_mma(group, total, len, ns, src_re, src_im, dst_re, dst_im, tw_re,
                                 tw_im, w8_digits);
    }
}
