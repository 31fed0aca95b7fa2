//! The real models through candle-repro against stock candle on the same file, same run: a
//! 128-token prefill and one decode step after a 128-token prompt, ours in f32 and bf16:
//! SmolLM2-135M-Instruct (Q4_1 GGUF; our Llama against `quantized_llama`) and Gemma 3
//! 270M (Q4_K_M GGUF; our Gemma 3 against `quantized_gemma3`).
//!
//! `cargo bench --bench llama` (the models are fetched by `scripts/fetch-model.sh`;
//! LLAMA_BENCH_MODEL=smollm2 or gemma3 runs one; the dequantized-stock variants and peak
//! memory are in `cargo run --release --example generate -- [--model ..] --bench`, which
//! runs each model in its own process).

use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, Tensor};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::PathBuf;

const PROMPT: usize = 128;

fn model_path(which: &str) -> PathBuf {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-model.sh");
    let out = std::process::Command::new("bash")
        .args([script, which])
        .output()
        .expect("run scripts/fetch-model.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The models behind one interface: forward of `ids` at `pos`, last-position logits.
enum Model {
    Llama(candle_repro::models::llama::ModelWeights),
    Gemma(candle_repro::models::gemma3::ModelWeights),
    StockLlama(candle_transformers::models::quantized_llama::ModelWeights),
    StockGemma(candle_transformers::models::quantized_gemma3::ModelWeights),
}

impl Model {
    fn load(path: &PathBuf, gemma: bool, ours: Option<DType>) -> Model {
        use candle_repro::models::gguf::WeightMode;
        let mut f = std::fs::File::open(path).unwrap();
        let c = gguf_file::Content::read(&mut f).unwrap();
        let dev = &Device::Cpu;
        let q = WeightMode::Quantized;
        match (gemma, ours) {
            (false, Some(dt)) => Model::Llama(
                candle_repro::models::llama::ModelWeights::from_gguf_with(c, &mut f, dev, dt, q)
                    .unwrap(),
            ),
            (true, Some(dt)) => Model::Gemma(
                candle_repro::models::gemma3::ModelWeights::from_gguf_with(c, &mut f, dev, dt, q)
                    .unwrap(),
            ),
            (false, None) => Model::StockLlama(
                candle_transformers::models::quantized_llama::ModelWeights::from_gguf(
                    c, &mut f, dev,
                )
                .unwrap(),
            ),
            (true, None) => Model::StockGemma(
                candle_transformers::models::quantized_gemma3::ModelWeights::from_gguf(
                    c, &mut f, dev,
                )
                .unwrap(),
            ),
        }
    }

    fn forward(&mut self, ids: &[u32], pos: usize) -> Tensor {
        let x = Tensor::new(ids, &Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        match self {
            Model::Llama(m) => m.forward(&x, pos).unwrap(),
            Model::Gemma(m) => m.forward(&x, pos).unwrap(),
            Model::StockLlama(m) => m.forward(&x, pos).unwrap(),
            Model::StockGemma(m) => m.forward(&x, pos).unwrap(),
        }
    }

    fn clear(&mut self) {
        match self {
            Model::Llama(m) => m.clear_kv_cache(),
            Model::Gemma(m) => m.clear_kv_cache(),
            Model::StockLlama(m) => m.clear_kv_cache(),
            // Stock Gemma restarts its cache at position 0.
            Model::StockGemma(_) => {}
        }
    }
}

fn bench(c: &mut Criterion) {
    let only = std::env::var("LLAMA_BENCH_MODEL").ok();
    for (model, vocab, stock) in [
        ("smollm2", 49152u32, "stock_q4_1"),
        ("gemma3", 262144, "stock_q4_k_m"),
    ] {
        if only.as_deref().is_some_and(|o| o != model) {
            continue;
        }
        bench_model(c, model, vocab, stock);
    }
}

fn bench_model(c: &mut Criterion, model: &str, vocab: u32, stock: &str) {
    let path = model_path(model);
    let gemma = model == "gemma3";
    // Token ids spread over the vocabulary, fixed (Gemma's ids past the special ones).
    let ids: Vec<u32> = (0..PROMPT as u32 + 1)
        .map(|i| 300 + (i * 7919 + 11) % (vocab - 300))
        .collect();
    for (name, ours) in [
        ("candle-repro_f32", Some(DType::F32)),
        ("candle-repro_bf16", Some(DType::BF16)),
        (stock, None),
    ] {
        let mut m = Model::load(&path, gemma, ours);
        let mut g = c.benchmark_group(format!("{model}_{name}"));
        g.sample_size(10);
        g.throughput(Throughput::Elements(PROMPT as u64));
        g.bench_function("prefill_128", |b| {
            b.iter(|| {
                m.clear();
                black_box(m.forward(&ids[..PROMPT], 0))
            })
        });
        g.throughput(Throughput::Elements(1));
        // One decode step after a 128-token prompt: the prompt is prefilled untimed, then
        // steps at positions 128..160 are timed one by one (a fresh prefill every 32
        // steps keeps the cache length, and so the step's cost, near 128).
        g.bench_function("decode_step_after_128", |b| {
            b.iter_custom(|iters| {
                let mut total = std::time::Duration::ZERO;
                let mut pos = usize::MAX;
                for _ in 0..iters {
                    if pos >= PROMPT + 32 {
                        m.clear();
                        m.forward(&ids[..PROMPT], 0);
                        pos = PROMPT;
                    }
                    let t = std::time::Instant::now();
                    black_box(m.forward(&ids[PROMPT..], pos));
                    total += t.elapsed();
                    pos += 1;
                }
                total
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
