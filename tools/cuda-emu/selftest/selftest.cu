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
    REPRO_SHARED(int, s, [32]);
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

// One m16n8k16 bf16 mma on fragments given as they are: lane l's registers a[4 l + r],
// b[2 l + r], c[4 l + r], its D registers to d[4 l + r]. No layout here: the test packs
// and unpacks the fragments with its own table.
extern "C" __global__ void selftest_mma_bf16(const uint32_t* a, const uint32_t* b,
                                             const float* c, float* d) {
    int l = threadIdx.x;
    uint32_t af[4], bf[2];
    float cf[4], df[4];
    for (int r = 0; r < 4; r++) af[r] = a[4 * l + r];
    for (int r = 0; r < 2; r++) bf[r] = b[2 * l + r];
    for (int r = 0; r < 4; r++) cf[r] = c[4 * l + r];
    REPRO_EMU_MMA_M16N8K16_BF16(af, bf, cf, df);
    for (int r = 0; r < 4; r++) d[4 * l + r] = df[r];
}

// The same for m16n8k32 s8 -> s32.
extern "C" __global__ void selftest_mma_s8(const uint32_t* a, const uint32_t* b,
                                           const int32_t* c, int32_t* d) {
    int l = threadIdx.x;
    uint32_t af[4], bf[2];
    int32_t cf[4], df[4];
    for (int r = 0; r < 4; r++) af[r] = a[4 * l + r];
    for (int r = 0; r < 2; r++) bf[r] = b[2 * l + r];
    for (int r = 0; r < 4; r++) cf[r] = c[4 * l + r];
    REPRO_EMU_MMA_M16N8K32_S8(af, bf, cf, df);
    for (int r = 0; r < 4; r++) d[4 * l + r] = df[r];
}

// Shuffles whose lane operand lies outside 0..31 or whose width splits the warp:
// out[32 k + lane] for case k (tests/emulated_device.rs has the PTX ISA's answers).
extern "C" __global__ void selftest_shuffle_lanes(int* out) {
    int t = threadIdx.x, v = 100 + t;
    const unsigned all = 0xFFFFFFFFu;
    out[0 * 32 + t] = __shfl_down_sync(all, v, 33);
    out[1 * 32 + t] = __shfl_sync(all, v, -1);
    out[2 * 32 + t] = __shfl_xor_sync(all, v, 33);
    out[3 * 32 + t] = __shfl_up_sync(all, v, 33, 8);
    out[4 * 32 + t] = __shfl_sync(all, v, 9, 8);
    out[5 * 32 + t] = __shfl_xor_sync(all, v, 8, 8);
    out[6 * 32 + t] = __shfl_down_sync(all, v, -1);
    out[7 * 32 + t] = __shfl_up_sync(all, v, 3, 16);
    out[8 * 32 + t] = __shfl_down_sync(all, v, 5, 16);
    out[9 * 32 + t] = __shfl_sync(all, v, t - 41, 4);
}

// A tree sum that misses the barrier between its steps: thread t reads s[t + w], which
// thread t + w writes in the same interval.
extern "C" __global__ void selftest_missing_barrier(int* out) {
    REPRO_SHARED(int, s, [32]);
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    for (int w = 16; w > 0; w /= 2) {
        if (t < w) s[t] += s[t + w];
    }
    __syncthreads();
    out[t] = s[0];
}

// Block 0 alone fills the shared array; every block reads it (thread-local statics kept
// block 0's values for the next block on this emulator before; a GPU does not).
extern "C" __global__ void selftest_shared_from_previous_block(int* out) {
    REPRO_SHARED(int, s, [32]);
    int t = threadIdx.x;
    if (blockIdx.x == 0) s[t] = t;
    __syncthreads();
    out[blockIdx.x * 32 + t] = s[t];
}

// Reads an input no one has written.
extern "C" __global__ void selftest_read_unwritten(const int* in, int* out) {
    out[threadIdx.x] = in[threadIdx.x] + 1;
}

// Writes one element before its output.
extern "C" __global__ void selftest_write_before(int* out) {
    int t = threadIdx.x;
    out[t - 1] = t;
}

// Three threads add 1, 1e8 and -1e8 to one float: the sum depends on their order (0 in
// index order, 1 in reverse order), though every order "works".
extern "C" __global__ void selftest_order_dependent(float* out) {
    int t = threadIdx.x;
    float v = t == 0 ? 1.0f : t == 1 ? 1.0e8f : t == 2 ? -1.0e8f : 0.0f;
    atomicAdd(out, v);
}

// Every block writes its index to out[0]: the last block wins, whichever it is.
extern "C" __global__ void selftest_block_order_dependent(int* out) {
    if (threadIdx.x == 0) out[0] = (int)blockIdx.x;
}

// A warp-synchronous exchange through shared memory, ordered by a warp collective: lane t
// writes s[t], the ballot orders the warp, lane t reads s[t ^ 1]. Not a race.
extern "C" __global__ void selftest_warp_ordered_shared(int* out) {
    REPRO_SHARED(int, s, [32]);
    int t = threadIdx.x;
    s[t] = 10 * t;
    unsigned seen = __ballot_sync(0xFFFFFFFFu, 1);
    out[t] = s[t ^ 1] + (seen == 0xFFFFFFFFu ? 0 : 1000);
}

// An m16n8k16 whose sum is not exact in f32: 2^24 + 1 in row 0 (A[0][0] = 2^24, A[0][1] = 1,
// B[0][n] = B[1][n] = 1 for every column n).
extern "C" __global__ void selftest_mma_inexact(float* d) {
    int l = threadIdx.x, g = l >> 2, q = l & 3;
    uint32_t af[4] = {0, 0, 0, 0}, bf[2] = {0, 0};
    if (g == 0 && q == 0) af[0] = 0x4B800000u >> 16 | 0x3F800000u;  // 2^24 | 1.0 << 16
    if (q == 0) bf[0] = 0x3F80u | (0x3F80u << 16);                   // B[0][g] = B[1][g] = 1
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f}, dd[4];
    REPRO_EMU_MMA_M16N8K16_BF16(af, bf, c, dd);
    for (int r = 0; r < 4; r++) d[4 * l + r] = dd[r];
}
