// Rotary embedding kernels: rope (halves), rope_i (interleaved), rope_thd, forward and
// backward, f32 / bf16 / f16, from tables or fused (positions in, cos/sin computed here with
// the device trig mirror, kernels/math/trig.cuh). The mirror of src/rope/apply.rs: the same arithmetic in the
// same order, so a CUDA tensor gets the bits of a CPU tensor.
//
// Scheme (see src/rope/apply.rs): inputs widened exactly to double; the products x1*c and
// x2*s are exact in double; TwoSum gives the exact sum s + e; s is rounded to odd with e;
// one final rounding to the dtype (repro::F32/BF16/F16::round). Every output is the exact
// x1*c - x2*s (x1*s + x2*c) of the stored inputs rounded once. Built with --fmad=false like
// every kernel here; with exact products a contraction could not change a bit anyway.
//
// The arithmetic and the index computation (rope_pair) are plain RM_FN functions; the
// whole file runs on the emulated device (tools/cuda-emu, tests/emulated_device.rs) for the
// bit comparison with the Rust kernel.
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

// Pair p (0 <= p < numel / 2): row p / (d/2), index i = p % (d/2) in the row.
template <class F>
RM_FN void rope_pair(const Geometry& g, uint64_t p, const typename F::T* x,
                     const typename F::T* cos, const typename F::T* sin, typename F::T* y,
                     double sgn) {
    uint64_t half = g.d / 2;
    uint64_t r = p / half;
    uint64_t i = p % half;
    uint64_t base = r * g.d;
    uint64_t i1, i2;
    if (g.layout == 1) {
        i1 = base + 2 * i;
        i2 = i1 + 1;
    } else {
        i1 = base + i;
        i2 = i1 + half;
    }
    uint64_t k = cs_row(g, r) * half + i;
    double a = (double)F::to_f32(x[i1]);
    double b = (double)F::to_f32(x[i2]);
    double c = (double)F::to_f32(cos[k]);
    double s = (double)F::to_f32(sin[k]) * sgn;
    y[i1] = sum_cr<F>(a * c, -(b * s));
    y[i2] = sum_cr<F>(a * s, b * c);
}

// Mirror of src/rope/tables.rs `cos_sin_entry`: (cos(a) * af, sin(a) * af) each rounded
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
    uint64_t half = g.d / 2;
    uint64_t r = p / half;
    uint64_t i = p % half;
    uint64_t base = r * g.d;
    uint64_t i1, i2;
    if (g.layout == 1) {
        i1 = base + 2 * i;
        i2 = i1 + 1;
    } else {
        i1 = base + i;
        i2 = i1 + half;
    }
    float angle = inv_freq[i] * (float)pos[cs_row(g, r)];
    typename F::T ct, st;
    cos_sin_entry<F>(angle, af, &ct, &st);
    double a = (double)F::to_f32(x[i1]);
    double b = (double)F::to_f32(x[i2]);
    double c = (double)F::to_f32(ct);
    double s = (double)F::to_f32(st) * sgn;
    y[i1] = sum_cr<F>(a * c, -(b * s));
    y[i2] = sum_cr<F>(a * s, b * c);
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
