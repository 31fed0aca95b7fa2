//! Rotary embedding on CUDA against the CPU, bit for bit (feature `cuda`): tables built for
//! a CUDA device, rope / rope_i / rope_thd forward and backward in f32, bf16 and f16 with
//! 2D and per-batch 3D tables, the fused positions variant, and a lint of the rope PTX. On a
//! machine without a CUDA device the GPU tests print "skipped: no CUDA device" and pass.
//!
//! `cargo test --release --features cuda --test rope_cuda -- --nocapture`
#![cfg(feature = "cuda")]

mod common;

use candle_core::{DType, Device, Tensor};
use candle_repro::rope::{
    RopeConfig, RopeLayout, RopeTables, rope_bwd, rope_fused, rope_i_bwd, rope_thd_bwd, rope_with,
};
use common::{bits, cuda_device};

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 8.0 - 4.0
        })
        .collect()
}

#[test]
fn tables_same_bits_on_cuda() {
    let Some(gpu) = cuda_device() else { return };
    for cfg in [
        RopeConfig::new(10000.0, 128),
        RopeConfig::llama31(128),
        RopeConfig::yarn(1e6, 64, 4.0, 32768),
    ] {
        for dt in [DType::F32, DType::BF16, DType::F16] {
            let a = RopeTables::new(&cfg, 8192, dt, &Device::Cpu).unwrap();
            let b = RopeTables::new(&cfg, 8192, dt, &gpu).unwrap();
            assert_eq!(bits(&a.cos), bits(&b.cos), "{cfg:?} {dt:?} cos");
            assert_eq!(bits(&a.sin), bits(&b.sin), "{cfg:?} {dt:?} sin");
        }
    }
}

#[test]
fn rope_same_bits_on_cuda() {
    let Some(gpu) = cuda_device() else { return };
    let (b, h, t, d) = (2, 8, 300, 128);
    let cfg = RopeConfig::llama31(d);
    let mut n = 0;
    for dt in [DType::F32, DType::BF16, DType::F16] {
        // Positions 0..t for the 2D tables, 100..100 + 2t for the per-batch 3D ones.
        let tabs = RopeTables::new(&cfg, 100 + 2 * t, dt, &Device::Cpu).unwrap();
        for layout in [RopeLayout::Halves, RopeLayout::Interleaved, RopeLayout::Thd] {
            let shape: Vec<usize> = if layout == RopeLayout::Thd {
                vec![b, t, h, d]
            } else {
                vec![b, h, t, d]
            };
            let x = Tensor::from_vec(data(b * h * t * d, 3), shape, &Device::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            // 2D tables longer than t, and per-batch 3D tables
            let c3 = tabs
                .cos
                .narrow(0, 100, 2 * t)
                .unwrap()
                .reshape((b, t, d / 2))
                .unwrap();
            let s3 = tabs
                .sin
                .narrow(0, 100, 2 * t)
                .unwrap()
                .reshape((b, t, d / 2))
                .unwrap();
            for (c, s) in [(&tabs.cos, &tabs.sin), (&c3, &s3)] {
                let (xg, cg, sg) = (
                    x.to_device(&gpu).unwrap(),
                    c.to_device(&gpu).unwrap(),
                    s.to_device(&gpu).unwrap(),
                );
                let cpu = rope_with(layout, &x, c, s).unwrap();
                let cuda = rope_with(layout, &xg, &cg, &sg).unwrap();
                assert_eq!(bits(&cpu), bits(&cuda), "{dt:?} {layout:?} fwd");
                let bwd = |x: &Tensor, c: &Tensor, s: &Tensor| match layout {
                    RopeLayout::Halves => rope_bwd(x, c, s),
                    RopeLayout::Interleaved => rope_i_bwd(x, c, s),
                    RopeLayout::Thd => rope_thd_bwd(x, c, s),
                };
                let cpu = bwd(&x, c, s).unwrap();
                let cuda = bwd(&xg, &cg, &sg).unwrap();
                assert_eq!(bits(&cpu), bits(&cuda), "{dt:?} {layout:?} bwd");
                n += 2 * x.elem_count();
            }
            // fused positions
            let pos = Tensor::arange(7u32, 7 + t as u32, &Device::Cpu).unwrap();
            let cpu = rope_fused(layout, &x, &pos, &tabs.freqs).unwrap();
            let cuda = rope_fused(
                layout,
                &x.to_device(&gpu).unwrap(),
                &pos.to_device(&gpu).unwrap(),
                &tabs.freqs,
            )
            .unwrap();
            assert_eq!(bits(&cpu), bits(&cuda), "{dt:?} {layout:?} fused");
        }
    }
    println!("rope on CUDA == CPU: {n} outputs");
}

#[test]
fn rope_ptx_is_ieee_only() {
    let ptx = candle_repro::launch::PTX_MODULES
        .iter()
        .find(|(stem, _)| *stem == "rope")
        .expect("rope PTX")
        .1;
    let mut bad = Vec::new();
    for (i, line) in ptx.lines().enumerate() {
        let l = line.trim();
        if l.starts_with("//") || l.starts_with('.') {
            continue;
        }
        if l.contains("fma.") || l.contains(".approx") || l.contains(".ftz") || l.contains("mad.") {
            bad.push(format!("rope.ptx:{}: {l}", i + 1));
        }
    }
    assert!(
        bad.is_empty(),
        "forbidden instructions:\n{}",
        bad.join("\n")
    );
    for k in ["repro_rope_f32", "repro_rope_bf16", "repro_rope_f16"] {
        assert!(ptx.contains(k), "missing kernel {k}");
    }
}
