//! Stockham autosort FFT for n = 2^a 3^b 5^c 7^d: radix-8 stages, then one radix-4 or
//! radix-2 stage for the leftover power of two (a mod 3 = 2 or 1), then the radix-7, the
//! radix-5 and the radix-3 stages (`radices`: one fixed sequence, a function of n).
//!
//! Stage s has radix R and `ns` = product of the radices before it (ns = 1 first). With
//! `stride = n / R`, butterfly i (0 <= i < n/R, j = i mod ns, k = i / ns):
//! ```text
//! v_r = src[i + r stride]                       r = 0..R-1
//! v_r = v_r * w_{ns R}^{r j}   (r >= 1, every stage but the first, j = 0 included)
//! v   = DFT_R(v)                               (butterflies.rs)
//! dst[k ns R + r ns + j] = v_r
//! ```
//! Source and destination alternate between two buffers, and the output lands in natural
//! order (autosort: no bit reversal). The loads of every stage and the stores of every
//! stage after the first are contiguous in j, so the stages vectorize along j with no
//! shuffles; vector width is a detail of the CPU loop and never changes a bit, since every
//! lane runs the same scalar DAG. CUDA (`kernels/fft/fft.cu`) runs one thread per butterfly
//! with the same DAG and the same twiddle tables.
//!
//! The power-of-two stages come first so that the odd-radix stages see ns a multiple of
//! 2^a and run on vectors whenever the vector width divides 2^a. In a mixed-radix
//! transform each stage runs on the widest vectors that suit it: W lanes, else W/2 or W/4
//! (an odd-radix stage needs the width to divide ns; a power-of-two stage with ns < W
//! only needs ns | W <= n / R, its last block overlapping the one before when W does not
//! divide n / R), else one-lane vectors (every stage when n is odd). Every width runs the
//! same DAG per butterfly, so the same bits.
//!
//! Error: each stage adds at most a few roundings of relative size 2^-24 (f32) per value
//! and the twiddles are correctly rounded, so the relative L2 error grows like
//! sqrt(log2 n) * 2^-24 (measured in tests/fft_accuracy.rs).

use super::butterflies::{Cx, dft};
#[cfg(target_arch = "x86_64")]
use super::lanes::x86;
use super::lanes::{Lanes, MAX_LANES, V, canonical};
use super::ozaki::SlicedMatrix;
use super::scalar::FftScalar;
use super::twiddles;
use crate::math::VectorPath;
use crate::math::vector::best_path;
use crate::math::vector::{Isa, PathKernel, run_on};
use num_complex::Complex32;

/// One stage: its radix, `ns`, and the twiddles w_{ns R}^{r j} stored as
/// `tw[(r - 1) ns + j]` (empty for the first stage).
#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct Stage<T> {
    pub radix: usize,
    pub ns: usize,
    pub tw_re: Vec<T>,
    pub tw_im: Vec<T>,
    /// For 1 < ns < MAX_LANES: the twiddles the vector lanes need, `lane_tw[(r - 1)
    /// MAX_LANES + l]` = `tw[(r - 1) ns + l mod ns]` (lane l of every vector is butterfly
    /// j = l mod ns), so a stage loads them instead of gathering them lane by lane on
    /// every call. The same values, laid out for vectors of up to MAX_LANES lanes.
    pub lane_tw_re: Vec<T>,
    pub lane_tw_im: Vec<T>,
}

/// The stages of a power-of-two transform (a pure function of n and the type).
#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct Stockham<T> {
    pub n: usize,
    pub stages: Vec<Stage<T>>,
    /// Precision::Ozaki: the W8 matrix cut into bf16 slices, applied instead of the DFT8
    /// DAG in the radix-8 stages (the radix-4/2 stage, whose matrix entries are 0, +-1
    /// and +-i, keeps its add/sub DAG).
    pub ozaki_w8: Option<SlicedMatrix>,
}

/// True when n > 1 is 2^a 3^b 5^c 7^d (a transform [`Stockham`] can do).
#[doc(hidden)]
pub fn is_smooth(n: usize) -> bool {
    let mut m = n;
    for p in [2, 3, 5, 7] {
        while m > 1 && m.is_multiple_of(p) {
            m /= p;
        }
    }
    n > 1 && m == 1
}

/// The radices for n = 2^a 3^b 5^c 7^d, in stage order: radix 8 while at least 8 of the
/// power of two remains, then 4 or 2 for its rest, then d radix-7, c radix-5 and b
/// radix-3 stages.
#[doc(hidden)]
pub fn radices(n: usize) -> Vec<usize> {
    assert!(is_smooth(n), "{n} is not 7-smooth");
    let p = n.trailing_zeros();
    let mut r = vec![8; (p / 3) as usize];
    match p % 3 {
        1 => r.push(2),
        2 => r.push(4),
        _ => {}
    }
    let mut m = n >> p;
    for q in [7, 5, 3] {
        while m.is_multiple_of(q) {
            r.push(q);
            m /= q;
        }
    }
    r
}

impl<T: FftScalar> Stockham<T> {
    pub fn new(n: usize, ozaki: bool) -> Self {
        let mut ns = 1usize;
        let mut stages = Vec::new();
        for radix in radices(n) {
            let (mut tw_re, mut tw_im) = (Vec::new(), Vec::new());
            if ns > 1 {
                let m = (ns * radix) as u64;
                for r in 1..radix as u64 {
                    let (re, im) = twiddles::table::<T>(ns, r, m);
                    tw_re.extend(re);
                    tw_im.extend(im);
                }
            }
            let (mut lane_tw_re, mut lane_tw_im) = (Vec::new(), Vec::new());
            if ns > 1 && ns < MAX_LANES {
                for r in 1..radix {
                    for l in 0..MAX_LANES {
                        lane_tw_re.push(tw_re[(r - 1) * ns + l % ns]);
                        lane_tw_im.push(tw_im[(r - 1) * ns + l % ns]);
                    }
                }
            }
            stages.push(Stage {
                radix,
                ns,
                tw_re,
                tw_im,
                lane_tw_re,
                lane_tw_im,
            });
            ns *= radix;
        }
        let ozaki_w8 = ozaki.then(super::ozaki::w8);
        Stockham {
            n,
            stages,
            ozaki_w8,
        }
    }

    /// Transforms (re, im) in place, with (scratch_re, scratch_im) of the same length as
    /// scratch. Forward direction.
    pub fn forward(&self, re: &mut [T], im: &mut [T], scratch_re: &mut [T], scratch_im: &mut [T]) {
        execute(self, re, im, scratch_re, scratch_im)
    }

    /// Scratch values [`Stockham::forward_interleaved`] needs: two buffer pairs.
    #[doc(hidden)]
    pub fn interleaved_scratch_len(&self) -> usize {
        4 * self.n
    }

    /// Forward transform of one interleaved row, `input` (or `out` itself when `None`) into
    /// `out`, with the copy of the loops for `path`: the values are conjugated on the way
    /// in and out when `conj` (the inverse), rounded once to f32 and NaNs made canonical,
    /// exactly as if the row were split, transformed by [`Stockham::forward`] and joined.
    #[doc(hidden)]
    pub fn forward_interleaved(
        &self,
        path: VectorPath,
        input: Option<&[Complex32]>,
        out: &mut [Complex32],
        conj: bool,
        scratch: &mut [T],
    ) {
        let n = self.n;
        assert!(out.len() == n && input.is_none_or(|i| i.len() == n));
        assert!(scratch.len() >= 4 * n);
        let dst = out.as_mut_ptr();
        let io = Io::Interleaved {
            src: Input::Complex(input.map_or(dst as *const Complex32, |i| i.as_ptr())),
            dst,
            conj,
            scratch: scratch.as_mut_ptr(),
        };
        // SAFETY: n values at src and dst, 4n in scratch (checked above); the scratch is
        // borrowed apart from both.
        unsafe { dispatch(self, path, io) }
    }

    /// [`Stockham::forward_interleaved`] of a real row (forward direction): the bits of
    /// the forward transform of the complex row with +0 imaginary parts, without building
    /// it (the first stage reads the real values).
    #[doc(hidden)]
    pub fn forward_real(
        &self,
        path: VectorPath,
        input: &[f32],
        out: &mut [Complex32],
        scratch: &mut [T],
    ) {
        let n = self.n;
        assert!(out.len() == n && input.len() == n);
        assert!(scratch.len() >= 4 * n);
        let io = Io::Interleaved {
            src: Input::Real(input.as_ptr()),
            dst: out.as_mut_ptr(),
            conj: false,
            scratch: scratch.as_mut_ptr(),
        };
        // SAFETY: n values at src and dst, 4n in scratch (checked above); all three are
        // distinct borrows.
        unsafe { dispatch(self, path, io) }
    }
}

/// Runs the stages on the widest vector unit of this CPU (split buffers in and out).
fn execute<T: FftScalar>(
    plan: &Stockham<T>,
    re: &mut [T],
    im: &mut [T],
    sre: &mut [T],
    sim: &mut [T],
) {
    let n = plan.n;
    assert!(re.len() == n && im.len() == n && sre.len() == n && sim.len() == n);
    let io = Io::Split {
        re: re.as_mut_ptr(),
        im: im.as_mut_ptr(),
        sre: sre.as_mut_ptr(),
        sim: sim.as_mut_ptr(),
    };
    // SAFETY: four distinct buffers of n values (checked above).
    unsafe { dispatch(plan, best_path(), io) }
}

/// Where a transform reads its input and leaves its output.
#[derive(Clone, Copy)]
enum Io<T> {
    /// (re, im) in, (re, im) out, (sre, sim) the other buffer pair (all n long).
    Split {
        re: *mut T,
        im: *mut T,
        sre: *mut T,
        sim: *mut T,
    },
    /// `src` (n interleaved values, conjugated on the way in when `conj`; or n real
    /// values, with `conj` false) to `dst` (n values, rounded to f32, conjugated when
    /// `conj`, NaNs canonical); `src` may equal `dst`. `scratch` holds 4n values (two
    /// buffer pairs).
    Interleaved {
        src: Input,
        dst: *mut Complex32,
        conj: bool,
        scratch: *mut T,
    },
}

/// The input of an interleaved transform: complex values, or real values whose imaginary
/// parts are +0.
#[derive(Clone, Copy)]
enum Input {
    Complex(*const Complex32),
    Real(*const f32),
}

/// Runs `io` with the copy of the stage loops for `path` (or the widest below it that the
/// CPU has). Only the vector width differs between the copies.
///
/// # Safety
/// The pointers of `io` are valid for n values as described on [`Io`], and only `src`
/// and `dst` may overlap.
unsafe fn dispatch<T: FftScalar>(plan: &Stockham<T>, path: VectorPath, io: Io<T>) {
    run_on(path, Stages { plan, io })
}

/// The stage loops as a kernel for [`run_on`], with vectors of the instruction set's width.
/// Built only by [`dispatch`], whose caller vouches for the pointers.
struct Stages<'a, T> {
    plan: &'a Stockham<T>,
    io: Io<T>,
}

impl<T: FftScalar> PathKernel<()> for Stages<'_, T> {
    #[inline(always)]
    fn run<I: Isa>(self) {
        // SAFETY: as for `dispatch`, the only constructor; the copy being compiled has the
        // instructions of vectors of `I::VECTOR_BYTES`.
        unsafe { execute_lanes(self.plan, self.io, I::VECTOR_BYTES) }
    }
}

/// The stages with vectors of at most `bytes` (fewer lanes when the transform is short:
/// the lane count must divide every stride n / R, and n / 8 >= 4); the Ozaki stages and
/// transforms shorter than 32 run the scalar loops.
#[inline(always)]
unsafe fn execute_lanes<T: FftScalar>(plan: &Stockham<T>, io: Io<T>, bytes: usize) {
    let n = plan.n;
    if plan.ozaki_w8.is_some() || n < 32 {
        // SAFETY: as for `dispatch`.
        return unsafe { execute_scalar(plan, io) };
    }
    let any = plan as &dyn std::any::Any;
    // SAFETY (both arms): as for `dispatch`; each vector type's lane count divides n / 8
    // and the copy being compiled has its instructions (AVX-512 for 64 bytes, AVX for 32,
    // SSE2, part of x86-64, for 16).
    if let Some(p) = any.downcast_ref::<Stockham<f32>>() {
        let io = io.cast::<f32>();
        let w = (bytes / 4).min(n / 8);
        #[cfg(target_arch = "x86_64")]
        unsafe {
            match w {
                16 => run::<f32, x86::F32x16>(p, io),
                8 => run::<f32, x86::F32x8>(p, io),
                _ => run::<f32, x86::F32x4>(p, io),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        unsafe {
            let _ = w;
            run::<f32, V<f32, 4>>(p, io)
        }
    } else if let Some(p) = any.downcast_ref::<Stockham<f64>>() {
        let io = io.cast::<f64>();
        let w = (bytes / 8).min(n / 8);
        #[cfg(target_arch = "x86_64")]
        unsafe {
            match w {
                8 => run::<f64, x86::F64x8>(p, io),
                4 => run::<f64, x86::F64x4>(p, io),
                _ => run::<f64, x86::F64x2>(p, io),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        unsafe {
            let _ = w;
            run::<f64, V<f64, 2>>(p, io)
        }
    } else {
        unreachable!("FftScalar is f32 or f64")
    }
}

impl<T> Io<T> {
    /// The same pointers as another element type (T is that type; see execute_lanes).
    fn cast<U>(self) -> Io<U> {
        match self {
            Io::Split { re, im, sre, sim } => Io::Split {
                re: re as *mut U,
                im: im as *mut U,
                sre: sre as *mut U,
                sim: sim as *mut U,
            },
            Io::Interleaved {
                src,
                dst,
                conj,
                scratch,
            } => Io::Interleaved {
                src,
                dst,
                conj,
                scratch: scratch as *mut U,
            },
        }
    }
}

/// The scalar stage loops (Ozaki, and n < 32), on split buffers.
#[inline(always)]
unsafe fn execute_scalar<T: FftScalar>(plan: &Stockham<T>, io: Io<T>) {
    let n = plan.n;
    // SAFETY (whole function): the pointers are valid for n values (or 4n for scratch).
    unsafe {
        match io {
            Io::Split { re, im, sre, sim } => execute_portable(
                plan,
                std::slice::from_raw_parts_mut(re, n),
                std::slice::from_raw_parts_mut(im, n),
                std::slice::from_raw_parts_mut(sre, n),
                std::slice::from_raw_parts_mut(sim, n),
            ),
            Io::Interleaved {
                src,
                dst,
                conj,
                scratch,
            } => {
                let s = std::slice::from_raw_parts_mut(scratch, 4 * n);
                let (re, rest) = s.split_at_mut(n);
                let (im, rest) = rest.split_at_mut(n);
                let (sre, sim) = rest.split_at_mut(n);
                for j in 0..n {
                    let z = match src {
                        Input::Complex(p) => *p.add(j),
                        Input::Real(p) => Complex32::new(*p.add(j), 0.0),
                    };
                    re[j] = T::from_f32(z.re);
                    im[j] = T::from_f32(if conj { -z.im } else { z.im });
                }
                execute_portable(plan, re, im, sre, sim);
                for j in 0..n {
                    let (a, b) = (re[j].to_f32(), im[j].to_f32());
                    *dst.add(j) =
                        Complex32::new(canonical(a), canonical(if conj { -b } else { b }));
                }
            }
        }
    }
}

/// The vector stage loops with vectors L: stage s reads one buffer pair and writes the
/// other; under `Io::Interleaved` the first stage reads the interleaved input (the
/// conversion to split arrays is fused into it) and the last writes the interleaved
/// output.
#[inline(always)]
unsafe fn run<T: FftScalar, L: Lanes<T>>(plan: &Stockham<T>, io: Io<T>) {
    // Short transforms stay in L1 and keep the plain layout and the single-stage passes
    // (a copy of the loops without the index swizzle).
    // SAFETY: as for run_with.
    unsafe {
        if !plan.n.is_power_of_two() {
            run_mixed::<T, L>(plan, io)
        } else if plan.n >= FUSE_MIN {
            run_with::<T, L>(plan, io)
        } else {
            run_plain::<T, L>(plan, io)
        }
    }
}

/// The two buffer pairs the passes alternate between: the caller's split buffers and
/// their scratch, or two pairs carved from the interleaved transform's scratch.
///
/// # Safety
/// As for `dispatch` (scratch holds 4n values).
#[inline(always)]
unsafe fn buffer_pairs<T>(io: Io<T>, n: usize) -> ((*mut T, *mut T), (*mut T, *mut T)) {
    match io {
        Io::Split { re, im, sre, sim } => ((re, im), (sre, sim)),
        // SAFETY: scratch holds 4n values.
        Io::Interleaved { scratch, .. } => unsafe {
            (
                (scratch, scratch.add(n)),
                (scratch.add(2 * n), scratch.add(3 * n)),
            )
        },
    }
}

/// After an odd number of passes the split result sits in the scratch pair: copy it back.
/// (The interleaved transform's last pass writes its output directly.)
///
/// # Safety
/// As for `dispatch`.
#[inline(always)]
unsafe fn copy_back_if_odd<T>(io: Io<T>, n: usize, passes: usize) {
    if let Io::Split { re, im, sre, sim } = io
        && passes % 2 == 1
    {
        // SAFETY: distinct buffers of n values.
        unsafe {
            std::ptr::copy_nonoverlapping(sre, re, n);
            std::ptr::copy_nonoverlapping(sim, im, n);
        }
    }
}

/// `run` for short transforms: one pass per stage, plain layout.
#[inline(always)]
unsafe fn run_plain<T: FftScalar, L: Lanes<T>>(plan: &Stockham<T>, io: Io<T>) {
    let n = plan.n;
    let last = plan.stages.len() - 1;
    assert!(last >= 1 && plan.stages[0].radix == 8 && (n / 8).is_multiple_of(L::W));
    // SAFETY: as for run.
    let (a, b) = unsafe { buffer_pairs(io, n) };
    for (s, st) in plan.stages.iter().enumerate() {
        let (from, to) = if s % 2 == 0 { (a, b) } else { (b, a) };
        let split_src = SplitSrc::of(from, false);
        let split_dst = SplitDst::of(to, false);
        // SAFETY (all stages): each buffer is n long; src and dst are different pairs, or
        // the interleaved input and the scratch.
        unsafe {
            match io {
                Io::Interleaved {
                    src: Input::Complex(p),
                    conj,
                    ..
                } if s == 0 => stage_v::<T, 8, L, _, _>(st, n, &CxSrc { p, conj }, &split_dst),
                Io::Interleaved {
                    src: Input::Real(p),
                    ..
                } if s == 0 => stage_v::<T, 8, L, _, _>(st, n, &RealSrc { p }, &split_dst),
                Io::Interleaved { dst, conj, .. } if s == last => {
                    stage_r::<T, L, _, _>(st, n, &split_src, &CxDst { p: dst, conj })
                }
                _ => stage_r::<T, L, _, _>(st, n, &split_src, &split_dst),
            }
        }
    }
    // SAFETY: as for run.
    unsafe { copy_back_if_odd(io, n, plan.stages.len()) };
}

/// True when a stage runs on vectors of W lanes (`stage_v`): W divides ns (then W divides
/// the stride n / R too, a multiple of ns), or the radix is a power of two, ns divides W
/// and W is at most the stride (the transposed stores; the last block may overlap the
/// one before it).
fn vector_stage_fits(radix: usize, ns: usize, n: usize, w: usize) -> bool {
    ns.is_multiple_of(w)
        || (radix.is_power_of_two() && ns < w && w.is_multiple_of(ns) && w <= n / radix)
}

/// The lane count a mixed-radix stage runs on in the copy with vectors L: the widest of
/// W, W/2, W/4 (`Lanes::Half`) that `vector_stage_fits`, else 1. A speed detail: every
/// width runs the same DAG per butterfly.
fn mixed_stage_width<T: FftScalar, L: Lanes<T>>(radix: usize, ns: usize, n: usize) -> usize {
    let widths = [
        L::W,
        <L::Half as Lanes<T>>::W,
        <<L::Half as Lanes<T>>::Half as Lanes<T>>::W,
    ];
    widths
        .into_iter()
        .find(|&w| w > 1 && vector_stage_fits(radix, ns, n, w))
        .unwrap_or(1)
}

/// One stage of `run_mixed` on `mixed_stage_width` lanes.
///
/// # Safety
/// As for stage_v, without the condition on W (the width chosen here satisfies it).
#[inline(always)]
unsafe fn stage_mixed<T: FftScalar, L: Lanes<T>>(
    st: &Stage<T>,
    n: usize,
    src: &SplitSrc<T>,
    dst: &SplitDst<T>,
) {
    type H<T, L> = <L as Lanes<T>>::Half;
    type Q<T, L> = <H<T, L> as Lanes<T>>::Half;
    let w = mixed_stage_width::<T, L>(st.radix, st.ns, n);
    // SAFETY: the caller's; `w` fits the stage (vector_stage_fits).
    unsafe {
        if w == L::W {
            stage_r::<T, L, _, _>(st, n, src, dst)
        } else if w == H::<T, L>::W {
            stage_r::<T, H<T, L>, _, _>(st, n, src, dst)
        } else if w == Q::<T, L>::W {
            stage_r::<T, Q<T, L>, _, _>(st, n, src, dst)
        } else {
            stage_one_lane(st, n, src, dst)
        }
    }
}

/// `run` for n not a power of two (mixed radix): an interleaved input is first converted
/// to split buffers (exactly, conjugated when asked: the values the first stage would
/// read), then one pass per stage in the plain layout, each stage on the widest vectors
/// of L, L::Half, L::Half::Half that fit it (`mixed_stage_width`) and on one-lane vectors
/// elsewhere (the same DAG per butterfly), then the split result is rounded to the
/// interleaved output (as `CxDst`).
#[inline(always)]
unsafe fn run_mixed<T: FftScalar, L: Lanes<T>>(plan: &Stockham<T>, io: Io<T>) {
    let n = plan.n;
    // SAFETY: as for run.
    let (a, b) = unsafe { buffer_pairs(io, n) };
    if let Io::Interleaved { src, conj, .. } = io {
        // SAFETY: n values at src, pair a holds n values apart from it (scratch).
        unsafe { convert_in::<T, L>(src, conj, a, n) };
    }
    for (s, st) in plan.stages.iter().enumerate() {
        let (from, to) = if s % 2 == 0 { (a, b) } else { (b, a) };
        let src = SplitSrc::of(from, false);
        let dst = SplitDst::of(to, false);
        // SAFETY: as for run (each buffer pair is n long and the two are distinct).
        unsafe { stage_mixed::<T, L>(st, n, &src, &dst) }
    }
    let at = if plan.stages.len() % 2 == 1 { b } else { a };
    match io {
        // SAFETY: as for run.
        Io::Split { .. } => unsafe { copy_back_if_odd(io, n, plan.stages.len()) },
        // SAFETY: n values at dst, apart from the scratch pair `at`.
        Io::Interleaved { dst, conj, .. } => unsafe { convert_out::<T, L>(at, dst, conj, n) },
    }
}

/// A stage on one-lane vectors (`run_mixed` where the vector width does not fit): one copy
/// per type, outside the per-instruction-set copies (one lane needs no vector unit).
///
/// # Safety
/// As for stage_v.
#[inline(never)]
unsafe fn stage_one_lane<T: FftScalar>(
    st: &Stage<T>,
    n: usize,
    src: &SplitSrc<T>,
    dst: &SplitDst<T>,
) {
    // SAFETY: the caller's; one lane divides every stride.
    unsafe { stage_r::<T, V<T, 1>, _, _>(st, n, src, dst) }
}

/// The interleaved (or real) f32 input to the split pair `to`, converted to T (exact), im
/// negated when `conj`: what `CxSrc` / `RealSrc` give the first stage.
///
/// # Safety
/// n values at the input, n in each buffer of `to`, not overlapping it.
#[inline(always)]
unsafe fn convert_in<T: FftScalar, L: Lanes<T>>(
    src: Input,
    conj: bool,
    to: (*mut T, *mut T),
    n: usize,
) {
    let w = if L::W <= n { L::W } else { 1 };
    let dst = SplitDst::of(to, false);
    // SAFETY (both loops): at + W <= n for the vector loop (the last vector starts at
    // n - W when W does not divide n: its values are converted again, to the same bits),
    // at < n for the one-lane loop.
    unsafe {
        if w == L::W {
            for at in vector_starts(n, w) {
                let v: Cx<L> = match src {
                    Input::Complex(p) => Source::<T, L>::load(&CxSrc { p, conj }, at),
                    Input::Real(p) => Source::<T, L>::load(&RealSrc { p }, at),
                };
                Sink::<T, L>::store(&dst, at, v);
            }
        } else {
            for at in 0..n {
                let v: Cx<V<T, 1>> = match src {
                    Input::Complex(p) => Source::<T, V<T, 1>>::load(&CxSrc { p, conj }, at),
                    Input::Real(p) => Source::<T, V<T, 1>>::load(&RealSrc { p }, at),
                };
                Sink::<T, V<T, 1>>::store(&dst, at, v);
            }
        }
    }
}

/// The starts of the vectors of w values that cover 0..n (w <= n): 0, w, 2w, .., and
/// n - w last when w does not divide n (then it overlaps the vector before it).
#[inline(always)]
fn vector_starts(n: usize, w: usize) -> impl Iterator<Item = usize> {
    let count = n.div_ceil(w);
    (0..count).map(move |b| if b + 1 < count { b * w } else { n - w })
}

/// The split pair `from` to the interleaved f32 output: rounded once, conjugated when
/// `conj`, NaNs canonical (`CxDst`).
///
/// # Safety
/// n values in each buffer of `from` and at dst, not overlapping.
#[inline(always)]
unsafe fn convert_out<T: FftScalar, L: Lanes<T>>(
    from: (*mut T, *mut T),
    dst: *mut Complex32,
    conj: bool,
    n: usize,
) {
    let src = SplitSrc::of(from, false);
    let out = CxDst { p: dst, conj };
    // SAFETY: as for convert_in.
    unsafe {
        if L::W <= n {
            for at in vector_starts(n, L::W) {
                let v: Cx<L> = Source::<T, L>::load(&src, at);
                Sink::<T, L>::store(&out, at, v);
            }
        } else {
            for at in 0..n {
                let v: Cx<V<T, 1>> = Source::<T, V<T, 1>>::load(&src, at);
                Sink::<T, V<T, 1>>::store(&out, at, v);
            }
        }
    }
}

/// `run` for long transforms: the intermediate buffers in the swizzled layout, and each
/// radix-8 stage with ns >= W fused with the stage after it.
#[inline(always)]
unsafe fn run_with<T: FftScalar, L: Lanes<T>>(plan: &Stockham<T>, io: Io<T>) {
    let n = plan.n;
    let last = plan.stages.len() - 1;
    assert!(last >= 1 && plan.stages[0].radix == 8 && (n / 8).is_multiple_of(L::W));
    // SAFETY: as for run.
    let (a, b) = unsafe { buffer_pairs(io, n) };
    // The passes over the data, as (first stage, fused): one stage, or a radix-8 stage
    // with ns >= W fused with the stage after it (see `stage_pair`); a fixed array, so no
    // allocation per transform.
    let mut pass_buf = [(0usize, false); usize::BITS as usize];
    let mut count = 0;
    let mut s = 0;
    while s < plan.stages.len() {
        let st = &plan.stages[s];
        let fuse = st.radix == 8 && st.ns >= L::W && s + 1 < plan.stages.len();
        pass_buf[count] = (s, fuse);
        count += 1;
        s += if fuse { 2 } else { 1 };
    }
    let passes = &pass_buf[..count];
    let last_pass = passes.len() - 1;
    for (p, &(s, fuse)) in passes.iter().enumerate() {
        let st = &plan.stages[s];
        let (from, to) = if p % 2 == 0 { (a, b) } else { (b, a) };
        // The buffers between passes hold their values in the swizzled layout (see
        // `swizzle`); the caller's split buffers are read by the first pass and written
        // by the last in natural order.
        let split_src = SplitSrc::of(from, p > 0);
        let split_dst = SplitDst::of(to, p < last_pass);
        // SAFETY (all passes): each buffer is n long; src and dst are different pairs, or
        // the interleaved input and the scratch; a fused pair is a radix-8 stage with
        // W <= ns and the stage after it (checked above).
        unsafe {
            match io {
                Io::Interleaved {
                    src: Input::Complex(src),
                    conj,
                    ..
                } if p == 0 => {
                    debug_assert!(!fuse);
                    stage_v::<T, 8, L, _, _>(st, n, &CxSrc { p: src, conj }, &split_dst)
                }
                Io::Interleaved {
                    src: Input::Real(src),
                    ..
                } if p == 0 => {
                    debug_assert!(!fuse);
                    stage_v::<T, 8, L, _, _>(st, n, &RealSrc { p: src }, &split_dst)
                }
                Io::Interleaved { dst, conj, .. } if p == last_pass => {
                    let d = &CxDst { p: dst, conj };
                    if fuse {
                        stage_pair_r::<T, L, _, _>(st, &plan.stages[s + 1], n, &split_src, d)
                    } else {
                        stage_r::<T, L, _, _>(st, n, &split_src, d)
                    }
                }
                _ if fuse => {
                    stage_pair_r::<T, L, _, _>(st, &plan.stages[s + 1], n, &split_src, &split_dst)
                }
                _ => stage_r::<T, L, _, _>(st, n, &split_src, &split_dst),
            }
        }
    }
    // SAFETY: as for run.
    unsafe { copy_back_if_odd(io, n, passes.len()) };
}

/// One vector stage of the stage's radix.
#[inline(always)]
unsafe fn stage_r<T: FftScalar, L: Lanes<T>, S: Source<T, L>, D: Sink<T, L>>(
    st: &Stage<T>,
    n: usize,
    src: &S,
    dst: &D,
) {
    // SAFETY: as for stage_v.
    unsafe {
        match st.radix {
            8 => stage_v::<T, 8, L, S, D>(st, n, src, dst),
            4 => stage_v::<T, 4, L, S, D>(st, n, src, dst),
            2 => stage_v::<T, 2, L, S, D>(st, n, src, dst),
            7 => stage_v::<T, 7, L, S, D>(st, n, src, dst),
            5 => stage_v::<T, 5, L, S, D>(st, n, src, dst),
            3 => stage_v::<T, 3, L, S, D>(st, n, src, dst),
            r => unreachable!("radix {r}"),
        }
    }
}

/// Where a stage reads: L::W consecutive complex values from index `at`.
trait Source<T: FftScalar, L: Lanes<T>> {
    unsafe fn load(&self, at: usize) -> Cx<L>;
}

/// Where a stage writes: L::W consecutive complex values at index `at`.
trait Sink<T: FftScalar, L: Lanes<T>> {
    unsafe fn store(&self, at: usize, v: Cx<L>);
}

/// Where logical index `p` of an intermediate buffer lives: the 64-byte lines inside each
/// 4 KiB page are permuted (line index xor a hash of the page number). A stage's R loads
/// (n / R apart) and stores (ns apart) are power-of-two strides, which would all map to
/// the same L1 set and alias on the low 12 address bits; the swizzle spreads them over
/// different sets. It is a bijection on 0..n (n a multiple of the page, or the identity
/// when n fits in one page) and moves aligned groups of 64 bytes as a unit, so the W
/// consecutive values of a vector (at an index multiple of W, W values <= 64 bytes) stay
/// consecutive. A pure memory layout: no value changes.
#[inline(always)]
fn swizzle<T>(p: usize) -> usize {
    let size = std::mem::size_of::<T>().trailing_zeros();
    let q = p >> (12 - size);
    let h = (q ^ (q >> 6) ^ (q >> 12)) & 63;
    p ^ (h << (6 - size))
}

struct SplitSrc<T> {
    re: *const T,
    im: *const T,
    /// The buffers are in the swizzled layout.
    swz: bool,
}

impl<T> SplitSrc<T> {
    /// Reads the buffer pair `(re, im)`.
    fn of(pair: (*mut T, *mut T), swz: bool) -> Self {
        SplitSrc {
            re: pair.0 as *const T,
            im: pair.1 as *const T,
            swz,
        }
    }
}

impl<T: FftScalar, L: Lanes<T>> Source<T, L> for SplitSrc<T> {
    #[inline(always)]
    unsafe fn load(&self, at: usize) -> Cx<L> {
        let at = if self.swz { swizzle::<T>(at) } else { at };
        // SAFETY: the caller's (at + W <= n; the swizzle keeps the W values in 0..n).
        unsafe { Cx::new(L::load(self.re.add(at)), L::load(self.im.add(at))) }
    }
}

struct SplitDst<T> {
    re: *mut T,
    im: *mut T,
    /// The buffers are in the swizzled layout.
    swz: bool,
}

impl<T> SplitDst<T> {
    /// Writes the buffer pair `(re, im)`.
    fn of(pair: (*mut T, *mut T), swz: bool) -> Self {
        SplitDst {
            re: pair.0,
            im: pair.1,
            swz,
        }
    }
}

impl<T: FftScalar, L: Lanes<T>> Sink<T, L> for SplitDst<T> {
    #[inline(always)]
    unsafe fn store(&self, at: usize, v: Cx<L>) {
        let at = if self.swz { swizzle::<T>(at) } else { at };
        // SAFETY: the caller's (at + W <= n; the swizzle keeps the W values in 0..n).
        unsafe {
            v.re.store(self.re.add(at));
            v.im.store(self.im.add(at));
        }
    }
}

/// The interleaved f32 input, converted to T (exact) and conjugated (exact) on loading.
struct CxSrc {
    p: *const Complex32,
    conj: bool,
}

impl<T: FftScalar, L: Lanes<T>> Source<T, L> for CxSrc {
    #[inline(always)]
    unsafe fn load(&self, at: usize) -> Cx<L> {
        // SAFETY: the caller's (at + W <= n).
        unsafe { L::load_cx(self.p.add(at), self.conj) }
    }
}

/// Real f32 input, converted to T (exact), with +0 imaginary parts.
struct RealSrc {
    p: *const f32,
}

impl<T: FftScalar, L: Lanes<T>> Source<T, L> for RealSrc {
    #[inline(always)]
    unsafe fn load(&self, at: usize) -> Cx<L> {
        // SAFETY: the caller's (at + W <= n).
        unsafe { L::load_real(self.p.add(at)) }
    }
}

/// The interleaved f32 output: rounded once to f32, conjugated, NaNs made canonical.
struct CxDst {
    p: *mut Complex32,
    conj: bool,
}

impl<T: FftScalar, L: Lanes<T>> Sink<T, L> for CxDst {
    #[inline(always)]
    unsafe fn store(&self, at: usize, v: Cx<L>) {
        // SAFETY: the caller's (at + W <= n).
        unsafe { L::store_cx(self.p.add(at), v, self.conj) }
    }
}

/// The R vectors as R x (W / G) blocks of G lanes, transposed: afterwards vector q holds
/// blocks q (W / G) .. (q + 1) (W / G) of the sequence (block c of input r at c R + r).
/// log2 R rounds of pairing r with r + R/2 (a perfect shuffle each).
#[inline(always)]
fn transpose<T: FftScalar, L: Lanes<T>, const R: usize, const G: usize>(v: &mut [Cx<L>; R]) {
    let mut h = R;
    while h > 1 {
        let old = *v;
        for m in 0..R / 2 {
            let (a, b) = (old[m], old[m + R / 2]);
            // SAFETY: called from the copy compiled for L's instructions (run's contract).
            unsafe {
                v[2 * m] = Cx::new(a.re.zip_lo::<G>(b.re), a.im.zip_lo::<G>(b.im));
                v[2 * m + 1] = Cx::new(a.re.zip_hi::<G>(b.re), a.im.zip_hi::<G>(b.im));
            }
        }
        h /= 2;
    }
}

/// One stage on W = L::W lanes (module comment for the index map): lanes are W
/// consecutive butterflies i, whose loads are contiguous. When ns >= W the lanes share k
/// and their stores are contiguous too; when ns < W (ns divides W), the W butterflies'
/// R W outputs form one contiguous block of dst, permuted before it is stored. There the
/// stride n / R need not be a multiple of W (mixed radix: n = 400's first stage has
/// stride 50): the last block starts at n / R - W instead, a multiple of ns, and runs
/// again some butterflies of the block before it, which store the same values (the same
/// DAG on the same inputs) to the same places.
///
/// # Safety
/// `src` and `dst` are valid for n complex values and do not overlap; W divides n / R,
/// or (power-of-two R only) ns < W, ns divides W and W <= n / R.
#[inline(always)]
unsafe fn stage_v<T: FftScalar, const R: usize, L: Lanes<T>, S, D>(
    st: &Stage<T>,
    n: usize,
    src: &S,
    dst: &D,
) where
    S: Source<T, L>,
    D: Sink<T, L>,
{
    debug_assert_eq!(st.radix, R);
    let w = L::W;
    let stride = n / R;
    let ns = st.ns;
    debug_assert!(stride.is_multiple_of(w) || (R.is_power_of_two() && ns < w && w <= stride));
    let (twr, twi) = (st.tw_re.as_ptr(), st.tw_im.as_ptr());
    // Odd radices always have W | ns (vector_stage_fits): the transposed stores are for
    // the power-of-two radices only.
    if ns >= w || !R.is_power_of_two() {
        for k in 0..stride / ns {
            for j in (0..ns).step_by(w) {
                let i = k * ns + j;
                // SAFETY: i + r stride + W <= n; twiddle indices (r - 1) ns + j + W <=
                // (R - 1) ns, the table's length; outputs k ns R + r ns + j + W <= n.
                unsafe {
                    let mut v: [Cx<L>; R] = std::array::from_fn(|r| src.load(i + r * stride));
                    if ns > 1 {
                        for (r, x) in v.iter_mut().enumerate().skip(1) {
                            let at = (r - 1) * ns + j;
                            *x = x.mul(Cx::new(L::load(twr.add(at)), L::load(twi.add(at))));
                        }
                    }
                    dft::<L, R>(&mut v);
                    let o = k * ns * R + j;
                    for (r, x) in v.into_iter().enumerate() {
                        dst.store(o + r * ns, x);
                    }
                }
            }
        }
    } else {
        // The twiddles of lane l are those of j = l mod ns (the block start is a multiple
        // of W, hence of ns): the first W of the plan's MAX_LANES-lane pattern, whose
        // period ns divides W.
        // (Entry 0, and every entry when ns = 1, is never used: zeros.)
        let zero = L::from_lanes(&[T::ZERO; MAX_LANES]);
        let tw: [Cx<L>; R] = std::array::from_fn(|r| {
            if r > 0 && ns > 1 {
                let at = (r - 1) * MAX_LANES;
                // SAFETY: the lane tables hold (R - 1) MAX_LANES values for 1 < ns < W.
                unsafe {
                    Cx::new(
                        L::load(st.lane_tw_re.as_ptr().add(at)),
                        L::load(st.lane_tw_im.as_ptr().add(at)),
                    )
                }
            } else {
                Cx::new(zero, zero)
            }
        });
        // Whole blocks, then (stride not a multiple of W) the last W butterflies.
        for base in vector_starts(stride, w) {
            // SAFETY: base + r stride + W <= n; the block base R .. (base + W) R is in dst.
            unsafe {
                let mut v: [Cx<L>; R] = std::array::from_fn(|r| src.load(base + r * stride));
                if ns > 1 {
                    for (x, t) in v.iter_mut().zip(tw.iter()).skip(1) {
                        *x = x.mul(*t);
                    }
                }
                dft::<L, R>(&mut v);
                // Butterfly base + g ns + jj (k = base / ns + g) writes output r to
                // dst[k ns R + r ns + jj] = dst[base R + g ns R + r ns + jj]: a transpose
                // of R x (W / ns) blocks of ns lanes, log2 R rounds of block zips.
                match ns {
                    1 => transpose::<T, L, R, 1>(&mut v),
                    2 => transpose::<T, L, R, 2>(&mut v),
                    4 => transpose::<T, L, R, 4>(&mut v),
                    _ => transpose::<T, L, R, 8>(&mut v),
                }
                for (q, x) in v.into_iter().enumerate() {
                    dst.store(base * R + q * w, x);
                }
            }
        }
    }
}

/// Smallest n whose stages run fused in pairs (`stage_pair`) and whose intermediate
/// buffers are swizzled (`run_with`): below it the data stays in L1 and the passes cost
/// little. From 2^11 the scratch pairs outgrow L1 and one pass fewer pays: `fft_speed`
/// measured 2048 4.6 -> 4.0 us, 4096 12.4 -> 9.0, 8192 32.6 -> 22.1 against 2^14; at 2^8
/// the swizzled loops cost more than they save (1024: 1.3 -> 1.5-2.5 us).
const FUSE_MIN: usize = 1 << 11;

/// Two consecutive stages, a (radix 8, ns) and b (radix R2 = 8, 4 or 2, 8 ns), in one
/// pass over the data, with exactly the operations of `stage_v` for each (same loads,
/// twiddle products, DFT DAGs and stores; only the order in which butterflies run changes,
/// and the values between the two stages stay in registers / the stack instead of a
/// buffer).
///
/// Stage a's butterfly (k, j) writes output r to t[k 8ns + r ns + j]; stage b's butterfly
/// i2 = k2 8ns + j2 (j2 < 8ns) reads t[i2 + r2 n/R2]. So with k = r2 n/(8 R2 ns) + k2 and
/// j2 = r ns + j, the R2 butterflies of stage a with fixed (k2, j), r2 = 0..R2-1, produce
/// exactly the 8 R2 inputs of the 8 butterflies of stage b with j2 = r ns + j, r = 0..7:
/// stage a's input r of butterfly r2 is src[k2 ns + j + r n/8 + r2 n/(8 R2)] and stage
/// b's output r' of butterfly r is dst[k2 8 R2 ns + r' 8ns + r ns + j].
///
/// # Safety
/// As for stage_v, and W divides ns = a.ns, b.ns = 8 ns, a is radix 8 and b radix R2.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // r indexes the columns of t, not one array
unsafe fn stage_pair<T: FftScalar, L: Lanes<T>, const R2: usize, S, D>(
    a: &Stage<T>,
    b: &Stage<T>,
    n: usize,
    src: &S,
    dst: &D,
) where
    S: Source<T, L>,
    D: Sink<T, L>,
{
    let w = L::W;
    let ns = a.ns;
    let ns2 = 8 * ns;
    debug_assert!(a.radix == 8 && b.radix == R2 && b.ns == ns2 && ns.is_multiple_of(w));
    let (ar, ai) = (a.tw_re.as_ptr(), a.tw_im.as_ptr());
    let (br, bi) = (b.tw_re.as_ptr(), b.tw_im.as_ptr());
    let (s8, s8r2) = (n / 8, n / (8 * R2));
    for k2 in 0..n / (8 * R2 * ns) {
        for j in (0..ns).step_by(w) {
            // SAFETY: every index is one of stage_v's for stage a (loads, twiddles) or
            // stage b (twiddles, stores), which are in bounds (see there).
            unsafe {
                // t[r2][r]: output r of stage a's butterfly r2 = input r2 of stage b's
                // butterfly r.
                let mut t: [[Cx<L>; 8]; R2] = [[Cx::new(L::W8_C, L::W8_C); 8]; R2];
                for (r2, tr) in t.iter_mut().enumerate() {
                    let i = k2 * ns + j + r2 * s8r2;
                    let mut v: [Cx<L>; 8] = std::array::from_fn(|r| src.load(i + r * s8));
                    if ns > 1 {
                        for (r, x) in v.iter_mut().enumerate().skip(1) {
                            let at = (r - 1) * ns + j;
                            *x = x.mul(Cx::new(L::load(ar.add(at)), L::load(ai.add(at))));
                        }
                    }
                    dft::<L, 8>(&mut v);
                    *tr = v;
                }
                for r in 0..8 {
                    let j2 = r * ns + j;
                    let mut v: [Cx<L>; R2] = std::array::from_fn(|r2| t[r2][r]);
                    for (r2, x) in v.iter_mut().enumerate().skip(1) {
                        let at = (r2 - 1) * ns2 + j2;
                        *x = x.mul(Cx::new(L::load(br.add(at)), L::load(bi.add(at))));
                    }
                    dft::<L, R2>(&mut v);
                    let o = k2 * R2 * ns2 + j2;
                    for (r2, x) in v.into_iter().enumerate() {
                        dst.store(o + r2 * ns2, x);
                    }
                }
            }
        }
    }
}

/// `stage_pair` for the radix of b.
///
/// # Safety
/// As for stage_pair.
#[inline(always)]
unsafe fn stage_pair_r<T: FftScalar, L: Lanes<T>, S, D>(
    a: &Stage<T>,
    b: &Stage<T>,
    n: usize,
    src: &S,
    dst: &D,
) where
    S: Source<T, L>,
    D: Sink<T, L>,
{
    // SAFETY: as for stage_pair.
    unsafe {
        match b.radix {
            8 => stage_pair::<T, L, 8, S, D>(a, b, n, src, dst),
            4 => stage_pair::<T, L, 4, S, D>(a, b, n, src, dst),
            2 => stage_pair::<T, L, 2, S, D>(a, b, n, src, dst),
            r => unreachable!("radix {r}"),
        }
    }
}

/// All stages, ping-ponging between the data and the scratch buffers; the result is
/// copied back into the data buffers when the stage count is odd.
#[inline(always)]
#[doc(hidden)]
pub fn execute_portable<T: FftScalar>(
    plan: &Stockham<T>,
    re: &mut [T],
    im: &mut [T],
    sre: &mut [T],
    sim: &mut [T],
) {
    let n = plan.n;
    assert!(re.len() == n && im.len() == n && sre.len() == n && sim.len() == n);
    let mut in_data = true;
    for st in &plan.stages {
        let (src_re, src_im, dst_re, dst_im) = if in_data {
            (&*re, &*im, &mut *sre, &mut *sim)
        } else {
            (&*sre, &*sim, &mut *re, &mut *im)
        };
        match (st.radix, &plan.ozaki_w8) {
            (8, None) => stage::<T, 8>(st, src_re, src_im, dst_re, dst_im, dft::<T, 8>),
            (8, Some(w8)) => stage::<T, 8>(st, src_re, src_im, dst_re, dst_im, |v| {
                super::ozaki::apply_sliced(w8, v)
            }),
            (4, _) => stage::<T, 4>(st, src_re, src_im, dst_re, dst_im, dft::<T, 4>),
            (2, _) => stage::<T, 2>(st, src_re, src_im, dst_re, dst_im, dft::<T, 2>),
            // Precision::Ozaki too: the odd radices keep their DAGs (module comment of
            // ozaki.rs).
            (7, _) => stage::<T, 7>(st, src_re, src_im, dst_re, dst_im, dft::<T, 7>),
            (5, _) => stage::<T, 5>(st, src_re, src_im, dst_re, dst_im, dft::<T, 5>),
            (3, _) => stage::<T, 3>(st, src_re, src_im, dst_re, dst_im, dft::<T, 3>),
            (r, _) => unreachable!("radix {r}"),
        }
        in_data = !in_data;
    }
    if !in_data {
        re.copy_from_slice(sre);
        im.copy_from_slice(sim);
    }
}

/// One stage (see the module comment for the index map); `butterfly` is the radix-R DFT.
#[inline(always)]
fn stage<T: FftScalar, const R: usize>(
    st: &Stage<T>,
    src_re: &[T],
    src_im: &[T],
    dst_re: &mut [T],
    dst_im: &mut [T],
    butterfly: impl Fn(&mut [Cx<T>; R]),
) {
    let n = src_re.len();
    let stride = n / R;
    let ns = st.ns;
    let src_re: [&[T]; R] = std::array::from_fn(|r| &src_re[r * stride..(r + 1) * stride]);
    let src_im: [&[T]; R] = std::array::from_fn(|r| &src_im[r * stride..(r + 1) * stride]);
    if ns == 1 {
        // First stage: no twiddles; the stores interleave the R outputs.
        for ((i, out_re), out_im) in dst_re
            .chunks_exact_mut(R)
            .enumerate()
            .zip(dst_im.chunks_exact_mut(R))
        {
            let mut v: [Cx<T>; R] = std::array::from_fn(|r| Cx::new(src_re[r][i], src_im[r][i]));
            butterfly(&mut v);
            for r in 0..R {
                out_re[r] = v[r].re;
                out_im[r] = v[r].im;
            }
        }
        return;
    }
    let tw_re: [&[T]; R] = std::array::from_fn(|r| {
        if r == 0 {
            &[][..]
        } else {
            &st.tw_re[(r - 1) * ns..r * ns]
        }
    });
    let tw_im: [&[T]; R] = std::array::from_fn(|r| {
        if r == 0 {
            &[][..]
        } else {
            &st.tw_im[(r - 1) * ns..r * ns]
        }
    });
    for ((k, out_re), out_im) in dst_re
        .chunks_exact_mut(ns * R)
        .enumerate()
        .zip(dst_im.chunks_exact_mut(ns * R))
    {
        let base = k * ns;
        let s_re: [&[T]; R] = std::array::from_fn(|r| &src_re[r][base..base + ns]);
        let s_im: [&[T]; R] = std::array::from_fn(|r| &src_im[r][base..base + ns]);
        let o_re: [&mut [T]; R] = split_chunks(out_re, ns);
        let o_im: [&mut [T]; R] = split_chunks(out_im, ns);
        for j in 0..ns {
            let mut v: [Cx<T>; R] = std::array::from_fn(|r| {
                let x = Cx::new(s_re[r][j], s_im[r][j]);
                if r == 0 {
                    x
                } else {
                    x.mul(Cx::new(tw_re[r][j], tw_im[r][j]))
                }
            });
            butterfly(&mut v);
            for r in 0..R {
                o_re[r][j] = v[r].re;
                o_im[r][j] = v[r].im;
            }
        }
    }
}

/// `s` (length R * len) as R consecutive slices of `len`.
#[inline(always)]
fn split_chunks<T, const R: usize>(s: &mut [T], len: usize) -> [&mut [T]; R] {
    let mut it = s.chunks_exact_mut(len);
    std::array::from_fn(|_| it.next().expect("R chunks"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fft::twiddles::twiddle;

    #[test]
    fn radix_plan() {
        assert_eq!(radices(2), vec![2]);
        assert_eq!(radices(4), vec![4]);
        assert_eq!(radices(8), vec![8]);
        assert_eq!(radices(1024), vec![8, 8, 8, 2]);
        assert_eq!(radices(1 << 20), vec![8, 8, 8, 8, 8, 8, 4]);
        assert_eq!(radices(400), vec![8, 2, 5, 5]);
        assert_eq!(radices(3 * 5 * 7 * 7 * 16), vec![8, 2, 7, 7, 5, 3]);
        assert_eq!(radices(9), vec![3, 3]);
        assert!(!is_smooth(1) && !is_smooth(11) && !is_smooth(22) && is_smooth(2));
    }

    /// Values in [-8, 8) with a -0 and a subnormal among them, and when `special` a NaN
    /// and an infinity (which make every output NaN).
    fn values(n: usize, seed: u64, special: bool) -> Vec<Complex32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0
        };
        let mut v: Vec<Complex32> = (0..n).map(|_| Complex32::new(next(), next())).collect();
        if special {
            v[n / 2 + 1].re = f32::NAN;
            v[n - 3].im = f32::INFINITY;
        }
        v[3].re = -0.0;
        v[5].im = f32::from_bits(1);
        v
    }

    /// The bits, NaNs made canonical (the split buffers' NaN payloads are not specified;
    /// the interleaved outputs' are canonical already).
    fn bits(v: &[Complex32]) -> Vec<(u32, u32)> {
        v.iter()
            .map(|z| (canonical(z.re).to_bits(), canonical(z.im).to_bits()))
            .collect()
    }

    /// `dispatch` on `path` against the scalar stage loops (`execute_scalar`: one
    /// butterfly at a time, no vectors), split and interleaved (complex, conjugated,
    /// real) rows of length n.
    fn check_against_scalar<T: FftScalar>(n: usize, path: VectorPath, special: bool) {
        let plan = Stockham::<T>::new(n, false);
        let x = values(n, n as u64, special);
        let real: Vec<f32> = x.iter().map(|z| z.im).collect();
        // Split buffers.
        let split = |vector: bool| {
            let mut re: Vec<T> = x.iter().map(|z| T::from_f32(z.re)).collect();
            let mut im: Vec<T> = x.iter().map(|z| T::from_f32(z.im)).collect();
            let (mut sre, mut sim) = (vec![T::ZERO; n], vec![T::ZERO; n]);
            let io = Io::Split {
                re: re.as_mut_ptr(),
                im: im.as_mut_ptr(),
                sre: sre.as_mut_ptr(),
                sim: sim.as_mut_ptr(),
            };
            // SAFETY: four distinct buffers of n values.
            unsafe {
                if vector {
                    dispatch(&plan, path, io)
                } else {
                    execute_scalar(&plan, io)
                }
            }
            let c: Vec<Complex32> = re
                .iter()
                .zip(&im)
                .map(|(a, b)| Complex32::new(a.to_f32(), b.to_f32()))
                .collect();
            bits(&c)
        };
        assert!(
            split(true) == split(false),
            "n = {n}, {path:?}: split buffers differ from one lane"
        );
        // Interleaved rows.
        for (input, conj) in [
            (Input::Complex(x.as_ptr()), false),
            (Input::Complex(x.as_ptr()), true),
            (Input::Real(real.as_ptr()), false),
        ] {
            let run = |vector: bool| {
                let mut out = vec![Complex32::new(1.0, 1.0); n];
                let mut scratch = vec![T::ZERO; 4 * n];
                let io = Io::Interleaved {
                    src: input,
                    dst: out.as_mut_ptr(),
                    conj,
                    scratch: scratch.as_mut_ptr(),
                };
                // SAFETY: n values at src and dst, 4n in scratch, all distinct.
                unsafe {
                    if vector {
                        dispatch(&plan, path, io)
                    } else {
                        execute_scalar(&plan, io)
                    }
                }
                bits(&out)
            };
            assert!(
                run(true) == run(false),
                "n = {n}, {path:?}, conj = {conj}: interleaved rows differ from one lane"
            );
        }
    }

    /// Every vector path gives the bits of the scalar stage loops on the mixed-radix
    /// lengths whose stages run on overlapping last blocks (power-of-two stages whose
    /// stride W does not divide: 400's first stage, stride 50, and its radix-2 stage,
    /// stride 200, at W = 16) or on W/2, W/4 lanes (odd-radix stages with ns = 8, 4, 2 at
    /// W = 16; ns = 4, 2 at W = 8), and the powers of two that run the same loops.
    #[test]
    fn every_stage_width_gives_the_bits_of_one_lane() {
        let lens = [
            40, 56, 72, 120, 180, 200, 210, 360, 400, 480, 840, 864, 1000, 1080, 1400, 2000, 64,
            256, 1024, 4096,
        ];
        for n in lens {
            for path in VectorPath::available() {
                for special in [false, true] {
                    check_against_scalar::<f32>(n, path, special);
                    check_against_scalar::<f64>(n, path, special);
                }
            }
        }
    }

    #[test]
    fn matches_the_defining_sum_in_f64() {
        let lens = (1..=10)
            .map(|p| 1usize << p)
            .chain([3, 5, 7, 12, 45, 60, 98, 400, 441]);
        for n in lens {
            let x_re: Vec<f64> = (0..n).map(|k| ((k * 7 + 3) % 11) as f64 - 5.0).collect();
            let x_im: Vec<f64> = (0..n).map(|k| ((k * 5 + 1) % 13) as f64 * 0.5).collect();
            let (mut re, mut im) = (x_re.clone(), x_im.clone());
            let (mut sr, mut si) = (vec![0.0; n], vec![0.0; n]);
            Stockham::<f64>::new(n, false).forward(&mut re, &mut im, &mut sr, &mut si);
            for k in 0..n {
                let (mut ar, mut ai) = (0.0, 0.0);
                for j in 0..n {
                    let (wr, wi) = twiddle::<f64>((j * k) as u64, n as u64);
                    ar += x_re[j] * wr - x_im[j] * wi;
                    ai += x_re[j] * wi + x_im[j] * wr;
                }
                let tol = 1e-12 * n as f64;
                assert!(
                    (ar - re[k]).abs() < tol && (ai - im[k]).abs() < tol,
                    "n={n} k={k}"
                );
            }
        }
    }
}
