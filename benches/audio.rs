//! Whisper's log-mel front end against stock candle's, on the CPU, same run: `pcm_to_mel` of
//! 30 s of 16 kHz audio (4,500 frames of 400 samples with candle's padding, 80 mels), and
//! the STFT alone (torch.stft's shape, f32 FFT) of the same signal.
//!
//! `cargo bench --bench audio` (RAYON_NUM_THREADS=1 for one thread; stock candle's
//! `pcm_to_mel` uses at least 2 threads whatever candle's thread count says).

mod common;

use candle_core::{Device, Tensor};
use candle_transformers::models::whisper::{Config, audio as stock};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let pcm: Vec<f32> = common::input(30 * 16000, 0.5);
    let filters = candle_repro::audio::mel_filters(16000, 400, 80).unwrap();
    let cfg = Config {
        num_mel_bins: 80,
        max_source_positions: 1500,
        d_model: 384,
        encoder_attention_heads: 6,
        encoder_layers: 4,
        vocab_size: 51865,
        max_target_positions: 448,
        decoder_attention_heads: 6,
        decoder_layers: 4,
        suppress_tokens: vec![],
    };
    let mut g = c.benchmark_group("pcm_to_mel_30s");
    g.sample_size(10);
    g.throughput(Throughput::Elements(pcm.len() as u64));
    g.bench_function("candle_repro", |b| {
        b.iter(|| candle_repro::audio::pcm_to_mel(&cfg, black_box(&pcm), &filters).unwrap())
    });
    g.bench_function("stock_candle", |b| {
        b.iter(|| stock::pcm_to_mel(&cfg, black_box(&pcm), &filters))
    });
    g.finish();

    let x = Tensor::new(pcm.as_slice(), &Device::Cpu).unwrap();
    let w = Tensor::new(
        candle_repro::audio::hann_window(400, true)
            .unwrap()
            .as_slice(),
        &Device::Cpu,
    )
    .unwrap();
    let mut g = c.benchmark_group("stft_30s_400_160");
    g.sample_size(10);
    g.throughput(Throughput::Elements(pcm.len() as u64));
    g.bench_function("candle_repro", |b| {
        b.iter(|| {
            candle_repro::audio::stft(
                black_box(&x),
                400,
                160,
                &w,
                true,
                candle_repro::audio::PadMode::Reflect,
            )
            .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
