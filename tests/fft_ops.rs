//! The FFT candle ops (`candle_repro::fft::{fft, ifft, rfft, irfft}`): bit-equal to
//! `FftPlan` on the same rows, numpy's semantics and norms against the rustfft f64
//! reference, any layout, errors, empty batches and non-finite inputs.

mod common;
#[path = "common/fft_ref.rs"]
mod fft_ref;

use candle_core::{DType, Device, Tensor};
use candle_repro::fft::{
    FftPlan, Norm, Precision, fft, fft_with, ifft, ifft_with, irfft, irfft_with, rfft, rfft_with,
};
use common::bits;
use fft_ref::*;
use num_complex::{Complex32, Complex64};

const PRECISIONS: [Precision; 3] = [Precision::F32, Precision::Ozaki, Precision::F64Internal];
const NORMS: [Norm; 3] = [Norm::Backward, Norm::Ortho, Norm::Forward];

/// A complex tensor (batch, n, 2) of normal(0,1) values, and its rows.
fn complex_tensor(batch: usize, n: usize, seed: u64) -> (Tensor, Vec<Complex32>) {
    let x = normal_input(batch * n, seed);
    let t = Tensor::from_vec(interleave(&x), (batch, n, 2), &Device::Cpu).unwrap();
    (t, x)
}

fn complex_values(t: &Tensor) -> Vec<Complex32> {
    deinterleave(&t.flatten_all().unwrap().to_vec1::<f32>().unwrap())
}

fn real_values(t: &Tensor) -> Vec<f32> {
    t.flatten_all().unwrap().to_vec1::<f32>().unwrap()
}

fn f32_bits(v: &[Complex32]) -> Vec<u32> {
    v.iter()
        .flat_map(|z| [z.re.to_bits(), z.im.to_bits()])
        .collect()
}

/// numpy's scale of a transform of length n: forward (`inverse` false) or inverse.
fn numpy_scale(norm: Norm, n: usize, inverse: bool) -> f64 {
    let n = n as f64;
    match (norm, inverse) {
        (Norm::Backward, false) | (Norm::Forward, true) => 1.0,
        (Norm::Backward, true) | (Norm::Forward, false) => 1.0 / n,
        (Norm::Ortho, _) => 1.0 / n.sqrt(),
    }
}

/// The ops with Norm::Backward are the plan's transforms, bit for bit (ifft: the plan's
/// inverse divided by n, one IEEE division per value).
#[test]
fn ops_equal_the_plan_bitwise() {
    for n in [1usize, 2, 8, 16, 64, 100, 1024, 1000] {
        let (t, x) = complex_tensor(5, n, n as u64);
        for p in PRECISIONS {
            let plan = FftPlan::new(n, p).unwrap();
            let mut want = x.clone();
            plan.forward(&mut want).unwrap();
            let got = fft_with(&t, Norm::Backward, p).unwrap();
            assert_eq!(got.dims(), &[5, n, 2]);
            assert_eq!(bits(&got), f32_bits(&want), "fft n={n} {p:?}");
            let mut want = x.clone();
            plan.inverse(&mut want).unwrap();
            let want: Vec<Complex32> = want
                .iter()
                .map(|z| Complex32::new(z.re / n as f32, z.im / n as f32))
                .collect();
            let got = ifft_with(&t, Norm::Backward, p).unwrap();
            assert_eq!(bits(&got), f32_bits(&want), "ifft n={n} {p:?}");
        }
        // The plain functions are Precision::F32.
        assert_eq!(
            bits(&fft(&t, Norm::Ortho).unwrap()),
            bits(&fft_with(&t, Norm::Ortho, Precision::F32).unwrap())
        );
        assert_eq!(
            bits(&ifft(&t, Norm::Forward).unwrap()),
            bits(&ifft_with(&t, Norm::Forward, Precision::F32).unwrap())
        );
    }
}

/// fft and ifft under each norm against numpy's definition computed in f64.
#[test]
fn fft_norms_match_numpy_semantics() {
    for n in [1usize, 5, 16, 100, 256, 4096] {
        let (t, x) = complex_tensor(3, n, 10 + n as u64);
        for inverse in [false, true] {
            let raw = reference(&x, n, inverse);
            for norm in NORMS {
                let s = numpy_scale(norm, n, inverse);
                let want: Vec<Complex64> = raw.iter().map(|z| z * s).collect();
                for p in PRECISIONS {
                    let y = if inverse {
                        ifft_with(&t, norm, p)
                    } else {
                        fft_with(&t, norm, p)
                    }
                    .unwrap();
                    let e = rel_l2(&complex_values(&y), &want);
                    assert!(e < 1e-6, "n={n} inverse={inverse} {norm:?} {p:?}: {e:.3e}");
                }
            }
        }
    }
}

/// The numpy result of rfft on real rows of n (f64): the first n/2 + 1 outputs of the
/// complex transform, scaled.
fn rfft_reference(x: &[f32], n: usize, norm: Norm) -> Vec<Complex64> {
    let c: Vec<Complex32> = x.iter().map(|&v| Complex32::new(v, 0.0)).collect();
    let full = reference(&c, n, false);
    let s = numpy_scale(norm, n, false);
    full.chunks_exact(n)
        .flat_map(|r| r[..n / 2 + 1].iter().map(move |z| z * s))
        .collect()
}

/// numpy's irfft (f64) of rows of m complex values to n reals: the first n/2 + 1 values
/// (zero-padded), Hermitian extension, imaginary parts of DC and Nyquist dropped.
fn irfft_reference(x: &[Complex32], m: usize, n: usize, norm: Norm) -> Vec<f64> {
    let s = numpy_scale(norm, n, true);
    let mut out = vec![];
    for row in x.chunks_exact(m) {
        let mut full = vec![Complex32::new(0.0, 0.0); n];
        for k in 0..=n / 2 {
            let z = if k < m {
                row[k]
            } else {
                Complex32::new(0.0, 0.0)
            };
            full[k] = z;
            if k > 0 && k < n - k {
                full[n - k] = z.conj();
            }
        }
        full[0].im = 0.0;
        if n.is_multiple_of(2) {
            full[n / 2].im = 0.0;
        }
        out.extend(reference(&full, n, true).iter().map(|z| z.re * s));
    }
    out
}

#[test]
fn rfft_matches_numpy_semantics() {
    for n in [1usize, 2, 7, 16, 17, 100, 101, 1024, 1000] {
        let x = normal_real(4 * n, 20 + n as u64);
        let t = Tensor::from_vec(x.clone(), (2, 2, n), &Device::Cpu).unwrap();
        for norm in NORMS {
            let want = rfft_reference(&x, n, norm);
            for p in PRECISIONS {
                let y = rfft_with(&t, norm, p).unwrap();
                assert_eq!(y.dims(), &[2, 2, n / 2 + 1, 2]);
                let e = rel_l2(&complex_values(&y), &want);
                assert!(e < 1e-6, "rfft n={n} {norm:?} {p:?}: {e:.3e}");
            }
        }
        // Truncation of the complex transform of x + 0i, bit for bit.
        let c: Vec<Complex32> = x.iter().map(|&v| Complex32::new(v, 0.0)).collect();
        let ct = Tensor::from_vec(interleave(&c), (4, n, 2), &Device::Cpu).unwrap();
        let full = fft(&ct, Norm::Backward).unwrap();
        let trunc = full
            .narrow(1, 0, n / 2 + 1)
            .unwrap()
            .reshape((2, 2, n / 2 + 1, 2));
        assert_eq!(
            bits(&rfft(&t, Norm::Backward).unwrap()),
            bits(&trunc.unwrap())
        );
    }
}

#[test]
fn irfft_matches_numpy_semantics() {
    // (m inputs, n outputs or numpy's default 2 (m - 1)).
    for (m, n) in [
        (2usize, None),
        (9, None),
        (9, Some(17)),
        (9, Some(8)),
        (9, Some(30)),
        (51, None),
        (51, Some(101)),
        (513, None),
        (501, Some(1001)),
        (1, Some(1)),
        (3, Some(1)),
    ] {
        let len = n.unwrap_or(2 * (m - 1));
        let x = normal_input(3 * m, 30 + m as u64);
        let t = Tensor::from_vec(interleave(&x), (3, m, 2), &Device::Cpu).unwrap();
        for norm in NORMS {
            let want = irfft_reference(&x, m, len, norm);
            for p in PRECISIONS {
                let y = irfft_with(&t, n, norm, p).unwrap();
                assert_eq!(y.dims(), &[3, len]);
                let e = rel_l2_real(&real_values(&y), &want);
                assert!(e < 1e-6, "irfft m={m} n={len} {norm:?} {p:?}: {e:.3e}");
            }
        }
    }
}

/// irfft(rfft(x), n) = x for even and odd n, every norm and precision.
#[test]
fn irfft_inverts_rfft() {
    for n in [1usize, 2, 3, 16, 17, 100, 101, 1000, 1001, 4096] {
        let x = normal_real(3 * n, 40 + n as u64);
        let t = Tensor::from_vec(x.clone(), (3, n), &Device::Cpu).unwrap();
        let want: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        for norm in NORMS {
            for p in PRECISIONS {
                let y = rfft_with(&t, norm, p).unwrap();
                let back = irfft_with(&y, Some(n), norm, p).unwrap();
                assert_eq!(back.dims(), &[3, n]);
                let e = rel_l2_real(&real_values(&back), &want);
                assert!(e < 2e-6, "n={n} {norm:?} {p:?}: {e:.3e}");
            }
        }
        // The default length recovers even n.
        if n.is_multiple_of(2) {
            let y = rfft(&t, Norm::Backward).unwrap();
            assert_eq!(irfft(&y, None, Norm::Backward).unwrap().dims(), &[3, n]);
        }
    }
}

/// Strided inputs (a transpose) give the bits of their contiguous copies.
#[test]
fn non_contiguous_input_equals_contiguous() {
    let (n, b) = (100usize, 6usize);
    let x = normal_input(n * b, 50);
    // (n, b, 2) stored, viewed as (b, n, 2).
    let stored = Tensor::from_vec(interleave(&x), (n, b, 2), &Device::Cpu).unwrap();
    let strided = stored.transpose(0, 1).unwrap();
    assert!(!strided.is_contiguous());
    let contiguous = strided.contiguous().unwrap();
    for p in PRECISIONS {
        for norm in NORMS {
            assert_eq!(
                bits(&fft_with(&strided, norm, p).unwrap()),
                bits(&fft_with(&contiguous, norm, p).unwrap())
            );
            assert_eq!(
                bits(&ifft_with(&strided, norm, p).unwrap()),
                bits(&ifft_with(&contiguous, norm, p).unwrap())
            );
            assert_eq!(
                bits(&irfft_with(&strided, None, norm, p).unwrap()),
                bits(&irfft_with(&contiguous, None, norm, p).unwrap())
            );
        }
    }
    // Real input: (n, b) stored, viewed as (b, n); and a narrowed (offset) view.
    let r = Tensor::from_vec(normal_real(n * b, 51), (n, b), &Device::Cpu).unwrap();
    let rt = r.t().unwrap();
    assert_eq!(
        bits(&rfft(&rt, Norm::Ortho).unwrap()),
        bits(&rfft(&rt.contiguous().unwrap(), Norm::Ortho).unwrap())
    );
    let narrowed = contiguous.narrow(0, 2, 3).unwrap();
    assert_eq!(
        bits(&fft(&narrowed, Norm::Backward).unwrap()),
        bits(&fft(&narrowed.contiguous().unwrap(), Norm::Backward).unwrap())
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let dev = Device::Cpu;
    let f16 = Tensor::zeros((4, 8, 2), DType::F16, &dev).unwrap();
    for (name, r) in [
        ("fft", fft(&f16, Norm::Backward)),
        ("ifft", ifft(&f16, Norm::Backward)),
        ("rfft", rfft(&f16, Norm::Backward)),
        ("irfft", irfft(&f16, None, Norm::Backward)),
    ] {
        match r {
            Err(candle_core::Error::UnsupportedDTypeForOp(DType::F16, op)) => {
                assert_eq!(op, name)
            }
            other => panic!("{name} on f16: {other:?}"),
        }
    }
    let f64t = Tensor::zeros((4, 8, 2), DType::F64, &dev).unwrap();
    assert!(fft(&f64t, Norm::Backward).is_err());
    let last3 = Tensor::zeros((4, 8, 3), DType::F32, &dev).unwrap();
    let e = fft(&last3, Norm::Backward).unwrap_err().to_string();
    assert!(
        e.contains("fft") && e.contains("last dimension must be 2"),
        "{e}"
    );
    let e = irfft(&last3, None, Norm::Backward).unwrap_err().to_string();
    assert!(
        e.contains("irfft") && e.contains("last dimension must be 2"),
        "{e}"
    );
    let rank1 = Tensor::zeros(8, DType::F32, &dev).unwrap();
    for r in [
        fft(&rank1, Norm::Backward),
        ifft(&rank1, Norm::Backward),
        irfft(&rank1, None, Norm::Backward),
    ] {
        let e = r.unwrap_err().to_string();
        assert!(e.contains("rank >= 2"), "{e}");
    }
    let scalar = Tensor::new(1.0f32, &dev).unwrap();
    assert!(rfft(&scalar, Norm::Backward).is_err());
    // n = 0: an empty transform dimension, or irfft's default length from m = 1.
    let n0 = Tensor::zeros((4, 0, 2), DType::F32, &dev).unwrap();
    let e = fft(&n0, Norm::Backward).unwrap_err().to_string();
    assert!(e.contains("length 0"), "{e}");
    assert!(
        rfft(
            &Tensor::zeros((4, 0), DType::F32, &dev).unwrap(),
            Norm::Backward
        )
        .is_err()
    );
    let m1 = Tensor::zeros((4, 1, 2), DType::F32, &dev).unwrap();
    assert!(irfft(&m1, None, Norm::Backward).is_err());
    assert!(irfft(&m1, Some(0), Norm::Backward).is_err());
    assert!(irfft(&n0, Some(4), Norm::Backward).is_err());
    // Longer than the planner's maximum.
    let long = Tensor::zeros((1, (1 << 20) + 1, 2), DType::F32, &dev).unwrap();
    assert!(fft(&long, Norm::Backward).is_err());
}

#[test]
fn empty_batch() {
    let dev = Device::Cpu;
    let x = Tensor::zeros((0, 8, 2), DType::F32, &dev).unwrap();
    assert_eq!(fft(&x, Norm::Backward).unwrap().dims(), &[0, 8, 2]);
    assert_eq!(ifft(&x, Norm::Ortho).unwrap().dims(), &[0, 8, 2]);
    assert_eq!(irfft(&x, None, Norm::Backward).unwrap().dims(), &[0, 14]);
    let x = Tensor::zeros((3, 0, 100), DType::F32, &dev).unwrap();
    assert_eq!(rfft(&x, Norm::Backward).unwrap().dims(), &[3, 0, 51, 2]);
    // A single row of rank 2 works too.
    let x = Tensor::zeros((8, 2), DType::F32, &dev).unwrap();
    assert_eq!(fft(&x, Norm::Backward).unwrap().dims(), &[8, 2]);
}

/// NaN and infinite inputs: every NaN output is the canonical 0x7FC00000, whatever the
/// input NaN's sign and payload; rows without them are untouched.
#[test]
fn non_finite_inputs_give_canonical_nans() {
    let n = 64;
    for p in PRECISIONS {
        for bad in [
            f32::from_bits(0xFFC0_0001),
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ] {
            let (t, x) = complex_tensor(3, n, 60);
            let mut v = interleave(&x);
            v[2 * n + 2 * 5] = bad; // row 1, element 5, real part
            let t_bad = Tensor::from_vec(v.clone(), (3, n, 2), &Device::Cpu).unwrap();
            let rt = Tensor::from_vec(v[2 * n..4 * n].to_vec(), (2, n), &Device::Cpu).unwrap();
            let outs = [
                (
                    fft_with(&t_bad, Norm::Ortho, p).unwrap(),
                    fft_with(&t, Norm::Ortho, p).unwrap(),
                ),
                (
                    ifft_with(&t_bad, Norm::Backward, p).unwrap(),
                    ifft_with(&t, Norm::Backward, p).unwrap(),
                ),
                (
                    irfft_with(&t_bad, None, Norm::Forward, p).unwrap(),
                    irfft_with(&t, None, Norm::Forward, p).unwrap(),
                ),
            ];
            for (got, clean) in &outs {
                let (g, c) = (bits(got), bits(clean));
                let row = g.len() / 3;
                assert_eq!(g[..row], c[..row], "{p:?} {bad}: rows before are untouched");
                assert_eq!(
                    g[2 * row..],
                    c[2 * row..],
                    "{p:?} {bad}: rows after are untouched"
                );
                let nans = g.iter().filter(|&&b| f32::from_bits(b).is_nan()).count();
                assert!(
                    g.iter()
                        .all(|&b| !f32::from_bits(b).is_nan() || b == 0x7FC0_0000),
                    "{p:?} {bad}: non-canonical NaN"
                );
                if bad.is_nan() {
                    assert!(nans > 0, "{p:?}: a NaN input gives NaN outputs");
                }
            }
            // rfft: the values of row 1 as two real rows of n: the bad value is in the first.
            let y = bits(&rfft_with(&rt, Norm::Backward, p).unwrap());
            assert!(
                y.iter()
                    .all(|&b| !f32::from_bits(b).is_nan() || b == 0x7FC0_0000)
            );
            if bad.is_nan() {
                assert!(y.contains(&0x7FC0_0000));
            }
        }
    }
}
