//! Rotary tables against the oracle: every inverse frequency (the power by MPFR, the f32
//! steps of transformers transcribed independently here) and every cos/sin entry of the
//! f32 tables for positions 0..131072 (hybrid check: f64 libm with a margin, MPFR near a
//! rounding boundary), bf16/f16 tables on a sample, and how far candle-transformers' way of
//! building the tables is from the oracle.
//!
//! `cargo test --release --test rope_tables -- --nocapture`
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::{DType, Device, Tensor};
use candle_repro::math::Format;
use candle_repro::rope::{RopeConfig, RopeScaling, RopeTables, rope_freqs};
use half::{bf16, f16};
use mpfr_oracle::rope as oracle;

const MAX_POS: usize = 131072;

fn configs() -> Vec<(&'static str, RopeConfig)> {
    let mut v = Vec::new();
    for d in [64usize, 128] {
        v.push(("llama2", RopeConfig::new(10000.0, d)));
        v.push(("llama3.1", RopeConfig::llama31(d)));
        // Qwen2.5-style YaRN: theta 1e6, factor 4, original context 32768.
        v.push(("yarn", RopeConfig::yarn(1_000_000.0, d, 4.0, 32768)));
        // DeepSeek-style YaRN with mscale / mscale_all_dim and no truncation.
        v.push((
            "yarn-mscale",
            RopeConfig {
                theta: 10000.0,
                rotary_dim: d,
                scaling: RopeScaling::Yarn {
                    factor: 40.0,
                    original_max_position_embeddings: 4096,
                    beta_fast: 32.0,
                    beta_slow: 1.0,
                    mscale: Some(1.0),
                    mscale_all_dim: Some(0.707),
                    attention_factor: None,
                    truncate: false,
                },
            },
        ));
        v.push((
            "linear",
            RopeConfig {
                theta: 10000.0,
                rotary_dim: d,
                scaling: RopeScaling::Linear { factor: 4.0 },
            },
        ));
    }
    v
}

/// transformers' modeling_rope_utils, transcribed: f32 tensor ops, Python scalars cast to
/// f32, `s / t` = reciprocal(t) * s; the power from MPFR, host scalars with f64 libm.
fn reference_freqs(cfg: &RopeConfig) -> (Vec<f32>, f32) {
    let dim = cfg.rotary_dim;
    let pow: Vec<f32> = (0..dim / 2)
        .map(|i| oracle::pow_f32(cfg.theta, (2 * i) as f32 / dim as f32))
        .collect();
    let default: Vec<f32> = pow.iter().map(|p| 1.0 / p).collect();
    match &cfg.scaling {
        RopeScaling::None => (default, 1.0),
        RopeScaling::Linear { factor } => {
            (default.iter().map(|f| f / *factor as f32).collect(), 1.0)
        }
        RopeScaling::Llama3 {
            factor,
            low_freq_factor,
            high_freq_factor,
            original_max_position_embeddings: old,
        } => {
            let low_wl = (*old as f64 / low_freq_factor) as f32;
            let high_wl = (*old as f64 / high_freq_factor) as f32;
            let out = default
                .iter()
                .map(|&inv| {
                    let wavelen = (1.0 / inv) * (2.0 * std::f64::consts::PI) as f32;
                    let l = if wavelen > low_wl {
                        inv / *factor as f32
                    } else {
                        inv
                    };
                    let sm = ((1.0 / wavelen) * *old as f32 - *low_freq_factor as f32)
                        / (high_freq_factor - low_freq_factor) as f32;
                    let smoothed = (1.0 - sm) * l / *factor as f32 + sm * l;
                    #[allow(clippy::neg_cmp_op_on_partial_ord)]
                    let medium = !(wavelen < high_wl) && !(wavelen > low_wl);
                    if medium { smoothed } else { l }
                })
                .collect();
            (out, 1.0)
        }
        RopeScaling::Yarn {
            factor,
            original_max_position_embeddings: maxpos,
            beta_fast,
            beta_slow,
            mscale,
            mscale_all_dim,
            attention_factor,
            truncate,
        } => {
            let gm = |s: f64, m: f64| {
                if s <= 1.0 {
                    1.0
                } else {
                    0.1 * m * s.ln() + 1.0
                }
            };
            let af = match (attention_factor, mscale, mscale_all_dim) {
                (Some(a), _, _) => *a,
                (None, Some(m), Some(ma)) if *m != 0.0 && *ma != 0.0 => {
                    gm(*factor, *m) / gm(*factor, *ma)
                }
                _ => gm(*factor, 1.0),
            };
            let base = cfg.theta as f64;
            let cd = |r: f64| {
                (dim as f64 * (*maxpos as f64 / (r * 2.0 * std::f64::consts::PI)).ln())
                    / (2.0 * base.ln())
            };
            let (mut lo, mut hi) = (cd(*beta_fast), cd(*beta_slow));
            if *truncate {
                lo = lo.floor();
                hi = hi.ceil();
            }
            let lo = lo.max(0.0);
            let mut hi = hi.min((dim - 1) as f64);
            if lo == hi {
                hi += 0.001;
            }
            let out = (0..dim / 2)
                .map(|i| {
                    let extrap = 1.0 / pow[i];
                    let interp = 1.0 / (*factor as f32 * pow[i]);
                    let ramp = ((i as f32 - lo as f32) / (hi - lo) as f32).clamp(0.0, 1.0);
                    let ef = 1.0 - ramp;
                    interp * (1.0 - ef) + extrap * ef
                })
                .collect();
            (out, af as f32)
        }
    }
}

#[test]
fn inv_freq_matches_reference() {
    for (name, cfg) in configs() {
        let ours = rope_freqs(&cfg).unwrap();
        let (inv, af) = reference_freqs(&cfg);
        assert_eq!(ours.attention_factor.to_bits(), af.to_bits(), "{name} af");
        for (i, (a, b)) in ours.inv_freq.iter().zip(&inv).enumerate() {
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{name} d={} i={i}",
                cfg.rotary_dim
            );
        }
    }
}

#[test]
fn pow_matches_mpfr() {
    let mut n = 0;
    let mut check = |theta: f32, e: f32| {
        let ours = candle_repro::rope::pow_f32(theta, e).unwrap();
        assert_eq!(
            ours.to_bits(),
            oracle::pow_f32(theta, e).to_bits(),
            "{theta}^{e}"
        );
        n += 1;
    };
    // every exponent 2i/d of the tables, for many thetas
    for theta in [
        10000.0f32,
        500000.0,
        1_000_000.0,
        5_000_000.0,
        1e4 + 1.0,
        12345.678,
        2.0,
        1e8,
        1.5,
    ] {
        for d in [16usize, 32, 64, 80, 96, 128, 256] {
            for i in 0..d / 2 {
                let e = (2 * i) as f32 / d as f32;
                check(theta, e);
            }
        }
    }
    // and a strided sweep of exponents in [0, 1]
    for k in 0..20000u32 {
        let e = f32::from_bits(0x3F80_0000 - k * 53_239);
        for theta in [10000.0f32, 500000.0] {
            check(theta, e);
        }
    }
    // the 12 powers nearest an f32 midpoint (2^-46.2 to 2^-41.2 relative) of every
    // exponent f32(2i)/f32(d), even d <= 1024, for 13 thetas (tools/pow_hardest.py):
    // 2^44 times the test bound 2^-90 away, so pow_f32's bound cannot matter for them
    for (theta, e) in [
        (0x4B18_9680u32, 0x3F17_3DBFu32),
        (0x4640_E6B6, 0x3F44_093A),
        (0x4743_5000, 0x3F49_841B),
        (0x461C_4000, 0x3D2F_BC69),
        (0x47C3_5000, 0x3E1D_F186),
        (0x4CBE_BC20, 0x3F2D_008A),
        (0x4974_2400, 0x3EED_514B),
        (0x4A98_9680, 0x3F6D_5CA4),
        (0x4640_E6B6, 0x3E52_E5F5),
        (0x461C_4000, 0x3F39_5810),
        (0x4CBE_BC20, 0x3EB9_5810),
        (0x461C_4000, 0x3F4C_A9C1),
    ] {
        let (theta, e) = (f32::from_bits(theta), f32::from_bits(e));
        check(theta, e);
    }
    println!("pow: {n} powers equal to MPFR");
}

/// The correctly rounded value of v = f(a) * af in `F`, decided by the f64 approximation
/// `y` when it is far from a rounding boundary (relative margin 2^-44, f64 libm is within
/// 2^-51), else by MPFR.
fn expected<F: Format>(y: f64, a: f32, af: f32, cos: bool, fmt: mpfr_oracle::Format) -> (F, bool) {
    let m = y.abs() * f64::from_bits(0x3D30_0000_0000_0000); // 2^-44
    let lo = F::round(y - m);
    let hi = F::round(y + m);
    if lo.bits() == hi.bits() && y != 0.0 {
        return (lo, false);
    }
    let (c, s) = oracle::cos_sin_scaled(a, af, fmt);
    (F::round(if cos { c } else { s }), true)
}

fn check_table<F: Format + candle_core::WithDType>(
    name: &str,
    cfg: &RopeConfig,
    dtype: DType,
    fmt: mpfr_oracle::Format,
    pos_step: usize,
) -> (usize, usize) {
    let t = RopeTables::new(cfg, MAX_POS, dtype, &Device::Cpu).unwrap();
    let cos = t.cos.flatten_all().unwrap().to_vec1::<F>().unwrap();
    let sin = t.sin.flatten_all().unwrap().to_vec1::<F>().unwrap();
    let (inv, af) = reference_freqs(cfg);
    let h = inv.len();
    let (mut checked, mut mpfr_calls) = (0, 0);
    for p in (0..MAX_POS).step_by(pos_step) {
        for i in 0..h {
            let a = inv[i] * p as f32;
            let ad = a as f64;
            for (is_cos, got, y) in [
                (true, cos[p * h + i], ad.cos() * af as f64),
                (false, sin[p * h + i], ad.sin() * af as f64),
            ] {
                let (want, used) = expected::<F>(y, a, af, is_cos, fmt);
                mpfr_calls += used as usize;
                assert_eq!(
                    got.bits(),
                    want.bits(),
                    "{name} d={} {} pos {p} i {i} angle {a:e}",
                    cfg.rotary_dim,
                    if is_cos { "cos" } else { "sin" }
                );
                checked += 1;
            }
        }
    }
    (checked, mpfr_calls)
}

#[test]
fn f32_tables_every_entry() {
    for (name, cfg) in configs() {
        let (n, m) = check_table::<f32>(name, &cfg, DType::F32, mpfr_oracle::F32, 1);
        println!(
            "{name} d={}: {n} f32 entries equal to the oracle ({m} decided by MPFR)",
            cfg.rotary_dim
        );
    }
}

#[test]
fn bf16_f16_tables_sample() {
    for (name, cfg) in configs() {
        let (n, m) = check_table::<bf16>(name, &cfg, DType::BF16, mpfr_oracle::BF16, 13);
        let (n2, m2) = check_table::<f16>(name, &cfg, DType::F16, mpfr_oracle::F16, 13);
        println!(
            "{name} d={}: {n} bf16 ({m} by MPFR), {n2} f16 ({m2} by MPFR) entries equal",
            cfg.rotary_dim
        );
    }
}

#[test]
fn large_positions_and_fused_rows_match_mpfr() {
    // Angles far beyond 2^17 radians: exact reduction. Checked directly against MPFR.
    let freqs = rope_freqs(&RopeConfig::new(10000.0, 128)).unwrap();
    for p in [131071u64, 1_000_000, 1 << 24, 123_456_789, u32::MAX as u64] {
        for (i, &f) in freqs.inv_freq.iter().enumerate() {
            let a = f * p as f32;
            let (c, s): (f32, f32) = candle_repro::rope::cos_sin_entry(a, 1.0);
            let (wc, ws) = oracle::cos_sin_scaled(a, 1.0, mpfr_oracle::F32);
            assert_eq!(c.to_bits(), (wc as f32).to_bits(), "cos pos {p} i {i}");
            assert_eq!(s.to_bits(), (ws as f32).to_bits(), "sin pos {p} i {i}");
        }
    }
}

fn ulp_diff(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let b = x.to_bits() as i64;
        if b < 0x8000_0000 { b } else { 0x8000_0000 - b }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// candle-transformers' llama.rs way: f32 host powf for inv_freq, f32 matmul of positions by
/// inv_freq, `Tensor::cos` / `Tensor::sin` on the device (here the CPU).
fn stock_tables(cfg: &RopeConfig, max_pos: usize) -> (Vec<f32>, Vec<f32>) {
    let d = cfg.rotary_dim;
    let default: Vec<f32> = (0..d)
        .step_by(2)
        .map(|i| 1f32 / cfg.theta.powf(i as f32 / d as f32))
        .collect();
    let inv: Vec<f32> = match &cfg.scaling {
        RopeScaling::Llama3 {
            factor,
            low_freq_factor,
            high_freq_factor,
            original_max_position_embeddings: old,
        } => {
            let (factor, low, high) = (
                *factor as f32,
                *low_freq_factor as f32,
                *high_freq_factor as f32,
            );
            let low_wl = *old as f32 / low;
            let high_wl = *old as f32 / high;
            default
                .into_iter()
                .map(|freq| {
                    let wavelen = 2. * std::f32::consts::PI / freq;
                    if wavelen < high_wl {
                        freq
                    } else if wavelen > low_wl {
                        freq / factor
                    } else {
                        let smooth = (*old as f32 / wavelen - low) / (high - low);
                        (1. - smooth) * freq / factor + smooth * freq
                    }
                })
                .collect()
        }
        _ => default,
    };
    let dev = Device::Cpu;
    let h = inv.len();
    let theta = Tensor::new(inv, &dev).unwrap().reshape((1, h)).unwrap();
    let idx = Tensor::arange(0, max_pos as u32, &dev)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap()
        .reshape((max_pos, 1))
        .unwrap()
        .matmul(&theta)
        .unwrap();
    (
        idx.cos().unwrap().flatten_all().unwrap().to_vec1().unwrap(),
        idx.sin().unwrap().flatten_all().unwrap().to_vec1().unwrap(),
    )
}

#[test]
fn report_stock_candle_transformers_tables_vs_oracle() {
    for (name, cfg) in configs() {
        if !matches!(cfg.scaling, RopeScaling::None | RopeScaling::Llama3 { .. }) {
            continue;
        }
        let ours = RopeTables::new(&cfg, MAX_POS, DType::F32, &Device::Cpu).unwrap();
        let oc = ours.cos.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let os = ours.sin.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let (sc, ss) = stock_tables(&cfg, MAX_POS);
        let (mut maxc, mut maxs, mut diff) = (0u64, 0u64, 0usize);
        for k in 0..oc.len() {
            let dc = ulp_diff(oc[k], sc[k]);
            let ds = ulp_diff(os[k], ss[k]);
            maxc = maxc.max(dc);
            maxs = maxs.max(ds);
            diff += (dc != 0) as usize + (ds != 0) as usize;
        }
        println!(
            "candle-transformers way, {name} d={}: {} of {} entries differ from the oracle; max {} ULP (cos), {} ULP (sin)",
            cfg.rotary_dim,
            diff,
            2 * oc.len(),
            maxc,
            maxs
        );
    }
}
