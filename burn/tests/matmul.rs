//! burn-repro's matmul and linear against candle-repro's on the same values: the same
//! forward bits for every dtype (the decode GEMV and the GEMM shapes, special values,
//! strided operands read in place, broadcast batch dimensions), the same gradients through
//! `Device::flex().autodiff()` as candle-repro's backward products, broadcast gradients
//! as one rounding of the exact sum, and the refusals as errors.

mod common;

use burn_tensor::{DType, Device, Tensor};
use candle_core::{D, Tensor as CTensor, Var};
use common::{DTYPES, Lcg, as_candle_accumulates, burn_bits, candle_bits, pair_nd, values};

/// Products that exercise every tier: values with random 24-bit significands over a
/// spread of exponents (cancellation, outputs near rounding boundaries), small integers
/// (exact sums, ties at the rounding of bf16 and f16), and one stretch of special values
/// (NaN, infinities, signed zeros, subnormals) in every 211.
fn mixed(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Lcg(seed);
    let specials = values(n, seed ^ 0x77);
    (0..n)
        .map(|i| match (i / 13) % 4 {
            _ if i % 211 < 3 => specials[i],
            0 | 1 => {
                let sig = (rng.next() % (1 << 24)) as f32 - (1 << 23) as f32;
                sig * 2f32.powi(-((rng.next() % 40) as i32) - 20)
            }
            2 => (rng.next() % 17) as f32 - 8.0,
            _ => ((rng.next() % 4097) as f32 - 2048.0) / 64.0,
        })
        .collect()
}

fn assert_bits<const N: usize>(what: &str, got: Tensor<N>, want: &CTensor) -> usize {
    let got = burn_bits(got);
    assert_eq!(got, candle_bits(want), "{what}");
    got.len()
}

#[test]
fn matmul_has_candle_repros_bits() {
    let device = Device::flex();
    let mut checked = 0;
    // (m, k, n): decode rows (the GEMV path), a k-block boundary, a GEMM with tails.
    for (m, k, n) in [
        (1, 7, 5),
        (3, 640, 9),
        (9, 300, 17),
        (33, 64, 40),
        (0, 4, 3),
        (2, 0, 3),
    ] {
        let va = mixed(2 * m * k, 1 + k as u64);
        let vb = mixed(2 * k * n, 2 + n as u64);
        for dtype in DTYPES {
            let what = format!("{m} x {k} x {n}, {dtype:?}");
            let (a, ca) = pair_nd(&va, [2, m, k], dtype, &device);
            let (b, cb) = pair_nd(&vb, [2, k, n], dtype, &device);
            let want = candle_repro::matmul(&ca, &cb).unwrap();
            let got = burn_repro::matmul(a.clone(), b).unwrap();
            checked += assert_bits(&what, got, &want);
            // b stored as (n, k) and transposed in place (a weight read as w^T).
            let (bt, cbt) = pair_nd(&vb, [2, n, k], dtype, &device);
            let want = candle_repro::matmul(&ca, &cbt.transpose(1, 2).unwrap()).unwrap();
            let got = burn_repro::matmul(a.clone(), bt.swap_dims(1, 2)).unwrap();
            checked += assert_bits(&format!("{what}, b^T in place"), got, &want);
            // A narrowed a (a view with an offset and a row stride longer than k).
            if k > 2 {
                let (an, can) = (a.narrow(2, 1, k - 2), ca.narrow(2, 1, k - 2).unwrap());
                let (bn, cbn) = (
                    pair_nd(&vb, [2, k, n], dtype, &device)
                        .0
                        .narrow(1, 1, k - 2),
                    cb.narrow(1, 1, k - 2).unwrap(),
                );
                let want = candle_repro::matmul(&can, &cbn).unwrap();
                let got = burn_repro::matmul(an, bn).unwrap();
                checked += assert_bits(&format!("{what}, narrowed"), got, &want);
            }
        }
    }
    println!("matmul: {checked} outputs, candle-repro's bits");
}

#[test]
fn broadcast_batches_have_candle_repros_bits() {
    let device = Device::flex();
    let (m, k, n) = (5, 70, 6);
    let mut checked = 0;
    for (ab, bb) in [([2, 3], [1, 3]), ([1, 1], [2, 3]), ([2, 1], [1, 3])] {
        let va = mixed(ab[0] * ab[1] * m * k, 3);
        let vb = mixed(bb[0] * bb[1] * k * n, 4);
        for dtype in DTYPES {
            let (a, ca) = pair_nd(&va, [ab[0], ab[1], m, k], dtype, &device);
            let (b, cb) = pair_nd(&vb, [bb[0], bb[1], k, n], dtype, &device);
            let want = candle_repro::broadcast_matmul(&ca, &cb).unwrap();
            let got = burn_repro::matmul(a, b).unwrap();
            checked += assert_bits(&format!("{ab:?} by {bb:?}, {dtype:?}"), got, &want);
        }
    }
    println!("broadcast matmul: {checked} outputs, candle-repro's bits");
}

#[test]
fn linear_has_candle_repros_bits() {
    let device = Device::flex();
    let (k, n) = (96, 24);
    let vx = mixed(2 * 7 * k, 5);
    let vw = mixed(n * k, 6);
    let vbias = mixed(n, 7);
    let mut checked = 0;
    for dtype in DTYPES {
        let (x, cx) = pair_nd(&vx, [2, 7, k], dtype, &device);
        // Burn's layout (d_input, d_output) = candle's weight (out, in) transposed.
        let (wt, cw) = pair_nd(&vw, [n, k], dtype, &device);
        let (b, cb) = pair_nd(&vbias, [n], dtype, &device);
        for bias in [false, true] {
            let lin = candle_repro::nn::Linear::new(cw.clone(), bias.then(|| cb.clone()));
            let want = candle_core::Module::forward(&lin, &cx).unwrap();
            let w = wt.clone().transpose();
            let got = burn_repro::linear(x.clone(), w.clone(), bias.then(|| b.clone())).unwrap();
            checked += assert_bits(&format!("{dtype:?}, bias {bias}"), got, &want);
            // W contiguous in Burn's layout: the same bits.
            let w = Tensor::<2>::from_data(w.into_data(), (&device, dtype));
            let got = burn_repro::linear(x.clone(), w, bias.then(|| b.clone())).unwrap();
            checked += assert_bits(&format!("{dtype:?}, bias {bias}, contiguous"), got, &want);
        }
    }
    println!("linear: {checked} outputs, candle-repro's Linear bits");
}

/// Moderate values for gradients: multiples of 1/256 in [-16, 16].
fn moderate(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Lcg(seed);
    (0..n)
        .map(|_| ((rng.next() % 8193) as f32 - 4096.0) / 256.0)
        .collect()
}

fn grad_bits<const N: usize>(what: &str, burn: Option<Tensor<N>>, candle: &CTensor) -> usize {
    let got = as_candle_accumulates(burn.expect("a Burn gradient"), candle);
    assert_eq!(got, candle_bits(candle), "{what}");
    got.len()
}

#[test]
fn matmul_gradients_have_candle_repros_bits() {
    let device = Device::flex().autodiff();
    let (m, k, n) = (6, 130, 9);
    let mut checked = 0;
    for dtype in DTYPES {
        let (a, ca) = pair_nd(&mixed(2 * m * k, 8), [2, m, k], dtype, &device);
        let (b, cb) = pair_nd(&moderate(2 * k * n, 9), [2, k, n], dtype, &device);
        let (g, cg) = pair_nd(&moderate(2 * m * n, 10), [2, m, n], dtype, &device);
        let (a, b) = (a.require_grad(), b.require_grad());
        let grads = (burn_repro::matmul(a.clone(), b.clone()).unwrap() * g)
            .sum()
            .backward();
        let (va, vb) = (
            Var::from_tensor(&ca).unwrap(),
            Var::from_tensor(&cb).unwrap(),
        );
        let cy = candle_repro::matmul(&va, &vb).unwrap();
        let cgrads = (cy * cg).unwrap().sum_all().unwrap().backward().unwrap();
        checked += grad_bits(
            &format!("da, {dtype:?}"),
            a.grad(&grads),
            cgrads.get(&va).unwrap(),
        );
        checked += grad_bits(
            &format!("db, {dtype:?}"),
            b.grad(&grads),
            cgrads.get(&vb).unwrap(),
        );
    }
    println!("matmul backward: {checked} gradients, candle-repro's bits");
}

/// Where an operand is broadcast, its gradient is the exact sum over the output batches
/// that read it, rounded once: compared with one candle-repro product over the stacked
/// factors (an independent route: candle's own reshapes and concatenations).
#[test]
fn broadcast_gradients_are_one_rounding_of_the_exact_sum() {
    let device = Device::flex().autodiff();
    let (m, k, n) = (4, 50, 7);
    let mut checked = 0;
    for dtype in DTYPES {
        // b broadcast over the first batch dim: db[0, c] = sum_x a[x, c]^T g[x, c].
        let (a, ca) = pair_nd(&mixed(2 * 3 * m * k, 11), [2, 3, m, k], dtype, &device);
        let (b, cb) = pair_nd(&moderate(3 * k * n, 12), [1, 3, k, n], dtype, &device);
        let (g, cg) = pair_nd(&mixed(2 * 3 * m * n, 13), [2, 3, m, n], dtype, &device);
        let b = b.require_grad();
        let grads = (burn_repro::matmul(a, b.clone()).unwrap() * g.clone())
            .sum()
            .backward();
        let want: Vec<CTensor> = (0..3)
            .map(|c| {
                // (2 m, k) and (2 m, n): the batches' rows stacked.
                let a_c = ca.narrow(1, c, 1).unwrap().reshape((2 * m, k)).unwrap();
                let g_c = cg.narrow(1, c, 1).unwrap().reshape((2 * m, n)).unwrap();
                candle_repro::matmul(&a_c.t().unwrap(), &g_c).unwrap()
            })
            .collect();
        let want = CTensor::stack(&want, 0).unwrap().unsqueeze(0).unwrap();
        checked += grad_bits(&format!("db broadcast, {dtype:?}"), b.grad(&grads), &want);
        let _ = cb;

        // a broadcast: da[0, c] = sum_x g[x, c] b[x, c]^T = [g[0, c] g[1, c]] [b[0, c]^T; b[1, c]^T].
        let (a, _) = pair_nd(&moderate(3 * m * k, 14), [1, 3, m, k], dtype, &device);
        let (b, cb) = pair_nd(&mixed(2 * 3 * k * n, 15), [2, 3, k, n], dtype, &device);
        let a = a.require_grad();
        let grads = (burn_repro::matmul(a.clone(), b).unwrap() * g)
            .sum()
            .backward();
        let want: Vec<CTensor> = (0..3)
            .map(|c| {
                let gx = |x| cg.get(x).unwrap().get(c).unwrap();
                let bx = |x| cb.get(x).unwrap().get(c).unwrap().t().unwrap();
                let g_cat = CTensor::cat(&[gx(0), gx(1)], D::Minus1).unwrap();
                let b_cat = CTensor::cat(&[bx(0), bx(1)], 0).unwrap();
                candle_repro::matmul(&g_cat, &b_cat).unwrap()
            })
            .collect();
        let want = CTensor::stack(&want, 0).unwrap().unsqueeze(0).unwrap();
        checked += grad_bits(&format!("da broadcast, {dtype:?}"), a.grad(&grads), &want);
    }
    println!("broadcast matmul backward: {checked} gradients, one rounding each");
}

#[test]
fn linear_gradients_have_candle_repros_bits() {
    let device = Device::flex().autodiff();
    let (k, n) = (40, 12);
    let mut checked = 0;
    for dtype in DTYPES {
        for bias in [false, true] {
            let (x, cx) = pair_nd(&mixed(3 * 5 * k, 16), [3, 5, k], dtype, &device);
            let (wt, cw) = pair_nd(&moderate(n * k, 17), [n, k], dtype, &device);
            let (b, cb) = pair_nd(&moderate(n, 18), [n], dtype, &device);
            let (g, cg) = pair_nd(&moderate(3 * 5 * n, 19), [3, 5, n], dtype, &device);
            let w = Tensor::<2>::from_data(wt.transpose().into_data(), (&device, dtype));
            let (x, w, b) = (x.require_grad(), w.require_grad(), b.require_grad());
            let y = burn_repro::linear(x.clone(), w.clone(), bias.then(|| b.clone())).unwrap();
            let grads = (y * g).sum().backward();
            let (vx, vw, vb) = (
                Var::from_tensor(&cx).unwrap(),
                Var::from_tensor(&cw).unwrap(),
                Var::from_tensor(&cb).unwrap(),
            );
            let lin = candle_repro::nn::Linear::new(
                vw.as_tensor().clone(),
                bias.then(|| vb.as_tensor().clone()),
            );
            let cy = candle_core::Module::forward(&lin, &vx).unwrap();
            let cgrads = (cy * cg).unwrap().sum_all().unwrap().backward().unwrap();
            let what = format!("{dtype:?}, bias {bias}");
            checked += grad_bits(
                &format!("dx, {what}"),
                x.grad(&grads),
                cgrads.get(&vx).unwrap(),
            );
            // candle's weight is (out, in): its gradient transposed is Burn's.
            let cgw = cgrads.get(&vw).unwrap().t().unwrap().contiguous().unwrap();
            checked += grad_bits(&format!("dw, {what}"), w.grad(&grads), &cgw);
            if bias {
                checked += grad_bits(
                    &format!("db, {what}"),
                    b.grad(&grads),
                    cgrads.get(&vb).unwrap(),
                );
            } else {
                assert!(b.grad(&grads).is_none(), "{what}: no bias, no gradient");
            }
        }
    }
    println!("linear backward: {checked} gradients, candle-repro's bits");
}

#[test]
fn bad_inputs_are_errors() {
    let device = Device::flex();
    let f32s = |shape: [usize; 3]| {
        pair_nd(
            &mixed(shape.iter().product(), 20),
            shape,
            DType::F32,
            &device,
        )
        .0
    };
    let invalid = |e: burn_repro::Error| matches!(e, burn_repro::Error::Invalid { .. });
    // Inner dimensions, batch dimensions, rank.
    assert!(invalid(
        burn_repro::matmul(f32s([2, 3, 4]), f32s([2, 5, 6])).unwrap_err()
    ));
    assert!(invalid(
        burn_repro::matmul(f32s([2, 3, 4]), f32s([3, 4, 6])).unwrap_err()
    ));
    let v1 = pair_nd(&[1.0; 4], [4], DType::F32, &device).0;
    assert!(invalid(
        burn_repro::matmul(v1.clone(), v1.clone()).unwrap_err()
    ));
    // linear: the weight's d_input, the bias's length, a scalar-free rank-1 x is fine.
    let w = pair_nd(&[1.0; 12], [4, 3], DType::F32, &device).0;
    let b2 = pair_nd(&[1.0; 2], [2], DType::F32, &device).0;
    assert!(invalid(
        burn_repro::linear(f32s([2, 3, 5]), w.clone(), None).unwrap_err()
    ));
    assert!(invalid(
        burn_repro::linear(f32s([2, 3, 4]), w.clone(), Some(b2)).unwrap_err()
    ));
    assert_eq!(burn_repro::linear(v1, w.clone(), None).unwrap().dims(), [3]);
    // dtypes and devices.
    let bf = pair_nd(&[1.0; 12], [1, 3, 4], DType::BF16, &device).0;
    let e = burn_repro::matmul(f32s([1, 2, 3]), bf).unwrap_err();
    assert!(matches!(e, burn_repro::Error::DTypeMismatch { .. }), "{e}");
    let ad = pair_nd(
        &[1.0; 12],
        [1, 3, 4],
        DType::F32,
        &Device::flex().autodiff(),
    )
    .0;
    let e = burn_repro::matmul(f32s([1, 2, 3]), ad).unwrap_err();
    assert!(matches!(e, burn_repro::Error::DeviceMismatch { .. }), "{e}");
    let f64s = Tensor::<2>::from_data(
        burn_tensor::TensorData::new(vec![1.0f64; 4], [2, 2]),
        (&device, DType::F64),
    );
    let e = burn_repro::matmul(f64s.clone(), f64s).unwrap_err();
    assert!(e.to_string().contains("Operation: 'matmul'"), "{e}");
}

/// NdArray (another backend): read back, the same bits, the output on its device.
#[test]
#[allow(deprecated)]
fn other_backends_read_back_and_give_the_same_bits() {
    let device = Device::ndarray();
    let (a, ca) = pair_nd(&mixed(4 * 33, 21), [4, 33], DType::F32, &device);
    let (b, cb) = pair_nd(&mixed(33 * 8, 22), [33, 8], DType::F32, &device);
    let got = burn_repro::matmul(a, b).unwrap();
    assert_eq!(got.device(), device);
    assert_bits("ndarray", got, &candle_repro::matmul(&ca, &cb).unwrap());
}
