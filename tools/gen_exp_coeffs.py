#!/usr/bin/env python3
"""Constants of core/src/math/exp.rs (exp, expm1), printed as Rust items.

Run: python3 tools/gen_exp_coeffs.py   (needs mpmath; deterministic output)

* Range reduction: x = k ln2/128 + r, k = round(x 128/ln2). ln2/128 is split into
  35-bit pieces so that k * piece is exact for |k| < 2^18.
* Fast path: table T_j = 2^(j/128), j = 0..127, as hi + lo doubles; polynomials
  - P_EXP: degree 4, approximates e^r on |r| <= R (Chebyshev interpolation, absolute
    error printed below),
  - Q_EXPM1: r + c2 r^2 + ... + c5 r^5, approximates e^r - 1 with small relative error.
* Accurate path: table D_j = 2^(j/128) - 1, j = -64..63, as hi + lo doubles (relative
  error <= 2^-106 of D_j, which keeps expm1 accurate near 0), and the Taylor coefficients
  1/i! (i = 3..10): double-double for i <= 6, double for i >= 7.
"""
import mpmath as mp
from mpmath import mpf

mp.mp.prec = 300


def f64(v):
    """Nearest double (round to nearest even) of an mpf, as a Python float."""
    return float(mp.mpf(v))  # mpmath rounds to nearest when converting to float


def bits(v):
    import struct
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def hexb(v):
    b = bits(v)
    return "0x%04X_%04X_%04X_%04X" % (b >> 48, (b >> 32) & 0xFFFF, (b >> 16) & 0xFFFF, b & 0xFFFF)


def trunc_bits(v, nbits):
    """v rounded to nearest with nbits significant bits."""
    e = mp.floor(mp.log(abs(v), 2))
    q = mp.mpf(2) ** (e - nbits + 1)
    return mp.nint(v / q) * q


def const(name, v, comment=None):
    c = comment if comment is not None else mp.nstr(mp.mpf(v), 20)
    print("/// %s" % c)
    print("const %s: f64 = f64::from_bits(%s);" % (name, hexb(v)))


ln2 = mp.log(2)
c = ln2 / 128

# --- reduction constants --------------------------------------------------------------
inv = f64(128 / ln2)
const("INV_LN2_128", inv, "128/ln2 = %s (rounded)" % mp.nstr(128 / ln2, 20))
l1 = trunc_bits(c, 35)
l2 = trunc_bits(c - l1, 35)
l3 = f64(c - l1 - l2)
assert f64(l1) == l1 and f64(l2) == l2
const("LN2_128_1", f64(l1), "ln2/128, first 35 bits: %s" % mp.nstr(l1, 20))
const("LN2_128_2", f64(l2), "ln2/128, next 35 bits: %s" % mp.nstr(l2, 20))
const("LN2_128_3", l3, "ln2/128, next 53 bits: %s" % mp.nstr(mpf(l3), 20))
print("// |ln2/128 - (1 + 2 + 3)| = %s" % mp.nstr(abs(c - l1 - l2 - mpf(l3)), 5))
l2f = f64(c - l1)
const("LN2_128_2F", l2f, "ln2/128 - LN2_128_1, rounded (fast path): %s" % mp.nstr(mpf(l2f), 20))
print("// |ln2/128 - (1 + 2F)| = %s" % mp.nstr(abs(c - l1 - mpf(l2f)), 5))

# Bound on |r|: |x 128/ln2 - k| <= 1/2 + 2^-36 (rounding of the product for |x| <= 746).
R = (mpf(1) / 2 + mpf(2) ** -36) * c + mpf(2) ** -60
print("// reduced argument bound R = %s = 2^%s" % (mp.nstr(R, 12), mp.nstr(mp.log(R, 2), 6)))

# --- fast polynomials ------------------------------------------------------------------
grid = [-R + 2 * R * i / 4000 for i in range(4001)]

# P_EXP: degree 4, e^r on [-R, R] (Chebyshev interpolation is within a small factor of
# minimax).
p, _ = mp.chebyfit(mp.exp, [-R, R], 5, error=True)
p = [f64(v) for v in p][::-1]  # low degree first
err = max(abs(mp.polyval([mpf(v) for v in p[::-1]], r) - mp.exp(r)) / mp.exp(r) for r in grid)
print("// P_EXP: relative error of the rounded coefficients vs e^r: %s = 2^%s" %
      (mp.nstr(err, 5), mp.nstr(mp.log(err, 2), 5)))
assert p[0] == 1.0  # so that e^r = 1 + q with q = r (P_EXP1 + ...)
for i, v in enumerate(p[1:]):
    const("P_EXP%d" % (i + 1), v)

# Q_EXPM1: e^r - 1 = r + r^2 g(r), g approximated by a cubic.
def g(r):
    if abs(r) < mpf(2) ** -200:
        return mpf(1) / 2
    return (mp.expm1(r) - r) / r ** 2


q, _ = mp.chebyfit(g, [-R, R], 4, error=True)
q = [f64(v) for v in q][::-1]


def qv(r):
    return r + r * r * mp.polyval([mpf(v) for v in q[::-1]], r)


err = max(abs(qv(r) - mp.expm1(r)) / abs(mp.expm1(r)) for r in grid if r != 0)
print("// Q_EXPM1: relative error of the rounded coefficients vs e^r - 1: %s = 2^%s" %
      (mp.nstr(err, 5), mp.nstr(mp.log(err, 2), 5)))
for i, v in enumerate(q):
    const("Q_EXPM1_%d" % (i + 2), v)

# --- f32 fast paths: polynomials in w = z - k, z = fl(x*INV_LN2_128), |w| <= 1/2 -------
inv_err = abs(mpf(inv) - 128 / ln2) / (128 / ln2)
print("// |INV_LN2_128 - 128/ln2| relative: 2^%s" % mp.nstr(mp.log(inv_err, 2), 6))
W = mpf(1) / 2
wgrid = [-W + 2 * W * i / 4000 for i in range(4001)]
pw, _ = mp.chebyfit(lambda w: mp.exp(c * w), [-W, W], 5, error=True)
pw = [f64(v) for v in pw][::-1]
assert pw[0] == 1.0  # e^(cw) = 1 + q, q = w (PW1 + ...)
err = max(abs(mp.polyval([mpf(v) for v in pw[::-1]], w) - mp.exp(c * w)) / mp.exp(c * w)
          for w in wgrid)
print("// P_EXP_W: relative error vs e^(c w), |w| <= 1/2: %s = 2^%s" %
      (mp.nstr(err, 5), mp.nstr(mp.log(err, 2), 5)))
for i, v in enumerate(pw[1:]):
    const("P_EXP_W%d" % (i + 1), v)


def hfun(w):
    if w == 0:
        return c
    return mp.expm1(c * w) / w


hw, _ = mp.chebyfit(hfun, [-W, W], 5, error=True)
hw = [f64(v) for v in hw][::-1]
err = max(abs(w * mp.polyval([mpf(v) for v in hw[::-1]], w) - mp.expm1(c * w)) /
          abs(mp.expm1(c * w)) for w in wgrid if w != 0)
print("// H_EXPM1_W: w H(w) vs e^(c w) - 1, relative, |w| <= 1/2: %s = 2^%s" %
      (mp.nstr(err, 5), mp.nstr(mp.log(err, 2), 5)))
for i, v in enumerate(hw):
    const("H_EXPM1_W%d" % i, v)

# --- tables ----------------------------------------------------------------------------
print("/// 2^(j/128) for j = 0..127 as (hi, lo) bit patterns: hi = nearest double, lo = nearest")
print("/// double of the rest.")
print("static EXP2_TABLE: [(u64, u64); 128] = [")
for j in range(128):
    t = mp.mpf(2) ** (mpf(j) / 128)
    hi = f64(t)
    lo = f64(t - hi)
    print("    (%s, %s), // %d" % (hexb(hi), hexb(lo), j))
print("];")

print("/// 2^(j/128) - 1 for j = -64..63 (index j + 64) as (hi, lo) bit patterns.")
print("static EXPM1_TABLE: [(u64, u64); 128] = [")
for j in range(-64, 64):
    t = mp.mpf(2) ** (mpf(j) / 128) - 1
    hi = f64(t)
    lo = f64(t - hi)
    print("    (%s, %s), // %d" % (hexb(hi), hexb(lo), j))
print("];")

# --- accurate Taylor coefficients ------------------------------------------------------
for i in range(3, 7):
    v = 1 / mp.factorial(i)
    hi = f64(v)
    lo = f64(v - hi)
    print("/// 1/%d! as a double-double" % i)
    print("const INV_FACT_%d: DD = DD::from_bits(%s, %s);" % (i, hexb(hi), hexb(lo)))
for i in range(7, 11):
    const("INV_FACT_%d" % i, f64(1 / mp.factorial(i)), "1/%d! (rounded)" % i)
Rtrunc = R ** 10 / mp.factorial(11) * mp.exp(R)
print("// accurate path: Taylor remainder of expm1 at degree 10, relative: < %s = 2^%s" %
      (mp.nstr(Rtrunc, 5), mp.nstr(mp.log(Rtrunc, 2), 5)))
