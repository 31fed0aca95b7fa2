//! Running one kernel on a chosen vector path: the kernel is written once, generic over an
//! instruction-set marker ([`Isa`]), and [`run_on`] calls the copy compiled with that
//! instruction set's target features (or the baseline copy where the CPU lacks them).
//! The matmul and the FFT's Stockham stages go through here. The elementwise map, softmax
//! and rope keep `#[target_feature]` wrappers with their own parameter lists: a kernel
//! struct carries its slices as fields, which drops LLVM's `noalias` on them, and their
//! loops (writing one slice while reading another) then stop vectorizing (measured: exp
//! 0.57 -> 2.9 ns per element on AVX2). Their wrappers list the same features as
//! `run_avx2` / `run_avx512` below.
//!
//! The kernels' `run` must be `#[inline(always)]`, and so must everything it calls that
//! does arithmetic (no closure in between): it is then compiled inside the
//! `#[target_feature]` functions below, and the compiler vectorizes it for that width.

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

/// Run `k` on `path`, or on the widest path below it that this CPU has.
pub(crate) fn run_on<Out, K: PathKernel<Out>>(path: VectorPath, k: K) -> Out {
    #[cfg(target_arch = "x86_64")]
    {
        let best = crate::math::unary::best_path();
        match path {
            // SAFETY: the CPU has the features (`best_path` detected them).
            VectorPath::Avx512 if best == VectorPath::Avx512 => unsafe {
                return run_avx512(k);
            },
            VectorPath::Avx2 | VectorPath::Avx512 if best != VectorPath::Baseline => unsafe {
                return run_avx2(k);
            },
            _ => {}
        }
    }
    let _ = path;
    k.run::<Baseline>()
}
