//! Stockham autosort FFT for n = 2^p: radix-8 stages, then one radix-4 or radix-2 stage
//! for the leftover factor (p mod 3 = 2 or 1).
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
//! lane runs the same scalar DAG. CUDA (`kernels/fft.cu`) runs one thread per butterfly
//! with the same DAG and the same twiddle tables.
//!
//! Error: each stage adds at most a few roundings of relative size 2^-24 (f32) per value
//! and the twiddles are correctly rounded, so the relative L2 error grows like
//! sqrt(log2 n) * 2^-24 (measured in tests/fft_accuracy.rs).

use super::butterflies::{Cx, dft};
use super::ozaki::SlicedMatrix;
use super::scalar::FftScalar;
use super::twiddles;

/// One stage: its radix, `ns`, and the twiddles w_{ns R}^{r j} stored as
/// `tw[(r - 1) ns + j]` (empty for the first stage).
#[derive(Clone, Debug)]
pub(crate) struct Stage<T> {
    pub radix: usize,
    pub ns: usize,
    pub tw_re: Vec<T>,
    pub tw_im: Vec<T>,
}

/// The stages of a power-of-two transform (a pure function of n and the type).
#[derive(Clone, Debug)]
pub(crate) struct Stockham<T> {
    pub n: usize,
    pub stages: Vec<Stage<T>>,
    /// Precision::Ozaki: the W8 matrix cut into bf16 slices, applied instead of the DFT8
    /// DAG in the radix-8 stages (the radix-4/2 stage, whose matrix entries are 0, +-1
    /// and +-i, keeps its add/sub DAG).
    pub ozaki_w8: Option<SlicedMatrix>,
}

/// The radices for n = 2^p: radix 8 while at least 8 remains, then 4 or 2.
pub(crate) fn radices(n: usize) -> Vec<usize> {
    assert!(n.is_power_of_two());
    let p = n.trailing_zeros();
    let mut r = vec![8; (p / 3) as usize];
    match p % 3 {
        1 => r.push(2),
        2 => r.push(4),
        _ => {}
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
            stages.push(Stage {
                radix,
                ns,
                tw_re,
                tw_im,
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
}

/// Runs the stages on the widest vector unit of this CPU. Every copy compiles the same
/// scalar code (no FMA is ever requested), so they give the same bits.
fn execute<T: FftScalar>(
    plan: &Stockham<T>,
    re: &mut [T],
    im: &mut [T],
    sre: &mut [T],
    sim: &mut [T],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked above).
            return unsafe { execute_avx512(plan, re, im, sre, sim) };
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked above).
            return unsafe { execute_avx2(plan, re, im, sre, sim) };
        }
    }
    execute_portable(plan, re, im, sre, sim)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
unsafe fn execute_avx512<T: FftScalar>(
    plan: &Stockham<T>,
    re: &mut [T],
    im: &mut [T],
    sre: &mut [T],
    sim: &mut [T],
) {
    execute_portable(plan, re, im, sre, sim)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn execute_avx2<T: FftScalar>(
    plan: &Stockham<T>,
    re: &mut [T],
    im: &mut [T],
    sre: &mut [T],
    sim: &mut [T],
) {
    execute_portable(plan, re, im, sre, sim)
}

/// All stages, ping-ponging between the data and the scratch buffers; the result is
/// copied back into the data buffers when the stage count is odd.
#[inline(always)]
pub(crate) fn execute_portable<T: FftScalar>(
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
                T::apply_sliced(w8, v)
            }),
            (4, _) => stage::<T, 4>(st, src_re, src_im, dst_re, dst_im, dft::<T, 4>),
            (2, _) => stage::<T, 2>(st, src_re, src_im, dst_re, dst_im, dft::<T, 2>),
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
    }

    #[test]
    fn matches_the_defining_sum_in_f64() {
        for p in 1..=10 {
            let n = 1usize << p;
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
