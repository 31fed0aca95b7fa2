#!/usr/bin/env python3
"""Shared-memory bank conflicts of the fused FFT kernels (kernels/fft/fft.cu): for every n
the fused kernels take, float and double, the wavefronts per warp instruction of each
phase (global load/store phases "io", stage s loads "L<radix>/<ns>", stores "S<radix>/<ns>"),
relative to the conflict-free count (1 = no conflict), for the plain layout of
repro_fft_fused_<t> and the swizzle of repro_fft_fused_swz(v)_<t> (FusedSwizzle), and the
totals per warp and row group. A model, not a measurement: a float access takes as many
wavefronts as the most distinct addresses on one of the 32 banks; a double access is two
half warps of 16 lanes over 16 8-byte bank pairs. Run: python3 bank_conflicts.py
"""


def stages(n):
    out, ns = [], 1
    while ns < n:
        r = 8 if n // ns >= 8 else n // ns
        out.append((r, ns))
        ns *= r
    return out


def wavefronts(addrs, esize):
    groups = [addrs] if esize == 4 else [addrs[:16], addrs[16:]]
    total = 0
    for g in groups:
        per = {}
        for p in g:
            per.setdefault(p % (32 if esize == 4 else 16), set()).add(p)
        total += max((len(s) for s in per.values()), default=0)
    return total


def analyse(n, esize, minb, place):
    bv = max(n, minb)
    threads = bv // 8

    def run(at):
        w = ideal = 0
        for warp in range(max(threads // 32, 1)):
            lanes = range(warp * 32, min(warp * 32 + 32, threads))
            for k in range(8):
                w += wavefronts([place(at(t, k)) for t in lanes], esize)
                ideal += 1 if esize == 4 else 2
        return w / ideal

    res = [("io", run(lambda t, c: t + c * threads))]
    for r, ns in stages(n):
        def butterfly(t, k):
            c, rr = divmod(k, r)
            row, q = divmod(t, n // 8)
            return row, q + c * (n // 8), rr

        def load(t, k):
            row, i, rr = butterfly(t, k)
            return row * n + i + rr * (n // r)

        def store(t, k):
            row, i, rr = butterfly(t, k)
            return row * n + (i // ns) * ns * r + rr * ns + i % ns

        res.append(("L%d/%d" % (r, ns), run(load)))
        res.append(("S%d/%d" % (r, ns), run(store)))
    return res


def swizzle(esize):
    if esize == 4:
        return lambda e: e ^ (((e >> 5) & 7) | (((e >> 6) & 3) << 3))
    return lambda e: e ^ (((e >> 4) & 7) | (((e >> 6) & 1) << 3))


def main():
    for esize, minb, cap in [(4, 1024, 4096), (8, 512, 2048)]:
        sw = swizzle(esize)
        assert sorted(map(sw, range(cap))) == list(range(cap)), "a permutation"
        print("== %s (block of max(n, %d) values)" % ("float" if esize == 4 else "double", minb))
        for name, place in [("plain", lambda e: e), ("swizzle", sw)]:
            print("  --", name)
            n = 16
            while n <= cap:
                r = analyse(n, esize, minb, place)
                # 8 instructions per phase, re and im; io is a load and a store phase.
                w = sum(x * 16 * (2 if p == "io" else 1) for p, x in r)
                ideal = sum(16 * (2 if p == "io" else 1) for p, _ in r)
                cells = " ".join("%s:%g" % (p, x) for p, x in r)
                print("  %5d %s  total %g (conflict-free %g)" % (n, cells, w, ideal))
                n *= 2


if __name__ == "__main__":
    main()
