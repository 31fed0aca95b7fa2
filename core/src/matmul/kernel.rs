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
//!
//! The float route's micro-kernel ([`micro_tile_runs`], bf16 and f16 inputs) sums in f32
//! instead, in runs and groups of fixed length along k ([`RUN`], [`GROUP`]); its bound
//! (`super`'s header) holds for fused and unfused multiply-adds alike and for any order
//! of the f64 additions, but counts the run and group lengths: those are fixed here, the
//! same on every path.

use super::Input;
use crate::math::VectorPath;
use crate::math::madd::madd;
use crate::math::simd::{F32s, F64s, with_f32s, with_f64s};
use crate::math::vector::Isa;

/// The register tile of each path: MR rows of A times NR columns of B, MR * NR/W
/// accumulator vectors plus NR/W for a row of B and one broadcast, within the register
/// file (AVX2: 16 ymm, 12 + 2 + 1; AVX-512: 32 zmm, 24 + 3 + 1; SSE2: 16 xmm, 8 + 2 + 1).
pub const fn tile(path: VectorPath) -> (usize, usize) {
    match path {
        VectorPath::Avx512 => (8, 24),
        VectorPath::Avx2 => (6, 8),
        VectorPath::Baseline => (4, 4),
    }
}

/// `C[r][c] (+)= sum over p < kc of A[p][r] * B[p][c]`: `a` holds kc groups of MR values (a
/// packed A panel), `b` kc groups of NR values (a packed B panel), `c` the tile row by
/// row (MR * NR values), added to when `accumulate`, else overwritten. The accumulators
/// are MR x NR/W vectors of the copy `I`'s width (`crate::math::simd`), each summing its
/// products in the order of p.
#[inline(always)]
pub fn micro_tile<I: Isa, const MR: usize, const NR: usize>(
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

/// Pack rows of A into a panel: `panel[p * MR + r] = rows[r][p]` (widened to the packed
/// type `E`) for p < kc, reading the MR rows side by side.
#[inline(always)]
pub fn pack_panel<T: Input, E: Packed, const MR: usize>(
    kc: usize,
    rows: [&[T]; MR],
    panel: &mut [E],
) {
    let rows: [&[T]; MR] = rows.map(|r| &r[..kc]);
    let panel = &mut panel[..kc * MR];
    for (p, group) in panel.chunks_exact_mut(MR).enumerate() {
        for r in 0..MR {
            group[r] = E::of(rows[r][p].widen());
        }
    }
}

/// The type the GEMM packs its operands in, and the micro-kernel that multiplies the
/// packed panels: f64 for the f64 route (every input type), f32 for the float route (bf16
/// and f16 inputs; `super::cpu`'s header has its bound). Either way the tile's sums are
/// f64.
pub trait Packed: Copy + Default + Send + Sync + 'static {
    /// An input value (already widened to f32), exactly.
    fn of(x: f32) -> Self;
    /// Runs `f` on this thread's packing space for values of this type (reused across
    /// calls).
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<Self>) -> R) -> R;
    /// C (+)= A B on packed panels, as [`micro_tile`].
    fn tile<I: Isa, const MR: usize, const NR: usize>(
        kc: usize,
        a: &[Self],
        b: &[Self],
        c: &mut [f64],
        accumulate: bool,
    );
}

impl Packed for f64 {
    #[inline(always)]
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<f64>) -> R) -> R {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        SCRATCH.with(|s| f(&mut s.borrow_mut()))
    }
    #[inline(always)]
    fn of(x: f32) -> f64 {
        x as f64
    }
    #[inline(always)]
    fn tile<I: Isa, const MR: usize, const NR: usize>(
        kc: usize,
        a: &[f64],
        b: &[f64],
        c: &mut [f64],
        accumulate: bool,
    ) {
        micro_tile::<I, MR, NR>(kc, a, b, c, accumulate)
    }
}

impl Packed for f32 {
    #[inline(always)]
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<f32>) -> R) -> R {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        SCRATCH.with(|s| f(&mut s.borrow_mut()))
    }
    #[inline(always)]
    fn of(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    fn tile<I: Isa, const MR: usize, const NR: usize>(
        kc: usize,
        a: &[f32],
        b: &[f32],
        c: &mut [f64],
        accumulate: bool,
    ) {
        micro_tile_runs::<I, MR, NR>(kc, a, b, c, accumulate)
    }
}

/// The float route's run length: products summed in one f32 accumulator (a run), and
/// runs summed in a second f32 accumulator (a group) before the group's sum is added to
/// the f64 tile. The bound grows with RUN + GROUP - 2 (`super::cpu`'s header), the cost
/// of the f64 additions with 1 / (RUN GROUP): 8 and 8 measured best of (16, 1), (8, 8),
/// (4, 4) and (4, 8) on the AVX-512 machine.
pub const RUN: usize = 8;
/// Runs per group (see [`RUN`]).
pub const GROUP: usize = 8;

/// The float route's register tile of each path: MR rows times NR columns, MR * NR/W f32
/// accumulators and MR * 2 NR/W f64 ones (W the f32 lanes), plus NR/W for a row of B and
/// one broadcast (AVX-512: 8 + 16 + 2 + 1 of 32 zmm; AVX2: 4 + 8 + 2 + 1 of 16 ymm;
/// SSE2: 4 + 8 + 2 + 1 of 16 xmm).
pub const fn tile_runs(path: VectorPath) -> (usize, usize) {
    match path {
        VectorPath::Avx512 => (6, 32),
        VectorPath::Avx2 => (3, 16),
        VectorPath::Baseline => (3, 8),
    }
}

/// The float route's micro-kernel: `C[r][c] (+)= sum over p < kc of A[p][r] * B[p][c]` on
/// f32 panels (values of bf16 or f16 inputs). The products are summed in f32
/// multiply-adds over runs of [`RUN`] consecutive p (the last run of the block shorter),
/// each lane in the order of p; each run's f32 sum is widened exactly and added to the
/// tile's f64 sum.
#[inline(always)]
pub fn micro_tile_runs<I: Isa, const MR: usize, const NR: usize>(
    kc: usize,
    a: &[f32],
    b: &[f32],
    c: &mut [f64],
    accumulate: bool,
) {
    let a = &a[..kc * MR];
    let b = &b[..kc * NR];
    let c = &mut c[..MR * NR];
    // SAFETY: as `micro_tile`.
    with_f32s!(I, NR, V => unsafe {
        runs_on::<V, MR, NR>(kc, a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), accumulate)
    })
}

/// The most f32 vectors in a row of a float-route tile (NR <= 32 with two lanes).
const MAX_VECTORS_F32: usize = 16;

/// [`micro_tile_runs`] on vectors V.
#[inline(always)]
unsafe fn runs_on<V: F32s, const MR: usize, const NR: usize>(
    kc: usize,
    a: *const f32,
    b: *const f32,
    c: *mut f64,
    accumulate: bool,
) {
    type Wide<V> = <V as F32s>::Wide;
    let nv = NR / V::W;
    let half = V::W / 2;
    const { assert!(NR <= 2 * MAX_VECTORS_F32) };
    unsafe {
        if !accumulate {
            for x in 0..MR * NR {
                *c.add(x) = 0.0;
            }
        }
        let mut p = 0;
        while p < kc {
            let gend = kc.min(p + RUN * GROUP);
            let mut mid = [[V::zero(); MAX_VECTORS_F32]; MR];
            while p < gend {
                let end = gend.min(p + RUN);
                let mut acc = [[V::zero(); MAX_VECTORS_F32]; MR];
                for q in p..end {
                    let bp = b.add(q * NR);
                    let mut bv = [V::zero(); MAX_VECTORS_F32];
                    for (v, x) in bv[..nv].iter_mut().enumerate() {
                        *x = V::load(bp.add(v * V::W));
                    }
                    for (r, row) in acc.iter_mut().enumerate() {
                        let av = V::splat(*a.add(q * MR + r));
                        for (x, &bx) in row[..nv].iter_mut().zip(&bv[..nv]) {
                            *x = V::madd(av, bx, *x);
                        }
                    }
                }
                for (m, row) in mid.iter_mut().zip(&acc) {
                    for (x, &y) in m[..nv].iter_mut().zip(&row[..nv]) {
                        *x = V::add(*x, y);
                    }
                }
                p = end;
            }
            for (r, row) in mid.iter().enumerate() {
                for (v, x) in row[..nv].iter().enumerate() {
                    let (lo, hi) = x.widen();
                    let at = c.add(r * NR + v * V::W);
                    Wide::<V>::add(Wide::<V>::load(at), lo).store(at);
                    Wide::<V>::add(Wide::<V>::load(at.add(half)), hi).store(at.add(half));
                }
            }
        }
    }
}

/// The dot product of two lines of k bf16 or f16 inputs, `a` and `b` (a contiguous pair
/// takes a vectorized loop, others the index maps): each product in f32 (exact but for
/// bf16 products below 2^-126, rounded there by at most 2^-150, and for products beyond
/// f32's range, which become infinite), summed in f64 in any order: the float route's
/// second try on an output it left (`super::cpu`'s header).
#[inline(always)]
pub fn dot_f32_products<T: Input>(
    k: usize,
    a: Option<&[T]>,
    b: Option<&[T]>,
    at_a: impl Fn(usize) -> f32,
    at_b: impl Fn(usize) -> f32,
) -> f64 {
    const L: usize = 32;
    let mut acc = [0.0f64; L];
    if let (Some(a), Some(b)) = (a, b) {
        let (a, b) = (&a[..k], &b[..k]);
        let mut ca = a.chunks_exact(L);
        let mut cb = b.chunks_exact(L);
        for (x, y) in (&mut ca).zip(&mut cb) {
            let x: &[T; L] = x.try_into().unwrap();
            let y: &[T; L] = y.try_into().unwrap();
            for l in 0..L {
                acc[l] += (x[l].widen() * y[l].widen()) as f64;
            }
        }
        for (l, (x, y)) in ca.remainder().iter().zip(cb.remainder()).enumerate() {
            acc[l] += (x.widen() * y.widen()) as f64;
        }
    } else {
        for q in 0..k {
            acc[q % L] += (at_a(q) * at_b(q)) as f64;
        }
    }
    fold(acc)
}

/// For R rows of `a` (row r is `a[r * k..(r + 1) * k]`, already widened to f64) and one
/// column `b` of length k: the R dot products and the sum of b^2 (for the error bound),
/// each in f64 with L partial sums (enough independent chains to cover the multiply-add
/// latency) added pairwise at the end.
#[inline(always)]
pub fn dot_rows<T: Input, const R: usize, const L: usize, const FUSED: bool>(
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
