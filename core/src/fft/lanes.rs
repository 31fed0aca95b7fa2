//! Vectors of lanes for the Stockham stages (stockham.rs): the portable `V<T, W>` and, on
//! x86-64, SSE2 / AVX / AVX-512 types for f32 and f64. Every lane applies the scalar
//! IEEE operation (+, -, *, sign-bit negation; never fused), so a vector stage computes
//! exactly the scalar DAG in each lane: the width is a speed detail, never a bit.
//! The shuffles (zips, complex interleave/deinterleave with the fused conjugation and
//! NaN canonicalization) only move values.

use super::butterflies::{Arith, Cx};
use super::scalar::{BFLY_LEN, FftScalar};
use num_complex::Complex32;

const CANONICAL_NAN: f32 = f32::from_bits(0x7FC0_0000);

/// `v`, or the canonical quiet NaN 0x7FC00000 for any NaN (every FFT output's NaN).
#[inline(always)]
#[doc(hidden)]
pub fn canonical(v: f32) -> f32 {
    if v.is_nan() { CANONICAL_NAN } else { v }
}

/// Most lanes of any vector type (64 bytes of f32).
#[doc(hidden)]
pub const MAX_LANES: usize = 16;

/// A vector of `W` values of T. Its +, -, * and negation apply the scalar IEEE operation
/// to every lane (never fused), so each lane computes exactly the scalar DAG: the vector
/// width changes the speed, never a bit.
#[doc(hidden)]
pub trait Lanes<T: FftScalar>: Arith {
    const W: usize;
    /// The vector of half as many lanes that the same instruction-set copy can run (one
    /// lane below the narrowest x86 type, and for the portable `V`): the width a
    /// mixed-radix stage falls back to when W does not suit it (stockham.rs
    /// `stage_mixed`).
    type Half: Lanes<T>;
    /// W values from `p` (no alignment needed).
    unsafe fn load(p: *const T) -> Self;
    /// The W lanes to `p`.
    unsafe fn store(self, p: *mut T);
    /// A lane-by-lane copy from memory (for the permutations; not a hot path per value).
    #[inline(always)]
    fn from_lanes(x: &[T; MAX_LANES]) -> Self {
        // SAFETY: W <= MAX_LANES.
        unsafe { Self::load(x.as_ptr()) }
    }
    #[inline(always)]
    fn to_lanes(self) -> [T; MAX_LANES] {
        let mut x = [T::ZERO; MAX_LANES];
        // SAFETY: W <= MAX_LANES.
        unsafe { self.store(x.as_mut_ptr()) };
        x
    }
    /// The first halves of self and o as blocks of G lanes, interleaved:
    /// [s_0, o_0, s_1, o_1, ..] (blocks). A pure permutation of lanes.
    ///
    /// # Safety
    /// Only called inside the copy compiled for the vector type's instruction set.
    #[inline(always)]
    unsafe fn zip_lo<const G: usize>(self, o: Self) -> Self {
        zip_lanes::<T, Self, G>(self, o, 0)
    }
    /// The second halves, interleaved the same way.
    ///
    /// # Safety
    /// As for zip_lo.
    #[inline(always)]
    unsafe fn zip_hi<const G: usize>(self, o: Self) -> Self {
        zip_lanes::<T, Self, G>(self, o, Self::W / G / 2)
    }
    /// W real values from `p` as complex values, converted to T (exact), with +0
    /// imaginary parts: what [`Lanes::load_cx`] gives for the same values stored with
    /// +0 imaginary parts and `conj` false.
    #[inline(always)]
    unsafe fn load_real(p: *const f32) -> Cx<Self> {
        let mut re = [T::ZERO; MAX_LANES];
        for (l, v) in re.iter_mut().enumerate().take(Self::W) {
            // SAFETY: the caller's (W values at p).
            *v = T::from_f32(unsafe { *p.add(l) });
        }
        Cx::new(
            Self::from_lanes(&re),
            Self::from_lanes(&[T::ZERO; MAX_LANES]),
        )
    }
    /// W interleaved complex values from `p`, converted to T (exact), im negated when
    /// `conj` (exact).
    #[inline(always)]
    unsafe fn load_cx(p: *const Complex32, conj: bool) -> Cx<Self> {
        let (mut re, mut im) = ([T::ZERO; MAX_LANES], [T::ZERO; MAX_LANES]);
        for l in 0..Self::W {
            // SAFETY: the caller's.
            let z = unsafe { *p.add(l) };
            re[l] = T::from_f32(z.re);
            im[l] = T::from_f32(if conj { -z.im } else { z.im });
        }
        Cx::new(Self::from_lanes(&re), Self::from_lanes(&im))
    }
    /// The W lanes to `p` as interleaved complex values: rounded once to f32, im negated
    /// when `conj`, then NaNs made canonical.
    #[inline(always)]
    unsafe fn store_cx(p: *mut Complex32, v: Cx<Self>, conj: bool) {
        let (re, im) = (v.re.to_lanes(), v.im.to_lanes());
        for l in 0..Self::W {
            let (a, b) = (re[l].to_f32(), im[l].to_f32());
            let z = Complex32::new(canonical(a), canonical(if conj { -b } else { b }));
            // SAFETY: the caller's.
            unsafe { *p.add(l) = z };
        }
    }
}

/// Lanes [from c0 on] of a and o as blocks of G, interleaved (see `Lanes::zip_lo`).
#[inline(always)]
fn zip_lanes<T: FftScalar, L: Lanes<T>, const G: usize>(a: L, o: L, c0: usize) -> L {
    let (a, o) = (a.to_lanes(), o.to_lanes());
    let mut r = [T::ZERO; MAX_LANES];
    for (x, rx) in r.iter_mut().enumerate().take(L::W) {
        let (c, t) = (c0 + x / (2 * G), x % (2 * G));
        *rx = if t < G {
            a[c * G + t]
        } else {
            o[c * G + t - G]
        };
    }
    L::from_lanes(&r)
}

/// Lanes as a plain array (the copy for targets without the x86 types below).
#[derive(Clone, Copy)]
#[allow(dead_code)]
#[doc(hidden)]
pub struct V<T, const W: usize>([T; W]);

macro_rules! lane_op {
    ($tr:ident, $f:ident, $op:tt) => {
        impl<T: FftScalar, const W: usize> std::ops::$tr for V<T, W> {
            type Output = Self;
            #[inline(always)]
            fn $f(self, o: Self) -> Self {
                let mut r = self.0;
                for l in 0..W {
                    r[l] = r[l] $op o.0[l];
                }
                V(r)
            }
        }
    };
}
lane_op!(Add, add, +);
lane_op!(Sub, sub, -);
lane_op!(Mul, mul, *);

impl<T: FftScalar, const W: usize> std::ops::Neg for V<T, W> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        let mut r = self.0;
        for x in r.iter_mut() {
            *x = -*x;
        }
        V(r)
    }
}

impl<T: FftScalar, const W: usize> Arith for V<T, W> {
    const W8_C: Self = V([T::FRAC_1_SQRT_2; W]);
    const BFLY: [Self; BFLY_LEN] = {
        let mut a = [V([T::ZERO; W]); BFLY_LEN];
        let mut i = 0;
        while i < BFLY_LEN {
            a[i] = V([T::BFLY[i]; W]);
            i += 1;
        }
        a
    };
}

impl<T: FftScalar, const W: usize> Lanes<T> for V<T, W> {
    const W: usize = W;
    type Half = V<T, 1>;
    #[inline(always)]
    unsafe fn load(p: *const T) -> Self {
        // SAFETY: the caller's.
        V(unsafe { std::ptr::read_unaligned(p as *const [T; W]) })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut T) {
        // SAFETY: the caller's.
        unsafe { std::ptr::write_unaligned(p as *mut [T; W], self.0) }
    }
}

/// SSE2, AVX and AVX-512 vectors of f32 and f64. The operations are the IEEE vector
/// add / sub / mul (the same roundings as the scalar ones) and negation as a flip of the
/// sign bit (what scalar negation is). They are `#[inline(always)]` wrappers, used only
/// inside the `#[target_feature]` copies that have the instructions.
#[cfg(target_arch = "x86_64")]
#[doc(hidden)]
pub mod x86 {
    use super::{Arith, BFLY_LEN, Cx, Lanes, V};
    use num_complex::Complex32;
    use std::arch::x86_64::*;

    macro_rules! simd {
        ($name:ident, $t:ty, $w:expr, $half:ty, $v:ty, $add:ident, $sub:ident, $mul:ident,
         $neg:expr, { $($extra:tt)* }) => {
            #[derive(Clone, Copy)]
            #[doc(hidden)]
            pub struct $name($v);

            impl std::ops::Add for $name {
                type Output = Self;
                #[inline(always)]
                fn add(self, o: Self) -> Self {
                    // SAFETY: compiled into copies with the instruction set (module doc).
                    $name(unsafe { $add(self.0, o.0) })
                }
            }
            impl std::ops::Sub for $name {
                type Output = Self;
                #[inline(always)]
                fn sub(self, o: Self) -> Self {
                    // SAFETY: as for add.
                    $name(unsafe { $sub(self.0, o.0) })
                }
            }
            impl std::ops::Mul for $name {
                type Output = Self;
                #[inline(always)]
                fn mul(self, o: Self) -> Self {
                    // SAFETY: as for add.
                    $name(unsafe { $mul(self.0, o.0) })
                }
            }
            impl std::ops::Neg for $name {
                type Output = Self;
                #[inline(always)]
                fn neg(self) -> Self {
                    let f: fn($v) -> $v = $neg;
                    $name(f(self.0))
                }
            }
            impl Arith for $name {
                // SAFETY: a vector type is its lanes' bits.
                const W8_C: Self = $name(unsafe {
                    std::mem::transmute::<[$t; $w], $v>([<$t as Arith>::W8_C; $w])
                });
                const BFLY: [Self; BFLY_LEN] = {
                    let mut a = [Self::W8_C; BFLY_LEN];
                    let mut i = 0;
                    while i < BFLY_LEN {
                        // SAFETY: as for W8_C.
                        a[i] = $name(unsafe {
                            std::mem::transmute::<[$t; $w], $v>([<$t as Arith>::BFLY[i]; $w])
                        });
                        i += 1;
                    }
                    a
                };
            }
            impl Lanes<$t> for $name {
                const W: usize = $w;
                type Half = $half;
                #[inline(always)]
                unsafe fn load(p: *const $t) -> Self {
                    // SAFETY: the caller's (a plain unaligned read of the vector's bytes).
                    $name(unsafe { std::ptr::read_unaligned(p as *const $v) })
                }
                #[inline(always)]
                unsafe fn store(self, p: *mut $t) {
                    // SAFETY: the caller's.
                    unsafe { std::ptr::write_unaligned(p as *mut $v, self.0) }
                }
                $($extra)*
            }
        };
    }

    // Negation: xor with the sign bit (-0.0), lane by lane, exactly scalar `-x`.
    simd!(
        F32x16,
        f32,
        16,
        F32x8,
        __m512,
        _mm512_add_ps,
        _mm512_sub_ps,
        _mm512_mul_ps,
        |x| unsafe { xor_sign_ps(x) },
        {
            #[target_feature(enable = "avx512f")]
            #[inline]
            unsafe fn zip_lo<const G: usize>(self, o: Self) -> Self {
                F32x16(_mm512_permutex2var_ps(self.0, zip_index::<G>(0), o.0))
            }
            #[target_feature(enable = "avx512f")]
            #[inline]
            unsafe fn zip_hi<const G: usize>(self, o: Self) -> Self {
                F32x16(_mm512_permutex2var_ps(self.0, zip_index::<G>(8 / G), o.0))
            }
            #[target_feature(enable = "avx512f")]
            #[inline]
            unsafe fn load_cx(p: *const Complex32, conj: bool) -> Cx<Self> {
                // SAFETY: 16 complex values at p (the caller's); AVX-512F.
                unsafe {
                    let a = std::ptr::read_unaligned(p as *const __m512);
                    let b = std::ptr::read_unaligned((p as *const __m512).add(1));
                    let even =
                        std::mem::transmute::<[i32; 16], __m512i>(std::array::from_fn(|l| {
                            2 * l as i32
                        }));
                    let odd = std::mem::transmute::<[i32; 16], __m512i>(std::array::from_fn(|l| {
                        2 * l as i32 + 1
                    }));
                    let re = _mm512_permutex2var_ps(a, even, b);
                    let im = _mm512_permutex2var_ps(a, odd, b);
                    Cx::new(F32x16(re), F32x16(if conj { xor_sign_ps(im) } else { im }))
                }
            }
            #[target_feature(enable = "avx512f")]
            #[inline]
            unsafe fn store_cx(p: *mut Complex32, v: Cx<Self>, conj: bool) {
                // SAFETY: room for 16 complex values at p (the caller's); AVX-512F.
                unsafe {
                    let nan = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC0_0000));
                    let canon = |x: __m512| {
                        _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x), nan)
                    };
                    let re = canon(v.re.0);
                    let im = canon(if conj { xor_sign_ps(v.im.0) } else { v.im.0 });
                    let lo = _mm512_permutex2var_ps(re, zip_index::<1>(0), im);
                    let hi = _mm512_permutex2var_ps(re, zip_index::<1>(8), im);
                    std::ptr::write_unaligned(p as *mut __m512, lo);
                    std::ptr::write_unaligned((p as *mut __m512).add(1), hi);
                }
            }
        }
    );
    simd!(
        F32x8,
        f32,
        8,
        F32x4,
        __m256,
        _mm256_add_ps,
        _mm256_sub_ps,
        _mm256_mul_ps,
        |x| unsafe { _mm256_xor_ps(x, _mm256_set1_ps(-0.0)) },
        {
            #[target_feature(enable = "avx")]
            #[inline]
            unsafe fn zip_lo<const G: usize>(self, o: Self) -> Self {
                if G != 1 {
                    return super::zip_lanes::<f32, Self, G>(self, o, 0);
                }
                let (l, h) = (
                    _mm256_unpacklo_ps(self.0, o.0),
                    _mm256_unpackhi_ps(self.0, o.0),
                );
                F32x8(_mm256_permute2f128_ps::<0x20>(l, h))
            }
            #[target_feature(enable = "avx")]
            #[inline]
            unsafe fn zip_hi<const G: usize>(self, o: Self) -> Self {
                if G != 1 {
                    return super::zip_lanes::<f32, Self, G>(self, o, 8 / G / 2);
                }
                let (l, h) = (
                    _mm256_unpacklo_ps(self.0, o.0),
                    _mm256_unpackhi_ps(self.0, o.0),
                );
                F32x8(_mm256_permute2f128_ps::<0x31>(l, h))
            }
        }
    );
    simd!(
        F32x4,
        f32,
        4,
        V<f32, 1>,
        __m128,
        _mm_add_ps,
        _mm_sub_ps,
        _mm_mul_ps,
        |x| unsafe { _mm_xor_ps(x, _mm_set1_ps(-0.0)) },
        {
            #[target_feature(enable = "sse2")]
            #[inline]
            unsafe fn zip_lo<const G: usize>(self, o: Self) -> Self {
                if G != 1 {
                    return super::zip_lanes::<f32, Self, G>(self, o, 0);
                }
                F32x4(_mm_unpacklo_ps(self.0, o.0))
            }
            #[target_feature(enable = "sse2")]
            #[inline]
            unsafe fn zip_hi<const G: usize>(self, o: Self) -> Self {
                if G != 1 {
                    return super::zip_lanes::<f32, Self, G>(self, o, 4 / G / 2);
                }
                F32x4(_mm_unpackhi_ps(self.0, o.0))
            }
        }
    );
    simd!(
        F64x8,
        f64,
        8,
        F64x4,
        __m512d,
        _mm512_add_pd,
        _mm512_sub_pd,
        _mm512_mul_pd,
        |x| unsafe {
            _mm512_castsi512_pd(_mm512_xor_si512(
                _mm512_castpd_si512(x),
                _mm512_set1_epi64(i64::MIN),
            ))
        },
        {
            #[target_feature(enable = "avx512f")]
            #[inline]
            unsafe fn zip_lo<const G: usize>(self, o: Self) -> Self {
                F64x8(_mm512_permutex2var_pd(self.0, zip_index_pd::<G>(0), o.0))
            }
            #[target_feature(enable = "avx512f")]
            #[inline]
            unsafe fn zip_hi<const G: usize>(self, o: Self) -> Self {
                F64x8(_mm512_permutex2var_pd(
                    self.0,
                    zip_index_pd::<G>(4 / G),
                    o.0,
                ))
            }
        }
    );
    simd!(
        F64x4,
        f64,
        4,
        F64x2,
        __m256d,
        _mm256_add_pd,
        _mm256_sub_pd,
        _mm256_mul_pd,
        |x| unsafe { _mm256_xor_pd(x, _mm256_set1_pd(-0.0)) },
        {
            #[target_feature(enable = "avx")]
            #[inline]
            unsafe fn zip_lo<const G: usize>(self, o: Self) -> Self {
                if G != 1 {
                    return super::zip_lanes::<f64, Self, G>(self, o, 0);
                }
                let (l, h) = (
                    _mm256_unpacklo_pd(self.0, o.0),
                    _mm256_unpackhi_pd(self.0, o.0),
                );
                F64x4(_mm256_permute2f128_pd::<0x20>(l, h))
            }
            #[target_feature(enable = "avx")]
            #[inline]
            unsafe fn zip_hi<const G: usize>(self, o: Self) -> Self {
                if G != 1 {
                    return super::zip_lanes::<f64, Self, G>(self, o, 4 / G / 2);
                }
                let (l, h) = (
                    _mm256_unpacklo_pd(self.0, o.0),
                    _mm256_unpackhi_pd(self.0, o.0),
                );
                F64x4(_mm256_permute2f128_pd::<0x31>(l, h))
            }
        }
    );
    simd!(
        F64x2,
        f64,
        2,
        V<f64, 1>,
        __m128d,
        _mm_add_pd,
        _mm_sub_pd,
        _mm_mul_pd,
        |x| unsafe { _mm_xor_pd(x, _mm_set1_pd(-0.0)) },
        {
            #[target_feature(enable = "sse2")]
            #[inline]
            unsafe fn zip_lo<const G: usize>(self, o: Self) -> Self {
                if G != 1 {
                    return super::zip_lanes::<f64, Self, G>(self, o, 0);
                }
                F64x2(_mm_unpacklo_pd(self.0, o.0))
            }
            #[target_feature(enable = "sse2")]
            #[inline]
            unsafe fn zip_hi<const G: usize>(self, o: Self) -> Self {
                if G != 1 {
                    return super::zip_lanes::<f64, Self, G>(self, o, 1);
                }
                F64x2(_mm_unpackhi_pd(self.0, o.0))
            }
        }
    );

    /// -x lane by lane (the sign bit flipped), AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn xor_sign_ps(x: __m512) -> __m512 {
        _mm512_castsi512_ps(_mm512_xor_si512(
            _mm512_castps_si512(x),
            _mm512_set1_epi32(i32::MIN),
        ))
    }

    /// permutex2var indices interleaving blocks of G lanes of two 16-lane vectors, from
    /// block c0 of each on.
    #[inline(always)]
    fn zip_index<const G: usize>(c0: usize) -> __m512i {
        let idx: [i32; 16] = std::array::from_fn(|x| {
            let (c, t) = (c0 + x / (2 * G), x % (2 * G));
            (if t < G { c * G + t } else { 16 + c * G + t - G }) as i32
        });
        // SAFETY: 16 i32 are the vector's bits.
        unsafe { std::mem::transmute::<[i32; 16], __m512i>(idx) }
    }

    /// The same for two 8-lane f64 vectors.
    #[inline(always)]
    fn zip_index_pd<const G: usize>(c0: usize) -> __m512i {
        let idx: [i64; 8] = std::array::from_fn(|x| {
            let (c, t) = (c0 + x / (2 * G), x % (2 * G));
            (if t < G { c * G + t } else { 8 + c * G + t - G }) as i64
        });
        // SAFETY: 8 i64 are the vector's bits.
        unsafe { std::mem::transmute::<[i64; 8], __m512i>(idx) }
    }
}
