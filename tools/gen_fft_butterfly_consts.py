#!/usr/bin/env python3
"""The constants of the FFT's odd-radix butterflies (DFT3, DFT5, DFT7), correctly rounded.

For R in (3, 5, 7) and k = 1 .. (R - 1) / 2: C_R_k = cos(2 pi k / R) and S_R_k =
sin(2 pi k / R), each rounded once to nearest (ties to even) in f32 and in f64, from a
300-bit evaluation (mpmath) converted to an exact fraction and rounded by integer
arithmetic. Prints the Rust table (core/src/fft/scalar.rs, `BFLY_F32_BITS` / `BFLY_F64_BITS`)
and the CUDA table (kernels/fft/butterflies.cuh, `bfly_bits_f32` / `bfly_bits_f64`),
line for line the ones the sources hold; tests/fft_butterfly_consts.rs runs this script and
checks that every printed line occurs verbatim in both files.

Layout (index: constant): 0 C3_1, 1 S3_1, 2 C5_1, 3 C5_2, 4 S5_1, 5 S5_2, 6 C7_1, 7 C7_2,
8 C7_3, 9 S7_1, 10 S7_2, 11 S7_3.

    python3 tools/gen_fft_butterfly_consts.py
"""
from fractions import Fraction

import mpmath

mpmath.mp.prec = 300


def names():
    out = []
    for r in (3, 5, 7):
        m = (r - 1) // 2
        out += [("C", r, k) for k in range(1, m + 1)]
        out += [("S", r, k) for k in range(1, m + 1)]
    return out


def value(kind, r, k):
    a = 2 * mpmath.pi * k / r
    return mpmath.cos(a) if kind == "C" else mpmath.sin(a)


def to_fraction(x):
    sign, man, exp, _ = mpmath.mpf(x)._mpf_
    f = Fraction(int(man)) * (Fraction(2) ** int(exp))
    return -f if sign else f


def round_bits(x, p, emin, ebits, mbits):
    """The bit pattern of x (a nonzero Fraction of normal magnitude) rounded to nearest
    with p significand bits."""
    sign = 1 if x < 0 else 0
    a = abs(x)
    e = 0
    while a >= 2:
        a /= 2
        e += 1
    while a < 1:
        a *= 2
        e -= 1
    assert e >= emin
    scaled = a * (1 << (p - 1))
    q, rem = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * rem
    if twice > scaled.denominator or (twice == scaled.denominator and q % 2 == 1):
        q += 1
    assert twice != scaled.denominator, "an exact tie cannot occur here"
    if q == (1 << p):
        q >>= 1
        e += 1
    bias = (1 << (ebits - 1)) - 1
    return (sign << (ebits + mbits)) | ((e + bias) << mbits) | (q - (1 << (p - 1)))


def main():
    rows = []
    for kind, r, k in names():
        v = value(kind, r, k)
        f = to_fraction(v)
        b32 = round_bits(f, 24, -126, 8, 23)
        b64 = round_bits(f, 53, -1022, 11, 52)
        what = f"{kind}{r}_{k} = {'cos' if kind == 'C' else 'sin'}(2 pi {k}/{r})"
        rows.append((what, b32, b64, mpmath.nstr(v, 20)))
    print("// Rust (core/src/fft/scalar.rs)")
    for what, b32, _, v in rows:
        h = f"{b32:08X}"
        print(f"    0x{h[:4]}_{h[4:]}, // {what} = {v}")
    for what, _, b64, v in rows:
        h = f"{b64:016X}"
        print(f"    0x{h[:4]}_{h[4:8]}_{h[8:12]}_{h[12:]}, // {what}")
    print("// CUDA (kernels/fft/butterflies.cuh)")
    for i, (what, b32, _, v) in enumerate(rows):
        print(f"        case {i}: return 0x{b32:08X}u;  // {what}")
    for i, (what, _, b64, v) in enumerate(rows):
        print(f"        case {i}: return 0x{b64:016X}ull;  // {what}")


if __name__ == "__main__":
    main()
