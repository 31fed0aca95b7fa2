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
