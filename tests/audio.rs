//! The audio front end (`candle_repro::audio`): its tables against an independent exact
//! oracle (mpmath, `tools/audio/tables.py`), the power spectrum against MPFR, the framing
//! against torch.stft's definition written out naively, Whisper's recipe step by step,
//! invariance (threads, batch, frame ranges), bad input, the drop-in's shape, golden
//! hashes, and every audio kernel on the emulated device.

mod common;

use candle_core::{DType, Device, IndexOp, Tensor};
use candle_repro::audio::{
    PadMode, hann_window, log_mel_spectrogram, mel_filters, pcm_to_mel_bins, power_spectrum, stft,
    stft_with,
};
use candle_repro::fft::{Norm, Precision, rfft};

fn read_f32(name: &str) -> Vec<f32> {
    let path = format!("{}/tests/data/audio/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Bit equality with a short report (how many differ, the first few) instead of a dump.
#[track_caller]
fn same(got: &[u32], want: &[u32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let differ: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    for &i in differ.iter().take(4) {
        eprintln!(
            "{what}[{i}]: got {:e} ({:#x}), want {:e} ({:#x})",
            f32::from_bits(got[i]),
            got[i],
            f32::from_bits(want[i]),
            want[i]
        );
    }
    assert!(
        differ.is_empty(),
        "{what}: {} of {} differ",
        differ.len(),
        got.len()
    );
}

/// A test signal: a mix of tones, a chirp and noise, with a quiet stretch and a loud click.
fn signal(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let noise = (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            let t = i as f32 / 16000.0;
            let tone = (t * 2200.0).fract() - 0.5; // a sawtooth, no library sine needed
            let click = if i % 5000 == 17 { 0.9 } else { 0.0 };
            let quiet = if (i / 4000) % 5 == 3 { 1e-6 } else { 1.0 };
            quiet * (0.3 * tone + 0.05 * noise) + click
        })
        .collect()
}

#[test]
fn tables_are_the_exact_values_rounded_once() {
    // The oracle: mpmath at 256 bits, rounded once to f32 (tools/audio/tables.py).
    same(
        &bits(&hann_window(400, true).unwrap()),
        &bits(&read_f32("hann_400.f32")),
        "bits",
    );
    for m in [80, 128] {
        let ours = mel_filters(16000, 400, m).unwrap();
        let want = read_f32(&format!("mel_16000_400_{m}.f32"));
        let differ = bits(&ours)
            .iter()
            .zip(bits(&want))
            .filter(|(a, b)| **a != *b)
            .count();
        for (i, (a, b)) in ours.iter().zip(&want).enumerate() {
            if a.to_bits() != b.to_bits() {
                eprintln!(
                    "mel_{m}[{}][{}]: ours {a:e} ({:#x}), exact {b:e} ({:#x})",
                    i / 201,
                    i % 201,
                    a.to_bits(),
                    b.to_bits()
                );
            }
        }
        assert_eq!(differ, 0, "mel_16000_400_{m}: {differ} entries differ");
    }
    // The rounding test decides every entry of the usual configurations.
    for (sr, n_fft, m) in [
        (16000, 400, 80),
        (16000, 400, 128),
        (16000, 512, 64),
        (22050, 2048, 128),
        (44100, 4096, 128),
        (8000, 256, 40),
        (1000, 64, 10),
    ] {
        let (hann, mel) = candle_repro::audio::tables_undecided(sr, n_fft, m).unwrap();
        assert_eq!((hann, mel), (0, 0), "undecided entries at {sr} {n_fft} {m}");
    }
}

/// torch.stft's frames written out: pad the signal (reflect or zeros), slice, multiply.
fn naive_frames(x: &[f32], w: &[f32], hop: usize, center: Option<PadMode>) -> Vec<Vec<f32>> {
    let n_fft = w.len();
    let padded: Vec<f32> = match center {
        None => x.to_vec(),
        Some(mode) => {
            let p = n_fft / 2;
            let mut v = Vec::new();
            for i in (1..=p).rev() {
                v.push(if mode == PadMode::Reflect { x[i] } else { 0.0 });
            }
            v.extend_from_slice(x);
            for i in 0..p {
                v.push(if mode == PadMode::Reflect {
                    x[x.len() - 2 - i]
                } else {
                    0.0
                });
            }
            v
        }
    };
    (0..=(padded.len() - n_fft) / hop)
        .map(|t| (0..n_fft).map(|j| padded[t * hop + j] * w[j]).collect())
        .collect()
}

#[test]
fn stft_is_torch_stft_frame_by_frame() {
    let dev = Device::Cpu;
    for (len, n_fft, hop) in [(1000, 400, 160), (301, 64, 7), (64, 64, 64), (513, 17, 5)] {
        let x = signal(len, len as u64);
        let w = hann_window(n_fft, true).unwrap();
        let xt = Tensor::new(x.as_slice(), &dev).unwrap();
        let wt = Tensor::new(w.as_slice(), &dev).unwrap();
        for center in [Some(PadMode::Reflect), Some(PadMode::Constant), None] {
            let frames = naive_frames(&x, &w, hop, center);
            let got = stft(
                &xt,
                n_fft,
                hop,
                &wt,
                center.is_some(),
                center.unwrap_or(PadMode::Reflect),
            )
            .unwrap();
            let bins = n_fft / 2 + 1;
            assert_eq!(
                got.dims(),
                [bins, frames.len(), 2],
                "{len} {n_fft} {hop} {center:?}"
            );
            for (t, f) in frames.iter().enumerate() {
                let want = rfft(&Tensor::new(f.as_slice(), &dev).unwrap(), Norm::Backward).unwrap();
                let got_t = got.i((.., t, ..)).unwrap();
                same(
                    &common::bits(&got_t),
                    &common::bits(&want),
                    &format!("frame {t} of {len} {n_fft} {hop} {center:?}"),
                );
            }
        }
    }
}

#[cfg(repro_workspace)]
#[test]
fn power_is_the_exact_value_rounded_once() {
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut pairs: Vec<(f32, f32)> = Vec::new();
    // Random bit patterns (every binade, subnormals, NaN, inf), ordinary magnitudes, and
    // pairs whose exact sum sits at or next to an f32 midpoint: (1 + k 2^-23, 2^-12 m).
    for _ in 0..20000 {
        let v = next();
        pairs.push((f32::from_bits(v as u32), f32::from_bits((v >> 32) as u32)));
        let a = ((v & 0xFFFF) as f32 - 32768.0) / 1024.0;
        let b = (((v >> 16) & 0xFFFF) as f32 - 32768.0) * 2f32.powi(-(((v >> 32) % 40) as i32));
        pairs.push((a, b));
        let k = (v >> 40) % 64;
        let one = 1.0 + k as f32 * 2f32.powi(-23);
        pairs.push((one, 2f32.powi(-12) * ((v >> 20) % 4) as f32));
        pairs.push((one, 2f32.powi(-12 - ((v >> 8) % 30) as i32)));
    }
    for s in [
        0.0,
        -0.0,
        1e-45,
        1.1754942e-38,
        3.4028235e38,
        f32::INFINITY,
        f32::NAN,
    ] {
        for t in [0.0, 1e-45, 1.0, -3.4028235e38, f32::NEG_INFINITY, f32::NAN] {
            pairs.push((s, t));
        }
    }
    let z: Vec<f32> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    let zt = Tensor::from_vec(z, (pairs.len(), 2), &Device::Cpu).unwrap();
    let got = power_spectrum(&zt).unwrap().to_vec1::<f32>().unwrap();
    let mut wrong = 0;
    for (&(a, b), g) in pairs.iter().zip(&got) {
        let want = if a.is_nan() || b.is_nan() {
            f32::from_bits(0x7FC0_0000)
        } else {
            let (a, b) = (a as f64, b as f64);
            mpfr_oracle::dot(&[a, b], &[a, b], None, mpfr_oracle::F32) as f32
        };
        if want.to_bits() != g.to_bits() {
            wrong += 1;
            if wrong < 5 {
                eprintln!("({a:e}, {b:e}): got {g:e}, want {want:e}");
            }
        }
    }
    println!("power: {} pairs, {wrong} misrounded", pairs.len());
    assert_eq!(wrong, 0);
}

/// Whisper's recipe from the public pieces, in torch's order: a second, independent
/// composition of the same definition (the op fuses framing, power and the final map).
fn recipe_by_steps(x: &[f32], filters: &[f32], n_mels: usize) -> Vec<f32> {
    let dev = Device::Cpu;
    let w = Tensor::new(hann_window(400, true).unwrap().as_slice(), &dev).unwrap();
    let xt = Tensor::new(x, &dev).unwrap();
    let s = stft_with(
        &xt,
        400,
        160,
        &w,
        true,
        PadMode::Reflect,
        Precision::F64Internal,
    )
    .unwrap();
    let frames = s.dim(1).unwrap() - 1;
    let s = s.narrow(1, 0, frames).unwrap(); // stft[..., :-1]
    let p = power_spectrum(&s).unwrap(); // (201, frames)
    let f = Tensor::from_slice(filters, (n_mels, 201), &dev).unwrap();
    let mel = candle_repro::matmul(&f, &p).unwrap().flatten_all().unwrap();
    let floor = 1e-10f32;
    let logs: Vec<f32> = mel
        .to_vec1::<f32>()
        .unwrap()
        .iter()
        .map(|&m| candle_repro::math::log10(m.max(floor)))
        .collect();
    let top = logs.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    logs.iter()
        .map(|&v| (v.max(top - 8.0) + 4.0) / 4.0)
        .collect()
}

#[test]
fn log_mel_is_whispers_recipe_step_by_step() {
    let filters = mel_filters(16000, 400, 80).unwrap();
    for len in [401, 4000, 16000, 23456] {
        let x = signal(len, 7 + len as u64);
        let want = recipe_by_steps(&x, &filters, 80);
        let f = Tensor::from_slice(&filters, (80, 201), &Device::Cpu).unwrap();
        let got = log_mel_spectrogram(
            &Tensor::new(x.as_slice(), &Device::Cpu).unwrap(),
            &f,
            400,
            160,
        )
        .unwrap();
        assert_eq!(got.dims(), [80, len / 160]);
        same(
            &bits(&got.flatten_all().unwrap().to_vec1::<f32>().unwrap()),
            &bits(&want),
            &format!("len {len}"),
        );
    }
}

#[test]
fn pcm_to_mel_has_candles_shape() {
    let filters = mel_filters(16000, 400, 80).unwrap();
    for len in [
        201,
        1000,
        159 * 160,
        1500 * 160,
        1500 * 160 + 159,
        1500 * 160 + 160,
    ] {
        let x = signal(len, len as u64);
        let ours = pcm_to_mel_bins(80, &x, &filters).unwrap();
        let stock =
            candle_transformers::models::whisper::audio::pcm_to_mel(&whisper_tiny(), &x, &filters);
        assert_eq!(ours.len(), stock.len(), "len {len}");
    }
    // The features of the signal's frames do not depend on the padding after it (the
    // padding's frames sit at the floor), so pcm_to_mel is log_mel_spectrogram of the
    // padded signal.
    let x = signal(32000, 3);
    let ours = pcm_to_mel_bins(80, &x, &filters).unwrap();
    let frames = ours.len() / 80;
    let mut padded = x.clone();
    padded.resize(frames * 160, 0.0);
    let f = Tensor::from_slice(&filters, (80, 201), &Device::Cpu).unwrap();
    let direct = log_mel_spectrogram(
        &Tensor::new(padded.as_slice(), &Device::Cpu).unwrap(),
        &f,
        400,
        160,
    )
    .unwrap()
    .flatten_all()
    .unwrap()
    .to_vec1::<f32>()
    .unwrap();
    same(&bits(&ours), &bits(&direct), "bits");
}

fn whisper_tiny() -> candle_transformers::models::whisper::Config {
    candle_transformers::models::whisper::Config {
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
    }
}

#[test]
fn same_bits_for_any_threads_batch_and_frame_range() {
    let filters = mel_filters(16000, 400, 80).unwrap();
    let x = signal(48000, 11);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let alone = one.install(|| pcm_to_mel_bins(80, &x, &filters).unwrap());
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    same(
        &bits(&alone),
        &bits(&two.install(|| pcm_to_mel_bins(80, &x, &filters).unwrap())),
        "bits",
    );
    #[cfg(feature = "whisper")]
    same(
        &bits(&alone),
        &bits(&candle_repro::audio::pcm_to_mel(&whisper_tiny(), &x, &filters).unwrap()),
        "bits",
    );
    // A batch of three signals: each example's features are its own.
    let dev = Device::Cpu;
    let f = Tensor::from_slice(&filters, (80, 201), &dev).unwrap();
    let xs: Vec<Vec<f32>> = (0..3).map(|s| signal(8000, 20 + s)).collect();
    let batch = Tensor::new(xs.clone(), &dev).unwrap();
    let all = log_mel_spectrogram(&batch, &f, 400, 160).unwrap();
    for (i, x) in xs.iter().enumerate() {
        let single =
            log_mel_spectrogram(&Tensor::new(x.as_slice(), &dev).unwrap(), &f, 400, 160).unwrap();
        same(
            &common::bits(&all.get(i).unwrap()),
            &common::bits(&single),
            &format!("example {i}"),
        );
    }
    // A range of frames: the STFT of a slice holding frames 10..30 equals those frames.
    let w = Tensor::new(hann_window(400, true).unwrap().as_slice(), &dev).unwrap();
    let xt = Tensor::new(x.as_slice(), &dev).unwrap();
    let whole = stft(&xt, 400, 160, &w, false, PadMode::Reflect).unwrap();
    let part = stft(
        &xt.narrow(0, 1600, 19 * 160 + 400).unwrap(),
        400,
        160,
        &w,
        false,
        PadMode::Reflect,
    )
    .unwrap();
    same(
        &common::bits(&whole.narrow(1, 10, 20).unwrap()),
        &common::bits(&part),
        "bits",
    );
    // Strided input (every other sample of a wider buffer) equals its contiguous copy.
    let wide = Tensor::new(signal(16000, 5).as_slice(), &dev)
        .unwrap()
        .reshape((8000, 2))
        .unwrap();
    let strided = wide.i((.., 0)).unwrap();
    same(
        &common::bits(&log_mel_spectrogram(&strided, &f, 400, 160).unwrap()),
        &common::bits(&log_mel_spectrogram(&strided.contiguous().unwrap(), &f, 400, 160).unwrap()),
        "bits",
    );
}

#[test]
fn special_values_are_defined() {
    let dev = Device::Cpu;
    let filters = mel_filters(16000, 400, 80).unwrap();
    let f = Tensor::from_slice(&filters, (80, 201), &dev).unwrap();
    // Silence: every energy at the floor, log10 = -10 (rounded), so every output is
    // (-10 + 4) / 4 = -1.5.
    let zero = Tensor::zeros(4000, DType::F32, &dev).unwrap();
    let mel = log_mel_spectrogram(&zero, &f, 400, 160).unwrap();
    let v = mel.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    let floor = candle_repro::math::log10(1e-10f32);
    assert!(v.iter().all(|&x| x == (floor + 4.0) / 4.0), "{:?}", &v[..4]);
    // One NaN sample: the whole example is the canonical NaN (torch's max propagates it).
    let mut x = signal(4000, 1);
    x[2000] = f32::NAN;
    let mel = log_mel_spectrogram(&Tensor::new(x.as_slice(), &dev).unwrap(), &f, 400, 160).unwrap();
    assert!(
        mel.flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .all(|v| v.to_bits() == 0x7FC0_0000)
    );
    // pcm_to_mel refuses it.
    let err = pcm_to_mel_bins(80, &x, &filters).unwrap_err().to_string();
    assert!(err.contains("sample 2000"), "{err}");
}

#[test]
fn bad_input_is_an_error() {
    let dev = Device::Cpu;
    let x = Tensor::new(signal(1000, 2).as_slice(), &dev).unwrap();
    let w = |n: usize| Tensor::new(hann_window(n, true).unwrap().as_slice(), &dev).unwrap();
    let f = Tensor::zeros((80, 201), DType::F32, &dev).unwrap();
    let cases: Vec<(&str, candle_core::Result<Tensor>)> = vec![
        ("n_fft 1", stft(&x, 1, 1, &w(1), true, PadMode::Reflect)),
        ("hop 0", stft(&x, 16, 0, &w(16), true, PadMode::Reflect)),
        (
            "window length",
            stft(&x, 16, 4, &w(15), true, PadMode::Reflect),
        ),
        (
            "too short for reflect",
            stft(
                &x.narrow(0, 0, 8).unwrap(),
                16,
                4,
                &w(16),
                true,
                PadMode::Reflect,
            ),
        ),
        (
            "too short for a frame",
            stft(
                &x.narrow(0, 0, 8).unwrap(),
                16,
                4,
                &w(16),
                false,
                PadMode::Reflect,
            ),
        ),
        (
            "f16 signal",
            stft(
                &x.to_dtype(DType::F16).unwrap(),
                16,
                4,
                &w(16),
                true,
                PadMode::Reflect,
            ),
        ),
        (
            "scalar signal",
            stft(&x.get(0).unwrap(), 16, 4, &w(16), true, PadMode::Reflect),
        ),
        (
            "filters shape",
            log_mel_spectrogram(&x, &f.narrow(1, 0, 200).unwrap(), 400, 160),
        ),
        (
            "filters dtype",
            log_mel_spectrogram(&x, &f.to_dtype(DType::BF16).unwrap(), 400, 160),
        ),
        (
            "too short for Whisper",
            log_mel_spectrogram(&x.narrow(0, 0, 200).unwrap(), &f, 400, 160),
        ),
        ("power of reals", power_spectrum(&x)),
    ];
    for (what, r) in cases {
        match r {
            Ok(t) => panic!("{what}: accepted, gave {:?}", t.dims()),
            Err(e) => println!("{what}: {e}"),
        }
    }
    let filters = vec![0f32; 80 * 201];
    assert!(pcm_to_mel_bins(80, &[1.0, f32::INFINITY], &filters).is_err());
    assert!(pcm_to_mel_bins(80, &[0.0; 10], &filters[1..]).is_err());
    assert!(pcm_to_mel_bins(0, &[0.0; 10], &[]).is_err());
    assert!(mel_filters(0, 400, 80).is_err());
    assert!(mel_filters(16000, 1, 80).is_err());
    assert!(mel_filters(16000, 400, 0).is_err());
    // Empty input: a batch of no signals is an empty output.
    let empty = Tensor::zeros((0, 1000), DType::F32, &dev).unwrap();
    assert_eq!(
        log_mel_spectrogram(&empty, &f, 400, 160).unwrap().dims(),
        [0, 80, 6]
    );
    // An empty signal is too short (nothing to reflect), also through pcm_to_mel: its
    // padding makes it 3000 frames of silence, as candle.
    assert!(
        stft(
            &empty.narrow(1, 0, 0).unwrap(),
            16,
            4,
            &w(16),
            true,
            PadMode::Reflect
        )
        .is_err()
    );
    assert_eq!(pcm_to_mel_bins(80, &[], &filters).unwrap().len(), 80 * 1500);
}

#[test]
fn golden_hashes() {
    // Computed by this code once its tests against the oracles above passed; a change is
    // a breaking change (docs/CONTRACT.md).
    let filters = mel_filters(16000, 400, 128).unwrap();
    let x = signal(3 * 16000 + 123, 42);
    let mel = pcm_to_mel_bins(128, &x, &filters).unwrap();
    let dev = Device::Cpu;
    let w = Tensor::new(hann_window(400, true).unwrap().as_slice(), &dev).unwrap();
    let s = stft(
        &Tensor::new(x.as_slice(), &dev).unwrap(),
        400,
        160,
        &w,
        true,
        PadMode::Reflect,
    )
    .unwrap();
    let got = [common::fnv1a(&bits(&mel)), common::fnv1a(&common::bits(&s))];
    println!("golden: {got:#018x?}");
    // The STFT hash changed with the mixed-radix FFT (contract 0.3: its 400-point frames
    // went through Bluestein before); the log-mel hash did not (its FFT runs at
    // F64Internal, rounded once to f32: the same f32 values here either way).
    assert_eq!(got, [0x265b_548f_68d2_7f92, 0x88b3_8130_162f_2283]);
}

/// Every audio kernel through its launch code on the emulated device, bit for bit against
/// the CPU half.
#[cfg(repro_workspace)]
mod emulated {
    use super::*;
    use crate::common::emu::{Emu, download, upload};
    use candle_repro::audio::{Framing, cuda};

    #[test]
    fn frames_power_and_finish_match_the_cpu() {
        let dev = Device::Cpu;
        for (len, n_fft, hop, center) in [
            (1000, 400, 160, Some(PadMode::Reflect)),
            (301, 64, 7, Some(PadMode::Constant)),
            (513, 17, 5, None),
        ] {
            let xs: Vec<Vec<f32>> = (0..3).map(|s| signal(len, s + len as u64)).collect();
            let x = Tensor::new(xs, &dev).unwrap();
            let w = Tensor::new(hann_window(n_fft, true).unwrap().as_slice(), &dev).unwrap();
            let g = Framing::new(len, n_fft, hop, center, false).unwrap();
            for (view, xv) in [
                ("contiguous", x.clone()),
                ("strided", x.t().unwrap().contiguous().unwrap().t().unwrap()),
            ] {
                let (xb, xl) = upload(&xv);
                let (wb, wl) = upload(&w);
                let out = cuda::frames(&Emu, (&xb, &xl), (&wb, &wl), &g).unwrap();
                let got = download(&out, (3, g.frames, n_fft));
                let spec = stft(
                    &xv,
                    n_fft,
                    hop,
                    &w,
                    center.is_some(),
                    center.unwrap_or(PadMode::Reflect),
                )
                .unwrap();
                // The CPU's frames are what the STFT transformed: compare the spectra.
                let want = rfft(&got, Norm::Backward).unwrap().transpose(1, 2).unwrap();
                same(
                    &common::bits(&want),
                    &common::bits(&spec),
                    &format!("frames {len} {view}"),
                );
                // Power of the spectrum, on the device against the CPU.
                let (sb, sl) = upload(&spec);
                let p = cuda::power(&Emu, (&sb, &sl)).unwrap();
                let dims = &spec.dims()[..3];
                same(
                    &common::bits(&download(&p, dims)),
                    &common::bits(&power_spectrum(&spec).unwrap()),
                    &format!("power {len} {view}"),
                );
            }
        }
        // The final map, with NaN, silence and ordinary examples in one batch.
        let filters =
            Tensor::from_slice(&mel_filters(16000, 400, 80).unwrap(), (80, 201), &dev).unwrap();
        let mut xs: Vec<Vec<f32>> = (0..3).map(|s| signal(3200, 30 + s)).collect();
        xs[1][100] = f32::NAN;
        xs[2].iter_mut().for_each(|v| *v *= 1e-30);
        let x = Tensor::new(xs, &dev).unwrap();
        let want = log_mel_spectrogram(&x, &filters, 400, 160).unwrap();
        // The mel energies the CPU op finishes: rebuilt from the public steps.
        let w = Tensor::new(hann_window(400, true).unwrap().as_slice(), &dev).unwrap();
        let s = stft_with(
            &x,
            400,
            160,
            &w,
            true,
            PadMode::Reflect,
            Precision::F64Internal,
        )
        .unwrap();
        let s = s
            .narrow(2, 0, s.dim(2).unwrap() - 1)
            .unwrap()
            .transpose(1, 2)
            .unwrap();
        let mel =
            candle_repro::broadcast_matmul(&power_spectrum(&s).unwrap(), &filters.t().unwrap())
                .unwrap();
        let (mb, ml) = upload(&mel);
        let out = cuda::log_mel_finish(&Emu, (&mb, &ml)).unwrap();
        same(
            &common::bits(&download(&out, want.dims())),
            &common::bits(&want),
            "bits",
        );
    }

    /// The whole of `log_mel_spectrogram` on the device: the audio kernels, the FFT's and
    /// the matmul's, each through its launch code, chained as the op chains them on a GPU.
    #[test]
    fn whole_log_mel_on_the_device() {
        use candle_repro::fft::{cuda::fft_op, ops::FftKind};
        let dev = Device::Cpu;
        let filters =
            Tensor::from_slice(&mel_filters(16000, 400, 80).unwrap(), (80, 201), &dev).unwrap();
        let xs: Vec<Vec<f32>> = (0..2).map(|s| signal(4000, 50 + s)).collect();
        let x = Tensor::new(xs, &dev).unwrap();
        let want = log_mel_spectrogram(&x, &filters, 400, 160).unwrap();
        let g = Framing::new(4000, 400, 160, Some(PadMode::Reflect), true).unwrap();
        let w = Tensor::new(hann_window(400, true).unwrap().as_slice(), &dev).unwrap();
        let (xb, xl) = upload(&x);
        let (wb, wl) = upload(&w);
        let frames = cuda::frames(&Emu, (&xb, &xl), (&wb, &wl), &g).unwrap();
        let fl = candle_core::Layout::contiguous((2 * g.frames, 400));
        let spec = fft_op(
            &Emu,
            FftKind::Rfft,
            400,
            Norm::Backward,
            Precision::F64Internal,
            false,
            &frames,
            &fl,
        )
        .unwrap();
        let sl = candle_core::Layout::contiguous((2 * g.frames, 201, 2));
        let power = cuda::power(&Emu, (&spec, &sl)).unwrap();
        let pl = candle_core::Layout::contiguous((2 * g.frames, 201));
        let ft = filters.t().unwrap();
        let (fb, fl) = upload(&ft);
        let (mel, _) = candle_repro::matmul::cuda::matmul(
            &Emu,
            (&power, &pl),
            (&fb, &fl),
            None,
            DType::F32,
            None,
        )
        .unwrap();
        let ml = candle_core::Layout::contiguous((2, g.frames, 80));
        let out = cuda::log_mel_finish(&Emu, (&mel, &ml)).unwrap();
        same(
            &common::bits(&download(&out, want.dims())),
            &common::bits(&want),
            "bits",
        );
    }
}
