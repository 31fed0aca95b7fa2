// Kernels with the defects the emulated device must report (tests/emulated_device.rs,
// `emulator_reports_*`), and one correct use of each collective. Not part of the crate's
// kernels: compiled only into the emulator, as module "selftest".
#include <stdint.h>

// Thread 0 skips the barrier the others wait at.
extern "C" __global__ void selftest_divergent_barrier(int* out) {
    if (threadIdx.x != 0) {
        __syncthreads();
    }
    out[threadIdx.x] = 1;
}

// Two halves of the block wait at two different barriers.
extern "C" __global__ void selftest_split_barrier(int* out) {
    if (threadIdx.x < 16) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    out[threadIdx.x] = 1;
}

// Lane 31 exits before the full-warp shuffle the others wait in.
extern "C" __global__ void selftest_shuffle_exited_lane(int* out) {
    if (threadIdx.x == 31) return;
    out[threadIdx.x] = __shfl_sync(0xFFFFFFFFu, (int)threadIdx.x, 0);
}

// Deep recursion: each frame touches its 1 KiB, so the stack grows page by page into its
// guard page (2 MiB in all, past a 256 KiB fiber stack). Thread 1 alone recurses, after
// thread 0 has run, so a reused (pooled) stack is what overflows.
__device__ int selftest_recurse(int depth) {
    volatile char frame[1024];
    frame[0] = (char)depth;
    frame[1023] = (char)depth;
    if (depth == 0) return frame[0];
    return selftest_recurse(depth - 1) + frame[1023];
}

extern "C" __global__ void selftest_stack_overflow(int* out) {
    out[threadIdx.x] = threadIdx.x == 1 ? selftest_recurse(2048) : 1;
}

// A shuffle over half the warp that reads a lane outside its mask.
extern "C" __global__ void selftest_shuffle_outside_mask(int* out) {
    if (threadIdx.x < 16) {
        out[threadIdx.x] = __shfl_sync(0x0000FFFFu, (int)threadIdx.x, 20);
    }
}

// Correct collectives: a block sum through shared memory and barriers, a warp rotation,
// xor butterfly sums and a ballot. out[t] = block sum, out[32 + t] = lane (t + 1) % 32,
// out[64 + t] = warp sum, out[96 + t] = ballot of odd lanes.
extern "C" __global__ void selftest_collectives(int* out) {
    __shared__ int s[32];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    for (int w = 16; w > 0; w /= 2) {
        if (t < w) s[t] += s[t + w];
        __syncthreads();
    }
    out[t] = s[0];
    out[32 + t] = __shfl_sync(0xFFFFFFFFu, t, (t + 1) % 32);
    int v = t;
    for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, m);
    out[64 + t] = v;
    out[96 + t] = (int)__ballot_sync(0xFFFFFFFFu, t & 1);
}

// One m16n8k16 bf16 product from row-major A (16 x 16) and B (16 x 8) in global memory,
// fragments gathered by the PTX ISA's layout, D stored row-major (16 x 8).
extern "C" __global__ void selftest_mma(const uint16_t* a, const uint16_t* b, float* d) {
    int lane = threadIdx.x, g = lane >> 2, q = lane & 3;
    uint32_t af[4], bf[2];
    for (int r = 0; r < 4; r++) {
        int row = g + 8 * (r % 2), col = 2 * q + 8 * (r / 2);
        af[r] = (uint32_t)a[row * 16 + col] | ((uint32_t)a[row * 16 + col + 1] << 16);
    }
    for (int r = 0; r < 2; r++) {
        int k = 2 * q + 8 * r;
        bf[r] = (uint32_t)b[k * 8 + g] | ((uint32_t)b[(k + 1) * 8 + g] << 16);
    }
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f}, dd[4];
    REPRO_EMU_MMA_M16N8K16_BF16(af, bf, c, dd);
    for (int r = 0; r < 4; r++) d[(g + 8 * (r / 2)) * 8 + 2 * q + (r % 2)] = dd[r];
}
