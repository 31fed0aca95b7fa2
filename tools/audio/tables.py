#!/usr/bin/env python3
"""Independent oracle for candle_repro::audio's tables: the periodic Hann window and the
Slaney mel filter bank, each entry the exact real value (mpmath, 256 bits) rounded once to
f32. Writes little-endian f32 files under tests/data/audio/ that tests/audio.rs compares
bit for bit, and prints how many entries of Whisper's mel_filters.npz (librosa, f64 steps
then f32) differ from the exact rounding, when the npz path is given.

Usage: python3 tools/audio/tables.py [path/to/whisper/assets/mel_filters.npz]
Needs: pip install mpmath (numpy only for the npz comparison).
"""
import struct
import sys
from pathlib import Path

from mpmath import mp, mpf, sin, pi, log, exp

mp.prec = 256
OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "audio"


def to_f32(x):
    """x rounded to nearest f32 (ties to even); the values here are normal or zero."""
    if x == 0:
        return 0.0
    with mp.workprec(24):
        r = +x
    return float(r)


def hann(n):
    return [to_f32(sin(pi * j / n) ** 2) for j in range(n)]


F_SP = mpf(200) / 3
LOGSTEP = log(mpf(32) / 5) / 27


def hz_to_mel(f):
    return f / F_SP if f < 1000 else 15 + log(f / 1000) / LOGSTEP


def mel_to_hz(m):
    return F_SP * m if m < 15 else 1000 * exp(LOGSTEP * (m - 15))


def mel(sr, n_fft, n_mels):
    top = hz_to_mel(mpf(sr) / 2)
    hz = [mel_to_hz(top * i / (n_mels + 1)) for i in range(n_mels + 2)]
    out = []
    for i in range(n_mels):
        lo, mid, hi = hz[i], hz[i + 1], hz[i + 2]
        norm = 2 / (hi - lo)
        for k in range(n_fft // 2 + 1):
            f = mpf(k) * sr / n_fft
            tri = min((f - lo) / (mid - lo), (hi - f) / (hi - mid))
            out.append(to_f32(max(mpf(0), tri) * norm))
    return out


def write(name, values):
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_bytes(b"".join(struct.pack("<f", v) for v in values))
    print(f"wrote {OUT / name}: {len(values)} values")


def main():
    write("hann_400.f32", hann(400))
    banks = {80: mel(16000, 400, 80), 128: mel(16000, 400, 128)}
    for m, v in banks.items():
        write(f"mel_16000_400_{m}.f32", v)
    if len(sys.argv) > 1:
        import numpy as np

        npz = np.load(sys.argv[1])
        for m, v in banks.items():
            ref = np.array(v, dtype=np.float32).reshape(m, 201)
            lib = npz[f"mel_{m}"]
            diff = ref.view(np.uint32) != lib.view(np.uint32)
            ulps = np.abs(ref.view(np.int32).astype(np.int64) - lib.view(np.int32).astype(np.int64))
            print(f"mel_{m}: {int(diff.sum())} of {diff.size} librosa entries differ from the "
                  f"exact rounding (at most {int(ulps.max())} ulp)")


if __name__ == "__main__":
    main()
