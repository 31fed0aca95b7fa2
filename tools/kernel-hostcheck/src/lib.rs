//! The CUDA device math header `kernels/math/all.cuh`, compiled as host C++ with
//! `-ffp-contract=off` (see build.rs), exposed as Rust functions on bit patterns. Test
//! support for `tests/cuda_host_crosscheck.rs`: the same source text that nvcc compiles for
//! the GPU, compared bit for bit with the Rust math of `candle-repro`.

/// The framework-free core's math: the cross-check compares the parts of each function
/// (fast path, domain, accurate path, through the doc-hidden `CrUnary`), not only the
/// rounded outputs.
use repro_core::math;

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

macro_rules! rust_parts_by_name {
    ($($name:ident $ty:ident in $family:ident: $doc:literal, $x:literal => $bits:literal;)*) => {
        /// The Rust parts of the function named `name` (`exp`, `log`, ...).
        pub fn rust_parts(name: &str) -> Option<RustParts> {
            Some(match name {
                $(stringify!($name) => parts_of::<math::$family::$ty>(),)*
                _ => return None,
            })
        }
    };
}
repro_core::unary_functions!(rust_parts_by_name);

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

/// Declares the shim's entry points (`rm_<name>_f32`, ... of `src/shim.cpp`) for every
/// function of the crate's list and collects them in `ALL`. The C++ side defines them from
/// `REPRO_FOR_EACH_UNARY`; tests/cuda_constants.rs checks that both lists agree.
macro_rules! device_fns {
    ($($name:ident $ty:ident in $family:ident: $doc:literal, $x:literal => $bits:literal;)*) => {
        paste::paste! { device_fns! { @entries $(
            stringify!($name) => [<rm_ $name _f32>], [<rm_ $name _bf16>], [<rm_ $name _f16>],
                [<rm_ $name _f32_batch>], [<rm_ $name _fast_rel_err>],
                [<rm_ $name _fast_batch>], [<rm_ $name _accurate>];
        )* } }
    };
    (@entries $($name:expr => $f32:ident, $bf16:ident, $f16:ident, $batch:ident,
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

repro_core::unary_functions!(device_fns);

/// The function named `name`.
pub fn by_name(name: &str) -> Option<DeviceFn> {
    ALL.iter().copied().find(|f| f.name == name)
}

/// The matmul kernels' math (the dot products of `kernels/math/exact_dot.cuh`, the
/// f8e4m3 conversions of `kernels/math/f8.cuh`; see `src/matmul_shim.cpp`) on bit
/// patterns: test support for `tests/matmul_cuda_hostcheck.rs`.
pub mod matmul {
    unsafe extern "C" {
        fn rm_exact_dot(n: usize, a: *const f32, b: *const f32, has_bias: i32, bias: f32) -> u64;
        fn rm_dot2(n: usize, a: *const f32, b: *const f32, has_bias: i32, bias: f32) -> u64;
        fn rm_f8e4m3_to_f32(x: u8) -> u32;
        fn rm_f32_to_f8e4m3(x: u32, overflow: i32) -> u8;
        fn rm_oz_slice_line(
            slices: i32,
            n: usize,
            x: *const f32,
            out: *mut i8,
            exps: *mut i32,
            tail: *mut f64,
        );
    }

    /// The integer tier's slicing of one line (`oz_slice_line` of `matmul/ozaki.cuh`, S =
    /// 4 or 6): the digits (block b's digit s of element q at (b S + s) 64 + q), each
    /// block's 8 E + L (exponent and level count) and the tail norm.
    pub fn oz_slice_line(slices: usize, x: &[f32]) -> (Vec<i8>, Vec<i32>, f64) {
        assert!(slices == 4 || slices == 6);
        let nb = x.len().div_ceil(64);
        let mut out = vec![0i8; nb * slices * 64];
        let mut exps = vec![0i32; nb];
        let mut tail = 0.0;
        // SAFETY: out holds nb S 64 digits and exps nb exponents, as the function writes.
        unsafe {
            rm_oz_slice_line(
                slices as i32,
                x.len(),
                x.as_ptr(),
                out.as_mut_ptr(),
                exps.as_mut_ptr(),
                &mut tail,
            )
        };
        (out, exps, tail)
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

/// The rounding test of the elementwise kernels and the fused RoPE angle
/// (`round_if_certain` of `kernels/math/round.cuh`; see `src/matmul_shim.cpp`): test
/// support for `tests/cuda_host_crosscheck.rs`.
pub mod round {
    unsafe extern "C" {
        fn rm_round_if_certain(format: i32, y: u64, err: u64, out: *mut u32) -> i32;
    }

    /// The output formats of the device code.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Format {
        F32 = 0,
        Bf16 = 1,
        F16 = 2,
    }

    /// `round_if_certain<F>(y, err)`: (the value's bits, whether every number within
    /// relative distance err of y rounds to it).
    pub fn round_if_certain(format: Format, y: f64, err: f64) -> (u32, bool) {
        let mut out = 0u32;
        // SAFETY: `out` is a valid u32 the function writes once.
        let ok =
            unsafe { rm_round_if_certain(format as i32, y.to_bits(), err.to_bits(), &mut out) };
        (out, ok != 0)
    }
}
