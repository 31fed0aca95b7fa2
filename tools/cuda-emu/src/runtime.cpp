// The emulated CUDA device: runs a kernel of kernels/*/*.cu (compiled as host C++ with
// include/cuda_emu.h) over a grid, one block after the other, each block's threads as
// fibers (ucontext) on the launching OS thread. A thread runs until it exits or reaches a
// collective (__syncthreads, a warp shuffle or vote, mma.sync); a collective completes when
// every thread it names has arrived at the same call site, and anything else (a thread that
// exits or waits elsewhere, a lane missing from a mask, no thread able to run) ends the
// launch with an error message instead of a hang or a crash. Device buffers are host pages
// with an inaccessible page after their last byte (and before their first page), inputs
// read-only during a launch: an access past the end or a write to an input faults, and the
// fault handler turns it into the launch's error.
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_emu.h"
#include "emu_abi.h"

namespace repro_emu {

thread_local const Coords* current = nullptr;

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

enum class State { Runnable, AtBarrier, AtWarp, Done };

struct Thread {
    Context ctx;
    Coords coords;
    State state = State::Runnable;
    const char* file = "";
    int line = 0;
    // The warp collective this thread waits in.
    WarpOp op = WarpOp::ShflIdx;
    bool mma = false;
    unsigned mask = 0;
    uint64_t value = 0;
    int arg = 0;
    int width = 32;
    uint64_t result = 0;
    uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    float c[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
};

struct Block {
    std::vector<Thread> threads;
    Context sched;
    size_t running = 0;
    size_t live = 0;
    size_t at_barrier = 0;
    std::string error;
    void (*invoke)(void (*)(), void**) = nullptr;
    void (*raw)() = nullptr;
    void** argv = nullptr;
};

thread_local Block* blk = nullptr;
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

void fail(const std::string& msg) {
    if (blk->error.empty()) blk->error = msg;
}

void yield() {
    Thread& t = blk->threads[blk->running];
    switch_context(&t.ctx, &blk->sched);
}

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
}

uint16_t bf16_bits(uint32_t word, int half) { return (uint16_t)(word >> (16 * half)); }

double bf16_value(uint16_t bits) {
    uint32_t f = (uint32_t)bits << 16;
    float v;
    memcpy(&v, &f, 4);
    return (double)v;
}

// D = A B + C for one m16n8k16 warp tile, from the fragment layout of the PTX ISA
// ("Matrix Fragments for mma.m16n8k16 with floating point type"): lane = 4 groupID +
// threadID_in_group; A register r holds row groupID + 8 (r % 2), columns
// 2 threadID_in_group + 8 (r / 2) + {0, 1}; B register r holds rows (k)
// 2 threadID_in_group + 8 r + {0, 1} of column groupID; C/D register r holds row
// groupID + 8 (r / 2), column 2 threadID_in_group + r % 2; the lower-indexed element in the
// low 16 bits. The products of two bf16 values are exact in f64 and the 16 of them are
// summed in f64 in k order, then C added and rounded to f32 once: the hardware's adder is
// not IEEE, so this is one valid behaviour, exact whenever the true sum is (the Ozaki stage
// keeps every sum an integer below 2^24).
void complete_mma(size_t base) {
    Block& b = *blk;
    double A[16][16], B[16][8], C[16][8];
    for (int lane = 0; lane < 32; lane++) {
        const Thread& t = b.threads[base + lane];
        int g = lane >> 2, tig = lane & 3;
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
    }
    for (int lane = 0; lane < 32; lane++) {
        Thread& t = b.threads[base + lane];
        int g = lane >> 2, tig = lane & 3;
        for (int r = 0; r < 4; r++) {
            int row = g + 8 * (r / 2), col = 2 * tig + r % 2;
            double s = 0.0;
            for (int k = 0; k < 16; k++) s += A[row][k] * B[k][col];
            t.d[r] = (float)(s + C[row][col]);
        }
    }
}

// The lane a shuffle of `t` (at `lane`) reads, or -1 when it keeps its own value.
int shuffle_source(const Thread& t, int lane) {
    int w = t.width, seg = (lane / w) * w;
    switch (t.op) {
        case WarpOp::ShflIdx: return seg + (t.arg % w);
        case WarpOp::ShflXor: {
            int s = lane ^ t.arg;
            return s >= seg + w ? -1 : s;
        }
        case WarpOp::ShflDown: return (lane % w) + t.arg >= w ? -1 : lane + t.arg;
        case WarpOp::ShflUp: return (lane % w) - t.arg < 0 ? -1 : lane - t.arg;
        default: return -1;
    }
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
        complete_mma(base);
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
    for (int l = 0; l < 32; l++)
        if ((me.mask >> l) & 1u) b.threads[base + l].state = State::Runnable;
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
    t.mma = false;
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
    t.mma = true;
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

// --- Buffers and faults ----------------------------------------------------------------

namespace {

struct Region {
    std::atomic<uintptr_t> begin{0}, end{0}, data{0}, data_end{0};
    std::atomic<int> kind{0};  // 1 buffer, 2 fiber stack
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

char* alloc_guarded(size_t bytes, size_t* map_len, int kind, char** data) {
    size_t p = page();
    size_t body = (bytes + p - 1) / p * p;
    size_t len = body + 2 * p;
    void* m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    char* region = (char*)m;
    if (body > 0) mprotect(region + p, body, PROT_READ | PROT_WRITE);
    *data = region + p + body - bytes;  // the last byte touches the guard page
    *map_len = len;
    if (!add_region((uintptr_t)region, (uintptr_t)region + len, (uintptr_t)*data,
                    (uintptr_t)*data + bytes, kind)) {
        munmap(m, len);
        return nullptr;
    }
    return region;
}

void remove_region(uintptr_t begin);

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
    return alloc_guarded(kStackBytes - 2 * page(), &map_len, 2, &data);
}

void release_stack(char* s) { stack_pool.free.push_back(s); }

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
}  // namespace repro_emu

namespace repro_emu {
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

// The blocks one after the other; in each, the runnable threads in index order until all
// have exited, an error is recorded, or none can run (a deadlock).
__attribute__((noinline)) void run_grid(Block& b, const uint32_t grid[3], const uint32_t block[3],
                                        const Stacks& stacks) {
    size_t threads = b.threads.size();
    for (uint32_t bz = 0; bz < grid[2] && b.error.empty(); bz++)
        for (uint32_t by = 0; by < grid[1] && b.error.empty(); by++)
            for (uint32_t bx = 0; bx < grid[0] && b.error.empty(); bx++) {
                b.live = threads;
                b.at_barrier = 0;
                for (size_t i = 0; i < threads; i++) {
                    Thread& t = b.threads[i];
                    t = Thread();
                    t.coords.thread_idx = {(unsigned)(i % block[0]),
                                           (unsigned)(i / block[0] % block[1]),
                                           (unsigned)(i / (block[0] * block[1]))};
                    t.coords.block_idx = {bx, by, bz};
                    t.coords.block_dim = {block[0], block[1], block[2]};
                    t.coords.grid_dim = {grid[0], grid[1], grid[2]};
                    start_fiber(t, stacks.stacks[i]);
                }
                while (b.error.empty() && b.live > 0) {
                    bool ran = false;
                    for (size_t i = 0; i < threads && b.error.empty(); i++) {
                        if (b.threads[i].state != State::Runnable) continue;
                        ran = true;
                        b.running = i;
                        current = &b.threads[i].coords;
                        switch_context(&b.sched, &b.threads[i].ctx);
                    }
                    if (!ran && b.error.empty()) {
                        std::string msg = "deadlock: no thread of block (" + std::to_string(bx) +
                                          "," + std::to_string(by) + "," + std::to_string(bz) +
                                          ") can run;";
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

}  // namespace
}  // namespace repro_emu

using namespace repro_emu;

extern "C" {

void* repro_emu_alloc(size_t bytes, size_t* map_len, void** data) {
    install_fault_handler();
    char* d = nullptr;
    char* r = alloc_guarded(bytes, map_len, 1, &d);
    *data = d;
    return r;
}

void repro_emu_free(void* region, size_t map_len) {
    remove_region((uintptr_t)region);
    munmap(region, map_len);
}

int repro_emu_protect(void* region, size_t map_len, int read_only) {
    size_t p = page();
    if (map_len <= 2 * p) return 0;
    return mprotect((char*)region + p, map_len - 2 * p,
                    read_only ? PROT_READ : PROT_READ | PROT_WRITE);
}

int repro_emu_has_kernel(const char* module, const char* kernel) {
    return find(module, kernel) != nullptr;
}

int repro_emu_launch(const char* module, const char* kernel, const uint32_t grid[3],
                     const uint32_t block[3], const EmuArg* args, size_t nargs, char* err,
                     size_t err_len) {
    install_fault_handler();
    const Entry* e = find(module, kernel);
    if (!e) {
        set_error(err, err_len, std::string("no kernel ") + kernel + " in module " + module);
        return 1;
    }
    char why[256] = {0};
    if (!e->check(args, nargs, why, sizeof why)) {
        set_error(err, err_len, std::string(kernel) + ": " + why);
        return 1;
    }
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (threads == 0 || threads > 1024 || grid[0] == 0 || grid[1] == 0 || grid[2] == 0 ||
        grid[1] > 65535 || grid[2] > 65535 || block[2] > 64) {
        set_error(err, err_len, "invalid launch configuration");
        return 1;
    }
    std::vector<void*> argv(nargs);
    for (size_t i = 0; i < nargs; i++) argv[i] = (void*)args[i].value;

    Block b;
    b.invoke = e->invoke;
    b.raw = e->raw;
    b.argv = argv.data();
    b.threads.resize(threads);
    Stacks stacks;
    for (size_t i = 0; i < threads; i++) {
        char* s = acquire_stack();
        if (!s) {
            set_error(err, err_len, "cannot map the emulated threads' stacks");
            return 1;
        }
        stacks.stacks.push_back(s);
    }
    Block* saved_blk = blk;
    const Coords* saved_current = current;
    sigjmp_buf jump;
    sigjmp_buf* saved_jump = fault_jump;
    blk = &b;
    if (sigsetjmp(jump, 1) != 0) {
        b.error = fault_message;
    } else {
        fault_jump = &jump;
        run_grid(b, grid, block, stacks);
    }
    if (!b.error.empty()) b.error = std::string(kernel) + ": " + b.error;
    fault_jump = saved_jump;
    blk = saved_blk;
    current = saved_current;
    if (!b.error.empty()) {
        set_error(err, err_len, b.error);
        return 1;
    }
    return 0;
}

}  // extern "C"
