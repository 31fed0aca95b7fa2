#!/usr/bin/env python3
"""How close does the norms' tier-1 error come to its bound? (docs/VERIFICATION.md,
"Hardest inputs: sums".)

RMSNorm of f32 rows, eps = 0: tier 1 of core/src/norm/cpu.rs (8-lane sum of squares, the lanes
added in order, 1/sqrt(V), z = x w r and its bound) replayed in IEEE f64 (Python floats;
math.sqrt is correctly rounded), against the value at 300 bits (mpmath). Rows: random
normal, and a dominant element followed by elements whose squares each fall just below
half an ulp of the running sum of squares (its roundings all go one way). Prints each new
maximum of |computed - exact| / bound, also with the rounding test's widening |y| 2^-51.

    python3 tools/norm_bound_ratio.py [trials]
"""
import math
import random
import struct
import sys

import mpmath

mpmath.mp.prec = 300
U = 2.0**-53
SLACK = 1 + 2.0**-10


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def tier1(xs, w):
    n = len(xs)
    lanes = [0.0] * 8
    for i, v in enumerate(xs):
        lanes[i % 8] += v * v
    ss = 0.0
    for lane in lanes:
        ss += lane
    nf = float(n)
    # The CPU order's count of additions (core/src/norm/mod.rs): min(n - 1, ceil(n/8) + 6).
    adds = min(n - 1, -(-n // 8) + 6)
    e_ss = ((adds + 5.0) * U * ss) * SLACK
    v = ss / nf
    e_v = (e_ss / nf) / v + 2.0 * U
    r = 1.0 / math.sqrt(v)
    e_r = (e_v * 0.5 + 2.0 * U) * SLACK
    out = []
    for x, wi in zip(xs, w):
        z = x * wi * r
        out.append((z, (abs(z) * (3.0 * U + e_r) + U * abs(z)) * SLACK))
    return out


def exact(xs, w):
    ss = sum(mpmath.mpf(x) ** 2 for x in xs)
    r = 1 / mpmath.sqrt(ss / len(xs))
    return [mpmath.mpf(x) * mpmath.mpf(wi) * r for x, wi in zip(xs, w)]


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    random.seed(1)
    best = 0.0
    for trial in range(trials):
        n = random.choice([2, 3, 4, 5, 7, 8, 9, 16, 17])
        if trial % 3 == 0:
            xs = [f32(random.gauss(0, 1)) for _ in range(n)]
        else:
            x0 = f32(1 + random.random())
            s = f32(math.sqrt(x0 * x0 * U) * (1 - 2**-20))
            xs = [x0] + [s] * (n - 1)
        w = [f32(random.gauss(0, 1)) for _ in range(n)]
        for (z, err), e in zip(tier1(xs, w), exact(xs, w)):
            if err == 0:
                continue
            d = abs(mpmath.mpf(z) - e)
            ratio = float(d / err)
            if ratio > best:
                best = ratio
                widened = float(d / (err + abs(z) * 2**-51))
                print(f"n={n} ratio {ratio:.3f} (with the widening {widened:.3f})")
    print(f"max ratio {best:.3f} over {trials} rows")


if __name__ == "__main__":
    main()
