//! burn-repro's FFT against candle-repro's on the same values: every kind (rfft, irfft,
//! cfft, icfft), lengths with every algorithm (DFT-GEMM, radix 2/3/5/7 Stockham, Bluestein),
//! every normalization and precision, the transform along any dimension, numpy's `n=`
//! (truncation and zero padding), special values, another backend, and the refusals.

mod common;

use burn_repro::{Error, Norm, Precision};
use burn_tensor::{DType, Device, Tensor, TensorData};
use candle_core::{Device as Cpu, Tensor as CTensor};
use candle_repro::fft as cfft;
use common::{burn_bits, candle_bits, values};

/// Lengths: DFT-GEMM (1, 2, 5, 8), radix 2 (64), mixed radix (30, 400, 480, 343 = 7^3),
/// Bluestein (17, 401).
const LENGTHS: [usize; 11] = [1, 2, 5, 8, 17, 30, 64, 343, 400, 401, 480];
const NORMS: [Norm; 3] = [Norm::Backward, Norm::Ortho, Norm::Forward];
const PRECISIONS: [Precision; 3] = [Precision::F32, Precision::Ozaki, Precision::F64Internal];

/// Values with every kind of bits in every 16th slot (NaN payloads, infinities,
/// subnormals: outputs there are NaN or inf, canonical) and ordinary magnitudes elsewhere,
/// so that most rows are finite.
fn vals(n: usize, seed: u64) -> Vec<f32> {
    let wild = values(n, seed);
    let mut rng = common::Lcg(seed ^ 0x5eed);
    (0..n)
        .map(|i| {
            if i % 16 == 15 && i % 3 == 0 {
                wild[i]
            } else {
                ((rng.next() % 40_001) as f32 - 20_000.0) / 1024.0
            }
        })
        .collect()
}

fn burn<const D: usize>(v: &[f32], shape: [usize; D], device: &Device) -> Tensor<D> {
    Tensor::from_data(TensorData::new(v.to_vec(), shape), (device, DType::F32))
}

/// Interleaved (re, im) pairs of candle's complex layout (..., n, 2) as two parts.
fn parts(c: &CTensor) -> (Vec<u32>, Vec<u32>) {
    let bits = candle_bits(c);
    (
        bits.iter().step_by(2).copied().collect(),
        bits.iter().skip(1).step_by(2).copied().collect(),
    )
}

/// The candle complex tensor (rows, n, 2) with these parts.
fn complex(re: &[f32], im: &[f32], rows: usize) -> CTensor {
    let v: Vec<f32> = re.iter().zip(im).flat_map(|(&a, &b)| [a, b]).collect();
    CTensor::from_vec(v, (rows, re.len() / rows, 2), &Cpu::Cpu).unwrap()
}

#[test]
fn every_kind_has_candle_repros_bits() {
    let dev = Device::flex();
    let rows = 3;
    let mut checked = 0;
    for &n in &LENGTHS {
        let re = vals(rows * n, n as u64);
        let im = vals(rows * n, 7 * n as u64 + 1);
        for norm in NORMS {
            for p in PRECISIONS {
                // rfft
                let (br, bi) =
                    burn_repro::rfft_with(burn(&re, [rows, n], &dev), 1, None, norm, p).unwrap();
                assert_eq!(br.dims(), [rows, n / 2 + 1]);
                let c = CTensor::from_vec(re.clone(), (rows, n), &Cpu::Cpu).unwrap();
                let (cr, ci) = parts(&cfft::rfft_with(&c, norm, p).unwrap());
                assert_eq!((burn_bits(br), burn_bits(bi)), (cr, ci), "rfft n {n}");
                // cfft and icfft
                let (b, c) = (
                    (burn(&re, [rows, n], &dev), burn(&im, [rows, n], &dev)),
                    complex(&re, &im, rows),
                );
                let (br, bi) =
                    burn_repro::cfft_with(b.0.clone(), b.1.clone(), 1, None, norm, p).unwrap();
                let want = parts(&cfft::fft_with(&c, norm, p).unwrap());
                assert_eq!((burn_bits(br), burn_bits(bi)), want, "cfft n {n}");
                let (br, bi) = burn_repro::icfft_with(b.0, b.1, 1, None, norm, p).unwrap();
                let want = parts(&cfft::ifft_with(&c, norm, p).unwrap());
                assert_eq!((burn_bits(br), burn_bits(bi)), want, "icfft n {n}");
                // irfft of the first m values as a half spectrum: numpy's default length and
                // an odd one (which ignores the imaginary part of no Nyquist term).
                let m = n / 2 + 1;
                let (hr, hi): (Vec<f32>, Vec<f32>) = re
                    .chunks(n)
                    .zip(im.chunks(n))
                    .flat_map(|(a, b)| a[..m].iter().copied().zip(b[..m].iter().copied()))
                    .unzip();
                for out_n in [None, Some(2 * m - 1)] {
                    if out_n.is_none() && m == 1 {
                        continue; // numpy's default 2 (m - 1) = 0: refused below
                    }
                    let b = burn_repro::irfft_with(
                        burn(&hr, [rows, m], &dev),
                        burn(&hi, [rows, m], &dev),
                        1,
                        out_n,
                        norm,
                        p,
                    )
                    .unwrap();
                    let c = cfft::irfft_with(&complex(&hr, &hi, rows), out_n, norm, p).unwrap();
                    assert_eq!(b.dims()[1], c.dims()[1]);
                    assert_eq!(burn_bits(b), candle_bits(&c), "irfft n {n} -> {out_n:?}");
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, LENGTHS.len() * 9);
}

/// The transform along a leading dimension (and as a negative index) is the transform of
/// the transposed rows, with the same bits.
#[test]
fn any_dimension_transforms_the_same_rows() {
    let dev = Device::flex();
    let (n, cols) = (400, 5);
    let re = vals(n * cols, 11);
    let im = vals(n * cols, 12);
    // Burn: (n, cols), transform along dim 0. candle: the transposed (cols, n) rows.
    let t = |v: &[f32]| {
        CTensor::from_vec(v.to_vec(), (n, cols), &Cpu::Cpu)
            .unwrap()
            .t()
            .unwrap()
            .contiguous()
            .unwrap()
    };
    let ct = |c: &CTensor| c.t().unwrap().contiguous().unwrap();
    let (br, bi) = burn_repro::rfft(burn(&re, [n, cols], &dev), 0, None).unwrap();
    assert_eq!(br.dims(), [n / 2 + 1, cols]);
    let c = cfft::rfft(&t(&re), Norm::Backward).unwrap();
    let (cr, ci) = (c.narrow(2, 0, 1).unwrap(), c.narrow(2, 1, 1).unwrap());
    let cr = ct(&cr.squeeze(2).unwrap());
    let ci = ct(&ci.squeeze(2).unwrap());
    assert_eq!(burn_bits(br), candle_bits(&cr));
    assert_eq!(burn_bits(bi), candle_bits(&ci));

    let (br, bi) = burn_repro::cfft(
        burn(&re, [n, cols], &dev),
        burn(&im, [n, cols], &dev),
        -2,
        None,
    )
    .unwrap();
    let c = cfft::fft(
        &CTensor::stack(&[t(&re), t(&im)], 2).unwrap(),
        Norm::Backward,
    )
    .unwrap();
    let cr = ct(&c.narrow(2, 0, 1).unwrap().squeeze(2).unwrap());
    let ci = ct(&c.narrow(2, 1, 1).unwrap().squeeze(2).unwrap());
    assert_eq!(burn_bits(br), candle_bits(&cr));
    assert_eq!(burn_bits(bi), candle_bits(&ci));

    // A strided view (a transposed tensor) is read the same as a contiguous one.
    let x = burn(&re, [n, cols], &dev);
    let a = burn_repro::rfft(x.clone().transpose(), 1, None).unwrap().0;
    let contiguous = burn(&candle_vals(&t(&re)), [cols, n], &dev);
    let b = burn_repro::rfft(contiguous, 1, None).unwrap().0;
    assert_eq!(burn_bits(a), burn_bits(b));
}

fn candle_vals(c: &CTensor) -> Vec<f32> {
    c.flatten_all().unwrap().to_vec1().unwrap()
}

/// numpy's `n=`: shorter rows are zero-padded, longer ones truncated, before the transform.
#[test]
fn n_pads_or_truncates_the_signal() {
    let dev = Device::flex();
    let (rows, len) = (2, 300);
    let re = vals(rows * len, 21);
    let im = vals(rows * len, 22);
    for n in [128, 300, 480, 1000] {
        let fit = |v: &[f32]| -> Vec<f32> {
            v.chunks(len)
                .flat_map(|r| (0..n).map(move |j| if j < len { r[j] } else { 0.0 }))
                .collect()
        };
        let (br, bi) = burn_repro::rfft(burn(&re, [rows, len], &dev), 1, Some(n)).unwrap();
        let c = CTensor::from_vec(fit(&re), (rows, n), &Cpu::Cpu).unwrap();
        let want = parts(&cfft::rfft(&c, Norm::Backward).unwrap());
        assert_eq!((burn_bits(br), burn_bits(bi)), want, "rfft n {n}");

        let (br, bi) = burn_repro::cfft(
            burn(&re, [rows, len], &dev),
            burn(&im, [rows, len], &dev),
            1,
            Some(n),
        )
        .unwrap();
        let c = complex(&fit(&re), &fit(&im), rows);
        let want = parts(&cfft::fft(&c, Norm::Backward).unwrap());
        assert_eq!((burn_bits(br), burn_bits(bi)), want, "cfft n {n}");
    }
    // Every value of an empty signal is padding.
    let (br, bi) = burn_repro::rfft(burn(&[], [3, 0], &dev), 1, Some(4)).unwrap();
    assert_eq!(br.dims(), [3, 3]);
    assert!(burn_bits(br).iter().chain(&burn_bits(bi)).all(|&b| b == 0));
}

/// A round trip with numpy's default lengths gives back the signal, to within a few f32
/// ulps of its largest value (the twiddles are rounded).
#[test]
fn round_trips() {
    let dev = Device::flex();
    let x: Vec<f32> = (0..64).map(|i| ((i * 37) % 23) as f32 - 11.0).collect();
    let close = |y: Tensor<1>| {
        let y = y.into_data().try_to_vec::<f32>().unwrap();
        let err = y
            .iter()
            .zip(&x)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(err <= 8.0 * 11.0 * f32::EPSILON, "round trip error {err}");
    };
    let (re, im) = burn_repro::rfft(burn(&x, [64], &dev), 0, None).unwrap();
    close(burn_repro::irfft(re, im, 0, None).unwrap());
    let zero = vec![0f32; 64];
    let (re, im) =
        burn_repro::cfft(burn(&x, [64], &dev), burn(&zero, [64], &dev), 0, None).unwrap();
    let (yr, yi) = burn_repro::icfft(re, im, 0, None).unwrap();
    close(yr);
    let yi = yi.into_data().try_to_vec::<f32>().unwrap();
    assert!(yi.iter().all(|v| v.abs() <= 8.0 * 11.0 * f32::EPSILON));
}

/// NdArray (another backend): read back, the same bits, the output on its device.
#[test]
#[allow(deprecated)]
fn other_backends_read_back_and_give_the_same_bits() {
    let flex = Device::flex();
    let nd = Device::ndarray();
    let (re, im) = (vals(4 * 480, 31), vals(4 * 480, 32));
    let (ar, ai) =
        burn_repro::cfft(burn(&re, [4, 480], &nd), burn(&im, [4, 480], &nd), 1, None).unwrap();
    assert_eq!(ar.device(), nd);
    let (br, bi) = burn_repro::cfft(
        burn(&re, [4, 480], &flex),
        burn(&im, [4, 480], &flex),
        1,
        None,
    )
    .unwrap();
    assert_eq!(burn_bits(ar), burn_bits(br));
    assert_eq!(burn_bits(ai), burn_bits(bi));
}

fn invalid(e: Error) -> String {
    match e {
        Error::Invalid { message, .. } => message,
        other => panic!("expected Error::Invalid, got {other:?}"),
    }
}

#[test]
fn bad_input_is_an_error() {
    let dev = Device::flex();
    let x = burn(&vals(16, 1), [2, 8], &dev);
    // Not f32.
    let h = x.clone().cast(DType::BF16);
    assert!(invalid(burn_repro::rfft(h, 1, None).unwrap_err()).contains("BF16"));
    // Dimension out of range.
    let _ = invalid(burn_repro::rfft(x.clone(), 2, None).unwrap_err());
    let _ = invalid(burn_repro::rfft(x.clone(), -3, None).unwrap_err());
    // Lengths 0 and beyond 2^20.
    let msg = invalid(burn_repro::rfft(x.clone(), 1, Some(0)).unwrap_err());
    assert!(msg.contains("length 0"), "{msg}");
    let msg = invalid(burn_repro::cfft(x.clone(), x.clone(), 1, Some((1 << 20) + 1)).unwrap_err());
    assert!(msg.contains("exceeds"), "{msg}");
    // numpy's default irfft length of a one-value spectrum is 0.
    let one = burn(&[1.0, 2.0], [2, 1], &dev);
    let _ = invalid(burn_repro::irfft(one.clone(), one, 1, None).unwrap_err());
    // Parts of different shapes, dtypes or devices.
    let y = burn(&vals(24, 2), [3, 8], &dev);
    let msg = invalid(burn_repro::cfft(x.clone(), y, 1, None).unwrap_err());
    assert!(msg.contains("different shapes"), "{msg}");
    assert!(matches!(
        burn_repro::irfft(x.clone(), x.clone().cast(DType::F16), 1, None),
        Err(Error::DTypeMismatch { .. })
    ));
    assert!(matches!(
        burn_repro::icfft(x.clone(), x.clone().autodiff(), 1, None),
        Err(Error::DeviceMismatch { .. })
    ));
    // Off the graph on an autodiff device: computed, returned there; on the graph: refused.
    let a = x.clone().autodiff();
    let (re, _) = burn_repro::rfft(a.clone(), 1, None).unwrap();
    assert!(re.is_autodiff());
    let want = burn_bits(burn_repro::rfft(x.clone(), 1, None).unwrap().0);
    assert_eq!(burn_bits(re.inner()), want);
    assert!(matches!(
        burn_repro::rfft(a.require_grad(), 1, None),
        Err(Error::NoBackward { op: "rfft" })
    ));
}
