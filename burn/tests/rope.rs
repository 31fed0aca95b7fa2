//! burn-repro's rotary embeddings against candle-repro's on the same values: the tables
//! (every scaling, every dtype), the three layouts with 2D and per-batch 3D tables, a
//! strided x, the gradient through `Device::flex().autodiff()` against candle's autograd,
//! and the refusals as errors.

mod common;

use burn_tensor::{DType, Device, Tensor, TensorData};
use candle_core::{Device as Cpu, Tensor as CTensor, Var};
use candle_repro::rope::{RopeConfig as CConfig, RopeTables};
use common::{DTYPES, Lcg, as_candle_accumulates, burn_bits, candle_bits};

/// Values in [-4, 4] in steps of 1/64, with special values in every 13th slot.
fn vals(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Lcg(seed);
    let specials = [0.0, -0.0, f32::INFINITY, f32::NAN, 1e-40, -65504.0];
    (0..n)
        .map(|i| {
            if i % 13 == 12 {
                specials[(rng.next() % 6) as usize]
            } else {
                ((rng.next() % 513) as f32 - 256.0) / 64.0
            }
        })
        .collect()
}

/// The same values as a Burn tensor of rank D and a candle tensor.
fn pair<const D: usize>(
    v: &[f32],
    shape: [usize; D],
    dtype: DType,
    dev: &Device,
) -> (Tensor<D>, CTensor) {
    let c = CTensor::from_vec(v.to_vec(), &shape[..], &Cpu::Cpu).unwrap();
    let (data, c) = match dtype {
        DType::F32 => (TensorData::new(v.to_vec(), shape), c),
        DType::BF16 => (
            TensorData::new(
                v.iter().map(|&x| burn_tensor::bf16::from_f32(x)).collect(),
                shape,
            ),
            c.to_dtype(candle_core::DType::BF16).unwrap(),
        ),
        _ => (
            TensorData::new(
                v.iter().map(|&x| burn_tensor::f16::from_f32(x)).collect(),
                shape,
            ),
            c.to_dtype(candle_core::DType::F16).unwrap(),
        ),
    };
    (Tensor::<D>::from_data(data, (dev, dtype)), c)
}

fn cdtype(d: DType) -> candle_core::DType {
    match d {
        DType::F32 => candle_core::DType::F32,
        DType::BF16 => candle_core::DType::BF16,
        _ => candle_core::DType::F16,
    }
}

fn configs() -> Vec<CConfig> {
    vec![
        CConfig::new(10000.0, 64),
        CConfig::llama31(64),
        CConfig::yarn(10000.0, 64, 4.0, 2048),
        CConfig::new(500000.0, 16),
    ]
}

#[test]
fn tables_have_candle_repros_bits() {
    let dev = Device::flex();
    let mut checked = 0;
    for cfg in configs() {
        for dtype in DTYPES {
            let (c, s) = burn_repro::rope_tables(&cfg, 300, dtype, &dev).unwrap();
            let want = RopeTables::new(&cfg, 300, cdtype(dtype), &Cpu::Cpu).unwrap();
            assert_eq!(c.dims(), [300, cfg.rotary_dim / 2]);
            assert_eq!(c.dtype(), dtype);
            let (c, s) = (burn_bits(c), burn_bits(s));
            assert_eq!(c, candle_bits(&want.cos), "cos {cfg:?} {dtype:?}");
            assert_eq!(s, candle_bits(&want.sin), "sin {cfg:?} {dtype:?}");
            checked += 2 * c.len();
        }
    }
    println!("rope tables: {checked} entries, candle-repro's bits");
}

#[test]
fn rotations_have_candle_repros_bits() {
    let dev = Device::flex();
    let cfg = CConfig::llama31(32);
    let (b, h, t, d) = (2, 3, 21, 32);
    let mut checked = 0;
    for dtype in DTYPES {
        let (cos, sin) = burn_repro::rope_tables(&cfg, 40, dtype, &dev).unwrap();
        let ct = RopeTables::new(&cfg, 40, cdtype(dtype), &Cpu::Cpu).unwrap();
        // Per-batch 3D tables: batch entry 1 starts at position 7.
        let (cos3, sin3) = (
            Tensor::stack::<3>(
                vec![cos.clone().narrow(0, 0, t), cos.clone().narrow(0, 7, t)],
                0,
            ),
            Tensor::stack::<3>(
                vec![sin.clone().narrow(0, 0, t), sin.clone().narrow(0, 7, t)],
                0,
            ),
        );
        let stack = |x: &CTensor| {
            CTensor::stack(&[x.narrow(0, 0, t).unwrap(), x.narrow(0, 7, t).unwrap()], 0).unwrap()
        };
        let (ccos3, csin3) = (stack(&ct.cos), stack(&ct.sin));
        let v = vals(b * h * t * d, 5);
        for layout in 0..3 {
            let shape = if layout == 2 {
                [b, t, h, d]
            } else {
                [b, h, t, d]
            };
            let (x, cx) = pair(&v, shape, dtype, &dev);
            type F2 = fn(Tensor<4>, Tensor<2>, Tensor<2>) -> Result<Tensor<4>, burn_repro::Error>;
            type F3 = fn(Tensor<4>, Tensor<3>, Tensor<3>) -> Result<Tensor<4>, burn_repro::Error>;
            type CF = fn(&CTensor, &CTensor, &CTensor) -> candle_core::Result<CTensor>;
            let (f2, f3, cf): (F2, F3, CF) = match layout {
                0 => (burn_repro::rope, burn_repro::rope, candle_repro::rope::rope),
                1 => (
                    burn_repro::rope_i,
                    burn_repro::rope_i,
                    candle_repro::rope::rope_i,
                ),
                _ => (
                    burn_repro::rope_thd,
                    burn_repro::rope_thd,
                    candle_repro::rope::rope_thd,
                ),
            };
            let got = burn_bits(f2(x.clone(), cos.clone(), sin.clone()).unwrap());
            assert_eq!(
                got,
                candle_bits(&cf(&cx, &ct.cos, &ct.sin).unwrap()),
                "2D, layout {layout}, {dtype:?}"
            );
            let got3 = burn_bits(f3(x.clone(), cos3.clone(), sin3.clone()).unwrap());
            assert_eq!(
                got3,
                candle_bits(&cf(&cx, &ccos3, &csin3).unwrap()),
                "3D, layout {layout}, {dtype:?}"
            );
            // A strided x (two middle dimensions swapped and back through a view).
            let xs = x.clone().swap_dims(1, 2);
            let xs = xs.swap_dims(1, 2);
            let cxs = cx.transpose(1, 2).unwrap().transpose(1, 2).unwrap();
            assert_eq!(
                burn_bits(f2(xs, cos.clone(), sin.clone()).unwrap()),
                candle_bits(&cf(&cxs, &ct.cos, &ct.sin).unwrap())
            );
            // A transposed x: another (valid) shape, read through its strides.
            let xt = x.swap_dims(1, 2);
            let cxt = cx.transpose(1, 2).unwrap();
            assert_eq!(
                burn_bits(f2(xt, cos.clone(), sin.clone()).unwrap()),
                candle_bits(&cf(&cxt, &ct.cos, &ct.sin).unwrap()),
                "transposed, layout {layout}, {dtype:?}"
            );
            checked += got.len() + got3.len();
        }
    }
    println!("rope, rope_i, rope_thd: {checked} outputs, candle-repro's bits");
}

#[test]
fn rope_gradients_have_candle_repros_bits() {
    let dev = Device::flex().autodiff();
    let cfg = CConfig::new(10000.0, 16);
    let (b, h, t, d) = (2, 2, 9, 16);
    let mut checked = 0;
    for dtype in DTYPES {
        let (cos, sin) = burn_repro::rope_tables(&cfg, 12, dtype, &dev).unwrap();
        let ct = RopeTables::new(&cfg, 12, cdtype(dtype), &Cpu::Cpu).unwrap();
        for layout in 0..3 {
            let shape = if layout == 2 {
                [b, t, h, d]
            } else {
                [b, h, t, d]
            };
            let v = vals(b * h * t * d, 61 + layout as u64);
            let (x, cx) = pair(&v, shape, dtype, &dev);
            let (g, cg) = pair(&vals(v.len(), 62), shape, dtype, &dev);
            let x = x.require_grad();
            let y = match layout {
                0 => burn_repro::rope(x.clone(), cos.clone(), sin.clone()),
                1 => burn_repro::rope_i(x.clone(), cos.clone(), sin.clone()),
                _ => burn_repro::rope_thd(x.clone(), cos.clone(), sin.clone()),
            }
            .unwrap();
            let grads = (y * g).sum().backward();
            let var = Var::from_tensor(&cx).unwrap();
            let cy = match layout {
                0 => candle_repro::rope::rope(&var, &ct.cos, &ct.sin),
                1 => candle_repro::rope::rope_i(&var, &ct.cos, &ct.sin),
                _ => candle_repro::rope::rope_thd(&var, &ct.cos, &ct.sin),
            }
            .unwrap();
            let cgrads = (cy * cg).unwrap().sum_all().unwrap().backward().unwrap();
            let want = cgrads.get(&var).unwrap();
            let got = as_candle_accumulates(x.grad(&grads).unwrap(), want);
            assert_eq!(got, candle_bits(want), "layout {layout}, {dtype:?}");
            checked += got.len();
        }
    }
    println!("rope backward: {checked} gradients, candle-repro's bits");
}

#[test]
fn bad_inputs_are_errors() {
    let dev = Device::flex();
    let cfg = CConfig::new(10000.0, 8);
    let (cos, sin) = burn_repro::rope_tables(&cfg, 4, DType::F32, &dev).unwrap();
    let invalid = |r: Result<Tensor<4>, burn_repro::Error>| {
        matches!(r, Err(burn_repro::Error::Invalid { .. }))
    };
    let x = |shape: [usize; 4]| Tensor::<4>::zeros(shape, &dev);
    // Odd head size, tables too short for t, a head size that does not match the tables.
    assert!(invalid(burn_repro::rope(
        x([1, 1, 2, 7]),
        cos.clone(),
        sin.clone()
    )));
    assert!(invalid(burn_repro::rope(
        x([1, 1, 5, 8]),
        cos.clone(),
        sin.clone()
    )));
    assert!(invalid(burn_repro::rope(
        x([1, 1, 2, 16]),
        cos.clone(),
        sin.clone()
    )));
    // cos and sin of different shapes; 3D tables of another batch size; 1D tables.
    assert!(invalid(burn_repro::rope(
        x([1, 1, 2, 8]),
        cos.clone(),
        sin.clone().narrow(0, 0, 3)
    )));
    let c3 = cos.clone().reshape([1, 4, 4]);
    assert!(invalid(burn_repro::rope(x([2, 1, 2, 8]), c3.clone(), c3)));
    let c1 = cos.clone().reshape([16]);
    assert!(invalid(burn_repro::rope(x([1, 1, 2, 8]), c1.clone(), c1)));
    // Mixed dtypes; an odd rotary_dim in the config; a table dtype that is not a float.
    let (cb, sb) = burn_repro::rope_tables(&cfg, 4, DType::BF16, &dev).unwrap();
    assert!(matches!(
        burn_repro::rope(x([1, 1, 2, 8]), cb, sb),
        Err(burn_repro::Error::DTypeMismatch { .. })
    ));
    let e = burn_repro::rope_tables(&CConfig::new(10000.0, 7), 4, DType::F32, &dev).unwrap_err();
    assert!(e.to_string().contains("rotary_dim must be even"), "{e}");
    assert!(burn_repro::rope_tables(&cfg, 4, DType::F64, &dev).is_err());
}

/// The fused op (positions instead of tables) against candle-repro's `rope_fused`: decode
/// positions (not 0..t, up to 2^31), (t,) and (b, t) positions, the three layouts, forward
/// bits and, on the autodiff device, the gradient.
#[test]
fn fused_has_candle_repros_bits() {
    use burn_tensor::Int;
    use candle_repro::rope::RopeLayout as CLayout;
    let (b, h, t, d) = (2, 3, 5, 32);
    // i64 positions (Flex's default Int is i32, which stops at 2^31 - 1).
    let flat: Vec<i64> = vec![7, 0, 999, 65_536, u32::MAX as i64, 3, 4, 5, 6, 2_000_000];

    let mut checked = 0;
    let cfgs = [
        CConfig::new(10000.0, d),
        CConfig::llama31(d),
        CConfig::yarn(10000.0, d, 4.0, 2048),
    ];
    for cfg in cfgs {
        let freqs = burn_repro::rope_freqs(&cfg).unwrap();
        let cfreqs = candle_repro::rope::rope_freqs(&cfg).unwrap();
        for dtype in DTYPES {
            for (layout, cl) in [
                (burn_repro::RopeLayout::Halves, CLayout::Halves),
                (burn_repro::RopeLayout::Interleaved, CLayout::Interleaved),
                (burn_repro::RopeLayout::Thd, CLayout::Thd),
            ] {
                let shape = if cl == CLayout::Thd {
                    [b, t, h, d]
                } else {
                    [b, h, t, d]
                };
                let v = vals(b * h * t * d, 71 + d as u64);
                for batched in [false, true] {
                    let dev = Device::flex().autodiff();
                    let (x, cx) = pair(&v, shape, dtype, &dev);
                    // No subnormal in g: candle's gradient accumulator flushes bf16
                    // subnormals before candle's backward op sees them (see
                    // `as_candle_accumulates`), which would compare two different g.
                    let gv: Vec<f32> = vals(v.len(), 72)
                        .into_iter()
                        .map(|x| if x != 0.0 && x.abs() < 1e-30 { 0.0 } else { x })
                        .collect();
                    let (g, cg) = pair(&gv, shape, dtype, &dev);
                    let pos = if batched {
                        flat.clone()
                    } else {
                        flat[..t].to_vec()
                    };
                    let cpos = CTensor::from_vec(pos.clone(), pos.len(), &Cpu::Cpu).unwrap();
                    let x = x.require_grad();
                    let y = if batched {
                        let p = Tensor::<2, Int>::from_data(
                            TensorData::new(pos, [b, t]),
                            (&dev, DType::I64),
                        );
                        burn_repro::rope_fused(layout, x.clone(), p, &freqs)
                    } else {
                        let p = Tensor::<1, Int>::from_data(
                            TensorData::new(pos, [t]),
                            (&dev, DType::I64),
                        );
                        burn_repro::rope_fused(layout, x.clone(), p, &freqs)
                    }
                    .unwrap();
                    let cpos = if batched {
                        cpos.reshape((b, t)).unwrap()
                    } else {
                        cpos
                    };
                    let var = Var::from_tensor(&cx).unwrap();
                    let cy = candle_repro::rope::rope_fused(cl, &var, &cpos, &cfreqs).unwrap();
                    let what = format!("{cl:?}, {dtype:?}, batched {batched}");
                    let got = burn_bits(y.clone());
                    assert_eq!(got, candle_bits(&cy), "{what}");
                    checked += got.len();
                    let grads = (y * g).sum().backward();
                    let cgrads = (cy * cg).unwrap().sum_all().unwrap().backward().unwrap();
                    let want = cgrads.get(&var).unwrap();
                    let got = as_candle_accumulates(x.grad(&grads).unwrap(), want);
                    assert_eq!(got, candle_bits(want), "{what}: gradient");
                    checked += got.len();
                }
            }
        }
    }
    // Refusals: a negative position, one past 2^32 - 1, positions of the wrong length, a
    // head size other than rotary_dim.
    let dev = Device::flex();
    let freqs = burn_repro::rope_freqs(&CConfig::new(10000.0, 8)).unwrap();
    let x = pair(&vals(2 * 4 * 8, 73), [1, 2, 4, 8], DType::F32, &dev).0;
    let p = |v: Vec<i64>| {
        Tensor::<1, Int>::from_data(TensorData::new(v.clone(), [v.len()]), (&dev, DType::I64))
    };
    let lay = burn_repro::RopeLayout::Halves;
    for bad in [vec![0, 1, -1, 2], vec![0, 1, 1 << 32, 2], vec![0, 1, 2]] {
        let e = burn_repro::rope_fused(lay, x.clone(), p(bad), &freqs).unwrap_err();
        assert!(matches!(e, burn_repro::Error::Invalid { .. }), "{e}");
    }
    let f16 = burn_repro::rope_freqs(&CConfig::new(10000.0, 16)).unwrap();
    assert!(burn_repro::rope_fused(lay, x, p(vec![0, 1, 2, 3]), &f16).is_err());
    println!("rope_fused: {checked} outputs and gradients, candle-repro's bits");
}
