//! burn-repro's softmax, log-softmax and norms against candle-repro's ops on the same
//! values: the same forward bits for every dtype (random rows, rows with special values,
//! long rows, strided inputs, another dimension than the last), the same gradients through
//! `Device::flex().autodiff()` as candle-repro's backward ops, and the refusals as errors.

mod common;

use burn_tensor::{DType, Device, Tensor, TensorData, bf16, f16};
use candle_core::{Device as Cpu, Tensor as CTensor, Var};
use common::{DTYPES, Lcg, as_candle_accumulates, burn_bits, candle_bits, pair, values};

/// Moderate values (a softmax or a norm of random bit patterns is mostly special rows):
/// multiples of 1/256 in [-16, 16], with the special values of `values` in one row of 8.
fn moderate(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Lcg(seed);
    let specials = values(n, seed ^ 0x55);
    (0..n)
        .map(|i| {
            if (i / 97) % 8 == 7 {
                specials[i]
            } else {
                ((rng.next() % 8193) as f32 - 4096.0) / 256.0
            }
        })
        .collect()
}

/// A vector as a rank-1 Burn tensor of `dtype` on `device`, and as a candle tensor.
fn pair1(v: &[f32], dtype: DType, device: &Device) -> (Tensor<1>, CTensor) {
    let (x, c) = pair(v, [1, v.len()], dtype, device);
    (x.reshape([v.len()]), c.flatten_all().unwrap())
}

#[test]
fn softmax_has_candle_repros_bits() {
    let device = Device::flex();
    let mut checked = 0;
    // Short rows, rows of one element, and rows past LONG_ROW (split into blocks).
    for (rows, n) in [(64, 97), (5, 1), (3, 1000), (2, (1 << 16) + 3)] {
        let v = moderate(rows * n, n as u64);
        for dtype in DTYPES {
            let (x, cx) = pair(&v, [rows, n], dtype, &device);
            for log in [false, true] {
                let (got, want) = if log {
                    (
                        burn_repro::log_softmax(x.clone(), 1).unwrap(),
                        candle_repro::log_softmax_last_dim(&cx).unwrap(),
                    )
                } else {
                    (
                        burn_repro::softmax(x.clone(), 1).unwrap(),
                        candle_repro::softmax_last_dim(&cx).unwrap(),
                    )
                };
                assert_eq!(got.dtype(), dtype);
                let got = burn_bits(got);
                assert_eq!(
                    got,
                    candle_bits(&want),
                    "log {log}, {dtype:?}, {rows} x {n}"
                );
                checked += got.len();
            }
        }
    }
    // A view that starts inside its storage (rows 3.. of the tensor): read from its offset.
    let v = moderate(10 * 50, 10);
    for dtype in DTYPES {
        let (x, cx) = pair(&v, [10, 50], dtype, &device);
        let got = burn_repro::log_softmax(x.narrow(0, 3, 7), 1).unwrap();
        let want = candle_repro::log_softmax_last_dim(&cx.narrow(0, 3, 7).unwrap()).unwrap();
        assert_eq!(burn_bits(got), candle_bits(&want), "narrowed, {dtype:?}");
    }
    // Along dimension 0: the columns are the rows (candle-repro on the transpose).
    let v = moderate(33 * 40, 9);
    for dtype in DTYPES {
        let (x, cx) = pair(&v, [33, 40], dtype, &device);
        let got = burn_repro::softmax(x, 0).unwrap();
        let ct = cx.t().unwrap();
        let want = candle_repro::softmax_last_dim(&ct).unwrap().t().unwrap();
        assert_eq!(burn_bits(got), candle_bits(&want), "dim 0, {dtype:?}");
        checked += v.len();
    }
    println!("softmax, log-softmax: {checked} outputs, candle-repro's bits");
}

#[test]
fn norms_have_candle_repros_bits() {
    let device = Device::flex();
    let mut checked = 0;
    for (rows, n) in [(40, 64), (3, 1), (7, 1001)] {
        let v = moderate(rows * n, 3 * n as u64);
        let wv: Vec<f32> = moderate(n, 5).iter().map(|w| w / 4.0).collect();
        let bv = moderate(n, 6);
        for dtype in DTYPES {
            let (x, cx) = pair(&v, [rows, n], dtype, &device);
            let (w, cw) = pair1(&wv, dtype, &device);
            let (b, cb) = pair1(&bv, dtype, &device);
            for eps in [0.0, 1e-5] {
                let cases = [
                    (
                        burn_repro::rms_norm(x.clone(), w.clone(), eps).unwrap(),
                        candle_repro::nn::rms_norm(&cx, &cw, eps).unwrap(),
                    ),
                    (
                        burn_repro::layer_norm(x.clone(), w.clone(), b.clone(), eps).unwrap(),
                        candle_repro::nn::layer_norm(&cx, &cw, &cb, eps).unwrap(),
                    ),
                    (
                        burn_repro::layer_norm_no_bias(x.clone(), w.clone(), eps).unwrap(),
                        candle_repro::nn::layer_norm_no_bias(&cx, &cw, eps).unwrap(),
                    ),
                ];
                for (k, (got, want)) in cases.into_iter().enumerate() {
                    let got = burn_bits(got);
                    assert_eq!(got, candle_bits(&want), "norm {k}, {dtype:?}, {rows} x {n}");
                    checked += got.len();
                }
            }
        }
    }
    // A view that starts inside its storage, and a weight that does.
    let v = moderate(10 * 30, 13);
    let wv = moderate(40, 14);
    for dtype in DTYPES {
        let (x, cx) = pair(&v, [10, 30], dtype, &device);
        let (w, cw) = pair1(&wv, dtype, &device);
        let got = burn_repro::rms_norm(x.narrow(0, 4, 6), w.narrow(0, 10, 30), 1e-6).unwrap();
        let want = candle_repro::nn::rms_norm(
            &cx.narrow(0, 4, 6).unwrap(),
            &cw.narrow(0, 10, 30).unwrap(),
            1e-6,
        )
        .unwrap();
        assert_eq!(burn_bits(got), candle_bits(&want), "narrowed, {dtype:?}");
    }
    // Transposed input with a matching weight.
    let v = moderate(24 * 24, 11);
    let wv = moderate(24, 12);
    for dtype in DTYPES {
        let (x, cx) = pair(&v, [24, 24], dtype, &device);
        let (w, cw) = pair1(&wv, dtype, &device);
        let got = burn_repro::rms_norm(x.transpose(), w, 1e-6).unwrap();
        let want = candle_repro::nn::rms_norm(&cx.t().unwrap(), &cw, 1e-6).unwrap();
        assert_eq!(burn_bits(got), candle_bits(&want), "transposed, {dtype:?}");
    }
    println!(
        "rms_norm, layer_norm (with and without bias): {checked} outputs, candle-repro's bits"
    );
}

/// g as a Burn and a candle tensor: the loss sum(y * g) hands the op's backward exactly g
/// in both frameworks (the sum's gradient is ones, the product's is then 1 * g).
fn loss_grad(shape: [usize; 2], dtype: DType, device: &Device, seed: u64) -> (Tensor<2>, CTensor) {
    let v = moderate(shape[0] * shape[1], seed);
    pair(&v, shape, dtype, device)
}

/// The gradient of a Burn tensor and of a candle variable, as bits (Burn's through
/// candle's accumulator, `as_candle_accumulates`).
fn grads_equal<const D: usize>(
    what: &str,
    burn: Option<Tensor<D>>,
    candle: Option<&CTensor>,
) -> usize {
    let (b, c) = (
        burn.expect("a Burn gradient"),
        candle.expect("a candle gradient"),
    );
    let got = as_candle_accumulates(b, c);
    assert_eq!(got, candle_bits(c), "{what}");
    got.len()
}

#[test]
fn softmax_gradients_have_candle_repros_bits() {
    let device = Device::flex().autodiff();
    let mut checked = 0;
    for (rows, n) in [(16, 33), (3, 1), (2, 500)] {
        let v = moderate(rows * n, 21 + n as u64);
        for dtype in DTYPES {
            for log in [false, true] {
                let (x, cx) = pair(&v, [rows, n], dtype, &device);
                let x = x.require_grad();
                let (g, cg) = loss_grad([rows, n], dtype, &device, 22);
                let y = if log {
                    burn_repro::log_softmax(x.clone(), 1)
                } else {
                    burn_repro::softmax(x.clone(), 1)
                }
                .unwrap();
                let grads = (y * g).sum().backward();
                let var = Var::from_tensor(&cx).unwrap();
                let cy = if log {
                    candle_repro::log_softmax_last_dim(&var)
                } else {
                    candle_repro::softmax_last_dim(&var)
                }
                .unwrap();
                let cgrads = (cy * cg).unwrap().sum_all().unwrap().backward().unwrap();
                checked += grads_equal(
                    &format!("log {log}, {dtype:?}, {rows} x {n}"),
                    x.grad(&grads),
                    cgrads.get(&var),
                );
            }
        }
    }
    println!("softmax, log-softmax backward: {checked} gradients, candle-repro's bits");
}

#[test]
fn norm_gradients_have_candle_repros_bits() {
    let device = Device::flex().autodiff();
    let mut checked = 0;
    for (rows, n) in [(12, 48), (5, 7)] {
        let v = moderate(rows * n, 31 + n as u64);
        let wv = moderate(n, 32);
        let bv = moderate(n, 33);
        for dtype in DTYPES {
            for kind in 0..3 {
                let (x, cx) = pair(&v, [rows, n], dtype, &device);
                let (w, cw) = pair1(&wv, dtype, &device);
                let (b, cb) = pair1(&bv, dtype, &device);
                let (x, w, b) = (x.require_grad(), w.require_grad(), b.require_grad());
                let (g, cg) = loss_grad([rows, n], dtype, &device, 34);
                let (vx, vw, vb) = (
                    Var::from_tensor(&cx).unwrap(),
                    Var::from_tensor(&cw).unwrap(),
                    Var::from_tensor(&cb).unwrap(),
                );
                let (y, cy) = match kind {
                    0 => (
                        burn_repro::rms_norm(x.clone(), w.clone(), 1e-5),
                        candle_repro::nn::rms_norm(&vx, &vw, 1e-5),
                    ),
                    1 => (
                        burn_repro::layer_norm(x.clone(), w.clone(), b.clone(), 1e-5),
                        candle_repro::nn::layer_norm(&vx, &vw, &vb, 1e-5),
                    ),
                    _ => (
                        burn_repro::layer_norm_no_bias(x.clone(), w.clone(), 1e-5),
                        candle_repro::nn::layer_norm_no_bias(&vx, &vw, 1e-5),
                    ),
                };
                let grads = (y.unwrap() * g).sum().backward();
                let cgrads = (cy.unwrap() * cg)
                    .unwrap()
                    .sum_all()
                    .unwrap()
                    .backward()
                    .unwrap();
                let what = format!("norm {kind}, {dtype:?}, {rows} x {n}");
                checked += grads_equal(&format!("{what}: dx"), x.grad(&grads), cgrads.get(&vx));
                checked += grads_equal(&format!("{what}: dw"), w.grad(&grads), cgrads.get(&vw));
                if kind == 1 {
                    checked += grads_equal(&format!("{what}: db"), b.grad(&grads), cgrads.get(&vb));
                } else {
                    assert!(b.grad(&grads).is_none(), "{what}: no bias, no gradient");
                }
            }
        }
    }
    println!("rms_norm, layer_norm backward: {checked} gradients, candle-repro's bits");
}

/// Burn's checkpointing strategy is part of the autodiff device: the balanced strategy
/// gives the same gradients.
#[test]
fn balanced_checkpointing_gives_the_same_gradients() {
    let plain = Device::flex().autodiff();
    let balanced = Device::flex().autodiff().gradient_checkpointing();
    let v = moderate(6 * 20, 41);
    let mut got = Vec::new();
    for device in [plain, balanced] {
        let (x, _) = pair(&v, [6, 20], DType::F32, &device);
        let x = x.require_grad();
        let (g, _) = loss_grad([6, 20], DType::F32, &device, 42);
        let y = burn_repro::softmax(x.clone(), 1).unwrap();
        let grads = (y * g).sum().backward();
        got.push(burn_bits(x.grad(&grads).unwrap()));
    }
    assert_eq!(got[0], got[1]);
}

#[test]
fn bad_inputs_are_errors() {
    let device = Device::flex();
    let (x, _) = pair(&moderate(12, 51), [3, 4], DType::F32, &device);
    let (w, _) = pair1(&[1.0; 4], DType::F32, &device);
    let (w3, _) = pair1(&[1.0; 3], DType::F32, &device);
    let (wb, _) = pair1(&[1.0; 4], DType::BF16, &device);
    let invalid = |e: burn_repro::Error| matches!(e, burn_repro::Error::Invalid { .. });
    assert!(invalid(burn_repro::softmax(x.clone(), 2).unwrap_err()));
    assert!(invalid(
        burn_repro::rms_norm(x.clone(), w3, 0.0).unwrap_err()
    ));
    assert!(invalid(
        burn_repro::rms_norm(x.clone(), w.clone(), -1.0).unwrap_err()
    ));
    assert!(invalid(
        burn_repro::rms_norm(x.clone(), w.clone(), f32::NAN).unwrap_err()
    ));
    assert_eq!(
        burn_repro::rms_norm(x.clone(), wb, 0.0).unwrap_err(),
        burn_repro::Error::DTypeMismatch {
            op: "rms_norm",
            lhs: DType::F32,
            rhs: DType::BF16
        }
    );
    // The weight on the autodiff device, x not: refused, not mixed.
    let (wa, _) = pair1(&[1.0; 4], DType::F32, &Device::flex().autodiff());
    let e = burn_repro::rms_norm(x.clone(), wa, 0.0).unwrap_err();
    assert!(matches!(e, burn_repro::Error::DeviceMismatch { .. }), "{e}");
    let xi = Tensor::<2>::from_data(
        TensorData::new(vec![1.0f64; 4], [2, 2]),
        (&device, DType::F64),
    );
    let e = burn_repro::log_softmax(xi, 1).unwrap_err();
    assert!(e.to_string().contains("Operation: 'log_softmax'"), "{e}");
    let _ = (bf16::ONE, f16::ONE);
}

/// NdArray (another backend): read back, the same bits, the output on its device.
#[test]
#[allow(deprecated)]
fn other_backends_read_back_and_give_the_same_bits() {
    let device = Device::ndarray();
    let v = moderate(9 * 50, 61);
    let (x, cx) = pair(&v, [9, 50], DType::F32, &device);
    let (w, cw) = pair1(&moderate(50, 62), DType::F32, &device);
    let y = burn_repro::softmax(x.clone(), 1).unwrap();
    assert_eq!(y.device(), device);
    assert_eq!(
        burn_bits(y),
        candle_bits(&candle_repro::softmax_last_dim(&cx).unwrap())
    );
    let y = burn_repro::rms_norm(x, w, 1e-6).unwrap();
    assert_eq!(y.device(), device);
    let want = candle_repro::nn::rms_norm(&cx, &cw, 1e-6).unwrap();
    assert_eq!(burn_bits(y), candle_bits(&want));
    let _ = Cpu::Cpu;
}
