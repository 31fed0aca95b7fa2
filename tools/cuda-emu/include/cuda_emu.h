// The CUDA built-ins that candle-repro's kernels use, for the emulated device: every
// kernels/*/*.cu is compiled as plain host C++ with this header force-included (build.rs), so
// the emulator runs the very text nvcc compiles. What the kernel sees:
//   threadIdx/blockIdx/blockDim/gridDim   the running emulated thread's coordinates;
//   REPRO_SHARED(T, name, [dims])         `__shared__ T name[dims]` (kernels/math/common.cuh
//                                         defines it so for nvcc): here a reference into the
//                                         launch's shared arena (48 KiB, the static limit),
//                                         variables apart by red zones, poisoned (0xFF) at
//                                         every block start; every access is checked (below).
//                                         A bare `__shared__` does not compile here, so no
//                                         shared variable escapes the checks;
//   __syncthreads()                       a real barrier: the thread stops until every thread
//                                         of its block reaches the same __syncthreads (same
//                                         file and line); a thread that exits or waits at
//                                         another barrier instead is an error;
//   __shfl*_sync, __ballot/__all/__any_sync   warp collectives: every lane of the mask must
//                                         arrive at the same call; an exited or missing lane
//                                         is an error; the source lane follows the PTX ISA's
//                                         shfl.sync arithmetic (lane operand's low 5 bits,
//                                         the clamp value CUDA's headers pass per width);
//   atomicAdd/Max/Min/CAS/Exch            read-modify-write (the block's threads never run
//                                         at the same time, so these are atomic; exempt from
//                                         the race check);
//   __trap()                              an error.
// Every load and store of the kernel code is seen by the runtime: the module units are
// compiled with -fsanitize=thread, whose __tsan_read/__tsan_write callbacks src/runtime.cpp
// defines (no sanitizer runtime is linked). Shared memory: a read of a byte this block has
// not written, and two threads of a block touching one byte in one barrier interval (one
// of them writing; only a warp collective of both lanes in between orders them) are
// errors. Device buffers: a read of a byte never written since allocation, and any access
// in the guard zones before and after the buffer, are errors.
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
// Kernels declare shared memory with REPRO_SHARED (see above); a bare __shared__ is an error.
#define __shared__ repro_emu_use_REPRO_SHARED_for_shared_memory
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
extern thread_local const Coords* current __attribute__((tls_model("initial-exec")));

// One REPRO_SHARED declaration (one per template instantiation: a function-local static).
struct SharedDecl {
    const char* name;
    size_t bytes;
    size_t align;
    const char* file;
    int line;
};
// The declaration's storage for the running launch (the same for every block).
void* shared_var(const SharedDecl* decl);
// Around the emulated atomics: their accesses are not races.
void atomic_begin();
void atomic_end();

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
// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 for the calling lane's fragments.
void mma_m16n8k32_s8_s32(const uint32_t a[4], const uint32_t b[2], const int32_t c[4],
                         int32_t d[4], const char* file, int line);

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
#define REPRO_EMU_MMA_M16N8K32_S8(a, b, c, d) \
    repro_emu::mma_m16n8k32_s8_s32((a), (b), (c), (d), __FILE__, __LINE__)

// `__shared__ T name dims`: a reference to the launch's storage for this declaration.
#define REPRO_SHARED(T, name, dims)                                                         \
    typedef T repro_emu_shared_type_##name dims;                                            \
    static const repro_emu::SharedDecl repro_emu_shared_decl_##name = {                     \
        #name, sizeof(repro_emu_shared_type_##name), alignof(repro_emu_shared_type_##name), \
        __FILE__, __LINE__};                                                                \
    repro_emu_shared_type_##name& name = *static_cast<repro_emu_shared_type_##name*>(       \
        repro_emu::shared_var(&repro_emu_shared_decl_##name))

template <class T>
inline T atomicAdd(T* p, T v) {
    repro_emu::atomic_begin();
    T old = *p;
    *p = old + v;
    repro_emu::atomic_end();
    return old;
}
template <class T>
inline T atomicMax(T* p, T v) {
    repro_emu::atomic_begin();
    T old = *p;
    *p = old < v ? v : old;
    repro_emu::atomic_end();
    return old;
}
template <class T>
inline T atomicMin(T* p, T v) {
    repro_emu::atomic_begin();
    T old = *p;
    *p = v < old ? v : old;
    repro_emu::atomic_end();
    return old;
}
template <class T>
inline T atomicExch(T* p, T v) {
    repro_emu::atomic_begin();
    T old = *p;
    *p = v;
    repro_emu::atomic_end();
    return old;
}
template <class T>
inline T atomicCAS(T* p, T compare, T v) {
    repro_emu::atomic_begin();
    T old = *p;
    if (old == compare) *p = v;
    repro_emu::atomic_end();
    return old;
}
