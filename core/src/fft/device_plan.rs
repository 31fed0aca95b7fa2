//! An [`FftPlan`] flattened for the CUDA kernels (`kernels/fft/fft.cu`): the launch sequence as
//! a list of [`Step`]s over split (re, im) working buffers, and the plan's own tables
//! (twiddles, DFT-GEMM matrix, Bluestein chirp and kernel, Ozaki digits) copied into flat
//! buffers, value for value. The device never computes a twiddle: it reads these bytes, so
//! its tables are the CPU's.
//!
//! The steps mirror the CPU code path by path (plan.rs `process_rows`, dft_gemm.rs,
//! stockham.rs, bluestein.rs). `src/fft/cuda.rs` launches one kernel per step;
//! `tests/emulated_device.rs` runs those launches on the emulated device and compares the
//! bits with [`FftPlan`]'s.
//!
//! Buffers: `buffers` split working buffers, each holding `rows * buffer_len` values of the
//! working type for re and as many for im; a step's rows are packed at its own row length
//! (n, or Bluestein's m). The Stockham stages ping-pong between two buffers; the CPU copies
//! the result back after an odd number of stages, the steps read it where it is (a copy
//! changes no bit).

use super::bluestein::Bluestein;
use super::ozaki::{SLICES, SlicedMatrix};
use super::plan::{FftPlan, Kernel, KernelRef, Precision};
use super::scalar::FftScalar;
use super::stockham::Stockham;

/// The plan's real tables in its working type (f32 for F32 and Ozaki, f64 for
/// F64Internal), concatenated; [`Step`]s hold offsets into it.
#[derive(Clone, Debug, PartialEq)]
pub enum Table {
    /// The tables of an F32 or Ozaki plan.
    F32(Vec<f32>),
    /// The tables of an F64Internal plan.
    F64(Vec<f64>),
}

impl Table {
    /// Number of values (real numbers, not complex pairs) in the table.
    pub fn len(&self) -> usize {
        match self {
            Table::F32(v) => v.len(),
            Table::F64(v) => v.len(),
        }
    }

    /// True when the table holds no value (never for a [`DevicePlan::table`], which holds at
    /// least one zero).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One kernel launch over all rows. Buffer fields are indices of working buffers; table
/// fields are offsets into [`DevicePlan::table`] (or [`DevicePlan::digits`] for Ozaki
/// digits), with the imaginary part of a table right after its real part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// (rows, n, 2) f32 input -> buffer `dst` (rows of n), imaginary parts negated for the
    /// inverse (`repro_fft_deinterleave_*`).
    Deinterleave {
        /// The buffer written.
        dst: usize,
    },
    /// Buffer `src` (rows of n) -> (rows, n, 2) f32 output, rounded to f32, conjugated back
    /// for the inverse, canonical NaN (`repro_fft_interleave_*`).
    Interleave {
        /// The buffer holding the transform's result.
        src: usize,
    },
    /// DFT-GEMM (n <= 16): W_re at `w`, W_im at `w + n * n` (`repro_fft_gemm_*`).
    Gemm {
        /// The buffer read (rows of n).
        src: usize,
        /// The buffer written (rows of n).
        dst: usize,
        /// Offset of W's real part (n x n, row-major) in the table.
        w: usize,
    },
    /// Ozaki DFT-GEMM: SLICES digit matrices of 2n x 2n at `digits`
    /// (`repro_fft_gemm_ozaki`).
    GemmOzaki {
        /// The buffer read (rows of n).
        src: usize,
        /// The buffer written (rows of n).
        dst: usize,
        /// Offset of the first digit matrix in [`DevicePlan::digits`] (the SLICES matrices
        /// follow one another, each row-major on [re; im]).
        digits: usize,
    },
    /// One Stockham stage over rows of `len`: twiddles re at `tw`, im at
    /// `tw + (radix - 1) ns` (none read when ns = 1); `ozaki`: the W8 digits (SLICES
    /// matrices of 16 x 16) at that offset, radix 8 only (`repro_fft_stockham<R>_*`,
    /// `repro_fft_stockham8_ozaki`).
    Stage {
        /// The buffer read.
        src: usize,
        /// The buffer written (never `src`: stages ping-pong).
        dst: usize,
        /// Row length of the transform this stage belongs to: n (2^a 3^b 5^c 7^d), or
        /// Bluestein's m (a power of two); a launch runs rows * len / radix butterflies.
        len: usize,
        /// The stage's radix: 8, then 4 or 2 for the rest of the power of two, then 7, 5
        /// and 3 (`stockham::radices`).
        radix: usize,
        /// Product of the radices of the earlier stages (1 for the first stage).
        ns: usize,
        /// Offset of this stage's (radix - 1) ns real twiddles in the table, the imaginary
        /// parts right after; meaningless when ns = 1.
        tw: usize,
        /// Under Ozaki, for a radix-8 stage: offset of the W8 digit matrices in
        /// [`DevicePlan::digits`]; `None` otherwise (the butterfly DAG runs instead).
        ozaki: Option<usize>,
    },
    /// Bluestein a = x c, zero-padded to m: chirp re at `chirp`, im at `chirp + n`.
    BluesteinIn {
        /// The buffer read (rows of n).
        src: usize,
        /// The buffer written (rows of m).
        dst: usize,
        /// Bluestein's convolution length, the power of two >= 2n - 1.
        m: usize,
        /// Offset of the chirp's n real parts in the table.
        chirp: usize,
    },
    /// Bluestein A = conj(A B) in place: kernel re at `kernel`, im at `kernel + m`.
    BluesteinMul {
        /// The buffer multiplied in place (rows of m).
        buf: usize,
        /// Bluestein's convolution length.
        m: usize,
        /// Offset of the m real parts of the transformed kernel B (1/m included) in the
        /// table.
        kernel: usize,
    },
    /// Bluestein X = conj(y) c (rows of m in, rows of n out).
    BluesteinOut {
        /// The buffer read (rows of m; the first n values of each row are used).
        src: usize,
        /// The buffer written (rows of n).
        dst: usize,
        /// Bluestein's convolution length.
        m: usize,
        /// Offset of the chirp's n real parts in the table (the same as
        /// [`Step::BluesteinIn`]'s).
        chirp: usize,
    },
}

/// A plan as kernel launches and flat tables (see the module comment).
///
/// ```rust
/// # fn main() -> repro_core::Result<()> {
/// use repro_core::fft::device_plan::Step;
/// use repro_core::fft::{FftPlan, Precision};
///
/// // n = 8 is one DFT-GEMM: W's 64 real parts then its 64 imaginary parts.
/// let dp = FftPlan::new(8, Precision::F32)?.device_plan();
/// assert_eq!(
///     dp.steps,
///     [
///         Step::Deinterleave { dst: 0 },
///         Step::Gemm { src: 0, dst: 1, w: 0 },
///         Step::Interleave { src: 1 },
///     ]
/// );
/// assert_eq!((dp.buffers, dp.buffer_len, dp.table.len()), (2, 8, 2 * 8 * 8));
/// assert!(!dp.is_f64());
/// // n = 1 is the identity: no table, yet one zero so that there is something to upload.
/// let id = FftPlan::new(1, Precision::F64Internal)?.device_plan();
/// assert_eq!(id.steps.len(), 2);
/// assert!(id.is_f64() && id.table.len() == 1 && id.digits == [0.0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DevicePlan {
    /// The transform length ([`FftPlan::len`]).
    pub n: usize,
    /// The plan's precision; it fixes the working type ([`DevicePlan::is_f64`]).
    pub precision: Precision,
    /// Working buffers the steps use.
    pub buffers: usize,
    /// Values per row in a working buffer (n, or Bluestein's m).
    pub buffer_len: usize,
    /// The launches in order: a [`Step::Deinterleave`] into buffer 0 first, a
    /// [`Step::Interleave`] from the buffer holding the result last.
    pub steps: Vec<Step>,
    /// Never empty (one zero when the plan has no table), so it can always be uploaded.
    pub table: Table,
    /// The Ozaki digit matrices (f32 integers); one zero when there are none.
    pub digits: Vec<f32>,
}

impl DevicePlan {
    /// True for F64Internal (f64 working buffers and tables).
    pub fn is_f64(&self) -> bool {
        matches!(self.table, Table::F64(_))
    }
}

impl FftPlan {
    /// This plan flattened for the CUDA kernels: its launch sequence and its tables (the
    /// same values, see [`DevicePlan`]).
    pub fn device_plan(&self) -> DevicePlan {
        let n = self.len();
        let precision = self.precision();
        match self.kernel_ref() {
            KernelRef::F32(k) => {
                let b = Builder::build(k, n);
                b.finish(n, precision, |mut t| {
                    if t.is_empty() {
                        t.push(0.0);
                    }
                    Table::F32(t)
                })
            }
            KernelRef::F64(k) => {
                let b = Builder::build(k, n);
                b.finish(n, precision, |mut t| {
                    if t.is_empty() {
                        t.push(0.0);
                    }
                    Table::F64(t)
                })
            }
        }
    }
}

struct Builder<T> {
    table: Vec<T>,
    digits: Vec<f32>,
    steps: Vec<Step>,
    buffers: usize,
    buffer_len: usize,
}

impl<T: FftScalar> Builder<T> {
    fn build(k: &Kernel<T>, n: usize) -> Self {
        let mut b = Builder {
            table: Vec::new(),
            digits: Vec::new(),
            steps: vec![Step::Deinterleave { dst: 0 }],
            buffers: 2,
            buffer_len: n,
        };
        let out = match k {
            Kernel::Identity => {
                b.buffers = 1;
                0
            }
            Kernel::Gemm(g, None) => {
                let w = b.push(&g.w_re);
                b.push(&g.w_im);
                b.steps.push(Step::Gemm { src: 0, dst: 1, w });
                1
            }
            Kernel::Gemm(_, Some(s)) => {
                let digits = b.push_digits(s);
                b.steps.push(Step::GemmOzaki {
                    src: 0,
                    dst: 1,
                    digits,
                });
                1
            }
            Kernel::Stockham(s) => {
                let tables = b.push_stockham(s);
                b.stockham_steps(s, &tables, 0, 1)
            }
            Kernel::Bluestein(bl) => b.bluestein(bl),
        };
        b.steps.push(Step::Interleave { src: out });
        b
    }

    fn finish(
        self,
        n: usize,
        precision: Precision,
        table: impl FnOnce(Vec<T>) -> Table,
    ) -> DevicePlan {
        let mut digits = self.digits;
        if digits.is_empty() {
            digits.push(0.0);
        }
        DevicePlan {
            n,
            precision,
            buffers: self.buffers,
            buffer_len: self.buffer_len,
            steps: self.steps,
            table: table(self.table),
            digits,
        }
    }

    /// Appends values to the table, returning their offset.
    fn push(&mut self, v: &[T]) -> usize {
        let at = self.table.len();
        self.table.extend_from_slice(v);
        at
    }

    /// Appends a sliced matrix's digit matrices (slice after slice, each row-major).
    fn push_digits(&mut self, s: &SlicedMatrix) -> usize {
        assert_eq!(s.rows, s.k, "the sliced matrices are square");
        assert_eq!(s.digits.len(), SLICES);
        let at = self.digits.len();
        for d in &s.digits {
            self.digits.extend_from_slice(d);
        }
        at
    }

    /// The twiddle offset of every stage, and the W8 digits' offset under Ozaki.
    fn push_stockham(&mut self, s: &Stockham<T>) -> (Vec<usize>, Option<usize>) {
        let tw = s
            .stages
            .iter()
            .map(|st| {
                let at = self.push(&st.tw_re);
                self.push(&st.tw_im);
                at
            })
            .collect();
        let w8 = s.ozaki_w8.as_ref().map(|w| self.push_digits(w));
        (tw, w8)
    }

    /// The stages from buffer `a` with `b` as the other buffer; returns where the result is.
    fn stockham_steps(
        &mut self,
        s: &Stockham<T>,
        (tw, w8): &(Vec<usize>, Option<usize>),
        a: usize,
        b: usize,
    ) -> usize {
        let (mut src, mut dst) = (a, b);
        for (st, &tw) in s.stages.iter().zip(tw) {
            self.steps.push(Step::Stage {
                src,
                dst,
                len: s.n,
                radix: st.radix,
                ns: st.ns,
                tw,
                ozaki: if st.radix == 8 { *w8 } else { None },
            });
            std::mem::swap(&mut src, &mut dst);
        }
        src
    }

    fn bluestein(&mut self, bl: &Bluestein<T>) -> usize {
        let m = bl.m;
        self.buffers = 3;
        self.buffer_len = m;
        let chirp = self.push(&bl.chirp_re);
        self.push(&bl.chirp_im);
        let kernel = self.push(&bl.kernel_re);
        self.push(&bl.kernel_im);
        let tables = self.push_stockham(&bl.inner);
        self.steps.push(Step::BluesteinIn {
            src: 0,
            dst: 1,
            m,
            chirp,
        });
        let f = self.stockham_steps(&bl.inner, &tables, 1, 2);
        self.steps.push(Step::BluesteinMul { buf: f, m, kernel });
        let g = self.stockham_steps(&bl.inner, &tables, f, 3 - f);
        self.steps.push(Step::BluesteinOut {
            src: g,
            dst: 0,
            m,
            chirp,
        });
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fft::{FftPlan, Precision};

    /// The steps index the plan's table: it holds the correctly rounded twiddles at the
    /// offsets the stages read (the first stage has none). Spot check of one radix-8 stage.
    #[test]
    fn plans_carry_the_cpu_tables() {
        let plan = FftPlan::new(64, Precision::F32).unwrap();
        let dp = plan.device_plan();
        let Table::F32(t) = &dp.table else {
            panic!("f32 table")
        };
        let stages: Vec<_> = dp
            .steps
            .iter()
            .filter_map(|s| match *s {
                Step::Stage { ns, tw, radix, .. } => Some((radix, ns, tw)),
                _ => None,
            })
            .collect();
        assert_eq!(stages.len(), 2);
        let (radix, ns, tw) = stages[1];
        assert_eq!((radix, ns), (8, 8));
        // w_64^(r j) for r = 1, j = 1: (cos, -sin)(2 pi / 64), test-side platform math.
        let (c, s) = (t[tw + 1], t[tw + (radix - 1) * ns + 1]);
        let a = 2.0 * std::f64::consts::PI / 64.0;
        assert_eq!(c, a.cos() as f32);
        assert_eq!(s, -(a.sin() as f32));
    }
}
