//! SmolLM2-135M-Instruct (Q4_1 GGUF) through candle-repro's Llama against stock candle's
//! `quantized_llama` on the same file, same run: a 128-token prefill and one decode step
//! after a 128-token prompt, ours in f32 and bf16.
//!
//! `cargo bench --bench llama` (the model is fetched by `scripts/fetch-model.sh`; the
//! dequantized-stock variants and peak memory are in `cargo run --release --example
//! generate -- --bench`, which runs each model in its own process).

use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, Tensor};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::PathBuf;

const PROMPT: usize = 128;

fn model_path() -> PathBuf {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-model.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .output()
        .expect("run scripts/fetch-model.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The two models behind one interface: forward of `ids` at `pos`, last-position logits.
enum Model {
    Ours(candle_repro::models::llama::ModelWeights),
    Stock(candle_transformers::models::quantized_llama::ModelWeights),
}

impl Model {
    fn load(path: &PathBuf, ours: Option<DType>) -> Model {
        let mut f = std::fs::File::open(path).unwrap();
        let c = gguf_file::Content::read(&mut f).unwrap();
        match ours {
            Some(dt) => Model::Ours(
                candle_repro::models::llama::ModelWeights::from_gguf_dtype(
                    c,
                    &mut f,
                    &Device::Cpu,
                    dt,
                )
                .unwrap(),
            ),
            None => Model::Stock(
                candle_transformers::models::quantized_llama::ModelWeights::from_gguf(
                    c,
                    &mut f,
                    &Device::Cpu,
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
            Model::Ours(m) => m.forward(&x, pos).unwrap(),
            Model::Stock(m) => m.forward(&x, pos).unwrap(),
        }
    }

    fn clear(&mut self) {
        match self {
            Model::Ours(m) => m.clear_kv_cache(),
            Model::Stock(m) => m.clear_kv_cache(),
        }
    }
}

fn bench(c: &mut Criterion) {
    let path = model_path();
    // Token ids spread over the vocabulary (49152), fixed.
    let ids: Vec<u32> = (0..PROMPT as u32 + 1)
        .map(|i| (i * 7919 + 11) % 49152)
        .collect();
    for (name, ours) in [
        ("candle-repro_f32", Some(DType::F32)),
        ("candle-repro_bf16", Some(DType::BF16)),
        ("stock_q4_1", None),
    ] {
        let mut m = Model::load(&path, ours);
        let mut g = c.benchmark_group(format!("llama_{name}"));
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
