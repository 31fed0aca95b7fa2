#!/usr/bin/env python3
"""Constants of core/src/math/gelu.rs (the tanh-approximation GELU), printed as Rust items.

Run: python3 tools/gen_gelu_coeffs.py   (needs mpmath; deterministic output)

gelu(x) = x/2 (1 + tanh(k (x + c x^3))) with k = sqrt(2/pi) and c = 0.044715, both exact
reals. Since 1 + tanh(z) = 2/(1 + e^(-2z)), gelu(x) = x / (1 + e^(-w)) with
w = x (A + B x^2), A = 2k = sqrt(8/pi), B = 2kc. The script prints A and B rounded to f64
(the fast path) and as double-doubles (the accurate path), and the figures the error
bounds in the Rust header use: |w| at the ends of the fast domain and of the accurate
path's ranges, and where the result is below the subnormals.
"""
import struct

import mpmath as mp

mp.mp.prec = 300
K = mp.sqrt(2 / mp.pi)
C = mp.mpf(44715) / 1000000
A = 2 * K
B = 2 * K * C


def hexb(v):
    b = struct.unpack("<Q", struct.pack("<d", v))[0]
    return "0x%04X_%04X_%04X_%04X" % (b >> 48, (b >> 32) & 0xFFFF, (b >> 16) & 0xFFFF, b & 0xFFFF)


def w(x):
    x = mp.mpf(x)
    return x * (A + B * x * x)


def gelu(x):
    x = mp.mpf(x)
    return x / (1 + mp.exp(-w(x)))


def lg(v):
    return float(mp.log(abs(v), 2))


print("// |w(-12)| = %s, |w(-1)| = %s, w(1) = %s, w(8) = %s"
      % tuple(mp.nstr(abs(w(v)), 8) for v in (-12, -1, 1, 8)))
print("// e^-w(8) = 2^%.2f; gelu(-12) = -2^%.2f; gelu(-10.5) = -2^%.2f; gelu(-11) = -2^%.2f"
      % (lg(mp.exp(-w(8))), lg(gelu(-12)), lg(gelu(-10.5)), lg(gelu(-11))))
print("// A rounded to f64: relative error 2^%.2f; B: 2^%.2f"
      % (lg((mp.mpf(float(A)) - A) / A), lg((mp.mpf(float(B)) - B) / B)))
print("/// 2 sqrt(2/pi) = %s, rounded (fast path)" % mp.nstr(A, 20))
print("const A_F64: f64 = f64::from_bits(%s);" % hexb(float(A)))
print("/// 2 sqrt(2/pi) 0.044715 = %s, rounded (fast path)" % mp.nstr(B, 20))
print("const B_F64: f64 = f64::from_bits(%s);" % hexb(float(B)))
for name, v, doc in (("A_DD", A, "2 sqrt(2/pi)"), ("B_DD", B, "2 sqrt(2/pi) 0.044715")):
    hi = float(v)
    lo = float(v - mp.mpf(hi))
    print("/// %s as a double-double" % doc)
    print("const %s: DD = DD::from_bits(%s, %s);" % (name, hexb(hi), hexb(lo)))
