//! The shape every correctly rounded unary function shares: a fast path, a rounding test,
//! and an accurate path for the rare inputs the test cannot decide.
//!
//! * `fast(x)`: a branch-free f64 approximation with a proven relative error bound
//!   `FAST_REL_ERR`, valid on a domain (`in_fast_domain`). It is total: on other inputs it
//!   returns garbage but never panics (table indices are masked), so vector loops can run
//!   it on every lane and fix the odd lanes afterwards.
//! * the rounding test ([`round_if_certain`]): if the whole error interval rounds to one
//!   value of the output format, that value is the correctly rounded result.
//! * `accurate(x)`: every input (special values included), as the exact result rounded to
//!   odd in f64 (double-double evaluation, see [`crate::math::dd`]); one more rounding to
//!   f32, bf16 or f16 is then correct.
//!
//! The slice kernel runs `fast` and the format's cheaper vector rounding test
//! ([`Format::round_if_certain_fast`]: for f32, a look at the low bits of the f64 result)
//! on every lane of a chunk, then gives each lane that test did not settle to `eval`,
//! which tries the full test and then the accurate path. Both tests are sound, so the
//! result is the correctly rounded value either way: the slice kernels and `eval` give the
//! same bits (the tests check it, and `verify_math` does on all 2^32 f32 inputs).
//!
//! The slice kernel runs the same scalar code over chunks of lanes; the compiler
//! vectorizes it, and the AVX2/AVX-512 copies are this same code compiled with those
//! target features, FMA included. Rust never contracts `a * b + c`; the fast paths' own
//! multiply-adds are fused in the copies that have FMA instructions and rounded twice in
//! the x86-64 baseline copy (`super::madd`), both within the same error bound, so neither
//! the vector width nor the presence of FMA hardware changes a bit of the output. The
//! tests compare the baseline copy (no FMA) with the FMA-enabled copies on every function.

use super::madd::TARGET_FUSES;
use super::round::{Format, round_if_certain};
use super::vector::{Isa, VectorPath, best_path};
use std::mem::MaybeUninit;

/// A correctly rounded function of one f32 argument (see the module documentation).
#[doc(hidden)]
pub trait CrUnary {
    /// Relative error bound of `fast` on its domain, before the final rounding.
    const FAST_REL_ERR: f64;
    /// Whether `fast(x)` is within `FAST_REL_ERR` of f(x). Must be false for NaN.
    fn in_fast_domain(x: f32) -> bool;
    /// Branch-free approximation of f(x); total (never panics), meaningful on the domain.
    /// `FUSED`: the multiply-add flavour of the compiled copy (`super::madd`).
    fn fast<const FUSED: bool>(x: f32) -> f64;
    /// f(x) rounded to odd in f64, for every x (specials included).
    fn accurate(x: f32) -> f64;
    /// A cheap stand-in, read off x, for the f32 vector test's check that y is not
    /// subnormal ([`Format::round_if_certain_fast`]): `Some(true)` only where `fast(x)` is
    /// exactly 0 or at least f32's smallest normal (2^-126) in magnitude; `Some(false)`
    /// leaves the lane to the scalar path. Default `None`: the test looks at y itself.
    #[inline(always)]
    fn fast_result_normal(_x: f32) -> Option<bool> {
        None
    }
}

/// Error bound used by the rounding test: the function's bound plus one ulp of y for the
/// test's own rounding of `y ± y*err`.
#[inline(always)]
const fn test_err<U: CrUnary>() -> f64 {
    U::FAST_REL_ERR + f64::EPSILON
}

/// f(x) correctly rounded to `F`.
#[inline(always)]
#[doc(hidden)]
pub fn eval<U: CrUnary, F: Format>(x: f32) -> F {
    if U::in_fast_domain(x) {
        let (r, sure) = round_if_certain::<F>(U::fast::<TARGET_FUSES>(x), test_err::<U>());
        if sure {
            return r;
        }
    }
    F::round(U::accurate(x))
}

/// Lanes per chunk: a multiple of every vector width (4 f64 in AVX2, 8 in AVX-512).
const LANES: usize = 16;

#[inline(always)]
fn map_generic<U: CrUnary, F: Format, const FUSED: bool>(xs: &[F], out: &mut [MaybeUninit<F>]) {
    assert_eq!(
        xs.len(),
        out.len(),
        "input and output slices differ in length"
    );
    let mut x_chunks = xs.chunks_exact(LANES);
    let mut o_chunks = out.chunks_exact_mut(LANES);
    for (x, o) in (&mut x_chunks).zip(&mut o_chunks) {
        // One flag for the whole chunk, an OR over the lanes that the compiler reduces
        // with a single mask test; a per-lane bit mask costs a horizontal reduction of its
        // own in every chunk.
        let mut any_unsure = false;
        for i in 0..LANES {
            let xf = x[i].to_f32();
            let y = U::fast::<FUSED>(xf);
            let (r, certain) =
                F::round_if_certain_fast(y, test_err::<U>(), U::fast_result_normal(xf));
            o[i] = MaybeUninit::new(r);
            any_unsure |= !(certain & U::in_fast_domain(xf));
        }
        if any_unsure {
            // Rare: special inputs, results too close to a rounding boundary or outside the
            // fast test's range. The lanes are tested again one by one (the same
            // operations, so the same decisions) and only the unsure ones are redone, with
            // the full test first.
            for i in 0..LANES {
                let xf = x[i].to_f32();
                let y = U::fast::<FUSED>(xf);
                let (_, certain) =
                    F::round_if_certain_fast(y, test_err::<U>(), U::fast_result_normal(xf));
                if !(certain & U::in_fast_domain(xf)) {
                    o[i] = MaybeUninit::new(eval::<U, F>(xf));
                }
            }
        }
    }
    for (x, o) in x_chunks
        .remainder()
        .iter()
        .zip(o_chunks.into_remainder().iter_mut())
    {
        *o = MaybeUninit::new(eval::<U, F>(x.to_f32()));
    }
}

crate::math::vector::path_copies! {
    /// Apply f to every element with the given path (or the widest below it that the CPU
    /// has). Every element of `out` is written. The AVX copies fuse their multiply-adds,
    /// the baseline copy where its target does (`madd.rs`): the same bits either way.
    #[doc(hidden)]
    pub fn map_uninit_with<U: CrUnary, F: Format>(xs: &[F], out: &mut [MaybeUninit<F>])
        where I: Isa = map_generic::<U, F, { <I as Isa>::FUSED }>;
}

/// `out` seen as slots to write (the kernels write only initialized values, so this is
/// sound, and nothing is read from it).
fn as_slots<F>(out: &mut [F]) -> &mut [MaybeUninit<F>] {
    // SAFETY: MaybeUninit<F> has F's layout; writes store valid values of F.
    unsafe { &mut *(out as *mut [F] as *mut [MaybeUninit<F>]) }
}

/// Apply f to every element with the given path.
#[doc(hidden)]
pub fn map_slice_with<U: CrUnary, F: Format>(path: VectorPath, xs: &[F], out: &mut [F]) {
    map_uninit_with::<U, F>(path, xs, as_slots(out))
}

/// Apply f to every element with the widest path this CPU has.
#[doc(hidden)]
pub fn map_slice<U: CrUnary, F: Format>(xs: &[F], out: &mut [F]) {
    map_uninit_with::<U, F>(best_path(), xs, as_slots(out))
}

/// Apply f to every element into uninitialized slots, with the widest path.
#[doc(hidden)]
pub fn map_uninit<U: CrUnary, F: Format>(xs: &[F], out: &mut [MaybeUninit<F>]) {
    map_uninit_with::<U, F>(best_path(), xs, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{erf, exp, gelu, log, sigmoid, softplus, tanh, trig};

    /// Where `fast_result_normal` says so, both flavours of `fast` return 0 or at least
    /// f32's smallest normal: on a stride through every f32, plus the inputs given (the
    /// neighbourhoods where a function's results come closest to the subnormal range).
    fn check_normal_hint<U: CrUnary>(name: &str, extra: impl Iterator<Item = f32>) {
        let strided = (0..=u32::MAX).step_by(4099).map(f32::from_bits);
        for x in strided.chain(extra) {
            if !(U::in_fast_domain(x) && U::fast_result_normal(x) == Some(true)) {
                continue;
            }
            for y in [U::fast::<true>(x), U::fast::<false>(x)] {
                assert!(
                    y == 0.0 || y.abs() >= f64::from(f32::MIN_POSITIVE),
                    "{name}: fast({x:e}) = {y:e} under the normal-result hint"
                );
            }
        }
    }

    /// f32s within `n` steps of `x`, both sides.
    fn around(x: f32, n: u32) -> impl Iterator<Item = f32> {
        let b = x.to_bits();
        (b - n..=b + n).map(f32::from_bits)
    }

    #[test]
    fn normal_result_hints_hold() {
        // exp: 2^17 f32 steps either side of the hint's threshold -87.
        let exp_edge = (0xC2AE_0000u32 - (1 << 17)..=0xC2AE_0000 + (1 << 17)).map(f32::from_bits);
        check_normal_hint::<exp::Exp>("exp", exp_edge);
        // log: the results nearest 0, around x = 1.
        check_normal_hint::<log::Log>("log", around(1.0, 1 << 16));
        assert_eq!(log::Log::fast::<true>(1.0), 0.0);
        assert_eq!(log::Log::fast::<false>(1.0), 0.0);
        check_normal_hint::<log::Log10>("log10", around(1.0, 1 << 16));
        assert_eq!(log::Log10::fast::<true>(1.0), 0.0);
        assert_eq!(log::Log10::fast::<false>(1.0), 0.0);
        // The others have no hint today; one they gain later is checked on the stride.
        let none = std::iter::empty;
        check_normal_hint::<exp::Expm1>("expm1", none());
        check_normal_hint::<log::Log1p>("log1p", none());
        check_normal_hint::<sigmoid::Sigmoid>("sigmoid", none());
        check_normal_hint::<sigmoid::Silu>("silu", none());
        check_normal_hint::<softplus::Softplus>("softplus", none());
        check_normal_hint::<tanh::Tanh>("tanh", none());
        check_normal_hint::<trig::Sin>("sin", none());
        check_normal_hint::<trig::Cos>("cos", none());
        check_normal_hint::<erf::Erf>("erf", none());
        check_normal_hint::<gelu::Gelu>("gelu", none());
        check_normal_hint::<erf::GeluErf>("gelu_erf", none());
    }
}
