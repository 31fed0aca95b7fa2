// Copies of strided device tensors into contiguous buffers with 64-bit indices (candle's
// own strided copy computes offsets in 32 bits): src/launch/gather.rs launches these.
//
// Kernels (by element size: u8, u16, u32, u64):
//   repro_gather_<size>(count, src, base, rank, dims_strides, out): out[e] = src[base +
//   the strided offset of logical element e] (dims then strides, `rank` of each, the last
//   dimension fastest).
#include <stdint.h>

#define REPRO_GATHER_BLOCK 256

namespace {

template <class T>
__device__ void gather(uint64_t count, const T* src, uint64_t base, uint32_t rank,
                       const uint64_t* dims_strides, T* out) {
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t rest = e, off = base;
        for (uint32_t d = rank; d-- > 0;) {
            uint64_t dim = dims_strides[d];
            off += (rest % dim) * dims_strides[rank + d];
            rest /= dim;
        }
        out[e] = src[off];
    }
}

}  // namespace

#define REPRO_GATHER(name, T)                                                                 \
    extern "C" __global__ void __launch_bounds__(REPRO_GATHER_BLOCK) repro_gather_##name(     \
        uint64_t count, const T* src, uint64_t base, uint32_t rank,                           \
        const uint64_t* dims_strides, T* out) {                                               \
        gather<T>(count, src, base, rank, dims_strides, out);                                 \
    }

REPRO_GATHER(u8, uint8_t)
REPRO_GATHER(u16, uint16_t)
REPRO_GATHER(u32, uint32_t)
REPRO_GATHER(u64, uint64_t)
