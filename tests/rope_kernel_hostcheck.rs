//! Host cross-check of `kernels/rope.cu`: the kernel's per-pair function compiled as host
//! C++ (tools/rope-hostcheck, `-ffp-contract=off`) against the Rust CPU kernel, bit for bit,
//! for every dtype, layout, direction and table shape, on inputs that stress the rounding
//! (random bits over the whole exponent range, cancellations, subnormals, inf and NaN).
//!
//! `cargo test --release --test rope_kernel_hostcheck`
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

mod common;

use candle_core::{DType, Device, Tensor};
use candle_repro::rope::{
    RopeConfig, RopeLayout, rope_bwd, rope_freqs, rope_fused, rope_i_bwd, rope_thd_bwd, rope_with,
};
use common::le_bytes;
use half::{bf16, f16};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Build the host program once per test process.
fn hostcheck_binary() -> Option<PathBuf> {
    static BIN: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    BIN.get_or_init(build_hostcheck).clone()
}

fn build_hostcheck() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rope_hostcheck");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let status = Command::new(&cxx)
        .args(["-std=c++17", "-O2", "-ffp-contract=off", "-fno-fast-math"])
        .arg("-I")
        .arg(root.join("kernels"))
        .arg("-o")
        .arg(&out)
        .arg(root.join("tools/rope-hostcheck/rope_hostcheck.cpp"))
        .status();
    match status {
        Ok(s) if s.success() => Some(out),
        Ok(s) => panic!("the host build of kernels/rope.cu failed: {s}"),
        // Every machine that links Rust has a C/C++ toolchain; a check that silently
        // skips would prove nothing.
        Err(e) => panic!("no C++ compiler to build the host check ({cxx}: {e}); set CXX"),
    }
}

/// Values from random bits of the format (every exponent, subnormals, a few inf/NaN).
fn random_tensor(n: usize, shape: &[usize], dt: DType, seed: u64) -> Tensor {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let dev = &Device::Cpu;
    match dt {
        DType::F32 => {
            let v: Vec<f32> = (0..n)
                .map(|k| {
                    let r = next();
                    match k % 4 {
                        // moderate magnitudes: sums that cancel and round
                        0 | 1 => ((r >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0,
                        _ => f32::from_bits((r >> 32) as u32),
                    }
                })
                .collect();
            Tensor::from_vec(v, shape, dev).unwrap()
        }
        DType::BF16 => {
            let v: Vec<bf16> = (0..n)
                .map(|_| bf16::from_bits((next() >> 48) as u16))
                .collect();
            Tensor::from_vec(v, shape, dev).unwrap()
        }
        _ => {
            let v: Vec<f16> = (0..n)
                .map(|_| f16::from_bits((next() >> 48) as u16))
                .collect();
            Tensor::from_vec(v, shape, dev).unwrap()
        }
    }
}

#[test]
fn kernel_math_matches_the_cpu_kernel() {
    let Some(bin) = hostcheck_binary() else {
        return;
    };
    let mut cases = 0;
    let mut outputs = 0;
    for dt in [DType::F32, DType::BF16, DType::F16] {
        for (li, layout) in [RopeLayout::Halves, RopeLayout::Interleaved, RopeLayout::Thd]
            .into_iter()
            .enumerate()
        {
            for (b, h, t, d, cs_t, batched) in [
                (2usize, 3usize, 5usize, 16usize, 9usize, false),
                (3, 2, 4, 8, 6, true),
                (1, 8, 64, 128, 64, false),
            ] {
                for sgn in [1.0f64, -1.0] {
                    let shape = if layout == RopeLayout::Thd {
                        vec![b, t, h, d]
                    } else {
                        vec![b, h, t, d]
                    };
                    let cs_shape = if batched {
                        vec![b, cs_t, d / 2]
                    } else {
                        vec![cs_t, d / 2]
                    };
                    let nx = b * h * t * d;
                    let ncs: usize = cs_shape.iter().product();
                    let seed = (cases as u64 + 1) * 7919;
                    let x = random_tensor(nx, &shape, dt, seed);
                    let c = random_tensor(ncs, &cs_shape, dt, seed + 1);
                    let s = random_tensor(ncs, &cs_shape, dt, seed + 2);
                    let y = if sgn > 0.0 {
                        rope_with(layout, &x, &c, &s)
                    } else {
                        match layout {
                            RopeLayout::Halves => rope_bwd(&x, &c, &s),
                            RopeLayout::Interleaved => rope_i_bwd(&x, &c, &s),
                            RopeLayout::Thd => rope_thd_bwd(&x, &c, &s),
                        }
                    }
                    .unwrap();
                    let mut input = Vec::new();
                    let code: u32 = match dt {
                        DType::F32 => 0,
                        DType::BF16 => 1,
                        _ => 2,
                    };
                    input.extend(0u32.to_le_bytes());
                    input.extend(code.to_le_bytes());
                    input.extend((li as u32).to_le_bytes());
                    input.extend(sgn.to_le_bytes());
                    for v in [b, h, t, d, cs_t] {
                        input.extend((v as u64).to_le_bytes());
                    }
                    input.extend((batched as u32).to_le_bytes());
                    input.extend((nx as u64).to_le_bytes());
                    input.extend((ncs as u64).to_le_bytes());
                    input.extend(le_bytes(&x));
                    input.extend(le_bytes(&c));
                    input.extend(le_bytes(&s));
                    let mut child = Command::new(&bin)
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .spawn()
                        .unwrap();
                    child.stdin.take().unwrap().write_all(&input).unwrap();
                    let out = child.wait_with_output().unwrap();
                    assert!(out.status.success());
                    let want = le_bytes(&y);
                    assert_eq!(out.stdout.len(), want.len());
                    let w = dt.size_in_bytes();
                    for k in 0..nx {
                        assert_eq!(
                            &out.stdout[k * w..(k + 1) * w],
                            &want[k * w..(k + 1) * w],
                            "{dt:?} {layout:?} sgn {sgn} batched {batched} element {k}"
                        );
                    }
                    cases += 1;
                    outputs += nx;
                }
            }
        }
    }
    println!("kernels/rope.cu host build == Rust CPU kernel: {cases} cases, {outputs} outputs");
}

fn run_host(bin: &PathBuf, input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    out.stdout
}

#[test]
fn fused_kernel_math_matches_the_cpu_op() {
    // The fused kernel computes cos/sin per element with kernels/math/trig.cuh; the CPU op
    // with src/math/trig.rs. Positions up to 2^32 - 1 exercise the exact reduction.
    let Some(bin) = hostcheck_binary() else {
        return;
    };
    let mut outputs = 0;
    for cfg in [
        RopeConfig::new(10000.0, 64),
        RopeConfig::llama31(128),
        RopeConfig::yarn(1e6, 32, 4.0, 32768),
    ] {
        let freqs = rope_freqs(&cfg).unwrap();
        let d = cfg.rotary_dim;
        for dt in [DType::F32, DType::BF16, DType::F16] {
            for (li, layout) in [RopeLayout::Halves, RopeLayout::Interleaved, RopeLayout::Thd]
                .into_iter()
                .enumerate()
            {
                for batched in [false, true] {
                    let (b, h, t) = (2usize, 3usize, 40usize);
                    let shape = if layout == RopeLayout::Thd {
                        vec![b, t, h, d]
                    } else {
                        vec![b, h, t, d]
                    };
                    let nx = b * h * t * d;
                    let x = random_tensor(nx, &shape, dt, 1234 + li as u64);
                    let npos = if batched { b * t } else { t };
                    let pv: Vec<u32> = (0..npos as u64)
                        .map(|k| match k % 4 {
                            0 => k as u32,
                            1 => (k * 2_654_435_761 % 131_072) as u32,
                            2 => (k * 0x9E37_79B9) as u32,
                            _ => u32::MAX - k as u32,
                        })
                        .collect();
                    let pos = if batched {
                        Tensor::from_vec(pv.clone(), (b, t), &Device::Cpu).unwrap()
                    } else {
                        Tensor::from_vec(pv.clone(), t, &Device::Cpu).unwrap()
                    };
                    let y = rope_fused(layout, &x, &pos, &freqs).unwrap();
                    let code: u32 = match dt {
                        DType::F32 => 0,
                        DType::BF16 => 1,
                        _ => 2,
                    };
                    let mut input = Vec::new();
                    input.extend(1u32.to_le_bytes());
                    input.extend(code.to_le_bytes());
                    input.extend((li as u32).to_le_bytes());
                    input.extend(1.0f64.to_le_bytes());
                    for v in [b, h, t, d, t] {
                        input.extend((v as u64).to_le_bytes());
                    }
                    input.extend((batched as u32).to_le_bytes());
                    input.extend((nx as u64).to_le_bytes());
                    input.extend((npos as u64).to_le_bytes());
                    input.extend(le_bytes(&x));
                    for p in &pv {
                        input.extend(p.to_le_bytes());
                    }
                    for f in &freqs.inv_freq {
                        input.extend(f.to_bits().to_le_bytes());
                    }
                    input.extend(freqs.attention_factor.to_bits().to_le_bytes());
                    let got = run_host(&bin, &input);
                    let want = le_bytes(&y);
                    let w = dt.size_in_bytes();
                    for k in 0..nx {
                        assert_eq!(
                            &got[k * w..(k + 1) * w],
                            &want[k * w..(k + 1) * w],
                            "{cfg:?} {dt:?} {layout:?} batched {batched} element {k}"
                        );
                    }
                    outputs += nx;
                }
            }
        }
    }
    println!("fused kernel (host build, device trig mirror) == CPU fused op: {outputs} outputs");
}
