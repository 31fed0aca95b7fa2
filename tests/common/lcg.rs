//! The matmul tests' value generator (`#[path = "common/lcg.rs"] mod lcg;`): a 64-bit LCG
//! and the kinds of values the products are tested on.
#![allow(dead_code)]

/// Knuth's MMIX linear congruential generator, top 53 bits.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn sign(&mut self) -> f64 {
        if self.next() & 1 == 0 { 1.0 } else { -1.0 }
    }
    /// Roughly normal(0, 1).
    pub fn normal(&mut self) -> f64 {
        (0..4).map(|_| self.unit()).sum::<f64>() * 1.7 - 3.4
    }
    /// Every kind of value the tests use: normal, spread over the binades lo..hi, tiny,
    /// huge, signed zeros, and (with `specials`) NaN and infinities.
    pub fn value(&mut self, specials: bool, lo: i32, hi: i32) -> f64 {
        match self.below(if specials { 20 } else { 16 }) {
            0 => 0.0,
            1 => -0.0,
            2 => self.sign() * 2f64.powi(lo),
            3 => self.sign() * 2f64.powi(hi),
            4..=9 => self.sign() * (self.unit() * 4.0),
            10..=15 => {
                let e = lo + self.below((hi - lo + 1) as u64) as i32;
                self.sign() * (1.0 + self.unit()) * 2f64.powi(e)
            }
            16 => f64::NAN,
            17 => f64::INFINITY,
            18 => f64::NEG_INFINITY,
            _ => 1.0,
        }
    }
}
