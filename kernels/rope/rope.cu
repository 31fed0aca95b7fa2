// Rotary embedding kernels: rope (halves), rope_i (interleaved), rope_thd, forward and
// backward, f32 / bf16 / f16, from tables or fused (positions in, cos/sin computed here
// with the device trig mirror, kernels/math/trig.cuh). The mirror of core/src/rope/apply.rs and
// core/src/rope/tables.rs: the same arithmetic in the same order, so a CUDA tensor gets the bits
// of a CPU tensor.
//
// Scheme (see core/src/rope/apply.rs): inputs widened exactly to double; the products x1*c and
// x2*s are exact in double; TwoSum gives the exact sum s + e; s is rounded to odd with e;
// one final rounding to the dtype (repro::F32/BF16/F16::round). Every output is the exact
// x1*c - x2*s (x1*s + x2*c) of the stored inputs rounded once. Built with --fmad=false like
// every kernel here; with exact products a contraction could not change a bit anyway.
//
// The arithmetic (sum_cr, rotate, cos_sin_entry, angle: the Rust names) and the index
// computation (pair_at, cs_row) are plain RM_FN functions; the whole file runs on the
// emulated device (tools/cuda-emu, tests/emulated_device.rs) for the bit comparison with
// the Rust kernel.
#include "math/all.cuh"

#define ROPE_BLOCK 256

namespace repro_rope {

// Exact p + q (exact products) correctly rounded to F.
template <class F>
RM_FN typename F::T sum_cr(double p, double q) {
    double s = p + q;
    double bb = s - p;
    double e = (p - (s - bb)) + (q - bb);
    uint64_t b = repro::f64_to_bits(s);
    bool fix = (e != 0.0) & ((b & 1ULL) == 0ULL) & (repro::fabs_(s) < F64(0x7FF0000000000000));
    bool away = (e > 0.0) == (s > 0.0);
    uint64_t moved = away ? b + 1ULL : b - 1ULL;
    return F::round(repro::f64_from_bits(fix ? moved : b));
}

// Geometry, as the Rust `Geometry`: xs dims (b, h, t, d) in the layout's order
// (layout 0 = halves (b,h,t,d), 1 = interleaved (b,h,t,d), 2 = thd (b,t,h,d)).
struct Geometry {
    uint32_t layout;
    uint64_t b, h, t, d, cs_t;
    uint32_t batched;
};

RM_FN uint64_t cs_row(const Geometry& g, uint64_t r) {
    uint64_t b_i, t_i;
    if (g.layout == 2) {
        b_i = r / (g.t * g.h);
        t_i = (r / g.h) % g.t;
    } else {
        b_i = r / (g.h * g.t);
        t_i = r % g.t;
    }
    return g.batched ? b_i * g.cs_t + t_i : t_i;
}

// Mirror of core/src/rope/apply.rs `rotate`: (x1*c - x2*s, x1*s + x2*c), each correctly
// rounded; sgn is +1 (forward) or -1 (backward: the rotation by -theta), applied exactly
// to s.
template <class F>
RM_FN void rotate(typename F::T x1, typename F::T x2, typename F::T c, typename F::T s,
                  double sgn, typename F::T* y1, typename F::T* y2) {
    double a = (double)F::to_f32(x1);
    double b = (double)F::to_f32(x2);
    double cd = (double)F::to_f32(c);
    double sd = (double)F::to_f32(s) * sgn;
    *y1 = sum_cr<F>(a * cd, -(b * sd));
    *y2 = sum_cr<F>(a * sd, b * cd);
}

// Pair p (0 <= p < numel / 2) of the layout: its row r = p / (d/2), its index i = p % (d/2)
// in the row's cos/sin entries, and the offsets i1, i2 of its two elements (the layouts of
// core/src/rope/apply.rs `row_halves` and `row_interleaved`).
struct Pair {
    uint64_t r, i, i1, i2;
};

RM_FN Pair pair_at(const Geometry& g, uint64_t p) {
    uint64_t half = g.d / 2;
    Pair q;
    q.r = p / half;
    q.i = p % half;
    uint64_t base = q.r * g.d;
    if (g.layout == 1) {
        q.i1 = base + 2 * q.i;
        q.i2 = q.i1 + 1;
    } else {
        q.i1 = base + q.i;
        q.i2 = q.i1 + half;
    }
    return q;
}

// Pair p rotated by the table entries of its row.
template <class F>
RM_FN void rope_pair(const Geometry& g, uint64_t p, const typename F::T* x,
                     const typename F::T* cos, const typename F::T* sin, typename F::T* y,
                     double sgn) {
    Pair q = pair_at(g, p);
    uint64_t k = cs_row(g, q.r) * (g.d / 2) + q.i;
    rotate<F>(x[q.i1], x[q.i2], cos[k], sin[k], sgn, &y[q.i1], &y[q.i2]);
}

// Mirror of core/src/rope/tables.rs `angle`: f32(inv * f32(pos)).
RM_FN float angle(float inv, uint32_t pos) { return inv * (float)pos; }

// Mirror of core/src/rope/tables.rs `cos_sin_entry`: (cos(a) * af, sin(a) * af) each rounded
// once to F: the fast f64 paths accepted by the rounding test (error bound 2^-46), else the
// double-double values times af, rounded to odd, then to F.
template <class F>
RM_FN void cos_sin_entry(float a, float af, typename F::T* c_out, typename F::T* s_out) {
    double afd = (double)af;
    if (!repro::is_finite_f32(a)) {
        *c_out = F::round(F64(0x7FF8000000000000));
        *s_out = F::round(F64(0x7FF8000000000000));
        return;
    }
    const double err = F64(0x3D10000000000000);  // 2^-46
    bool c_ok = false, s_ok = false;
    typename F::T c, s;
    if (repro::Cos::in_fast_domain(a)) {
        c_ok = repro::round_if_certain<F>(repro::Cos::fast(a) * afd, err, &c);
        s_ok = repro::round_if_certain<F>(repro::Sin::fast(a) * afd, err, &s);
    }
    if (!(c_ok && s_ok)) {
        repro::DD sd, cd;
        repro::m_trig::sincos_dd(a, &sd, &cd);
        if (!c_ok) c = F::round(repro::round_odd(cd.mul_f64(afd)));
        if (!s_ok) s = F::round(repro::round_odd(sd.mul_f64(afd)));
    }
    *c_out = c;
    *s_out = s;
}

// The fused op (src/rope/mod.rs `rope_fused`): pair p of xs with the table entry computed
// from the position (positions (t) or (b, t) as u32, `batched` for the latter) and
// inv_freq: angle = f32(inv_freq[i] * f32(pos)), as `tables::angle`.
template <class F>
RM_FN void rope_fused_pair(const Geometry& g, uint64_t p, const typename F::T* x,
                           const uint32_t* pos, const float* inv_freq, float af,
                           typename F::T* y, double sgn) {
    Pair q = pair_at(g, p);
    typename F::T ct, st;
    cos_sin_entry<F>(angle(inv_freq[q.i], pos[cs_row(g, q.r)]), af, &ct, &st);
    rotate<F>(x[q.i1], x[q.i2], ct, st, sgn, &y[q.i1], &y[q.i2]);
}

}  // namespace repro_rope

#if defined(__CUDACC__) || defined(REPRO_EMULATED_DEVICE)

// Arguments: x, cos, sin (contiguous, at their start offsets), y (contiguous output), then
// the geometry and sgn (+1 forward, -1 backward). One thread per pair, grid-stride loop.
#define REPRO_ROPE_KERNEL(FMT, SUFFIX)                                                        \
    extern "C" __global__ void __launch_bounds__(ROPE_BLOCK) repro_rope_##SUFFIX(            \
        const repro::FMT::T* x, const repro::FMT::T* cos, const repro::FMT::T* sin,           \
        repro::FMT::T* y, uint32_t layout, uint64_t b, uint64_t h, uint64_t t, uint64_t d,    \
        uint64_t cs_t, uint32_t batched, double sgn) {                                        \
        repro_rope::Geometry g;                                                               \
        g.layout = layout;                                                                    \
        g.b = b;                                                                              \
        g.h = h;                                                                              \
        g.t = t;                                                                              \
        g.d = d;                                                                              \
        g.cs_t = cs_t;                                                                        \
        g.batched = batched;                                                                  \
        uint64_t pairs = b * h * t * (d / 2);                                                 \
        uint64_t step = (uint64_t)blockDim.x * gridDim.x;                                     \
        for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; p < pairs;         \
             p += step) {                                                                     \
            repro_rope::rope_pair<repro::FMT>(g, p, x, cos, sin, y, sgn);                     \
        }                                                                                     \
    }

REPRO_ROPE_KERNEL(F32, f32)
REPRO_ROPE_KERNEL(BF16, bf16)
REPRO_ROPE_KERNEL(F16, f16)

// Fused: x, positions (u32, t or b*t values), inv_freq (d/2 floats), af, y, geometry
// (cs_t = t), sgn. cos/sin computed per pair in the kernel (no table read).
#define REPRO_ROPE_FUSED_KERNEL(FMT, SUFFIX)                                                  \
    extern "C" __global__ void __launch_bounds__(ROPE_BLOCK) repro_rope_fused_##SUFFIX(      \
        const repro::FMT::T* x, const uint32_t* pos, const float* inv_freq, float af,         \
        repro::FMT::T* y, uint32_t layout, uint64_t b, uint64_t h, uint64_t t, uint64_t d,    \
        uint32_t batched, double sgn) {                                                       \
        repro_rope::Geometry g;                                                               \
        g.layout = layout;                                                                    \
        g.b = b;                                                                              \
        g.h = h;                                                                              \
        g.t = t;                                                                              \
        g.d = d;                                                                              \
        g.cs_t = t;                                                                           \
        g.batched = batched;                                                                  \
        uint64_t pairs = b * h * t * (d / 2);                                                 \
        uint64_t step = (uint64_t)blockDim.x * gridDim.x;                                     \
        for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; p < pairs;         \
             p += step) {                                                                     \
            repro_rope::rope_fused_pair<repro::FMT>(g, p, x, pos, inv_freq, af, y, sgn);      \
        }                                                                                     \
    }

REPRO_ROPE_FUSED_KERNEL(F32, f32)
REPRO_ROPE_FUSED_KERNEL(BF16, bf16)
REPRO_ROPE_FUSED_KERNEL(F16, f16)

#endif
