//! The CUDA half on a real GPU, in the same run as stock candle's CUDA ops (issue 30):
//!
//! * `ops`: device time of ours and stock candle's op on the same CUDA tensors (each sample
//!   runs the op `reps` times and then synchronizes the device; best of the samples):
//!   elementwise and softmax and RoPE as a fraction of the copy floor (stock `x.copy()`:
//!   read and write the same bytes), FFT rows n = 2^6..2^12 and one n = 2^18 (F32 and the
//!   tensor-core Ozaki precision), matmul 4096³ f32/bf16, the quantized decode GEMV
//!   (1, 4096)·(4096, 4096)ᵀ and a (64, 4096) prefill GEMM for Q4_K, Q8_0 and Q6_K.
//! * `model PATH`: our Llama/Gemma model on the CPU and on CUDA (f32 and bf16 compute): the
//!   logits of every prefill position and of 16 decode steps, bit for bit, and prefill and
//!   decode tokens/s on CUDA against stock candle's quantized model on CUDA.
//! * `fft`: the FFT rows of `ops` alone (F32, F64Internal and Ozaki), after the copy floor,
//!   then the fused kernel's variants (`fft::cuda::FusedVariant`) timed interleaved at
//!   n = 64..4096 (F32) and 64..2048 (F64Internal), with their bits compared.
//! * `qgemv`: the quantized decode product alone (issue 24): one row of x (f32, bf16) times
//!   (14336, 4096) weights of Q4_K, Q6_K, Q8_0 and Q4_0, rotating over 4 distinct weights
//!   per type (from 132 MB for Q4_K: out of the 50 MB L2), ours against stock candle's
//!   `QMatMul` on the same device: µs per product and GB/s of weight bytes read, with the
//!   percentage of 3350 GB/s (the H100 SXM's HBM3 peak).
//! * `matmul`: the matmul 4096³ of `ops` alone: the f64 tiles, the integer tier (int8
//!   tensor cores, `CpuConfig::int_tier = Some(true)`, its bits compared) and cuBLAS.
//! * `fftdump DIR`: FFT inputs and our CUDA outputs for `tools/gpu/torch_baselines.py`.
//! * `truncate IN OUT LAYERS [ROWS]` (no GPU needed): a GGUF with only the first LAYERS
//!   blocks (and ROWS rows of the embedding table), so a real checkpoint fits the device
//!   machine's carry limit.
//!
//! `cargo run --release --features cuda --example gpu_report -- ops` (on a CUDA machine; the
//! GPU bundle, `scripts/gpu-bundle.sh`, ships it).

use candle_core::quantized::{GgmlDType, QMatMul as StockQMatMul, QTensor, gguf_file};
use candle_core::{DType, Device, IndexOp, Module, Tensor};
use candle_repro::fft::{Norm, Precision, fft_with};
use candle_repro::models::gguf::WeightMode;
use candle_repro::quantized::QMatMul;
use std::time::Instant;

mod models_common;
use models_common::Model;

/// A deterministic spread of values in [-scale, scale).
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

/// Best seconds per call of `f` on `dev`: samples of `reps` calls, each sample ended by a
/// device synchronization.
fn time<R>(dev: &Device, samples: usize, reps: usize, mut f: impl FnMut() -> R) -> f64 {
    drop(f());
    dev.synchronize().unwrap();
    (0..samples)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                drop(f());
            }
            dev.synchronize().unwrap();
            t.elapsed().as_secs_f64() / reps as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn bits(t: &Tensor) -> Vec<u32> {
    let t = t.flatten_all().unwrap().to_device(&Device::Cpu).unwrap();
    match t.dtype() {
        DType::F32 => t
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
        DType::BF16 => t
            .to_vec1::<half::bf16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits() as u32)
            .collect(),
        other => panic!("bits of {other:?}"),
    }
}

fn ops(gpu: &Device) {
    let n = 1 << 24;
    let x32 = Tensor::from_vec(values(n, 1, 8.0), n, gpu).unwrap();
    let floor32 = time(gpu, 5, 10, || x32.copy().unwrap());
    let gbps = |bytes: usize, s: f64| bytes as f64 / s / 1e9;
    println!(
        "copy floor (stock x.copy(), 16M f32: 64 MiB read + 64 MiB written): {:.1} µs, {:.0} GB/s",
        floor32 * 1e6,
        gbps(2 * 4 * n, floor32)
    );
    println!();
    println!(
        "elementwise, 16M elements (fraction of the copy floor's rate; ratio = stock/ours time)"
    );
    println!(
        "{:<9} {:<5} {:>9} {:>9} {:>7} {:>7}",
        "op", "dtype", "ours µs", "stock µs", "floor", "ratio"
    );
    for dt in [DType::F32, DType::BF16] {
        let x = x32.to_dtype(dt).unwrap();
        let pos = x.abs().unwrap();
        let floor = time(gpu, 5, 10, || x.copy().unwrap());
        for f in candle_repro::UnaryFn::ALL {
            use candle_repro::UnaryFn as U;
            let arg = if matches!(f, U::Log | U::Log1p | U::Log10) {
                &pos
            } else {
                &x
            };
            let ours = time(gpu, 5, 10, || candle_repro::unary(arg, f).unwrap());
            let stock = time(gpu, 5, 10, || stock_unary(f, arg));
            row(f.name(), dt, ours, stock, floor);
        }
    }
    println!();
    println!("softmax (4096, 4096) and rope (1, 32, 2048, 128)");
    println!(
        "{:<9} {:<5} {:>9} {:>9} {:>7} {:>7}",
        "op", "dtype", "ours µs", "stock µs", "floor", "ratio"
    );
    let logits = x32.reshape((4096, 4096)).unwrap();
    let q = x32
        .narrow(0, 0, 32 * 2048 * 128)
        .unwrap()
        .reshape((1, 32, 2048, 128))
        .unwrap();
    let cfg = candle_repro::rope::RopeConfig::new(10000.0, 128);
    for dt in [DType::F32, DType::BF16] {
        let x = logits.to_dtype(dt).unwrap();
        let floor = time(gpu, 5, 10, || x.copy().unwrap());
        let ours = time(gpu, 5, 10, || candle_repro::softmax_last_dim(&x).unwrap());
        let stock = time(gpu, 5, 10, || candle_nn::ops::softmax_last_dim(&x).unwrap());
        row("softmax", dt, ours, stock, floor);
        let t = candle_repro::rope::RopeTables::new(&cfg, 2048, dt, gpu).unwrap();
        let x = q.to_dtype(dt).unwrap();
        let floor = time(gpu, 5, 10, || x.copy().unwrap());
        let ours = time(gpu, 5, 10, || {
            candle_repro::rope::rope(&x, &t.cos, &t.sin).unwrap()
        });
        let stock = time(gpu, 5, 10, || {
            candle_nn::rotary_emb::rope(&x, &t.cos, &t.sin).unwrap()
        });
        row("rope", dt, ours, stock, floor);
    }
    println!();
    fft_rows(gpu, &x32, &[Precision::F32, Precision::Ozaki]);
    println!();
    matmul(gpu);
    println!();
    println!("quantized weights (4096, 4096): decode (1, 4096) and prefill (64, 4096), f32 x");
    println!(
        "{:<5} {:>5} {:>9} {:>9} {:>8} {:>7}",
        "type", "m", "ours µs", "stock µs", "GB/s", "ratio"
    );
    let w = Tensor::from_vec(values(4096 * 4096, 4, 1.0), (4096, 4096), &Device::Cpu).unwrap();
    for ty in [GgmlDType::Q4K, GgmlDType::Q8_0, GgmlDType::Q6K] {
        let q = QTensor::quantize(&w, ty).unwrap();
        let bytes = q.data().unwrap().to_vec();
        let on_gpu = || {
            QTensor::new(
                candle_core::quantized::QStorage::from_data(
                    std::borrow::Cow::Borrowed(&bytes),
                    gpu,
                    ty,
                )
                .unwrap(),
                (4096, 4096),
            )
            .unwrap()
        };
        let ours_q = QMatMul::from_qtensor(on_gpu()).unwrap();
        let stock_q = StockQMatMul::from_qtensor(on_gpu()).unwrap();
        for rows in [1, 64] {
            let x = Tensor::from_vec(values(rows * 4096, 5, 1.0), (rows, 4096), gpu).unwrap();
            let (samples, reps) = if rows == 1 { (5, 20) } else { (3, 1) };
            let ours = time(gpu, samples, reps, || ours_q.forward(&x).unwrap());
            let stock = time(gpu, samples, reps, || stock_q.forward(&x).unwrap());
            println!(
                "{:<5} {:>5} {:>9.1} {:>9.1} {:>8.0} {:>6.2}x",
                format!("{ty:?}"),
                rows,
                ours * 1e6,
                stock * 1e6,
                gbps(bytes.len(), ours),
                stock / ours
            );
        }
    }
}

/// Matmul 4096³ f32 and bf16: ours with the default tier 1, with each tier-1 kernel (the
/// f64 tiles, the integer tier on the int8 tensor cores one warp per 16 x 8 outputs and
/// tiled; their bits compared with the default's), tier 1 alone, and stock candle's cuBLAS
/// product.
fn matmul(gpu: &Device) {
    println!("matmul 4096³ (TFLOP/s; stock = candle's cuBLAS matmul)");
    let (m, k, nn) = (4096, 4096, 4096);
    let a = Tensor::from_vec(values(m * k, 2, 1.0), (m, k), gpu).unwrap();
    let b = Tensor::from_vec(values(k * nn, 3, 1.0), (k, nn), gpu).unwrap();
    for dt in [DType::F32, DType::BF16] {
        let (a, b) = (a.to_dtype(dt).unwrap(), b.to_dtype(dt).unwrap());
        let ours = time(gpu, 3, 1, || candle_repro::matmul(&a, &b).unwrap());
        // The integer tier (int8 tensor cores): its bits checked against the default's.
        let int_cfg = candle_repro::matmul::CpuConfig {
            int_tier: Some(true),
            ..Default::default()
        };
        let tiled_cfg = candle_repro::matmul::CpuConfig {
            int_tiled: true,
            ..int_cfg
        };
        let tf = |s: f64| 2.0 * (m * k * nn) as f64 / s / 1e12;
        let name = format!("{dt:?}").to_lowercase();
        // Each figure printed as soon as it is measured: a kernel that fails on the device
        // leaves the figures before it.
        let stock = time(gpu, 3, 5, || a.matmul(&b).unwrap());
        println!(
            "{name:<5} stock {:.3} ms ({:.1} TFLOP/s)",
            stock * 1e3,
            tf(stock)
        );
        println!(
            "{name:<5} ours (default) {:.2} ms ({:.1} TFLOP/s), ours/stock speed {:.3}",
            ours * 1e3,
            tf(ours),
            stock / ours
        );
        let want = bits(&candle_repro::matmul(&a, &b).unwrap());
        // Tier 1 alone (its undecided outputs written as NaN): how many outputs go on to
        // tiers 2 and 3, and what the kernels cost without them.
        let alone = |c: candle_repro::matmul::CpuConfig| candle_repro::matmul::CpuConfig {
            start_tier: Some(0),
            ..c
        };
        let nan_count = |t: &Tensor| -> usize {
            let v = t.to_dtype(DType::F32).unwrap().flatten_all().unwrap();
            let v = v.to_device(&Device::Cpu).unwrap().to_vec1::<f32>().unwrap();
            v.iter().filter(|x| x.is_nan()).count()
        };
        let f64_cfg = candle_repro::matmul::CpuConfig {
            int_tier: Some(false),
            ..Default::default()
        };
        for (what, cfg) in [
            ("f64 tiles, tier 1 alone", alone(f64_cfg)),
            ("int8 tiled, tier 1 alone", alone(tiled_cfg)),
        ] {
            let run = || candle_repro::matmul::matmul_with_config(&a, &b, None, None, cfg);
            let undecided = nan_count(&run().unwrap());
            let t = time(gpu, 3, 1, || run().unwrap());
            println!(
                "{name:<5} {what} {:.2} ms ({:.1} TFLOP/s), {undecided} of {} outputs undecided",
                t * 1e3,
                tf(t),
                m * nn
            );
        }
        for (what, cfg) in [
            ("f64 tiles", f64_cfg),
            ("int8 tier", int_cfg),
            ("int8 tiled", tiled_cfg),
        ] {
            let run = || candle_repro::matmul::matmul_with_config(&a, &b, None, None, cfg);
            let same = bits(&run().unwrap()) == want;
            let t = time(gpu, 3, 1, || run().unwrap());
            println!(
                "{name:<5} {what} {:.2} ms ({:.1} TFLOP/s, same bits: {same}), /stock speed {:.3}",
                t * 1e3,
                tf(t),
                stock / t
            );
        }
    }
}

/// Random block bytes of `ty` for a (n, k) weight, every block's f16 scales set to tame
/// finite values (so that every output is decided by tier 1: the speed of the common case).
fn tame_blocks(ty: GgmlDType, n: usize, k: usize, seed: u64) -> Vec<u8> {
    let (len, size) = (ty.block_size(), ty.type_size());
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut b: Vec<u8> = (0..n * k / len * size)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 32) as u8
        })
        .collect();
    // Where each block's f16 scales are (ggml-common.h).
    let scales: &[usize] = match ty {
        GgmlDType::Q4_0 | GgmlDType::Q8_0 => &[0],
        GgmlDType::Q4K => &[0, 2],
        GgmlDType::Q6K => &[208],
        other => panic!("tame_blocks: {other:?}"),
    };
    let d = half::f16::from_f32(1.0 / 1024.0).to_bits().to_le_bytes();
    for blk in b.chunks_exact_mut(size) {
        for &o in scales {
            blk[o..o + 2].copy_from_slice(&d);
        }
    }
    b
}

/// The decode product alone (see the header): ours and stock candle's on the same device.
fn qgemv(gpu: &Device) {
    const PEAK_GBS: f64 = 3350.0;
    const COPIES: usize = 4;
    let (n, k) = (14336, 4096);
    println!(
        "decode x (1, {k}) times {COPIES} distinct weights ({n}, {k}) in turn (out of L2); \
         GB/s of weight bytes, % of {PEAK_GBS} GB/s"
    );
    println!(
        "{:<5} {:<5} {:>9} {:>7} {:>5} {:>9} {:>7} {:>5} {:>7}",
        "type", "x", "ours µs", "GB/s", "%", "stock µs", "GB/s", "%", "ratio"
    );
    for ty in [
        GgmlDType::Q4K,
        GgmlDType::Q6K,
        GgmlDType::Q8_0,
        GgmlDType::Q4_0,
    ] {
        let mut ours = Vec::new();
        let mut stock = Vec::new();
        let mut wbytes = 0;
        for c in 0..COPIES {
            let bytes = tame_blocks(ty, n, k, 7 + c as u64);
            wbytes = bytes.len();
            let on_gpu = || {
                QTensor::new(
                    candle_core::quantized::QStorage::from_data(
                        std::borrow::Cow::Borrowed(&bytes),
                        gpu,
                        ty,
                    )
                    .unwrap(),
                    (n, k),
                )
                .unwrap()
            };
            ours.push(QMatMul::from_qtensor(on_gpu()).unwrap());
            stock.push(StockQMatMul::from_qtensor(on_gpu()).unwrap());
        }
        for dt in [DType::F32, DType::BF16] {
            let x = Tensor::from_vec(values(k, 5, 1.0), (1, k), gpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let mut at = 0;
            let t_ours = time(gpu, 5, 40, || {
                at += 1;
                ours[at % COPIES].forward(&x).unwrap()
            });
            // Stock candle's quantized CUDA product may not take bf16 x: then "-".
            let t_stock = stock[0].forward(&x).is_ok().then(|| {
                let mut at = 0;
                time(gpu, 5, 40, || {
                    at += 1;
                    stock[at % COPIES].forward(&x).unwrap()
                })
            });
            let gb = |t: f64| wbytes as f64 / t / 1e9;
            let (s_us, s_gb, s_pct, ratio) = match t_stock {
                Some(t) => (
                    format!("{:.1}", t * 1e6),
                    format!("{:.0}", gb(t)),
                    format!("{:.0}", 100.0 * gb(t) / PEAK_GBS),
                    format!("{:.2}x", t / t_ours),
                ),
                None => ("-".into(), "-".into(), "-".into(), "-".into()),
            };
            println!(
                "{:<5} {:<5} {:>9.1} {:>7.0} {:>5.0} {:>9} {:>7} {:>5} {:>7}",
                format!("{ty:?}"),
                format!("{dt:?}").to_lowercase(),
                t_ours * 1e6,
                gb(t_ours),
                100.0 * gb(t_ours) / PEAK_GBS,
                s_us,
                s_gb,
                s_pct,
                ratio
            );
        }
    }
}

fn row(op: &str, dt: DType, ours: f64, stock: f64, floor: f64) {
    println!(
        "{:<9} {:<5} {:>9.1} {:>9.1} {:>6.0}% {:>6.2}x",
        op,
        format!("{dt:?}").to_lowercase(),
        ours * 1e6,
        stock * 1e6,
        100.0 * floor / ours,
        stock / ours
    );
}

/// Stock candle's op for `f` (the formula a model writes where candle has no op).
fn stock_unary(f: candle_repro::UnaryFn, x: &Tensor) -> Tensor {
    use candle_repro::UnaryFn as U;
    match f {
        U::Exp => x.exp(),
        U::Expm1 => x.exp().unwrap() - 1.0,
        U::Log => x.log(),
        U::Log1p => (x + 1.0).unwrap().log(),
        U::Log10 => x.log().unwrap() * std::f64::consts::LOG10_E,
        U::Sin => x.sin(),
        U::Cos => x.cos(),
        U::Tanh => x.tanh(),
        U::Sigmoid => candle_nn::ops::sigmoid(x),
        U::Silu => x.silu(),
        U::Softplus => (x.exp().unwrap() + 1.0).unwrap().log(),
        U::Erf => x.erf(),
        U::Gelu => x.gelu(),
        U::GeluErf => x.gelu_erf(),
    }
    .unwrap()
}

fn argmax(logits: &Tensor) -> u32 {
    logits
        .flatten_all()
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap()
        .argmax(0)
        .unwrap()
        .to_scalar::<u32>()
        .unwrap()
}

fn model(path: &str, gpu: &Device) {
    let ids: Vec<u32> = values(64, 9, 1.0)
        .iter()
        .map(|v| (v.abs() * 4000.0) as u32 + 10) // inside a table trimmed to 4096 rows
        .collect();
    let (prompt, steps) = (&ids[..48], 16);
    for dt in [DType::F32, DType::BF16] {
        let mut hashes = vec![];
        let mut per_device = vec![];
        for dev in [&Device::Cpu, gpu] {
            let mut m = Model::load(false, path.as_ref(), dev, dt, WeightMode::Quantized);
            let x = Tensor::new(prompt, dev).unwrap().unsqueeze(0).unwrap();
            let all = m.forward_all(&x, 0);
            let mut out = bits(&all);
            let mut next = argmax(&all.i((0, prompt.len() - 1)).unwrap());
            let mut tokens = vec![];
            for pos in prompt.len()..prompt.len() + steps {
                tokens.push(next);
                let xt = Tensor::new(&[next], dev).unwrap().unsqueeze(0).unwrap();
                let l = m.forward(&xt, pos);
                out.extend(bits(&l));
                next = argmax(&l);
            }
            hashes.push(out.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ *b as u64).wrapping_mul(0x100_0000_01b3)
            }));
            per_device.push((out, tokens));
        }
        let differ = per_device[0]
            .0
            .iter()
            .zip(&per_device[1].0)
            .filter(|(a, b)| a != b)
            .count();
        println!(
            "model {dt:?}: {} prefill positions + {steps} decode steps, {} logits: cpu {:016x} cuda {:016x}: {} differ{}",
            prompt.len(),
            per_device[0].0.len(),
            hashes[0],
            hashes[1],
            differ,
            if per_device[0].1 == per_device[1].1 {
                ", same tokens"
            } else {
                ", tokens differ"
            }
        );
    }
    // Speed on CUDA: prefill of 48 tokens, then 32 greedy decode steps; best of 3.
    println!(
        "{:<24} {:>12} {:>12}",
        "cuda model", "prefill t/s", "decode t/s"
    );
    for (name, stock, dt) in [
        ("ours f32", false, DType::F32),
        ("ours bf16", false, DType::BF16),
        ("stock (quantized)", true, DType::F32),
    ] {
        let mut m = Model::load(stock, path.as_ref(), gpu, dt, WeightMode::Quantized);
        let x = Tensor::new(prompt, gpu).unwrap().unsqueeze(0).unwrap();
        let (mut pre, mut dec) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..3 {
            m.clear();
            let t = Instant::now();
            let l = m.forward(&x, 0);
            let mut next = argmax(&l);
            pre = pre.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            for pos in prompt.len()..prompt.len() + 32 {
                let xt = Tensor::new(&[next], gpu).unwrap().unsqueeze(0).unwrap();
                next = argmax(&m.forward(&xt, pos));
            }
            dec = dec.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{:<24} {:>12.1} {:>12.1}",
            name,
            prompt.len() as f64 / pre,
            32.0 / dec
        );
    }
}

/// A GGUF with the first `layers` blocks and (with `rows`) the first `rows` rows of the
/// embedding (and output) table: the real weights, in a file small enough to carry to the
/// device machine. A trimmed vocabulary drops the tokenizer's per-token arrays, which would
/// no longer match; the models read the vocabulary size from the table's shape.
fn truncate(input: &str, output: &str, layers: usize, rows: Option<usize>) {
    let mut f = std::fs::File::open(input).unwrap();
    let c = gguf_file::Content::read(&mut f).unwrap();
    let arch = c.metadata["general.architecture"]
        .to_string()
        .unwrap()
        .clone();
    let key = format!("{arch}.block_count");
    let count = gguf_file::Value::U32(layers as u32);
    let per_token =
        ["tokens", "scores", "token_type", "merges"].map(|k| format!("tokenizer.ggml.{k}"));
    // Keys and tensors in name order: the same input gives the same file bytes.
    let mut metadata: Vec<(&str, &gguf_file::Value)> = c
        .metadata
        .iter()
        .filter(|(k, _)| rows.is_none() || !per_token.contains(k))
        .map(|(k, v)| (k.as_str(), if *k == key { &count } else { v }))
        .collect();
    metadata.sort_by_key(|(k, _)| *k);
    let keep = |name: &str| match name.strip_prefix("blk.") {
        Some(rest) => rest.split('.').next().unwrap().parse::<usize>().unwrap() < layers,
        None => true,
    };
    let mut names: Vec<&String> = c.tensor_infos.keys().filter(|n| keep(n)).collect();
    names.sort();
    let tensors: Vec<(String, QTensor)> = names
        .into_iter()
        .map(|n| {
            let t = c.tensor(&mut f, n, &Device::Cpu).unwrap();
            let table = n == "token_embd.weight" || n == "output.weight";
            let t = match rows {
                Some(r) if table && t.shape().dims()[0] > r => {
                    let (vocab, dim) = t.shape().dims2().unwrap();
                    let bytes = t.data().unwrap();
                    let per_row = bytes.len() / vocab;
                    let storage = candle_core::quantized::QStorage::from_data(
                        std::borrow::Cow::Owned(bytes[..r * per_row].to_vec()),
                        &Device::Cpu,
                        t.dtype(),
                    )
                    .unwrap();
                    QTensor::new(storage, (r, dim)).unwrap()
                }
                _ => t,
            };
            (n.clone(), t)
        })
        .collect();
    let refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let mut out = std::fs::File::create(output).unwrap();
    gguf_file::write(&mut out, &metadata, &refs).unwrap();
    println!(
        "{output}: {} tensors, {layers} blocks, table rows {rows:?}",
        refs.len()
    );
}

/// Inputs and our CUDA outputs (both precisions) of FFT rows, as raw little-endian f32
/// files `DIR/fft_{n}_{x,f32,ozaki}.bin`, for `tools/gpu/torch_baselines.py` to put cuFFT's
/// error against an f64 reference next to ours.
fn fft_dump(dir: &str, gpu: &Device) {
    std::fs::create_dir_all(dir).unwrap();
    for log_n in [6, 8, 10, 12, 18] {
        let len = 1usize << log_n;
        let rows = if log_n == 18 { 4 } else { 64 };
        let x =
            Tensor::from_vec(values(2 * rows * len, 11 + log_n, 1.0), (rows, len, 2), gpu).unwrap();
        let write = |what: &str, t: &Tensor| {
            let v: Vec<u8> = bits(t).iter().flat_map(|b| b.to_le_bytes()).collect();
            std::fs::write(format!("{dir}/fft_{len}_{what}.bin"), v).unwrap();
        };
        write("x", &x);
        write(
            "f32",
            &fft_with(&x, Norm::Backward, Precision::F32).unwrap(),
        );
        write(
            "ozaki",
            &fft_with(&x, Norm::Backward, Precision::Ozaki).unwrap(),
        );
    }
    println!("fft rows written to {dir}");
}

/// FFT rows n = 2^6, 2^8, 2^10, 2^12 at 2^23 complex values per batch (the pure Stockham
/// plans of F32 up to 4096 points and F64Internal up to 2048 run as one launch of the fused
/// shared-memory kernel) and one n = 2^18 row, for each precision of `precs`; `x32` holds at
/// least 2^24 f32 values.
fn fft_rows(gpu: &Device, x32: &Tensor, precs: &[Precision]) {
    println!("fft, complex f32 rows (n, 2): 2^23 complex values per batch (64 MiB in, 64 out)");
    println!(
        "{:>7} {:>6} {:<11} {:>9} {:>7} {:>9}",
        "n", "rows", "prec", "ours µs", "floor", "µs/row"
    );
    for log_n in [6, 8, 10, 12, 18] {
        let len = 1usize << log_n;
        let rows = if log_n == 18 { 1 } else { (1 << 23) / len };
        let x = x32
            .narrow(0, 0, 2 * rows * len)
            .unwrap()
            .reshape((rows, len, 2))
            .unwrap();
        let floor = time(gpu, 5, 10, || x.copy().unwrap());
        for &prec in precs {
            let ours = time(gpu, 5, 10, || fft_with(&x, Norm::Backward, prec).unwrap());
            println!(
                "{:>7} {:>6} {:<11} {:>9.1} {:>6.0}% {:>9.3}",
                len,
                rows,
                format!("{prec:?}"),
                ours * 1e6,
                100.0 * floor / ours,
                ours * 1e6 / rows as f64
            );
        }
    }
}

/// The fused FFT kernels (`fft::cuda::FusedVariant`: the plain shared layout, the swizzled
/// one, the swizzled one with 8-byte global accesses) against each other: the kernel
/// launch alone (tables uploaded and output allocated before), forward, on 2^23 complex
/// values per batch, the variants interleaved round by round (each sample 10 launches
/// and a synchronization; best and worst sample of the rounds), and every variant's output
/// bits against the plain kernel's.
#[cfg(feature = "cuda")]
fn fused_variants(gpu: &Device, x32: &Tensor) {
    use candle_core::backend::BackendStorage;
    use candle_repro::fft::FftPlan;
    use candle_repro::fft::cuda::{FftDevice, FusedVariant, fused_launch_variant, fused_stages};
    use candle_repro::launch::{Device as LaunchDevice, Slot};
    let cuda = gpu.as_cuda_device().unwrap();
    let (storage, layout) = x32.storage_and_layout();
    let candle_core::Storage::Cuda(src) = &*storage else {
        panic!("a CUDA tensor")
    };
    let start = layout.start_offset();
    let variants = FusedVariant::ALL;
    println!(
        "fused FFT kernels, forward, launch alone: µs best..worst of {ROUNDS} interleaved rounds (x 10 launches)"
    );
    const ROUNDS: usize = 7;
    for prec in [Precision::F32, Precision::F64Internal] {
        for log_n in [6, 8, 10, 12] {
            let n = 1usize << log_n;
            let rows = (1 << 23) / n;
            let plan = FftPlan::new(n, prec).unwrap();
            let tables = cuda.fft_tables(&plan).unwrap();
            let Some(stages) = fused_stages(&tables.plan) else {
                continue;
            };
            let table_len = LaunchDevice::len(cuda, &tables.table);
            let plans: Vec<_> = variants
                .iter()
                .map(|&v| {
                    fused_launch_variant(
                        &tables.plan,
                        &stages,
                        rows,
                        false,
                        start,
                        table_len,
                        u32::MAX,
                        v,
                    )
                })
                .collect();
            let mut outs: Vec<_> = variants
                .iter()
                .map(|_| LaunchDevice::alloc(cuda, DType::F32, 2 * rows * n).unwrap())
                .collect();
            let mut best = vec![f64::INFINITY; variants.len()];
            let mut worst = vec![0f64; variants.len()];
            for _ in 0..ROUNDS {
                for (k, pl) in plans.iter().enumerate() {
                    let out = &mut outs[k];
                    let t = time(gpu, 1, 10, || {
                        let slots =
                            &mut [Slot::In(src), Slot::Out(&mut *out), Slot::In(&tables.table)];
                        LaunchDevice::launch(cuda, pl, slots).unwrap()
                    });
                    best[k] = best[k].min(t);
                    worst[k] = worst[k].max(t);
                }
            }
            let host = |b: &candle_core::CudaStorage| match b.to_cpu_storage().unwrap() {
                candle_core::CpuStorage::F32(v) => {
                    v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>()
                }
                _ => unreachable!("f32 output"),
            };
            let base = host(&outs[0]);
            for (k, v) in variants.iter().enumerate() {
                let bits = host(&outs[k]);
                let differ = bits.iter().zip(&base).filter(|(a, b)| a != b).count();
                let verdict = if k == 0 {
                    "reference".to_string()
                } else if differ == 0 {
                    "same bits".to_string()
                } else {
                    format!("{differ} of {} floats DIFFER", base.len())
                };
                println!(
                    "{:>7} {:>6} {:<11} {:<11} {:>8.1}..{:<8.1} {:>5.0}% of plain  {verdict}",
                    n,
                    rows,
                    format!("{prec:?}"),
                    format!("{v:?}"),
                    best[k] * 1e6,
                    worst[k] * 1e6,
                    100.0 * best[0] / best[k],
                );
            }
        }
    }
}

#[cfg(not(feature = "cuda"))]
fn fused_variants(_gpu: &Device, _x32: &Tensor) {
    println!("fused FFT kernels: build with --features cuda");
}

/// `fft`: the FFT rows of `ops` alone, all three precisions, after the copy floor, then
/// the fused kernel variants against each other.
fn fft_only(gpu: &Device) {
    let n = 1 << 24;
    let x32 = Tensor::from_vec(values(n, 1, 8.0), n, gpu).unwrap();
    let floor = time(gpu, 5, 10, || x32.copy().unwrap());
    println!(
        "copy floor (stock x.copy(), 16M f32: 64 MiB read + 64 MiB written): {:.1} µs, {:.0} GB/s",
        floor * 1e6,
        2.0 * 4.0 * n as f64 / floor / 1e9
    );
    fft_rows(
        gpu,
        &x32,
        &[Precision::F32, Precision::F64Internal, Precision::Ozaki],
    );
    fused_variants(gpu, &x32);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("truncate") {
        let rows = args.get(4).map(|r| r.parse().unwrap());
        return truncate(&args[1], &args[2], args[3].parse().unwrap(), rows);
    }
    let gpu = match Device::new_cuda(0) {
        Ok(d) => d,
        Err(e) => {
            println!(
                "gpu_report: no CUDA device ({e}); build with --features cuda on a GPU machine"
            );
            return;
        }
    };
    match args.first().map(String::as_str) {
        Some("ops") | None => ops(&gpu),
        Some("model") => model(&args[1], &gpu),
        Some("qgemv") => qgemv(&gpu),
        Some("fft") => fft_only(&gpu),
        Some("matmul") => matmul(&gpu),
        Some("fftdump") => fft_dump(&args[1], &gpu),
        Some(other) => {
            println!(
                "gpu_report: unknown section {other:?} (ops, fft, fftdump, matmul, qgemv, model, truncate)"
            )
        }
    }
}
