#!/usr/bin/env python3
"""Searches for the norms' hardest rows (issue 31; docs/VERIFICATION.md, "Hardest inputs:
norms"). Tier 1 of core/src/norm/cpu.rs and kernels/norm/norm.cu is replayed in IEEE f64
(Python floats and numpy, both IEEE binary64 with round-to-nearest-even), the exact values
in rationals (fractions) and at 400 bits (mpmath).

    python3 tools/norm_hard_rows.py tree [rows] [seed]
        LayerNorm, n = 3, the device's tree order (256 or 32 threads: (d0^2 + d2^2) + d1^2):
        x0 = 1 + i 2^-23, x2 = -(1 + (i + c) 2^-23), x1 small with its square just lost,
        eps just lost. Rows whose first-order error (tier 1's deviations, squares, sums,
        V, sqrt, 1/ and the best product roundings over w) passes half the output bound by
        0.2 u are kept; for each, w is scanned over every f32 of [1, 2) (both signs), b =
        -round_f32(z), and an output is kept when half the output bound decides a value
        that is not the correctly rounded one (checked at 400 bits) and the whole bound does
        not decide. Prints the rows as tests/hard_norms.rs's LAYER_NORM_TREE_ROWS.

    python3 tools/norm_hard_rows.py cpu9 [seed] [rows per config] [configs]
        LayerNorm, n = 9, the CPU's order, the variance bound at 1/2 (the open item): x0,
        x8 near +-1 in lane 0, six deviations s = 2^-26 (just lost against lane 0) and one
        about -0.74 s, so that the smalls' deviations sum to T s with T^2 = 27.7, just below
        4 times an odd number: only then can d0^2 + d8^2 and its two roundings lose a whole
        ulp of lane 0 (the last addition's tie goes to even by the parity of ceil(T^2 / 4));
        the mean's residue (mu = sx / 9) chosen for the best rounding of the output's
        deviation (8/9 of half an ulp); V put just above 1/4 by eps. For each configuration,
        the x0 positions i below `rows per config` are scored (the first-order error minus
        the halved bound); prints the best found.

Needs numpy and mpmath.
"""
import math
import struct
import sys
from fractions import Fraction as Fr

import mpmath
import numpy as np

mpmath.mp.prec = 400
U = 2.0**-53
# T^2 for the smalls' deviation sum (cpu9).
TT = 27.7
SLACK = 1 + 2.0**-10


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def f32_bits(x):
    return struct.unpack("I", struct.pack("f", x))[0]


def from_bits(b):
    return struct.unpack("f", struct.pack("I", b))[0]


def step32(x, away):
    """The next f32 away from zero (away) or toward it."""
    b = f32_bits(x)
    return from_bits(b + 1 if away else b - 1)


def half_ulp(v):
    return 2.0 ** (math.frexp(v)[1] - 1 - 53)


def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


# ---- tier 1, replayed -------------------------------------------------------------------


def mean_from_sums(n, sx, ab, lanes):
    ab = ab * (1 + 2.0**-20)
    m = float(n + lanes)
    e_sx = abs(sx) * U + m * m * (2.0**-106 * (1 + 2.0**-20)) * ab
    mu = sx / n
    return mu, (e_sx / n + U * abs(mu)) * SLACK


def square_additions(n, order):
    """A of core/src/norm/mod.rs: the most additions with two nonzero operands that one square
    meets in the sum of squares ('cpu': 8 lanes, then the lanes in order; T: threads, then
    the tree)."""
    if order == "cpu":
        return min(n - 1, -(-n // 8) + 6)
    m = min(n, order)
    return -(-n // order) - 1 + (m - 1).bit_length()


def stats_from_sums(n, adds, mu, dmu, ss, eps, ess_scale=1.0):
    e_ss = ((adds + 5.0) * U * ss + 2.0 * n * dmu * dmu) * SLACK * ess_scale
    v = ss / n + eps
    e_v = (e_ss / n) / v + 2.0 * U
    r = 1.0 / math.sqrt(v)
    return dict(mu=mu, dmu=dmu, r=r, e_r=(e_v * 0.5 + 2.0 * U) * SLACK, ss=ss, v=v)


def row_stats(x, eps, order, ess_scale=1.0):
    """LayerNorm's statistics; order 'cpu' (8 lanes) or T (threads per block)."""
    n = len(x)
    lanes = 8 if order == "cpu" else order
    s, q, a = [0.0] * lanes, [0.0] * lanes, [0.0] * lanes
    for i, v in enumerate(x):
        t, e = two_sum(s[i % lanes], v)
        s[i % lanes] = t
        q[i % lanes] += e
        a[i % lanes] += abs(v)
    if order == "cpu":
        total, err = s[0], q[0]
        for l in range(1, 8):
            total, e = two_sum(total, s[l])
            err += e + q[l]
        sx, ab = total + err, sum(a)
    else:
        k = lanes // 2
        while k > 0:
            for t in range(k):
                s[t], e = two_sum(s[t], s[t + k])
                q[t] = q[t] + q[t + k] + e
                a[t] += a[t + k]
            k //= 2
        sx, ab = s[0] + q[0], a[0]
    mu, dmu = mean_from_sums(n, sx, ab, lanes)
    sq = [0.0] * lanes
    for i, v in enumerate(x):
        d = v - mu
        sq[i % lanes] += d * d
    if order == "cpu":
        ss = 0.0
        for v in sq:
            ss += v
    else:
        k = lanes // 2
        while k > 0:
            for t in range(k):
                sq[t] += sq[t + k]
            k //= 2
        ss = sq[0]
    return stats_from_sums(n, square_additions(n, order), mu, dmu, ss, eps, ess_scale)


def element(x, w, b, st):
    z = (x - st["mu"]) * w * st["r"]
    y = z + b
    err = (st["r"] * abs(w) * st["dmu"] + abs(z) * (3.0 * U + st["e_r"]) + U * abs(y)) * SLACK
    return y, err


def decided(y, err):
    d = err * (1 + 2.0**-36) + abs(y) * 2.0**-51
    lo, hi = f32(y - d), f32(y + d)
    return lo if f32_bits(lo) == f32_bits(hi) else None


# ---- exact values -----------------------------------------------------------------------


def exact_row(x, eps):
    xs = [mpmath.mpf(v) for v in x]
    mean = mpmath.fsum(xs) / len(x)
    v = mpmath.fsum((a - mean) ** 2 for a in xs) / len(x) + mpmath.mpf(eps)
    return mean, 1 / mpmath.sqrt(v)


def f32_round_mp(v):
    c = f32(float(v))
    cands = [c] if c == 0 else [c, step32(c, True), step32(c, False)]
    return min(cands, key=lambda t: abs(mpmath.mpf(t) - v))


def first_order(x, eps, st, k):
    """(r_hat / r* - 1, d_hat_k / d*_k - 1), from rationals."""
    mean = sum(Fr(v) for v in x) / len(x)
    V = sum((Fr(v) - mean) ** 2 for v in x) / len(x) + Fr(eps)
    er = float(Fr(st["r"]) ** 2 * V - 1) / 2
    dd = float(Fr(x[k] - st["mu"]) / (Fr(x[k]) - mean) - 1)
    return er, dd


# ---- the w scan (numpy) -----------------------------------------------------------------

SPLIT = 134217729.0


def two_prod(a, b):
    p = a * b
    ah = a * SPLIT
    ah = ah - (ah - a)
    al = a - ah
    bh = b * SPLIT
    bh = bh - (bh - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def scan_w(x, eps, k, st, stp, out_half, w_lo, count=1 << 23):
    """Every f32 w from w_lo up `count` steps: (w, b) where the planted bound decides, the
    real one does not, and a double-double estimate of the exact y rounds elsewhere; each
    candidate is then checked at 400 bits."""
    mean, rstar = exact_row(x, eps)
    r_hi = float(rstar)
    r_lo = float(rstar - r_hi)
    dstar = Fr(x[k]) - sum(Fr(v) for v in x) / len(x)
    D_hi = float(dstar)
    D_lo = float(dstar - Fr(D_hi))
    base = np.float32(w_lo).view(np.uint32)
    ws = (np.arange(count, dtype=np.uint32) + base).view(np.float32).astype(np.float64)
    d = x[k] - st["mu"]
    z = (d * ws) * st["r"]
    b = -z.astype(np.float32).astype(np.float64)
    y = z + b
    err = (st["r"] * np.abs(ws) * st["dmu"] + np.abs(z) * (3 * U + st["e_r"]) + U * np.abs(y)) * SLACK
    zp = (d * ws) * stp["r"]
    yp = zp + b
    errp = (stp["r"] * np.abs(ws) * stp["dmu"] + np.abs(zp) * (3 * U + stp["e_r"]) + U * np.abs(yp)) * SLACK
    if out_half:
        errp = errp * 0.5

    def dec(yv, e):
        w = e * (1 + 2.0**-36) + np.abs(yv) * 2.0**-51
        lo = (yv - w).astype(np.float32)
        return lo, lo == (yv + w).astype(np.float32)

    vp, okp = dec(yp, errp)
    _, ok = dec(y, err)
    p1, e1 = two_prod(np.full_like(ws, D_hi), ws)
    e1 = e1 + D_lo * ws
    p2, e2 = two_prod(p1, np.full_like(ws, r_hi))
    ystar = (p2 + b) + (e2 + p1 * r_lo + e1 * r_hi)
    cand = okp & ~ok & (ystar.astype(np.float32) != vp)
    hits = []
    for j in np.nonzero(cand)[0]:
        yv = (mpmath.mpf(x[k]) - mean) * mpmath.mpf(float(ws[j])) * rstar + mpmath.mpf(float(b[j]))
        if f32_bits(f32_round_mp(yv)) != f32_bits(float(vp[j])):
            hits.append((float(ws[j]), float(b[j])))
    return hits


# ---- LayerNorm, n = 3, the device's tree ------------------------------------------------


def tree_rows(count, seed):
    import random

    rng = random.Random(seed)
    T = 256
    found = 0
    while found < count:
        i = rng.randrange(1, 1 << 19)
        xa = f32(1 + i * 2.0**-23)
        xb = -f32(1 + (i + rng.randrange(-2, 3)) * 2.0**-23)
        lim = math.sqrt(half_ulp(xa * xa + xb * xb))
        x = [xa, f32(rng.choice([-1, 1]) * lim * (1 - rng.random() * 0.001)), xb]
        st = row_stats(x, 0.0, T)
        eps = f32(half_ulp(st["v"]) * (1 - 2.0**-20))
        while st["v"] + eps != st["v"]:
            eps = step32(eps, False)
        st = row_stats(x, eps, T)
        best = None
        for k in (0, 2):
            er, dd = first_order(x, eps, st, k)
            thr = (3 * U + st["e_r"]) * SLACK / 2
            s = abs(er + dd) + 1.9 * U - thr
            if best is None or s > best[0]:
                best = (s, k)
        if best[0] < 0.2 * U:
            continue
        k = best[1]
        hits = scan_w(x, eps, k, st, st, True, 1.0) + scan_w(x, eps, k, st, st, True, -1.0)
        for w, b in hits[:2]:
            xb_ = ", ".join("0x%08X" % f32_bits(v) for v in x)
            print(f"    ([{xb_}], 0x{f32_bits(eps):08X}, {k}, 0x{f32_bits(w):08X}, 0x{f32_bits(b):08X}),",
                  flush=True)
        found += 1 if hits else 0


# ---- LayerNorm, n = 9, the CPU's order (vectorized) -------------------------------------


def np_f32(v):
    return v.astype(np.float32).astype(np.float64)


def np_two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def np_replay9(X, eps, ess_scale):
    """core/src/norm/cpu.rs on rows of 9 (x8 in lane 0 after x0)."""
    s0, q0 = np_two_sum(X[:, 0], X[:, 8])
    total, err = s0, q0
    for l in range(1, 8):
        total, e = np_two_sum(total, X[:, l])
        err = err + e
    sx = total + err
    ab = np.abs(X[:, 0]) + np.abs(X[:, 8])
    for l in range(1, 8):
        ab = ab + np.abs(X[:, l])
    ab = ab * (1 + 2.0**-20)
    e_sx = np.abs(sx) * U + 289.0 * (2.0**-106 * (1 + 2.0**-20)) * ab
    mu = sx / 9.0
    dmu = (e_sx / 9.0 + U * np.abs(mu)) * SLACK
    D = X - mu[:, None]
    l0 = D[:, 0] * D[:, 0]
    l0 = l0 + D[:, 8] * D[:, 8]
    ss = l0
    for l in range(1, 8):
        ss = ss + D[:, l] * D[:, l]

    def stats(scale):
        e_ss = ((13.0) * U * ss + 18.0 * dmu * dmu) * SLACK * scale
        v = ss / 9.0 + eps
        e_v = (e_ss / 9.0) / v + 2.0 * U
        return 1.0 / np.sqrt(v), (e_v * 0.5 + 2.0 * U) * SLACK

    r, e_r = stats(1.0)
    _, e_rh = stats(ess_scale)
    return dict(mu=mu, dmu=dmu, D=D, l0=l0, ss=ss, r=r, e_r=e_r, e_rh=e_rh)


def np_dd_div(hi, lo, c):
    q = hi / c
    p, e = two_prod(q, np.full_like(q, c))
    return q, (((hi - p) - e) + lo) / c


def np_first_order9(X, eps, R):
    Sx = X[:, 0] + X[:, 8]
    for l in range(1, 8):
        Sx = Sx + X[:, l]  # exact for these rows
    hi = np.zeros(len(X))
    lo = np.zeros(len(X))
    for l in range(9):
        p, e = two_prod(X[:, l], X[:, l])
        hi, e2 = np_two_sum(hi, p)
        lo = lo + e2 + e
    hi, e2 = np_two_sum(hi, -Sx * Sx / 9.0)
    lo = lo + e2
    vh, vl = np_dd_div(hi, lo, 9.0)
    vh, e3 = np_two_sum(vh, eps)
    vl = vl + e3
    ph, pl = two_prod(R["r"], R["r"])
    a, ea = two_prod(ph, vh)
    t = (a - 1.0) + ea + ph * vl + pl * vh
    mh, ml = np_dd_div(Sx, np.zeros_like(Sx), 9.0)
    dd = {}
    for k in (0, 8):
        dh, de = np_two_sum(X[:, k], -mh)
        de = de - ml
        dd[k] = (R["D"][:, k] - dh - de) / (dh + de)
    return t / 2 - 3 * t * t / 8, dd


def np_build9(i, c, sgn, step7, vt):
    N = len(i)
    xa = 1 + i * 2.0**-23
    xb = -(1 + (i + c) * 2.0**-23)
    lim = 2.0**-26
    mu = (xa + xb + sgn * math.sqrt(TT) * lim) / 2
    lim = lim * (1 - 2.0**-18)
    X = np.zeros((N, 9))
    X[:, 0] = xa
    X[:, 8] = xb
    toward = np.float32(-np.inf if sgn > 0 else np.inf)
    st7 = np.broadcast_to(np.asarray(step7), (N,))
    for _ in range(12):
        for l in range(6):
            t = np_f32(mu + sgn * lim).astype(np.float32)
            for _ in range(3):
                t = np.where(np.abs(t - mu) >= lim, np.nextafter(t, toward), t)
            X[:, l + 1] = t
        t = np_f32(mu + sgn * (math.sqrt(TT) - 6) * lim).astype(np.float32)
        for a in range(int(np.max(np.abs(st7)))):
            nxt = np.where(st7 * sgn > 0, np.nextafter(t, np.float32(np.inf)), np.nextafter(t, np.float32(-np.inf)))
            t = np.where(np.abs(st7) > a, nxt, t)
        X[:, 7] = t
        mu = np_replay9(X, 0.0, 1.0)["mu"]
    a = np_replay9(X, 0.0, 1.0)["ss"] / 9.0
    return X, np_f32(vt - a)


def np_score9(X, eps):
    R = np_replay9(X, eps, 0.5)
    er, dd = np_first_order9(X, eps, R)
    m, _ = np.frexp(R["r"])
    mz = 1 + np.maximum(1 / (2 * m), m)  # the best product roundings over w
    thr = (3 * U + R["e_rh"]) * SLACK
    best = np.full(len(X), -1.0)
    for k in (0, 8):
        best = np.maximum(best, np.abs(er + dd[k]) + mz * U - thr - R["dmu"] / np.abs(R["D"][:, k]))
    return np.where(R["ss"] == R["l0"], best, -1.0)


def cpu9(seed, per, configs):
    rng = np.random.default_rng(seed)
    best = -1.0
    rows = 0
    done = 0
    for c in (-1, 0, 1):
        for sgn in (1, -1):
            steps = np.arange(-1500, 1500)
            X, eps = np_build9(np.full(len(steps), 1000.0), c, sgn, steps, 0.25 * 1.01)
            R = np_replay9(X, eps, 0.5)
            _, dd = np_first_order9(X, eps, R)
            Delta = R["D"][:, 0] + R["D"][:, 8]
            q = (Delta * Delta / 2) / 2.0**-51
            fr = q - np.floor(q)
            good = (R["ss"] == R["l0"]) & (fr > 0.85) & (fr < 0.985) & (np.abs(dd[0]) > 0.85 * U)
            for st in steps[good][: max(0, configs - done) // 6 + 1]:
                done += 1
                i = np.arange(1, per, dtype=np.float64)
                vt = 0.25 * (1 + rng.uniform(0.002, 0.05, len(i)))
                X, eps = np_build9(i, c, sgn, int(st), vt)
                b = np_score9(X, eps)
                rows += len(i)
                if b.max() > best:
                    best = b.max()
                    print(f"{rows} rows: best excess {best / U:+.4f} u (c {c}, sign {sgn}, 7th step {st})",
                          flush=True)
    print(f"{rows} rows, best excess {best / U:+.4f} u")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "tree"
    if what == "tree":
        tree_rows(int(sys.argv[2]) if len(sys.argv) > 2 else 1, int(sys.argv[3]) if len(sys.argv) > 3 else 2)
    else:
        cpu9(int(sys.argv[2]) if len(sys.argv) > 2 else 1, int(sys.argv[3]) if len(sys.argv) > 3 else 65536,
             int(sys.argv[4]) if len(sys.argv) > 4 else 60)
