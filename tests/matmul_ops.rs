//! The matmul's API as a drop-in: candle's shape rules, clear errors for bad input,
//! backward passes that are products of the same definition, `nn::Linear`, f8e4m3 inputs
//! and the f8e4m3 cast.

use candle_core::{DType, Device, Module, Tensor, Var};
use candle_repro::{Overflow, matmul, matmul_bias, matmul_to, to_f8e4m3};
use float8::F8E4M3;

mod common;
use common::bits;

fn t(v: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape, &Device::Cpu).unwrap()
}

fn seq(n: usize, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7 + 3) % 11) as f32 * scale - 0.5)
        .collect()
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let a = t(&seq(6, 0.1), &[2, 3]);
    let b = t(&seq(12, 0.1), &[3, 4]);
    let expect_err = |r: candle_core::Result<Tensor>, what: &str, needle: &str| {
        let e = r.expect_err(what).to_string();
        assert!(e.to_lowercase().contains(needle), "{what}: {e}");
    };
    expect_err(
        matmul(&a, &t(&seq(8, 0.1), &[4, 2])),
        "inner dims",
        "shape mismatch",
    );
    expect_err(
        matmul(&t(&seq(3, 0.1), &[3]), &b),
        "rank 1",
        "shape mismatch",
    );
    expect_err(
        matmul(&a.unsqueeze(0).unwrap(), &b),
        "different ranks",
        "shape mismatch",
    );
    expect_err(
        matmul(&a, &b.to_dtype(DType::BF16).unwrap()),
        "dtypes differ",
        "dtype mismatch",
    );
    expect_err(
        matmul(
            &a.to_dtype(DType::F64).unwrap(),
            &b.to_dtype(DType::F64).unwrap(),
        ),
        "f64",
        "unsupported dtype",
    );
    expect_err(
        matmul(
            &a.to_dtype(DType::U32).unwrap(),
            &b.to_dtype(DType::U32).unwrap(),
        ),
        "u32",
        "unsupported dtype",
    );
    expect_err(
        matmul_to(&a, &b, DType::BF16),
        "f32 into bf16",
        "same dtype",
    );
    let a8 = a.to_dtype(DType::F8E4M3).unwrap();
    let b8 = b.to_dtype(DType::F8E4M3).unwrap();
    expect_err(
        matmul_to(&a8, &b8, DType::F16),
        "f8 into f16",
        "f32 or bf16",
    );
    expect_err(
        matmul_bias(&a, &b, &t(&seq(3, 1.0), &[3])),
        "bias length",
        "bias",
    );
    expect_err(
        matmul_bias(
            &a,
            &b,
            &t(&seq(4, 1.0), &[4]).to_dtype(DType::BF16).unwrap(),
        ),
        "bias dtype",
        "bias",
    );
    // Batch dimensions: as candle, the element counts must agree.
    expect_err(
        matmul(&t(&seq(12, 0.1), &[2, 2, 3]), &t(&seq(36, 0.1), &[3, 3, 4])),
        "batch",
        "shape mismatch",
    );
}

#[test]
fn shapes_follow_candle() {
    let a = t(&seq(2 * 3 * 5 * 4, 0.1), &[2, 3, 5, 4]);
    let b = t(&seq(2 * 3 * 4 * 6, 0.1), &[2, 3, 4, 6]);
    assert_eq!(matmul(&a, &b).unwrap().dims(), &[2, 3, 5, 6]);
    // broadcast_matmul: candle's rules for the batch dimensions.
    let bb = t(&seq(3 * 4 * 6, 0.1), &[3, 4, 6]);
    let want = a.broadcast_matmul(&bb).unwrap();
    let got = candle_repro::broadcast_matmul(&a, &bb).unwrap();
    assert_eq!(got.dims(), want.dims());
    let b2 = t(&seq(4 * 6, 0.1), &[4, 6]);
    assert_eq!(
        candle_repro::broadcast_matmul(&a, &b2).unwrap().dims(),
        a.broadcast_matmul(&b2).unwrap().dims()
    );
    // Empty products.
    let e = matmul(&t(&[], &[0, 4]), &t(&seq(8, 0.1), &[4, 2])).unwrap();
    assert_eq!(e.dims(), &[0, 2]);
    let z = matmul(&t(&[], &[3, 0]), &t(&[], &[0, 2])).unwrap();
    assert_eq!(z.to_vec2::<f32>().unwrap(), vec![vec![0.0; 2]; 3]);
    // Small exact products equal candle's (every sum here is exact in f32).
    let x = t(&[1., 2., 3., 4.], &[2, 2]);
    let y = t(&[5., 6., 7., 8.], &[2, 2]);
    assert_eq!(
        matmul(&x, &y).unwrap().to_vec2::<f32>().unwrap(),
        x.matmul(&y).unwrap().to_vec2::<f32>().unwrap()
    );
}

#[test]
fn gradients_are_products_of_the_same_definition() {
    for dt in [DType::F32, DType::BF16] {
        let a = Var::from_tensor(&t(&seq(5 * 7, 0.13), &[5, 7]).to_dtype(dt).unwrap()).unwrap();
        let w = Var::from_tensor(&t(&seq(3 * 7, 0.07), &[3, 7]).to_dtype(dt).unwrap()).unwrap();
        let bias = Var::from_tensor(&t(&seq(3, 0.3), &[3]).to_dtype(dt).unwrap()).unwrap();
        let g = t(&seq(5 * 3, 0.21), &[5, 3]).to_dtype(dt).unwrap();
        let y = matmul_bias(&a, &w.t().unwrap(), &bias).unwrap();
        // d(sum(y * g)) = g: the backward pass receives exactly g.
        let loss = (&y * &g).unwrap().sum_all().unwrap();
        let grads = loss.backward().unwrap();
        let ga = grads.get(&a).unwrap();
        let gw = grads.get(&w).unwrap();
        let gb = grads.get(&bias).unwrap();
        assert_eq!(
            bits(ga),
            bits(&matmul(&g, &w.as_tensor().clone()).unwrap()),
            "{dt:?} grad a"
        );
        assert_eq!(
            bits(gw),
            bits(&matmul(&g.t().unwrap(), a.as_tensor()).unwrap()),
            "{dt:?} grad w"
        );
        let ones = Tensor::ones((1, 5), dt, &Device::Cpu).unwrap();
        assert_eq!(
            bits(gb),
            bits(&matmul(&ones, &g).unwrap().squeeze(0).unwrap()),
            "{dt:?} grad bias"
        );
    }
}

#[test]
fn linear_is_a_drop_in() {
    use candle_nn::VarBuilder;
    let w = t(&seq(4 * 6, 0.11), &[4, 6]);
    let b = t(&seq(4, 0.5), &[4]);
    let ours = candle_repro::nn::Linear::new(w.clone(), Some(b.clone()));
    let stock = candle_nn::Linear::new(w.clone(), Some(b.clone()));
    for shape in [vec![6usize], vec![3, 6], vec![2, 3, 6], vec![2, 2, 3, 6]] {
        let n: usize = shape.iter().product();
        let x = t(&seq(n, 0.09), &shape);
        let y = ours.forward(&x).unwrap();
        let mut want = shape.clone();
        *want.last_mut().unwrap() = 4;
        assert_eq!(y.dims(), want.as_slice());
        if shape.len() >= 2 {
            assert_eq!(y.dims(), stock.forward(&x).unwrap().dims());
        }
        let x2 = x.reshape(((), 6)).unwrap();
        let direct = matmul_bias(&x2, &w.t().unwrap(), &b).unwrap();
        assert_eq!(bits(&y), bits(&direct), "{shape:?}");
    }
    // Built from a VarBuilder, with candle_nn's names.
    let vb = VarBuilder::zeros(DType::F32, &Device::Cpu);
    let l = candle_repro::nn::linear(6, 4, vb.clone()).unwrap();
    assert_eq!(l.weight().dims(), &[4, 6]);
    assert!(l.bias().is_some());
    assert!(
        candle_repro::nn::linear_no_bias(6, 4, vb)
            .unwrap()
            .bias()
            .is_none()
    );
    // Repeated calls (the weight's stats prepared once) give the same bits.
    let x = t(&seq(30, 0.05), &[5, 6]);
    assert_eq!(
        bits(&ours.forward(&x).unwrap()),
        bits(&ours.forward(&x).unwrap())
    );
}

#[test]
fn a_trained_weight_is_not_prepared_once() {
    // A Var's values change between calls: stats of the old values would give a bound
    // far too small for the new ones. The new rows sum to 1027.5 exactly, and a sequential
    // f64 sum loses the 3 and the 0.5 next to 2^60.
    let w = Var::from_tensor(&Tensor::full(1e-3f32, (4, 6), &Device::Cpu).unwrap()).unwrap();
    let lin = candle_repro::nn::Linear::new(w.as_tensor().clone(), None);
    let x = Tensor::ones((8, 6), DType::F32, &Device::Cpu).unwrap();
    let _ = lin.forward(&x).unwrap();
    let big = 2f32.powi(60);
    let row = [big, 3.0, 0.5, -big, 1024.0, 0.0];
    let new: Vec<f32> = (0..4).flat_map(|_| row).collect();
    w.set(&t(&new, &[4, 6])).unwrap();
    let after = lin.forward(&x).unwrap();
    assert_eq!(
        after.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        vec![1027.5; 32]
    );
}

#[test]
fn f8e4m3_inputs_and_the_cast() {
    let x = t(&seq(3 * 5, 1.7), &[3, 5]);
    let w = t(&seq(5 * 4, 0.6), &[5, 4]);
    let (x8, w8) = (
        x.to_dtype(DType::F8E4M3).unwrap(),
        w.to_dtype(DType::F8E4M3).unwrap(),
    );
    let y = matmul(&x8, &w8).unwrap();
    assert_eq!(y.dtype(), DType::F32);
    assert_eq!(
        matmul_to(&x8, &w8, DType::BF16).unwrap().dtype(),
        DType::BF16
    );
    // Small f8 products are exact in f32: equal to candle's f32 product of the widened
    // values.
    let want = x8
        .to_dtype(DType::F32)
        .unwrap()
        .matmul(&w8.to_dtype(DType::F32).unwrap())
        .unwrap();
    assert_eq!(bits(&y), bits(&want));
    // Backward through f8 inputs is refused, not silently wrong.
    let v = Var::from_tensor(&x8).unwrap();
    let loss = matmul(&v, &w8).unwrap().sum_all().unwrap();
    assert!(loss.backward().is_err());

    // The cast: every f32 bit pattern on a stride, against the float8 crate (saturating;
    // its NaN keeps the sign, ours is canonical) and the NaN-on-overflow rule.
    let xs: Vec<f32> = (0..=u32::MAX).step_by(65_537).map(f32::from_bits).collect();
    let xt = t(&xs, &[xs.len()]);
    for (dt, widen) in [
        (DType::F32, (|v| v) as fn(f32) -> f32),
        (DType::BF16, |v| half::bf16::from_f32(v).to_f32()),
        (DType::F16, |v| half::f16::from_f32(v).to_f32()),
    ] {
        let xd = xt.to_dtype(dt).unwrap();
        let sat = to_f8e4m3(&xd, Overflow::Saturate)
            .unwrap()
            .to_vec1::<F8E4M3>()
            .unwrap();
        let nan = to_f8e4m3(&xd, Overflow::Nan)
            .unwrap()
            .to_vec1::<F8E4M3>()
            .unwrap();
        for (i, &v) in xs.iter().enumerate() {
            let v = widen(v);
            if v.is_nan() {
                assert_eq!(sat[i].to_bits(), 0x7F);
                assert_eq!(nan[i].to_bits(), 0x7F);
                continue;
            }
            let want = F8E4M3::from_f32(v).to_bits();
            assert_eq!(sat[i].to_bits(), want, "{dt:?} {v:e} saturating");
            if v.abs() <= 448.0 {
                assert_eq!(nan[i].to_bits(), want, "{dt:?} {v:e}");
            } else if v.abs() > 464.0 {
                assert_eq!(nan[i].to_bits(), 0x7F, "{dt:?} {v:e} overflows to NaN");
            }
        }
    }
    assert!(
        to_f8e4m3(
            &t(&[1.0], &[1]).to_dtype(DType::F64).unwrap(),
            Overflow::Nan
        )
        .is_err()
    );
}
