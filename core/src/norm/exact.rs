//! The norms' exact tier: the sign of y - m for an output y and a dyadic m, in integers.
//!
//! With the row's exact sums sx = sum x_j and sxx = sum x_j^2 (fixed-point, order-free),
//! multiply the definition through by n: the output is
//!     y = Z w / sqrt(W) + b,   Z = n x - sx,   W = n sxx - sx^2 + n^2 eps
//! (RMSNorm: sx taken as 0), all of Z, W, w, b and m dyadic rationals. With A = Z w and
//! C = m - b, y - m = A / sqrt(W) - C, whose sign is that of A when C is 0 or of the
//! other sign, else compares A^2 with C^2 W (both sides scaled to integers; W > 0). Every
//! quantity is a [`Big`] at a fixed power-of-two scale; the largest, C^2 W, stays below
//! 2^1400 for any f32 row of fewer than 2^64 elements. CUDA mirror:
//! `kernels/norm/exact.cuh`.

use super::NormParams;
use crate::math::bigint::{Big, SBig, decompose_f64, scaled};
use crate::math::exact_dot::{BASE_EXP, ExactDot};
use std::cmp::Ordering;

/// sx at scale 2^BASE_EXP, W at scale 2^(2 BASE_EXP).
pub(crate) struct ExactRow {
    n: u64,
    remove_mean: bool,
    sx: SBig,
    w: Big,
}

/// One output's A = Z w (at scale 2^a_scale), its square, the bias, and the sign an exact
/// zero A carries.
pub(crate) struct Element {
    a: SBig,
    a_scale: i32,
    a2: Big,
    b: Option<f32>,
    a_zero_negative: bool,
}

impl ExactRow {
    /// The row's exact sums (finite elements).
    pub(crate) fn new(xs: &[f32], p: NormParams) -> ExactRow {
        let n = xs.len() as u64;
        let mut sxx = ExactDot::new();
        let mut sx = ExactDot::new();
        for &v in xs {
            sxx.add_product(v, v);
            if p.remove_mean {
                sx.add(v);
            }
        }
        let (_, n2) = sxx.to_big().expect("finite row");
        let (sx_neg, nx) = sx.to_big().expect("finite row");
        let sx = SBig::new(sx_neg, nx);
        // W = n sxx - sx^2 + n^2 eps, at scale 2^(2 BASE_EXP) = 2^-596.
        let n_sxx = SBig::new(false, n2.mul_u64(n).shl((-BASE_EXP) as u32));
        let sx2 = sx.mul(&sx);
        let (_, me, ee) = decompose_f64(p.eps as f64);
        let n2_eps = scaled(false, me as u128, ee, 2 * BASE_EXP)
            .mul(&SBig::new(false, Big::from_u128(n as u128 * n as u128)));
        let w = n_sxx.add(&SBig::new(!sx2.neg, sx2.mag)).add(&n2_eps);
        debug_assert!(!w.neg);
        ExactRow {
            n,
            remove_mean: p.remove_mean,
            sx,
            w: w.mag,
        }
    }

    /// Whether V is exactly 0 (then every output is 0/0: NaN).
    pub(crate) fn v_is_zero(&self) -> bool {
        self.w.is_zero()
    }

    /// The quantities of output (x, w, b).
    pub(crate) fn element(&self, x: f32, w: f32, b: Option<f32>) -> Element {
        let (xneg, mx, ex) = decompose_f64(x as f64);
        // Z = n x - sx at scale 2^BASE_EXP.
        let nx = scaled(xneg, mx as u128 * self.n as u128, ex, BASE_EXP);
        let z = if self.remove_mean {
            nx.add(&SBig::new(!self.sx.neg, self.sx.mag))
        } else {
            nx
        };
        let (wneg, mw, ew) = decompose_f64(w as f64);
        let a = z.mul(&SBig::new(wneg, Big::from_u128(mw as u128)));
        // An exact zero Z is +0 (x - mean, IEEE) or x itself (RMSNorm), times w.
        let z_zero_negative = !self.remove_mean && xneg;
        Element {
            a2: a.mag.mul(&a.mag),
            a,
            a_scale: BASE_EXP + ew,
            b,
            a_zero_negative: z_zero_negative != wneg,
        }
    }
}

impl Element {
    pub(crate) fn a_is_zero(&self) -> bool {
        self.a.is_zero()
    }

    pub(crate) fn a_is_negative(&self) -> bool {
        self.a.neg
    }

    /// The sign an exact zero A carries.
    pub(crate) fn a_zero_negative(&self) -> bool {
        self.a_zero_negative
    }

    /// The sign of an output that rounds to zero: y's own sign, or for an exact zero the
    /// IEEE sign of (A r) + b.
    pub(crate) fn zero_negative(&self, row: &ExactRow) -> bool {
        match decide(row, self, 0.0) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => {
                if !self.a.is_zero() {
                    return false; // A r + b cancels exactly: +0
                }
                match self.b {
                    Some(b) => self.a_zero_negative && b.is_sign_negative(),
                    None => self.a_zero_negative,
                }
            }
        }
    }
}

/// The exact ordering of the output against the dyadic `m` (V > 0).
pub(crate) fn decide(row: &ExactRow, e: &Element, m: f64) -> Ordering {
    // C = m - b at scale 2^sc (zero terms take no part in choosing the scale).
    let (mneg, mm, em) = decompose_f64(m);
    let (bneg, mb, eb) = decompose_f64(e.b.unwrap_or(0.0) as f64);
    let sc = match (mm == 0, mb == 0) {
        (true, true) => 0,
        (true, false) => eb,
        (false, true) => em,
        (false, false) => em.min(eb),
    };
    let c = scaled(mneg, mm as u128, em, sc).add(&scaled(!bneg, mb as u128, eb, sc));
    let c_sign = if c.is_zero() {
        Ordering::Equal
    } else if c.neg {
        Ordering::Less
    } else {
        Ordering::Greater
    };
    if e.a.is_zero() {
        // y - m = -C.
        return c_sign.reverse();
    }
    match (e.a.neg, c_sign) {
        (false, Ordering::Less | Ordering::Equal) => return Ordering::Greater,
        (true, Ordering::Greater | Ordering::Equal) => return Ordering::Less,
        _ => {}
    }
    // Same signs: compare A^2 2^(2 a_scale - 2 BASE_EXP) with C^2 W 2^(2 sc).
    let e_l = 2 * e.a_scale - 2 * BASE_EXP;
    let e_r = 2 * sc;
    let base = e_l.min(e_r);
    let l = e.a2.shl((e_l - base) as u32);
    let r = c.mag.mul(&c.mag).mul(&row.w).shl((e_r - base) as u32);
    let ord = l.cmp(&r);
    if e.a.neg { ord.reverse() } else { ord }
}
