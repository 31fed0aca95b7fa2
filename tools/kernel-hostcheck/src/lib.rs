//! The CUDA device math header `kernels/repro_math.cuh`, compiled as host C++ with
//! `-ffp-contract=off` (see build.rs), exposed as Rust functions on bit patterns. Test
//! support for `tests/cuda_host_crosscheck.rs`: the same source text that nvcc compiles for
//! the GPU, compared bit for bit with the Rust math of `candle-repro`.

/// candle-repro's `src/math`, compiled into this crate too: its `CrUnary` trait is
/// `pub(crate)` there, and the cross-check compares the parts of each function (fast path,
/// domain, accurate path), not only the rounded outputs. Same source, same profile.
#[allow(dead_code, unused_imports, unreachable_pub, clippy::all)]
#[path = "../../../src/math/mod.rs"]
mod math;

use math::unary::CrUnary;

/// The members of one Rust `CrUnary` implementation.
#[derive(Clone, Copy)]
pub struct RustParts {
    pub fast_rel_err: f64,
    pub in_fast_domain: fn(f32) -> bool,
    pub fast: fn(f32) -> f64,
    pub accurate: fn(f32) -> f64,
}

fn parts_of<U: CrUnary>() -> RustParts {
    RustParts {
        fast_rel_err: U::FAST_REL_ERR,
        in_fast_domain: U::in_fast_domain,
        // The CUDA mirror fuses its multiply-adds (`fma_f64`): the fused flavour.
        fast: U::fast::<true>,
        accurate: U::accurate,
    }
}

/// The Rust parts of the function named `name` (`exp`, `log`, ...).
pub fn rust_parts(name: &str) -> Option<RustParts> {
    use math::{exp, log, sigmoid, softplus, tanh, trig};
    Some(match name {
        "exp" => parts_of::<exp::Exp>(),
        "expm1" => parts_of::<exp::Expm1>(),
        "log" => parts_of::<log::Log>(),
        "log1p" => parts_of::<log::Log1p>(),
        "sin" => parts_of::<trig::Sin>(),
        "cos" => parts_of::<trig::Cos>(),
        "tanh" => parts_of::<tanh::Tanh>(),
        "sigmoid" => parts_of::<sigmoid::Sigmoid>(),
        "silu" => parts_of::<sigmoid::Silu>(),
        "softplus" => parts_of::<softplus::Softplus>(),
        _ => return None,
    })
}

/// One function of the device math, as entry points on bit patterns.
#[derive(Clone, Copy)]
pub struct DeviceFn {
    /// The kernel name (`exp`, `log`, ...), as in `REPRO_FOR_EACH_UNARY`.
    pub name: &'static str,
    /// f(x) correctly rounded to f32, on f32 bits.
    pub f32: fn(u32) -> u32,
    /// f(x) correctly rounded to bf16, on bf16 bits.
    pub bf16: fn(u16) -> u16,
    /// f(x) correctly rounded to f16, on f16 bits.
    pub f16: fn(u16) -> u16,
    /// The f32 function over a slice (one foreign call for many inputs).
    pub f32_batch: fn(&[u32], &mut [u32]),
    /// Bits of `fast_rel_err()` (the Rust `CrUnary::FAST_REL_ERR`).
    pub fast_rel_err: fn() -> u64,
    /// For each f32 (bits): `in_fast_domain(x)` and the bits of `fast(x)`.
    pub fast_batch: fn(&[u32], &mut [bool], &mut [u64]),
    /// Bits of `accurate(x)` (f32 bits in).
    pub accurate: fn(u32) -> u64,
}

macro_rules! device_fns {
    ($($name:literal => $f32:ident, $bf16:ident, $f16:ident, $batch:ident,
       $err:ident, $fast:ident, $acc:ident;)*) => {
        unsafe extern "C" {
            $(
                fn $f32(x: u32) -> u32;
                fn $bf16(x: u16) -> u16;
                fn $f16(x: u16) -> u16;
                fn $batch(x: *const u32, out: *mut u32, n: usize);
                fn $err() -> u64;
                fn $fast(x: *const u32, in_domain: *mut u8, fast: *mut u64, n: usize);
                fn $acc(x: u32) -> u64;
            )*
        }

        /// Every function of the header, in `REPRO_FOR_EACH_UNARY` order.
        pub const ALL: &[DeviceFn] = &[$(
            DeviceFn {
                name: $name,
                // SAFETY: pure functions on plain integers.
                f32: |x| unsafe { $f32(x) },
                bf16: |x| unsafe { $bf16(x) },
                f16: |x| unsafe { $f16(x) },
                f32_batch: |x, out| {
                    assert_eq!(x.len(), out.len(), "batch slices differ in length");
                    // SAFETY: both slices hold x.len() elements.
                    unsafe { $batch(x.as_ptr(), out.as_mut_ptr(), x.len()) }
                },
                fast_rel_err: || unsafe { $err() },
                fast_batch: |x, dom, fast| {
                    assert!(x.len() == dom.len() && x.len() == fast.len());
                    let mut d = vec![0u8; x.len()];
                    // SAFETY: all three buffers hold x.len() elements.
                    unsafe { $fast(x.as_ptr(), d.as_mut_ptr(), fast.as_mut_ptr(), x.len()) }
                    for (o, v) in dom.iter_mut().zip(d) {
                        *o = v != 0;
                    }
                },
                accurate: |x| unsafe { $acc(x) },
            },
        )*];
    };
}

device_fns! {
    "exp" => rm_exp_f32, rm_exp_bf16, rm_exp_f16, rm_exp_f32_batch,
        rm_exp_fast_rel_err, rm_exp_fast_batch, rm_exp_accurate;
    "expm1" => rm_expm1_f32, rm_expm1_bf16, rm_expm1_f16, rm_expm1_f32_batch,
        rm_expm1_fast_rel_err, rm_expm1_fast_batch, rm_expm1_accurate;
    "log" => rm_log_f32, rm_log_bf16, rm_log_f16, rm_log_f32_batch,
        rm_log_fast_rel_err, rm_log_fast_batch, rm_log_accurate;
    "log1p" => rm_log1p_f32, rm_log1p_bf16, rm_log1p_f16, rm_log1p_f32_batch,
        rm_log1p_fast_rel_err, rm_log1p_fast_batch, rm_log1p_accurate;
    "sin" => rm_sin_f32, rm_sin_bf16, rm_sin_f16, rm_sin_f32_batch,
        rm_sin_fast_rel_err, rm_sin_fast_batch, rm_sin_accurate;
    "cos" => rm_cos_f32, rm_cos_bf16, rm_cos_f16, rm_cos_f32_batch,
        rm_cos_fast_rel_err, rm_cos_fast_batch, rm_cos_accurate;
    "tanh" => rm_tanh_f32, rm_tanh_bf16, rm_tanh_f16, rm_tanh_f32_batch,
        rm_tanh_fast_rel_err, rm_tanh_fast_batch, rm_tanh_accurate;
    "sigmoid" => rm_sigmoid_f32, rm_sigmoid_bf16, rm_sigmoid_f16, rm_sigmoid_f32_batch,
        rm_sigmoid_fast_rel_err, rm_sigmoid_fast_batch, rm_sigmoid_accurate;
    "silu" => rm_silu_f32, rm_silu_bf16, rm_silu_f16, rm_silu_f32_batch,
        rm_silu_fast_rel_err, rm_silu_fast_batch, rm_silu_accurate;
    "softplus" => rm_softplus_f32, rm_softplus_bf16, rm_softplus_f16, rm_softplus_f32_batch,
        rm_softplus_fast_rel_err, rm_softplus_fast_batch, rm_softplus_accurate;
}

/// The function named `name`.
pub fn by_name(name: &str) -> Option<DeviceFn> {
    ALL.iter().copied().find(|f| f.name == name)
}

/// The FFT kernels of `kernels/fft.cu` on the host (`src/fft_shim.cpp`: the kernels'
/// per-thread bodies, `kernels/fft/threads.cuh`, run for every thread index of a launch):
/// test support for `tests/fft_kernel_hostcheck.rs`. Buffers are split (re, im) rows of the
/// working type, f32 or f64 ([`fft::Real`]); the arguments are the kernels' own.
pub mod fft {
    use std::ffi::c_void;

    unsafe extern "C" {
        fn rm_fft_deinterleave(
            f64: i32,
            total: usize,
            inverse: i32,
            inp: *const f32,
            re: *mut c_void,
            im: *mut c_void,
        );
        fn rm_fft_interleave(
            f64: i32,
            total: usize,
            inverse: i32,
            re: *const c_void,
            im: *const c_void,
            out: *mut f32,
        );
        fn rm_fft_stockham(
            f64: i32,
            radix: i32,
            total: usize,
            len: usize,
            ns: usize,
            sr: *const c_void,
            si: *const c_void,
            dr: *mut c_void,
            di: *mut c_void,
            tr: *const c_void,
            ti: *const c_void,
        ) -> i32;
        fn rm_fft_stockham8_ozaki(
            total: usize,
            len: usize,
            ns: usize,
            sr: *const f32,
            si: *const f32,
            dr: *mut f32,
            di: *mut f32,
            tr: *const f32,
            ti: *const f32,
            w8: *const f32,
        );
        fn rm_fft_gemm(
            f64: i32,
            total: usize,
            n: i32,
            xr: *const c_void,
            xi: *const c_void,
            yr: *mut c_void,
            yi: *mut c_void,
            wr: *const c_void,
            wi: *const c_void,
        );
        fn rm_fft_gemm_ozaki(
            total: usize,
            n: i32,
            xr: *const f32,
            xi: *const f32,
            yr: *mut f32,
            yi: *mut f32,
            digits: *const f32,
        );
        fn rm_fft_bluestein_in(
            f64: i32,
            total: usize,
            n: usize,
            m: usize,
            xr: *const c_void,
            xi: *const c_void,
            ar: *mut c_void,
            ai: *mut c_void,
            cr: *const c_void,
            ci: *const c_void,
        );
        fn rm_fft_bluestein_mul(
            f64: i32,
            total: usize,
            m: usize,
            ar: *mut c_void,
            ai: *mut c_void,
            kr: *const c_void,
            ki: *const c_void,
        );
        fn rm_fft_bluestein_out(
            f64: i32,
            total: usize,
            n: usize,
            m: usize,
            ar: *const c_void,
            ai: *const c_void,
            xr: *mut c_void,
            xi: *mut c_void,
            cr: *const c_void,
            ci: *const c_void,
        );
        fn rm_fft_op_scale(total: usize, has_d: i32, d: f32, inp: *const f32, out: *mut f32);
        fn rm_fft_op_real_to_complex(total: usize, inp: *const f32, out: *mut f32);
        fn rm_fft_op_take_half(
            total: usize,
            n: usize,
            half: usize,
            has_d: i32,
            d: f32,
            inp: *const f32,
            out: *mut f32,
        );
        fn rm_fft_op_hermitian(total: usize, m: usize, n: usize, inp: *const f32, out: *mut f32);
        fn rm_fft_op_real_part(total: usize, has_d: i32, d: f32, inp: *const f32, out: *mut f32);
    }

    /// A working type of the kernels.
    pub trait Real: Copy + Default {
        const IS_F64: i32;
    }
    impl Real for f32 {
        const IS_F64: i32 = 0;
    }
    impl Real for f64 {
        const IS_F64: i32 = 1;
    }

    /// A split (re, im) buffer.
    pub struct Split<T> {
        pub re: Vec<T>,
        pub im: Vec<T>,
    }

    impl<T: Real> Split<T> {
        pub fn zeros(len: usize) -> Self {
            Split {
                re: vec![T::default(); len],
                im: vec![T::default(); len],
            }
        }
    }

    fn cp<T>(v: &[T]) -> *const c_void {
        v.as_ptr().cast()
    }
    fn mp<T>(v: &mut [T]) -> *mut c_void {
        v.as_mut_ptr().cast()
    }

    /// `repro_fft_deinterleave_*`: `inp` holds `total` interleaved complex values.
    pub fn deinterleave<T: Real>(inverse: bool, inp: &[f32], dst: &mut Split<T>) {
        let total = inp.len() / 2;
        assert!(dst.re.len() >= total && dst.im.len() >= total);
        // SAFETY: inp holds 2 total f32, dst total values of T each.
        unsafe {
            rm_fft_deinterleave(
                T::IS_F64,
                total,
                inverse as i32,
                inp.as_ptr(),
                mp(&mut dst.re),
                mp(&mut dst.im),
            )
        }
    }

    /// `repro_fft_interleave_*`: `out` receives `total` interleaved complex values.
    pub fn interleave<T: Real>(inverse: bool, src: &Split<T>, out: &mut [f32]) {
        let total = out.len() / 2;
        assert!(src.re.len() >= total && src.im.len() >= total);
        // SAFETY: src holds total values of T per part, out 2 total f32.
        unsafe {
            rm_fft_interleave(
                T::IS_F64,
                total,
                inverse as i32,
                cp(&src.re),
                cp(&src.im),
                out.as_mut_ptr(),
            )
        }
    }

    /// `repro_fft_stockham<R>_*`: one stage over `rows` rows of `len`; `tw` the stage's
    /// twiddles, re then im, (R - 1) ns each (ignored when ns = 1).
    #[allow(clippy::too_many_arguments)]
    pub fn stockham<T: Real>(
        radix: usize,
        rows: usize,
        len: usize,
        ns: usize,
        src: &Split<T>,
        dst: &mut Split<T>,
        tw_re: &[T],
        tw_im: &[T],
    ) {
        let total = rows * len / radix;
        assert!(src.re.len() >= rows * len && dst.re.len() >= rows * len);
        assert!(ns == 1 || (tw_re.len() >= (radix - 1) * ns && tw_im.len() >= (radix - 1) * ns));
        // SAFETY: buffer lengths checked above; the kernel reads src and tw, writes dst.
        let rc = unsafe {
            rm_fft_stockham(
                T::IS_F64,
                radix as i32,
                total,
                len,
                ns,
                cp(&src.re),
                cp(&src.im),
                mp(&mut dst.re),
                mp(&mut dst.im),
                cp(tw_re),
                cp(tw_im),
            )
        };
        assert_eq!(rc, 0, "radix {radix}");
    }

    /// `repro_fft_stockham8_ozaki`: a radix-8 stage with the sliced W8 product.
    #[allow(clippy::too_many_arguments)]
    pub fn stockham8_ozaki(
        rows: usize,
        len: usize,
        ns: usize,
        src: &Split<f32>,
        dst: &mut Split<f32>,
        tw_re: &[f32],
        tw_im: &[f32],
        w8_digits: &[f32],
    ) {
        assert!(src.re.len() >= rows * len && dst.re.len() >= rows * len);
        assert!(ns == 1 || (tw_re.len() >= 7 * ns && tw_im.len() >= 7 * ns));
        assert!(w8_digits.len() >= 4 * 256);
        // SAFETY: lengths checked above.
        unsafe {
            rm_fft_stockham8_ozaki(
                rows * len / 8,
                len,
                ns,
                src.re.as_ptr(),
                src.im.as_ptr(),
                dst.re.as_mut_ptr(),
                dst.im.as_mut_ptr(),
                tw_re.as_ptr(),
                tw_im.as_ptr(),
                w8_digits.as_ptr(),
            )
        }
    }

    /// `repro_fft_gemm_*`: rows of n, W re then im (n x n each).
    pub fn gemm<T: Real>(
        rows: usize,
        n: usize,
        src: &Split<T>,
        dst: &mut Split<T>,
        w_re: &[T],
        w_im: &[T],
    ) {
        assert!(src.re.len() >= rows * n && dst.re.len() >= rows * n);
        assert!(w_re.len() >= n * n && w_im.len() >= n * n && n <= 16);
        // SAFETY: lengths checked above.
        unsafe {
            rm_fft_gemm(
                T::IS_F64,
                rows * n,
                n as i32,
                cp(&src.re),
                cp(&src.im),
                mp(&mut dst.re),
                mp(&mut dst.im),
                cp(w_re),
                cp(w_im),
            )
        }
    }

    /// `repro_fft_gemm_ozaki`: rows of n, SLICES digit matrices of 2n x 2n.
    pub fn gemm_ozaki(
        rows: usize,
        n: usize,
        src: &Split<f32>,
        dst: &mut Split<f32>,
        digits: &[f32],
    ) {
        assert!(src.re.len() >= rows * n && dst.re.len() >= rows * n);
        assert!(digits.len() >= 4 * 4 * n * n && n <= 16);
        // SAFETY: lengths checked above.
        unsafe {
            rm_fft_gemm_ozaki(
                rows * 2 * n,
                n as i32,
                src.re.as_ptr(),
                src.im.as_ptr(),
                dst.re.as_mut_ptr(),
                dst.im.as_mut_ptr(),
                digits.as_ptr(),
            )
        }
    }

    /// `repro_fft_bluestein_in_*`: rows of n in, rows of m out; chirp re, im (n each).
    #[allow(clippy::too_many_arguments)]
    pub fn bluestein_in<T: Real>(
        rows: usize,
        n: usize,
        m: usize,
        src: &Split<T>,
        dst: &mut Split<T>,
        chirp_re: &[T],
        chirp_im: &[T],
    ) {
        assert!(src.re.len() >= rows * n && dst.re.len() >= rows * m);
        assert!(chirp_re.len() >= n && chirp_im.len() >= n);
        // SAFETY: lengths checked above.
        unsafe {
            rm_fft_bluestein_in(
                T::IS_F64,
                rows * m,
                n,
                m,
                cp(&src.re),
                cp(&src.im),
                mp(&mut dst.re),
                mp(&mut dst.im),
                cp(chirp_re),
                cp(chirp_im),
            )
        }
    }

    /// `repro_fft_bluestein_mul_*`: in place on rows of m; kernel re, im (m each).
    pub fn bluestein_mul<T: Real>(
        rows: usize,
        m: usize,
        buf: &mut Split<T>,
        k_re: &[T],
        k_im: &[T],
    ) {
        assert!(buf.re.len() >= rows * m && k_re.len() >= m && k_im.len() >= m);
        // SAFETY: lengths checked above.
        unsafe {
            rm_fft_bluestein_mul(
                T::IS_F64,
                rows * m,
                m,
                mp(&mut buf.re),
                mp(&mut buf.im),
                cp(k_re),
                cp(k_im),
            )
        }
    }

    /// `repro_fft_bluestein_out_*`: rows of m in, rows of n out; chirp re, im (n each).
    #[allow(clippy::too_many_arguments)]
    pub fn bluestein_out<T: Real>(
        rows: usize,
        n: usize,
        m: usize,
        src: &Split<T>,
        dst: &mut Split<T>,
        chirp_re: &[T],
        chirp_im: &[T],
    ) {
        assert!(src.re.len() >= rows * m && dst.re.len() >= rows * n);
        assert!(chirp_re.len() >= n && chirp_im.len() >= n);
        // SAFETY: lengths checked above.
        unsafe {
            rm_fft_bluestein_out(
                T::IS_F64,
                rows * n,
                n,
                m,
                cp(&src.re),
                cp(&src.im),
                mp(&mut dst.re),
                mp(&mut dst.im),
                cp(chirp_re),
                cp(chirp_im),
            )
        }
    }

    /// The op kernels of `kernels/fft.cu` around the transform (src/ops/fft.rs): the
    /// divisor `d` is `None` for unscaled outputs.
    pub mod op {
        fn d_args(d: Option<f32>) -> (i32, f32) {
            (d.is_some() as i32, d.unwrap_or(1.0))
        }

        /// `repro_fft_op_scale`: every value v / d, NaN canonical.
        pub fn scale(d: Option<f32>, inp: &[f32]) -> Vec<f32> {
            let mut out = vec![0f32; inp.len()];
            let (h, d) = d_args(d);
            // SAFETY: both buffers hold inp.len() values.
            unsafe { super::rm_fft_op_scale(inp.len(), h, d, inp.as_ptr(), out.as_mut_ptr()) }
            out
        }

        /// `repro_fft_op_real_to_complex`: real values -> interleaved (v, +0).
        pub fn real_to_complex(inp: &[f32]) -> Vec<f32> {
            let mut out = vec![0f32; 2 * inp.len()];
            // SAFETY: out holds 2 inp.len() values.
            unsafe { super::rm_fft_op_real_to_complex(inp.len(), inp.as_ptr(), out.as_mut_ptr()) }
            out
        }

        /// `repro_fft_op_take_half`: rows of n complex values -> their first n/2 + 1,
        /// scaled.
        pub fn take_half(n: usize, d: Option<f32>, inp: &[f32]) -> Vec<f32> {
            let rows = inp.len() / (2 * n);
            let half = n / 2 + 1;
            let mut out = vec![0f32; rows * 2 * half];
            let (h, d) = d_args(d);
            // SAFETY: inp holds rows 2n values, out rows 2 half.
            unsafe {
                super::rm_fft_op_take_half(
                    rows * half,
                    n,
                    half,
                    h,
                    d,
                    inp.as_ptr(),
                    out.as_mut_ptr(),
                )
            }
            out
        }

        /// `repro_fft_op_hermitian`: rows of m complex values -> full spectra of n.
        pub fn hermitian(m: usize, n: usize, inp: &[f32]) -> Vec<f32> {
            let rows = inp.len() / (2 * m);
            let mut out = vec![0f32; rows * 2 * n];
            // SAFETY: inp holds rows 2m values, out rows 2n.
            unsafe { super::rm_fft_op_hermitian(rows * n, m, n, inp.as_ptr(), out.as_mut_ptr()) }
            out
        }

        /// `repro_fft_op_real_part`: interleaved complex values -> real parts, scaled.
        pub fn real_part(d: Option<f32>, inp: &[f32]) -> Vec<f32> {
            let mut out = vec![0f32; inp.len() / 2];
            let (h, d) = d_args(d);
            // SAFETY: inp holds 2 out.len() values.
            unsafe { super::rm_fft_op_real_part(out.len(), h, d, inp.as_ptr(), out.as_mut_ptr()) }
            out
        }
    }
}

/// The matmul kernels' per-output code (`kernels/matmul/tiers.cuh` and the exact dot
/// products of `kernels/math/exact_dot.cuh`, driven as a thread of `kernels/matmul.cu`
/// drives them, see `src/matmul_shim.cpp`) on bit patterns: test support for
/// `tests/matmul_cuda_hostcheck.rs`.
pub mod matmul {
    unsafe extern "C" {
        fn rm_exact_dot(n: usize, a: *const f32, b: *const f32, has_bias: i32, bias: f32) -> u64;
        fn rm_dot2(n: usize, a: *const f32, b: *const f32, has_bias: i32, bias: f32) -> u64;
        fn rm_f8e4m3_to_f32(x: u8) -> u32;
        fn rm_f32_to_f8e4m3(x: u32, overflow: i32) -> u8;
    }

    macro_rules! products {
        ($($name:ident: $shim:ident, $in:ty, $out:ty;)*) => {
            unsafe extern "C" {
                $(
                    fn $shim(
                        m: u64, n: u64, k: u64, a: *const $in, b: *const $in, bias: *const $out,
                        has_bias: i32, exact_sums: i32, start_tier: i32, out: *mut $out,
                    );
                )*
            }
            $(
                /// Every output of the row-major (m, k) x (k, n) product (plus bias), as the
                /// kernel's threads compute them; `start_tier` 1 for all tiers, 2 or 3 to
                /// start there; `exact_sums` as the CPU sets it for f8e4m3 inputs.
                #[allow(clippy::too_many_arguments)]
                pub fn $name(
                    (m, k, n): (usize, usize, usize),
                    a: &[$in],
                    b: &[$in],
                    bias: Option<&[$out]>,
                    exact_sums: bool,
                    start_tier: i32,
                ) -> Vec<$out> {
                    assert!(a.len() >= m * k && b.len() >= k * n);
                    assert!(bias.is_none_or(|c| c.len() >= n));
                    let mut out: Vec<$out> = vec![Default::default(); m * n];
                    let (bp, has) = match bias {
                        Some(c) => (c.as_ptr(), 1),
                        None => (std::ptr::null(), 0),
                    };
                    // SAFETY: the slices hold what the sizes say (checked above).
                    unsafe {
                        $shim(
                            m as u64, n as u64, k as u64, a.as_ptr(), b.as_ptr(), bp, has,
                            exact_sums as i32, start_tier, out.as_mut_ptr(),
                        )
                    };
                    out
                }
            )*
        };
    }

    products! {
        f32_f32: rm_matmul_f32_f32, f32, f32;
        bf16_bf16: rm_matmul_bf16_bf16, u16, u16;
        f16_f16: rm_matmul_f16_f16, u16, u16;
        f8e4m3_f32: rm_matmul_f8e4m3_f32, u8, f32;
        f8e4m3_bf16: rm_matmul_f8e4m3_bf16, u8, u16;
    }

    fn bias_args(bias: Option<f32>) -> (i32, f32) {
        match bias {
            Some(c) => (1, c),
            None => (0, 0.0),
        }
    }

    /// `ExactDot` of the device code: the exact sum rounded to odd, as f64 bits.
    pub fn exact_dot(a: &[f32], b: &[f32], bias: Option<f32>) -> u64 {
        assert_eq!(a.len(), b.len());
        let (h, c) = bias_args(bias);
        // SAFETY: both slices hold a.len() values.
        unsafe { rm_exact_dot(a.len(), a.as_ptr(), b.as_ptr(), h, c) }
    }

    /// `dot2` of the device code, as f64 bits.
    pub fn dot2(a: &[f32], b: &[f32], bias: Option<f32>) -> u64 {
        assert_eq!(a.len(), b.len());
        let (h, c) = bias_args(bias);
        // SAFETY: both slices hold a.len() values.
        unsafe { rm_dot2(a.len(), a.as_ptr(), b.as_ptr(), h, c) }
    }

    /// The device widening of f8e4m3 bits, as f32 bits.
    pub fn f8e4m3_to_f32(x: u8) -> u32 {
        // SAFETY: a pure function.
        unsafe { rm_f8e4m3_to_f32(x) }
    }

    /// The device narrowing of f32 bits to f8e4m3 (`saturate`: +-448, else NaN).
    pub fn f32_to_f8e4m3(x: u32, saturate: bool) -> u8 {
        // SAFETY: a pure function.
        unsafe { rm_f32_to_f8e4m3(x, if saturate { 0 } else { 1 }) }
    }
}

/// The norm kernel (`kernels/norm.cu`, its rows run as blocks of `threads` "threads" by
/// `src/norm_shim.cpp`) on bit patterns: test support for `tests/norm_cuda_hostcheck.rs`.
pub mod norm {
    macro_rules! shims {
        ($($name:ident: $shim:ident, $t:ty;)*) => {
            unsafe extern "C" {
                $(
                    fn $shim(
                        rows: u64, n: u64, x: *const $t, w: *const $t, b: *const $t,
                        has_bias: i32, remove_mean: i32, eps: f32, exact_only: i32,
                        threads: u32, out: *mut $t,
                    );
                )*
            }
            $(
                /// The rows of length `n` of `x` normalized (LayerNorm if `remove_mean`).
                #[allow(clippy::too_many_arguments)]
                pub fn $name(
                    n: usize,
                    x: &[$t],
                    w: &[$t],
                    b: Option<&[$t]>,
                    remove_mean: bool,
                    eps: f32,
                    exact_only: bool,
                    threads: u32,
                ) -> Vec<$t> {
                    assert!(n > 0 && x.len() % n == 0 && w.len() == n);
                    assert!(b.is_none_or(|b| b.len() == n) && threads.is_power_of_two());
                    let mut out: Vec<$t> = vec![Default::default(); x.len()];
                    let (bp, has) = match b {
                        Some(b) => (b.as_ptr(), 1),
                        None => (w.as_ptr(), 0),
                    };
                    // SAFETY: the slices hold what the sizes say (checked above).
                    unsafe {
                        $shim(
                            (x.len() / n) as u64, n as u64, x.as_ptr(), w.as_ptr(), bp, has,
                            remove_mean as i32, eps, exact_only as i32, threads, out.as_mut_ptr(),
                        )
                    };
                    out
                }
            )*
        };
    }
    shims! {
        f32: rm_norm_f32, f32;
        bf16: rm_norm_bf16, u16;
        f16: rm_norm_f16, u16;
    }
}
