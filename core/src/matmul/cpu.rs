//! The CPU half of the matmul: every output is the exact sum of products (plus bias)
//! rounded once, reached in three tiers (the definition and the proofs are in `super`'s
//! header):
//!
//! 1. a blocked f64 GEMM (or, for at most [`GEMV_MAX_ROWS`] rows against a B that is
//!    contiguous along k, a streaming GEMV), whose sum is accepted only when the interval
//!    of its error bound rounds to one value ([`round_within_parts`]);
//! 2. for the rare outputs it cannot decide, a compensated dot product ([`dot2`]) with a
//!    bound about 2^-53 relative, tested the same way;
//! 3. for the rarer still (an exact sum at a rounding midpoint, special values), the exact
//!    fixed-point sum ([`exact_dot`]).
//!
//! On bf16 and f16 inputs the GEMM may take the float route instead of the f64 one
//! ([`float_route`]): operands packed as f32, [`kernel::micro_tile_runs`], tier 1's test
//! under the bound [`float_coeff`] gives, and a second try (`Shared::retry`) before
//! tier 2.
//!
//! GEMM: the columns are taken one block of `NC_TILES` at a time; each block's B slab is
//! widened to f64 and packed once, then the threads take row blocks of it (each packing
//! its own A panels per k-block, `kernel::micro_tile` on every register tile, tier 1 on
//! the tile's outputs). GEMV: threads take chunks of columns. How many threads run, and
//! which vector path, changes only which tier decides an output, never its bits.

use super::Input;
use super::kernel::{self, Packed};
use crate::math::exact_dot::{dot2, dot2_bound, exact_dot};
use crate::math::round::{round_within, round_within_parts};
use crate::math::vector::{Isa, PathKernel, run_on};
use crate::math::{Format, VectorPath};
use rayon::prelude::*;
use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};

/// Rows up to which a product against a B contiguous along k takes the GEMV path.
pub const GEMV_MAX_ROWS: usize = 4;
/// Columns per GEMV task.
const GEMV_COLS: usize = 64;
/// The longest k-block of the GEMM path (measured: one block up to k = 640 beats two).
pub const KC_MAX: usize = 640;
/// Rows of a GEMM row block (at most) and columns of a column block.
const MC_TILES: usize = 96;
const NC_TILES: usize = 512;
/// The longest k for which tiers 1 and 2 apply (their bounds assume k < 2^26); longer
/// sums go straight to the exact tier.
pub const FAST_MAX_K: usize = 1 << 26;
/// k up to which sums of f8e4m3 products are exact in f64 in any order: every product is
/// a multiple of 2^-18 below 2^17.7, so every partial sum is a multiple of 2^-18 below
/// 2^35 = 2^53 2^-18.
pub const F8_EXACT_MAX_K: usize = 1 << 17;

/// 2^-53 (1 + 2^-20) (see `super`'s header).
pub const GAMMA_UNIT: f64 = f64::from_bits(0x3CA0_0001_0000_0000);
/// 1 + 2^-20: covers the rounding of computed norms in the tier-2 bound.
pub const NORM_SLACK: f64 = f64::from_bits(0x3FF0_0001_0000_0000);

/// Tier 1's error coefficient c: the bound of an output is c (row norm x column norm +
/// |bias|). NaN when tier 1 is off (no output passes the test: straight to the slower
/// tiers) or k too long for its bound, 0 for exact sums, else (k + bias) 2^-53 (1 + 2^-20).
pub fn tier1_coeff(k: usize, has_bias: bool, exact_sums: bool, tier1_on: bool) -> f64 {
    if !tier1_on || k >= FAST_MAX_K {
        f64::NAN
    } else if exact_sums {
        0.0
    } else {
        (k + has_bias as usize) as f64 * GAMMA_UNIT
    }
}

/// 2^-24 (1 + 2^-16) and 2^-53 (1 + 2^-16): the float route's unit roundoffs with its
/// slack (see the header).
const RUN_UNIT: f64 = f64::from_bits(0x3E70_0010_0000_0000);
const SUM_UNIT: f64 = f64::from_bits(0x3CA0_0010_0000_0000);

/// Whether the inputs are bf16 or f16: the float route's inputs (their products are
/// exact in f32, up to bf16's underflow).
fn narrow_input<T: Input>() -> bool {
    use std::any::TypeId;
    let t = TypeId::of::<T>();
    t == TypeId::of::<half::bf16>() || t == TypeId::of::<half::f16>()
}

/// Whether the GEMM on inputs `T` takes the float route by default when `path` is asked
/// for: where it was measured faster than the f64 route (docs/PERFORMANCE.md, "Matmul",
/// the AVX-512 machine): bf16 on the AVX2 and baseline paths (1.3x there). Not on the
/// AVX-512 path, where the f64 route's wider vectors make up for it (the two within 2%),
/// and not for f16, whose 11-bit outputs the float route's bound leaves undecided 5 times
/// as often (18% at k = 576 against 3.5% for bf16; each costs a second dot product). The
/// output is the same either way (the definition fixes it), so this choice may follow
/// the instruction set.
pub fn float_route<T: Input>(path: VectorPath) -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<half::bf16>()
        && path != VectorPath::Avx512
}

/// The float route's bound (the header): the coefficient c of (row norm x column norm +
/// |bias|), ((RUN + GROUP - 2) 2^-24 + (k + 1 + bias) 2^-53) (1 + 2^-16), NaN with tier
/// 1 off or k too long; and the absolute allowance for products that underflow f32, k
/// 2^-145 on bf16 inputs and 0 on f16 inputs (whose products are multiples of 2^-48).
pub fn float_coeff<T: Input>(k: usize, has_bias: bool, tier1_on: bool) -> (f64, f64) {
    if !tier1_on || k >= FAST_MAX_K {
        return (f64::NAN, 0.0);
    }
    let runs = (kernel::RUN + kernel::GROUP - 2) as f64;
    let c = runs * RUN_UNIT + (k + 1 + has_bias as usize) as f64 * SUM_UNIT;
    let bf16 = std::any::TypeId::of::<T>() == std::any::TypeId::of::<half::bf16>();
    let abs = if bf16 {
        k as f64 * f64::from_bits(0x36E0_0000_0000_0000) // 2^-145
    } else {
        0.0
    };
    (c, abs)
}

/// Knobs for tests: the plan a product gets by default is a function of its shape and
/// dtypes, the CPU's widest vector path and the thread count; tests pick others to show
/// that none changes a bit.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuConfig {
    /// The vector path (falls back to what the CPU has).
    pub path: VectorPath,
    /// The longest k-block of the GEMM path.
    pub kc_max: usize,
    /// Whether the GEMV path may be taken.
    pub gemv: bool,
    /// Tier 1 off: every output through tiers 2 and 3 (`Some(2)`), or tier 3 alone
    /// (`Some(3)`).
    pub start_tier: Option<u8>,
    /// Whether the quantized GEMV tries its integer first tier (`quantized::int_tier`)
    /// before the f64 tier 1: `None` where it is measured faster than the f64 tier (the
    /// AVX-512 VNNI kernel; on the AVX2 kernel it took 1.1-1.3x the f64 tier's time, the
    /// scalar one more), `Some(true)` on any path, `Some(false)` the f64 tier alone. For
    /// tests and benchmarks: no output changes with it. On a CUDA device it picks the
    /// matmul's tier-1 kernel: `Some(true)` the integer tier on the int8 tensor cores
    /// (`kernels/matmul/ozaki.cuh`; `int_tiled` picks its kernel), `Some(false)` the f64
    /// tiles, `None` the one measured fastest for the input dtype (`cuda::Tier1::for_input`).
    pub int_tier: Option<bool>,
    /// On a CUDA device with `int_tier = Some(true)`: the integer tier's tiled kernel
    /// (`cuda::Tier1::Int8Tiled`, shared-memory tiles) instead of one warp per 16 x 8
    /// outputs. No output changes with it.
    pub int_tiled: bool,
    /// Whether the integer tier also runs on the 32-weight block types (Q4_0, Q4_1, Q5_0,
    /// Q5_1, Q8_0, Q8_1): off by default, where it is slower than the f64 tier today
    /// (`quantized::int_tier`'s header); tests switch it on.
    pub int_tier_short_blocks: bool,
    /// The GEMM's route on bf16 and f16 inputs: `None` where it is measured faster
    /// ([`float_route`]), `Some(true)` the float route (f32 runs into f64 sums, see the
    /// header), `Some(false)` the f64 route. For tests and benchmarks: no output changes
    /// with it.
    pub float_route: Option<bool>,
}

impl Default for CpuConfig {
    fn default() -> Self {
        CpuConfig {
            path: crate::math::vector::best_path(),
            kc_max: KC_MAX,
            gemv: true,
            start_tier: None,
            int_tier: None,
            int_tiled: false,
            int_tier_short_blocks: false,
            float_route: None,
        }
    }
}

/// One operand of a 2-D product: element (r, c) at `base + r * rs + c * cs` of `data`.
#[derive(Clone, Copy, Debug)]
pub struct View<'a, T> {
    pub data: &'a [T],
    pub base: usize,
    pub rs: usize,
    pub cs: usize,
}

impl<T: Input> View<'_, T> {
    #[inline(always)]
    fn at(&self, r: usize, c: usize) -> f32 {
        self.data[self.base + r * self.rs + c * self.cs].widen()
    }
}

/// `batch` products of an (m, k) A by a (k, n) B, with an optional bias of n values
/// (widened exactly to f32) added to every row.
pub struct Problem<'a, T> {
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    /// The A and B views of each batch index.
    pub(crate) a: Vec<View<'a, T>>,
    pub(crate) b: Vec<View<'a, T>>,
    pub(crate) bias: Option<Vec<f32>>,
    /// Whether sums of products are exact in f64 in any order (f8e4m3 inputs, k at most
    /// [`F8_EXACT_MAX_K`]): tier 1's bound is then 0.
    pub(crate) exact_sums: bool,
}

/// What the error bound and the sign of an exact zero need of one row of A or column of
/// B: the Euclidean norm as computed (sqrt of the f64 sum of squares; inf or NaN when the
/// line has a non-finite value) and which sign bits occur.
#[derive(Clone, Copy, Debug, Default)]
pub struct LineStats {
    pub norm: f64,
    /// Bit 0: some element has its sign bit clear; bit 1: some element has it set.
    pub signs: u8,
}

impl LineStats {
    /// The stats of a strided line.
    #[inline(always)]
    fn of(len: usize, get: impl Fn(usize) -> f32) -> LineStats {
        let mut sq = 0.0f64;
        let mut signs = 0u32;
        for p in 0..len {
            let x = get(p);
            sq += x as f64 * x as f64; // exact squares; any order: only a bound
            signs |= 1 << (x.to_bits() >> 31);
        }
        LineStats {
            norm: sq.sqrt(),
            signs: signs as u8,
        }
    }

    /// The stats of a contiguous line (vectorized: lanes of squares and of sign bits).
    #[inline(always)]
    fn of_slice<T: Input>(x: &[T]) -> LineStats {
        const L: usize = 8;
        let mut sq = [0.0f64; L];
        let mut neg = [0u32; L];
        let mut pos = [0u32; L];
        let mut chunks = x.chunks_exact(L);
        for c in &mut chunks {
            for l in 0..L {
                let v = c[l].widen();
                sq[l] += v as f64 * v as f64;
                let s = v.to_bits() >> 31;
                neg[l] |= s;
                pos[l] |= s ^ 1;
            }
        }
        for (l, v) in chunks.remainder().iter().enumerate() {
            let v = v.widen();
            sq[l] += v as f64 * v as f64;
            let s = v.to_bits() >> 31;
            neg[l] |= s;
            pos[l] |= s ^ 1;
        }
        let (mut total, mut n, mut p) = (0.0, 0, 0);
        for l in 0..L {
            total += sq[l];
            n |= neg[l];
            p |= pos[l];
        }
        LineStats {
            norm: total.sqrt(),
            signs: (p | (n << 1)) as u8,
        }
    }
}

/// The sign of an exact zero sum of the products of a row and a column (and the bias):
/// -0 exactly when every term is -0, i.e. every product has its sign bit set (the row's
/// and column's sign bits differ at every k: known from the sign classes unless both
/// lines have both signs) and the bias, if any, is -0; with no term at all, +0. `None`:
/// undecided here (the exact tier decides).
#[inline(always)]
pub fn zero_sign(row: u8, col: u8, k: usize, bias: Option<f32>) -> Option<bool> {
    let products_negative = match (row, col) {
        _ if k == 0 => true,
        (1, 2) | (2, 1) => true,
        (3, 3) => return None,
        _ => false,
    };
    let bias_negative = match bias {
        Some(b) => b.is_sign_negative(),
        None => k > 0,
    };
    Some(products_negative && bias_negative)
}

/// Tiers 2 and 3 for output (i, j) of batch index `bi`; `norms` is the product of the
/// row's and column's computed norms.
fn slow_output<T: Input, O: Format>(
    p: &Problem<T>,
    bi: usize,
    i: usize,
    j: usize,
    norms: f64,
    start_tier: u8,
) -> O {
    let (a, b) = (p.a[bi], p.b[bi]);
    let bias = p.bias.as_ref().map(|v| v[j]);
    let row = |q: usize| a.at(i, q);
    let col = |q: usize| b.at(q, j);
    if start_tier <= 2 && p.k < FAST_MAX_K {
        let r = dot2(p.k, row, col, bias);
        let abs = norms * NORM_SLACK + bias.map_or(0.0, |c| c.abs() as f64);
        let err = dot2_bound(p.k, r, abs);
        // An exact zero needs its sign from the exact tier.
        if !(r == 0.0 && err == 0.0)
            && let Some(o) = round_within::<O>(r, err)
        {
            count(3, 1);
            return o;
        }
    }
    count(4, 1);
    O::round(exact_dot(p.k, row, col, bias))
}

/// The output buffer, written by disjoint tiles from several threads.
#[derive(Clone, Copy)]
pub struct Out<O>(pub *mut MaybeUninit<O>);
// SAFETY: every task writes a disjoint set of elements.
unsafe impl<O> Send for Out<O> {}
unsafe impl<O> Sync for Out<O> {}

impl<O> Out<O> {
    /// # Safety
    /// `idx` is in bounds and no other thread writes it.
    #[inline(always)]
    pub unsafe fn write(self, idx: usize, v: O) {
        unsafe { (*self.0.add(idx)).write(v) };
    }
}

/// How many outputs of the CPU's matmul products each tier decided, counted since the
/// process started (all threads, all products; `tier_counts`). A diagnostic for the
/// report example and tests: only the outputs tier 1 leaves are counted one by one, on a
/// path that costs a dot product of its own, and each product adds its size once.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TierCounts {
    /// Every output of every product.
    pub outputs: u64,
    /// Left by the float route's test and decided by its second try (the f32 products
    /// summed in f64, `Shared::retry`).
    pub retry: u64,
    /// Exact zeros whose sign the sign classes settled.
    pub zero_sign: u64,
    /// Decided by tier 2 (the compensated sum).
    pub tier2: u64,
    /// Computed exactly (tier 3).
    pub tier3: u64,
}

impl TierCounts {
    /// The outputs tier 1 decided (its rounding test on the f64 or float route's sum).
    /// Saturating: readings taken while other products run need not add up.
    pub fn tier1(&self) -> u64 {
        let rest = self.retry + self.zero_sign + self.tier2 + self.tier3;
        self.outputs.saturating_sub(rest)
    }

    /// The counts between `before` and `self` (two readings of [`tier_counts`]).
    pub fn since(&self, before: &TierCounts) -> TierCounts {
        TierCounts {
            outputs: self.outputs - before.outputs,
            retry: self.retry - before.retry,
            zero_sign: self.zero_sign - before.zero_sign,
            tier2: self.tier2 - before.tier2,
            tier3: self.tier3 - before.tier3,
        }
    }
}

/// The counters behind [`tier_counts`]: outputs, retry, zero sign, tier 2, tier 3.
static COUNTS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];

fn count(which: usize, n: u64) {
    COUNTS[which].fetch_add(n, Ordering::Relaxed);
}

/// The tier counters now ([`TierCounts`]); take the difference of two readings around a
/// product (run nothing else meanwhile) for that product's counts.
#[doc(hidden)]
pub fn tier_counts() -> TierCounts {
    let c = |i: usize| COUNTS[i].load(Ordering::Relaxed);
    TierCounts {
        outputs: c(0),
        retry: c(1),
        zero_sign: c(2),
        tier2: c(3),
        tier3: c(4),
    }
}

/// An output tier 1 left: where it is, its f64 sum (bias included) and error bound, and
/// its column's norm.
#[derive(Clone, Copy)]
struct Undecided {
    i: usize,
    j: usize,
    s: f64,
    err: f64,
    col_norm: f64,
}

/// What every task reads: the problem, the per-line stats and tier 1's coefficients.
struct Shared<'a, T> {
    p: &'a Problem<'a, T>,
    cfg: CpuConfig,
    /// Per row of A (batch * m): norm, sign classes, and c * norm with c the tier-1
    /// coefficient (0 for exact sums, NaN with tier 1 off).
    row_norm: Vec<f64>,
    row_signs: Vec<u8>,
    row_err: Vec<f64>,
    /// Per column of B (batch * n; empty on the GEMV path, which computes its own).
    col_norm: Vec<f64>,
    col_signs: Vec<u8>,
    /// The bias per column (0 without) and c * |bias|.
    bias: Vec<f64>,
    bias_err: Vec<f64>,
    /// An absolute term added to the bound of every output whose row and column are not
    /// all zero: the float route's underflow allowance on bf16 inputs, else 0.
    abs_err: f64,
    /// On the float route with tier 1 on: the f64 route's coefficient, for the second
    /// try on the outputs the float route leaves (`Shared::retry`); else NaN.
    retry_coeff: f64,
}

impl<T: Input> Shared<'_, T> {
    /// Tier 1 on the first `len` of W outputs of row i, columns j0.., from their f64 sums
    /// `s` (bias not yet added) and the columns' norms `col_norm`: the decided ones
    /// written at `out` (which points at output (i, j0)), the others appended to
    /// `undecided`. Fixed width and branch-free up to the writes, so that the compiler
    /// vectorizes it (lanes past `len` are computed and dropped).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn finish_row<O: Format, const W: usize>(
        &self,
        bi: usize,
        i: usize,
        j0: usize,
        len: usize,
        s: &[f64; W],
        col_norm: &[f64; W],
        out: Out<O>,
        undecided: &mut Vec<Undecided>,
    ) {
        let re = self.row_err[bi * self.p.m + i];
        let mut bias = [0.0f64; W];
        let mut bias_err = [0.0f64; W];
        bias[..len].copy_from_slice(&self.bias[j0..j0 + len]);
        bias_err[..len].copy_from_slice(&self.bias_err[j0..j0 + len]);
        let mut vals = [O::round(0.0); W];
        let mut sure = [false; W];
        let mut ys = [0.0f64; W];
        let mut errs = [0.0f64; W];
        for c in 0..W {
            let y = s[c] + bias[c];
            let rel = re * col_norm[c];
            let err = rel + bias_err[c] + if rel > 0.0 { self.abs_err } else { 0.0 };
            let (v, ok) = round_within_parts::<O>(y, err);
            vals[c] = v;
            // An exact zero (y = 0 with err = 0) takes its sign from the sign classes.
            sure[c] = ok & !((y == 0.0) & (err == 0.0));
            ys[c] = y;
            errs[c] = err;
        }
        if len == W && sure.iter().all(|&x| x) {
            // SAFETY: the caller owns outputs (i, j0..j0 + W).
            let dst = unsafe { std::slice::from_raw_parts_mut(out.0, W) };
            for (d, v) in dst.iter_mut().zip(vals) {
                d.write(v);
            }
            return;
        }
        for c in 0..len {
            if sure[c] {
                // SAFETY: the caller owns outputs (i, j0..j0 + len).
                unsafe { out.write(c, vals[c]) };
            } else {
                undecided.push(Undecided {
                    i,
                    j: j0 + c,
                    s: ys[c],
                    err: errs[c],
                    col_norm: col_norm[c],
                });
            }
        }
    }

    /// The float route's second try on an output it left: that one output's products in
    /// f32 summed in f64 ([`kernel::dot_f32_products`]), under the f64 route's bound plus
    /// the route's underflow allowance (`super`'s header), tested the same way. None when
    /// that does not decide it either (or outside the float route).
    #[inline(always)]
    fn retry<O: Format>(&self, bi: usize, u: &Undecided) -> Option<O> {
        if self.retry_coeff.is_nan() {
            return None;
        }
        let p = self.p;
        let (a, b, k) = (p.a[bi], p.b[bi], p.k);
        let row = (a.cs == 1).then(|| &a.data[a.base + u.i * a.rs..][..k]);
        let col = (b.rs == 1).then(|| &b.data[b.base + u.j * b.cs..][..k]);
        let s = kernel::dot_f32_products(k, row, col, |q| a.at(u.i, q), |q| b.at(q, u.j));
        let bias = self.bias[u.j];
        let y = s + bias;
        let c = self.retry_coeff;
        let rel = c * self.row_norm[bi * p.m + u.i] * u.col_norm;
        let err = rel + c * bias.abs() + if rel > 0.0 { self.abs_err } else { 0.0 };
        let (v, ok) = round_within_parts::<O>(y, err);
        let decided = ok & !((y == 0.0) & (err == 0.0));
        if decided {
            count(1, 1);
        }
        decided.then_some(v)
    }

    /// An output tier 1 left: an exact zero whose sign the sign classes settle, or tiers
    /// 2 and 3. `col_signs` gives column j's sign classes.
    fn resolve<O: Format>(&self, bi: usize, u: Undecided, col_signs: impl FnOnce() -> u8) -> O {
        let p = self.p;
        if u.s == 0.0 && u.err == 0.0 {
            let bias = p.bias.as_ref().map(|v| v[u.j]);
            let row = self.row_signs[bi * p.m + u.i];
            if let Some(neg) = zero_sign(row, col_signs(), p.k, bias) {
                count(2, 1);
                return O::round(if neg { -0.0 } else { 0.0 });
            }
        }
        let norms = self.row_norm[bi * p.m + u.i] * u.col_norm;
        let start = self.cfg.start_tier.unwrap_or(2).max(2);
        slow_output::<T, O>(p, bi, u.i, u.j, norms, start)
    }
}

thread_local! {
    /// The GEMM tasks' f64 sums of tiles between k-blocks, reused across calls (the A
    /// panels have their own, [`Packed::with_scratch`]).
    static SCRATCH: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// The GEMM plan: the register tile of the vector path, k-blocks of at most `kc_max`,
/// column blocks of `NC_TILES` columns (one packed B slab each) and row blocks of at
/// most `MC_TILES` rows, fewer when that would leave threads idle. Nothing here reaches
/// the output bits.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub mr: usize,
    pub nr: usize,
    pub mc: usize,
    pub nc: usize,
    pub kc: usize,
    pub kblocks: usize,
}

impl Plan {
    /// `operand_bytes`: the size of A and B together; the packed B slab (k x nc f64)
    /// stays below it (fewer columns per block for small operands), so that no workspace
    /// outgrows the operands.
    pub fn new(
        path: VectorPath,
        float: bool,
        m: usize,
        k: usize,
        kc_max: usize,
        operand_bytes: usize,
    ) -> Plan {
        let (mr, nr) = if float {
            kernel::tile_runs(path)
        } else {
            kernel::tile(path)
        };
        let kblocks = k.div_ceil(kc_max.max(1));
        let kc = if kblocks == 0 { 0 } else { k.div_ceil(kblocks) };
        let threads = rayon::current_num_threads().max(1);
        let mc = MC_TILES.min(m.div_ceil(2 * threads)).div_ceil(mr).max(1) * mr;
        let fit = operand_bytes / (8 * k.max(1)) / nr * nr;
        Plan {
            mr,
            nr,
            mc,
            nc: (NC_TILES.div_ceil(nr) * nr).min(fit).max(nr),
            kc,
            kblocks,
        }
    }
}

/// Pack columns [j0, j0 + cols) of B, all of k, into panels of `nr` columns: panel t
/// holds, for each p < k, the nr values B[p][j0 + t nr + c] (0 past the last column).
/// The k-block [p0, p0 + kc) of a panel is then its slice [p0 nr, (p0 + kc) nr).
fn pack_b_slab<T: Input, E: Packed>(
    b: &View<T>,
    k: usize,
    j0: usize,
    cols: usize,
    nr: usize,
    dst: &mut [E],
) {
    dst.par_chunks_mut(nr * k)
        .enumerate()
        .for_each(|(t, panel)| {
            for c in 0..nr {
                let j = t * nr + c;
                if j >= cols {
                    for p in 0..k {
                        panel[p * nr + c] = E::default();
                    }
                } else if b.rs == 1 {
                    let col = &b.data[b.base + (j0 + j) * b.cs..][..k];
                    for (p, x) in col.iter().enumerate() {
                        panel[p * nr + c] = E::of(x.widen());
                    }
                } else if b.cs != 1 {
                    for p in 0..k {
                        panel[p * nr + c] = E::of(b.at(p, j0 + j));
                    }
                }
            }
            // Rows contiguous along n: each row's values of the panel read at once.
            let width = nr.min(cols.saturating_sub(t * nr));
            if b.rs != 1 && b.cs == 1 && width > 0 {
                for p in 0..k {
                    let src = &b.data[b.base + p * b.rs + j0 + t * nr..][..width];
                    for (d, x) in panel[p * nr..p * nr + width].iter_mut().zip(src) {
                        *d = E::of(x.widen());
                    }
                }
            }
        });
}

/// Pack rows [i0, i0 + rows) x k-range [p0, p0 + kc) of A into panels of MR rows: panel
/// t holds, for each p, the MR values A[i0 + t MR + r][p0 + p] (0 past the last row).
#[inline(always)]
pub fn pack_a<T: Input, E: Packed, const MR: usize>(
    a: &View<T>,
    i0: usize,
    rows: usize,
    p0: usize,
    kc: usize,
    dst: &mut [E],
) {
    for (t, panel) in dst.chunks_exact_mut(MR * kc).enumerate() {
        if a.cs == 1 && (t + 1) * MR <= rows {
            let row = |r: usize| &a.data[a.base + (i0 + t * MR + r) * a.rs + p0..][..kc];
            kernel::pack_panel::<T, E, MR>(kc, std::array::from_fn(row), panel);
            continue;
        }
        for r in 0..MR {
            let i = t * MR + r;
            for p in 0..kc {
                panel[p * MR + r] = if i < rows {
                    E::of(a.at(i0 + i, p0 + p))
                } else {
                    E::default()
                };
            }
        }
    }
}

/// One GEMM task's block: rows [i0, i0 + mc) of batch index `bi` against the packed B
/// slab of columns [j0, j0 + cols).
struct Block<'s, 'a, T, O, E> {
    sh: &'s Shared<'a, T>,
    plan: Plan,
    bi: usize,
    i0: usize,
    j0: usize,
    cols: usize,
    slab: &'s [E],
    out: Out<O>,
}

/// One GEMM task: a block and the thread's packing space.
struct GemmTask<'s, 'a, T, O, E> {
    block: Block<'s, 'a, T, O, E>,
    /// This thread's packing space for A panels (taken out of the route's thread-local
    /// by the caller: no closure may stand between `run` and the arithmetic, or it would
    /// be compiled without the path's target features) and for the tiles' f64 sums
    /// between k-blocks ([`SCRATCH`]).
    apack: &'s mut Vec<E>,
    acc: &'s mut Vec<f64>,
}

impl<T: Input, O: Format, E: Route> PathKernel<()> for GemmTask<'_, '_, T, O, E> {
    #[inline(always)]
    fn run<I: Isa>(self) {
        let GemmTask { block, apack, acc } = self;
        E::go::<I, T, O>(&block, apack, acc)
    }
}

/// A route's register tiles. The tile comes from the plan (the requested path), the
/// instructions from the copy `run_on` picked (the widest the CPU has up to it): so a
/// test can run every tile shape on any CPU.
trait Route: Packed {
    fn go<I: Isa, T: Input, O: Format>(
        b: &Block<T, O, Self>,
        apack: &mut Vec<Self>,
        acc: &mut Vec<f64>,
    );
}

impl Route for f64 {
    #[inline(always)]
    fn go<I: Isa, T: Input, O: Format>(
        b: &Block<T, O, f64>,
        ap: &mut Vec<f64>,
        acc: &mut Vec<f64>,
    ) {
        match (b.plan.mr, b.plan.nr) {
            (8, 24) => b.go_tiles::<I, 8, 24>(ap, acc),
            (6, 8) => b.go_tiles::<I, 6, 8>(ap, acc),
            _ => b.go_tiles::<I, 4, 4>(ap, acc),
        }
    }
}

impl Route for f32 {
    #[inline(always)]
    fn go<I: Isa, T: Input, O: Format>(
        b: &Block<T, O, f32>,
        ap: &mut Vec<f32>,
        acc: &mut Vec<f64>,
    ) {
        match (b.plan.mr, b.plan.nr) {
            (6, 32) => b.go_tiles::<I, 6, 32>(ap, acc),
            (3, 16) => b.go_tiles::<I, 3, 16>(ap, acc),
            _ => b.go_tiles::<I, 3, 8>(ap, acc),
        }
    }
}

impl<T: Input, O: Format, E: Packed> Block<'_, '_, T, O, E> {
    #[inline(always)]
    fn go_tiles<I: Isa, const MR: usize, const NR: usize>(
        &self,
        apack: &mut Vec<E>,
        acc: &mut Vec<f64>,
    ) {
        let sh = self.sh;
        let p = sh.p;
        let Plan {
            mc, kc, kblocks, ..
        } = self.plan;
        let (k, n) = (p.k, p.n);
        let a = p.a[self.bi];
        let rows = mc.min(p.m - self.i0);
        let cols = self.cols;
        let (row_tiles, col_tiles) = (rows.div_ceil(MR), cols.div_ceil(NR));
        const { assert!(MR * NR <= 8 * 32 && NR <= 32) };
        let tile_len = MR * NR;
        // With several k-blocks, each tile's sum lives in `acc` between blocks.
        let acc_len = if kblocks > 1 {
            row_tiles * col_tiles * tile_len
        } else {
            0
        };
        if apack.len() < row_tiles * MR * kc {
            apack.resize(row_tiles * MR * kc, E::default());
        }
        if acc.len() < acc_len {
            acc.resize(acc_len, 0.0);
        }
        let acc = &mut acc[..acc_len];
        let mut local = [0.0f64; 8 * 32];
        let mut undecided: Vec<Undecided> = Vec::new();
        let col_norm = &sh.col_norm[self.bi * n..(self.bi + 1) * n];

        for kb in 0..kblocks {
            let p0 = kb * kc;
            let kcb = kc.min(k - p0);
            let apack = &mut apack[..row_tiles * MR * kcb];
            pack_a::<T, E, MR>(&a, self.i0, rows, p0, kcb, apack);
            let last = kb + 1 == kblocks;
            for jt in 0..col_tiles {
                let bp = &self.slab[jt * NR * k + p0 * NR..][..kcb * NR];
                let j = self.j0 + jt * NR;
                let width = NR.min(cols - jt * NR);
                let mut cn = [0.0f64; NR];
                cn[..width].copy_from_slice(&col_norm[j..j + width]);
                for it in 0..row_tiles {
                    let ap = &apack[it * MR * kcb..(it + 1) * MR * kcb];
                    let t = if kblocks > 1 {
                        &mut acc[(it * col_tiles + jt) * tile_len..][..tile_len]
                    } else {
                        &mut local[..tile_len]
                    };
                    E::tile::<I, MR, NR>(kcb, ap, bp, t, kb > 0);
                    if !last {
                        continue;
                    }
                    // Tier 1 on the tile, row by row.
                    for r in 0..MR.min(rows - it * MR) {
                        let i = self.i0 + it * MR + r;
                        // SAFETY: in bounds of the output (the offset of output (i, j)).
                        let at = Out(unsafe { self.out.0.add((self.bi * p.m + i) * n + j) });
                        let s: &[f64; NR] = t[r * NR..(r + 1) * NR].try_into().unwrap();
                        sh.finish_row::<O, NR>(self.bi, i, j, width, s, &cn, at, &mut undecided);
                    }
                }
            }
        }
        for u in undecided {
            let v = match sh.retry::<O>(self.bi, &u) {
                Some(v) => v,
                None => sh.resolve::<O>(self.bi, u, || sh.col_signs[self.bi * n + u.j]),
            };
            // SAFETY: (i, j) lies in this task's block.
            unsafe { self.out.write((self.bi * p.m + u.i) * n + u.j, v) };
        }
    }
}

/// One GEMV task: columns [j0, j0 + cols) of batch index `bi`, with A's rows widened to
/// f64 in `a64` (m rows of k).
struct GemvTask<'s, 'a, T, O> {
    sh: &'s Shared<'a, T>,
    bi: usize,
    j0: usize,
    cols: usize,
    a64: &'s [f64],
    out: Out<O>,
}

impl<T: Input, O: Format> PathKernel<()> for GemvTask<'_, '_, T, O> {
    #[inline(always)]
    fn run<I: Isa>(self) {
        // One row keeps 16 independent sums (4 AVX2 vectors), more rows 8 each.
        match (self.sh.p.m, I::FUSED) {
            (1, true) => self.go::<1, 16, true>(),
            (2, true) => self.go::<2, 8, true>(),
            (3, true) => self.go::<3, 8, true>(),
            (4, true) => self.go::<4, 8, true>(),
            (1, false) => self.go::<1, 16, false>(),
            (2, false) => self.go::<2, 8, false>(),
            (3, false) => self.go::<3, 8, false>(),
            (4, false) => self.go::<4, 8, false>(),
            _ => unreachable!("GEMV rows are 1..=4"),
        }
    }
}

impl<T: Input, O: Format> GemvTask<'_, '_, T, O> {
    #[inline(always)]
    fn go<const R: usize, const L: usize, const FUSED: bool>(&self) {
        let sh = self.sh;
        let p = sh.p;
        let (k, n, m) = (p.k, p.n, p.m);
        let b = p.b[self.bi];
        let mut undecided: Vec<Undecided> = Vec::new();
        for j in self.j0..self.j0 + self.cols {
            let col = &b.data[b.base + j * b.cs..][..k];
            let (s, sq) = kernel::dot_rows::<T, R, L, FUSED>(k, self.a64, col);
            let rb = [sq.sqrt()];
            for (r, s) in s.iter().enumerate() {
                // SAFETY: column j belongs to this task (the offset of output (r, j)).
                let at = Out(unsafe { self.out.0.add((self.bi * m + r) * n + j) });
                sh.finish_row::<O, 1>(self.bi, r, j, 1, &[*s], &rb, at, &mut undecided);
            }
        }
        for u in undecided {
            // The column's sign classes only matter for an exact zero sum: read on demand.
            let signs = || LineStats::of(k, |q| b.at(q, u.j)).signs;
            let v = sh.resolve::<O>(self.bi, u, signs);
            // SAFETY: column j belongs to this task.
            unsafe { self.out.write((self.bi * m + u.i) * n + u.j, v) };
        }
    }
}

/// Stats of `count` lines of `len` elements of a view, line l's element q at (l, q) if
/// `rows`, else at (q, l): along contiguous lines a slice pass, across them a pass per
/// element that keeps one sum per line.
pub fn view_stats<T: Input>(v: &View<T>, rows: bool, count: usize, len: usize) -> Vec<LineStats> {
    let (line_stride, elem_stride) = if rows { (v.rs, v.cs) } else { (v.cs, v.rs) };
    let mut out = vec![LineStats::default(); count];
    if len == 0 {
        return out;
    }
    if elem_stride == 1 {
        out.par_chunks_mut(64).enumerate().for_each(|(c, chunk)| {
            for (t, st) in chunk.iter_mut().enumerate() {
                let l = c * 64 + t;
                *st = LineStats::of_slice(&v.data[v.base + l * line_stride..][..len]);
            }
        });
    } else if line_stride == 1 {
        out.par_chunks_mut(256).enumerate().for_each(|(c, chunk)| {
            let l0 = c * 256;
            let w = chunk.len();
            let mut sq = vec![0.0f64; w];
            let mut signs = vec![0u8; w];
            for q in 0..len {
                let run = &v.data[v.base + q * elem_stride + l0..][..w];
                for ((s, g), x) in sq.iter_mut().zip(signs.iter_mut()).zip(run) {
                    let x = x.widen();
                    *s += x as f64 * x as f64;
                    *g |= 1 << (x.to_bits() >> 31);
                }
            }
            for ((st, s), g) in chunk.iter_mut().zip(sq).zip(signs) {
                *st = LineStats {
                    norm: s.sqrt(),
                    signs: g,
                };
            }
        });
    } else {
        out.par_iter_mut().enumerate().for_each(|(l, st)| {
            *st = if rows {
                LineStats::of(len, |q| v.at(l, q))
            } else {
                LineStats::of(len, |q| v.at(q, l))
            };
        });
    }
    out
}

/// Column stats of a (k, n) view (for preparing a weight once).
pub fn column_stats<T: Input>(b: View<T>, k: usize, n: usize) -> Vec<LineStats> {
    view_stats(&b, false, n, k)
}

/// The whole product into `out` (batch * m * n elements, row-major), every element
/// written. `prepared_cols`: B's column stats, computed once for a weight shared by every
/// batch index.
pub fn matmul<T: Input, O: Format>(
    p: &Problem<T>,
    cfg: CpuConfig,
    prepared_cols: Option<&[LineStats]>,
    out: &mut [MaybeUninit<O>],
) {
    let batch = p.a.len();
    let (m, n, k) = (p.m, p.n, p.k);
    assert_eq!(out.len(), batch * m * n, "output size");
    if out.is_empty() {
        return;
    }
    count(0, out.len() as u64);
    let outp = Out(out.as_mut_ptr());
    let gemv = cfg.gemv && m <= GEMV_MAX_ROWS && k > 0 && p.b.iter().all(|b| b.rs == 1);
    let rows: Vec<LineStats> = p.a.iter().flat_map(|a| view_stats(a, true, m, k)).collect();
    // The GEMV path reads B once: its column norms come out of the dot-product pass.
    let cols: Vec<LineStats> = match prepared_cols {
        _ if gemv => Vec::new(),
        Some(pc) => (0..batch).flat_map(|_| pc.iter().copied()).collect(),
        None => {
            p.b.iter()
                .flat_map(|b| view_stats(b, false, n, k))
                .collect()
        }
    };
    let tier1_on = cfg.start_tier.is_none();
    let has_bias = p.bias.is_some();
    let coeff64 = tier1_coeff(k, has_bias, p.exact_sums, tier1_on);
    let float = !gemv
        && k > 0
        && !p.exact_sums
        && narrow_input::<T>()
        && cfg
            .float_route
            .unwrap_or_else(|| float_route::<T>(cfg.path));
    let (coeff, abs_err, retry_coeff) = if float {
        let (c, abs) = float_coeff::<T>(k, has_bias, tier1_on);
        (c, abs, coeff64)
    } else {
        (coeff64, 0.0, f64::NAN)
    };
    let bias: Vec<f64> = match &p.bias {
        Some(v) => v.iter().map(|&c| c as f64).collect(),
        None => vec![0.0; n],
    };
    let sh = Shared {
        p,
        cfg,
        row_err: rows.iter().map(|r| coeff * r.norm).collect(),
        row_norm: rows.iter().map(|r| r.norm).collect(),
        row_signs: rows.iter().map(|r| r.signs).collect(),
        col_norm: cols.iter().map(|c| c.norm).collect(),
        col_signs: cols.iter().map(|c| c.signs).collect(),
        bias_err: bias.iter().map(|c| coeff * c.abs()).collect(),
        bias,
        abs_err,
        retry_coeff,
    };
    if k == 0 {
        // Empty sums: the bias, or a signed zero.
        let mut undecided = Vec::new();
        for bi in 0..batch {
            for i in 0..m {
                let at = Out(outp.0.wrapping_add((bi * m + i) * n));
                for j in 0..n {
                    let at = Out(at.0.wrapping_add(j));
                    let cn = [sh.col_norm[bi * n + j]];
                    sh.finish_row::<O, 1>(bi, i, j, 1, &[0.0], &cn, at, &mut undecided);
                }
                for u in undecided.drain(..) {
                    let v = sh.resolve::<O>(bi, u, || sh.col_signs[bi * n + u.j]);
                    out[(bi * m + i) * n + u.j].write(v);
                }
            }
        }
        return;
    }
    if gemv {
        let chunks = n.div_ceil(GEMV_COLS);
        for bi in 0..batch {
            let a = p.a[bi];
            let a64: Vec<f64> = (0..m)
                .flat_map(|i| (0..k).map(move |q| a.at(i, q) as f64))
                .collect();
            (0..chunks).into_par_iter().for_each(|c| {
                let j0 = c * GEMV_COLS;
                let task = GemvTask {
                    sh: &sh,
                    bi,
                    j0,
                    cols: GEMV_COLS.min(n - j0),
                    a64: &a64,
                    out: outp,
                };
                run_on(cfg.path, task);
            });
        }
        return;
    }
    // Column blocks one after the other (each packs its B slab once, every thread
    // helping), row blocks of the block in parallel.
    let operand_bytes = (m + n) * k * std::mem::size_of::<T>();
    let plan = Plan::new(cfg.path, float, m, k, cfg.kc_max, operand_bytes);
    if float {
        gemm::<T, O, f32>(&sh, plan, outp);
    } else {
        gemm::<T, O, f64>(&sh, plan, outp);
    }
}

/// The GEMM path on operands packed as `E` (the route).
fn gemm<T: Input, O: Format, E: Route>(sh: &Shared<T>, plan: Plan, outp: Out<O>) {
    let p = sh.p;
    let (m, n, k) = (p.m, p.n, p.k);
    let batch = p.a.len();
    let cfg = sh.cfg;
    let row_blocks = m.div_ceil(plan.mc);
    let mut slab = vec![E::default(); plan.nc.min(n).div_ceil(plan.nr) * plan.nr * k];
    for bi in 0..batch {
        let b = p.b[bi];
        for j0 in (0..n).step_by(plan.nc) {
            let cols = plan.nc.min(n - j0);
            let slab = &mut slab[..cols.div_ceil(plan.nr) * plan.nr * k];
            pack_b_slab(&b, k, j0, cols, plan.nr, slab);
            let slab = &*slab;
            (0..row_blocks).into_par_iter().for_each(|rb| {
                E::with_scratch(|apack| {
                    SCRATCH.with(|acc| {
                        let task = GemmTask {
                            block: Block {
                                sh,
                                plan,
                                bi,
                                i0: rb * plan.mc,
                                j0,
                                cols,
                                slab,
                                out: outp,
                            },
                            apack,
                            acc: &mut acc.borrow_mut(),
                        };
                        run_on(cfg.path, task);
                    })
                });
            });
        }
    }
}
