#!/usr/bin/env python3
"""Coefficients of the softplus fast path (core/src/math/softplus.rs).

log1p(E) = 2 atanh(s) with s = E/(2 + E) in [0, 1/3] for E in [0, 1], and
2 atanh(s) = 2s (1 + t H(t)), t = s^2 in [0, 1/9]. H is fitted (Chebyshev interpolation,
mpmath.chebyfit) with degree 9, its coefficients rounded to f64; the script then measures
the relative error of 1 + t H(t) (rounded coefficients, exact arithmetic) against
atanh(s)/s on a 6001-point grid of [0, 1/9] and prints the Rust constants.
"""
import struct

import mpmath as mp

mp.mp.prec = 300
T = mp.mpf(1) / 9
DEG = 9


def g(t):
    r = mp.sqrt(t)
    return mp.atanh(r) / r


def h(t):
    return mp.mpf(1) / 3 if t == 0 else (g(t) - 1) / t


coeffs, _ = mp.chebyfit(h, [0, T], DEG + 1, error=True)
coeffs = [float(c) for c in coeffs[::-1]]  # ascending powers, rounded to f64

worst = mp.mpf(0)
for i in range(1, 6001):
    t = T * i / 6000
    p = 1 + t * sum(mp.mpf(c) * t**k for k, c in enumerate(coeffs))
    worst = max(worst, abs(p / g(t) - 1))
print(f"// relative error of 1 + t H(t) on [0, 1/9]: 2^{float(mp.log(worst, 2)):.2f}")
for k, c in enumerate(coeffs):
    bits = struct.unpack("<Q", struct.pack("<d", c))[0]
    hx = f"{bits:016X}"
    print(f"/// H_{k} ~ {c!r}")
    print(f"const H{k}: f64 = f64::from_bits(0x{hx[0:4]}_{hx[4:8]}_{hx[8:12]}_{hx[12:16]});")
