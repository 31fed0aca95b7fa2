//! burn-repro's elementwise functions against candle-repro's ops on the same values: the
//! same bits for every function and dtype (random bit patterns over the whole range,
//! special values, subnormals), contiguous and strided inputs, on Flex and through an
//! autodiff device; and the refusals (dtype, tracked tensors) as errors, never panics.

mod common;

use burn_flex::Flex;
use burn_tensor::{DType, Device, Int, Tensor, TensorData};
use common::{DTYPES, burn_bits, candle_bits, pair, values};

#[test]
fn every_function_has_candle_repros_bits() {
    let device = Device::flex();
    // 3 x 7001 values: more than one chunk of the parallel map, not a multiple of it.
    let shape = [3, 7001];
    let v = values(shape[0] * shape[1], 1);
    let mut checked = 0;
    for &name in burn_repro::FUNCTIONS {
        let f = burn_repro::by_name::<2>(name).unwrap();
        let cf = candle_repro::UnaryFn::ALL
            .into_iter()
            .find(|u| u.name() == name)
            .unwrap();
        for dtype in DTYPES {
            let (x, cx) = pair(&v, shape, dtype, &device);
            let want = candle_bits(&candle_repro::unary(&cx, cf).unwrap());
            let y = f(x.clone()).unwrap();
            assert_eq!(y.dtype(), dtype, "{name}: output dtype");
            assert_eq!(y.dims(), shape, "{name}: output shape");
            let got = burn_bits(y);
            for (q, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{name} {dtype:?} element {q}: input {}", v[q]);
            }
            // A strided view (transposed): made contiguous, the same bits in its order.
            let got_t = burn_bits(f(x.clone().transpose()).unwrap());
            let want_t = candle_bits(&candle_repro::unary(&cx.t().unwrap(), cf).unwrap());
            assert_eq!(got_t, want_t, "{name} {dtype:?} transposed");
            // A view that starts inside its storage (rows 1..): read from its offset.
            let got_n = burn_bits(f(x.narrow(0, 1, 2)).unwrap());
            let want_n =
                candle_bits(&candle_repro::unary(&cx.narrow(0, 1, 2).unwrap(), cf).unwrap());
            assert_eq!(got_n, want_n, "{name} {dtype:?} narrowed");
            checked += 2 * got.len();
        }
    }
    println!(
        "{} functions x 3 dtypes: {checked} outputs, candle-repro's bits",
        burn_repro::FUNCTIONS.len()
    );
}

/// The input is read in place and the output is a new tensor: the input is unchanged, and
/// a Flex primitive of the result is contiguous with the input's shape.
#[test]
fn flex_input_stays_and_output_is_contiguous() {
    let device = Device::flex();
    let v = values(64, 2);
    let (x, _) = pair(&v, [8, 8], DType::F32, &device);
    let before = burn_bits(x.clone());
    let y = burn_repro::tanh(x.clone()).unwrap();
    assert_eq!(burn_bits(x), before);
    let p = y.try_into_primitive::<Flex>().unwrap();
    assert!(p.is_contiguous());
    assert_eq!(p.as_slice::<f32>().unwrap().len(), 64);
}

#[test]
fn autodiff_devices_untracked_work_and_tracked_get_gradients() {
    let device = Device::flex().autodiff();
    let v = values(3 * 5, 3);
    for dtype in DTYPES {
        let (x, cx) = pair(&v, [3, 5], dtype, &device);
        // Untracked: computed, returned on the autodiff device, the same bits.
        let y = burn_repro::silu(x.clone()).unwrap();
        assert!(y.is_autodiff());
        let want = candle_bits(&candle_repro::silu(&cx).unwrap());
        assert_eq!(burn_bits(y), want, "{dtype:?}");
        // Moved off the autodiff backend (`inner`): the same bits.
        let xt = x.require_grad();
        let y = burn_repro::silu(xt.clone().inner()).unwrap();
        assert!(!y.is_autodiff());
        assert_eq!(burn_bits(y), candle_bits(&candle_repro::silu(&cx).unwrap()));
        // Tracked through another op: the forward bits, and a gradient.
        let y = burn_repro::silu(xt.clone() * 2.0).unwrap();
        assert!(xt.grad(&y.clone().sum().backward()).is_some());
    }
    // Tracked on an autodiff device over another backend (NdArray, deprecated but the
    // smallest second backend): refused, not detached.
    #[allow(deprecated)]
    let other = Device::ndarray().autodiff();
    let x = Tensor::<1>::from_floats([0.5, 1.0], &other).require_grad();
    let err = burn_repro::silu(x).unwrap_err();
    assert_eq!(err, burn_repro::Error::NoBackward { op: "silu" });
    assert!(err.to_string().contains("Operation: 'silu'"), "{err}");
}

/// d/dx sum(f(x) * g) through `Device::flex().autodiff()` against candle-repro's backward
/// op (`unary_bwd`) on the same values: every function, every dtype. (candle's autograd
/// calls that op: `tests/elementwise_grad.rs` in candle-repro.)
#[test]
fn every_function_has_candle_repros_gradients() {
    let device = Device::flex().autodiff();
    let mut checked = 0;
    let v = values(24 * 37, 61);
    let gv: Vec<f32> = values(24 * 37, 62)
        .iter()
        .map(|g| {
            if g.is_finite() {
                g.clamp(-1e4, 1e4)
            } else {
                1.5
            }
        })
        .collect();
    for dtype in DTYPES {
        for name in burn_repro::FUNCTIONS {
            let f = burn_repro::by_name::<2>(name).unwrap();
            let (x, cx) = pair(&v, [24, 37], dtype, &device);
            let (g, cg) = pair(&gv, [24, 37], dtype, &device);
            let x = x.require_grad();
            let grads = (f(x.clone()).unwrap() * g).sum().backward();
            let cf = candle_repro::UnaryFn::ALL
                .into_iter()
                .find(|u| u.name() == *name)
                .unwrap();
            // candle-repro's backward op on the same x and g (candle's own autograd would
            // first add g into zeros, and its bf16 add flushes subnormal sums to zero).
            let want = candle_repro::unary_bwd(&cx, &cg, cf).unwrap();
            let got = burn_bits(x.grad(&grads).expect("a Burn gradient"));
            assert_eq!(got, candle_bits(&want), "{name} {dtype:?}");
            checked += got.len();
        }
    }
    println!("elementwise backward: {checked} gradients, candle-repro's bits");
}

#[test]
fn other_dtypes_are_errors() {
    let device = Device::flex();
    let x = Tensor::<2>::from_data(
        TensorData::new(vec![1.0f64, 2.0], [1, 2]),
        (&device, DType::F64),
    );
    assert_eq!(
        burn_repro::exp(x).unwrap_err(),
        burn_repro::Error::UnsupportedDType {
            op: "exp",
            dtype: DType::F64
        }
    );
    // An int tensor cast to float keeps working; the function takes float tensors only.
    let i = Tensor::<2, Int>::from_data(TensorData::new(vec![1i64, 2], [1, 2]), &device);
    assert!(burn_repro::exp(i.float()).is_ok());
}

/// A backend other than Flex (NdArray) takes the read-back route: the same bits, the
/// output on the input's device and dtype. (NdArray holds f32 and f64 floats only: its
/// `from_data` panics on bf16 and f16, so this route is tested in f32 only; the 16-bit
/// dtypes run the same Flex code once read back.)
#[test]
// NdArray is deprecated in Burn 0.22 in favour of Flex; it stays the smallest second backend.
#[allow(deprecated)]
fn other_backends_read_back_and_give_the_same_bits() {
    let device = Device::ndarray();
    let v = values(2 * 777, 4);
    let (x, cx) = pair(&v, [2, 777], DType::F32, &device);
    assert!(x.clone().try_into_primitive::<Flex>().is_err());
    let y = burn_repro::gelu_erf(x).unwrap();
    assert_eq!(y.device(), device);
    assert_eq!(y.dtype(), DType::F32);
    let want = candle_bits(&candle_repro::gelu_erf(&cx).unwrap());
    assert_eq!(burn_bits(y), want);
}
