//! Correctly rounded elementwise math, with the same bits on every device.
//!
//! Every function here returns the exact mathematical result rounded once to nearest-even
//! in the output format: f32, bf16 or f16 (a 16-bit result is rounded from the internal
//! high-precision value directly, never through f32). Only IEEE-754 basic operations,
//! integer and bit operations and constant tables are used, in a fixed order. The fast
//! paths' multiply-adds are fused where the compiled copy has FMA instructions and
//! rounded twice where it does not (`madd.rs`), within the same error bound, so
//! the results are identical on every CPU (with or without FMA hardware, any vector width,
//! any thread count) and in the CUDA mirror under `kernels/`.
//!
//! Each family lives in its own file whose header gives the algorithm and its error bound:
//! [`exp`](mod@exp) (exp, expm1), [`log`](mod@log) (log, log1p, log10), [`trig`] (sin, cos,
//! sincos), [`tanh`](mod@tanh), [`sigmoid`](mod@sigmoid) (sigmoid, silu),
//! [`softplus`](mod@softplus), [`erf`](mod@erf) (erf, gelu_erf) and [`gelu`](mod@gelu)
//! (the tanh-approximation GELU). NaN outputs are the canonical quiet NaN of the format.
//!
//! ```
//! use repro_core::math;
//! use half::bf16;
//! // e rounded to the nearest f32 (the bits computed with mpmath).
//! assert_eq!(math::exp(1.0).to_bits(), 0x402D_F854);
//! // Special values follow C99 Annex F.
//! assert_eq!(math::log(0.0), f32::NEG_INFINITY);
//! assert!(math::sin(-0.0).is_sign_negative());
//! // One rounding from the exact value into bf16; the slice kernel gives the scalar bits.
//! let x = [bf16::from_f32(0.5), bf16::from_f32(-3.0)];
//! let mut y = [bf16::ZERO; 2];
//! math::tanh_slice(&x, &mut y);
//! assert_eq!(y, [math::tanh_bf16(x[0]), math::tanh_bf16(x[1])]);
//! ```

#[doc(hidden)]
pub mod bigint;
#[doc(hidden)]
pub mod dd;
pub mod erf;
pub mod exact_dot;
#[doc(hidden)]
pub mod exact_round;
#[doc(hidden)]
pub mod exact_sum;
pub mod exp;
pub mod f8;
/// The list of the correctly rounded unary functions (`unary_functions!`), shared by the
/// math entry points, the ops, the host check of the CUDA math and the test oracle.
#[doc(hidden)]
pub mod functions;
pub mod gelu;
pub mod grad;
pub mod log;
#[doc(hidden)]
pub mod madd;
#[doc(hidden)]
pub mod recip;
pub mod round;
pub mod sigmoid;
#[doc(hidden)]
pub mod simd;
pub mod softplus;
pub mod tanh;
pub mod trig;
#[doc(hidden)]
pub mod unary;
#[doc(hidden)]
pub mod vector;

pub use round::Format;
pub use vector::{VectorPath, force_vector_path};

use half::{bf16, f16};

/// Declares, for one function, the f32 / bf16 / f16 scalar entry points and the slice
/// kernels, all over the same [`unary::CrUnary`] implementation.
macro_rules! cr_function {
    ($name:ident, $imp:ty, $doc:literal) => {
        paste::paste! {
            #[doc = concat!($doc, ", correctly rounded to f32.")]
            #[inline]
            pub fn $name(x: f32) -> f32 {
                unary::eval::<$imp, f32>(x)
            }

            #[doc = concat!($doc, ", correctly rounded to bf16 (one rounding from the exact value).")]
            #[inline]
            pub fn [<$name _bf16>](x: bf16) -> bf16 {
                unary::eval::<$imp, bf16>(x.to_f32())
            }

            #[doc = concat!($doc, ", correctly rounded to f16 (one rounding from the exact value).")]
            #[inline]
            pub fn [<$name _f16>](x: f16) -> f16 {
                unary::eval::<$imp, f16>(round::f16_bits_to_f32(x.to_bits()))
            }

            #[doc = concat!($doc, " in any of the three formats (input and output), correctly rounded.")]
            #[inline]
            pub fn [<$name _in>]<T: Format>(x: T) -> T {
                unary::eval::<$imp, T>(x.to_f32())
            }

            #[doc = concat!($doc, " of every element of `x` into `out` (same length), with the widest vector path of this CPU; the same bits as the scalar function.")]
            pub fn [<$name _slice>]<T: Format>(x: &[T], out: &mut [T]) {
                unary::map_slice::<$imp, T>(x, out)
            }

            /// The slice kernel writing into uninitialized output slots (every one is written).
            pub fn [<$name _slice_uninit>]<T: Format>(x: &[T], out: &mut [std::mem::MaybeUninit<T>]) {
                unary::map_uninit::<$imp, T>(x, out)
            }

            #[doc = concat!("[`", stringify!($name), "_slice`] on a chosen vector path (for tests and benchmarks).")]
            pub fn [<$name _slice_with>]<T: Format>(path: VectorPath, x: &[T], out: &mut [T]) {
                unary::map_slice_with::<$imp, T>(path, x, out)
            }
        }
    };
}

/// Every function of the list, through [`cr_function!`].
macro_rules! cr_functions {
    ($($name:ident $ty:ident in $family:ident: $doc:literal, $x:literal => $bits:literal;)*) => {
        $(cr_function!($name, $family::$ty, $doc);)*
    };
}
crate::unary_functions!(cr_functions);

/// Sine and cosine of x, each correctly rounded to f32.
#[inline]
pub fn sincos(x: f32) -> (f32, f32) {
    (sin(x), cos(x))
}

/// Internals for the verification tools (`examples/hard_inputs.rs`, which searches each
/// fast path's hardest inputs): the fast paths and their proven bounds, by function name.
/// Not part of the API; may change at any time.
#[doc(hidden)]
pub mod probe {
    use super::unary::CrUnary;
    #[allow(unused_imports)]
    use super::{erf, exp, gelu, log, sigmoid, softplus, tanh, trig};

    /// A fast path: `Some(fast(x))` on its domain, `None` outside it.
    pub type FastFn = fn(f32) -> Option<f64>;

    macro_rules! probe_fns {
        ($($name:ident $ty:ident in $family:ident: $doc:literal, $x:literal => $bits:literal;)*) => {
            /// The function names, in the list's order.
            pub const NAMES: &[&str] = &[$(stringify!($name)),*];

            /// The fast path of `name`, in the unfused (`fused = false`: two roundings per
            /// multiply-add) or fused flavour, and its `FAST_REL_ERR`.
            pub fn fast_path(name: &str, fused: bool) -> Option<(FastFn, f64)> {
                match name {
                    $(stringify!($name) => {
                        type U = $family::$ty;
                        fn unfused(x: f32) -> Option<f64> {
                            U::in_fast_domain(x).then(|| U::fast::<false>(x))
                        }
                        fn fused_f(x: f32) -> Option<f64> {
                            #[cfg(target_arch = "x86_64")]
                            {
                                if std::is_x86_feature_detected!("fma") {
                                    #[target_feature(enable = "fma")]
                                    fn with_fma(x: f32) -> Option<f64> {
                                        U::in_fast_domain(x).then(|| U::fast::<true>(x))
                                    }
                                    // SAFETY: the CPU has FMA (checked above).
                                    return unsafe { with_fma(x) };
                                }
                            }
                            U::in_fast_domain(x).then(|| U::fast::<true>(x))
                        }
                        Some((if fused { fused_f } else { unfused }, U::FAST_REL_ERR))
                    })*
                    _ => None,
                }
            }
        };
    }
    crate::unary_functions!(probe_fns);
}
