//! Test oracle: correctly rounded f32 / bf16 / f16 results of the math core's functions,
//! computed with GNU MPFR.
//!
//! It links the system's `libmpfr.so.6` directly (the runtime library that GCC itself
//! depends on, so it is present wherever a C toolchain is), declaring the few functions it
//! needs; no development package or build of GMP/MPFR is required.
//!
//! * Functions MPFR has (exp, expm1, log, log1p, log10, sin, cos, tanh, erf) are evaluated
//!   by MPFR, correctly rounded to the target precision in the unbounded exponent range,
//!   then moved into the format's range with `mpfr_check_range` and `mpfr_subnormalize`
//!   (MPFR's documented way to emulate IEEE formats, which avoids double rounding).
//! * Composites (sigmoid, silu, softplus, gelu, gelu_erf) are bracketed with directed
//!   roundings at a working precision that doubles until both ends round to the same value
//!   (Ziv's strategy with rigorous interval bounds), so exact cases such as sigmoid(0) = 1/2
//!   end too. gelu, the tanh approximation, is x / (1 + e^-w) with w = x (A + B x^2),
//!   A = sqrt(8/pi), B = 0.044715 A (the same real function as x/2 (1 + tanh(sqrt(2/pi)
//!   (x + 0.044715 x^3)))), with pi and 0.044715 = 44715/10^6 bounded in the needed
//!   directions; gelu_erf is x erfc(-x/sqrt 2)/2.
//!
//! Special values follow the limits: sigmoid(-inf) = +0, silu(-inf) = -0, softplus(-inf) = +0,
//! erf(±inf) = ±1, gelu(-inf) = gelu_erf(-inf) = -0.

use half::{bf16, f16};
/// Oracle of the FFT's twiddle factors.
pub mod fft;
/// Oracle of the norms (RMSNorm, LayerNorm).
pub mod norm;
/// Oracle of the rotary embedding (tables and rotation).
pub mod rope;
use std::os::raw::{c_int, c_long};

#[repr(C)]
struct Mpfr {
    prec: c_long,
    sign: c_int,
    exp: c_long,
    d: *mut u64,
}

type Rnd = c_int;
const RNDN: Rnd = 0;
const RNDU: Rnd = 2;
const RNDD: Rnd = 3;

#[link(name = "libmpfr.so.6", kind = "dylib", modifiers = "+verbatim")]
unsafe extern "C" {
    fn mpfr_init2(x: *mut Mpfr, prec: c_long);
    fn mpfr_clear(x: *mut Mpfr);
    fn mpfr_set_d(x: *mut Mpfr, d: f64, rnd: Rnd) -> c_int;
    fn mpfr_set(x: *mut Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_get_d(x: *const Mpfr, rnd: Rnd) -> f64;
    fn mpfr_exp(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_expm1(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_log(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_log1p(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_log10(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_sin(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_cos(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_tanh(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_erf(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_erfc(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_const_pi(r: *mut Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_sqrt(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_sqrt_ui(r: *mut Mpfr, u: std::os::raw::c_ulong, rnd: Rnd) -> c_int;
    fn mpfr_ui_div(r: *mut Mpfr, u: std::os::raw::c_ulong, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_div_ui(r: *mut Mpfr, x: *const Mpfr, u: std::os::raw::c_ulong, rnd: Rnd) -> c_int;
    fn mpfr_sub(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_add_ui(r: *mut Mpfr, x: *const Mpfr, u: u64, rnd: Rnd) -> c_int;
    fn mpfr_add(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_div(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_neg(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_mul(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_sum(r: *mut Mpfr, tab: *const *mut Mpfr, n: std::os::raw::c_ulong, rnd: Rnd) -> c_int;
    fn mpfr_get_emin() -> c_long;
    fn mpfr_get_emax() -> c_long;
    fn mpfr_set_emin(e: c_long) -> c_int;
    fn mpfr_set_emax(e: c_long) -> c_int;
    fn mpfr_check_range(x: *mut Mpfr, t: c_int, rnd: Rnd) -> c_int;
    fn mpfr_subnormalize(x: *mut Mpfr, t: c_int, rnd: Rnd) -> c_int;
    fn mpfr_buildopt_tls_p() -> c_int;
}

/// An owned MPFR number.
struct Num(Box<Mpfr>);

impl Num {
    fn new(prec: i64) -> Num {
        let mut m = Box::new(Mpfr {
            prec: 0,
            sign: 0,
            exp: 0,
            d: std::ptr::null_mut(),
        });
        unsafe { mpfr_init2(&mut *m, prec as c_long) };
        Num(m)
    }
    fn from_f64(x: f64, prec: i64) -> Num {
        let mut n = Num::new(prec);
        let t = unsafe { mpfr_set_d(n.p(), x, RNDN) };
        assert_eq!(t, 0, "input not exact");
        n
    }
    fn p(&mut self) -> *mut Mpfr {
        &mut *self.0
    }
    fn c(&self) -> *const Mpfr {
        &*self.0
    }
    fn to_f64(&self) -> f64 {
        unsafe { mpfr_get_d(self.c(), RNDN) }
    }
}

impl Drop for Num {
    fn drop(&mut self) {
        unsafe { mpfr_clear(self.p()) }
    }
}

// The crate's list of its correctly rounded functions, read from the crate's own file so
// the oracle covers exactly what the math core provides.
include!("../../../core/src/math/functions.rs");

/// Generates `Func` from the crate's list (`unary_functions!`).
macro_rules! oracle_functions {
    ($($name:ident $ty:ident in $family:ident: $doc:literal, $x:literal => $bits:literal;)*) => {
        /// The functions of the math core.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Func {
            $(#[doc = $doc] $ty,)*
        }

        impl Func {
            /// Every function, in the crate's order.
            pub const ALL: [Func; [$(stringify!($name)),*].len()] = [$(Func::$ty),*];

            /// The function's name in the crate (`exp`, `log1p`, ...).
            pub fn name(self) -> &'static str {
                match self {
                    $(Func::$ty => stringify!($name),)*
                }
            }
        }
    };
}
unary_functions!(oracle_functions);

impl Func {
    pub fn from_name(name: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// An IEEE binary format: significant bits and the normal exponent range.
#[derive(Clone, Copy, Debug)]
pub struct Format {
    pub precision: i64,
    pub emin: i64,
    pub emax: i64,
}

pub const F32: Format = Format {
    precision: 24,
    emin: -126,
    emax: 127,
};
pub const BF16: Format = Format {
    precision: 8,
    emin: -126,
    emax: 127,
};
pub const F16: Format = Format {
    precision: 11,
    emin: -14,
    emax: 15,
};

/// Move `y` (already rounded to the format's precision, ternary `t`, in the wide exponent
/// range) into the format's exponent range, subnormals and overflow included.
fn fit_to_format(y: &mut Num, t: c_int, fmt: Format) -> f64 {
    unsafe {
        let (old_emin, old_emax) = (mpfr_get_emin(), mpfr_get_emax());
        // MPFR significands are in [1/2, 1): its exponents are IEEE's plus one.
        mpfr_set_emin((fmt.emin - fmt.precision + 2) as c_long);
        mpfr_set_emax((fmt.emax + 1) as c_long);
        let t = mpfr_check_range(y.p(), t, RNDN);
        mpfr_subnormalize(y.p(), t, RNDN);
        let r = y.to_f64();
        mpfr_set_emin(old_emin);
        mpfr_set_emax(old_emax);
        r
    }
}

/// f(x) by MPFR itself at `y`'s precision (to nearest); the ternary value.
fn direct_into(f: Func, x: f64, y: &mut Num) -> c_int {
    let xn = Num::from_f64(x, 53);
    unsafe {
        let op = match f {
            Func::Exp => mpfr_exp,
            Func::Expm1 => mpfr_expm1,
            Func::Log => mpfr_log,
            Func::Log1p => mpfr_log1p,
            Func::Log10 => mpfr_log10,
            Func::Sin => mpfr_sin,
            Func::Cos => mpfr_cos,
            Func::Tanh => mpfr_tanh,
            Func::Erf => mpfr_erf,
            _ => unreachable!(),
        };
        op(y.p(), xn.c(), RNDN)
    }
}

/// Round the exact value of a function MPFR evaluates directly.
fn direct(f: Func, x: f64, fmt: Format) -> f64 {
    let mut y = Num::new(fmt.precision);
    let t = direct_into(f, x, &mut y);
    fit_to_format(&mut y, t, fmt)
}

/// Whether MPFR evaluates `f` itself (else it is a composite bracketed by bounds).
fn is_direct(f: Func) -> bool {
    !matches!(
        f,
        Func::Sigmoid | Func::Silu | Func::Softplus | Func::Gelu | Func::GeluErf
    )
}

/// The opposite rounding direction.
fn opposite(r: Rnd) -> Rnd {
    if r == RNDU { RNDD } else { RNDU }
}

/// A lower (`up = false`) or upper bound of the composite at working precision `prec`.
fn composite_bound(f: Func, x: f64, prec: i64, up: bool) -> Num {
    let (r_same, r_opp) = if up { (RNDU, RNDD) } else { (RNDD, RNDU) };
    let xn = Num::from_f64(x, 53);
    let mut out = Num::new(prec);
    unsafe {
        match f {
            Func::Softplus => {
                // softplus(x) = ln(1 + e^x) increases with e^x; for x > 0 use
                // x + ln(1 + e^-x) so that e^x never overflows.
                let mut e = Num::new(prec);
                let mut l = Num::new(prec);
                if x > 0.0 {
                    let mut mx = Num::new(53);
                    mpfr_neg(mx.p(), xn.c(), RNDN);
                    mpfr_exp(e.p(), mx.c(), r_same);
                    mpfr_log1p(l.p(), e.c(), r_same);
                    mpfr_add(out.p(), xn.c(), l.c(), r_same);
                } else {
                    mpfr_exp(e.p(), xn.c(), r_same);
                    mpfr_log1p(out.p(), e.c(), r_same);
                }
            }
            Func::Sigmoid | Func::Silu => {
                // |value| = |x|^k / (1 + e^-x), k = 0 for sigmoid, 1 for silu; the sign is x's
                // for silu. A bound on the magnitude in direction `dir` needs the
                // denominator bounded the opposite way.
                let negative_result = f == Func::Silu && x < 0.0;
                let (mag_same, mag_opp) = if negative_result {
                    (r_opp, r_same)
                } else {
                    (r_same, r_opp)
                };
                let mut mx = Num::new(53);
                mpfr_neg(mx.p(), xn.c(), RNDN);
                let mut den = Num::new(prec);
                mpfr_exp(den.p(), mx.c(), mag_opp);
                mpfr_add_ui(den.p(), den.c(), 1, mag_opp);
                let num = if f == Func::Silu {
                    Num::from_f64(x.abs(), 53)
                } else {
                    Num::from_f64(1.0, 53)
                };
                mpfr_div(out.p(), num.c(), den.c(), mag_same);
                if negative_result {
                    mpfr_neg(out.p(), out.c(), RNDN);
                }
            }
            Func::Gelu => {
                // |gelu(x)| = |x| / (1 + e^-v) for x > 0 and |x| / (1 + e^v) for x < 0, with
                // v = |w| = |x| (A + B x^2) >= 0. A bound on the magnitude in one direction
                // needs the denominator the other way: e^-v (x > 0) or e^v (x < 0) the
                // other way, so v the same way for x > 0 and the other way for x < 0.
                let neg = x < 0.0;
                let (mag_same, mag_opp) = if neg {
                    (r_opp, r_same)
                } else {
                    (r_same, r_opp)
                };
                let v_dir = if neg { mag_opp } else { mag_same };
                let ax = Num::from_f64(x.abs(), 53);
                // A = sqrt(8 / pi) in v_dir: pi the other way.
                let mut a = Num::new(prec);
                mpfr_const_pi(a.p(), opposite(v_dir));
                mpfr_ui_div(a.p(), 8, a.c(), v_dir);
                mpfr_sqrt(a.p(), a.c(), v_dir);
                // B = A * 44715 / 10^6, then v = |x| (A + B x^2), all terms positive.
                let mut v = Num::from_f64(44715.0, 53);
                let mut b = Num::new(prec);
                mpfr_div_ui(b.p(), v.c(), 1_000_000, v_dir);
                mpfr_mul(b.p(), b.c(), a.c(), v_dir);
                v = Num::new(prec);
                mpfr_mul(v.p(), ax.c(), ax.c(), v_dir);
                mpfr_mul(v.p(), v.c(), b.c(), v_dir);
                mpfr_add(v.p(), v.c(), a.c(), v_dir);
                mpfr_mul(v.p(), v.c(), ax.c(), v_dir);
                if !neg {
                    mpfr_neg(v.p(), v.c(), RNDN);
                }
                let mut den = Num::new(prec);
                mpfr_exp(den.p(), v.c(), mag_opp);
                mpfr_add_ui(den.p(), den.c(), 1, mag_opp);
                mpfr_div(out.p(), ax.c(), den.c(), mag_same);
                if neg {
                    mpfr_neg(out.p(), out.c(), RNDN);
                }
            }
            Func::GeluErf => {
                // |gelu_erf(x)| = |x| erfc(-x / sqrt 2) / 2, erfc decreasing: its argument
                // the other way, so t = |x| / sqrt 2 the same way for x > 0 (argument -t)
                // and the other way for x < 0 (argument t); sqrt 2 opposite to t.
                let neg = x < 0.0;
                let (mag_same, mag_opp) = if neg {
                    (r_opp, r_same)
                } else {
                    (r_same, r_opp)
                };
                let t_dir = if neg { mag_opp } else { mag_same };
                let ax = Num::from_f64(x.abs(), 53);
                let mut s2 = Num::new(prec);
                mpfr_sqrt_ui(s2.p(), 2, opposite(t_dir));
                let mut t = Num::new(prec);
                mpfr_div(t.p(), ax.c(), s2.c(), t_dir);
                if !neg {
                    mpfr_neg(t.p(), t.c(), RNDN);
                }
                let mut e = Num::new(prec);
                mpfr_erfc(e.p(), t.c(), mag_same);
                mpfr_mul(out.p(), e.c(), ax.c(), mag_same);
                mpfr_div_ui(out.p(), out.c(), 2, mag_same); // exact
                if neg {
                    mpfr_neg(out.p(), out.c(), RNDN);
                }
            }
            _ => unreachable!(),
        }
    }
    out
}

fn round_bound(b: &Num, fmt: Format) -> f64 {
    let mut y = Num::new(fmt.precision);
    let t = unsafe { mpfr_set(y.p(), b.c(), RNDN) };
    fit_to_format(&mut y, t, fmt)
}

fn composite(f: Func, x: f64, fmt: Format) -> f64 {
    let mut prec = 64;
    loop {
        let lo = round_bound(&composite_bound(f, x, prec, false), fmt);
        let hi = round_bound(&composite_bound(f, x, prec, true), fmt);
        if lo.to_bits() == hi.to_bits() {
            return lo;
        }
        prec *= 2;
        assert!(prec <= 1 << 16, "{f:?}({x:e}): no decision at {prec} bits");
    }
}

/// Special inputs, by their limits (C99 Annex F where it defines the function).
fn special(f: Func, x: f64) -> Option<f64> {
    if x.is_nan() {
        return Some(f64::NAN);
    }
    if matches!(f, Func::Silu | Func::Gelu | Func::GeluErf) && x == 0.0 {
        return Some(x); // x times a positive function keeps the sign of zero
    }
    if x.is_infinite() {
        let pos = x > 0.0;
        return Some(match f {
            Func::Exp => {
                if pos {
                    f64::INFINITY
                } else {
                    0.0
                }
            }
            Func::Expm1 => {
                if pos {
                    f64::INFINITY
                } else {
                    -1.0
                }
            }
            Func::Log | Func::Log1p | Func::Log10 => {
                if pos {
                    f64::INFINITY
                } else {
                    f64::NAN
                }
            }
            Func::Sin | Func::Cos => f64::NAN,
            Func::Tanh => {
                if pos {
                    1.0
                } else {
                    -1.0
                }
            }
            Func::Sigmoid => {
                if pos {
                    1.0
                } else {
                    0.0
                }
            }
            Func::Silu | Func::Gelu | Func::GeluErf => {
                if pos {
                    f64::INFINITY
                } else {
                    -0.0
                }
            }
            Func::Erf => {
                if pos {
                    1.0
                } else {
                    -1.0
                }
            }
            Func::Softplus => {
                if pos {
                    f64::INFINITY
                } else {
                    0.0
                }
            }
        });
    }
    None
}

fn correctly_rounded(f: Func, x: f64, fmt: Format) -> f64 {
    assert!(
        unsafe { mpfr_buildopt_tls_p() } != 0,
        "this MPFR keeps its exponent range in a global: the oracle needs a thread-safe build"
    );
    if let Some(v) = special(f, x) {
        return v;
    }
    if is_direct(f) {
        direct(f, x, fmt)
    } else {
        composite(f, x, fmt)
    }
}

/// The exact sum of a[i] * b[i] (plus `bias`) rounded once to `fmt` (to nearest even,
/// subnormals and overflow as in IEEE), as an f64 holding that value: each product exact at
/// 106 bits (any two f64 of at most 53 bits), then `mpfr_sum`, MPFR's correctly rounded
/// sum of many terms. NaN, infinities and the sign of an exact zero follow MPFR, which
/// follows IEEE 754 for sums and products.
pub fn dot(a: &[f64], b: &[f64], bias: Option<f64>, fmt: Format) -> f64 {
    assert_eq!(a.len(), b.len());
    let mut terms: Vec<Num> = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| {
            let (xn, yn) = (Num::from_f64(x, 53), Num::from_f64(y, 53));
            let mut p = Num::new(106);
            let t = unsafe { mpfr_mul(p.p(), xn.c(), yn.c(), RNDN) };
            assert_eq!(t, 0, "inexact product {x:e} * {y:e}");
            p
        })
        .collect();
    if let Some(c) = bias {
        terms.push(Num::from_f64(c, 53));
    }
    let ptrs: Vec<*mut Mpfr> = terms.iter_mut().map(|t| t.p()).collect();
    let mut y = Num::new(fmt.precision);
    let t = unsafe {
        mpfr_sum(
            y.p(),
            ptrs.as_ptr(),
            ptrs.len() as std::os::raw::c_ulong,
            RNDN,
        )
    };
    fit_to_format(&mut y, t, fmt)
}

/// f(x) correctly rounded to f32 (canonical NaN for NaN results).
pub fn cr_f32(f: Func, x: f32) -> f32 {
    let v = correctly_rounded(f, x as f64, F32);
    if v.is_nan() {
        f32::from_bits(0x7FC0_0000)
    } else {
        v as f32 // exact: v is an f32 value
    }
}

/// f(x) correctly rounded to bf16, from the exact value (one rounding).
pub fn cr_bf16(f: Func, x: bf16) -> bf16 {
    let v = correctly_rounded(f, x.to_f64(), BF16);
    if v.is_nan() {
        bf16::from_bits(0x7FC0)
    } else {
        bf16::from_f64(v) // exact
    }
}

/// f(x) correctly rounded to f16, from the exact value (one rounding).
pub fn cr_f16(f: Func, x: f16) -> f16 {
    let v = correctly_rounded(f, x.to_f64(), F16);
    if v.is_nan() {
        f16::from_bits(0x7E00)
    } else {
        f16::from_f64(v) // exact
    }
}

/// f(x) at `prec` bits, rounded to nearest, as an f64 (for error measurements in ulps).
pub fn approx_f64(f: Func, x: f64) -> f64 {
    if let Some(v) = special(f, x) {
        return v;
    }
    if is_direct(f) {
        direct(
            f,
            x,
            Format {
                precision: 53,
                emin: -1022,
                emax: 1023,
            },
        )
    } else {
        let lo = composite_bound(f, x, 128, false);
        lo.to_f64()
    }
}

/// f(x) to about 200 bits, as an unevaluated sum hi + lo of two f64 (hi = f(x) rounded
/// to nearest, lo = the rest rounded to nearest): for measuring the error of
/// double-double evaluations (relative error of hi + lo about 2^-106 and below). Special
/// values give (value, 0); results outside f64's normal range are not meaningful here.
pub fn approx_wide(f: Func, x: f64) -> (f64, f64) {
    if let Some(v) = special(f, x) {
        return (v, 0.0);
    }
    let v = if is_direct(f) {
        let mut y = Num::new(200);
        direct_into(f, x, &mut y);
        y
    } else {
        composite_bound(f, x, 256, false)
    };
    let hi = v.to_f64();
    let h = Num::from_f64(hi, 53);
    let mut rest = Num::new(300);
    unsafe { mpfr_sub(rest.p(), v.c(), h.c(), RNDN) }; // exact at 300 bits
    (hi, rest.to_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(cr_f32(Func::Exp, 0.0), 1.0);
        assert_eq!(cr_f32(Func::Exp, 1.0), std::f32::consts::E);
        assert_eq!(cr_f32(Func::Log, 2.0), std::f32::consts::LN_2);
        assert_eq!(cr_f32(Func::Sigmoid, 0.0), 0.5);
        assert_eq!(cr_f32(Func::Silu, 0.0), 0.0);
        assert_eq!(cr_f32(Func::Exp, -200.0), 0.0);
        assert_eq!(cr_f32(Func::Exp, 100.0), f32::INFINITY);
        // smallest subnormal: e^-103.28 ~ 1.4e-45
        assert_eq!(cr_f32(Func::Exp, -103.28).to_bits(), 1);
        assert_eq!(cr_bf16(Func::Exp, bf16::from_f32(1.0)).to_f32(), 2.71875);
        assert_eq!(cr_f16(Func::Exp, f16::from_f32(1.0)).to_f32(), 2.71875);
        assert_eq!(cr_f16(Func::Exp, f16::from_f32(12.0)).to_bits(), 0x7C00);
        assert_eq!(cr_f32(Func::Softplus, 1e30), 1e30);
        assert_eq!(cr_f32(Func::Softplus, -1e30), 0.0);
        assert_eq!(cr_f32(Func::Silu, -1e30).to_bits(), 0x8000_0000);
        assert_eq!(cr_f32(Func::Sin, -0.0).to_bits(), 0x8000_0000);
        assert!(cr_f32(Func::Log, -1.0).is_nan());
        // log10: exact powers of ten, log10(2) (bits from mpmath), the specials.
        assert_eq!(cr_f32(Func::Log10, 1.0).to_bits(), 0);
        assert_eq!(cr_f32(Func::Log10, 1e10), 10.0);
        assert_eq!(cr_f32(Func::Log10, 2.0).to_bits(), 0x3E9A_209B);
        assert_eq!(cr_f32(Func::Log10, 0.0), f32::NEG_INFINITY);
        assert_eq!(cr_f32(Func::Log10, f32::INFINITY), f32::INFINITY);
        assert!(cr_f32(Func::Log10, -1.0).is_nan());
        assert!(cr_f32(Func::Log10, f32::NEG_INFINITY).is_nan());
        // erf(0.5), gelu(1), gelu_erf(1) rounded to f32 (bits from mpmath).
        assert_eq!(cr_f32(Func::Erf, 0.5).to_bits(), 0x3F05_3F7B);
        assert_eq!(cr_f32(Func::Gelu, 1.0).to_bits(), 0x3F57_585C);
        assert_eq!(cr_f32(Func::GeluErf, 1.0).to_bits(), 0x3F57_625F);
        assert_eq!(cr_f32(Func::Erf, f32::NEG_INFINITY), -1.0);
        assert_eq!(cr_f32(Func::Gelu, -0.0).to_bits(), 0x8000_0000);
        assert_eq!(cr_f32(Func::Gelu, -1e30).to_bits(), 0x8000_0000);
        assert_eq!(cr_f32(Func::GeluErf, -1e30).to_bits(), 0x8000_0000);
        assert_eq!(cr_f32(Func::GeluErf, 1e30), 1e30);
        // gelu(-5) = -5 e^w / (1 + e^w), w = -5 (A + 25 B): against f64 arithmetic.
        let a = (8.0 / std::f64::consts::PI).sqrt();
        let w = -5.0 * (a + 25.0 * 0.044715 * a);
        let g = -5.0 * w.exp() / (1.0 + w.exp());
        assert!(((approx_f64(Func::Gelu, -5.0) - g) / g).abs() < 1e-13);
        // The wide value: erf(1) to 2^-100 and beyond.
        let (h, l) = approx_wide(Func::Erf, 1.0);
        assert_eq!(h, 0.8427007929497149);
        assert!(l != 0.0 && l.abs() < 1e-16);
    }

    #[test]
    fn dot_known_values() {
        // 1 + 2^-100 - 1, exactly.
        let a = [1.0, 2f64.powi(-50), -1.0];
        let b = [1.0, 2f64.powi(-50), 1.0];
        assert_eq!(dot(&a, &b, None, F32), 2f64.powi(-100));
        // A tie: 1 + 2^-24 rounds to even (1) in f32; 1 + 3 2^-24 to 1 + 2^-22.
        assert_eq!(dot(&[1.0, 1.0], &[1.0, 2f64.powi(-24)], None, F32), 1.0);
        assert_eq!(
            dot(&[1.0, 3.0], &[1.0, 2f64.powi(-24)], None, F32),
            1.0 + 2f64.powi(-22)
        );
        // Exact zeros: x - x is +0, a sum of -0 is -0; 0 * inf is NaN.
        assert_eq!(dot(&[2.0, -2.0], &[1.0, 1.0], None, F32).to_bits(), 0);
        assert_eq!(
            dot(&[-0.0, 0.0], &[1.0, -1.0], None, F32).to_bits(),
            (-0.0f64).to_bits()
        );
        assert!(dot(&[0.0], &[f64::INFINITY], None, F32).is_nan());
        // Overflow and the smallest subnormal.
        assert_eq!(dot(&[3e38, 3e38], &[1.0, 1.0], None, F32), f64::INFINITY);
        assert_eq!(
            dot(&[2f64.powi(-74)], &[2f64.powi(-75)], None, F32),
            2f64.powi(-149)
        );
        // Half of it is a tie between 0 and 2^-149: even, 0.
        assert_eq!(dot(&[2f64.powi(-75)], &[2f64.powi(-75)], None, F32), 0.0);
    }

    #[test]
    fn matches_f64_libm_far_from_ties() {
        // Sanity check of the plumbing against the platform's f64 math.
        for i in 1..2000 {
            let x = (i as f32) * 0.01 - 10.0;
            let via_f64 = (x as f64).exp() as f32;
            let cr = cr_f32(Func::Exp, x);
            assert!((via_f64.to_bits() as i64 - cr.to_bits() as i64).abs() <= 1);
        }
    }
}
