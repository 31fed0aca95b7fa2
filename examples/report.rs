//! The crate at work: every op on a test tensor, per dtype and device, with
//! * a hash of the output bits, compared across the devices of the run (CPU, and CUDA with
//!   `--features cuda` on a GPU; on an H200 every hash matched, 2026-11-26),
//! * the max error against MPFR on a sample, ours and stock candle's, in ulps of the dtype,
//! * the speed ratio against stock candle on a 16M-element f32 tensor (same run).
//!
//! `cargo run --release --example report` (add `--features cuda` on a CUDA machine;
//! `-- matmul` for the matmul section alone).

use candle_core::{DType, Device, Tensor};
use candle_repro::UnaryFn;
use mpfr_oracle::Func;
use std::time::Instant;

/// A deterministic spread of arguments: mostly [-8, 8), one in 16 any finite f32.
fn input(n: usize) -> Vec<f32> {
    spread(n, true)
}

/// Arguments in [-8, 8) only: the typical range of activations, for the speed figures.
fn typical_input(n: usize) -> Vec<f32> {
    spread(n, false)
}

fn spread(n: usize, wide: bool) -> Vec<f32> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            if wide && i % 16 == 0 {
                // any finite f32 bit pattern
                let v = f32::from_bits((s >> 32) as u32);
                if v.is_finite() { v } else { 1.5 }
            } else {
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0
            }
        })
        .collect()
}

/// FNV-1a over the output's bits (as little-endian bytes of each element).
fn hash_bits(t: &Tensor) -> u64 {
    let bytes: Vec<u8> = match t.dtype() {
        DType::F32 => t
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect(),
        DType::BF16 => t
            .flatten_all()
            .unwrap()
            .to_vec1::<half::bf16>()
            .unwrap()
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect(),
        DType::F16 => t
            .flatten_all()
            .unwrap()
            .to_vec1::<half::f16>()
            .unwrap()
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect(),
        _ => unreachable!(),
    };
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn oracle_func(f: UnaryFn) -> Func {
    match f {
        UnaryFn::Exp => Func::Exp,
        UnaryFn::Expm1 => Func::Expm1,
        UnaryFn::Log => Func::Log,
        UnaryFn::Log1p => Func::Log1p,
        UnaryFn::Log10 => Func::Log10,
        UnaryFn::Sin => Func::Sin,
        UnaryFn::Cos => Func::Cos,
        UnaryFn::Tanh => Func::Tanh,
        UnaryFn::Sigmoid => Func::Sigmoid,
        UnaryFn::Silu => Func::Silu,
        UnaryFn::Softplus => Func::Softplus,
        UnaryFn::Erf => Func::Erf,
        UnaryFn::Gelu => Func::Gelu,
        UnaryFn::GeluErf => Func::GeluErf,
    }
}

fn stock(f: UnaryFn, x: &Tensor) -> Tensor {
    match f {
        UnaryFn::Exp => x.exp(),
        // candle has no expm1 or log1p: the formulas models write.
        UnaryFn::Expm1 => x.exp().unwrap() - 1.0,
        UnaryFn::Log => x.log(),
        UnaryFn::Log1p => (x + 1.0).unwrap().log(),
        // candle has no log10: ln x / ln 10, as models write it.
        UnaryFn::Log10 => x.log().unwrap() * std::f64::consts::LOG10_E,
        UnaryFn::Sin => x.sin(),
        UnaryFn::Cos => x.cos(),
        UnaryFn::Tanh => x.tanh(),
        UnaryFn::Sigmoid => candle_nn::ops::sigmoid(x),
        UnaryFn::Silu => x.silu(),
        UnaryFn::Softplus => (x.exp().unwrap() + 1.0).unwrap().log(),
        UnaryFn::Erf => x.erf(),
        UnaryFn::Gelu => x.gelu(),
        UnaryFn::GeluErf => x.gelu_erf(),
    }
    .unwrap()
}

/// ulp of the dtype at |y| (the gap above |y|; the smallest subnormal below the normals).
fn ulp(dtype: DType, y: f64) -> f64 {
    let (p, emin) = match dtype {
        DType::F32 => (24, -126),
        DType::BF16 => (8, -126),
        _ => (11, -14),
    };
    let e = if y == 0.0 {
        emin
    } else {
        (y.abs().log2().floor() as i32).max(emin)
    };
    2f64.powi(e - p + 1)
}

/// Max |y - f(x)| / ulp(y) over the finite outputs (NaN when an output that should be
/// finite is not, or the other way round).
fn max_ulp_error(f: UnaryFn, dtype: DType, x: &[f32], y: &Tensor) -> f64 {
    let y = y.to_dtype(DType::F32).unwrap().to_vec1::<f32>().unwrap();
    let mut worst = 0f64;
    for (&xi, &yi) in x.iter().zip(&y) {
        let exact = mpfr_oracle::approx_f64(oracle_func(f), xi as f64);
        if exact.is_nan() || yi.is_nan() {
            if exact.is_nan() != yi.is_nan() {
                return f64::NAN;
            }
            continue;
        }
        let fmax = match dtype {
            DType::F32 => f32::MAX as f64,
            DType::BF16 => half::bf16::MAX.to_f64(),
            _ => 65504.0,
        };
        if exact.abs() > fmax || yi.is_infinite() {
            continue; // overflow: the correctly rounded result is infinity
        }
        worst = worst.max((yi as f64 - exact).abs() / ulp(dtype, yi as f64));
    }
    worst
}

/// An error in ulps for the table: NaN marks a NaN where the result is a number (or the
/// other way round).
fn show_err(e: f64) -> String {
    if e.is_nan() {
        "wrong NaN".to_string()
    } else if e >= 1e4 {
        format!("{e:.1e}")
    } else {
        format!("{e:.3}")
    }
}

fn time_once<R>(f: &mut impl FnMut() -> R) -> f64 {
    let t = Instant::now();
    std::hint::black_box(f());
    t.elapsed().as_secs_f64()
}

fn best_of<R>(runs: usize, mut f: impl FnMut() -> R) -> f64 {
    (0..runs)
        .map(|_| time_once(&mut f))
        .fold(f64::INFINITY, f64::min)
}

/// Best times of `ours` and `stock`, run in alternation: a burst of other work on a shared
/// machine then slows both sides instead of one, and the ratio moves less.
fn best_of_pair<R, S>(
    runs: usize,
    mut ours: impl FnMut() -> R,
    mut stock: impl FnMut() -> S,
) -> (f64, f64) {
    (0..runs).fold((f64::INFINITY, f64::INFINITY), |(a, b), _| {
        (a.min(time_once(&mut ours)), b.min(time_once(&mut stock)))
    })
}

fn devices() -> Vec<(String, Device)> {
    let cpu = ("cpu".to_string(), Device::Cpu);
    #[cfg(feature = "cuda")]
    match Device::new_cuda(0) {
        Ok(dev) => return vec![cpu, ("cuda".to_string(), dev)],
        Err(e) => println!("(no CUDA device: {e})"),
    }
    vec![cpu]
}

fn main() {
    // `report matmul` runs only the matmul section.
    if std::env::args().nth(1).as_deref() == Some("matmul") {
        let mut mismatches = 0;
        matmul_report(&devices(), &mut mismatches);
        std::process::exit(if mismatches == 0 { 0 } else { 1 });
    }
    let n = 1 << 20;
    let xs = input(n);
    let sample_len = 4096;
    let devs = devices();
    println!(
        "candle-repro report: {} elements per op, vector path {:?}, {} rayon threads",
        n,
        candle_repro::math::VectorPath::detect(),
        rayon::current_num_threads()
    );
    println!("max error: vs MPFR on {sample_len} elements, in ulps of the output dtype");
    let names: Vec<&str> = devs.iter().map(|(name, _)| name.as_str()).collect();
    println!(
        "hashes from the devices of this run: {}{}",
        names.join(", "),
        if devs.len() == 1 {
            " (CUDA not measured: no GPU in this run)"
        } else {
            ""
        }
    );
    println!();
    println!(
        "{:<9} {:<5} {:<18} {:>13} {:>13}",
        "op", "dtype", "hash (run devices)", "err ours", "err stock"
    );
    let mut mismatches = 0;
    for f in UnaryFn::ALL {
        for dtype in [DType::F32, DType::BF16, DType::F16] {
            let mut hashes = vec![];
            let mut ours_cpu = None;
            for (name, dev) in &devs {
                let x = Tensor::from_vec(xs.clone(), n, dev)
                    .unwrap()
                    .to_dtype(dtype)
                    .unwrap();
                let y = candle_repro::unary(&x, f).unwrap();
                hashes.push((name.clone(), hash_bits(&y)));
                if name == "cpu" {
                    ours_cpu = Some((x, y));
                }
            }
            let (x, y) = ours_cpu.unwrap();
            let xs_exact: Vec<f32> = x
                .narrow(0, 0, sample_len)
                .unwrap()
                .to_dtype(DType::F32)
                .unwrap()
                .to_vec1()
                .unwrap();
            let err_ours = max_ulp_error(f, dtype, &xs_exact, &y.narrow(0, 0, sample_len).unwrap());
            let stock_y = stock(f, &x.narrow(0, 0, sample_len).unwrap());
            let err_stock = max_ulp_error(f, dtype, &xs_exact, &stock_y);
            let all_same = hashes.iter().all(|(_, h)| *h == hashes[0].1);
            if !all_same {
                mismatches += 1;
            }
            let hash_text = if all_same {
                format!("{:016x}", hashes[0].1)
            } else {
                hashes
                    .iter()
                    .map(|(d, h)| format!("{d}:{h:016x}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            println!(
                "{:<9} {:<5} {:<18} {:>13} {:>13}",
                f.name(),
                format!("{dtype:?}").to_lowercase(),
                hash_text,
                show_err(err_ours),
                show_err(err_stock)
            );
        }
    }
    println!();
    softmax_report(&devs, &mut mismatches);
    println!();
    rope_report(&devs, &mut mismatches);
    println!();
    fft_report();
    println!();
    matmul_report(&devs, &mut mismatches);
    println!();
    println!(
        "speed, 16M-element f32 tensor of arguments in [-8, 8) on the CPU, best of 9 (same run):"
    );
    println!(
        "{:<9} {:>12} {:>12} {:>8}",
        "op", "ours ms", "stock ms", "ratio"
    );
    let big = Tensor::from_vec(typical_input(1 << 24), 1 << 24, &Device::Cpu).unwrap();
    let big_pos = big.abs().unwrap();
    for f in UnaryFn::ALL {
        let arg = if matches!(f, UnaryFn::Log | UnaryFn::Log1p | UnaryFn::Log10) {
            &big_pos
        } else {
            &big
        };
        let (ours, theirs) =
            best_of_pair(9, || candle_repro::unary(arg, f).unwrap(), || stock(f, arg));
        println!(
            "{:<9} {:>12.2} {:>12.2} {:>7.2}x",
            f.name(),
            ours * 1e3,
            theirs * 1e3,
            theirs / ours
        );
    }
    // The memory floor both sides pay: a stock op with next to no arithmetic that also
    // reads the input and writes a fresh output.
    let floor = best_of(9, || big.neg().unwrap());
    println!(
        "{:<9} {:>12} {:>12.2}   (stock x.neg(): the memory floor of a 16M-element op)",
        "floor",
        "",
        floor * 1e3
    );
    println!();
    println!("softmax_last_dim, 4096x4096 logits in [-8, 8) on the CPU, best of 3 (same run):");
    println!(
        "{:<12} {:<5} {:>10} {:>10} {:>8}",
        "op", "dtype", "ours ms", "stock ms", "ratio"
    );
    let logits = Tensor::from_vec(typical_input(1 << 24), (4096, 4096), &Device::Cpu).unwrap();
    for dtype in [DType::F32, DType::BF16] {
        let x = logits.to_dtype(dtype).unwrap();
        let (ours, theirs) = best_of_pair(
            3,
            || candle_repro::softmax_last_dim(&x).unwrap(),
            || candle_nn::ops::softmax_last_dim(&x).unwrap(),
        );
        println!(
            "{:<12} {:<5} {:>10.1} {:>10.1} {:>7.2}x",
            "softmax",
            format!("{dtype:?}").to_lowercase(),
            ours * 1e3,
            theirs * 1e3,
            theirs / ours
        );
    }
    println!();
    println!("rope, (1, 32, 2048, 128) on the CPU, best of 5 (same run):");
    println!(
        "{:<12} {:<5} {:>10} {:>10} {:>8}",
        "op", "dtype", "ours ms", "stock ms", "ratio"
    );
    let cfg = candle_repro::rope::RopeConfig::new(10000.0, 128);
    let q = Tensor::from_vec(
        typical_input(32 * 2048 * 128),
        (1, 32, 2048, 128),
        &Device::Cpu,
    )
    .unwrap();
    for dtype in [DType::F32, DType::BF16] {
        let t = candle_repro::rope::RopeTables::new(&cfg, 2048, dtype, &Device::Cpu).unwrap();
        let x = q.to_dtype(dtype).unwrap();
        let (ours, theirs) = best_of_pair(
            5,
            || candle_repro::rope::rope(&x, &t.cos, &t.sin).unwrap(),
            || candle_nn::rotary_emb::rope(&x, &t.cos, &t.sin).unwrap(),
        );
        println!(
            "{:<12} {:<5} {:>10.2} {:>10.2} {:>7.2}x",
            "rope",
            format!("{dtype:?}").to_lowercase(),
            ours * 1e3,
            theirs * 1e3,
            theirs / ours
        );
    }
    if devs.len() > 1 {
        println!();
        if mismatches == 0 {
            println!("CUDA and CPU outputs: identical bits for every op and dtype");
        } else {
            println!("CUDA and CPU outputs differ for {mismatches} op/dtype pairs");
            std::process::exit(1);
        }
    }
}

/// Softmax over rows of a (64, 1000) logits tensor: output hashes per dtype and device, and
/// the max error in ulps against a reference built from MPFR's correctly rounded f64 exp
/// and an f64 compensated sum (accurate to about 2^-50, far below an ulp of any dtype).
fn softmax_report(devs: &[(String, Device)], mismatches: &mut usize) {
    let (rows, cols) = (64, 1000);
    let mut logits = input(rows * cols);
    for v in logits.iter_mut() {
        *v = (*v).clamp(-60.0, 60.0);
    }
    println!(
        "{:<12} {:<5} {:<18} {:>13} {:>13}",
        "op", "dtype", "hash (run devices)", "err ours", "err stock"
    );
    for dtype in [DType::F32, DType::BF16, DType::F16] {
        let mut hashes = vec![];
        let mut cpu_out = None;
        for (name, dev) in devs {
            let x = Tensor::from_vec(logits.clone(), (rows, cols), dev)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let y = candle_repro::softmax_last_dim(&x).unwrap();
            hashes.push(hash_bits(&y));
            if name == "cpu" {
                cpu_out = Some((x, y));
            }
        }
        let (x, y) = cpu_out.unwrap();
        let xs: Vec<f32> = x
            .to_dtype(DType::F32)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        let reference: Vec<f64> = xs
            .chunks(cols)
            .flat_map(|row| {
                let m = row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) as f64;
                let e: Vec<f64> = row
                    .iter()
                    .map(|&v| mpfr_oracle::approx_f64(Func::Exp, v as f64 - m))
                    .collect();
                let (mut sum, mut comp) = (0f64, 0f64);
                for &t in &e {
                    let s2 = sum + t;
                    comp += if sum.abs() >= t.abs() {
                        (sum - s2) + t
                    } else {
                        (t - s2) + sum
                    };
                    sum = s2;
                }
                let total = sum + comp;
                e.into_iter().map(move |t| t / total)
            })
            .collect();
        let err = |t: &Tensor| -> f64 {
            let v: Vec<f32> = t
                .to_dtype(DType::F32)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap();
            v.iter()
                .zip(&reference)
                .map(|(&a, &r)| (a as f64 - r).abs() / ulp(dtype, a as f64))
                .fold(0.0, f64::max)
        };
        let stock_y = candle_nn::ops::softmax_last_dim(&x).unwrap();
        let same = hashes.iter().all(|h| *h == hashes[0]);
        if !same {
            *mismatches += 1;
        }
        println!(
            "{:<12} {:<5} {:<18} {:>13} {:>13}",
            "softmax",
            format!("{dtype:?}").to_lowercase(),
            if same {
                format!("{:016x}", hashes[0])
            } else {
                format!("{hashes:x?}")
            },
            show_err(err(&y)),
            show_err(err(&stock_y))
        );
    }
}

fn oracle_format(dtype: DType) -> mpfr_oracle::Format {
    match dtype {
        DType::F32 => mpfr_oracle::F32,
        DType::BF16 => mpfr_oracle::BF16,
        _ => mpfr_oracle::F16,
    }
}

/// Distance in ulps of the dtype between a result and the correctly rounded value.
fn ulps_apart(dtype: DType, a: f64, cr: f64) -> f64 {
    if a == cr {
        0.0
    } else {
        (a - cr).abs() / ulp(dtype, cr)
    }
}

/// RoPE (Llama-2 theta = 10000, head size 128): hashes of the cos/sin tables and of
/// `rope` per dtype and device, and the max distance in ulps from the correctly rounded
/// value (MPFR), ours and stock's: candle-transformers' tables (host powf, `Tensor::cos`)
/// and `candle_nn::rotary_emb::rope`.
fn rope_report(devs: &[(String, Device)], mismatches: &mut usize) {
    use candle_repro::rope::{RopeConfig, RopeTables};
    let (theta, d, t_len, heads) = (10000f32, 128usize, 256usize, 8usize);
    let cfg = RopeConfig::new(theta, d);
    println!(
        "{:<12} {:<5} {:<18} {:>13} {:>13}",
        "op", "dtype", "hash (run devices)", "ulps from CR", "stock"
    );
    let xs_f32 = typical_input(heads * t_len * d);
    for dtype in [DType::F32, DType::BF16, DType::F16] {
        let fmt = oracle_format(dtype);
        let mut table_hashes = vec![];
        let mut rope_hashes = vec![];
        let mut cpu = None;
        for (name, dev) in devs {
            let tables = RopeTables::new(&cfg, t_len, dtype, dev).unwrap();
            let x = Tensor::from_vec(xs_f32.clone(), (1, heads, t_len, d), dev)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let y = candle_repro::rope::rope(&x, &tables.cos, &tables.sin).unwrap();
            table_hashes.push(hash_bits(
                &Tensor::cat(&[&tables.cos, &tables.sin], 0).unwrap(),
            ));
            rope_hashes.push(hash_bits(&y));
            if name == "cpu" {
                cpu = Some((tables, x, y));
            }
        }
        let (tables, x, y) = cpu.unwrap();
        let to_f32 = |t: &Tensor| -> Vec<f32> {
            t.to_dtype(DType::F32)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap()
        };
        // tables: ours against MPFR, and candle-transformers' way
        let inv: Vec<f32> = (0..d / 2)
            .map(|i| 1.0 / theta.powf((2 * i) as f32 / d as f32))
            .collect();
        let angles: Vec<f32> = (0..t_len)
            .flat_map(|p| inv.iter().map(move |&f| p as f32 * f))
            .collect();
        let stock_angles = Tensor::from_vec(angles, (t_len, d / 2), &Device::Cpu).unwrap();
        let stock_cos = to_f32(&stock_angles.cos().unwrap().to_dtype(dtype).unwrap());
        let ours_cos = to_f32(&tables.cos);
        let (mut worst_ours, mut worst_stock) = (0f64, 0f64);
        for p in 0..t_len {
            for i in 0..d / 2 {
                let a = candle_repro::rope::tables::angle(tables.freqs.inv_freq[i], p as u64);
                let (cr, _) = mpfr_oracle::rope::cos_sin_scaled(a, 1.0, fmt);
                worst_ours = worst_ours.max(ulps_apart(dtype, ours_cos[p * d / 2 + i] as f64, cr));
                let stock_a = p as f32 * inv[i];
                let (stock_cr, _) = mpfr_oracle::rope::cos_sin_scaled(stock_a, 1.0, fmt);
                // the stock table's own angle: how far its cos is from that angle's CR cos
                worst_stock =
                    worst_stock.max(ulps_apart(dtype, stock_cos[p * d / 2 + i] as f64, stock_cr));
            }
        }
        let same_t = table_hashes.iter().all(|h| *h == table_hashes[0]);
        let same_r = rope_hashes.iter().all(|h| *h == rope_hashes[0]);
        *mismatches += (!same_t) as usize + (!same_r) as usize;
        let dt = format!("{dtype:?}").to_lowercase();
        println!(
            "{:<12} {:<5} {:<18} {:>13} {:>13}",
            "rope tables",
            dt,
            if same_t {
                format!("{:016x}", table_hashes[0])
            } else {
                format!("{table_hashes:x?}")
            },
            show_err(worst_ours),
            show_err(worst_stock)
        );
        // rope: every output of head 0 against the exact rotation rounded once
        let stock_y = to_f32(&candle_nn::rotary_emb::rope(&x, &tables.cos, &tables.sin).unwrap());
        let (xv, yv, cv, sv) = (to_f32(&x), to_f32(&y), ours_cos, to_f32(&tables.sin));
        let (mut worst_ours, mut worst_stock) = (0f64, 0f64);
        let half = d / 2;
        for p in 0..t_len {
            for i in 0..half {
                let (x1, x2) = (xv[p * d + i] as f64, xv[p * d + i + half] as f64);
                let (c, s) = (cv[p * half + i] as f64, sv[p * half + i] as f64);
                let want = [
                    (p * d + i, mpfr_oracle::rope::dot2(x1, c, -x2, s, fmt)),
                    (p * d + i + half, mpfr_oracle::rope::dot2(x1, s, x2, c, fmt)),
                ];
                for (k, cr) in want {
                    worst_ours = worst_ours.max(ulps_apart(dtype, yv[k] as f64, cr));
                    worst_stock = worst_stock.max(ulps_apart(dtype, stock_y[k] as f64, cr));
                }
            }
        }
        println!(
            "{:<12} {:<5} {:<18} {:>13} {:>13}",
            "rope",
            dt,
            if same_r {
                format!("{:016x}", rope_hashes[0])
            } else {
                format!("{rope_hashes:x?}")
            },
            show_err(worst_ours),
            show_err(worst_stock)
        );
    }
}

/// FFT (candle_repro::fft::FftPlan, Precision::F32) on the CPU: the output hash, the
/// relative L2 error against rustfft in f64 (ours and rustfft f32's), and the time against
/// rustfft f32 on one thread, best of 5 (same run).
fn fft_report() {
    use candle_repro::fft::{FftPlan, Precision};
    use num_complex::{Complex32, Complex64};
    use rustfft::FftPlanner;
    println!("fft (complex, forward, f32 in [-8, 8)), one thread, best of 5 (same run):");
    println!(
        "{:<16} {:<18} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "case", "hash", "err ours", "err stock", "ours us", "stock us", "ours/stock"
    );
    for (n, rows) in [(1024usize, 4096usize), (65536, 1), (262144, 1)] {
        let xs: Vec<Complex32> = typical_input(2 * n * rows)
            .chunks_exact(2)
            .map(|p| Complex32::new(p[0], p[1]))
            .collect();
        let plan = FftPlan::new(n, Precision::F32).unwrap();
        let mut ours = xs.clone();
        plan.forward(&mut ours).unwrap();
        let hash = ours
            .iter()
            .flat_map(|z| [z.re.to_bits(), z.im.to_bits()])
            .flat_map(|b| b.to_le_bytes())
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
            });
        let stock = FftPlanner::<f32>::new().plan_fft_forward(n);
        let mut theirs = xs.clone();
        stock.process(&mut theirs);
        let mut exact: Vec<Complex64> = xs
            .iter()
            .map(|z| Complex64::new(z.re as f64, z.im as f64))
            .collect();
        FftPlanner::<f64>::new()
            .plan_fft_forward(n)
            .process(&mut exact);
        let rel = |y: &[Complex32]| {
            let (mut num, mut den) = (0f64, 0f64);
            for (a, e) in y.iter().zip(&exact) {
                num += (a.re as f64 - e.re).powi(2) + (a.im as f64 - e.im).powi(2);
                den += e.re * e.re + e.im * e.im;
            }
            (num / den).sqrt()
        };
        // Timed in place on copies (neither transform's time depends on the values).
        let (mut buf_ours, mut buf_stock) = (xs.clone(), xs.clone());
        let mut scratch = vec![Complex32::new(0.0, 0.0); stock.get_inplace_scratch_len()];
        let (t_ours, t_stock) = best_of_pair(
            5,
            || plan.forward(&mut buf_ours).unwrap(),
            || stock.process_with_scratch(&mut buf_stock, &mut scratch),
        );
        println!(
            "{:<16} {:<18} {:>10.2e} {:>10.2e} {:>10.1} {:>10.1} {:>9.2}x",
            format!("n={n} x{rows}"),
            format!("{hash:016x}"),
            rel(&ours),
            rel(&theirs),
            t_ours * 1e6,
            t_stock * 1e6,
            t_ours / t_stock
        );
    }
}

/// The matmul: per dtype, the hash of x (256, 576) times a transposed weight (384, 576)^T
/// on every device, the max error against MPFR (exact products, `mpfr_sum`) of ours and
/// of stock candle on a sample of outputs, and how many outputs of a row change between
/// decode (the row alone) and prefill (inside 512 rows); then speed against stock candle.
fn matmul_report(devs: &[(String, Device)], mismatches: &mut usize) {
    let (m, k, n) = (256, 576, 384);
    let xs: Vec<f32> = typical_input(m * k).iter().map(|v| v * 0.25).collect();
    let ws: Vec<f32> = input(n * k)
        .iter()
        .map(|v| v.clamp(-8.0, 8.0) * 0.125)
        .collect();
    println!(
        "{:<18} {:<12} {:<18} {:>10} {:>10} {:>22}",
        "op", "dtype", "hash (run devices)", "err ours", "err stock", "decode != prefill"
    );
    for (dtype, out) in [
        (DType::F32, DType::F32),
        (DType::BF16, DType::BF16),
        (DType::F16, DType::F16),
        (DType::F8E4M3, DType::F32),
    ] {
        let mut hashes = vec![];
        let mut cpu = None;
        for (name, dev) in devs {
            // Cast on the CPU, then move: stock candle's CUDA casts to f8 exist only in
            // kernels built for compute capability >= 8.9 (the bundle's PTX is for 8.0).
            let x = Tensor::from_vec(xs.clone(), (m, k), &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap()
                .to_device(dev)
                .unwrap();
            let w = Tensor::from_vec(ws.clone(), (n, k), &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap()
                .to_device(dev)
                .unwrap();
            let y = candle_repro::matmul_to(&x, &w.t().unwrap(), out).unwrap();
            hashes.push(hash_bits(&y));
            if name == "cpu" {
                cpu = Some((x, w, y));
            }
        }
        let (x, w, y) = cpu.unwrap();
        let wt = w.t().unwrap();
        let stock_y = if dtype == DType::F8E4M3 {
            x.to_dtype(DType::F32)
                .unwrap()
                .matmul(&wt.to_dtype(DType::F32).unwrap())
                .unwrap()
        } else {
            x.matmul(&wt).unwrap()
        };
        // Error in ulps of the output dtype on rows 0, 100, 255 against the exact sums.
        // Through f32 (exact for every input dtype): candle 0.11.1's own f8e4m3 -> f64
        // conversion never returns (its `to_f64` calls itself).
        let to64 = |t: &Tensor| -> Vec<f64> {
            let t = t.to_dtype(DType::F32).unwrap().flatten_all().unwrap();
            t.to_vec1::<f32>()
                .unwrap()
                .iter()
                .map(|&v| v as f64)
                .collect()
        };
        let (xv, wv) = (to64(&x), to64(&w));
        let (yv, sv) = (to64(&y), to64(&stock_y));
        let fmt = oracle_format(out);
        let (mut err_ours, mut err_stock) = (0f64, 0f64);
        for i in [0usize, 100, 255] {
            for j in 0..n {
                let row = &xv[i * k..(i + 1) * k];
                let col = &wv[j * k..(j + 1) * k];
                let exact = mpfr_oracle::dot(
                    row,
                    col,
                    None,
                    mpfr_oracle::Format {
                        precision: 200,
                        emin: -10_000,
                        emax: 10_000,
                    },
                );
                let cr = mpfr_oracle::dot(row, col, None, fmt);
                let u = ulp(out, cr);
                err_ours = err_ours.max((yv[i * n + j] - exact).abs() / u);
                err_stock = err_stock.max((sv[i * n + j] - exact).abs() / u);
            }
        }
        // Decode vs prefill on a 512-row batch, row 77.
        let big = Tensor::from_vec(typical_input(512 * k), (512, k), &Device::Cpu)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        let row = big.narrow(0, 77, 1).unwrap();
        let count = |full: &Tensor, alone: &Tensor| -> usize {
            let f = to64(&full.narrow(0, 77, 1).unwrap());
            let a = to64(alone);
            f.iter()
                .zip(&a)
                .filter(|(p, q)| p.to_bits() != q.to_bits())
                .count()
        };
        let ours_changed = count(
            &candle_repro::matmul_to(&big, &wt, out).unwrap(),
            &candle_repro::matmul_to(&row, &wt, out).unwrap(),
        );
        let stock_changed = if dtype == DType::F8E4M3 {
            let (b32, w32) = (
                big.to_dtype(DType::F32).unwrap(),
                wt.to_dtype(DType::F32).unwrap(),
            );
            count(
                &b32.matmul(&w32).unwrap(),
                &row.to_dtype(DType::F32).unwrap().matmul(&w32).unwrap(),
            )
        } else {
            count(&big.matmul(&wt).unwrap(), &row.matmul(&wt).unwrap())
        };
        let same = hashes.iter().all(|h| *h == hashes[0]);
        if !same {
            *mismatches += 1;
        }
        println!(
            "{:<18} {:<12} {:<18} {:>10} {:>10} {:>22}",
            "matmul x w^T",
            format!("{dtype:?}->{out:?}").to_lowercase(),
            if same {
                format!("{:016x}", hashes[0])
            } else {
                format!("{hashes:x?}")
            },
            show_err(err_ours),
            show_err(err_stock),
            format!("ours {ours_changed}, stock {stock_changed} of {n}")
        );
    }
    println!();
    matmul_tiers_report();
    println!();
    quantized_tiers_report();
    println!();
    println!("matmul speed on the CPU, best of 5 in alternation (same run):");
    println!(
        "{:<38} {:<5} {:>9} {:>9} {:>7} {:>10}",
        "product", "dtype", "ours ms", "stock ms", "ratio", "GFLOP/s"
    );
    let shapes = [
        ("x (2048, 576) w (1536, 576)^T", 2048, 576, 1536, true),
        ("1024^3", 1024, 1024, 1024, false),
        ("decode x (1, 4096) w (4096, 4096)^T", 1, 4096, 4096, true),
    ];
    for (name, m, k, n, weight) in shapes {
        for dtype in [DType::F32, DType::BF16] {
            let x = Tensor::from_vec(typical_input(m * k), (m, k), &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let b = if weight {
                Tensor::from_vec(typical_input(n * k), (n, k), &Device::Cpu)
                    .unwrap()
                    .to_dtype(dtype)
                    .unwrap()
                    .t()
                    .unwrap()
            } else {
                Tensor::from_vec(typical_input(k * n), (k, n), &Device::Cpu)
                    .unwrap()
                    .to_dtype(dtype)
                    .unwrap()
            };
            let (ours, theirs) = best_of_pair(
                5,
                || candle_repro::matmul(&x, &b).unwrap(),
                || x.matmul(&b).unwrap(),
            );
            println!(
                "{:<38} {:<5} {:>9.2} {:>9.2} {:>6.2}x {:>10.1}",
                name,
                format!("{dtype:?}").to_lowercase(),
                ours * 1e3,
                theirs * 1e3,
                theirs / ours,
                2.0 * (m * n * k) as f64 / ours / 1e9
            );
            if m == 1 {
                let bytes = n * k * dtype.size_in_bytes();
                let copy = parallel_copy_seconds(bytes);
                println!(
                    "{:<38} {:<5} weights read at {:.1} GB/s, {:.0}% of a 2-thread copy of the same bytes ({:.1} GB/s)",
                    "",
                    "",
                    bytes as f64 / ours / 1e9,
                    100.0 * copy / ours,
                    bytes as f64 / copy / 1e9
                );
            }
        }
    }
}

/// The tier tables' input: typical values in [-8, 8), with `outliers` every 37th one
/// times 2^10.
fn tier_input(n: usize, outliers: bool) -> Vec<f32> {
    let mut data = typical_input(n);
    if outliers {
        data.iter_mut().step_by(37).for_each(|v| *v *= 1024.0);
    }
    data
}

/// Which tier decides the CPU matmul's outputs, per dtype and k: x (64, k) times a weight
/// (256, k)^T (the GEMM path), and a decode row (1, k) (the GEMV path), on typical input
/// and on input with outliers; counted by `matmul::tier_counts`.
fn matmul_tiers_report() {
    use candle_repro::matmul::tier_counts;
    println!("matmul: which tier decides the outputs (CPU; % of outputs):");
    println!(
        "{:<6} {:>6} {:<10} {:<9} {:>9} {:>8} {:>8} {:>8} {:>8}",
        "dtype", "k", "input", "path", "tier 1", "retry", "zero", "tier 2", "tier 3"
    );
    for dtype in [DType::F32, DType::BF16, DType::F16] {
        for k in [64usize, 576, 4096] {
            for (input, outliers) in [("typical", false), ("outliers", true)] {
                let data = tier_input(320 * k, outliers);
                let (wd, xd) = data.split_at(256 * k);
                let w = Tensor::from_slice(wd, (256, k), &Device::Cpu)
                    .unwrap()
                    .to_dtype(dtype)
                    .unwrap();
                for (path, m) in [("gemm", 64usize), ("gemv", 1)] {
                    let x = Tensor::from_slice(&xd[..m * k], (m, k), &Device::Cpu)
                        .unwrap()
                        .to_dtype(dtype)
                        .unwrap();
                    let before = tier_counts();
                    candle_repro::matmul(&x, &w.t().unwrap()).unwrap();
                    let c = tier_counts().since(&before);
                    let pct = |v: u64| format!("{:.2}", 100.0 * v as f64 / c.outputs as f64);
                    println!(
                        "{:<6} {:>6} {:<10} {:<9} {:>9} {:>8} {:>8} {:>8} {:>8}",
                        format!("{dtype:?}").to_lowercase(),
                        k,
                        input,
                        path,
                        pct(c.tier1()),
                        pct(c.retry),
                        pct(c.zero_sign),
                        pct(c.tier2),
                        pct(c.tier3)
                    );
                }
            }
        }
    }
}

/// The quantized GEMV's integer first tier: the share of outputs it decides on its own
/// (`quantized::int_tier_decided`; the rest go to the f64 tier, whose share the matmul
/// table above shows for dense weights), per weight type, x dtype and k, on one decode
/// row against 256 weight rows, typical input and input with outliers as above.
fn quantized_tiers_report() {
    use candle_core::quantized::{GgmlDType, QTensor};
    use candle_repro::quantized::{QMatMul, int_tier_decided};
    println!("quantized GEMV: outputs the integer tier decides alone (CPU; % of outputs):");
    println!(
        "{:<6} {:<6} {:>6} {:>10} {:>10}",
        "weight", "x", "k", "typical", "outliers"
    );
    let path = candle_repro::math::VectorPath::detect();
    for ty in [
        GgmlDType::Q4K,
        GgmlDType::Q6K,
        GgmlDType::Q8_0,
        GgmlDType::Q4_0,
    ] {
        for dtype in [DType::F32, DType::BF16] {
            for k in [256usize, 4096] {
                let mut pct = vec![];
                for outliers in [false, true] {
                    let data = tier_input(257 * k, outliers);
                    let (wd, xd) = data.split_at(256 * k);
                    let w = Tensor::from_slice(wd, (256, k), &Device::Cpu).unwrap();
                    let q = QMatMul::from_qtensor(QTensor::quantize(&w, ty).unwrap()).unwrap();
                    let x = Tensor::from_slice(xd, (1, k), &Device::Cpu)
                        .unwrap()
                        .to_dtype(dtype)
                        .unwrap();
                    let (decided, total) = int_tier_decided(&q, &x, path).unwrap();
                    pct.push(format!("{:.2}", 100.0 * decided as f64 / total as f64));
                }
                println!(
                    "{:<6} {:<6} {:>6} {:>10} {:>10}",
                    format!("{ty:?}"),
                    format!("{dtype:?}").to_lowercase(),
                    k,
                    pct[0],
                    pct[1]
                );
            }
        }
    }
}

/// The best time to copy `bytes` bytes into an already mapped buffer on rayon's threads.
fn parallel_copy_seconds(bytes: usize) -> f64 {
    use rayon::prelude::*;
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    best_of(9, || {
        dst.par_chunks_mut(1 << 20)
            .zip(src.par_chunks(1 << 20))
            .for_each(|(d, s)| d.copy_from_slice(s));
        std::hint::black_box(&dst);
    })
}
