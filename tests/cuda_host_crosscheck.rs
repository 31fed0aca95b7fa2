//! The CUDA device math, compiled as host C++, against the Rust math, bit for bit.
//!
//! `kernels/math/all.cuh` is the text nvcc compiles for the GPU (with `--fmad=false`); the
//! `kernel-hostcheck` crate compiles the same text with the host C++ compiler
//! (`-ffp-contract=off`). Both perform the same IEEE operations, so equal bits here on every
//! input tested mean the device code mirrors `core/src/math` operation for operation. Checked
//! per function: all 65536 bf16 and all 65536 f16 inputs, and a strided sample of the f32
//! bit space (every 41st pattern by default: 1.05 * 10^8 inputs, with every exponent, both
//! signs, subnormals, infinities and NaNs) plus the special values and each function's hard
//! cases. No nvcc or GPU is needed.
//!
//! Besides the rounded outputs, the parts of each function are compared directly (a fast
//! path that differs in its last bits would still round the same almost always, so only
//! this shows that the mirror is operation for operation): the error bound, the fast-domain
//! test and the f64 bits of `fast(x)` on the same inputs, and the f64 bits of
//! `accurate(x)` on every input whose output is 16-bit plus a sparser f32 sample (stride
//! 4099, about 10^6 inputs) and the special and hard cases. The Rust side of the parts is
//! `core/src/math` itself, compiled into the `kernel-hostcheck` crate too (`#[path]`) so that
//! its `pub(crate)` trait is reachable.
//!
//! `REPRO_CROSSCHECK_F32_STRIDE=<n>` changes the stride (1 = all 2^32 inputs) and
//! `REPRO_CROSSCHECK_F32_OFFSET=<k>` starts the sample at pattern k, to cover other residues.
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_repro::math;
use half::{bf16, f16};
use kernel_hostcheck::{DeviceFn, RustParts};
use mpfr_oracle::Func;
use rayon::prelude::*;

include!("common/hard_cases.rs");

struct RustFn {
    f32_slice: fn(&[f32], &mut [f32]),
    bf16: fn(bf16) -> bf16,
    f16: fn(f16) -> f16,
}

fn rust_fn(func: Func) -> RustFn {
    macro_rules! f {
        ($n:ident) => {
            paste::paste! { RustFn {
                f32_slice: |x, o| math::[<$n _slice>](x, o),
                bf16: math::[<$n _bf16>],
                f16: math::[<$n _f16>],
            } }
        };
    }
    match func {
        Func::Exp => f!(exp),
        Func::Expm1 => f!(expm1),
        Func::Log => f!(log),
        Func::Log1p => f!(log1p),
        Func::Log10 => f!(log10),
        Func::Sin => f!(sin),
        Func::Cos => f!(cos),
        Func::Tanh => f!(tanh),
        Func::Sigmoid => f!(sigmoid),
        Func::Silu => f!(silu),
        Func::Softplus => f!(softplus),
        Func::Erf => f!(erf),
        Func::Gelu => f!(gelu),
        Func::GeluErf => f!(gelu_erf),
    }
}

fn device_fn(func: Func) -> DeviceFn {
    kernel_hostcheck::by_name(func.name())
        .unwrap_or_else(|| panic!("{} missing from kernels/math/all.cuh", func.name()))
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number")),
        Err(_) => default,
    }
}

/// Special inputs checked for every function, whatever the stride.
const SPECIALS: &[u32] = &[
    0x0000_0000, // +0
    0x8000_0000, // -0
    0x0000_0001, // smallest subnormal
    0x8000_0001,
    0x007F_FFFF, // largest subnormal
    0x807F_FFFF,
    0x0080_0000, // smallest normal
    0x8080_0000,
    0x3F80_0000, // 1
    0xBF80_0000,
    0x3400_0000, // 2^-23
    0xB400_0000,
    0x3380_0000, // 2^-24
    0x7F7F_FFFF, // max
    0xFF7F_FFFF,
    0x7F80_0000, // inf
    0xFF80_0000,
    0x7FC0_0000, // NaN
    0xFFC0_1234,
    0x7F80_0001, // signalling NaN
    0xFFFF_FFFF,
];

/// (input bits, Rust bits, device bits) of every difference.
type Diffs = Vec<(u32, u32, u32)>;

fn report(func: Func, kind: &str, checked: usize, diffs: &Diffs) {
    println!(
        "{:>8} {kind}: {checked} inputs, {} differences",
        func.name(),
        diffs.len()
    );
    if !diffs.is_empty() {
        let shown: Vec<String> = diffs
            .iter()
            .take(12)
            .map(|(x, r, d)| format!("x={x:#010x} rust={r:#010x} device={d:#010x}"))
            .collect();
        panic!(
            "{} {kind}: the device math differs from the Rust math on {} inputs, e.g.\n  {}",
            func.name(),
            diffs.len(),
            shown.join("\n  ")
        );
    }
}

fn check_16bit(func: Func) {
    let (r, d) = (rust_fn(func), device_fn(func));
    let diffs: Diffs = (0..=u16::MAX)
        .into_par_iter()
        .filter_map(|b| {
            let (rb, db) = ((r.bf16)(bf16::from_bits(b)).to_bits(), (d.bf16)(b));
            (rb != db).then_some((b as u32, rb as u32, db as u32))
        })
        .collect();
    report(func, "bf16 (all)", 65536, &diffs);
    let diffs: Diffs = (0..=u16::MAX)
        .into_par_iter()
        .filter_map(|b| {
            let (rb, db) = ((r.f16)(f16::from_bits(b)).to_bits(), (d.f16)(b));
            (rb != db).then_some((b as u32, rb as u32, db as u32))
        })
        .collect();
    report(func, "f16 (all)", 65536, &diffs);
}

fn compare_f32(r: &RustFn, d: &DeviceFn, bits: &[u32]) -> Diffs {
    let xs: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
    let mut rust_out = vec![0f32; xs.len()];
    (r.f32_slice)(&xs, &mut rust_out);
    let mut dev_out = vec![0u32; xs.len()];
    (d.f32_batch)(bits, &mut dev_out);
    bits.iter()
        .zip(rust_out.iter().zip(&dev_out))
        .filter(|(_, (r, d))| r.to_bits() != **d)
        .map(|(&x, (r, &d))| (x, r.to_bits(), d))
        .collect()
}

fn check_f32(func: Func) {
    let stride = env_u64("REPRO_CROSSCHECK_F32_STRIDE", 41).max(1);
    let offset = env_u64("REPRO_CROSSCHECK_F32_OFFSET", 0) % stride;
    let (r, d) = (rust_fn(func), device_fn(func));
    let count = ((1u64 << 32) - offset).div_ceil(stride);
    const CHUNK: u64 = 1 << 16;
    let mut diffs: Diffs = (0..count.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|c| {
            let bits: Vec<u32> = (c * CHUNK..((c + 1) * CHUNK).min(count))
                .map(|i| (offset + i * stride) as u32)
                .collect();
            compare_f32(&r, &d, &bits)
        })
        .collect();
    let mut extra: Vec<u32> = SPECIALS.to_vec();
    extra.extend(candle_repro_hard_cases(func).iter().map(|x| x.to_bits()));
    diffs.extend(compare_f32(&r, &d, &extra));
    let kind = format!("f32 (stride {stride}, offset {offset}, + specials and hard cases)");
    report(func, &kind, count as usize + extra.len(), &diffs);
}

fn rust_parts(func: Func) -> RustParts {
    kernel_hostcheck::rust_parts(func.name()).expect("every function has Rust parts")
}

/// f64 bits for comparison: every NaN counts as one value (the final rounding makes any NaN
/// the canonical NaN, and NaN payloads legitimately differ between CPUs and GPUs).
fn f64_key(bits: u64) -> u64 {
    if f64::from_bits(bits).is_nan() {
        0x7FF8_0000_0000_0000
    } else {
        bits
    }
}

/// The f32 inputs of the parts check: every bf16 and f16 value, the strided f32 sample,
/// the specials and hard cases.
fn parts_inputs(func: Func, stride: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..=u16::MAX).map(|b| (b as u32) << 16).collect();
    v.extend((0..=u16::MAX).map(|b| f16::from_bits(b).to_f32().to_bits()));
    v.extend((0..(1u64 << 32)).step_by(stride as usize).map(|b| b as u32));
    v.extend_from_slice(SPECIALS);
    v.extend(candle_repro_hard_cases(func).iter().map(|x| x.to_bits()));
    v
}

fn check_parts(func: Func) {
    let (r, d) = (rust_parts(func), device_fn(func));
    assert_eq!(
        r.fast_rel_err.to_bits(),
        (d.fast_rel_err)(),
        "{}: FAST_REL_ERR differs",
        func.name()
    );
    let stride = env_u64("REPRO_CROSSCHECK_F32_STRIDE", 41).max(1);
    let inputs = parts_inputs(func, stride);
    let fast_diffs: Diffs = inputs
        .par_chunks(1 << 16)
        .flat_map_iter(|xs| {
            let mut dom = vec![false; xs.len()];
            let mut fast = vec![0u64; xs.len()];
            (d.fast_batch)(xs, &mut dom, &mut fast);
            xs.iter()
                .zip(dom.into_iter().zip(fast))
                .filter_map(|(&x, (d_dom, d_fast))| {
                    let xf = f32::from_bits(x);
                    let r_dom = (r.in_fast_domain)(xf);
                    if r_dom != d_dom {
                        return Some((x, r_dom as u32, d_dom as u32));
                    }
                    let r_fast = (r.fast)(xf).to_bits();
                    (r_dom && r_fast != d_fast).then_some((
                        x,
                        (r_fast >> 32) as u32,
                        (d_fast >> 32) as u32,
                    ))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    report(
        func,
        "fast path: in_fast_domain and fast() f64 bits (bf16, f16, strided f32)",
        inputs.len(),
        &fast_diffs,
    );
    let acc_stride = env_u64("REPRO_CROSSCHECK_ACCURATE_STRIDE", 4099).max(1);
    let inputs = parts_inputs(func, acc_stride);
    let acc_diffs: Diffs = inputs
        .par_iter()
        .filter_map(|&x| {
            let rb = f64_key((r.accurate)(f32::from_bits(x)).to_bits());
            let db = f64_key((d.accurate)(x));
            (rb != db).then_some((x, (rb >> 32) as u32, (db >> 32) as u32))
        })
        .collect();
    report(
        func,
        &format!("accurate() f64 bits (bf16, f16, f32 stride {acc_stride})"),
        inputs.len(),
        &acc_diffs,
    );
}

macro_rules! crosscheck {
    ($($name:ident => $func:expr),* $(,)?) => {
        mod bf16_f16_all {
            use super::*;
            $( #[test] fn $name() { check_16bit($func) } )*
        }
        mod f32_strided {
            use super::*;
            $( #[test] fn $name() { check_f32($func) } )*
        }
        mod parts {
            use super::*;
            $( #[test] fn $name() { check_parts($func) } )*
        }
    };
}

crosscheck! {
    exp => Func::Exp,
    expm1 => Func::Expm1,
    log => Func::Log,
    log1p => Func::Log1p,
    log10 => Func::Log10,
    sin => Func::Sin,
    cos => Func::Cos,
    tanh => Func::Tanh,
    sigmoid => Func::Sigmoid,
    silu => Func::Silu,
    softplus => Func::Softplus,
    erf => Func::Erf,
    gelu => Func::Gelu,
    gelu_erf => Func::GeluErf,
}

#[test]
fn every_function_is_mirrored() {
    let names: Vec<&str> = kernel_hostcheck::ALL.iter().map(|f| f.name).collect();
    let expected: Vec<&str> = Func::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(names, expected);
}

/// The device's rounding test (`round_if_certain` of `kernels/math/round.cuh`, used by
/// every elementwise kernel and the fused RoPE angle) never claims more than its
/// interval allows: whenever it is sure, both ends y -+ |y| err (exact: err is a power of
/// two) round to its answer, by the Rust rounding (`Format::round`). The inputs sit within
/// 2 |y| err of a midpoint of the output format (three in four) or of a representable
/// value, so a test narrower than its bound (its tolerance halved, issue 31) is sure of a
/// value one end does not round to, which fails here; the mirror of `core/src/math/round.rs`'s
/// `f32_bit_test_is_sound` for the CPU's fast bit test.
#[test]
fn device_rounding_test_is_sound() {
    use candle_repro::math::round::Format;
    use kernel_hostcheck::round::{Format as Dev, round_if_certain};
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    // (format, significand bits, smallest and largest normal exponent)
    for (dev, p, emin, emax) in [
        (Dev::F32, 24u32, -126i64, 127i64),
        (Dev::Bf16, 8, -126, 127),
        (Dev::F16, 11, -14, 15),
    ] {
        let (mut sure, mut total) = (0u64, 0u64);
        for i in 0..300_000u64 {
            let r = next();
            let e = emin + (r % (emax - emin + 1) as u64) as i64;
            let sig = (next() & ((1u64 << (p - 1)) - 1)) << (53 - p);
            let center = if i % 4 == 3 { 0 } else { 1u64 << (52 - p) };
            // err = 2^-q; |y| err is about 2^(52 - q) f64 ulps of y: offsets up to twice that.
            let q = 40 + (next() % 12) as i64;
            let span = 1i64 << (53 - q);
            let off = (next() % (4 * span as u64 + 1)) as i64 - 2 * span;
            let base = (((e + 1023) as u64) << 52) | sig | center;
            let bits = (base as i64 + off) as u64 | ((r >> 63) << 63);
            let y = f64::from_bits(bits);
            let err = f64::from_bits(((1023 - q) as u64) << 52);
            let (v, ok) = round_if_certain(dev, y, err);
            total += 1;
            if !ok {
                continue;
            }
            sure += 1;
            let d = y.abs() * err;
            for end in [y - d, y, y + d] {
                let want = match dev {
                    Dev::F32 => <f32 as Format>::round(end).to_bits(),
                    Dev::Bf16 => <bf16 as Format>::round(end).to_bits() as u32,
                    Dev::F16 => <f16 as Format>::round(end).to_bits() as u32,
                };
                assert_eq!(
                    want, v,
                    "{dev:?}: y = {y:e} ({bits:#x}), err = 2^-{q}, end {end:e}"
                );
            }
        }
        // About half the offsets reach past the midpoint; the rest must be settled.
        assert!(
            sure * 4 > total && sure < total,
            "{dev:?}: settled {sure} of {total}"
        );
    }
}
