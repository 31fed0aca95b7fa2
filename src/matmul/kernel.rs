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
use crate::math::simd::{F64s, with_f64s};
use crate::math::vector::Isa;

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
/// row (MR * NR values), added to when `accumulate`, else overwritten. The accumulators
/// are MR x NR/W vectors of the copy `I`'s width (`crate::math::simd`), each summing its
/// products in the order of p.
#[inline(always)]
pub(crate) fn micro_tile<I: Isa, const MR: usize, const NR: usize>(
    kc: usize,
    a: &[f64],
    b: &[f64],
    c: &mut [f64],
    accumulate: bool,
) {
    let a = &a[..kc * MR];
    let b = &b[..kc * NR];
    let c = &mut c[..MR * NR];
    // SAFETY: the slices hold kc MR, kc NR and MR NR values; this runs inside the copy
    // compiled for I, whose vectors `with_f64s` picks.
    with_f64s!(I, NR, V => unsafe {
        tile_on::<V, MR, NR>(kc, a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), accumulate)
    })
}

/// The most vectors in a row of a tile (NR <= 24 with one lane).
const MAX_VECTORS: usize = 24;

/// [`micro_tile`] on vectors V.
#[inline(always)]
unsafe fn tile_on<V: F64s, const MR: usize, const NR: usize>(
    kc: usize,
    a: *const f64,
    b: *const f64,
    c: *mut f64,
    accumulate: bool,
) {
    let nv = NR / V::W;
    const { assert!(NR <= MAX_VECTORS) };
    unsafe {
        let mut acc = [[V::zero(); MAX_VECTORS]; MR];
        if accumulate {
            for (r, row) in acc.iter_mut().enumerate() {
                for (v, x) in row[..nv].iter_mut().enumerate() {
                    *x = V::load(c.add(r * NR + v * V::W));
                }
            }
        }
        for p in 0..kc {
            let bp = b.add(p * NR);
            let mut bv = [V::zero(); MAX_VECTORS];
            for (v, x) in bv[..nv].iter_mut().enumerate() {
                *x = V::load(bp.add(v * V::W));
            }
            for (r, row) in acc.iter_mut().enumerate() {
                let av = V::splat(*a.add(p * MR + r));
                for (x, &bx) in row[..nv].iter_mut().zip(&bv[..nv]) {
                    *x = V::madd(av, bx, *x);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (v, x) in row[..nv].iter().enumerate() {
                x.store(c.add(r * NR + v * V::W));
            }
        }
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
