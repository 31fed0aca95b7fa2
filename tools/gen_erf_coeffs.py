#!/usr/bin/env python3
"""Constants and tables of core/src/math/erf.rs (erf and gelu_erf), printed as Rust items.

Run: python3 tools/gen_erf_coeffs.py   (needs mpmath; deterministic output, a few minutes)

Notation: M(s) = e^(s^2/2) Phi(-s) (Phi the standard normal CDF; M is the Mills ratio
divided by sqrt(2 pi)), so Phi(-s) = e^(-s^2/2) M(s) and erfc(a) = 2 e^(-a^2) M(a sqrt 2).

* ERF_POLY (fast path of erf): 49 polynomials of degree 9, P_i(t) ~ erf(i/8 + t) on
  |t| <= 1/16 (i = 0: the odd polynomial a (q0 + q1 a^2 + ... + q4 a^8) ~ erf(a) on
  [0, 1/16], written with zero even coefficients, so that the relative error holds down to
  the subnormals), Chebyshev interpolation (mpmath.chebyfit), coefficients rounded to f64,
  coefficient k of P_i at [i][k].
* MILLS_POLY (fast path of gelu_erf): 31 polynomials of degree 11, Q_i(t) ~ M(i/2 + t)
  on |t| <= 1/4 (i = 0: on [0, 1/4]), coefficient k of Q_i at [i][k].
  For each table the script measures, on a grid of 2001 points per interval and with the
  rounded coefficients in exact arithmetic: the relative approximation error, and the
  Horner evaluation error bound in units of u = 2^-53 for two roundings per step (the
  unfused x86-64 baseline; the fused flavour rounds once and stays below it):
  sum_k |t|^k (|h_(k+1) t| + |h_k|) / |P(t)|, h_k the partial Horner values.
* MILLS_DD (accurate paths): M(j/4), j = 4..60, as double-doubles.
* ERF_SERIES (accurate paths): c_n = 2^n / (2n + 1)!!, n = 0..30, as double-doubles:
  erf(a) = (2/sqrt pi) a e^(-a^2) V(a^2) with V(T) = sum c_n T^n (all terms positive).
* TAYLOR_TERMS: the degree of the Taylor expansion of M around j/4 in the accurate path,
  with the bound of the neglected tail.
"""
import struct

import mpmath as mp

mp.mp.prec = 320
U = mp.mpf(2) ** -53


def bits(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def hexb(v):
    b = bits(v)
    return "0x%04X_%04X_%04X_%04X" % (b >> 48, (b >> 32) & 0xFFFF, (b >> 16) & 0xFFFF, b & 0xFFFF)


def dd(v):
    hi = float(v)
    lo = float(v - mp.mpf(hi))
    return hi, lo


def const_dd(name, v, doc):
    hi, lo = dd(v)
    print("/// %s" % doc)
    print("const %s: DD = DD::from_bits(%s, %s);" % (name, hexb(hi), hexb(lo)))


def const_f64(name, v, doc):
    print("/// %s" % doc)
    print("const %s: f64 = f64::from_bits(%s);" % (name, hexb(float(v))))


def M(s):
    return mp.exp(s * s / 2) * mp.ncdf(-s)


def horner_bound(coeffs, t):
    """sum_k |t|^k (|h_(k+1) t| + |h_k|) for Horner with coefficients c_0..c_d."""
    d = len(coeffs) - 1
    h = [mp.mpf(0)] * (d + 2)
    h[d] = mp.mpf(coeffs[d])
    for k in range(d - 1, -1, -1):
        h[k] = h[k + 1] * t + mp.mpf(coeffs[k])
    s = mp.mpf(0)
    for k in range(0, d):
        s += abs(t) ** k * (abs(h[k + 1] * t) + abs(h[k]))
    return h[0], s


def measure(f, coeffs, lo, hi, center, npts=2000):
    worst_rel = mp.mpf(0)
    worst_eval = mp.mpf(0)
    for n in range(npts + 1):
        x = lo + (hi - lo) * mp.mpf(n) / npts
        if x == 0:
            continue
        p, s = horner_bound(coeffs, x - center)
        v = f(x)
        worst_rel = max(worst_rel, abs(p / v - 1))
        worst_eval = max(worst_eval, s / abs(p))
    return worst_rel, worst_eval


def table(name, polys, doc):
    print("/// %s" % doc)
    print("static %s: [[u64; %d]; %d] = [" % (name, len(polys[0]), len(polys)))
    for i, p in enumerate(polys):
        print("    // %d" % i)
        print("    [")
        for c in p:
            print("        %s," % hexb(c))
        print("    ],")
    print("];")


# ---- ERF_POLY ---------------------------------------------------------------------------
ERF_DEG = 9
erf_polys = []
erf_rel = []
erf_eval = []
# i = 0: erf(a)/a = g(a^2), g of degree 4 on [0, 1/256].
g = lambda T: mp.erf(mp.sqrt(T)) / mp.sqrt(T) if T > 0 else 2 / mp.sqrt(mp.pi)
q = mp.chebyfit(g, [0, mp.mpf(1) / 256], 5)[::-1]
p0 = [0.0] * (ERF_DEG + 1)
for k, c in enumerate(q):
    p0[2 * k + 1] = float(c)
erf_polys.append(p0)
r, e = measure(mp.erf, p0, mp.mpf(0), mp.mpf(1) / 16, mp.mpf(0))
erf_rel.append(r)
erf_eval.append(e)
for i in range(1, 49):
    c = mp.mpf(i) / 8
    co = mp.chebyfit(lambda t: mp.erf(c + t), [-mp.mpf(1) / 16, mp.mpf(1) / 16], ERF_DEG + 1)
    co = [float(x) for x in co[::-1]]
    erf_polys.append(co)
    hi = c + mp.mpf(1) / 16 if i < 48 else mp.mpf(6)
    r, e = measure(mp.erf, co, c - mp.mpf(1) / 16, hi, c)
    erf_rel.append(r)
    erf_eval.append(e)

# ---- MILLS_POLY -------------------------------------------------------------------------
M_DEG = 11
m_polys = []
m_rel = []
m_eval = []
for i in range(0, 31):
    c = mp.mpf(i) / 2
    lo = c - mp.mpf(1) / 4 if i > 0 else mp.mpf(0)
    hi = c + mp.mpf(1) / 4 if i < 30 else mp.mpf(15)
    co = mp.chebyfit(lambda t: M(c + t), [lo - c, c + mp.mpf(1) / 4 - c], M_DEG + 1)
    co = [float(x) for x in co[::-1]]
    m_polys.append(co)
    r, e = measure(M, co, lo, hi, c)
    m_rel.append(r)
    m_eval.append(e)


def lg(v):
    return float(mp.log(v, 2))


print("// ERF_POLY: max relative error %s (2^%.2f, interval %d); max Horner bound %.3f u"
      % (mp.nstr(max(erf_rel), 5), lg(max(erf_rel)), erf_rel.index(max(erf_rel)),
         float(max(erf_eval))))
print("// MILLS_POLY: max relative error %s (2^%.2f, interval %d); max Horner bound %.3f u"
      % (mp.nstr(max(m_rel), 5), lg(max(m_rel)), m_rel.index(max(m_rel)), float(max(m_eval))))
print("// per interval (ERF_POLY): " + " ".join("%.1f/%.2f" % (lg(r), float(e))
                                                for r, e in zip(erf_rel, erf_eval)))
print("// per interval (MILLS_POLY): " + " ".join("%.1f/%.2f" % (lg(r), float(e))
                                                  for r, e in zip(m_rel, m_eval)))
# erf(6) against erf(a > 6): the fast path's clamp.
print("// erfc(6) = %s = 2^%.2f" % (mp.nstr(mp.erfc(6), 5), lg(mp.erfc(6))))
# Phi(-15) (gelu_erf's clamp of s at 15; x > 15 only).
print("// Phi(-15) = 2^%.2f, 15 Phi(-15) = 2^%.2f" % (lg(mp.ncdf(-15)), lg(15 * mp.ncdf(-15))))
print("// erfc(1)/erf(1) = %s, Phi(-1)/Phi(1) = %s"
      % (mp.nstr(mp.erfc(1) / mp.erf(1), 5), mp.nstr(mp.ncdf(-1) / mp.ncdf(1), 5)))

# ---- Taylor degree of M around j/4 ------------------------------------------------------
# Coefficients m_k of M(s0 + d): m_1 = s0 m_0 - c, (k + 1) m_(k+1) = s0 m_k + m_(k-1).
cinv = 1 / mp.sqrt(2 * mp.pi)
DMAX = mp.mpf(1) / 8 + mp.mpf(2) ** -40
TAYLOR = 22
worst_tail = mp.mpf(0)
worst_amp = mp.mpf(0)
for j in range(4, 61):
    s0 = mp.mpf(j) / 4
    m = [M(s0)]
    m.append(s0 * m[0] - cinv)
    for k in range(1, TAYLOR + 40):
        m.append((s0 * m[k] + m[k - 1]) / (k + 1))
    tail = sum(abs(m[k]) * DMAX ** k for k in range(TAYLOR + 1, TAYLOR + 40))
    mmin = M(s0 + DMAX)
    worst_tail = max(worst_tail, tail / mmin)
    # sum |m_k| d^k / M: how much the terms exceed the sum (cancellation in Horner)
    amp = sum(abs(m[k]) * DMAX ** k for k in range(0, TAYLOR + 1)) / mmin
    worst_amp = max(worst_amp, amp)
print("// Taylor expansion of M to degree %d around j/4, |d| <= 1/8: tail below 2^%.2f "
      "relative; sum |m_k| d^k / M <= %.4f" % (TAYLOR, lg(worst_tail), float(worst_amp)))

# ---- series V(T) = sum 2^n T^n/(2n+1)!!, T <= 1 -----------------------------------------
NV = 30
cs = [mp.mpf(1)]
for n in range(1, NV + 40):
    cs.append(cs[-1] * 2 / (2 * n + 1))
tail = sum(cs[n] for n in range(NV + 1, NV + 40))
# Horner error weights: an error e at v_k moves v_0 by T^k v_k e: sum_k T^k v_k / v_0.
wmax = mp.mpf(0)
for n in range(0, 101):
    T = mp.mpf(n) / 100
    v = [mp.mpf(0)] * (NV + 2)
    for k in range(NV, -1, -1):
        v[k] = cs[k] + T * v[k + 1]
    w = sum(T ** k * v[k] for k in range(0, NV + 1)) / v[0]
    wmax = max(wmax, w)
print("// series V to degree %d: tail below 2^%.2f for T <= 1 (V >= 1); Horner weight "
      "sum_k T^k v_k / v_0 <= %.4f" % (NV, lg(tail), float(wmax)))
print()

table("ERF_POLY", erf_polys,
      "P_i(t) ~ erf(i/8 + t) on |t| <= 1/16 (i = 0: odd, t = a in [0, 1/16]), degree 9, "
      "coefficient of t^k at [i][k]")
table("MILLS_POLY", m_polys,
      "Q_i(t) ~ M(i/2 + t) on |t| <= 1/4 (i = 0: t in [0, 1/4]), degree 11, coefficient "
      "of t^k at [i][k]")
print("/// M(j/4) for j = 4..60 (index j - 4) as (hi, lo) bit patterns.")
print("static MILLS_DD: [(u64, u64); 57] = [")
for j in range(4, 61):
    hi, lo = dd(M(mp.mpf(j) / 4))
    print("    (%s, %s), // %d/4" % (hexb(hi), hexb(lo), j))
print("];")
print("/// 2^n / (2n + 1)!! for n = 0..%d as (hi, lo) bit patterns." % NV)
print("static ERF_SERIES: [(u64, u64); %d] = [" % (NV + 1))
for n in range(0, NV + 1):
    hi, lo = dd(cs[n])
    print("    (%s, %s), // %d" % (hexb(hi), hexb(lo), n))
print("];")
const_dd("TWO_OVER_SQRT_PI", 2 / mp.sqrt(mp.pi), "2/sqrt(pi) as a double-double")
const_dd("SQRT_2_OVER_PI", mp.sqrt(2 / mp.pi), "sqrt(2/pi) as a double-double")
const_dd("INV_SQRT_2PI", 1 / mp.sqrt(2 * mp.pi), "1/sqrt(2 pi) as a double-double")
const_dd("SQRT2", mp.sqrt(2), "sqrt(2) as a double-double")
