//! Running one kernel on a chosen vector path: the kernel is written once and compiled once
//! per instruction set (with that set's target features), and [`runnable`] decides, in one
//! place for the whole crate, which copy runs: the one asked for, or the widest below it
//! that this CPU has. Every copy gives the same bits; the path only picks vector widths.
//!
//! Two ways to write the copies, one decision:
//! * [`run_on`]: the kernel is a struct generic over an instruction-set marker ([`Isa`])
//!   (the matmul, the FFT's Stockham stages);
//! * [`path_copies!`]: a function that takes its slices as parameters (the elementwise
//!   map, softmax's row passes, rope's rows). A kernel struct carries its slices as
//!   fields, which drops LLVM's `noalias` on them, and loops that write one slice while
//!   reading another then stop vectorizing (measured: exp 0.57 -> 2.9 ns per element on
//!   AVX2); as parameters of the compiled copy they keep it.
//!
//! The kernels must be `#[inline(always)]`, and so must everything they call that does
//! arithmetic (no closure in between): they are then compiled inside the
//! `#[target_feature]` copies, and the compiler vectorizes them for that width.

use crate::math::VectorPath;

/// An instruction-set marker: what the copy of a kernel compiled for it may assume.
pub(crate) trait Isa {
    /// Whether the copy fuses the multiply-adds it writes out (`crate::math::madd`).
    const FUSED: bool;
    /// The widest vector register, in bytes (kernels that pick explicit SIMD types).
    const VECTOR_BYTES: usize;
}

/// The target's baseline (SSE2 on x86-64, NEON on aarch64).
pub(crate) struct Baseline;
/// x86-64 AVX2 + FMA.
pub(crate) struct Avx2;
/// x86-64 AVX-512 (F, DQ, VL, BW) + AVX2 + FMA.
pub(crate) struct Avx512;

impl Isa for Baseline {
    const FUSED: bool = crate::math::madd::TARGET_FUSES;
    const VECTOR_BYTES: usize = 16;
}
impl Isa for Avx2 {
    const FUSED: bool = true;
    const VECTOR_BYTES: usize = 32;
}
impl Isa for Avx512 {
    const FUSED: bool = true;
    const VECTOR_BYTES: usize = 64;
}

/// A kernel with its arguments, run by [`run_on`].
pub(crate) trait PathKernel<Out> {
    /// The kernel on instruction set `I` (must be `#[inline(always)]`, see the module
    /// header).
    fn run<I: Isa>(self) -> Out;
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
fn run_avx512<Out, K: PathKernel<Out>>(k: K) -> Out {
    k.run::<Avx512>()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_avx2<Out, K: PathKernel<Out>>(k: K) -> Out {
    k.run::<Avx2>()
}

/// The path that runs when `path` is asked for: `path` itself, or the widest path below
/// it that this CPU has (`crate::math::unary::best_path`, which tests may cap). Only
/// x86-64 has paths above the baseline.
pub(crate) fn runnable(path: VectorPath) -> VectorPath {
    let best = crate::math::unary::best_path();
    match path {
        VectorPath::Avx512 if best == VectorPath::Avx512 => VectorPath::Avx512,
        VectorPath::Avx2 | VectorPath::Avx512 if best != VectorPath::Baseline => VectorPath::Avx2,
        _ => VectorPath::Baseline,
    }
}

/// Run `k` on `path`, or on the widest path below it that this CPU has ([`runnable`]).
pub(crate) fn run_on<Out, K: PathKernel<Out>>(path: VectorPath, k: K) -> Out {
    match runnable(path) {
        // SAFETY: `runnable` returns a path above the baseline only where the CPU has it.
        #[cfg(target_arch = "x86_64")]
        VectorPath::Avx512 => unsafe { run_avx512(k) },
        #[cfg(target_arch = "x86_64")]
        VectorPath::Avx2 => unsafe { run_avx2(k) },
        _ => k.run::<Baseline>(),
    }
}

/// Defines `fn name<generics>(path: VectorPath, args...) -> ret` that calls `body(args...)`
/// compiled for the path [`runnable`] picks: the baseline copy or a copy with the AVX2 /
/// AVX-512 target features of [`Isa`]'s markers. The arguments stay parameters of each
/// copy (see the module header on `noalias`). `where I: Isa` names the copy's
/// instruction-set marker ([`Baseline`], [`Avx2`], [`Avx512`]) `I` inside the body.
///
/// ```ignore
/// path_copies! {
///     fn max_mv<F: Format>(x: &[F]) -> f32 = max_pass::<F>;
/// }
/// path_copies! {
///     fn map_with<U: CrUnary, F: Format>(xs: &[F], out: &mut [Out<F>]) where I: Isa
///         = map_generic::<U, F, { <I as Isa>::FUSED }>;
/// }
/// ```
macro_rules! path_copies {
    ($(#[$meta:meta])* $vis:vis fn $name:ident<$($g:ident: $bound:path),*>(
        $($arg:ident: $ty:ty),* $(,)?
    ) $(-> $ret:ty)? $(where $isa:ident: Isa)? = $body:expr;) => {
        $(#[$meta])*
        $vis fn $name<$($g: $bound),*>(
            path: $crate::math::VectorPath,
            $($arg: $ty),*
        ) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
            fn avx512<$($g: $bound),*>($($arg: $ty),*) $(-> $ret)? {
                $(type $isa = $crate::math::vector::Avx512;)?
                $body($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn avx2<$($g: $bound),*>($($arg: $ty),*) $(-> $ret)? {
                $(type $isa = $crate::math::vector::Avx2;)?
                $body($($arg),*)
            }
            match $crate::math::vector::runnable(path) {
                // SAFETY: `runnable` returns a path above the baseline only where the CPU
                // has its features.
                #[cfg(target_arch = "x86_64")]
                $crate::math::VectorPath::Avx512 => unsafe { avx512::<$($g),*>($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                $crate::math::VectorPath::Avx2 => unsafe { avx2::<$($g),*>($($arg),*) },
                _ => {
                    $(type $isa = $crate::math::vector::Baseline;)?
                    $body($($arg),*)
                }
            }
        }
    };
}
pub(crate) use path_copies;
