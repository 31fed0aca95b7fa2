#!/usr/bin/env python3
"""Whisper's log-mel features of real speech and other signals: ours and stock candle's
`pcm_to_mel` against an independent f64 reference (numpy: the Hann window and the Slaney
filters by their formulas, numpy.fft.rfft, Whisper's recipe in f64).

Signals (16 kHz): sentences synthesized by Debian's espeak-ng (22.05 kHz, resampled here
by a band-limited FFT resampler), the same speech with noise, white noise, silence, a
chirp. Each is passed to `examples/audio_features.rs` (ours and candle's, timed), and both
outputs are compared with the reference on the same zero-padded signal (candle's frame
count). Prints the max abs difference per signal and overall; exits non-zero if ours is
above 1e-4 or not below candle's.

Usage: python3 tools/audio/check_logmel.py [--mels 80] [--runs 5] [--filters whisper.npz]
Needs: numpy (pip), espeak-ng (apt-get install espeak-ng).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SR, N_FFT, HOP = 16000, 400, 160

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Reproducible inference gives the same bits on every machine.",
    "She sells sea shells by the sea shore, and the shells she sells are surely sea shells.",
    "In nineteen sixty nine, two people walked on the moon for the first time.",
]


def resample(x, sr_in, sr_out):
    """Band-limited resampling by the FFT (truncating the spectrum)."""
    n_out = int(round(len(x) * sr_out / sr_in))
    spec = np.fft.rfft(x)
    spec = spec[: n_out // 2 + 1]
    return np.fft.irfft(spec, n_out) * (n_out / len(x))


def speech(text, tmp):
    path = Path(tmp) / "speech.wav"
    subprocess.run(["espeak-ng", "-s", "150", "-w", str(path), text], check=True)
    with wave.open(str(path)) as w:
        sr = w.getframerate()
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768
    return resample(x, sr, SR)


def signals(tmp):
    rng = np.random.default_rng(2026)
    talk = np.concatenate([speech(s, tmp) for s in SENTENCES])
    t = np.arange(10 * SR) / SR
    chirp = 0.5 * np.sin(2 * np.pi * (100 * t + (7000 - 100) / (2 * 10) * t**2))
    return {
        "speech": talk,
        "speech_noise": talk + 0.02 * rng.standard_normal(len(talk)),
        "noise": 0.1 * rng.standard_normal(7 * SR),
        "silence": np.zeros(5 * SR),
        "chirp": chirp,
        "speech_30s": np.resize(talk, 30 * SR),
    }


def mel_filters_f64(n_mels):
    f_sp, logstep = 200.0 / 3, np.log(6.4) / 27

    def hz_to_mel(f):
        return f / f_sp if f < 1000 else 15 + np.log(f / 1000) / logstep

    def mel_to_hz(m):
        return np.where(m < 15, f_sp * m, 1000 * np.exp(logstep * (m - 15)))

    mels = np.linspace(0, hz_to_mel(SR / 2), n_mels + 2)
    hz = mel_to_hz(mels)
    f = np.arange(N_FFT // 2 + 1) * SR / N_FFT
    lower = (f[None, :] - hz[:-2, None]) / (hz[1:-1] - hz[:-2])[:, None]
    upper = (hz[2:, None] - f[None, :]) / (hz[2:] - hz[1:-1])[:, None]
    w = np.maximum(0, np.minimum(lower, upper))
    return w * (2 / (hz[2:] - hz[:-2]))[:, None]


def frames_of(n):
    """candle's frame count for n samples."""
    f = n // HOP
    f = -(-f // 1500) * 1500
    return f + 1500


def reference(x32, filters):
    x = x32.astype(np.float64)
    n_len = frames_of(len(x))
    x = np.pad(x, (0, n_len * HOP - len(x)))
    xp = np.pad(x, N_FFT // 2, mode="reflect")
    idx = np.arange(N_FFT)[None, :] + HOP * np.arange(n_len + 1)[:, None]
    win = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)
    spec = np.fft.rfft(xp[idx] * win, axis=1)[:-1]
    power = spec.real**2 + spec.imag**2
    mel = filters @ power.T
    log = np.log10(np.maximum(mel, 1e-10))
    log = np.maximum(log, log.max() - 8.0)
    return (log + 4.0) / 4.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mels", type=int, default=80)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--filters", help="Whisper's mel_filters.npz: give both ops its f32 bank")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sigs = signals(tmp)
        files = []
        for name, x in sigs.items():
            x32 = np.clip(x, -1, 1).astype("<f4")
            sigs[name] = x32
            p = Path(tmp) / f"{name}.f32"
            x32.tofile(p)
            files.append(str(p))
        cmd = ["cargo", "run", "--release", "--quiet", "--example", "audio_features", "--",
               "--runs", str(a.runs), "--mels", str(a.mels), "--out", tmp]
        if a.filters:
            bank = np.load(a.filters)[f"mel_{a.mels}"].astype("<f4")
            bank.tofile(Path(tmp) / "bank.f32")
            cmd += ["--filters", str(Path(tmp) / "bank.f32")]
        subprocess.run(cmd + files, check=True, cwd=ROOT)
        filters = mel_filters_f64(a.mels)
        worst_ours = worst_candle = 0.0
        for name, x32 in sigs.items():
            ref = reference(x32, filters)
            ours = np.fromfile(Path(tmp) / f"{name}.ours.f32", dtype="<f4").reshape(a.mels, -1)
            theirs = np.fromfile(Path(tmp) / f"{name}.candle.f32", dtype="<f4").reshape(a.mels, -1)
            d_ours = float(np.abs(ours - ref).max())
            d_candle = float(np.abs(theirs - ref).max())
            worst_ours, worst_candle = max(worst_ours, d_ours), max(worst_candle, d_candle)
            print(f"{name:>13}: {len(x32) / SR:6.2f} s, {ref.shape[1]} frames; max |ours - ref| "
                  f"{d_ours:.3e}, max |candle - ref| {d_candle:.3e}")
        print(f"overall: max |ours - ref| {worst_ours:.3e}, max |candle - ref| {worst_candle:.3e}")
        ok = worst_ours <= 1e-4 and worst_ours < worst_candle
        print("ok" if ok else "FAILED")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
