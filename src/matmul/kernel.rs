//! The arithmetic of the CPU matmul's first tier: a register-tile micro-kernel for the
//! GEMM path and a dot-product kernel for the GEMV path, each written once as scalar code
//! over fixed-size arrays; the compiler vectorizes it, and the AVX2 and AVX-512 copies are
//! the same code compiled with those target features (`crate::math::vector`).
//!
//! Every product here is of two values that widen exactly to f32, so it is exact in f64;
//! fused and unfused multiply-adds (`crate::math::madd`) then give the same sums. Which
//! copy runs changes the tile shape and the order of the f64 additions, never an output
//! bit: the rounding test downstream (`super::cpu`) accepts a sum only with an error bound
//! that holds for every order.

use super::Input;
use crate::math::VectorPath;
use crate::math::madd::madd;

/// The register tile of each path: MR rows of A times NR columns of B, MR * NR/W
/// accumulator vectors plus NR/W for a row of B and one broadcast, within the register
/// file (AVX2: 16 ymm, 12 + 2 + 1; AVX-512: 32 zmm, 24 + 3 + 1; SSE2: 16 xmm, 8 + 2 + 1).
pub(crate) const fn tile(path: VectorPath) -> (usize, usize) {
    match path {
        VectorPath::Avx512 => (8, 24),
        VectorPath::Avx2 => (6, 8),
        VectorPath::Baseline => (4, 4),
    }
}

/// C[r][c] (+)= sum over p < kc of A[p][r] * B[p][c]: `a` holds kc groups of MR values (a
/// packed A panel), `b` kc groups of NR values (a packed B panel), `c` the tile row by
/// row (MR * NR values), added to when `accumulate`, else overwritten.
#[inline(always)]
pub(crate) fn micro_tile<const MR: usize, const NR: usize, const FUSED: bool>(
    kc: usize,
    a: &[f64],
    b: &[f64],
    c: &mut [f64],
    accumulate: bool,
) {
    let a = &a[..kc * MR];
    let b = &b[..kc * NR];
    let c = &mut c[..MR * NR];
    let mut acc = [[0.0f64; NR]; MR];
    if accumulate {
        for r in 0..MR {
            acc[r].copy_from_slice(&c[r * NR..(r + 1) * NR]);
        }
    }
    for (ap, bp) in a.chunks_exact(MR).zip(b.chunks_exact(NR)) {
        let bv: [f64; NR] = bp.try_into().unwrap();
        for r in 0..MR {
            let av = ap[r];
            for j in 0..NR {
                acc[r][j] = madd::<FUSED>(av, bv[j], acc[r][j]);
            }
        }
    }
    for r in 0..MR {
        c[r * NR..(r + 1) * NR].copy_from_slice(&acc[r]);
    }
}

/// Pack rows of A into a panel: `panel[p * MR + r] = rows[r][p]` (widened to f64) for p
/// < kc, reading the MR rows side by side.
#[inline(always)]
pub(crate) fn pack_panel<T: Input, const MR: usize>(
    kc: usize,
    rows: [&[T]; MR],
    panel: &mut [f64],
) {
    let rows: [&[T]; MR] = rows.map(|r| &r[..kc]);
    let panel = &mut panel[..kc * MR];
    for (p, group) in panel.chunks_exact_mut(MR).enumerate() {
        for r in 0..MR {
            group[r] = rows[r][p].widen() as f64;
        }
    }
}

/// For R rows of `a` (row r is `a[r * k..(r + 1) * k]`, already widened to f64) and one
/// column `b` of length k: the R dot products and the sum of b^2 (for the error bound),
/// each in f64 with L partial sums (enough independent chains to cover the multiply-add
/// latency) added pairwise at the end.
#[inline(always)]
pub(crate) fn dot_rows<T: Input, const R: usize, const L: usize, const FUSED: bool>(
    k: usize,
    a: &[f64],
    b: &[T],
) -> ([f64; R], f64) {
    let b = &b[..k];
    let rows: [&[f64]; R] = std::array::from_fn(|r| &a[r * k..(r + 1) * k]);
    let mut acc = [[0.0f64; L]; R];
    let mut sq = [0.0f64; L];
    let full = k / L * L;
    let mut p = 0;
    while p < full {
        let bc: &[T; L] = b[p..p + L].try_into().unwrap();
        let ar: [&[f64; L]; R] = std::array::from_fn(|r| rows[r][p..p + L].try_into().unwrap());
        for l in 0..L {
            let bw = bc[l].widen() as f64;
            sq[l] = madd::<FUSED>(bw, bw, sq[l]);
            for r in 0..R {
                acc[r][l] = madd::<FUSED>(ar[r][l], bw, acc[r][l]);
            }
        }
        p += L;
    }
    for (l, p) in (full..k).enumerate() {
        let bw = b[p].widen() as f64;
        sq[l] = madd::<FUSED>(bw, bw, sq[l]);
        for r in 0..R {
            acc[r][l] = madd::<FUSED>(rows[r][p], bw, acc[r][l]);
        }
    }
    let mut out = [0.0f64; R];
    for r in 0..R {
        out[r] = fold(acc[r]);
    }
    (out, fold(sq))
}

/// The lanes added pairwise in a fixed order.
#[inline(always)]
fn fold<const L: usize>(mut v: [f64; L]) -> f64 {
    let mut w = L / 2;
    while w > 0 {
        for l in 0..w {
            v[l] += v[l + w];
        }
        w /= 2;
    }
    v[0]
}
