// The deterministic complex FFT on CUDA (src/fft/cuda.rs launches these), bit for bit the
// CPU's src/fft: the per-thread bodies are kernels/fft/threads.cuh over the mirrored
// operation DAGs of kernels/fft/*.cuh, and the twiddle, chirp, Bluestein kernel and Ozaki
// digit tables are the CPU plan's own (core/src/fft/device_plan.rs, uploaded as the same bytes;
// nothing here computes a twiddle). Every kernel but the fused one is a grid-stride loop over
// `total` thread indices, each independent of the others, so the grid size, the block size
// and the schedule change no bit; the fused kernel (repro_fft_fused_<t>, below) strides over
// groups of whole rows, its threads ordered by __syncthreads between the stages, and runs
// the same per-butterfly functions on the same values. tests/emulated_device.rs runs these kernels on the emulated device
// against the CPU plans.
//
// Kernels, <t> = f32 (Precision::F32 and Ozaki) or f64 (Precision::F64Internal), buffers as
// split (re, im) rows of the working type:
//   repro_fft_deinterleave_<t>(total, inverse, inp, re, im)         total = rows n
//   repro_fft_interleave_<t>(total, inverse, re, im, out)           total = rows n
//   repro_fft_stockham<R>_<t>(total, len, ns, src_re, src_im, dst_re, dst_im, tw_re, tw_im)
//                                                                   R = 2, 3, 4, 5, 7, 8; total = rows len / R
//   repro_fft_stockham8_ozaki(total, len, ns, src.., dst.., tw.., w8_digits)
//   repro_fft_gemm_<t>(total, n, x_re, x_im, out_re, out_im, w_re, w_im)   total = rows n
//   repro_fft_gemm_ozaki(total, n, x_re, x_im, out_re, out_im, digits)     total = rows 2n
//   repro_fft_bluestein_in_<t>(total, n, m, x_re, x_im, a_re, a_im, chirp_re, chirp_im)
//   repro_fft_bluestein_mul_<t>(total, m, a_re, a_im, k_re, k_im)
//   repro_fft_bluestein_out_<t>(total, n, m, a_re, a_im, x_re, x_im, chirp_re, chirp_im)
//   repro_fft_fused_<t>(rows, n, inverse, inp, out, table, stages, radix/ns/tw x 4)
//                                        a whole Stockham plan per block (see below)
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
    RM_FFT_STAGE(T, SUF, 3)                                                                 \
    RM_FFT_STAGE(T, SUF, 5)                                                                 \
    RM_FFT_STAGE(T, SUF, 7)                                                                 \
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

// ---- The fused transform: a whole power-of-two Stockham plan per block in shared memory ----
//
//   repro_fft_fused_<t>(rows, n, inverse, inp, out, table, stages,
//                       radix0, ns0, tw0, .., radix3, ns3, tw3)  block = max(n, MINB) / 8 threads
//
// One launch does what the steps Deinterleave, Stage x stages, Interleave of a pure Stockham
// plan do in 2 + stages launches (src/fft/cuda.rs fused_stages picks it from the plan, hence
// from n and the precision alone): a block takes max(MINB / n, 1) whole rows (MINB =
// REPRO_FFT_FUSED_BLOCK_F32 = 1024 complex values for float, REPRO_FFT_FUSED_BLOCK_F64 = 512
// for double; n up to CAP = REPRO_FFT_FUSED_F32 = 4096 resp. REPRO_FFT_FUSED_F64 = 2048, the
// shared buffer's size), loads them into shared memory, runs every stage there and stores them; the blocks stride over the
// groups of rows. n (16 ..= CAP, a power of two) selects a compiled instantiation, so the
// index arithmetic is shifts and masks; the plan's stage arguments (radix, ns, twiddle
// offset) are passed as they are, the radices and ns must be the instantiation's (else the
// kernel traps), and the twiddles are read at the plan's offsets.
//
// Why the bits are those of the per-stage kernels (and so the CPU's): every value goes
// through the same functions in the same order: deinterleave_value (thread_deinterleave's
// conversion; the fused load only issues a thread's 8 loads before its 8 conversions) and
// thread_interleave for the load and the store, and per butterfly stockham_load (the same
// source indices, the same table entries tw[(r - 1) ns + j]), dft<T, R> (the same DAG) and
// stockham_store (the same destination indices), compiled with the same flags
// (--fmad=false). Only where the values live between stages changes (shared memory instead
// of global buffers), and which thread runs which butterfly: neither is an arithmetic
// operation.
//
// Shared memory (static; the launch layer has no dynamic shared memory and CUDA's static
// limit is 48 KiB): one split buffer, re[CAP] and im[CAP] of the working type, 32 KiB for
// float (n <= 4096) and for double (n <= 2048). A Stockham stage reads and writes different
// positions, so it cannot run in place butterfly by butterfly; it runs in place in two
// phases instead: every thread reads its butterflies' inputs into registers and transforms
// them, __syncthreads, every thread writes its outputs, __syncthreads. The butterflies of a
// stage read disjoint sets of positions covering the row, and write disjoint sets covering
// it, so after the second barrier the buffer holds exactly what the per-stage kernel's
// destination buffer would. (Ping-pong buffers would need 64 KiB at n = 4096 in float.)
//
// Threads: n / 8 per row, max(n, MINB) / 8 per block (128 to 512 for float, 64 to 256 for
// double). In a radix-8
// stage thread q of a row runs butterfly q; in the radix-4 or radix-2 last stage it runs
// the 8 / R butterflies q + c n / 8 (c < 8 / R): always 8 complex values in registers. The
// load and the store: 8 values per thread, value t + c blockDim.x (coalesced). A block's last
// group may hold fewer rows: the threads of the missing rows only take part in the
// barriers.
#define REPRO_FFT_FUSED_F32 4096
#define REPRO_FFT_FUSED_F64 2048
#define REPRO_FFT_FUSED_BLOCK_F32 1024
#define REPRO_FFT_FUSED_BLOCK_F64 512

// Stage phase 1 of thread q of a row: the inputs of butterflies q + c N / 8, twiddled and
// transformed, into v[c R .. c R + R).
template <class T, int N, int R, int NS, class Map>
RM_FN void fused_stage_in(size_t q, const T* re, const T* im, const T* tw, Cx<T>* v, Map map) {
    const T* tw_re = tw;
    const T* tw_im = tw + (size_t)(R - 1) * NS;
    for (int c = 0; c < 8 / R; c++) {
        size_t i = q + (size_t)c * (N / 8);
        stockham_load<T, R>(i, NS, N / R, re, im, tw_re, tw_im, v + c * R, map);
        dft<T, R>(v + c * R);
    }
}

// Stage phase 2: the outputs of the same butterflies written to their places.
template <class T, int N, int R, int NS, class Map>
RM_FN void fused_stage_out(size_t q, T* re, T* im, const Cx<T>* v, Map map) {
    for (int c = 0; c < 8 / R; c++) {
        size_t i = q + (size_t)c * (N / 8);
        stockham_store<T, R>(i, NS, re, im, v + c * R, map);
    }
}

// The plan's stage arguments (src/fft/cuda.rs fused_launch).
struct FusedStages {
    int count;
    int radix[4];
    size_t ns[4];
    size_t tw[4];
};

// Number of stages of N (the length of stockham.rs radices(N): 8 while 8 remains, then 4
// or 2), and the radix and ns of its stage s.
__host__ __device__ constexpr int fused_stage_count(int n) {
    int s = 0;
    for (int m = n; m > 1; m = m >= 8 ? m / 8 : 1) s++;
    return s;
}
__host__ __device__ constexpr int fused_ns(int n, int s) {
    int ns = 1;
    for (int k = 0; k < s; k++) ns *= n / ns >= 8 ? 8 : n / ns;
    return ns;
}
__host__ __device__ constexpr int fused_radix(int n, int s) {
    int ns = fused_ns(n, s);
    return n / ns >= 8 ? 8 : n / ns;
}

// True when the plan's stages are the ones compiled for N: the kernel runs the Stockham
// rule's radices with n and ns known at compile time (the index arithmetic becomes shifts
// and masks), so a plan with other stages must not run (it traps instead).
template <int N>
__device__ __forceinline__ bool fused_stages_match(const FusedStages& st) {
    constexpr int COUNT = fused_stage_count(N);
    bool ok = st.count == COUNT;
    for (int s = 0; s < 4; s++) {
        if (s < COUNT) {
            ok = ok && st.radix[s] == fused_radix(N, s) && st.ns[s] == (size_t)fused_ns(N, s);
        }
    }
    return ok;
}

// Stage S of a row of N (radix and ns as the plan's, checked above) and the stages after
// it; the twiddles are read at the plan's offset tw[S] of the table. `map`: where position
// o of the row lives in re / im (IdentityIndex, or FusedSwizzle below).
template <class T, int N, int S, class Map = IdentityIndex>
__device__ __forceinline__ void fused_stages(const size_t* tw, bool active, size_t q, T* re,
                                             T* im, const T* table, Map map = Map()) {
    constexpr int R = fused_radix(N, S);
    constexpr int NS = fused_ns(N, S);
    Cx<T> v[8];
    if (active) fused_stage_in<T, N, R, NS>(q, re, im, table + tw[S], v, map);
    __syncthreads();
    if (active) fused_stage_out<T, N, R, NS>(q, re, im, v, map);
    __syncthreads();
    if constexpr (S + 1 < fused_stage_count(N)) {
        fused_stages<T, N, S + 1, Map>(tw, active, q, re, im, table, map);
    }
}

// The block's part of the launch for rows of N (s_re, s_im: the block's shared buffer of
// CAP values, of which it uses BV = max(N, MINB); blockDim.x = BV / 8).
template <class T, int CAP, int MINB, int N>
__device__ __forceinline__ void fused_block(size_t rows, int inverse, const float* inp,
                                            float* out, const T* table, const FusedStages& st,
                                            T* s_re, T* s_im) {
    constexpr int BV = N > MINB ? N : MINB;  // values per block
    static_assert(BV <= CAP, "the block's rows fit the shared buffer");
    constexpr int THREADS = BV / 8;  // = blockDim.x
    constexpr int PER = BV / THREADS;  // values per thread in the load and the store
    constexpr size_t RPB = BV / N;  // rows per block
    if (!fused_stages_match<N>(st) || blockDim.x != THREADS) __trap();
    size_t groups = (rows + RPB - 1) / RPB;
    size_t t = threadIdx.x;
    size_t lrow = t / (N / 8), q = t % (N / 8);
    T* re = s_re + lrow * N;
    T* im = s_im + lrow * N;
    for (size_t g = blockIdx.x; g < groups; g += gridDim.x) {
        size_t row0 = g * RPB;
        size_t here = rows - row0 < RPB ? rows - row0 : RPB;
        size_t count = here * N;
        const float* in_g = inp + 2 * row0 * N;
        float* out_g = out + 2 * row0 * N;
        // thread_deinterleave, with the loads of a thread issued before its stores.
        float a[PER], b[PER];
        for (int c = 0; c < PER; c++) {
            size_t e = t + (size_t)c * THREADS;
            if (e < count) {
                a[c] = in_g[2 * e];
                b[c] = in_g[2 * e + 1];
            }
        }
        for (int c = 0; c < PER; c++) {
            size_t e = t + (size_t)c * THREADS;
            if (e < count) {
                Cx<T> z = deinterleave_value<T>(inverse, a[c], b[c]);
                s_re[e] = z.re;
                s_im[e] = z.im;
            }
        }
        __syncthreads();
        fused_stages<T, N, 0>(st.tw, lrow < here, q, re, im, table);
        for (int c = 0; c < PER; c++) {
            size_t e = t + (size_t)c * THREADS;
            if (e < count) thread_interleave<T>(e, inverse, s_re, s_im, out_g);
        }
        // No barrier before the next group: its load writes, in each thread, the values
        // this thread's store has just read (the same e), and the barrier after the load
        // orders everything else.
    }
}

#define RM_FFT_FUSED_CASE(N)                                                                  \
    case N:                                                                                   \
        fused_block<T, CAP, MINB, N>(rows, inverse, inp, out, table, st, s_re, s_im);         \
        break;

// The kernel: n picks the instantiation (16 ..= CAP); any other n traps.
template <class T, int CAP, int MINB>
__device__ __forceinline__ void fused_kernel(size_t rows, size_t n, int inverse,
                                             const float* inp, float* out, const T* table,
                                             const FusedStages& st, T* s_re, T* s_im) {
    switch (n) {
        RM_FFT_FUSED_CASE(16)
        RM_FFT_FUSED_CASE(32)
        RM_FFT_FUSED_CASE(64)
        RM_FFT_FUSED_CASE(128)
        RM_FFT_FUSED_CASE(256)
        RM_FFT_FUSED_CASE(512)
        RM_FFT_FUSED_CASE(1024)
        RM_FFT_FUSED_CASE(2048)
        case 4096:
            if constexpr (CAP >= 4096) {
                fused_block<T, CAP, MINB, 4096>(rows, inverse, inp, out, table, st, s_re,
                                                s_im);
                break;
            }
        default:
            __trap();
    }
}

// Occupancy: ptxas (CUDA 13, sm_90) gives the float kernel 108 registers and the double one
// 173, no spills (asking for more resident blocks through __launch_bounds__'s second argument
// caps them at 64 / 128 and spills). So that several blocks share an SM, and one block's
// loads overlap another's stages, short rows are grouped into blocks of MINB values only:
// float 1024 (128 threads, 4 blocks per SM by registers), double 512 (64 threads, 5 blocks);
// rows longer than MINB take a block each (up to 512 threads). The static shared buffer is
// CAP values whatever the block uses (32 KiB; 7 blocks per SM fit on an H100). None of this
// changes a bit.
#define RM_FFT_FUSED(T, SUF, CAP, MINB)                                                       \
    extern "C" __global__ void __launch_bounds__(CAP / 8) repro_fft_fused_##SUF(              \
        size_t rows, size_t n, int inverse, const float* __restrict__ inp,                    \
        float* __restrict__ out, const T* __restrict__ table, int stages, int r0, size_t ns0, \
        size_t tw0, int r1, size_t ns1, size_t tw1, int r2, size_t ns2, size_t tw2, int r3,   \
        size_t ns3, size_t tw3) {                                                             \
        REPRO_SHARED(T, s_re, [CAP]);                                                         \
        REPRO_SHARED(T, s_im, [CAP]);                                                         \
        const FusedStages st = {stages, {r0, r1, r2, r3}, {ns0, ns1, ns2, ns3},               \
                                {tw0, tw1, tw2, tw3}};                                        \
        fused_kernel<T, CAP, MINB>(rows, n, inverse, inp, out, table, st, s_re, s_im);        \
    }

RM_FFT_FUSED(float, f32, REPRO_FFT_FUSED_F32, REPRO_FFT_FUSED_BLOCK_F32)
RM_FFT_FUSED(double, f64, REPRO_FFT_FUSED_F64, REPRO_FFT_FUSED_BLOCK_F64)

// ---- The swizzled fused transform (repro_fft_fused_swz_<t>, repro_fft_fused_swzv_<t>,
//      repro_fft_fused_swzv_cap1_<t>, repro_fft_fused_swzv_cap2_<t>) ----
//
// The same kernel as repro_fft_fused_<t> (same block shapes, rows per block, butterflies
// per thread, barriers, and the same functions on the same values in the same order), with
// two address-only changes (and, cap1 / cap2, a register cap: see RM_FFT_MAXNREG);
// src/fft/cuda.rs FusedVariant picks the kernel (the default: swzv; the others stay
// launchable for examples/gpu_report.rs `fft`, which times them interleaved and compares
// their bits).
//
// Why: the shared-memory traffic of repro_fft_fused_<t>, per warp instruction (32 lanes; a
// float access is one wavefront when the 32 lanes hit 32 different banks, a double access
// two, one per half warp, when the 16 lanes of each half hit 16 different 8-byte bank
// pairs), thread q of a row running butterfly q (radix 8: values i + r n / 8 in, positions
// k ns 8 + r ns + j out, j = i mod ns, k = i / ns):
//   - the global load / store phases (value e = t + c blockDim.x): 32 consecutive values,
//     conflict-free;
//   - stage loads (i + r n / 8, i consecutive across the warp): conflict-free when a row
//     has >= 32 threads (n >= 256); for shorter rows a warp spans 32 / (n / 8) rows n
//     apart (n a multiple of 32 floats: the same banks), 2- to 8-way;
//   - stage 0 stores (ns = 1: positions 8 i + r): lanes 8 apart, 4 banks for 32 lanes:
//     8-way in float, 8-way per half warp in double;
//   - stage 1 stores (ns = 8: positions 64 k + 8 r + j, j = lane mod 8, k = lane / 8):
//     8 banks: 4-way in float, 2-way in double;
//   - later stages (ns >= 64): j runs over 32 consecutive values, conflict-free.
// Per warp and group of rows, in conflict-free wavefronts (tools/fft-bank-conflicts prints
// the per-phase table): float n = 64: 352 for 96, 256: 288 for 128, 1024 and 4096: 320 for
// 160; double 1024 and 2048: 288 for 160. The swizzle below makes these 96, 128, 160, 160.
//
// Change 1, the swizzle (both variants): position e of the block's buffer (row * n + o)
// lives at e ^ g(e), g(e) = bits 5..7 of e into bits 0..2 and bits 6..7 into bits 3..4
// (float), bits 4..6 into 0..2 and bit 6 into bit 3 (double). It only permutes within
// each aligned group of 32 floats (16 doubles), so 32 consecutive aligned values still
// hit 32 banks (loads, global phases); stage 0's lanes (bits 3..7 of 8 i + r) and stage
// 1's (j in bits 0..2, k in bits 6..7) land on 32 different banks. Every stage's loads
// and stores, and the global phases, are then one wavefront per float instruction (two per
// double) for n >= 64; n = 16 and 32 keep 2-way conflicts in their loads and last stores
// (8-way before). No extra shared memory (padding one value per 32 would need 1/32 more
// and still leave stage 1 4-way).
//
// Change 2, vectorised global access (swzv only): a value's two floats are one 8-byte load
// and one 8-byte store (float2), where the fused kernel issues two 4-byte accesses 8 bytes
// apart (each touching every sector of the warp's 256 bytes for half of its bytes). When
// the input (an element offset of a tensor) or the output is not 8-byte aligned, the
// kernel takes the 4-byte path instead, for the whole launch; the same values are read
// and the same stored either way.
//
// Occupancy is as for repro_fft_fused_<t> (see above): registers decide it (4 blocks of
// 128 threads per SM in float), not the 32 KiB of shared memory.
#if defined(__CUDACC__)
typedef float2 FusedF2;
#else
struct alignas(8) FusedF2 {
    float x, y;
};
#endif

// Position o of the row starting at `base` of the block's buffer, swizzled as above (in 32
// bits: positions are below CAP).
template <class T>
struct FusedSwizzle {
    unsigned base;
    RM_FN size_t operator()(size_t o) const {
        unsigned e = base + (unsigned)o;
        if (sizeof(T) == 4) return e ^ (((e >> 5) & 7u) | (((e >> 6) & 3u) << 3));
        return e ^ (((e >> 4) & 7u) | (((e >> 6) & 1u) << 3));
    }
};

// An unsigned the compiler must treat as unknown from here on. The swizzled positions do
// not depend on the group of rows, so without this the compiler hoists them all out of
// the loop over groups, and the float kernel spilled (ptxas 13.0, sm_90: 1.4 KiB of spill
// stores at the 128-register bound; with this, 115 registers and no spill); recomputing
// them per group is a few integer operations each.
#define RM_FFT_OPAQUE(x) asm volatile("" : "+r"(x))

template <class T, int CAP, int MINB, int N, bool VEC>
__device__ __forceinline__ void fused_block_swz(size_t rows, int inverse, const float* inp,
                                                float* out, const T* table,
                                                const FusedStages& st, T* s_re, T* s_im) {
    constexpr int BV = N > MINB ? N : MINB;
    static_assert(BV <= CAP, "the block's rows fit the shared buffer");
    static_assert(BV % 256 == 0, "the swizzle permutes within the buffer");
    constexpr int THREADS = BV / 8;
    constexpr int PER = BV / THREADS;
    constexpr size_t RPB = BV / N;
    if (!fused_stages_match<N>(st) || blockDim.x != THREADS) __trap();
    // The 8-byte path only where both sides are 8-byte aligned (the same for every block).
    const bool vec = VEC && (((uintptr_t)inp | (uintptr_t)out) & 7) == 0;
    size_t groups = (rows + RPB - 1) / RPB;
    size_t t = threadIdx.x;
    size_t lrow = t / (N / 8), q = t % (N / 8);
    for (size_t g = blockIdx.x; g < groups; g += gridDim.x) {
        unsigned block_base = 0, row_base = (unsigned)(lrow * N);
        RM_FFT_OPAQUE(block_base);
        RM_FFT_OPAQUE(row_base);
        const FusedSwizzle<T> block_map = {block_base};
        const FusedSwizzle<T> row_map = {row_base};
        size_t row0 = g * RPB;
        size_t here = rows - row0 < RPB ? rows - row0 : RPB;
        size_t count = here * N;
        const float* in_g = inp + 2 * row0 * N;
        float* out_g = out + 2 * row0 * N;
        float a[PER], b[PER];
        for (int c = 0; c < PER; c++) {
            size_t e = t + (size_t)c * THREADS;
            if (e < count) {
                if (vec) {
                    FusedF2 z = reinterpret_cast<const FusedF2*>(in_g)[e];
                    a[c] = z.x;
                    b[c] = z.y;
                } else {
                    a[c] = in_g[2 * e];
                    b[c] = in_g[2 * e + 1];
                }
            }
        }
        for (int c = 0; c < PER; c++) {
            size_t e = t + (size_t)c * THREADS;
            if (e < count) {
                Cx<T> z = deinterleave_value<T>(inverse, a[c], b[c]);
                size_t at = block_map(e);
                s_re[at] = z.re;
                s_im[at] = z.im;
            }
        }
        __syncthreads();
        fused_stages<T, N, 0, FusedSwizzle<T>>(st.tw, lrow < here, q, s_re, s_im, table,
                                               row_map);
        for (int c = 0; c < PER; c++) {
            size_t e = t + (size_t)c * THREADS;
            if (e < count) {
                size_t at = block_map(e);
                Cx<float> z = interleave_value<T>(inverse, s_re[at], s_im[at]);
                if (vec) {
                    FusedF2 w;
                    w.x = z.re;
                    w.y = z.im;
                    reinterpret_cast<FusedF2*>(out_g)[e] = w;
                } else {
                    out_g[2 * e] = z.re;
                    out_g[2 * e + 1] = z.im;
                }
            }
        }
        // No barrier before the next group, as in fused_block: this thread's next load
        // writes the positions block_map(e) its store has just read.
    }
}

#define RM_FFT_FUSED_SWZ_CASE(N)                                                              \
    case N:                                                                                   \
        fused_block_swz<T, CAP, MINB, N, VEC>(rows, inverse, inp, out, table, st, s_re, s_im); \
        break;

template <class T, int CAP, int MINB, bool VEC>
__device__ __forceinline__ void fused_kernel_swz(size_t rows, size_t n, int inverse,
                                                 const float* inp, float* out, const T* table,
                                                 const FusedStages& st, T* s_re, T* s_im) {
    switch (n) {
        RM_FFT_FUSED_SWZ_CASE(16)
        RM_FFT_FUSED_SWZ_CASE(32)
        RM_FFT_FUSED_SWZ_CASE(64)
        RM_FFT_FUSED_SWZ_CASE(128)
        RM_FFT_FUSED_SWZ_CASE(256)
        RM_FFT_FUSED_SWZ_CASE(512)
        RM_FFT_FUSED_SWZ_CASE(1024)
        RM_FFT_FUSED_SWZ_CASE(2048)
        case 4096:
            if constexpr (CAP >= 4096) {
                fused_block_swz<T, CAP, MINB, 4096, VEC>(rows, inverse, inp, out, table, st,
                                                         s_re, s_im);
                break;
            }
        default:
            __trap();
    }
}

// The register cap of the swzv_cap<k> variants (__maxnreg__; the emulated device has no
// registers). Registers decide the fused kernels' occupancy (see repro_fft_fused_<t>):
// ptxas 13.0 for sm_90 gives repro_fft_fused_f32 108 registers and swzv_f32 115 (both: 4
// blocks of 128 threads per SM, and at n = 4096, 512 threads, one block per SM, every warp
// of the SM waiting at the same barriers), the f64 kernels 172-173 (5 blocks of 64, one of
// 256). cap1: 96 registers for float (5 blocks of 128), 128 for double (8 blocks of 64, 2 of
// 256); cap2: 64 for float (8 blocks of 128, 2 of 512), 96 for double. ptxas spills to
// reach them (cap1 f32: 528 bytes of spill stores in the code, cap2: 1.7 KiB; local memory,
// L1-cached); whether that costs more than the occupancy gains is for the GPU run
// (examples/gpu_report.rs fft) to say.
#if defined(REPRO_EMULATED_DEVICE)
#define RM_FFT_MAXNREG(R)
#else
#define RM_FFT_MAXNREG(R) __maxnreg__(R)
#endif

#define RM_FFT_FUSED_SWZ(T, NAME, CAP, MINB, VEC, ATTR)                                       \
    extern "C" __global__ void ATTR NAME(                                                     \
        size_t rows, size_t n, int inverse, const float* __restrict__ inp,                    \
        float* __restrict__ out, const T* __restrict__ table, int stages, int r0, size_t ns0, \
        size_t tw0, int r1, size_t ns1, size_t tw1, int r2, size_t ns2, size_t tw2, int r3,   \
        size_t ns3, size_t tw3) {                                                             \
        REPRO_SHARED(T, s_re, [CAP]);                                                         \
        REPRO_SHARED(T, s_im, [CAP]);                                                         \
        const FusedStages st = {stages, {r0, r1, r2, r3}, {ns0, ns1, ns2, ns3},               \
                                {tw0, tw1, tw2, tw3}};                                        \
        fused_kernel_swz<T, CAP, MINB, VEC>(rows, n, inverse, inp, out, table, st, s_re,      \
                                            s_im);                                            \
    }

#define RM_FFT_FUSED_LB_F32 __launch_bounds__(REPRO_FFT_FUSED_F32 / 8)
#define RM_FFT_FUSED_LB_F64 __launch_bounds__(REPRO_FFT_FUSED_F64 / 8)
RM_FFT_FUSED_SWZ(float, repro_fft_fused_swz_f32, REPRO_FFT_FUSED_F32, REPRO_FFT_FUSED_BLOCK_F32,
                 false, RM_FFT_FUSED_LB_F32)
RM_FFT_FUSED_SWZ(double, repro_fft_fused_swz_f64, REPRO_FFT_FUSED_F64, REPRO_FFT_FUSED_BLOCK_F64,
                 false, RM_FFT_FUSED_LB_F64)
RM_FFT_FUSED_SWZ(float, repro_fft_fused_swzv_f32, REPRO_FFT_FUSED_F32,
                 REPRO_FFT_FUSED_BLOCK_F32, true, RM_FFT_FUSED_LB_F32)
RM_FFT_FUSED_SWZ(double, repro_fft_fused_swzv_f64, REPRO_FFT_FUSED_F64,
                 REPRO_FFT_FUSED_BLOCK_F64, true, RM_FFT_FUSED_LB_F64)
RM_FFT_FUSED_SWZ(float, repro_fft_fused_swzv_cap1_f32, REPRO_FFT_FUSED_F32,
                 REPRO_FFT_FUSED_BLOCK_F32, true, RM_FFT_MAXNREG(96))
RM_FFT_FUSED_SWZ(double, repro_fft_fused_swzv_cap1_f64, REPRO_FFT_FUSED_F64,
                 REPRO_FFT_FUSED_BLOCK_F64, true, RM_FFT_MAXNREG(128))
RM_FFT_FUSED_SWZ(float, repro_fft_fused_swzv_cap2_f32, REPRO_FFT_FUSED_F32,
                 REPRO_FFT_FUSED_BLOCK_F32, true, RM_FFT_MAXNREG(64))
RM_FFT_FUSED_SWZ(double, repro_fft_fused_swzv_cap2_f64, REPRO_FFT_FUSED_F64,
                 REPRO_FFT_FUSED_BLOCK_F64, true, RM_FFT_MAXNREG(96))

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
