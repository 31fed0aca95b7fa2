// The CUDA built-ins that candle-repro's kernels use, for the emulated device: every
// kernels/*/*.cu is compiled as plain host C++ with this header force-included (build.rs), so
// the emulator runs the very text nvcc compiles. What the kernel sees:
//   threadIdx/blockIdx/blockDim/gridDim   the running emulated thread's coordinates;
//   __shared__                            one copy per block in flight (static thread_local:
//                                         a block's threads all run on one OS thread);
//   __syncthreads()                       a real barrier: the thread stops until every thread
//                                         of its block reaches the same __syncthreads (same
//                                         file and line); a thread that exits or waits at
//                                         another barrier instead is an error;
//   __shfl*_sync, __ballot/__all/__any_sync   warp collectives: every lane of the mask must
//                                         arrive at the same call; an exited or missing lane
//                                         is an error;
//   atomicAdd/Max/Min/CAS/Exch            read-modify-write (the block's threads never run
//                                         at the same time, so these are atomic);
//   __trap()                              an error.
// The fiber scheduler, the checks and mma.sync live in src/runtime.cpp.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define REPRO_EMULATED_DEVICE 1

// build.rs preprocesses each kernels/*/*.cu once with REPRO_EMU_SCAN to list its kernels.
#if defined(REPRO_EMU_SCAN)
#define __global__ __repro_emu_kernel__
#else
#define __global__
#endif
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __restrict__ __restrict

struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
};

namespace repro_emu {

struct Coords {
    uint3 thread_idx;
    uint3 block_idx;
    dim3 block_dim;
    dim3 grid_dim;
};

// The running emulated thread (set by the scheduler before every switch into a thread).
extern thread_local const Coords* current;

void syncthreads(const char* file, int line);
void trap(const char* file, int line);
// A warp collective: this lane contributes `value` (and `arg`: the source lane for a
// shuffle); returns the lane's result once every lane of `mask` has arrived.
enum class WarpOp : int { ShflIdx, ShflXor, ShflDown, ShflUp, Ballot, All, Any };
uint64_t warp_collective(WarpOp op, unsigned mask, uint64_t value, int arg, int width,
                         const char* file, int line);
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 for the calling lane's fragments.
void mma_m16n8k16_bf16_f32(const uint32_t a[4], const uint32_t b[2], const float c[4],
                           float d[4], const char* file, int line);

template <class T>
inline uint64_t to_raw(T v) {
    static_assert(sizeof(T) <= 8, "warp shuffles move at most 64 bits");
    uint64_t r = 0;
    memcpy(&r, &v, sizeof(T));
    return r;
}
template <class T>
inline T from_raw(uint64_t r) {
    T v;
    memcpy(&v, &r, sizeof(T));
    return v;
}

}  // namespace repro_emu

#define threadIdx (repro_emu::current->thread_idx)
#define blockIdx (repro_emu::current->block_idx)
#define blockDim (repro_emu::current->block_dim)
#define gridDim (repro_emu::current->grid_dim)
#define warpSize 32

#define __syncthreads() repro_emu::syncthreads(__FILE__, __LINE__)
#define __trap() repro_emu::trap(__FILE__, __LINE__)

#define REPRO_EMU_SHFL(OP, mask, v, arg, width)                                                \
    repro_emu::from_raw<decltype(v)>(repro_emu::warp_collective(                              \
        repro_emu::WarpOp::OP, (mask), repro_emu::to_raw(v), (int)(arg), (int)(width),         \
        __FILE__, __LINE__))
#define REPRO_EMU_WIDTH(...) REPRO_EMU_WIDTH_(__VA_ARGS__, 32, 0)
#define REPRO_EMU_WIDTH_(m, v, a, w, ...) w
#define __shfl_sync(m, v, a, ...) REPRO_EMU_SHFL(ShflIdx, m, v, a, REPRO_EMU_WIDTH(m, v, a, ##__VA_ARGS__))
#define __shfl_xor_sync(m, v, a, ...) REPRO_EMU_SHFL(ShflXor, m, v, a, REPRO_EMU_WIDTH(m, v, a, ##__VA_ARGS__))
#define __shfl_down_sync(m, v, a, ...) REPRO_EMU_SHFL(ShflDown, m, v, a, REPRO_EMU_WIDTH(m, v, a, ##__VA_ARGS__))
#define __shfl_up_sync(m, v, a, ...) REPRO_EMU_SHFL(ShflUp, m, v, a, REPRO_EMU_WIDTH(m, v, a, ##__VA_ARGS__))
#define __ballot_sync(m, p)                                                                      \
    ((unsigned)repro_emu::warp_collective(repro_emu::WarpOp::Ballot, (m), (p) ? 1 : 0, 0, 32,  \
                                          __FILE__, __LINE__))
#define __all_sync(m, p)                                                                         \
    ((int)repro_emu::warp_collective(repro_emu::WarpOp::All, (m), (p) ? 1 : 0, 0, 32,          \
                                     __FILE__, __LINE__))
#define __any_sync(m, p)                                                                         \
    ((int)repro_emu::warp_collective(repro_emu::WarpOp::Any, (m), (p) ? 1 : 0, 0, 32,          \
                                     __FILE__, __LINE__))
#define REPRO_EMU_MMA_M16N8K16_BF16(a, b, c, d) \
    repro_emu::mma_m16n8k16_bf16_f32((a), (b), (c), (d), __FILE__, __LINE__)

template <class T>
inline T atomicAdd(T* p, T v) {
    T old = *p;
    *p = old + v;
    return old;
}
template <class T>
inline T atomicMax(T* p, T v) {
    T old = *p;
    *p = old < v ? v : old;
    return old;
}
template <class T>
inline T atomicMin(T* p, T v) {
    T old = *p;
    *p = v < old ? v : old;
    return old;
}
template <class T>
inline T atomicExch(T* p, T v) {
    T old = *p;
    *p = v;
    return old;
}
template <class T>
inline T atomicCAS(T* p, T compare, T v) {
    T old = *p;
    if (old == compare) *p = v;
    return old;
}
