// Host driver of the softmax device math (kernels/softmax_math.cuh), compiled as plain C++
// with -ffp-contract=off by tests/softmax_cuda_hostcheck.rs. It runs each row exactly as a
// block of the kernel in kernels/softmax.cu does: T "threads" over strided elements, their
// partial maxima, counts and exact sums combined, then the outputs. T comes from the command
// line so the test can show that the thread count changes nothing.
//
// argv: T, mode ("softmax", "stats" or "logout").
// stdin: u32 format (0 f32, 1 bf16, 2 f16), u64 rows, u64 n, then rows * n values (4 or 2
// bytes each), then for "logout" rows * 4 f64 parameters (the host step's output).
// stdout: "softmax" and "logout": rows * n outputs in the same format; "stats": rows * 8 u64
// (the stats kernel's output).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "softmax_math.cuh"

using namespace repro;
using namespace repro::softmax;

template <class F>
static void row(const typename F::T* x, size_t n, size_t T, typename F::T* o) {
    float m = f32_from_bits(0xFF800000u);
    for (size_t t = 0; t < T; t++) {
        float a = max_partial<F>(x, n, t, T);
        m = a > m ? a : m;
    }
    if (!is_finite_f32(m)) {
        unsigned long long k = 0, le = 0;
        for (size_t t = 0; t < T; t++) {
            unsigned long long a, b;
            count_partial<F>(x, n, m, t, T, &a, &b);
            k += a;
            le += b;
        }
        typename F::T on, off;
        softmax_special<F>(le != (unsigned long long)n, m, k, &on, &off);
        for (size_t i = 0; i < n; i++) o[i] = F::to_f32(x[i]) == f32_from_bits(0x7F800000u) ? on : off;
        return;
    }
    // Combine the threads' partial sums in reverse order (any order gives the same total).
    Partial total = partial_zero();
    for (size_t t = T; t-- > 0;) total = merge(total, sum_partial<F>(x, n, m, t, T));
    if (total.nan) {
        typename F::T q = F::round(f64_from_bits(0x7FF8000000000000ULL));
        for (size_t i = 0; i < n; i++) o[i] = q;
        return;
    }
    double r = softmax_recip(total);
    for (size_t i = 0; i < n; i++) o[i] = softmax_value<F>(F::to_f32(x[i]), m, r);
}

// The stats kernel's work for one row (log_softmax_stats in kernels/softmax.cu).
template <class F>
static void stats_row(const typename F::T* x, size_t n, size_t T, unsigned long long* st) {
    float m = f32_from_bits(0xFF800000u);
    for (size_t t = 0; t < T; t++) {
        float a = max_partial<F>(x, n, t, T);
        m = a > m ? a : m;
    }
    unsigned long long k = 0, le = 0;
    float x2 = f32_from_bits(0xFF800000u);
    for (size_t t = 0; t < T; t++) {
        unsigned long long a, b;
        float c;
        count2_partial<F>(x, n, m, t, T, &a, &b, &c);
        k += a;
        le += b;
        x2 = c > x2 ? c : x2;
    }
    bool special = le != (unsigned long long)n || !is_finite_f32(m);
    int32_t se = special ? 0 : log_scale_exp(m, x2);
    Partial total = partial_zero();
    if (!special) {
        for (size_t t = T; t-- > 0;) total = merge(total, log_sum_partial<F>(x, n, m, pow2(-se), t, T));
    }
    unsigned __int128 hi = (unsigned __int128)total.hi, lo = (unsigned __int128)total.lo;
    st[0] = f32_to_bits(m);
    st[1] = k;
    st[2] = le;
    st[3] = (unsigned long long)(long long)se;
    st[4] = (unsigned long long)hi;
    st[5] = (unsigned long long)(hi >> 64);
    st[6] = (unsigned long long)lo;
    st[7] = (unsigned long long)(lo >> 64);
}

// The out kernel's work for one row (log_softmax_out in kernels/softmax.cu).
template <class F>
static void logout_row(const typename F::T* x, size_t n, const double* pr, typename F::T* o) {
    float m = (float)pr[3];
    if (pr[0] != 0.0) {
        typename F::T on = F::round(pr[1]), off = F::round(pr[2]);
        for (size_t i = 0; i < n; i++) o[i] = F::to_f32(x[i]) == f32_from_bits(0x7F800000u) ? on : off;
    } else {
        DD l = DD::make(pr[1], pr[2]);
        for (size_t i = 0; i < n; i++) o[i] = log_softmax_value<F>(F::to_f32(x[i]), m, l);
    }
}

template <class F>
static int run(size_t rows, size_t n, size_t T, const char* mode) {
    std::vector<typename F::T> x(rows * n), o(rows * n);
    if (fread(x.data(), sizeof(typename F::T), x.size(), stdin) != x.size()) return 2;
    if (strcmp(mode, "stats") == 0) {
        std::vector<unsigned long long> st(rows * 8);
        for (size_t r = 0; r < rows; r++) stats_row<F>(x.data() + r * n, n, T, st.data() + r * 8);
        fwrite(st.data(), 8, st.size(), stdout);
        return 0;
    }
    if (strcmp(mode, "logout") == 0) {
        std::vector<double> pr(rows * 4);
        if (fread(pr.data(), 8, pr.size(), stdin) != pr.size()) return 2;
        for (size_t r = 0; r < rows; r++) logout_row<F>(x.data() + r * n, n, pr.data() + r * 4, o.data() + r * n);
    } else {
        for (size_t r = 0; r < rows; r++) row<F>(x.data() + r * n, n, T, o.data() + r * n);
    }
    fwrite(o.data(), sizeof(typename F::T), o.size(), stdout);
    return 0;
}

int main(int argc, char** argv) {
    size_t T = argc > 1 ? (size_t)atol(argv[1]) : 256;
    const char* mode = argc > 2 ? argv[2] : "softmax";
    uint32_t fmt;
    uint64_t rows, n;
    if (fread(&fmt, 4, 1, stdin) != 1 || fread(&rows, 8, 1, stdin) != 1 || fread(&n, 8, 1, stdin) != 1)
        return 2;
    switch (fmt) {
        case 0: return run<F32>(rows, n, T, mode);
        case 1: return run<BF16>(rows, n, T, mode);
        case 2: return run<F16>(rows, n, T, mode);
    }
    return 3;
}
