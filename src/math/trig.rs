//! PLACEHOLDER: being implemented.

use super::unary::CrUnary;

pub(crate) struct Sin;

impl CrUnary for Sin {
    const FAST_REL_ERR: f64 = 0.0;
    fn in_fast_domain(_x: f32) -> bool {
        false
    }
    fn fast(_x: f32) -> f64 {
        f64::NAN
    }
    fn accurate(_x: f32) -> f64 {
        f64::NAN
    }
}

pub(crate) struct Cos;

impl CrUnary for Cos {
    const FAST_REL_ERR: f64 = 0.0;
    fn in_fast_domain(_x: f32) -> bool {
        false
    }
    fn fast(_x: f32) -> f64 {
        f64::NAN
    }
    fn accurate(_x: f32) -> f64 {
        f64::NAN
    }
}
