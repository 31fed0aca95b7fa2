#!/usr/bin/env python3
"""How close does theta^e come to an f32 rounding boundary (issue 31)?

pow_f32 (core/src/rope/tables.rs) accepts its double-double power y when both ends of
[y - 2^-90 y, y + 2^-90 y] round to one f32 (POW_TEST_ERR); its proven error is below
2^-93. A bound at 1/2 (2^-91) changes an output only for an input whose exact power lies
within 2^-90 (relative) of an f32 midpoint. This script measures, with mpmath at 256 bits,
the relative distance rho = |v - m| / v of v = theta^e to the nearest f32 midpoint m, over
every exponent the tables use, e = f32(2i) / f32(d) for even d <= DMAX and i < d/2, and
the thetas of released models (plus the ones tests/rope_tables.rs uses), and prints the
hardest inputs. No f32 power theta^e with 0 < |e| <= 1 is a midpoint exactly (a
midpoint's odd part has 25 bits; theta^p = m^q with theta's odd part below 2^24 would
need p > q), so rho > 0 everywhere.

Usage: python3 tools/pow_hardest.py [DMAX] [KEEP]
"""
import struct
import sys

import mpmath

mpmath.mp.prec = 256


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


THETAS = [10000.0, 50000.0, 100000.0, 160000.0, 500000.0, 1000000.0, 5000000.0,
          10000000.0, 1e4 + 1.0, 12345.678, 2.0, 1e8, 1.5]


def main():
    dmax = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    keep = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    exps = sorted({f32(f32(2 * i) / f32(d)) for d in range(2, dmax + 1, 2)
                   for i in range(d // 2)})
    rows = []
    for t in THETAS:
        t = f32(t)
        lt = mpmath.log(mpmath.mpf(t))
        for e in exps:
            if e == 0.0:
                continue
            v = mpmath.exp(lt * mpmath.mpf(e))
            ex = int(mpmath.floor(mpmath.log(v, 2)))
            ulp = mpmath.ldexp(1, ex - 23)
            frac = v / ulp - mpmath.floor(v / ulp)
            rho = abs(frac - mpmath.mpf(0.5)) * ulp / v
            if rho == 0:
                raise SystemExit(f"exact midpoint: {t}^{e}")
            rows.append((rho, t, e))
    rows.sort()
    n = len(rows)
    print(f"{n} powers ({len(exps)} exponents f32(2i)/f32(d), even d <= {dmax}; "
          f"{len(THETAS)} thetas)")
    print(f"closest to an f32 midpoint: rho = 2^{float(mpmath.log(rows[0][0], 2)):.2f} "
          f"(the test bound is 2^-90, the proven error below 2^-93)")
    for rho, t, e in rows[:keep]:
        print(f"  theta {t!r:>12} (0x{bits(t):08X})  e {e!r:<12} (0x{bits(e):08X})  "
              f"rho 2^{float(mpmath.log(rho, 2)):.2f}")


if __name__ == "__main__":
    main()
