//! FFT determinism: a row's output bits do not depend on its position in the batch, the
//! batch size or the rayon thread count, at every precision; and the Ozaki slice products
//! are exact, so their f32 sums give the same bits in every order (what lets tensor cores,
//! whose adder trees sum in an unspecified order, reproduce the CPU). A per-element
//! bf16 split, for contrast, is order-dependent (printed).

mod common;
#[path = "common/fft_ref.rs"]
mod fft_ref;

use candle_core::{Device, Tensor};
use candle_repro::fft::ozaki::{slice_vector_for_tests, w8_digits_for_tests};
use candle_repro::fft::{Norm, Precision, fft_with, ifft_with, irfft_with, rfft_with};
use common::bits;
use fft_ref::*;
use half::bf16;

const PRECISIONS: [Precision; 3] = [Precision::F32, Precision::Ozaki, Precision::F64Internal];

type Op<'a> = dyn Fn(&Tensor) -> Tensor + 'a;

fn complex_rows(rows: usize, n: usize, seed: u64) -> Tensor {
    let x = normal_input(rows * n, seed);
    Tensor::from_vec(interleave(&x), (rows, n, 2), &Device::Cpu).unwrap()
}

/// The ops on one row alone and on the same row inside a batch of 1000 (at the first,
/// a middle and the last position): identical bits.
#[test]
fn batch_position_invariance() {
    const BATCH: usize = 1000;
    // 300 = 2^2 3 5^2 and 400 = 2^4 5^2: mixed radix (a one-lane first stage, vector
    // odd-radix stages).
    for n in [1024usize, 300, 400] {
        let batch = complex_rows(BATCH, n, n as u64);
        let real = Tensor::from_vec(
            normal_real(BATCH * n, 7 + n as u64),
            (BATCH, n),
            &Device::Cpu,
        )
        .unwrap();
        for p in PRECISIONS {
            let ops: [(&str, &Op<'_>); 2] = [
                ("fft", &|t| fft_with(t, Norm::Backward, p).unwrap()),
                ("ifft", &|t| ifft_with(t, Norm::Ortho, p).unwrap()),
            ];
            for (name, op) in ops {
                let all = op(&batch);
                for pos in [0, 517, BATCH - 1] {
                    let alone = op(&batch.narrow(0, pos, 1).unwrap());
                    let inside = all.narrow(0, pos, 1).unwrap();
                    assert_eq!(bits(&alone), bits(&inside), "{name} n={n} {p:?} row {pos}");
                }
            }
            let spec = rfft_with(&real, Norm::Forward, p).unwrap();
            let back = irfft_with(&spec, Some(n), Norm::Forward, p).unwrap();
            for pos in [0, 517, BATCH - 1] {
                let row = real.narrow(0, pos, 1).unwrap();
                let s1 = rfft_with(&row, Norm::Forward, p).unwrap();
                assert_eq!(
                    bits(&s1),
                    bits(&spec.narrow(0, pos, 1).unwrap()),
                    "rfft n={n} {p:?}"
                );
                let b1 = irfft_with(&s1, Some(n), Norm::Forward, p).unwrap();
                assert_eq!(
                    bits(&b1),
                    bits(&back.narrow(0, pos, 1).unwrap()),
                    "irfft n={n} {p:?}"
                );
            }
        }
    }
}

/// The same batch in rayon pools of 1, 2 and 4 threads: identical bits.
#[test]
fn thread_count_invariance() {
    for (rows, n) in [(64usize, 4096usize), (256, 1000), (200, 480), (3, 1 << 16)] {
        let batch = complex_rows(rows, n, 100 + n as u64);
        let real = Tensor::from_vec(
            normal_real(rows * n, 200 + n as u64),
            (rows, n),
            &Device::Cpu,
        )
        .unwrap();
        for p in PRECISIONS {
            let run = || {
                let f = fft_with(&batch, Norm::Ortho, p).unwrap();
                let i = ifft_with(&batch, Norm::Backward, p).unwrap();
                let r = rfft_with(&real, Norm::Backward, p).unwrap();
                let b = irfft_with(&r, Some(n), Norm::Backward, p).unwrap();
                [bits(&f), bits(&i), bits(&r), bits(&b)]
            };
            let want = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap()
                .install(run);
            for threads in [2, 4] {
                let got = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(run);
                assert!(got == want, "n={n} {p:?}: {threads} threads differ from 1");
            }
        }
    }
}

/// A random order of 0..16.
fn permutation(rng: &mut Rng, order: &mut [usize; 16]) {
    for (i, o) in order.iter_mut().enumerate() {
        *o = i;
    }
    for i in (1..16).rev() {
        order.swap(i, rng.below(i + 1));
    }
}

/// sum_c a[c] b[c] in f32, in the given order (from +0, as the products accumulate).
fn dot_in_order(a: &[f32], b: &[f32], order: &[usize; 16]) -> f32 {
    let mut p = 0f32;
    for &c in order {
        p += a[c] * b[c];
    }
    p
}

/// A random input vector of 16 reals (one W8 butterfly's [re; im]): normal values times a
/// random power of two in 2^-40..2^40, some exact zeros and some tiny entries.
fn random_vector(rng: &mut Rng) -> [f32; 16] {
    let scale = 2f32.powi(rng.below(81) as i32 - 40);
    let z = normal_real(16, rng.next_u64());
    let mut x = [0f32; 16];
    for c in 0..16 {
        x[c] = match rng.below(16) {
            0 => 0.0,
            1 => z[c] * scale * 1e-6,
            _ => z[c] * scale,
        };
    }
    x
}

/// At least 10^7 slice products of the real W8 digit matrices with the digits of random
/// inputs (by the library's own slicing), each summed in a random order: every one gives
/// the fixed order's bits.
#[test]
fn ozaki_slice_products_are_order_free() {
    let w = w8_digits_for_tests();
    let slices = w.len();
    assert!(
        w.iter()
            .flatten()
            .all(|d| d.fract() == 0.0 && d.abs() <= 128.0)
    );
    let mut rng = Rng::new(2024);
    let mut order = [0usize; 16];
    let identity: [usize; 16] = std::array::from_fn(|i| i);
    let (mut products, mut mismatches) = (0u64, 0u64);
    const VECTORS: usize = 25_000;
    const ROWS_PER_VECTOR: usize = 4;
    const PERMUTATIONS: usize = 10;
    for _ in 0..VECTORS {
        let x = random_vector(&mut rng);
        let (_, xd) = slice_vector_for_tests(&x).expect("a finite nonzero vector");
        assert!(
            xd.iter()
                .flatten()
                .all(|d| d.fract() == 0.0 && d.abs() <= 128.0)
        );
        // Zero digits are +0, so not even the sign of a zero sum depends on the order.
        assert!(xd.iter().flatten().all(|d| *d != 0.0 || d.to_bits() == 0));
        for _ in 0..ROWS_PER_VECTOR {
            let r = rng.below(16);
            // The kept pairs: i + j <= SLICES - 1 (0-based), as the product combines them.
            for (i, wm) in w.iter().enumerate() {
                for xj in &xd[..slices - i] {
                    let wi = &wm[r * 16..(r + 1) * 16];
                    let fixed = dot_in_order(wi, xj, &identity);
                    for _ in 0..PERMUTATIONS {
                        permutation(&mut rng, &mut order);
                        let got = dot_in_order(wi, xj, &order);
                        products += 1;
                        mismatches += (got.to_bits() != fixed.to_bits()) as u64;
                    }
                }
            }
        }
    }
    println!("Ozaki slice products: {products} permuted sums, {mismatches} mismatches");
    assert!(products >= 10_000_000);
    assert_eq!(mismatches, 0);
}

/// For contrast (printed, not asserted): a per-element split x_h = bf16(x),
/// x_l = bf16(x - x_h) (and the same for W8's entries) gives products of different
/// exponents, whose f32 sums depend on the order.
#[test]
fn per_element_split_is_order_dependent() {
    // W8 in f32 from its digits (exact: 4 x 8 bits within f32's 24 of the entries).
    let w = w8_digits_for_tests();
    let w8: Vec<f32> = (0..256)
        .map(|idx| {
            (0..w.len())
                .map(|i| w[i][idx] as f64 * 2f64.powi(-7 - 8 * i as i32))
                .sum::<f64>() as f32
        })
        .collect();
    let split = |v: f32| {
        let h = bf16::from_f32(v).to_f32();
        (h, bf16::from_f32(v - h).to_f32())
    };
    let mut rng = Rng::new(7);
    let mut order = [0usize; 16];
    let identity: [usize; 16] = std::array::from_fn(|i| i);
    let (mut sums, mut mismatches) = (0u64, 0u64);
    for _ in 0..20_000 {
        let x = random_vector(&mut rng);
        let (xh, xl): (Vec<f32>, Vec<f32>) = x.iter().map(|&v| split(v)).unzip();
        let r = rng.below(16);
        let (wh, wl): (Vec<f32>, Vec<f32>) =
            w8[r * 16..(r + 1) * 16].iter().map(|&v| split(v)).unzip();
        for (a, b) in [(&wh, &xh), (&wh, &xl), (&wl, &xh)] {
            let fixed = dot_in_order(a, b, &identity);
            for _ in 0..10 {
                permutation(&mut rng, &mut order);
                sums += 1;
                mismatches += (dot_in_order(a, b, &order).to_bits() != fixed.to_bits()) as u64;
            }
        }
    }
    println!(
        "per-element bf16 split: {mismatches} of {sums} permuted sums differ from the fixed order ({:.1}%)",
        100.0 * mismatches as f64 / sums as f64
    );
}
