//! The slice kernels give the scalar functions' bits on every vector path: the baseline
//! copy (on x86-64 without FMA instructions, so its fast paths round each multiply-add
//! twice) and the AVX2+FMA and AVX-512+FMA copies (fused), for over 10^7 f32 inputs per
//! function (a stride through the whole bit space) and all 16-bit inputs.

use candle_repro::math::{self, Format, VectorPath};
use half::{bf16, f16};

type Scalar<T> = fn(T) -> T;
type Slice<T> = fn(VectorPath, &[T], &mut [T]);

macro_rules! table {
    ($t:ty) => {{
        let v: Vec<(&str, Scalar<$t>, Slice<$t>)> = vec![
            ("exp", math::exp_in::<$t>, math::exp_slice_with::<$t>),
            ("expm1", math::expm1_in::<$t>, math::expm1_slice_with::<$t>),
            ("log", math::log_in::<$t>, math::log_slice_with::<$t>),
            ("log1p", math::log1p_in::<$t>, math::log1p_slice_with::<$t>),
            ("log10", math::log10_in::<$t>, math::log10_slice_with::<$t>),
            ("sin", math::sin_in::<$t>, math::sin_slice_with::<$t>),
            ("cos", math::cos_in::<$t>, math::cos_slice_with::<$t>),
            ("tanh", math::tanh_in::<$t>, math::tanh_slice_with::<$t>),
            (
                "sigmoid",
                math::sigmoid_in::<$t>,
                math::sigmoid_slice_with::<$t>,
            ),
            ("silu", math::silu_in::<$t>, math::silu_slice_with::<$t>),
            (
                "softplus",
                math::softplus_in::<$t>,
                math::softplus_slice_with::<$t>,
            ),
            ("erf", math::erf_in::<$t>, math::erf_slice_with::<$t>),
            ("gelu", math::gelu_in::<$t>, math::gelu_slice_with::<$t>),
            (
                "gelu_erf",
                math::gelu_erf_in::<$t>,
                math::gelu_erf_slice_with::<$t>,
            ),
        ];
        v
    }};
}

fn compare<T: Format>(inputs: &[T], table: Vec<(&str, Scalar<T>, Slice<T>)>) {
    let paths = VectorPath::available();
    eprintln!("vector paths on this CPU: {paths:?}");
    for (name, scalar, slice) in table {
        let expected: Vec<u32> = inputs.iter().map(|&x| scalar(x).bits()).collect();
        for &path in &paths {
            let mut out = vec![inputs[0]; inputs.len()];
            slice(path, inputs, &mut out);
            let diffs = out
                .iter()
                .zip(&expected)
                .filter(|(o, e)| o.bits() != **e)
                .count();
            assert_eq!(
                diffs, 0,
                "{name}: {path:?} differs from the scalar function"
            );
        }
    }
}

#[test]
fn f32_slices_match_scalar_on_every_path() {
    // 2^32 / 419 = 10.25 million patterns, every sign and exponent, NaNs and infinities too;
    // an odd length so the tail that does not fill a vector chunk is exercised.
    let inputs: Vec<f32> = (0..(1u64 << 32) / 419)
        .map(|i| f32::from_bits((i * 419) as u32))
        .collect();
    compare(&inputs, table!(f32));
}

#[test]
fn bf16_slices_match_scalar_on_every_path() {
    let inputs: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
    compare(&inputs, table!(bf16));
}

#[test]
fn f16_slices_match_scalar_on_every_path() {
    let inputs: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    compare(&inputs, table!(f16));
}
