//! Vectors of f64 (and of f32, [`F32s`], for the matmul's float route) for the kernels of
//! the products (the matmul's micro-kernel, the quantized GEMV): one generic kernel over [`F64s`], compiled once per instruction set,
//! with the register width of that set. Left to itself the compiler vectorized the
//! matmul's register tile across its rows, with gathers and scatters of the accumulators
//! (4x slower than its AVX2 copy on an AVX-512 machine); explicit vectors keep every
//! accumulator in a register.
//!
//! Every operation is the lane-wise IEEE operation; `madd` is fused where the set has FMA
//! (AVX2, AVX-512) and rounded twice on the x86-64 baseline, like
//! `crate::math::madd`. The kernels using these only feed sums whose error bound holds for
//! either (a product of values widened from f32 is exact in f64, and where it is not the
//! bound counts its rounding).

/// A vector of `W` f64 lanes.
///
/// # Safety
/// Every method is only called inside a copy compiled with the instruction set of the
/// implementing type (`crate::math::vector`), on pointers valid for `W` elements.
#[doc(hidden)]
pub trait F64s: Copy {
    const W: usize;
    unsafe fn zero() -> Self;
    unsafe fn splat(x: f64) -> Self;
    unsafe fn load(p: *const f64) -> Self;
    unsafe fn store(self, p: *mut f64);
    /// a * b + c.
    unsafe fn madd(a: Self, b: Self, c: Self) -> Self;
    unsafe fn mul(a: Self, b: Self) -> Self;
    unsafe fn sub(a: Self, b: Self) -> Self;
    unsafe fn add(a: Self, b: Self) -> Self;
    /// `W` i8 values from `p`, widened exactly.
    unsafe fn from_i8(p: *const i8) -> Self;
}

/// One lane: the portable fallback (also any tile width on any target).
#[derive(Clone, Copy)]
#[doc(hidden)]
pub struct F64x1(f64);

impl F64s for F64x1 {
    const W: usize = 1;
    #[inline(always)]
    unsafe fn zero() -> Self {
        F64x1(0.0)
    }
    #[inline(always)]
    unsafe fn splat(x: f64) -> Self {
        F64x1(x)
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        F64x1(unsafe { *p })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f64) {
        unsafe { *p = self.0 }
    }
    #[inline(always)]
    unsafe fn madd(a: Self, b: Self, c: Self) -> Self {
        F64x1(super::madd::madd::<{ super::madd::TARGET_FUSES }>(
            a.0, b.0, c.0,
        ))
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        F64x1(a.0 * b.0)
    }
    #[inline(always)]
    unsafe fn sub(a: Self, b: Self) -> Self {
        F64x1(a.0 - b.0)
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        F64x1(a.0 + b.0)
    }
    #[inline(always)]
    unsafe fn from_i8(p: *const i8) -> Self {
        F64x1(unsafe { *p } as f64)
    }
}

#[cfg(target_arch = "x86_64")]
#[doc(hidden)]
pub use x86::{F64x2, F64x4, F64x8};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::F64s;
    use std::arch::x86_64::*;

    /// SSE2 (the x86-64 baseline): multiply and add rounded separately.
    #[derive(Clone, Copy)]
    #[doc(hidden)]
    pub struct F64x2(pub(super) __m128d);
    /// AVX2 + FMA.
    #[derive(Clone, Copy)]
    #[doc(hidden)]
    pub struct F64x4(pub(super) __m256d);
    /// AVX-512.
    #[derive(Clone, Copy)]
    #[doc(hidden)]
    pub struct F64x8(pub(super) __m512d);

    impl F64s for F64x2 {
        const W: usize = 2;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F64x2(unsafe { _mm_setzero_pd() })
        }
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            F64x2(unsafe { _mm_set1_pd(x) })
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            F64x2(unsafe { _mm_loadu_pd(p) })
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            unsafe { _mm_storeu_pd(p, self.0) }
        }
        #[inline(always)]
        unsafe fn madd(a: Self, b: Self, c: Self) -> Self {
            F64x2(unsafe { _mm_add_pd(_mm_mul_pd(a.0, b.0), c.0) })
        }
        #[inline(always)]
        unsafe fn mul(a: Self, b: Self) -> Self {
            F64x2(unsafe { _mm_mul_pd(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn sub(a: Self, b: Self) -> Self {
            F64x2(unsafe { _mm_sub_pd(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            F64x2(unsafe { _mm_add_pd(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn from_i8(p: *const i8) -> Self {
            let (a, b) = unsafe { (*p as f64, *p.add(1) as f64) };
            F64x2(unsafe { _mm_set_pd(b, a) })
        }
    }

    impl F64s for F64x4 {
        const W: usize = 4;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F64x4(unsafe { _mm256_setzero_pd() })
        }
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            F64x4(unsafe { _mm256_set1_pd(x) })
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            F64x4(unsafe { _mm256_loadu_pd(p) })
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            unsafe { _mm256_storeu_pd(p, self.0) }
        }
        #[inline(always)]
        unsafe fn madd(a: Self, b: Self, c: Self) -> Self {
            F64x4(unsafe { _mm256_fmadd_pd(a.0, b.0, c.0) })
        }
        #[inline(always)]
        unsafe fn mul(a: Self, b: Self) -> Self {
            F64x4(unsafe { _mm256_mul_pd(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn sub(a: Self, b: Self) -> Self {
            F64x4(unsafe { _mm256_sub_pd(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            F64x4(unsafe { _mm256_add_pd(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn from_i8(p: *const i8) -> Self {
            unsafe {
                let v = _mm_cvtsi32_si128((p as *const i32).read_unaligned());
                F64x4(_mm256_cvtepi32_pd(_mm_cvtepi8_epi32(v)))
            }
        }
    }

    impl F64s for F64x8 {
        const W: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F64x8(unsafe { _mm512_setzero_pd() })
        }
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            F64x8(unsafe { _mm512_set1_pd(x) })
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            F64x8(unsafe { _mm512_loadu_pd(p) })
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            unsafe { _mm512_storeu_pd(p, self.0) }
        }
        #[inline(always)]
        unsafe fn madd(a: Self, b: Self, c: Self) -> Self {
            F64x8(unsafe { _mm512_fmadd_pd(a.0, b.0, c.0) })
        }
        #[inline(always)]
        unsafe fn mul(a: Self, b: Self) -> Self {
            F64x8(unsafe { _mm512_mul_pd(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn sub(a: Self, b: Self) -> Self {
            F64x8(unsafe { _mm512_sub_pd(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            F64x8(unsafe { _mm512_add_pd(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn from_i8(p: *const i8) -> Self {
            unsafe {
                let v = _mm_loadl_epi64(p as *const __m128i);
                F64x8(_mm512_cvtepi32_pd(_mm256_cvtepi8_epi32(v)))
            }
        }
    }
}

/// Runs `$body` with `$V` the widest f64 vector of the copy `$I` (an `Isa`) whose width
/// divides `$n` (x86-64: 8, 4 or 2 lanes; elsewhere one).
#[allow(unused_macros)] // the host check includes core/src/math without the kernels
#[doc(hidden)]
#[macro_export]
macro_rules! with_f64s {
    ($I:ty, $n:expr, $V:ident => $body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            use $crate::math::vector::Isa;
            if <$I as Isa>::VECTOR_BYTES == 64 && $n % 8 == 0 {
                type $V = $crate::math::simd::F64x8;
                $body
            } else if <$I as Isa>::VECTOR_BYTES >= 32 && $n % 4 == 0 {
                type $V = $crate::math::simd::F64x4;
                $body
            } else if $n % 2 == 0 {
                type $V = $crate::math::simd::F64x2;
                $body
            } else {
                type $V = $crate::math::simd::F64x1;
                $body
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            type $V = $crate::math::simd::F64x1;
            $body
        }
    }};
}
#[allow(unused_imports)]
#[doc(hidden)]
pub use crate::with_f64s;

/// A vector of `W` f32 lanes, for the matmul's float route on bf16 and f16 inputs
/// (`crate::matmul::kernel`): products of such inputs are exact in f32 (up to underflow,
/// which the route's bound counts), and `W` lanes of them are summed in short runs, each
/// run then widened exactly to two vectors of f64 ([`F32s::widen`]).
///
/// # Safety
/// As [`F64s`].
#[doc(hidden)]
pub trait F32s: Copy {
    const W: usize;
    /// The f64 vector of `W / 2` lanes.
    type Wide: F64s;
    unsafe fn zero() -> Self;
    unsafe fn splat(x: f32) -> Self;
    unsafe fn load(p: *const f32) -> Self;
    /// a * b + c: fused where the set has FMA, else a product and a sum rounded apart.
    unsafe fn madd(a: Self, b: Self, c: Self) -> Self;
    unsafe fn add(a: Self, b: Self) -> Self;
    /// Lanes [0, W/2) and [W/2, W), widened exactly to f64.
    unsafe fn widen(self) -> (Self::Wide, Self::Wide);
}

/// Two lanes: the portable fallback.
#[derive(Clone, Copy)]
#[doc(hidden)]
pub struct F32x2([f32; 2]);

impl F32s for F32x2 {
    const W: usize = 2;
    type Wide = F64x1;
    #[inline(always)]
    unsafe fn zero() -> Self {
        F32x2([0.0; 2])
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> Self {
        F32x2([x; 2])
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        F32x2(unsafe { [*p, *p.add(1)] })
    }
    #[inline(always)]
    unsafe fn madd(a: Self, b: Self, c: Self) -> Self {
        F32x2([a.0[0] * b.0[0] + c.0[0], a.0[1] * b.0[1] + c.0[1]])
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        F32x2([a.0[0] + b.0[0], a.0[1] + b.0[1]])
    }
    #[inline(always)]
    unsafe fn widen(self) -> (F64x1, F64x1) {
        (F64x1(self.0[0] as f64), F64x1(self.0[1] as f64))
    }
}

#[cfg(target_arch = "x86_64")]
#[doc(hidden)]
pub use x86_f32::{F32x4, F32x8, F32x16};

#[cfg(target_arch = "x86_64")]
mod x86_f32 {
    use super::{F32s, F64x2, F64x4, F64x8};
    use std::arch::x86_64::*;

    /// SSE2: multiply and add rounded separately.
    #[derive(Clone, Copy)]
    #[doc(hidden)]
    pub struct F32x4(__m128);
    /// AVX2 + FMA.
    #[derive(Clone, Copy)]
    #[doc(hidden)]
    pub struct F32x8(__m256);
    /// AVX-512.
    #[derive(Clone, Copy)]
    #[doc(hidden)]
    pub struct F32x16(__m512);

    impl F32s for F32x4 {
        const W: usize = 4;
        type Wide = F64x2;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F32x4(unsafe { _mm_setzero_ps() })
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> Self {
            F32x4(unsafe { _mm_set1_ps(x) })
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            F32x4(unsafe { _mm_loadu_ps(p) })
        }
        #[inline(always)]
        unsafe fn madd(a: Self, b: Self, c: Self) -> Self {
            F32x4(unsafe { _mm_add_ps(_mm_mul_ps(a.0, b.0), c.0) })
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            F32x4(unsafe { _mm_add_ps(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn widen(self) -> (F64x2, F64x2) {
            unsafe {
                (
                    F64x2(_mm_cvtps_pd(self.0)),
                    F64x2(_mm_cvtps_pd(_mm_movehl_ps(self.0, self.0))),
                )
            }
        }
    }

    impl F32s for F32x8 {
        const W: usize = 8;
        type Wide = F64x4;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F32x8(unsafe { _mm256_setzero_ps() })
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> Self {
            F32x8(unsafe { _mm256_set1_ps(x) })
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            F32x8(unsafe { _mm256_loadu_ps(p) })
        }
        #[inline(always)]
        unsafe fn madd(a: Self, b: Self, c: Self) -> Self {
            F32x8(unsafe { _mm256_fmadd_ps(a.0, b.0, c.0) })
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            F32x8(unsafe { _mm256_add_ps(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn widen(self) -> (F64x4, F64x4) {
            unsafe {
                (
                    F64x4(_mm256_cvtps_pd(_mm256_castps256_ps128(self.0))),
                    F64x4(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(self.0))),
                )
            }
        }
    }

    impl F32s for F32x16 {
        const W: usize = 16;
        type Wide = F64x8;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F32x16(unsafe { _mm512_setzero_ps() })
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> Self {
            F32x16(unsafe { _mm512_set1_ps(x) })
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            F32x16(unsafe { _mm512_loadu_ps(p) })
        }
        #[inline(always)]
        unsafe fn madd(a: Self, b: Self, c: Self) -> Self {
            F32x16(unsafe { _mm512_fmadd_ps(a.0, b.0, c.0) })
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            F32x16(unsafe { _mm512_add_ps(a.0, b.0) })
        }
        #[inline(always)]
        unsafe fn widen(self) -> (F64x8, F64x8) {
            unsafe {
                (
                    F64x8(_mm512_cvtps_pd(_mm512_castps512_ps256(self.0))),
                    F64x8(_mm512_cvtps_pd(_mm512_extractf32x8_ps::<1>(self.0))),
                )
            }
        }
    }
}

/// Runs `$body` with `$V` the widest f32 vector of the copy `$I` (an `Isa`) whose width
/// divides `$n` (x86-64: 16, 8 or 4 lanes; elsewhere two).
#[allow(unused_macros)] // the host check includes core/src/math without the kernels
#[doc(hidden)]
#[macro_export]
macro_rules! with_f32s {
    ($I:ty, $n:expr, $V:ident => $body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            use $crate::math::vector::Isa;
            if <$I as Isa>::VECTOR_BYTES == 64 && $n % 16 == 0 {
                type $V = $crate::math::simd::F32x16;
                $body
            } else if <$I as Isa>::VECTOR_BYTES >= 32 && $n % 8 == 0 {
                type $V = $crate::math::simd::F32x8;
                $body
            } else if $n % 4 == 0 {
                type $V = $crate::math::simd::F32x4;
                $body
            } else {
                type $V = $crate::math::simd::F32x2;
                $body
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            type $V = $crate::math::simd::F32x2;
            $body
        }
    }};
}
#[allow(unused_imports)]
#[doc(hidden)]
pub use crate::with_f32s;
