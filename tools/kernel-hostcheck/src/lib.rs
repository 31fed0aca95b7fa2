//! The CUDA device math header `kernels/repro_math.cuh`, compiled as host C++ with
//! `-ffp-contract=off` (see build.rs), exposed as Rust functions on bit patterns. Test
//! support for `tests/cuda_host_crosscheck.rs`: the same source text that nvcc compiles for
//! the GPU, compared bit for bit with the Rust math of `candle-repro`.

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
}

macro_rules! device_fns {
    ($($name:literal => $f32:ident, $bf16:ident, $f16:ident, $batch:ident;)*) => {
        unsafe extern "C" {
            $(
                fn $f32(x: u32) -> u32;
                fn $bf16(x: u16) -> u16;
                fn $f16(x: u16) -> u16;
                fn $batch(x: *const u32, out: *mut u32, n: usize);
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
            },
        )*];
    };
}

device_fns! {
    "exp" => rm_exp_f32, rm_exp_bf16, rm_exp_f16, rm_exp_f32_batch;
    "expm1" => rm_expm1_f32, rm_expm1_bf16, rm_expm1_f16, rm_expm1_f32_batch;
    "log" => rm_log_f32, rm_log_bf16, rm_log_f16, rm_log_f32_batch;
    "log1p" => rm_log1p_f32, rm_log1p_bf16, rm_log1p_f16, rm_log1p_f32_batch;
    "sin" => rm_sin_f32, rm_sin_bf16, rm_sin_f16, rm_sin_f32_batch;
    "cos" => rm_cos_f32, rm_cos_bf16, rm_cos_f16, rm_cos_f32_batch;
    "tanh" => rm_tanh_f32, rm_tanh_bf16, rm_tanh_f16, rm_tanh_f32_batch;
    "sigmoid" => rm_sigmoid_f32, rm_sigmoid_bf16, rm_sigmoid_f16, rm_sigmoid_f32_batch;
    "silu" => rm_silu_f32, rm_silu_bf16, rm_silu_f16, rm_silu_f32_batch;
    "softplus" => rm_softplus_f32, rm_softplus_bf16, rm_softplus_f16, rm_softplus_f32_batch;
}

/// The function named `name`.
pub fn by_name(name: &str) -> Option<DeviceFn> {
    ALL.iter().copied().find(|f| f.name == name)
}
