//! The CUDA matmul's device math, compiled as host C++ (`kernel_hostcheck::matmul`),
//! against the Rust code bit for bit: the exact and compensated dot products and the
//! f8e4m3 conversions, over many more inputs than whole launches could take. The kernels
//! themselves (line stats, the k-ordered sum, the tiers) run whole on the emulated device
//! in `tests/emulated_device.rs`. No CUDA needed.
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_repro::math::exact_dot::{dot2, exact_dot};
use candle_repro::math::f8::{Overflow, f8e4m3_to_f32, f32_to_f8e4m3};
use kernel_hostcheck::matmul as dev;

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;

#[test]
fn dot_products_match_bit_for_bit() {
    let mut rng = Lcg(1);
    let mut cases = 0;
    for _ in 0..20_000 {
        let n = rng.below(70) as usize;
        let specials = rng.below(4) == 0;
        let a: Vec<f32> = (0..n)
            .map(|_| rng.value(specials, -149, 127) as f32)
            .collect();
        let b: Vec<f32> = (0..n)
            .map(|_| rng.value(specials, -149, 127) as f32)
            .collect();
        let bias = (rng.below(2) == 0).then(|| rng.value(specials, -149, 127) as f32);
        let want = exact_dot(n, |i| a[i], |i| b[i], bias).to_bits();
        assert_eq!(
            dev::exact_dot(&a, &b, bias),
            want,
            "exact_dot {a:?} {b:?} {bias:?}"
        );
        let want2 = dot2(n, |i| a[i], |i| b[i], bias).to_bits();
        let got2 = dev::dot2(&a, &b, bias);
        // NaN payloads may differ between the two compilers' NaN propagation: compare NaN
        // as NaN.
        if f64::from_bits(want2).is_nan() {
            assert!(f64::from_bits(got2).is_nan());
        } else {
            assert_eq!(got2, want2, "dot2 {a:?} {b:?} {bias:?}");
        }
        cases += 1;
    }
    println!("exact and compensated dot products: {cases} cases, 0 differences");
}

#[test]
fn f8e4m3_conversions_match_bit_for_bit() {
    for b in 0..=255u8 {
        assert_eq!(dev::f8e4m3_to_f32(b), f8e4m3_to_f32(b).to_bits(), "{b:#x}");
    }
    let mut count = 0;
    for bits in (0..=u32::MAX)
        .step_by(4099)
        .chain([0x43E8_0000, 0x43E8_0001, 0x7F80_0000])
    {
        let x = f32::from_bits(bits);
        for (sat, mode) in [(true, Overflow::Saturate), (false, Overflow::Nan)] {
            assert_eq!(
                dev::f32_to_f8e4m3(bits, sat),
                f32_to_f8e4m3(x, mode),
                "{x:e} {mode:?}"
            );
        }
        count += 1;
    }
    println!("f8e4m3: 256 widenings, {count} narrowings x 2 overflow rules, 0 differences");
}

/// The integer tier's slicing (`oz_slice_line` of `kernels/matmul/ozaki.cuh`) against its
/// definition computed here independently: each block's E with 2^(E-1) <= max |x| < 2^E,
/// Y = trunc(x 2^(F-E)) written in S base-2^7 digits of |Y| with Y's sign on every digit,
/// the block's level count L (no nonzero digit at levels >= L, one at L - 1), the tail
/// tau = x - Y 2^(E-F) (|tau| < 2^(E-F)), zeros past the line and for NaN and infinities,
/// and the tail norm (NaN when the line has a non-finite element). Lines of spread
/// exponents, subnormals, the largest finite values and specials, S = 4 and 6.
#[test]
fn integer_tier_slices_follow_their_definition() {
    let mut rng = Lcg(27);
    let mut elements = 0;
    for case in 0..3000 {
        let n = 1 + rng.below(200) as usize;
        let specials = case % 5 == 0;
        let (lo, hi) = match case % 3 {
            0 => (-149, 127),
            1 => (-10, 10),
            _ => (-2, 0),
        };
        let x: Vec<f32> = (0..n).map(|_| rng.value(specials, lo, hi) as f32).collect();
        for s in [4usize, 6] {
            let f = 7 * s as i32;
            let (digits, exps, tail) = dev::oz_slice_line(s, &x);
            let finite = x.iter().all(|v| v.is_finite());
            let mut sq = 0.0f64;
            for (b, &packed) in exps.iter().enumerate() {
                let (e, levels) = (packed.div_euclid(8), packed.rem_euclid(8) as usize);
                let mut used = 0;
                let block: Vec<f64> = (0..64)
                    .map(|q| {
                        let v = x.get(b * 64 + q).copied().unwrap_or(0.0);
                        if v.is_finite() { v as f64 } else { 0.0 }
                    })
                    .collect();
                let m = block.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                if m > 0.0 {
                    assert!(
                        2f64.powi(e - 1) <= m && m < 2f64.powi(e),
                        "block exponent {e} for max {m}"
                    );
                }
                for (q, &v) in block.iter().enumerate() {
                    let y = if m > 0.0 {
                        (v * 2f64.powi(f - e)).trunc()
                    } else {
                        0.0
                    };
                    let tau = if m > 0.0 { v - y * 2f64.powi(e - f) } else { v };
                    assert!(tau.abs() < 2f64.powi(e - f) || m == 0.0);
                    sq += tau * tau;
                    let mut mag = 0i64;
                    for d in 0..s {
                        let digit = digits[(b * s + d) * 64 + q] as i64;
                        assert!(digit.abs() <= 127);
                        assert!(
                            digit == 0 || (digit < 0) == (y < 0.0),
                            "digit sign, element {v} block {b}"
                        );
                        mag = mag * 128 + digit.abs();
                        if digit != 0 {
                            used = used.max(d + 1);
                        }
                    }
                    assert_eq!(mag as f64, y.abs(), "digits of {v} (E {e}, S {s})");
                    elements += 1;
                }
                assert_eq!(levels, used, "level count of block {b}");
            }
            if finite {
                let want = sq.sqrt();
                assert!(
                    (tail - want).abs() <= want * 1e-12,
                    "tail norm {tail} against {want}"
                );
            } else {
                assert!(
                    tail.is_nan(),
                    "a line with a non-finite element has a NaN tail"
                );
            }
        }
    }
    println!("{elements} sliced elements follow the definition");
}
