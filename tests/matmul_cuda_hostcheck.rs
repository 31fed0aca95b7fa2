//! The CUDA matmul's device code, compiled as host C++ (`kernel_hostcheck::matmul`),
//! against the Rust code bit for bit: the exact and compensated dot products, the f8e4m3
//! conversions, and every output of random and adversarial products computed as a thread
//! of `kernels/matmul.cu` computes it (its line stats, its k-ordered f64 sum, its tier-1
//! decision, its tiers 2 and 3), against the CPU matmul. No CUDA needed.
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::{DType, Device, Tensor};
use candle_repro::math::exact_dot::{dot2, exact_dot};
use candle_repro::math::f8::{Overflow, f8e4m3_to_f32, f32_to_f8e4m3};
use candle_repro::matmul::{CpuConfig, matmul_with_config};
use float8::F8E4M3;
use half::{bf16, f16};
use kernel_hostcheck::matmul as dev;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn sign(&mut self) -> f64 {
        if self.next() & 1 == 0 { 1.0 } else { -1.0 }
    }
    /// Every kind of value the tests use: normal, spread over many binades, tiny, huge,
    /// signed zeros, and (with `specials`) NaN and infinities.
    fn value(&mut self, specials: bool, lo: i32, hi: i32) -> f64 {
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

#[test]
fn dot_products_match_bit_for_bit() {
    let mut rng = Rng(1);
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

/// The device's product of row-major `a` (m, k) and `b` (k, n) against the CPU's, every
/// output, from each tier.
fn check_product(
    dt: DType,
    out: DType,
    (m, k, n): (usize, usize, usize),
    av: &[f64],
    bv: &[f64],
    cv: Option<&[f64]>,
) -> usize {
    let cpu = Device::Cpu;
    let a = Tensor::from_vec(av.to_vec(), (m, k), &cpu).unwrap();
    let b = Tensor::from_vec(bv.to_vec(), (k, n), &cpu).unwrap();
    // The inputs as the dtype (rounded by candle's conversions), as bits for the device.
    let (a, b) = (a.to_dtype(dt).unwrap(), b.to_dtype(dt).unwrap());
    let c = cv.map(|c| {
        Tensor::from_vec(c.to_vec(), n, &cpu)
            .unwrap()
            .to_dtype(out)
            .unwrap()
    });
    let exact_sums = dt == DType::F8E4M3 && k <= 1 << 17;
    for tier in [1i32, 2, 3] {
        let cfg = CpuConfig {
            start_tier: (tier > 1).then_some(tier as u8),
            ..CpuConfig::default()
        };
        let want = matmul_with_config(&a, &b, c.as_ref(), Some(out), cfg).unwrap();
        let want = want.flatten_all().unwrap();
        let (got, want): (Vec<u32>, Vec<u32>) = match (dt, out) {
            (DType::F32, DType::F32) => {
                let cb = c.as_ref().map(|c| c.to_vec1::<f32>().unwrap());
                let g = dev::f32_f32(
                    (m, k, n),
                    &flat::<f32>(&a),
                    &flat::<f32>(&b),
                    cb.as_deref(),
                    false,
                    tier,
                );
                (
                    g.iter().map(|x| x.to_bits()).collect(),
                    want.to_vec1::<f32>()
                        .unwrap()
                        .iter()
                        .map(|x| x.to_bits())
                        .collect(),
                )
            }
            (DType::BF16, DType::BF16) => {
                let cb = c.as_ref().map(|c| bits16(&c.to_vec1::<bf16>().unwrap()));
                let g = dev::bf16_bf16(
                    (m, k, n),
                    &bits16(&flat::<bf16>(&a)),
                    &bits16(&flat::<bf16>(&b)),
                    cb.as_deref(),
                    false,
                    tier,
                );
                (
                    g.iter().map(|&x| x as u32).collect(),
                    bits16(&want.to_vec1::<bf16>().unwrap())
                        .iter()
                        .map(|&x| x as u32)
                        .collect(),
                )
            }
            (DType::F16, DType::F16) => {
                let cb = c.as_ref().map(|c| bits16h(&c.to_vec1::<f16>().unwrap()));
                let g = dev::f16_f16(
                    (m, k, n),
                    &bits16h(&flat::<f16>(&a)),
                    &bits16h(&flat::<f16>(&b)),
                    cb.as_deref(),
                    false,
                    tier,
                );
                (
                    g.iter().map(|&x| x as u32).collect(),
                    bits16h(&want.to_vec1::<f16>().unwrap())
                        .iter()
                        .map(|&x| x as u32)
                        .collect(),
                )
            }
            (DType::F8E4M3, DType::F32) => {
                let cb = c.as_ref().map(|c| c.to_vec1::<f32>().unwrap());
                let g = dev::f8e4m3_f32(
                    (m, k, n),
                    &bits8(&a),
                    &bits8(&b),
                    cb.as_deref(),
                    exact_sums,
                    tier,
                );
                (
                    g.iter().map(|x| x.to_bits()).collect(),
                    want.to_vec1::<f32>()
                        .unwrap()
                        .iter()
                        .map(|x| x.to_bits())
                        .collect(),
                )
            }
            (DType::F8E4M3, DType::BF16) => {
                let cb = c.as_ref().map(|c| bits16(&c.to_vec1::<bf16>().unwrap()));
                let g = dev::f8e4m3_bf16(
                    (m, k, n),
                    &bits8(&a),
                    &bits8(&b),
                    cb.as_deref(),
                    exact_sums,
                    tier,
                );
                (
                    g.iter().map(|&x| x as u32).collect(),
                    bits16(&want.to_vec1::<bf16>().unwrap())
                        .iter()
                        .map(|&x| x as u32)
                        .collect(),
                )
            }
            d => panic!("{d:?}"),
        };
        let bad: Vec<usize> = (0..m * n).filter(|&t| got[t] != want[t]).collect();
        assert!(
            bad.is_empty(),
            "{dt:?}->{out:?} {m}x{k}x{n} from tier {tier}: {} outputs differ, first ({}, {}): device {:#x}, CPU {:#x}",
            bad.len(),
            bad[0] / n,
            bad[0] % n,
            got[bad[0]],
            want[bad[0]]
        );
    }
    m * n
}

fn flat<T: candle_core::WithDType>(t: &Tensor) -> Vec<T> {
    t.flatten_all().unwrap().to_vec1::<T>().unwrap()
}
fn bits16(v: &[bf16]) -> Vec<u16> {
    v.iter().map(|x| x.to_bits()).collect()
}
fn bits16h(v: &[f16]) -> Vec<u16> {
    v.iter().map(|x| x.to_bits()).collect()
}
fn bits8(t: &Tensor) -> Vec<u8> {
    flat::<F8E4M3>(t).iter().map(|x| x.to_bits()).collect()
}

#[test]
fn products_match_the_cpu_bit_for_bit() {
    let mut rng = Rng(2);
    let mut total = 0;
    for (dt, out, lo, hi) in [
        (DType::F32, DType::F32, -75, 63),
        (DType::BF16, DType::BF16, -75, 63),
        (DType::F16, DType::F16, -14, 7),
        (DType::F8E4M3, DType::F32, -9, 8),
        (DType::F8E4M3, DType::BF16, -9, 8),
    ] {
        for (m, k, n) in [(3, 1, 4), (5, 7, 3), (4, 64, 5), (3, 300, 4), (2, 0, 3)] {
            for specials in [false, true] {
                let av: Vec<f64> = (0..m * k).map(|_| rng.value(specials, lo, hi)).collect();
                let bv: Vec<f64> = (0..k * n).map(|_| rng.value(specials, lo, hi)).collect();
                let cv: Vec<f64> = (0..n).map(|_| rng.value(specials, lo, hi)).collect();
                total += check_product(dt, out, (m, k, n), &av, &bv, None);
                total += check_product(dt, out, (m, k, n), &av, &bv, Some(&cv));
            }
        }
        // Sums that cancel to tiny values and land on rounding midpoints.
        let (m, n, h) = (4, 4, 20);
        let k = 2 * h + 2;
        let mut av = vec![0.0; m * k];
        let mut bv = vec![0.0; k * n];
        for i in 0..m {
            for q in 0..h {
                let x = rng.sign() * (1.0 + rng.unit()) * 2f64.powi(hi / 2);
                av[i * k + q] = x;
                av[i * k + h + q] = -x;
            }
            av[i * k + 2 * h] = 1.0 + rng.below(8) as f64 / 8.0;
            av[i * k + 2 * h + 1] = 2f64.powi(if out == DType::F32 { -24 } else { -8 });
        }
        for j in 0..n {
            for q in 0..h {
                let y = (1.0 + rng.unit()) * 2f64.powi(hi / 2);
                bv[q * n + j] = y;
                bv[(h + q) * n + j] = y;
            }
            bv[2 * h * n + j] = 1.0;
            bv[(2 * h + 1) * n + j] = [1.0, -1.0, 3.0, 0.0][j];
        }
        total += check_product(dt, out, (m, k, n), &av, &bv, None);
    }
    println!("device code vs CPU: {total} outputs x 3 starting tiers, 0 differences");
}
