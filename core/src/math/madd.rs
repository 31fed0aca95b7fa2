//! a * b + c in the fast paths, fused or not, as the compiled copy decides.
//!
//! The vector copies built with FMA (AVX2, AVX-512; every aarch64 copy) evaluate their
//! polynomials with fused multiply-adds, one rounding per step, as the CUDA mirror does
//! (`fma_f64` in `kernels/math/common.cuh`). A copy for a target without FMA instructions
//! (the x86-64 baseline, which also compiles the scalar functions) rounds the product and
//! the sum separately instead: a software fused multiply-add there costs tens of times
//! more than the two operations. Either way every step is IEEE arithmetic, and each fast
//! path's error bound counts two roundings per step, so it holds for both flavours; the
//! rounding test then settles the same correctly rounded result, so the output bits
//! never depend on the flavour (tests compare the copies on every function). Only the
//! fast path's intermediate value does, which is why the host cross-check of the CUDA
//! mirror compares it with the fused flavour.

/// Whether code compiled for the crate's target (the scalar functions and the baseline
/// slice copy) has FMA instructions, and so uses the fused flavour.
#[doc(hidden)]
pub const TARGET_FUSES: bool = cfg!(any(target_arch = "aarch64", target_feature = "fma"));

/// a * b + c: one rounding (IEEE fusedMultiplyAdd) if `FUSED`, else two.
#[inline(always)]
#[doc(hidden)]
pub fn madd<const FUSED: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FUSED { a.mul_add(b, c) } else { a * b + c }
}
