//! Whisper's log-mel features of raw 16 kHz audio, ours (`candle_repro::audio::pcm_to_mel`)
//! and stock candle's (`candle_transformers::models::whisper::audio::pcm_to_mel`), with the
//! time of each (best of `--runs`, default 5). `tools/audio/check_logmel.py` runs it on
//! synthesized speech and compares both with an f64 numpy reference.
//!
//! Usage: `cargo run --release --example audio_features -- [--runs N] [--mels 80|128]
//! [--filters FILE] [--out DIR] FILE.f32...` (little-endian f32 samples at 16 kHz). Without
//! `--filters` the bank is `audio::mel_filters(16000, 400, n_mels)`. Each input `X.f32`
//! gives `DIR/X.ours.f32` and `DIR/X.candle.f32` (n_mels x frames, row-major).

use candle_transformers::models::whisper::{Config, audio as stock};
use std::path::PathBuf;
use std::time::Instant;

fn read_f32(path: &PathBuf) -> Vec<f32> {
    std::fs::read(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn write_f32(path: &PathBuf, v: &[f32]) {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (T, f64) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(v);
    }
    (out.expect("at least one run"), best)
}

fn main() -> candle_core::Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut runs, mut mels, mut filters, mut out) = (5, 80, None, PathBuf::from("."));
    let mut inputs = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--mels" => mels = args.next().and_then(|v| v.parse().ok()).expect("--mels N"),
            "--filters" => filters = Some(PathBuf::from(args.next().expect("--filters FILE"))),
            "--out" => out = PathBuf::from(args.next().expect("--out DIR")),
            _ => inputs.push(PathBuf::from(a)),
        }
    }
    let filters = match filters {
        Some(p) => read_f32(&p),
        None => candle_repro::audio::mel_filters(16000, 400, mels)?,
    };
    let cfg = Config {
        num_mel_bins: mels,
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
    println!(
        "{} threads (rayon); best of {runs}",
        rayon::current_num_threads()
    );
    for path in inputs {
        let pcm = read_f32(&path);
        let (ours, t_ours) = best_of(runs, || {
            candle_repro::audio::pcm_to_mel(&cfg, &pcm, &filters)
        });
        let ours = ours?;
        let (theirs, t_stock) = best_of(runs, || stock::pcm_to_mel(&cfg, &pcm, &filters));
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        write_f32(&out.join(format!("{stem}.ours.f32")), &ours);
        write_f32(&out.join(format!("{stem}.candle.f32")), &theirs);
        println!(
            "{stem}: {:.2} s of audio, {} frames: ours {:.1} ms, stock candle {:.1} ms ({:.2}x stock's speed)",
            pcm.len() as f64 / 16000.0,
            ours.len() / mels,
            t_ours * 1e3,
            t_stock * 1e3,
            t_stock / t_ours
        );
    }
    Ok(())
}
