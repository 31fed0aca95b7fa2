// Host cross-check of kernels/rope.cu: the kernel's arithmetic and index code
// (repro_rope::rope_pair, the function each CUDA thread runs) compiled as host C++
// (-ffp-contract=off, no __CUDACC__), run over every pair. tests/rope_kernel_hostcheck.rs
// builds this program, feeds it inputs on stdin and compares the outputs bit for bit with
// the Rust CPU kernel.
//
// stdin (little-endian): u32 mode (0 tables, 1 fused), u32 dtype (0 f32, 1 bf16, 2 f16), u32 layout (0 halves,
// 1 interleaved, 2 thd), f64 sgn, u64 b, h, t, d, cs_t, u32 batched, u64 nx, u64 ncs, then
// x (nx elements), then for mode 0 cos (ncs) and sin (ncs) as raw bits, for mode 1 the
// positions (ncs u32), inv_freq (d/2 f32 bits) and the attention factor (f32 bits), with
// cs_t = t. stdout: y (nx elements). Mode 1 runs repro_rope::rope_fused_pair, whose cos/sin
// come from the device trig mirror (kernels/math/trig.cuh).
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#include "rope.cu"

template <class T>
static void read_exact(T* p, size_t n) {
    if (fread(p, sizeof(T), n, stdin) != n) {
        fprintf(stderr, "rope_hostcheck: short input\n");
        exit(2);
    }
}

template <class F>
static void run(const repro_rope::Geometry& g, double sgn, uint64_t nx, uint64_t ncs) {
    typedef typename F::T T;
    std::vector<T> x(nx), c(ncs), s(ncs), y(nx);
    read_exact(x.data(), nx);
    read_exact(c.data(), ncs);
    read_exact(s.data(), ncs);
    uint64_t pairs = nx / 2;
    for (uint64_t p = 0; p < pairs; p++) {
        repro_rope::rope_pair<F>(g, p, x.data(), c.data(), s.data(), y.data(), sgn);
    }
    fwrite(y.data(), sizeof(T), nx, stdout);
}

template <class F>
static void run_fused(const repro_rope::Geometry& g, double sgn, uint64_t nx, uint64_t npos) {
    typedef typename F::T T;
    std::vector<T> x(nx), y(nx);
    std::vector<uint32_t> pos(npos);
    std::vector<float> inv(g.d / 2);
    float af;
    read_exact(x.data(), nx);
    read_exact(pos.data(), npos);
    read_exact(inv.data(), g.d / 2);
    read_exact(&af, 1);
    uint64_t pairs = nx / 2;
    for (uint64_t p = 0; p < pairs; p++) {
        repro_rope::rope_fused_pair<F>(g, p, x.data(), pos.data(), inv.data(), af, y.data(), sgn);
    }
    fwrite(y.data(), sizeof(T), nx, stdout);
}

int main() {
    uint32_t mode, dtype, layout, batched;
    read_exact(&mode, 1);
    double sgn;
    uint64_t dims[5], nx, ncs;
    read_exact(&dtype, 1);
    read_exact(&layout, 1);
    read_exact(&sgn, 1);
    read_exact(dims, 5);
    read_exact(&batched, 1);
    read_exact(&nx, 1);
    read_exact(&ncs, 1);
    repro_rope::Geometry g;
    g.layout = layout;
    g.b = dims[0];
    g.h = dims[1];
    g.t = dims[2];
    g.d = dims[3];
    g.cs_t = dims[4];
    g.batched = batched;
    if (mode == 1) {
        switch (dtype) {
            case 0: run_fused<repro::F32>(g, sgn, nx, ncs); break;
            case 1: run_fused<repro::BF16>(g, sgn, nx, ncs); break;
            default: run_fused<repro::F16>(g, sgn, nx, ncs); break;
        }
        return 0;
    }
    switch (dtype) {
        case 0: run<repro::F32>(g, sgn, nx, ncs); break;
        case 1: run<repro::BF16>(g, sgn, nx, ncs); break;
        default: run<repro::F16>(g, sgn, nx, ncs); break;
    }
    return 0;
}
