//! Twiddle factors: w_n^k = exp(-2 pi i k / n), from an angle reduced in integers.
//!
//! The index k is reduced modulo n with integer arithmetic (k = j*m mod n never goes
//! through a floating-point product), and exp(-2 pi i k/n) = cos(2 pi k/n) - i sin(2 pi k/n)
//! is evaluated by the crate's double-double sincos of a rational fraction of a turn (relative
//! error below 2^-100), then rounded once to f32 or f64. So every table entry is the
//! correctly rounded value (f32) and the tables have the same bytes on every device: the
//! CUDA path uploads these tables rather than computing its own.

use super::scalar::FftScalar;
use crate::math::dd::DD;
use crate::math::trig::sincos_dd_of_turns;

/// (cos, -sin) of 2 pi k / n as double-doubles, k reduced modulo n in integers.
#[doc(hidden)]
pub fn twiddle_dd(k: u64, n: u64) -> (DD, DD) {
    let k = k % n;
    let (s, c) = sincos_dd_of_turns(k, n);
    (c, s.neg())
}

/// w_n^k = exp(-2 pi i k / n) rounded once to `T`, as (re, im).
#[doc(hidden)]
pub fn twiddle<T: FftScalar>(k: u64, n: u64) -> (T, T) {
    let (c, s) = twiddle_dd(k, n);
    (T::from_dd(c), T::from_dd(s))
}

/// w_n^k as the f32 and the f64 tables hold it, ((re, im), (re, im)): for the verification
/// tools (`examples/hard_inputs.rs`, `tests/hard_inputs.rs`). Not part of the API.
#[doc(hidden)]
pub fn probe_twiddle(k: u64, n: u64) -> ((f32, f32), (f64, f64)) {
    (twiddle::<f32>(k, n), twiddle::<f64>(k, n))
}

/// The chirp exp(-pi i j^2 / n) of Bluestein's algorithm: j^2 is reduced modulo 2n in
/// integers (exact for any j < 2^32), so large j lose nothing to the angle.
#[doc(hidden)]
pub fn chirp_dd(j: u64, n: u64) -> (DD, DD) {
    let two_n = 2 * n as u128;
    let q = ((j as u128 * j as u128) % two_n) as u64;
    // pi j^2 / n = 2 pi (j^2 mod 2n) / 2n.
    let (s, c) = sincos_dd_of_turns(q, 2 * n);
    (c, s.neg())
}

/// Split (re, im) tables of w_n^(k * stride) for k in 0..len.
#[doc(hidden)]
pub fn table<T: FftScalar>(len: usize, stride: u64, n: u64) -> (Vec<T>, Vec<T>) {
    (0..len as u64)
        .map(|k| twiddle::<T>((k * stride) % n, n))
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_angles_are_exact() {
        assert_eq!(twiddle::<f32>(0, 8), (1.0, 0.0));
        assert_eq!(twiddle::<f32>(2, 8), (0.0, -1.0));
        assert_eq!(twiddle::<f32>(4, 8), (-1.0, 0.0));
        assert_eq!(twiddle::<f32>(6, 8), (0.0, 1.0));
        let (c, s) = twiddle::<f32>(1, 8);
        assert_eq!(c, f32::FRAC_1_SQRT_2);
        assert_eq!(s, -f32::FRAC_1_SQRT_2);
        assert_eq!(twiddle::<f64>(3, 8).0, -std::f64::consts::FRAC_1_SQRT_2);
    }

    #[test]
    fn index_is_reduced_in_integers() {
        assert_eq!(twiddle::<f32>(5 + 7 * 1000, 7), twiddle::<f32>(5, 7));
        // (j + 2n)^2 = j^2 mod 2n: the same chirp.
        let a = chirp_dd(3 + 2 * 9, 9);
        let b = chirp_dd(3, 9);
        assert_eq!((a.0.hi, a.1.hi), (b.0.hi, b.1.hi));
    }
}
