// The emulated CUDA device: runs a kernel of kernels/*/*.cu (compiled as host C++ with
// include/cuda_emu.h) over a grid, one block after the other, each block's threads as
// fibers on the launching OS thread. A thread runs until it exits or reaches a collective
// (__syncthreads, a warp shuffle or vote, mma.sync); a collective completes when every
// thread it names has arrived at the same call site, and anything else (a thread that exits
// or waits elsewhere, a lane missing from a mask, no thread able to run) ends the launch
// with an error message instead of a hang or a crash.
//
// The checks, like compute-sanitizer's:
//   - every load and store of kernel code comes here (the __tsan_* callbacks at the end:
//     the module units are compiled with -fsanitize=thread, no sanitizer runtime linked);
//   - shared memory (racecheck, initcheck): per byte, the barrier interval and thread of
//     its last write and of its readers since; a read of a byte this block has not written
//     (the arena is poisoned at every block start), and two threads of one block touching
//     a byte in one interval with a write among them, are errors, unless a warp collective
//     of both lanes came between; red zones between variables catch indexing past one;
//   - device buffers (memcheck, initcheck): a shadow byte per byte, set when anything writes
//     it (the host, or a kernel); a read of a byte never written since allocation is an
//     error; 64 KiB guard zones before and after every buffer (inaccessible pages, and the
//     padding between the first page and the first byte) make an access outside it an
//     error, inputs are read-only during a launch;
//   - schedules (a launch option): the block's threads run between collectives in index
//     order, reversed, or a seeded random order drawn afresh for every interval, and the
//     blocks in order, reversed or shuffled; a launch may run under several schedules, and
//     outputs that differ between them are an error;
//   - mma.sync: an m16n8k16 bf16 product whose products or partial sums are not exact in
//     f32 (in every order: the hardware's adder is not modeled), an m16n8k32 s8 one that
//     may leave the s32 range, are errors.
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_emu.h"
#include "emu_abi.h"

#define REPRO_EMU_TLS __attribute__((tls_model("initial-exec")))

// A device buffer (allocated by repro_emu_alloc): its mapping, its bytes and its shadow
// (init[i] != 0: byte i has been written). Mirrored by lib.rs.
struct BufInfo {
    char* region;
    size_t map_len;
    char* data;
    size_t bytes;
    uint8_t* init;
};


namespace repro_emu {

thread_local const Coords* current REPRO_EMU_TLS = nullptr;

namespace {

const size_t kStackBytes = 256 * 1024;

// Fiber contexts. On x86-64 a switch saves the callee-saved registers, MXCSR and the x87
// control word on the old stack and swaps stack pointers (no system call: ucontext's
// swapcontext saves the signal mask with one, and barriers switch often); elsewhere
// ucontext.
#if defined(__x86_64__)
extern "C" void repro_emu_switch(void** save_sp, void* new_sp);
asm(R"(
    .text
    .globl repro_emu_switch
    .type repro_emu_switch, @function
repro_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size repro_emu_switch, .-repro_emu_switch
)");
struct Context {
    void* sp = nullptr;
};
inline void switch_context(Context* from, Context* to) { repro_emu_switch(&from->sp, to->sp); }
#else
struct Context {
    ucontext_t uc;
};
inline void switch_context(Context* from, Context* to) { swapcontext(&from->uc, &to->uc); }
#endif


const size_t kSharedBytes = 48 * 1024;  // CUDA's static shared memory limit per block
const size_t kRedZone = 64;             // between shared variables
const size_t kGuardBytes = 64 * 1024;   // before and after every device buffer
const uint16_t kManyReaders = 0xFFFF;

enum class State { Runnable, AtBarrier, AtWarp, Done };

struct Thread {
    Context ctx;
    Coords coords;
    State state = State::Runnable;
    const char* file = "";
    int line = 0;
    // The warp collective this thread waits in (mma: 0 none, 1 bf16, 2 s8).
    WarpOp op = WarpOp::ShflIdx;
    int mma = 0;
    unsigned mask = 0;
    uint64_t value = 0;
    int arg = 0;
    int width = 32;
    uint64_t result = 0;
    uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    float c[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
    int32_t ci[4] = {0, 0, 0, 0}, di[4] = {0, 0, 0, 0};
    // The last warp collective this thread completed: its clock and mask.
    uint32_t last_sync = 0;
    uint32_t sync_mask = 0;
};

// Per shared byte: the interval, thread and warp clock of the last write and of the
// reads since (r_tid kManyReaders: several threads); var: 1 + the variable's index, 0 in a
// red zone.
struct SharedShadow {
    uint32_t w_int, r_int, w_sync, r_sync;
    uint16_t w_tid, r_tid, var, pad;
};

// A buffer argument of the running launch.
struct ArgBuf {
    uintptr_t lo, hi, data, data_end;
    uint8_t* init;
    size_t arg;
    bool writable;
    bool complete;  // every byte written before the launch: no shadow to read or set
};

enum class Order { Index, Reverse, Random };

struct Schedule {
    Order threads;
    Order blocks;
    uint64_t seed;
    std::string name;
};

Schedule schedule(uint32_t i, uint64_t seed) {
    if (i == 0) return {Order::Index, Order::Index, 0, "index order"};
    if (i == 1) return {Order::Reverse, Order::Reverse, 0, "reverse order"};
    uint64_t s = seed + i;
    return {Order::Random, Order::Random, s,
            "random order (seed " + std::to_string((unsigned long long)s) + ")"};
}

uint64_t splitmix(uint64_t* s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

template <class T>
void shuffle(std::vector<T>& v, uint64_t* rng) {
    for (size_t i = v.size(); i > 1; i--) std::swap(v[i - 1], v[splitmix(rng) % i]);
}

struct Block {
    std::vector<Thread> threads;
    Context sched;
    size_t running = 0;
    size_t live = 0;
    size_t at_barrier = 0;
    std::string error;
    const char* kernel = "";
    void (*invoke)(void (*)(), void**) = nullptr;
    void (*raw)() = nullptr;
    void** argv = nullptr;
    // Shared memory: this OS thread's arena, its variables for this launch.
    uintptr_t arena_lo = 0;
    char* arena = nullptr;
    SharedShadow* shadow = nullptr;
    size_t used = 0;
    std::vector<std::pair<const SharedDecl*, size_t>> vars;
    uint32_t interval = 0;     // barrier intervals (and block starts) so far in the launch
    uint32_t block_start = 0;  // the interval the running block started with
    uint32_t clock = 0;        // warp collectives completed so far in the launch
    bool atomic = false;
    // Device buffers of the launch, the one the last access hit.
    std::vector<ArgBuf> bufs;
    uintptr_t gmin = 0, gspan = 0;
    size_t last_buf = 0;
    // The running thread's stack (most accesses that are not to shared memory).
    uintptr_t stack_lo = 0;
};

thread_local Block* blk REPRO_EMU_TLS = nullptr;
thread_local sigjmp_buf* fault_jump = nullptr;
thread_local char fault_message[512];

std::string site(const char* file, int line) {
    const char* base = strrchr(file, '/');
    return std::string(base ? base + 1 : file) + ":" + std::to_string(line);
}

std::string who(size_t i) {
    const Coords& c = blk->threads[i].coords;
    char buf[96];
    snprintf(buf, sizeof buf, "thread (%u,%u,%u) of block (%u,%u,%u)", c.thread_idx.x,
             c.thread_idx.y, c.thread_idx.z, c.block_idx.x, c.block_idx.y, c.block_idx.z);
    return buf;
}

std::string thread_name(size_t i) {
    const Coords& c = blk->threads[i].coords;
    char buf[48];
    snprintf(buf, sizeof buf, "thread (%u,%u,%u)", c.thread_idx.x, c.thread_idx.y,
             c.thread_idx.z);
    return buf;
}

void fail(const std::string& msg) {
    if (blk->error.empty()) blk->error = msg;
}

void yield() {
    Thread& t = blk->threads[blk->running];
    switch_context(&t.ctx, &blk->sched);
}

// An error found while the running thread executes kernel code: the thread stops here for
// good (the launch ends, its fibers are never resumed).
[[noreturn]] void fail_now(const std::string& msg) {
    fail(msg);
    yield();
    __builtin_unreachable();
}

// --- Shared memory -------------------------------------------------------------------

std::string shared_var_name(const SharedShadow& s, size_t off) {
    if (s.var == 0) return "";
    const auto& v = blk->vars[s.var - 1];
    char buf[160];
    snprintf(buf, sizeof buf, "byte %zu of `%s` (declared at %s; shared offset %zu)",
             off - v.second, v.first->name, site(v.first->file, v.first->line).c_str(), off);
    return buf;
}

// Whether a warp collective that `me` completed after `clock` (the time of thread `other`'s
// access) included `other`'s lane: then it orders the two accesses.
bool warp_ordered(const Thread& me, size_t self, size_t other, uint32_t clock) {
    if ((self >> 5) != (other >> 5)) return false;
    return me.last_sync > clock && ((me.sync_mask >> (other & 31)) & 1u);
}

__attribute__((noinline)) void shared_access(size_t off, size_t n, bool write) {
    Block& b = *blk;
    size_t tid = b.running;
    Thread& me = b.threads[tid];
    for (size_t i = 0; i < n; i++) {
        size_t o = off + i;
        if (o >= kSharedBytes) {
            fail_now(who(tid) + (write ? " writes" : " reads") +
                     " past the end of the 48 KiB of shared memory");
        }
        SharedShadow& s = b.shadow[o];
        if (s.var == 0) {
            // A red zone: past the end of the variable before, or before the one after.
            std::string near;
            for (size_t v = 0; v < b.vars.size(); v++) {
                size_t lo = b.vars[v].second, hi = lo + b.vars[v].first->bytes;
                if (o >= hi && o < hi + kRedZone)
                    near = std::to_string(o - hi) + " bytes past the end of `" +
                           b.vars[v].first->name + "` (declared at " +
                           site(b.vars[v].first->file, b.vars[v].first->line) + ")";
                else if (o < lo && o + kRedZone >= lo && near.empty())
                    near = std::to_string(lo - o) + " bytes before the start of `" +
                           b.vars[v].first->name + "` (declared at " +
                           site(b.vars[v].first->file, b.vars[v].first->line) + ")";
            }
            if (near.empty()) near = "outside every shared variable";
            fail_now(who(tid) + (write ? " writes" : " reads") +
                     " shared memory out of bounds: shared offset " + std::to_string(o) +
                     ", " + near);
        }
        if (!write) {
            if (s.w_int < b.block_start) {
                fail_now(who(tid) + " reads " + shared_var_name(s, o) +
                         ", which this block has not written (uninitialized shared memory: "
                         "the arena is poisoned at every block start, and what an earlier "
                         "block left there is not this block's)");
            }
            if (!b.atomic && s.w_int == b.interval && s.w_tid != tid &&
                !warp_ordered(me, tid, s.w_tid, s.w_sync)) {
                fail_now("shared-memory race (read after write): " + who(tid) + " reads " +
                         shared_var_name(s, o) + ", which " + thread_name(s.w_tid) +
                         " wrote in the same barrier interval (no __syncthreads between)");
            }
            if (s.r_int != b.interval) {
                s.r_int = b.interval;
                s.r_tid = (uint16_t)tid;
                s.r_sync = b.clock;
            } else if (s.r_tid != tid) {
                s.r_tid = kManyReaders;
                s.r_sync = b.clock;
            }
        } else {
            if (!b.atomic) {
                if (s.w_int == b.interval && s.w_tid != tid &&
                    !warp_ordered(me, tid, s.w_tid, s.w_sync)) {
                    fail_now("shared-memory race (write after write): " + who(tid) +
                             " writes " + shared_var_name(s, o) + ", which " +
                             thread_name(s.w_tid) +
                             " wrote in the same barrier interval (no __syncthreads between)");
                }
                if (s.r_int == b.interval && s.r_tid != tid &&
                    (s.r_tid == kManyReaders || !warp_ordered(me, tid, s.r_tid, s.r_sync))) {
                    fail_now("shared-memory race (write after read): " + who(tid) +
                             " writes " + shared_var_name(s, o) + ", which " +
                             (s.r_tid == kManyReaders ? std::string("other threads")
                                                      : thread_name(s.r_tid)) +
                             " read in the same barrier interval (no __syncthreads between)");
                }
            }
            s.w_int = b.interval;
            s.w_tid = (uint16_t)tid;
            s.w_sync = b.clock;
        }
    }
}

// --- Device buffers ---------------------------------------------------------------------

// Whether all `n` shadow bytes at `p` are set.
inline bool all_written(const uint8_t* p, size_t n) {
    switch (n) {
        case 4: {
            uint32_t v;
            memcpy(&v, p, 4);
            return (v & 0x01010101u) == 0x01010101u;
        }
        case 8: {
            uint64_t v;
            memcpy(&v, p, 8);
            return (v & 0x0101010101010101ull) == 0x0101010101010101ull;
        }
        default:
            for (size_t i = 0; i < n; i++)
                if (!p[i]) return false;
            return true;
    }
}

__attribute__((noinline)) void global_access(uintptr_t a, size_t n, bool write) {
    Block& b = *blk;
    size_t nb = b.bufs.size();
    for (size_t k = 0; k < nb; k++) {
        size_t j = b.last_buf + k;
        if (j >= nb) j -= nb;
        ArgBuf& g = b.bufs[j];
        if (a - g.lo >= g.hi - g.lo) continue;
        b.last_buf = j;
        if (__builtin_expect(a >= g.data && a + n <= g.data_end, 1)) {
            size_t off = a - g.data;
            if (g.complete) {
                if (!write || g.writable) return;
            } else if (write) {
                if (__builtin_expect(g.writable, 1)) {
                    memset(g.init + off, 1, n);
                    return;
                }
            } else if (__builtin_expect(all_written(g.init + off, n), 1)) {
                return;
            }
        }
        auto what = [&] {
            return who(b.running) + (write ? " writes " : " reads ") + std::to_string(n) +
                   (n == 1 ? " byte" : " bytes");
        };
        auto buffer = [&] {
            return "argument " + std::to_string(g.arg) + " (a " +
                   std::to_string(g.data_end - g.data) + "-byte buffer)";
        };
        if (a < g.data) {
            fail_now("out-of-bounds access: " + what() + " " + std::to_string(g.data - a) +
                     " bytes before the start of " + buffer());
        }
        if (a + n > g.data_end) {
            fail_now("out-of-bounds access: " + what() + " at byte " + std::to_string(a - g.data) +
                     ", past the end of " + buffer());
        }
        size_t off = a - g.data;
        if (write) {
            if (!g.writable) {
                fail_now("write to a read-only (input) buffer: " + what() + " at byte " +
                         std::to_string(off) + " of " + buffer());
            }
            memset(g.init + off, 1, n);
        } else {
            for (size_t i = 0; i < n; i++) {
                if (!g.init[off + i]) {
                    fail_now("uninitialized device memory: " + what() + " at byte " +
                             std::to_string(off) + " of " + buffer() + "; byte " +
                             std::to_string(off + i) +
                             " has not been written since the buffer was allocated");
                }
            }
        }
        return;
    }
}

inline void on_access(const void* p, size_t n, bool write) {
    Block* b = blk;
    if (__builtin_expect(b == nullptr, 0)) return;
    uintptr_t a = (uintptr_t)p;
    if (a - b->stack_lo < kStackBytes) return;
    if (a - b->arena_lo < kSharedBytes) {
        shared_access(a - b->arena_lo, n, write);
    } else if (a - b->gmin < b->gspan) {
        // The common case inline: inside the buffer the last access hit, nothing to track.
        const ArgBuf& g = b->bufs[b->last_buf];
        if (a >= g.data && a + n <= g.data_end && g.complete && (!write || g.writable)) return;
        global_access(a, n, write);
    }
}

// --- Barriers and warp collectives ------------------------------------------------------

// A barrier completes when every live thread waits at it; all must wait at one call site
// and no thread may have exited (a barrier every thread does not reach is undefined).
void try_release_barrier() {
    Block& b = *blk;
    if (b.at_barrier == 0 || b.at_barrier != b.live) return;
    const Thread* first = nullptr;
    for (size_t i = 0; i < b.threads.size(); i++) {
        const Thread& t = b.threads[i];
        if (t.state == State::Done) {
            for (const Thread& u : b.threads) {
                if (u.state == State::AtBarrier) {
                    fail("__syncthreads at " + site(u.file, u.line) + " not reached by " +
                         who(i) + ", which exited");
                    break;
                }
            }
            return;
        }
        if (!first) {
            first = &t;
        } else if (t.file != first->file || t.line != first->line) {
            fail("threads of one block wait at different __syncthreads: " +
                 site(first->file, first->line) + " and " + site(t.file, t.line) + " (" +
                 who(i) + ")");
            return;
        }
    }
    for (Thread& t : b.threads) t.state = State::Runnable;
    b.at_barrier = 0;
    b.interval++;
}

uint16_t bf16_bits(uint32_t word, int half) { return (uint16_t)(word >> (16 * half)); }

double bf16_value(uint16_t bits) {
    uint32_t f = (uint32_t)bits << 16;
    float v;
    memcpy(&v, &f, 4);
    return (double)v;
}

// Whether every partial sum of `t` in every order is exactly an f32: all terms finite,
// multiples of one power of two 2^q >= 2^-149 (the f32 subnormal step), with absolute sum
// below 2^(q + 24) <= 2^128. Then any adder tree of the tensor core, rounding or not, gives
// the exact sum.
bool f32_sums_exact(const double* t, int n, std::string* why) {
    // The common case: integers of absolute sum below 2^24.
    double abs_sum = 0.0;
    bool integers = true;
    for (int i = 0; i < n && integers; i++) {
        double a = fabs(t[i]);
        integers = a < 16777216.0 && a == (double)(int64_t)a;
        abs_sum += a;
    }
    if (integers && abs_sum < 16777216.0) return true;
    int q = INT_MAX, top = INT_MIN;
    for (int i = 0; i < n; i++) {
        if (!isfinite(t[i])) {
            *why = "a term is not finite";
            return false;
        }
        if (t[i] == 0.0) continue;
        int e;
        double m = frexp(fabs(t[i]), &e);  // |t| = m 2^e, 0.5 <= m < 1
        uint64_t sig = (uint64_t)ldexp(m, 53);
        q = std::min(q, e - 53 + __builtin_ctzll(sig));
        top = std::max(top, e);
    }
    if (q == INT_MAX) return true;
    char buf[160];
    if (q < -149) {
        snprintf(buf, sizeof buf, "a term has a bit of weight 2^%d, below f32's 2^-149", q);
        *why = buf;
        return false;
    }
    if (top - q > 24) {
        snprintf(buf, sizeof buf, "the terms span bits 2^%d to 2^%d, more than f32's 24", q,
                 top - 1);
        *why = buf;
        return false;
    }
    uint64_t s = 0;
    for (int i = 0; i < n; i++) s += (uint64_t)ldexp(fabs(t[i]), -q);
    if (s >= (1ull << 24) || q + 24 > 128) {
        snprintf(buf, sizeof buf,
                 "the absolute sum of the terms is %llu * 2^%d, not below 2^24 units",
                 (unsigned long long)s, q);
        *why = buf;
        return false;
    }
    return true;
}

// The fragment layouts of the PTX ISA ("Matrix Fragments for mma.m16n8k16 with floating
// point type", "... mma.m16n8k32" for .s8): lane = 4 groupID + threadID_in_group.
//   m16n8k16 bf16: A register r holds row groupID + 8 (r % 2), columns
//     2 threadID_in_group + 8 (r / 2) + {0, 1}; B register r rows (k)
//     2 threadID_in_group + 8 r + {0, 1} of column groupID;
//   m16n8k32 s8: A register r holds row groupID + 8 (r % 2), columns
//     4 threadID_in_group + 16 (r / 2) + {0..3}; B register r rows 4 threadID_in_group +
//     16 r + {0..3} of column groupID;
//   both: C/D register r holds row groupID + 8 (r / 2), column 2 threadID_in_group + r % 2;
// the lower-indexed element in the lower bits. tests/emulated_device.rs checks these
// against CuTe's layouts (a table written independently of this code).
// bf16: products exact in f64, summed in f64 in k order, C added, rounded once; an error
// unless f32_sums_exact (the hardware's adder is not IEEE and not modeled, so no kernel may
// depend on it). s8: exact in 64-bit; an error unless every partial sum in every order
// fits s32.
void complete_mma(size_t base, int kind, const char* file, int line) {
    Block& b = *blk;
    const int K = kind == 1 ? 16 : 32;
    double A[16][32], B[32][8], C[16][8];
    for (int lane = 0; lane < 32; lane++) {
        const Thread& t = b.threads[base + lane];
        int g = lane >> 2, tig = lane & 3;
        if (kind == 1) {
            for (int r = 0; r < 4; r++) {
                int row = g + 8 * (r % 2), col = 2 * tig + 8 * (r / 2);
                A[row][col] = bf16_value(bf16_bits(t.a[r], 0));
                A[row][col + 1] = bf16_value(bf16_bits(t.a[r], 1));
            }
            for (int r = 0; r < 2; r++) {
                int k = 2 * tig + 8 * r;
                B[k][g] = bf16_value(bf16_bits(t.b[r], 0));
                B[k + 1][g] = bf16_value(bf16_bits(t.b[r], 1));
            }
            for (int r = 0; r < 4; r++) C[g + 8 * (r / 2)][2 * tig + r % 2] = (double)t.c[r];
        } else {
            for (int r = 0; r < 4; r++) {
                int row = g + 8 * (r % 2), col = 4 * tig + 16 * (r / 2);
                for (int e = 0; e < 4; e++) A[row][col + e] = (double)(int8_t)(t.a[r] >> (8 * e));
            }
            for (int r = 0; r < 2; r++) {
                int k = 4 * tig + 16 * r;
                for (int e = 0; e < 4; e++) B[k + e][g] = (double)(int8_t)(t.b[r] >> (8 * e));
            }
            for (int r = 0; r < 4; r++) C[g + 8 * (r / 2)][2 * tig + r % 2] = (double)t.ci[r];
        }
    }
    for (int lane = 0; lane < 32; lane++) {
        Thread& t = b.threads[base + lane];
        int g = lane >> 2, tig = lane & 3;
        for (int r = 0; r < 4; r++) {
            int row = g + 8 * (r / 2), col = 2 * tig + r % 2;
            double terms[33];
            for (int k = 0; k < K; k++) terms[k] = A[row][k] * B[k][col];
            terms[K] = C[row][col];
            auto where = [&] {
                char buf[200];
                snprintf(buf, sizeof buf, "mma.sync %s at %s, D[%d][%d] (lane %d, register %d)",
                         kind == 1 ? "m16n8k16 bf16 -> f32" : "m16n8k32 s8 -> s32",
                         site(file, line).c_str(), row, col, lane, r);
                return std::string(buf);
            };
            if (kind == 1) {
                std::string why;
                if (!f32_sums_exact(terms, K + 1, &why)) {
                    fail(where() +
                         ": the products and partial sums are not all exact in f32 (" + why +
                         "); the tensor core's internal rounding is not modeled, and no "
                         "kernel may depend on it");
                    return;
                }
                double s = 0.0;
                for (int k = 0; k < K; k++) s += terms[k];
                t.d[r] = (float)(s + terms[K]);
            } else {
                int64_t pos = (int64_t)terms[K], neg = (int64_t)terms[K], s = 0;
                for (int k = 0; k <= K; k++) {
                    int64_t v = (int64_t)terms[k];
                    s += v;
                    if (k < K) (v > 0 ? pos : neg) += v;
                }
                if (pos > INT32_MAX || neg < INT32_MIN) {
                    fail(where() +
                         ": a partial sum may leave the s32 range (the accumulator's "
                         "overflow is not modeled, and no kernel may depend on it)");
                    return;
                }
                t.di[r] = (int32_t)s;
            }
        }
    }
}

// The lane a shuffle of `t` (at `lane`) reads, or -1 when it keeps its own value: the PTX
// ISA's shfl.sync (b the lane operand, c the clamp and segment mask that CUDA's
// __shfl*_sync pass for `width`: ((32 - width) << 8) | 0x1f, without the 0x1f for up):
//   bval = b[4:0]; cval = c[4:0]; segmask = c[12:8];
//   maxLane = (lane & segmask) | (cval & ~segmask); minLane = lane & segmask;
//   up: j = lane - bval, valid if j >= maxLane; down: j = lane + bval, valid if j <= maxLane;
//   bfly: j = lane ^ bval, valid if j <= maxLane; idx: j = minLane | (bval & ~segmask),
//   valid if j <= maxLane; an invalid j reads the lane's own value.
int shuffle_source(const Thread& t, int lane) {
    int c = ((32 - t.width) << 8) | (t.op == WarpOp::ShflUp ? 0 : 0x1f);
    int bval = t.arg & 31, cval = c & 31, segmask = (c >> 8) & 31;
    int max_lane = (lane & segmask) | (cval & ~segmask), min_lane = lane & segmask;
    int j;
    bool valid;
    switch (t.op) {
        case WarpOp::ShflUp:
            j = lane - bval;
            valid = j >= max_lane;
            break;
        case WarpOp::ShflDown:
            j = lane + bval;
            valid = j <= max_lane;
            break;
        case WarpOp::ShflXor:
            j = lane ^ bval;
            valid = j <= max_lane;
            break;
        case WarpOp::ShflIdx:
            j = min_lane | (bval & ~segmask);
            valid = j <= max_lane;
            break;
        default: return -1;
    }
    return valid ? j : -1;
}

// A warp collective completes when every lane of the mask waits at it (same call site,
// operation and mask).
void try_complete_warp(size_t self) {
    Block& b = *blk;
    const Thread& me = b.threads[self];
    size_t base = self & ~(size_t)31;
    for (int l = 0; l < 32; l++) {
        if (!((me.mask >> l) & 1u)) continue;
        const Thread& o = b.threads[base + l];
        if (o.state != State::AtWarp) return;
        if (o.file != me.file || o.line != me.line || o.mask != me.mask || o.mma != me.mma ||
            o.op != me.op) {
            fail("lanes of one warp meet at different collectives: " + site(me.file, me.line) +
                 " and " + site(o.file, o.line) + " (" + who(base + l) + ")");
            return;
        }
    }
    if (me.mma) {
        complete_mma(base, me.mma, me.file, me.line);
    } else if (me.op == WarpOp::Ballot || me.op == WarpOp::All || me.op == WarpOp::Any) {
        uint64_t ballot = 0;
        for (int l = 0; l < 32; l++)
            if ((me.mask >> l) & 1u) ballot |= (b.threads[base + l].value & 1u) << l;
        uint64_t r = me.op == WarpOp::Ballot ? ballot
                     : me.op == WarpOp::All  ? (ballot == me.mask ? 1 : 0)
                                             : (ballot != 0 ? 1 : 0);
        for (int l = 0; l < 32; l++)
            if ((me.mask >> l) & 1u) b.threads[base + l].result = r;
    } else {
        for (int l = 0; l < 32; l++) {
            if (!((me.mask >> l) & 1u)) continue;
            Thread& t = b.threads[base + l];
            int src = shuffle_source(t, l);
            if (src < 0) {
                t.result = t.value;
            } else if (!((me.mask >> src) & 1u)) {
                fail("shuffle at " + site(me.file, me.line) + ": " + who(base + l) +
                     " reads lane " + std::to_string(src) + ", which is not in the mask");
                return;
            } else {
                t.result = b.threads[base + src].value;
            }
        }
    }
    uint32_t clock = ++b.clock;
    for (int l = 0; l < 32; l++) {
        if ((me.mask >> l) & 1u) {
            Thread& t = b.threads[base + l];
            t.state = State::Runnable;
            t.last_sync = clock;
            t.sync_mask = me.mask;
        }
    }
}

uint64_t enter_warp(size_t i) {
    Block& b = *blk;
    Thread& t = b.threads[i];
    size_t base = i & ~(size_t)31;
    int lane = (int)(i - base);
    if (!((t.mask >> lane) & 1u)) {
        fail(who(i) + " calls a warp collective at " + site(t.file, t.line) +
             " with a mask that leaves out its own lane");
    }
    if (t.width <= 0 || t.width > 32 || (t.width & (t.width - 1)) != 0) {
        fail("warp collective at " + site(t.file, t.line) + ": width " +
             std::to_string(t.width) + " is not a power of two <= 32");
    }
    for (int l = 0; l < 32; l++) {
        if (!((t.mask >> l) & 1u)) continue;
        if (base + l >= b.threads.size()) {
            fail("warp collective at " + site(t.file, t.line) + ": the mask names lane " +
                 std::to_string(l) + ", which is not a thread of the block");
        } else if (b.threads[base + l].state == State::Done) {
            fail("warp collective at " + site(t.file, t.line) + ": lane " + std::to_string(l) +
                 " of the mask has exited");
        }
    }
    if (!b.error.empty()) {
        yield();
        return 0;
    }
    t.state = State::AtWarp;
    try_complete_warp(i);
    yield();
    return t.result;
}

void thread_main() {
    Block& b = *blk;
    size_t i = b.running;
    b.invoke(b.raw, b.argv);
    Thread& t = b.threads[i];
    t.state = State::Done;
    b.live--;
    // A warp-mate waiting for this lane, or a barrier now waiting only for exited threads.
    size_t base = i & ~(size_t)31;
    for (size_t l = base; l < base + 32 && l < b.threads.size(); l++) {
        const Thread& o = b.threads[l];
        if (o.state == State::AtWarp && ((o.mask >> (i - base)) & 1u)) {
            fail(who(i) + " exited while lane " + std::to_string(l - base) +
                 " waits for it in the warp collective at " + site(o.file, o.line));
        }
    }
    if (b.at_barrier > 0) {
        for (const Thread& u : b.threads) {
            if (u.state == State::AtBarrier) {
                fail("__syncthreads at " + site(u.file, u.line) + " not reached by " + who(i) +
                     ", which exited");
                break;
            }
        }
    }
    switch_context(&t.ctx, &b.sched);
}

void release_stack(char* s);

// A launch's fiber stacks, handed back to this OS thread's pool when the launch ends.
struct Stacks {
    std::vector<char*> stacks;
    ~Stacks() {
        for (char* s : stacks) release_stack(s);
    }
};

}  // namespace

void syncthreads(const char* file, int line) {
    Block& b = *blk;
    Thread& t = b.threads[b.running];
    t.state = State::AtBarrier;
    t.file = file;
    t.line = line;
    b.at_barrier++;
    try_release_barrier();
    yield();
}

void trap(const char* file, int line) {
    fail(who(blk->running) + " executed __trap() at " + site(file, line));
    yield();
}

uint64_t warp_collective(WarpOp op, unsigned mask, uint64_t value, int arg, int width,
                         const char* file, int line) {
    Thread& t = blk->threads[blk->running];
    t.op = op;
    t.mma = 0;
    t.mask = mask;
    t.value = value;
    t.arg = arg;
    t.width = width;
    t.file = file;
    t.line = line;
    return enter_warp(blk->running);
}

void mma_m16n8k16_bf16_f32(const uint32_t a[4], const uint32_t b[2], const float c[4],
                           float d[4], const char* file, int line) {
    Thread& t = blk->threads[blk->running];
    t.mma = 1;
    t.op = WarpOp::ShflIdx;
    t.mask = 0xFFFFFFFFu;
    memcpy(t.a, a, sizeof t.a);
    memcpy(t.b, b, sizeof t.b);
    memcpy(t.c, c, sizeof t.c);
    t.file = file;
    t.line = line;
    t.width = 32;
    enter_warp(blk->running);
    memcpy(d, t.d, sizeof t.d);
}

void mma_m16n8k32_s8_s32(const uint32_t a[4], const uint32_t b[2], const int32_t c[4],
                         int32_t d[4], const char* file, int line) {
    Thread& t = blk->threads[blk->running];
    t.mma = 2;
    t.op = WarpOp::ShflIdx;
    t.mask = 0xFFFFFFFFu;
    memcpy(t.a, a, sizeof t.a);
    memcpy(t.b, b, sizeof t.b);
    memcpy(t.ci, c, sizeof t.ci);
    t.file = file;
    t.line = line;
    t.width = 32;
    enter_warp(blk->running);
    memcpy(d, t.di, sizeof t.di);
}

void atomic_begin() { blk->atomic = true; }
void atomic_end() { blk->atomic = false; }

// --- Buffers and faults ----------------------------------------------------------------

namespace {

struct Region {
    std::atomic<uintptr_t> begin{0}, end{0}, data{0}, data_end{0};
    std::atomic<int> kind{0};  // 1 buffer, 2 fiber stack, 3 shared memory
};
const size_t kRegions = 1 << 14;
Region regions[kRegions];

size_t page() {
    static size_t p = (size_t)sysconf(_SC_PAGESIZE);
    return p;
}

// False when the table is full: the mapping is then refused rather than left unguarded.
bool add_region(uintptr_t begin, uintptr_t end, uintptr_t data, uintptr_t data_end, int kind) {
    for (size_t i = 0; i < kRegions; i++) {
        uintptr_t zero = 0;
        if (regions[i].begin.compare_exchange_strong(zero, begin)) {
            regions[i].end = end;
            regions[i].data = data;
            regions[i].data_end = data_end;
            regions[i].kind = kind;
            return true;
        }
    }
    return false;
}

void remove_region(uintptr_t begin) {
    for (size_t i = 0; i < kRegions; i++) {
        if (regions[i].begin.load() == begin) {
            regions[i].end = 0;
            regions[i].kind = 0;
            regions[i].begin = 0;
            return;
        }
    }
}

struct sigaction previous_segv, previous_bus;

void on_fault(int sig, siginfo_t* info, void* uctx) {
    uintptr_t addr = (uintptr_t)info->si_addr;
    if (fault_jump) {
        for (size_t i = 0; i < kRegions; i++) {
            const Region& r = regions[i];
            uintptr_t b = r.begin.load(), e = r.end.load();
            if (b == 0 || addr < b || addr >= e) continue;
            uintptr_t d = r.data.load(), de = r.data_end.load();
            if (r.kind.load() == 2) {
                snprintf(fault_message, sizeof fault_message,
                         "stack overflow of an emulated thread (its stack is %zu KiB)",
                         kStackBytes / 1024);
            } else if (r.kind.load() == 3) {
                snprintf(fault_message, sizeof fault_message,
                         "out-of-bounds shared memory access, outside the block's 48 KiB");
            } else if (addr >= de) {
                snprintf(fault_message, sizeof fault_message,
                         "out-of-bounds access: %zu bytes past the end of a %zu-byte buffer",
                         (size_t)(addr - de), (size_t)(de - d));
            } else if (addr < d) {
                snprintf(fault_message, sizeof fault_message,
                         "out-of-bounds access: %zu bytes before the start of a %zu-byte "
                         "buffer",
                         (size_t)(d - addr), (size_t)(de - d));
            } else {
                snprintf(fault_message, sizeof fault_message,
                         "write to a read-only (input) buffer at byte %zu of %zu",
                         (size_t)(addr - d), (size_t)(de - d));
            }
            siglongjmp(*fault_jump, 1);
        }
    }
    // Not ours: hand it to the handler that was there before (Rust's stack-overflow
    // report), or let it crash as it would have.
    struct sigaction* prev = sig == SIGSEGV ? &previous_segv : &previous_bus;
    if (prev->sa_flags & SA_SIGINFO) {
        prev->sa_sigaction(sig, info, uctx);
    } else if (prev->sa_handler != SIG_IGN && prev->sa_handler != SIG_DFL) {
        prev->sa_handler(sig);
    } else {
        signal(sig, SIG_DFL);
    }
}

void install_fault_handler() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, &previous_segv);
        sigaction(SIGBUS, &sa, &previous_bus);
    });
}

// `bytes` accessible bytes ending where an inaccessible guard zone of `guard` bytes
// starts, after another such zone (and the padding up to the first page boundary).
char* alloc_guarded(size_t bytes, size_t guard, size_t* map_len, int kind, char** data) {
    size_t p = page();
    size_t body = (bytes + p - 1) / p * p;
    size_t len = body + 2 * guard;
    void* m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    char* region = (char*)m;
    if (body > 0) mprotect(region + guard, body, PROT_READ | PROT_WRITE);
    *data = region + guard + body - bytes;  // the last byte touches the guard zone
    *map_len = len;
    if (!add_region((uintptr_t)region, (uintptr_t)region + len, (uintptr_t)*data,
                    (uintptr_t)*data + bytes, kind)) {
        munmap(m, len);
        return nullptr;
    }
    return region;
}

// Fiber stacks stay mapped (and registered) in a per-OS-thread pool between launches:
// mapping and guarding 256 KiB per emulated thread at every launch made up most of the
// tests' time, in the kernel. Unregistered before unmapping at thread exit: a stale entry
// would claim the addresses of whatever is mapped there next.
struct StackPool {
    std::vector<char*> free;
    ~StackPool() {
        for (char* s : free) {
            remove_region((uintptr_t)s);
            munmap(s, kStackBytes);
        }
    }
};
thread_local StackPool stack_pool;

char* acquire_stack() {
    if (!stack_pool.free.empty()) {
        char* s = stack_pool.free.back();
        stack_pool.free.pop_back();
        return s;
    }
    size_t map_len;
    char* data;
    return alloc_guarded(kStackBytes - 2 * page(), page(), &map_len, 2, &data);
}

void release_stack(char* s) { stack_pool.free.push_back(s); }

// This OS thread's shared memory: 48 KiB between guard pages, and its shadow.
struct SharedArena {
    char* region = nullptr;
    size_t map_len = 0;
    char* data = nullptr;
    SharedShadow* shadow = nullptr;
    ~SharedArena() {
        if (region) {
            remove_region((uintptr_t)region);
            munmap(region, map_len);
            free(shadow);
        }
    }
    bool ready() {
        if (!region) {
            region = alloc_guarded(kSharedBytes, page(), &map_len, 3, &data);
            shadow = (SharedShadow*)calloc(kSharedBytes, sizeof(SharedShadow));
        }
        return region && shadow;
    }
};
thread_local SharedArena shared_arena;

const Entry* find(const char* module, const char* kernel) {
    for (const ModuleEntry* m = repro_emu_modules; m->name; m++) {
        if (strcmp(m->name, module) != 0) continue;
        for (const Entry* e = m->entries; e->name; e++)
            if (strcmp(e->name, kernel) == 0) return e;
    }
    return nullptr;
}

void set_error(char* err, size_t len, const std::string& msg) {
    if (len == 0) return;
    snprintf(err, len, "%s", msg.c_str());
}

}  // namespace

// The storage of a REPRO_SHARED declaration for the running launch: allocated when a
// thread first reaches it, after a red zone, the same for every block and schedule.
void* shared_var(const SharedDecl* d) {
    Block& b = *blk;
    for (const auto& v : b.vars)
        if (v.first == d) return b.arena + v.second;
    size_t align = d->align < 16 ? 16 : d->align;
    size_t off = (b.used + kRedZone + align - 1) / align * align;
    if (off + d->bytes + kRedZone > kSharedBytes || b.vars.size() >= 0xFFFE) {
        fail_now("shared variable `" + std::string(d->name) + "` (declared at " +
                 site(d->file, d->line) + ") does not fit in the 48 KiB of static shared "
                 "memory");
    }
    b.vars.push_back({d, off});
    for (size_t i = 0; i < d->bytes; i++) {
        SharedShadow& s = b.shadow[off + i];
        memset(&s, 0, sizeof s);
        s.var = (uint16_t)b.vars.size();
    }
    memset(b.arena + off, 0xFF, d->bytes);
    b.used = off + d->bytes;
    return b.arena + off;
}

namespace {

// A fresh context for `t` on `stack`, entering thread_main (which never returns: it switches
// back to the scheduler for good).
#if defined(__x86_64__)
[[noreturn]] void fiber_entry() {
    thread_main();
    __builtin_unreachable();
}

void start_fiber(Thread& t, char* stack) {
    // The frame repro_emu_switch pops: MXCSR and x87 control word, r15..rbp, then the
    // return address, placed so that fiber_entry starts as if called (rsp = 8 mod 16).
    uintptr_t top = ((uintptr_t)(stack + kStackBytes - page())) & ~(uintptr_t)15;
    uint64_t* sp = (uint64_t*)(top - 72);
    uint32_t mxcsr;
    uint16_t fpucw;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    sp[0] = (uint64_t)mxcsr | ((uint64_t)fpucw << 32);
    for (int r = 1; r <= 6; r++) sp[r] = 0;
    sp[7] = (uint64_t)(uintptr_t)&fiber_entry;
    t.ctx.sp = sp;
}
#else
// getcontext returns twice: kept out of the grid loop.
__attribute__((noinline)) void start_fiber(Thread& t, char* stack) {
    getcontext(&t.ctx.uc);
    t.ctx.uc.uc_stack.ss_sp = stack + page();
    t.ctx.uc.uc_stack.ss_size = kStackBytes - 2 * page();
    t.ctx.uc.uc_link = nullptr;
    makecontext(&t.ctx.uc, thread_main, 0);
}
#endif

// The blocks in the schedule's order; in each, the runnable threads in the schedule's order
// (drawn afresh for every round), each until it exits or waits at a collective, until all
// have exited, an error is recorded, or none can run (a deadlock).
__attribute__((noinline)) void run_grid(Block& b, const uint32_t grid[3], const uint32_t block[3],
                                        const Stacks& stacks, const Schedule& s) {
    size_t threads = b.threads.size();
    uint64_t count = (uint64_t)grid[0] * grid[1] * grid[2];
    uint64_t rng = s.seed * 0x2545F4914F6CDD1Dull + 1;
    std::vector<uint64_t> blocks;
    if (s.blocks == Order::Random) {
        blocks.resize(count);
        for (uint64_t i = 0; i < count; i++) blocks[i] = i;
        shuffle(blocks, &rng);
    }
    std::vector<size_t> order(threads);
    for (uint64_t n = 0; n < count && b.error.empty(); n++) {
        uint64_t id = s.blocks == Order::Index     ? n
                      : s.blocks == Order::Reverse ? count - 1 - n
                                                   : blocks[n];
        uint32_t bx = (uint32_t)(id % grid[0]), by = (uint32_t)(id / grid[0] % grid[1]),
                 bz = (uint32_t)(id / ((uint64_t)grid[0] * grid[1]));
        b.live = threads;
        b.at_barrier = 0;
        b.interval++;
        b.block_start = b.interval;
        memset(b.arena, 0xFF, b.used);
        for (size_t i = 0; i < threads; i++) {
            Thread& t = b.threads[i];
            t = Thread();
            t.coords.thread_idx = {(unsigned)(i % block[0]), (unsigned)(i / block[0] % block[1]),
                                   (unsigned)(i / (block[0] * block[1]))};
            t.coords.block_idx = {bx, by, bz};
            t.coords.block_dim = {block[0], block[1], block[2]};
            t.coords.grid_dim = {grid[0], grid[1], grid[2]};
            start_fiber(t, stacks.stacks[i]);
        }
        while (b.error.empty() && b.live > 0) {
            for (size_t i = 0; i < threads; i++)
                order[i] = s.threads == Order::Reverse ? threads - 1 - i : i;
            if (s.threads == Order::Random) shuffle(order, &rng);
            bool ran = false;
            for (size_t k = 0; k < threads && b.error.empty(); k++) {
                size_t i = order[k];
                if (b.threads[i].state != State::Runnable) continue;
                ran = true;
                b.running = i;
                b.stack_lo = (uintptr_t)stacks.stacks[i];
                current = &b.threads[i].coords;
                switch_context(&b.sched, &b.threads[i].ctx);
            }
            if (!ran && b.error.empty()) {
                std::string msg = "deadlock: no thread of block (" + std::to_string(bx) + "," +
                                  std::to_string(by) + "," + std::to_string(bz) + ") can run;";
                for (size_t i = 0; i < threads; i++) {
                    const Thread& t = b.threads[i];
                    if (t.state == State::AtBarrier || t.state == State::AtWarp) {
                        msg += " " + who(i) + " waits at " + site(t.file, t.line);
                        break;
                    }
                }
                b.error = msg;
            }
        }
    }
}

// One run of the grid under schedule `s`; false (with b.error) on an error.
bool run_once(Block& b, const uint32_t grid[3], const uint32_t block[3], const Stacks& stacks,
              const Schedule& s) {
    sigjmp_buf jump;
    sigjmp_buf* saved_jump = fault_jump;
    b.error.clear();
    if (sigsetjmp(jump, 1) != 0) {
        b.error = fault_message;
    } else {
        fault_jump = &jump;
        run_grid(b, grid, block, stacks, s);
    }
    fault_jump = saved_jump;
    return b.error.empty();
}

}  // namespace
}  // namespace repro_emu

using namespace repro_emu;

extern "C" {

// A device buffer of `bytes` bytes, each 0xFF (poison), none written.
BufInfo* repro_emu_alloc(size_t bytes) {
    install_fault_handler();
    BufInfo* info = (BufInfo*)calloc(1, sizeof(BufInfo));
    if (!info) return nullptr;
    info->init = (uint8_t*)calloc(bytes ? bytes : 1, 1);
    info->region = alloc_guarded(bytes, kGuardBytes, &info->map_len, 1, &info->data);
    if (!info->region || !info->init) {
        if (info->region) {
            remove_region((uintptr_t)info->region);
            munmap(info->region, info->map_len);
        }
        free(info->init);
        free(info);
        return nullptr;
    }
    info->bytes = bytes;
    memset(info->data, 0xFF, bytes);
    return info;
}

void repro_emu_free(BufInfo* info) {
    remove_region((uintptr_t)info->region);
    munmap(info->region, info->map_len);
    free(info->init);
    free(info);
}

// The host wrote the whole buffer.
void repro_emu_mark_written(BufInfo* info) { memset(info->init, 1, info->bytes); }

int repro_emu_protect(BufInfo* info, int read_only) {
    size_t body = info->map_len - 2 * kGuardBytes;
    if (body == 0) return 0;
    return mprotect(info->region + kGuardBytes, body,
                    read_only ? PROT_READ : PROT_READ | PROT_WRITE);
}

int repro_emu_has_kernel(const char* module, const char* kernel) {
    return find(module, kernel) != nullptr;
}

// One kernel argument as lib.rs passes it: EmuArg (emu_abi.h) and, for a device pointer,
// its buffer and whether the kernel may write it.
struct EmuLaunchArg {
    EmuArg arg;
    BufInfo* buffer;
    uint32_t writable;
};

// Run `kernel` under `schedules` schedules (index order, reverse order, then seeded random
// orders from `seed`); the writable buffers are restored between runs and their bytes must
// be the same after every run.
int repro_emu_launch(const char* module, const char* kernel, const uint32_t grid[3],
                     const uint32_t block[3], const EmuLaunchArg* args, size_t nargs,
                     uint32_t schedules, uint64_t seed, char* err, size_t err_len) {
    install_fault_handler();
    const Entry* e = find(module, kernel);
    if (!e) {
        set_error(err, err_len, std::string("no kernel ") + kernel + " in module " + module);
        return 1;
    }
    std::vector<EmuArg> raw(nargs);
    for (size_t i = 0; i < nargs; i++) raw[i] = args[i].arg;
    char why[256] = {0};
    if (!e->check(raw.data(), nargs, why, sizeof why)) {
        set_error(err, err_len, std::string(kernel) + ": " + why);
        return 1;
    }
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (threads == 0 || threads > 1024 || grid[0] == 0 || grid[1] == 0 || grid[2] == 0 ||
        grid[1] > 65535 || grid[2] > 65535 || block[2] > 64) {
        set_error(err, err_len, "invalid launch configuration");
        return 1;
    }
    if (!shared_arena.ready()) {
        set_error(err, err_len, "cannot map the emulated device's shared memory");
        return 1;
    }
    if (schedules == 0) schedules = 1;
    std::vector<void*> argv(nargs);
    for (size_t i = 0; i < nargs; i++) argv[i] = (void*)raw[i].value;

    Block b;
    b.kernel = kernel;
    b.invoke = e->invoke;
    b.raw = e->raw;
    b.argv = argv.data();
    b.threads.resize(threads);
    b.arena = shared_arena.data;
    b.arena_lo = (uintptr_t)shared_arena.data;
    b.shadow = shared_arena.shadow;
    memset(b.shadow, 0, kSharedBytes * sizeof(SharedShadow));
    memset(b.arena, 0xFF, kSharedBytes);
    // The buffers, once each (writable if any argument writes it).
    std::vector<BufInfo*> outs;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (size_t i = 0; i < nargs; i++) {
        BufInfo* info = args[i].buffer;
        if (!info) continue;
        bool seen = false;
        for (ArgBuf& g : b.bufs) {
            if (g.lo == (uintptr_t)info->region) {
                g.writable = g.writable || args[i].writable;
                seen = true;
            }
        }
        if (!seen) {
            ArgBuf g;
            g.lo = (uintptr_t)info->region;
            g.hi = g.lo + info->map_len;
            g.data = (uintptr_t)info->data;
            g.data_end = g.data + info->bytes;
            g.init = info->init;
            g.arg = i;
            g.writable = args[i].writable != 0;
            g.complete = memchr(info->init, 0, info->bytes) == nullptr;
            b.bufs.push_back(g);
            lo = std::min(lo, g.lo);
            hi = std::max(hi, g.hi);
        }
        if (args[i].writable && std::find(outs.begin(), outs.end(), info) == outs.end())
            outs.push_back(info);
    }
    if (hi > lo) {
        b.gmin = lo;
        b.gspan = hi - lo;
    }
    Stacks stacks;
    for (size_t i = 0; i < threads; i++) {
        char* s = acquire_stack();
        if (!s) {
            set_error(err, err_len, "cannot map the emulated threads' stacks");
            return 1;
        }
        stacks.stacks.push_back(s);
    }
    // The writable buffers before the first run and after it.
    std::vector<std::vector<char>> before, first;
    std::vector<std::vector<uint8_t>> before_init;
    if (schedules > 1) {
        for (BufInfo* o : outs) {
            before.emplace_back(o->data, o->data + o->bytes);
            before_init.emplace_back(o->init, o->init + o->bytes);
        }
    }
    Block* saved_blk = blk;
    const Coords* saved_current = current;
    blk = &b;
    std::string error;
    for (uint32_t k = 0; k < schedules && error.empty(); k++) {
        Schedule s = schedule(k, seed);
        if (k > 0) {
            for (size_t j = 0; j < outs.size(); j++) {
                memcpy(outs[j]->data, before[j].data(), outs[j]->bytes);
                memcpy(outs[j]->init, before_init[j].data(), outs[j]->bytes);
            }
        }
        if (!run_once(b, grid, block, stacks, s)) {
            error = b.error + (schedules > 1 ? " (schedule: " + s.name + ")" : "");
            break;
        }
        if (schedules == 1) break;
        if (k == 0) {
            for (BufInfo* o : outs) first.emplace_back(o->data, o->data + o->bytes);
            continue;
        }
        for (size_t j = 0; j < outs.size() && error.empty(); j++) {
            const char* got = outs[j]->data;
            for (size_t i = 0; i < outs[j]->bytes; i++) {
                if (got[i] != first[j][i]) {
                    size_t arg = 0;
                    for (const ArgBuf& g : b.bufs)
                        if (g.lo == (uintptr_t)outs[j]->region) arg = g.arg;
                    char buf[320];
                    snprintf(buf, sizeof buf,
                             "the output depends on the schedule: byte %zu of argument %zu "
                             "(a %zu-byte buffer) is 0x%02x in index order and 0x%02x in %s",
                             i, arg, outs[j]->bytes, (unsigned)(uint8_t)first[j][i],
                             (unsigned)(uint8_t)got[i], s.name.c_str());
                    error = buf;
                    break;
                }
            }
        }
    }
    if (!error.empty()) error = std::string(kernel) + ": " + error;
    blk = saved_blk;
    current = saved_current;
    if (!error.empty()) {
        set_error(err, err_len, error);
        return 1;
    }
    return 0;
}

// The instrumentation's callbacks (-fsanitize=thread on the kernels' units, no runtime):
// every load and store of kernel code.
void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}
#define REPRO_EMU_TSAN(n)                                                        \
    void __tsan_read##n(void* p) { on_access(p, n, false); }                     \
    void __tsan_write##n(void* p) { on_access(p, n, true); }                     \
    void __tsan_unaligned_read##n(void* p) { on_access(p, n, false); }           \
    void __tsan_unaligned_write##n(void* p) { on_access(p, n, true); }           \
    void __tsan_volatile_read##n(void* p) { on_access(p, n, false); }            \
    void __tsan_volatile_write##n(void* p) { on_access(p, n, true); }            \
    void __tsan_unaligned_volatile_read##n(void* p) { on_access(p, n, false); }  \
    void __tsan_unaligned_volatile_write##n(void* p) { on_access(p, n, true); }
REPRO_EMU_TSAN(1)
REPRO_EMU_TSAN(2)
REPRO_EMU_TSAN(4)
REPRO_EMU_TSAN(8)
REPRO_EMU_TSAN(16)
void __tsan_read_range(void* p, unsigned long n) { on_access(p, n, false); }
void __tsan_write_range(void* p, unsigned long n) { on_access(p, n, true); }

}  // extern "C"
