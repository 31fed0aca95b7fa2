// Elementwise kernels: thin index loops over the device math (math/all.cuh).
//
// One kernel per function and format, named repro_<fn>_<f32|bf16|f16>, with candle's unary
// kernel arguments: (numel, num_dims, info, inp, out), where info is null for a contiguous
// input and otherwise holds num_dims dims followed by num_dims strides (in elements) of the
// input; `inp` already points at the layout's start offset. The output is contiguous.
// bf16 and f16 values are handled as their 16-bit patterns.
#include "math/all.cuh"
#include "math/grad.cuh"

// Launch with at most this many threads per block (the host side uses exactly this).
#define REPRO_BLOCK 256

namespace {

__device__ __forceinline__ bool strides_contiguous(size_t num_dims, const size_t* dims,
                                                   const size_t* strides) {
    size_t acc = 1;
    for (size_t d = 0; d < num_dims; d++) {
        size_t i = num_dims - 1 - d;
        if (dims[i] != 1 && strides[i] != acc) {
            return false;
        }
        acc *= dims[i];
    }
    return true;
}

__device__ __forceinline__ size_t strided_offset(size_t idx, size_t num_dims, const size_t* dims,
                                                 const size_t* strides) {
    size_t off = 0;
    for (size_t d = 0; d < num_dims; d++) {
        size_t i = num_dims - 1 - d;
        off += (idx % dims[i]) * strides[i];
        idx /= dims[i];
    }
    return off;
}

template <class U, class F>
__device__ __forceinline__ void unary_loop(size_t numel, size_t num_dims, const size_t* info,
                                           const typename F::T* inp, typename F::T* out) {
    const size_t* dims = info;
    const size_t* strides = info + num_dims;
    bool contiguous = info == nullptr || strides_contiguous(num_dims, dims, strides);
    size_t step = (size_t)blockDim.x * gridDim.x;
    if (contiguous) {
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += step) {
            out[i] = repro::eval_stored<U, F>(inp[i]);
        }
    } else {
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += step) {
            out[i] = repro::eval_stored<U, F>(inp[strided_offset(i, num_dims, dims, strides)]);
        }
    }
}

}  // namespace

#define REPRO_UNARY_KERNEL(NAME, FN, FMT, SUFFIX)                                             \
    extern "C" __global__ void __launch_bounds__(REPRO_BLOCK)                                 \
        repro_##NAME##_##SUFFIX(const size_t numel, const size_t num_dims, const size_t* info, \
                                const repro::FMT::T* inp, repro::FMT::T* out) {               \
        unary_loop<repro::FN, repro::FMT>(numel, num_dims, info, inp, out);                   \
    }

#define REPRO_UNARY_ALL_FORMATS(NAME, FN)       \
    REPRO_UNARY_KERNEL(NAME, FN, F32, f32)      \
    REPRO_UNARY_KERNEL(NAME, FN, BF16, bf16)    \
    REPRO_UNARY_KERNEL(NAME, FN, F16, f16)

REPRO_FOR_EACH_UNARY(REPRO_UNARY_ALL_FORMATS)

// softplus with PyTorch's parameters, mirroring SoftplusWith::element in
// src/elementwise/mod.rs: x where beta*x > threshold (f32 product and comparison), the
// correctly rounded softplus when beta == 1, else softplus_f32(beta*x) / beta in f32,
// rounded once more to the format.
template <class F>
__device__ __forceinline__ typename F::T softplus_with_element(float beta, float threshold,
                                                               typename F::T x) {
    float xf = F::to_f32(x);
    float bx = beta * xf;
    if (bx > threshold) {
        return x;
    } else if (beta == 1.0f) {
        return repro::eval<repro::Softplus, F>(xf);
    } else {
        return F::round((double)(repro::eval<repro::Softplus, repro::F32>(bx) / beta));
    }
}

template <class F>
__device__ __forceinline__ void softplus_with_loop(size_t numel, size_t num_dims,
                                                   const size_t* info, float beta,
                                                   float threshold, const typename F::T* inp,
                                                   typename F::T* out) {
    const size_t* dims = info;
    const size_t* strides = info + num_dims;
    bool contiguous = info == nullptr || strides_contiguous(num_dims, dims, strides);
    size_t step = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += step) {
        size_t src = contiguous ? i : strided_offset(i, num_dims, dims, strides);
        out[i] = softplus_with_element<F>(beta, threshold, inp[src]);
    }
}

#define REPRO_SOFTPLUS_WITH_KERNEL(FMT, SUFFIX)                                                  \
    extern "C" __global__ void __launch_bounds__(REPRO_BLOCK) repro_softplus_with_##SUFFIX(      \
        const size_t numel, const size_t num_dims, const size_t* info, const float beta,         \
        const float threshold, const repro::FMT::T* inp, repro::FMT::T* out) {                   \
        softplus_with_loop<repro::FMT>(numel, num_dims, info, beta, threshold, inp, out);        \
    }

REPRO_SOFTPLUS_WITH_KERNEL(F32, f32)
REPRO_SOFTPLUS_WITH_KERNEL(BF16, bf16)
REPRO_SOFTPLUS_WITH_KERNEL(F16, f16)

// Backward passes (src/elementwise/cuda.rs, unary_backward and softplus_with_backward, launches them;
// the definition is core/src/math/grad.rs, mirrored by math/grad.cuh): repro_<fn>_bwd_<fmt>
// (count, x, g, out) and repro_softplus_with_bwd_<fmt>(count, beta, threshold, x, g, out)
// over contiguous operands (the host gathers strided ones first), 64-bit grid-stride loops.
template <class U, class F>
__device__ __forceinline__ void unary_bwd_loop(uint64_t count, const typename F::T* x,
                                               const typename F::T* g, typename F::T* out) {
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (uint64_t)gridDim.x * blockDim.x) {
        out[e] = repro::grad_stored<U, F>(x[e], g[e]);
    }
}

#define REPRO_UNARY_BWD_KERNEL(NAME, FN, FMT, SUFFIX)                                        \
    extern "C" __global__ void __launch_bounds__(REPRO_BLOCK) repro_##NAME##_bwd_##SUFFIX(   \
        const uint64_t count, const repro::FMT::T* x, const repro::FMT::T* g,                \
        repro::FMT::T* out) {                                                                \
        unary_bwd_loop<repro::FN, repro::FMT>(count, x, g, out);                             \
    }

#define REPRO_UNARY_BWD_ALL_FORMATS(NAME, FN)    \
    REPRO_UNARY_BWD_KERNEL(NAME, FN, F32, f32)   \
    REPRO_UNARY_BWD_KERNEL(NAME, FN, BF16, bf16) \
    REPRO_UNARY_BWD_KERNEL(NAME, FN, F16, f16)

REPRO_FOR_EACH_UNARY(REPRO_UNARY_BWD_ALL_FORMATS)

template <class F>
__device__ __forceinline__ void softplus_with_bwd_loop(uint64_t count, float beta,
                                                       float threshold, const typename F::T* x,
                                                       const typename F::T* g,
                                                       typename F::T* out) {
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (uint64_t)gridDim.x * blockDim.x) {
        repro::m_grad::Factor f = repro::softplus_with_factor(beta, threshold, F::to_f32(x[e]));
        out[e] = repro::apply_factor<F>(f, (double)F::to_f32(g[e]));
    }
}

#define REPRO_SOFTPLUS_WITH_BWD_KERNEL(FMT, SUFFIX)                                             \
    extern "C" __global__ void __launch_bounds__(REPRO_BLOCK) repro_softplus_with_bwd_##SUFFIX( \
        const uint64_t count, const float beta, const float threshold, const repro::FMT::T* x,  \
        const repro::FMT::T* g, repro::FMT::T* out) {                                           \
        softplus_with_bwd_loop<repro::FMT>(count, beta, threshold, x, g, out);                  \
    }

REPRO_SOFTPLUS_WITH_BWD_KERNEL(F32, f32)
REPRO_SOFTPLUS_WITH_BWD_KERNEL(BF16, bf16)
REPRO_SOFTPLUS_WITH_BWD_KERNEL(F16, f16)
