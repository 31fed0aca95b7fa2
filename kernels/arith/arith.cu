// Elementwise arithmetic with one rounding (src/arith/mod.rs; src/arith/cuda.rs launches
// these): repro_add_<fmt>(count, a, b, out), contiguous operands: round(f64(a) + f64(b)).
#include "math/round.cuh"

#define REPRO_ARITH_BLOCK 256

namespace {

template <class F>
__device__ void add(uint64_t count, const typename F::T* a, const typename F::T* b,
                    typename F::T* out) {
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (uint64_t)gridDim.x * blockDim.x) {
        out[e] = F::round((double)F::to_f32(a[e]) + (double)F::to_f32(b[e]));
    }
}

}  // namespace

#define REPRO_ADD(name, F)                                                                     \
    extern "C" __global__ void __launch_bounds__(REPRO_ARITH_BLOCK) repro_add_##name(          \
        uint64_t count, const F::T* a, const F::T* b, F::T* out) {                             \
        add<F>(count, a, b, out);                                                              \
    }

REPRO_ADD(f32, repro::F32)
REPRO_ADD(bf16, repro::BF16)
REPRO_ADD(f16, repro::F16)
