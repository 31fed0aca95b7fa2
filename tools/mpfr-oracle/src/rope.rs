//! Oracle for the rotary embedding (candle_repro::rope): the same definitions evaluated
//! with MPFR and rounded once.
//!
//! * [`pow_f32`]: theta^e (f32 operands) correctly rounded to f32 (`mpfr_pow`).
//! * [`cos_sin_scaled`]: cos(a) * af and sin(a) * af (f32 a, f32 af) rounded once to a
//!   format, by Ziv's strategy: directed bounds of cos/sin at a working precision that
//!   doubles until both ends round to the same value.
//! * [`dot2`]: a*b + c*d of f64 operands rounded once to a format (exact products at 128
//!   bits, one correctly rounded addition).

use super::{Format, Mpfr, Num, RNDD, RNDN, RNDU, Rnd, fit_to_format};
use std::os::raw::c_int;

#[link(name = "libmpfr.so.6", kind = "dylib", modifiers = "+verbatim")]
unsafe extern "C" {
    fn mpfr_pow(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_mul(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_sin(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_cos(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_add(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_set(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
}

/// theta^e correctly rounded to f32 (theta > 0).
pub fn pow_f32(theta: f32, e: f32) -> f32 {
    let t = Num::from_f64(theta as f64, 53);
    let x = Num::from_f64(e as f64, 53);
    let mut y = Num::new(super::F32.precision);
    let tern = unsafe { mpfr_pow(y.p(), t.c(), x.c(), RNDN) };
    fit_to_format(&mut y, tern, super::F32) as f32
}

fn round_to(b: &Num, fmt: Format) -> f64 {
    let mut y = Num::new(fmt.precision);
    let t = unsafe { mpfr_set(y.p(), b.c(), RNDN) };
    fit_to_format(&mut y, t, fmt)
}

/// f(a) * af rounded once to `fmt` (f = cos if `cos`, else sin), af > 0.
fn trig_scaled(a: f32, af: f32, cos: bool, fmt: Format) -> f64 {
    assert!(af > 0.0);
    let x = Num::from_f64(a as f64, 53);
    let afn = Num::from_f64(af as f64, 53);
    if a == 0.0 {
        // exact: cos 0 = 1, sin 0 = 0
        let v = if cos { af as f64 } else { 0.0 };
        return round_to(&Num::from_f64(v, 53), fmt);
    }
    let mut prec = 64;
    loop {
        let mut ends = [0.0f64; 2];
        for (k, rnd) in [RNDD, RNDU].into_iter().enumerate() {
            let mut f = Num::new(prec);
            unsafe {
                if cos {
                    mpfr_cos(f.p(), x.c(), rnd);
                } else {
                    mpfr_sin(f.p(), x.c(), rnd);
                }
                // af > 0 keeps the direction; the product is exact at prec + 24 bits.
                let mut p = Num::new(prec + 24);
                mpfr_mul(p.p(), f.c(), afn.c(), rnd);
                ends[k] = round_to(&p, fmt);
            }
        }
        if ends[0].to_bits() == ends[1].to_bits() {
            return ends[0];
        }
        prec *= 2;
        assert!(prec <= 1 << 14, "trig_scaled({a:e}, {af:e}): no decision");
    }
}

/// (cos(a) * af, sin(a) * af), each rounded once to `fmt`, as f64 values.
pub fn cos_sin_scaled(a: f32, af: f32, fmt: Format) -> (f64, f64) {
    (
        trig_scaled(a, af, true, fmt),
        trig_scaled(a, af, false, fmt),
    )
}

/// a*b + c*d rounded once to `fmt` (operands of at most 53 bits; products exact at 128
/// bits, one correctly rounded addition, then the format's exponent range).
pub fn dot2(a: f64, b: f64, c: f64, d: f64, fmt: Format) -> f64 {
    let (an, bn, cn, dn) = (
        Num::from_f64(a, 53),
        Num::from_f64(b, 53),
        Num::from_f64(c, 53),
        Num::from_f64(d, 53),
    );
    let mut p = Num::new(128);
    let mut q = Num::new(128);
    let mut y = Num::new(fmt.precision);
    unsafe {
        mpfr_mul(p.p(), an.c(), bn.c(), RNDN);
        mpfr_mul(q.p(), cn.c(), dn.c(), RNDN);
        let t = mpfr_add(y.p(), p.c(), q.c(), RNDN);
        fit_to_format(&mut y, t, fmt)
    }
}
