//! Oracle for the norms (candle_repro::norm): y_i = (x_i - mean) w_i / sqrt(V) + b_i with
//! V = sum (x_j - mean)^2 / n + eps, evaluated with MPFR and rounded once to a format.
//!
//! Exact pieces first (MPFR at 4096 bits holds them exactly): Z = n x_i - sum x, W = n
//! sum x^2 - (sum x)^2 + n^2 eps (so that y = Z w / sqrt(W) + b). Then Ziv's strategy:
//! directed bounds of y at a working precision that doubles until both round to the same
//! value; when they never agree (y exactly a midpoint of the format), an exact check of
//! (Z w)^2 = (m - b)^2 W decides the tie (to even). An exact zero's sign: IEEE's for the
//! same sequence in f64 ((x - mean) exactly 0 is +0 for LayerNorm, x itself for RMSNorm).
//! Only finite rows with V > 0: the tests check the special rows separately.

use super::{Format, Mpfr, Num, RNDD, RNDN, RNDU, Rnd, fit_to_format};
use std::os::raw::{c_int, c_long};

#[link(name = "libmpfr.so.6", kind = "dylib", modifiers = "+verbatim")]
unsafe extern "C" {
    fn mpfr_mul(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_mul_si(r: *mut Mpfr, x: *const Mpfr, y: c_long, rnd: Rnd) -> c_int;
    fn mpfr_add(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_sub(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_div(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_sqrt(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_set(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_cmp(a: *const Mpfr, b: *const Mpfr) -> c_int;
    fn mpfr_sgn(a: *const Mpfr) -> c_int;
}

const EXACT: i64 = 4096;

fn exact(v: f64) -> Num {
    Num::from_f64(v, EXACT)
}

/// a op b at the exact precision, asserting exactness.
fn op(
    f: unsafe extern "C" fn(*mut Mpfr, *const Mpfr, *const Mpfr, Rnd) -> c_int,
    a: &Num,
    b: &Num,
) -> Num {
    let mut r = Num::new(EXACT);
    let t = unsafe { f(r.p(), a.c(), b.c(), RNDN) };
    assert_eq!(t, 0, "not exact at {EXACT} bits");
    r
}

fn scale_i(a: &Num, k: i64) -> Num {
    let mut r = Num::new(EXACT);
    let t = unsafe { mpfr_mul_si(r.p(), a.c(), k as c_long, RNDN) };
    assert_eq!(t, 0);
    r
}

fn round_to(b: &Num, fmt: Format) -> f64 {
    let mut y = Num::new(fmt.precision);
    let t = unsafe { mpfr_set(y.p(), b.c(), RNDN) };
    fit_to_format(&mut y, t, fmt)
}

/// A bound of a / sqrt(w) + b at precision `prec`, below (`up = false`) or above.
fn bound(a: &Num, w: &Num, b: &Num, prec: i64, up: bool) -> Num {
    let (same, opp) = if up { (RNDU, RNDD) } else { (RNDD, RNDU) };
    let a_neg = unsafe { mpfr_sgn(a.c()) } < 0;
    let mut s = Num::new(prec);
    // a / sqrt(w) for a >= 0 falls as sqrt(w) grows: a lower bound divides by an upper
    // bound of sqrt(w); for a < 0 it rises, the other way round.
    let sqrt_dir = if a_neg { same } else { opp };
    unsafe { mpfr_sqrt(s.p(), w.c(), sqrt_dir) };
    let mut q = Num::new(prec);
    unsafe { mpfr_div(q.p(), a.c(), s.c(), same) };
    let mut y = Num::new(prec);
    unsafe { mpfr_add(y.p(), q.c(), b.c(), same) };
    y
}

/// The correctly rounded outputs of one finite row (V > 0): `remove_mean` for LayerNorm.
pub fn norm_row(
    x: &[f64],
    w: &[f64],
    b: Option<&[f64]>,
    eps: f64,
    remove_mean: bool,
    fmt: Format,
) -> Vec<f64> {
    let n = x.len() as i64;
    let mut sx = exact(0.0);
    let mut sxx = exact(0.0);
    for &v in x {
        let e = exact(v);
        if remove_mean {
            sx = op(mpfr_add, &sx, &e);
        }
        sxx = op(mpfr_add, &sxx, &op(mpfr_mul, &e, &e));
    }
    let n2eps = scale_i(&scale_i(&exact(eps), n), n);
    let big_w = op(
        mpfr_add,
        &op(mpfr_sub, &scale_i(&sxx, n), &op(mpfr_mul, &sx, &sx)),
        &n2eps,
    );
    assert!(unsafe { mpfr_sgn(big_w.c()) } > 0, "V must be positive");
    (0..x.len())
        .map(|i| {
            let z = op(mpfr_sub, &scale_i(&exact(x[i]), n), &sx);
            let a = op(mpfr_mul, &z, &exact(w[i]));
            let bi = b.map_or(0.0, |b| b[i]);
            let bn = exact(bi);
            if unsafe { mpfr_sgn(a.c()) } == 0 {
                // y = (+-0) + b exactly: IEEE's signs in f64.
                let dz = if remove_mean { 0.0 } else { x[i] };
                let zz = dz * w[i];
                return if b.is_some() { zz + bi } else { zz };
            }
            let mut prec = 128;
            loop {
                let lo = round_to(&bound(&a, &big_w, &bn, prec, false), fmt);
                let hi = round_to(&bound(&a, &big_w, &bn, prec, true), fmt);
                if lo.to_bits() == hi.to_bits() {
                    return lo;
                }
                if prec >= 1 << 12 {
                    // A midpoint? Exactly one candidate boundary m between lo and hi.
                    let m = (lo + hi) / 2.0;
                    let c = op(mpfr_sub, &exact(m), &bn);
                    let lhs = op(mpfr_mul, &a, &a);
                    let rhs = op(mpfr_mul, &op(mpfr_mul, &c, &c), &big_w);
                    let same_sign =
                        (unsafe { mpfr_sgn(a.c()) } > 0) == (unsafe { mpfr_sgn(c.c()) } > 0);
                    assert!(
                        same_sign && unsafe { mpfr_cmp(lhs.c(), rhs.c()) } == 0,
                        "no decision at {prec} bits and not a midpoint"
                    );
                    // A tie: the even neighbour.
                    let lo_even = match fmt.precision {
                        24 => (lo as f32).to_bits() & 1 == 0,
                        8 => half::bf16::from_f64(lo).to_bits() & 1 == 0,
                        _ => half::f16::from_f64(lo).to_bits() & 1 == 0,
                    };
                    return if lo_even { lo } else { hi };
                }
                prec *= 2;
            }
        })
        .collect()
}
