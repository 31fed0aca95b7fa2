//! rope / rope_i / rope_thd: every output against the oracle (the exact rotation of the
//! stored inputs rounded once, MPFR), parity with candle_nn, backward, fused == tables,
//! invariance (batch vs alone, 1 vs 2 threads, non-contiguous inputs), errors.
//!
//! `cargo test --release --test rope_ops`
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::{D, DType, Device, IndexOp, Tensor, Var};
use candle_repro::math::Format;
use candle_repro::rope::{
    RopeConfig, RopeLayout, RopeTables, rope, rope_bwd, rope_fused, rope_i, rope_i_bwd, rope_thd,
    rope_thd_bwd, rope_with,
};
use half::{bf16, f16};

const LAYOUTS: [RopeLayout; 3] = [RopeLayout::Halves, RopeLayout::Interleaved, RopeLayout::Thd];

/// Deterministic values: a mix of magnitudes and signs, some exact zeros.
fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|k| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
            let scale = [1.0f32, 1e-3, 30.0, 1e-30, 1.0][k % 5];
            if k % 97 == 0 { 0.0 } else { u * scale }
        })
        .collect()
}

fn tensor(v: Vec<f32>, shape: &[usize], dt: DType) -> Tensor {
    Tensor::from_vec(v, shape, &Device::Cpu)
        .unwrap()
        .to_dtype(dt)
        .unwrap()
}

fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_dtype(DType::F64)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap()
}

fn fmt_of(dt: DType) -> mpfr_oracle::Format {
    match dt {
        DType::F32 => mpfr_oracle::F32,
        DType::BF16 => mpfr_oracle::BF16,
        _ => mpfr_oracle::F16,
    }
}

/// The oracle of one op: explicit index loops (written from the candle_nn definitions),
/// each output the exact x1*c -/+ x2*s rounded once by MPFR. `sgn` -1 gives the backward.
fn oracle(layout: RopeLayout, x: &Tensor, cos: &Tensor, sin: &Tensor, sgn: f64) -> Vec<f64> {
    let fmt = fmt_of(x.dtype());
    let dims = x.dims().to_vec();
    let (b, h, t, d) = match layout {
        RopeLayout::Thd => (dims[0], dims[2], dims[1], dims[3]),
        _ => (dims[0], dims[1], dims[2], dims[3]),
    };
    let (xv, cv, sv) = (f64s(x), f64s(cos), f64s(sin));
    let batched = cos.dims().len() == 3;
    let cs_t = cos.dims()[cos.dims().len() - 2];
    let half = d / 2;
    let mut out = vec![0.0; xv.len()];
    for bi in 0..b {
        for hi in 0..h {
            for ti in 0..t {
                let row = if batched { bi * cs_t + ti } else { ti };
                let base = match layout {
                    RopeLayout::Thd => ((bi * t + ti) * h + hi) * d,
                    _ => ((bi * h + hi) * t + ti) * d,
                };
                for i in 0..half {
                    let (i1, i2) = match layout {
                        RopeLayout::Interleaved => (base + 2 * i, base + 2 * i + 1),
                        _ => (base + i, base + i + half),
                    };
                    let c = cv[row * half + i];
                    let s = sv[row * half + i] * sgn;
                    let (a, bb) = (xv[i1], xv[i2]);
                    out[i1] = mpfr_oracle::rope::dot2(a, c, -bb, s, fmt);
                    out[i2] = mpfr_oracle::rope::dot2(a, s, bb, c, fmt);
                }
            }
        }
    }
    out
}

fn shape_of(layout: RopeLayout, b: usize, h: usize, t: usize, d: usize) -> Vec<usize> {
    match layout {
        RopeLayout::Thd => vec![b, t, h, d],
        _ => vec![b, h, t, d],
    }
}

fn same_bits(a: &Tensor, b: &Tensor) -> bool {
    let (a, b) = (f64s(a), f64s(b));
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

#[test]
fn every_output_is_the_correctly_rounded_rotation() {
    let mut n = 0;
    for dt in [DType::F32, DType::BF16, DType::F16] {
        for layout in LAYOUTS {
            for (b, h, t, d, cs_t, batched) in [
                (2, 3, 5, 8, 7, false),
                (2, 2, 4, 16, 4, true),
                (1, 4, 1, 64, 3, false),
            ] {
                let x = tensor(data(b * h * t * d, 1), &shape_of(layout, b, h, t, d), dt);
                let cs_shape: Vec<usize> = if batched {
                    vec![b, cs_t, d / 2]
                } else {
                    vec![cs_t, d / 2]
                };
                let ne: usize = cs_shape.iter().product();
                // arbitrary table values (not only unit-circle ones), to stress the sums
                let c = tensor(data(ne, 2), &cs_shape, dt);
                let s = tensor(data(ne, 3), &cs_shape, dt);
                for sgn in [1.0, -1.0] {
                    let y = if sgn > 0.0 {
                        rope_with(layout, &x, &c, &s).unwrap()
                    } else {
                        match layout {
                            RopeLayout::Halves => rope_bwd(&x, &c, &s),
                            RopeLayout::Interleaved => rope_i_bwd(&x, &c, &s),
                            RopeLayout::Thd => rope_thd_bwd(&x, &c, &s),
                        }
                        .unwrap()
                    };
                    let want = oracle(layout, &x, &c, &s, sgn);
                    let got = f64s(&y);
                    for k in 0..got.len() {
                        assert_eq!(
                            got[k].to_bits(),
                            want[k].to_bits(),
                            "{dt:?} {layout:?} sgn {sgn} element {k}: {} vs {}",
                            got[k],
                            want[k]
                        );
                    }
                    n += got.len();
                }
            }
        }
    }
    println!("{n} outputs equal to the oracle (0 ULP)");
}

/// ulp of |v| in the format (for the parity bound).
fn ulp(v: f64, dt: DType) -> f64 {
    let p = match dt {
        DType::F32 => 24,
        DType::BF16 => 8,
        _ => 11,
    };
    let emin = if dt == DType::F16 { -14 } else { -126 };
    let e = if v == 0.0 {
        emin
    } else {
        (v.abs().log2().floor() as i32).max(emin)
    };
    2f64.powi(e - p + 1)
}

#[test]
fn parity_with_candle_nn() {
    // Stock rounds both products and the sum; ours rounds the exact value once: they differ
    // by at most 2 ulp of the larger product term (0.5 + 0.5 + 1), checked here, and report
    // how many outputs have the same bits.
    let (b, h, t, d) = (2, 4, 16, 64);
    for dt in [DType::F32, DType::BF16, DType::F16] {
        let tables = RopeTables::new(&RopeConfig::new(10000.0, d), t, dt, &Device::Cpu).unwrap();
        for layout in LAYOUTS {
            let x = tensor(data(b * h * t * d, 7), &shape_of(layout, b, h, t, d), dt);
            let ours = rope_with(layout, &x, &tables.cos, &tables.sin).unwrap();
            let (stock, slow) = match layout {
                RopeLayout::Halves => (
                    candle_nn::rotary_emb::rope(&x, &tables.cos, &tables.sin).unwrap(),
                    Some(candle_nn::rotary_emb::rope_slow(&x, &tables.cos, &tables.sin).unwrap()),
                ),
                RopeLayout::Interleaved => (
                    candle_nn::rotary_emb::rope_i(&x, &tables.cos, &tables.sin).unwrap(),
                    Some(candle_nn::rotary_emb::rope_i_slow(&x, &tables.cos, &tables.sin).unwrap()),
                ),
                RopeLayout::Thd => (
                    candle_nn::rotary_emb::rope_thd(&x, &tables.cos, &tables.sin).unwrap(),
                    None,
                ),
            };
            // the scale of each output: max |product term| (from the f64 oracle loop with
            // unit c, s bounds: |x1| + |x2| is an upper bound of both terms)
            let xv = f64s(&x);
            let o = f64s(&ours);
            for (what, st) in [("fast", Some(stock)), ("slow", slow)] {
                let Some(st) = st else { continue };
                let sv = f64s(&st);
                let mut same = 0;
                for k in 0..o.len() {
                    let scale = xv
                        .iter()
                        .skip(k - k % d)
                        .take(d)
                        .fold(0.0f64, |m, v| m.max(v.abs()));
                    let tol = 2.0 * ulp(scale, dt);
                    assert!(
                        (o[k] - sv[k]).abs() <= tol,
                        "{dt:?} {layout:?} {what} element {k}: ours {} stock {}",
                        o[k],
                        sv[k]
                    );
                    same += (o[k].to_bits() == sv[k].to_bits()) as usize;
                }
                println!(
                    "{dt:?} {layout:?} vs candle_nn {what}: {same}/{} bitwise equal, rest within 2 ulp of the row scale",
                    o.len()
                );
            }
        }
    }
}

#[test]
fn autograd_gradient_is_the_backward_rotation() {
    let (b, h, t, d) = (1, 2, 6, 16);
    let tables =
        RopeTables::new(&RopeConfig::new(10000.0, d), t, DType::F32, &Device::Cpu).unwrap();
    for layout in LAYOUTS {
        let shape = shape_of(layout, b, h, t, d);
        let x = Var::from_tensor(&tensor(data(b * h * t * d, 11), &shape, DType::F32)).unwrap();
        let g = tensor(data(b * h * t * d, 12), &shape, DType::F32);
        let y = rope_with(layout, x.as_tensor(), &tables.cos, &tables.sin).unwrap();
        let loss = (y * &g).unwrap().sum_all().unwrap();
        let grads = loss.backward().unwrap();
        let gx = grads.get(x.as_tensor()).unwrap();
        let want = match layout {
            RopeLayout::Halves => rope_bwd(&g, &tables.cos, &tables.sin),
            RopeLayout::Interleaved => rope_i_bwd(&g, &tables.cos, &tables.sin),
            RopeLayout::Thd => rope_thd_bwd(&g, &tables.cos, &tables.sin),
        }
        .unwrap();
        assert!(same_bits(gx, &want), "{layout:?}");
        // and the backward undoes the forward (up to rounding)
        let back = match layout {
            RopeLayout::Halves => rope_bwd(
                &rope(x.as_tensor(), &tables.cos, &tables.sin).unwrap(),
                &tables.cos,
                &tables.sin,
            ),
            RopeLayout::Interleaved => rope_i_bwd(
                &rope_i(x.as_tensor(), &tables.cos, &tables.sin).unwrap(),
                &tables.cos,
                &tables.sin,
            ),
            RopeLayout::Thd => rope_thd_bwd(
                &rope_thd(x.as_tensor(), &tables.cos, &tables.sin).unwrap(),
                &tables.cos,
                &tables.sin,
            ),
        }
        .unwrap();
        let err = (back - x.as_tensor())
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap();
        assert!(err.to_scalar::<f32>().unwrap() < 1e-4);
    }
}

#[test]
fn fused_equals_tables() {
    let (b, h, t, d) = (2, 3, 7, 32);
    for cfg in [
        RopeConfig::new(10000.0, d),
        RopeConfig::llama31(d),
        RopeConfig::yarn(1e6, d, 4.0, 32768),
    ] {
        for dt in [DType::F32, DType::BF16, DType::F16] {
            let tables = RopeTables::new(&cfg, 4096, dt, &Device::Cpu).unwrap();
            for layout in LAYOUTS {
                let x = tensor(data(b * h * t * d, 5), &shape_of(layout, b, h, t, d), dt);
                // 1D positions: an offset window of the tables
                let start = 1000u32;
                let pos = Tensor::arange(start, start + t as u32, &Device::Cpu).unwrap();
                let fused = rope_fused(layout, &x, &pos, &tables.freqs).unwrap();
                let c = tables.cos.narrow(0, start as usize, t).unwrap();
                let s = tables.sin.narrow(0, start as usize, t).unwrap();
                let tab = rope_with(layout, &x, &c, &s).unwrap();
                assert!(same_bits(&fused, &tab), "{cfg:?} {dt:?} {layout:?} 1D");
                // 2D positions (per batch, arbitrary) against gathered 3D tables
                let pv: Vec<u32> = (0..b * t).map(|k| ((k * 613) % 4096) as u32).collect();
                let pos2 = Tensor::from_vec(pv.clone(), (b, t), &Device::Cpu).unwrap();
                let fused2 = rope_fused(layout, &x, &pos2, &tables.freqs).unwrap();
                let idx = Tensor::from_vec(pv, b * t, &Device::Cpu).unwrap();
                let c3 = tables
                    .cos
                    .index_select(&idx, 0)
                    .unwrap()
                    .reshape((b, t, d / 2))
                    .unwrap();
                let s3 = tables
                    .sin
                    .index_select(&idx, 0)
                    .unwrap()
                    .reshape((b, t, d / 2))
                    .unwrap();
                let tab2 = rope_with(layout, &x, &c3, &s3).unwrap();
                assert!(same_bits(&fused2, &tab2), "{cfg:?} {dt:?} {layout:?} 2D");
                if dt == DType::F32 {
                    // autograd through the fused op: the backward rotation with the tables
                    let xv = Var::from_tensor(&x).unwrap();
                    let g = tensor(data(b * h * t * d, 6), &shape_of(layout, b, h, t, d), dt);
                    let y = rope_fused(layout, xv.as_tensor(), &pos2, &tables.freqs).unwrap();
                    let grads = (y * &g).unwrap().sum_all().unwrap().backward().unwrap();
                    let want = match layout {
                        RopeLayout::Halves => rope_bwd(&g, &c3, &s3),
                        RopeLayout::Interleaved => rope_i_bwd(&g, &c3, &s3),
                        RopeLayout::Thd => rope_thd_bwd(&g, &c3, &s3),
                    }
                    .unwrap();
                    assert!(
                        same_bits(grads.get(xv.as_tensor()).unwrap(), &want),
                        "{layout:?} fused bwd"
                    );
                }
            }
        }
    }
}

#[test]
fn invariance_batch_threads_layouts() {
    let (b, h, t, d) = (3, 4, 70, 64);
    let tables = RopeTables::new(&RopeConfig::llama31(d), 128, DType::F32, &Device::Cpu).unwrap();
    for dt in [DType::F32, DType::BF16] {
        let (c, s) = (
            tables.cos.to_dtype(dt).unwrap(),
            tables.sin.to_dtype(dt).unwrap(),
        );
        for layout in LAYOUTS {
            let x = tensor(data(b * h * t * d, 9), &shape_of(layout, b, h, t, d), dt);
            let full = rope_with(layout, &x, &c, &s).unwrap();
            // one head of one batch entry alone
            let (hd, bd) = if layout == RopeLayout::Thd {
                (2, 0)
            } else {
                (1, 0)
            };
            let alone_x = x.narrow(bd, 1, 1).unwrap().narrow(hd, 2, 1).unwrap();
            let alone = rope_with(layout, &alone_x, &c, &s).unwrap();
            let part = full.narrow(bd, 1, 1).unwrap().narrow(hd, 2, 1).unwrap();
            assert!(same_bits(&alone, &part), "{dt:?} {layout:?} alone vs batch");
            // thread counts
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let y = pool.install(|| rope_with(layout, &x, &c, &s).unwrap());
                assert!(same_bits(&y, &full), "{dt:?} {layout:?} {threads} threads");
            }
            // a non-contiguous input (a transposed view) gives the bits of its copy
            let xt = x
                .transpose(1, 2)
                .unwrap()
                .contiguous()
                .unwrap()
                .transpose(1, 2)
                .unwrap();
            assert!(!xt.is_contiguous());
            let y = rope_with(layout, &xt, &c, &s).unwrap();
            assert!(same_bits(&y, &full), "{dt:?} {layout:?} non-contiguous");
        }
    }
}

#[test]
fn bad_input_is_an_error() {
    let dev = Device::Cpu;
    let x = Tensor::zeros((1, 2, 4, 8), DType::F32, &dev).unwrap();
    let c = Tensor::zeros((4, 4), DType::F32, &dev).unwrap();
    let msg = |r: candle_core::Result<Tensor>| r.unwrap_err().to_string();
    // odd head size
    let xo = Tensor::zeros((1, 2, 4, 7), DType::F32, &dev).unwrap();
    assert!(msg(rope(&xo, &c, &c)).contains("even"));
    // last dim mismatch, too short table
    let c3 = Tensor::zeros((4, 3), DType::F32, &dev).unwrap();
    assert!(msg(rope(&x, &c3, &c3)).contains("inconsistent"));
    let cshort = Tensor::zeros((3, 4), DType::F32, &dev).unwrap();
    assert!(msg(rope_i(&x, &cshort, &cshort)).contains("inconsistent"));
    // cos and sin differ
    assert!(msg(rope(&x, &c, &cshort)).contains("differ"));
    // batch mismatch in 3D tables
    let cb = Tensor::zeros((2, 4, 4), DType::F32, &dev).unwrap();
    assert!(msg(rope_thd(&x, &cb, &cb)).contains("batch"));
    // rank
    let x3 = Tensor::zeros((2, 4, 8), DType::F32, &dev).unwrap();
    assert!(msg(rope(&x3, &c, &c)).contains("4D"));
    // dtypes
    let cbf = c.to_dtype(DType::BF16).unwrap();
    assert!(msg(rope(&x, &cbf, &cbf)).contains("mismatched dtypes"));
    let x64 = x.to_dtype(DType::F64).unwrap();
    let c64 = c.to_dtype(DType::F64).unwrap();
    assert!(msg(rope(&x64, &c64, &c64)).contains("not supported"));
    // fused: bad positions
    let freqs = candle_repro::rope::rope_freqs(&RopeConfig::new(10000.0, 8)).unwrap();
    let neg = Tensor::new(&[0i64, 1, -2, 3], &dev).unwrap();
    assert!(msg(rope_fused(RopeLayout::Halves, &x, &neg, &freqs)).contains("negative"));
    let pf = Tensor::new(&[0f32, 1., 2., 3.], &dev).unwrap();
    assert!(msg(rope_fused(RopeLayout::Halves, &x, &pf, &freqs)).contains("integers"));
    let p5 = Tensor::new(&[0u32, 1, 2, 3, 4], &dev).unwrap();
    assert!(msg(rope_fused(RopeLayout::Halves, &x, &p5, &freqs)).contains("positions must be"));
    // config errors
    assert!(candle_repro::rope::rope_freqs(&RopeConfig::new(10000.0, 7)).is_err());
    assert!(candle_repro::rope::rope_freqs(&RopeConfig::new(-1.0, 8)).is_err());
    assert!(RopeTables::new(&RopeConfig::new(10000.0, 8), 4, DType::U32, &dev).is_err());
}

#[test]
fn specials_pass_through() {
    // NaN and inf inputs give canonical NaN / inf as IEEE arithmetic would, never a panic.
    let dev = Device::Cpu;
    let x = Tensor::new(
        &[[[[f32::INFINITY, 1.0, 0.0, 2.0], [f32::NAN, 1.0, 1.0, 1.0]]]],
        &dev,
    )
    .unwrap();
    let c = Tensor::new(&[[1.0f32, 0.5], [1.0, 1.0]], &dev).unwrap();
    let s = Tensor::new(&[[0.0f32, 0.5], [0.0, 0.0]], &dev).unwrap();
    let y: Vec<f32> = rope(&x, &c, &s)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap();
    // inf*1 - 0*0 = inf; inf*0 + 0*1 = NaN (canonical); finite pairs unaffected
    assert_eq!(y[0], f32::INFINITY);
    assert_eq!(y[2].to_bits(), 0x7FC0_0000);
    assert_eq!((y[1], y[3]), (-0.5, 1.5));
    assert!(y[4].is_nan() && y[6].is_nan());
    assert_eq!((y[5], y[7]), (1.0, 1.0));
    let _ = (
        bf16::ONE,
        f16::ONE,
        D::Minus1,
        x.i(0).unwrap(),
        <f32 as Format>::round(1.0),
    );
}
