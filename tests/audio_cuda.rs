//! The audio front end on CUDA gives the CPU's bits: Whisper's log-mel features of four
//! 30 s signals (128 mels, 4 x 128 x 3000 values, one of them with a NaN sample) and their
//! STFT (4 x 201 x 3001 complex values), and the three audio kernels alone through the
//! tensor ops. Without the `cuda` feature or a device the test prints "skipped: no CUDA
//! device".
//!
//! `cargo test --release --features cuda --test audio_cuda -- --nocapture`

mod common;

use candle_core::{Device, Tensor};
use candle_repro::audio::{
    PadMode, hann_window, log_mel_spectrogram, mel_filters, power_spectrum, stft,
};
use common::{bits, cuda_device};

/// Speech-like test audio: a sawtooth, noise, a quiet stretch and clicks.
fn signal(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let noise = (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            let tone = (i as f32 * (2200.0 / 16000.0)).fract() - 0.5;
            let click = if i % 5000 == 17 { 0.9 } else { 0.0 };
            let quiet = if (i / 4000) % 5 == 3 { 1e-6 } else { 1.0 };
            quiet * (0.3 * tone + 0.05 * noise) + click
        })
        .collect()
}

#[track_caller]
fn same(got: &Tensor, want: &Tensor, what: &str) {
    let (g, w) = (bits(got), bits(want));
    assert_eq!(g.len(), w.len(), "{what}: lengths");
    let differ = g.iter().zip(&w).filter(|(a, b)| a != b).count();
    assert_eq!(differ, 0, "{what}: {differ} of {} values differ", g.len());
}

#[test]
fn cuda_gives_the_cpu_bits() {
    let Some(gpu) = cuda_device() else {
        return;
    };
    let cpu = Device::Cpu;
    let mut xs: Vec<Vec<f32>> = (0..4).map(|s| signal(30 * 16000, 90 + s)).collect();
    xs[3][12345] = f32::NAN;
    let x = Tensor::new(xs, &cpu).unwrap();
    let f = Tensor::from_vec(mel_filters(16000, 400, 128).unwrap(), (128, 201), &cpu).unwrap();
    let (xg, fg) = (x.to_device(&gpu).unwrap(), f.to_device(&gpu).unwrap());
    let want = log_mel_spectrogram(&x, &f, 400, 160).unwrap();
    same(
        &log_mel_spectrogram(&xg, &fg, 400, 160).unwrap(),
        &want,
        "log-mel",
    );
    let w = Tensor::new(hann_window(400, true).unwrap().as_slice(), &cpu).unwrap();
    let wg = w.to_device(&gpu).unwrap();
    for mode in [PadMode::Reflect, PadMode::Constant] {
        let s = stft(&x, 400, 160, &w, true, mode).unwrap();
        let sg = stft(&xg, 400, 160, &wg, true, mode).unwrap();
        same(&sg, &s, &format!("stft {mode:?}"));
        same(
            &power_spectrum(&sg).unwrap(),
            &power_spectrum(&s).unwrap(),
            "power",
        );
    }
    println!(
        "CUDA: {} log-mel values, 2 x {} STFT values: 0 differing bits",
        want.elem_count(),
        x.dim(0).unwrap() * 201 * 3001 * 2
    );
}
