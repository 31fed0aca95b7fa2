//! How far the elementwise tensor ops are from memory's limit. A 16M-element f32 op reads
//! 64 MiB and writes a fresh 64 MiB tensor whose pages the kernel must first zero. The
//! `copy` row is an op that does only that: a fresh output allocated as candle-repro's ops
//! allocate theirs (uninitialized, with the transparent huge-page hint of
//! `src/ops/buffer.rs`), filled by a parallel copy in the same 16K-element chunks, with no
//! arithmetic. No op that returns a new tensor can beat it here, so stock / copy is the
//! largest speed ratio any implementation could show against stock candle on this machine.
//!
//! The second table splits an op's time into its parts, each measured on its own:
//! * `faults`: first touch of a fresh output (one write per 4 KiB), the kernel's page
//!   allocation and zeroing: CPU work on the same cores as the op, so it overlaps nothing;
//! * `stream`: the copy into an output that is already mapped (reading 64 MiB, writing
//!   64 MiB);
//! * `kernel`: the op's slice kernel on a cache-resident 16K-element block, run as many
//!   times as the tensor has blocks, on the same threads: the arithmetic alone.
//!
//! Arithmetic and streaming can at best overlap, so no op with this kernel can take less
//! than faults + max(kernel, stream); stock over that is the best ratio the kernel allows.
//!
//! `cargo run --release --example memory_floor` (Linux; RAYON_NUM_THREADS sets the
//! threads). Wall time, best of 9 per measurement, everything taken in alternating rounds.

use candle_core::{CpuStorage, CustomOp1, Device, Layout, Shape, Tensor};
use rayon::prelude::*;
use std::time::Instant;

/// Elements per parallel task, as in the crate's elementwise ops.
const CHUNK: usize = 1 << 14;

unsafe extern "C" {
    fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
}

/// An uninitialized output of `n` f32s, hinted as the crate's ops hint theirs.
fn fresh_output(n: usize) -> Vec<std::mem::MaybeUninit<f32>> {
    let mut out: Vec<std::mem::MaybeUninit<f32>> = Vec::with_capacity(n);
    // MADV_HUGEPAGE (14) on the whole 2 MiB pages inside the buffer, as the crate does.
    const HUGE: usize = 2 << 20;
    let addr = out.as_ptr() as usize;
    let (lo, hi) = (
        (addr + HUGE - 1) & !(HUGE - 1),
        (addr + 4 * n) & !(HUGE - 1),
    );
    if hi > lo {
        // SAFETY: a hint on whole pages inside this allocation.
        unsafe { madvise(lo as *mut std::ffi::c_void, hi - lo, 14) };
    }
    // SAFETY: MaybeUninit elements need no initialization.
    unsafe { out.set_len(n) };
    out
}

/// A copy into a fresh, huge-page-hinted, uninitialized output.
struct FreshCopy;

impl CustomOp1 for FreshCopy {
    fn name(&self) -> &'static str {
        "fresh-copy"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(v) = s else {
            candle_core::bail!("fresh-copy: f32 only")
        };
        let (start, end) = l.contiguous_offsets().expect("contiguous input");
        let v = &v[start..end];
        let mut out = fresh_output(v.len());
        out.par_chunks_mut(CHUNK)
            .zip(v.par_chunks(CHUNK))
            .for_each(|(o, x)| {
                for (o, x) in o.iter_mut().zip(x) {
                    o.write(*x);
                }
            });
        // SAFETY: every element was written; MaybeUninit<f32> has f32's layout.
        let out = unsafe {
            let mut out = std::mem::ManuallyDrop::new(out);
            Vec::from_raw_parts(out.as_mut_ptr() as *mut f32, out.len(), out.capacity())
        };
        Ok((CpuStorage::F32(out), l.shape().clone()))
    }
}

type Op = fn(&Tensor) -> candle_core::Result<Tensor>;
type Kernel = fn(&[f32], &mut [f32]);

fn time(mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let n = 16usize << 20;
    let x = Tensor::rand(-8f32, 8f32, n, &Device::Cpu).unwrap();
    let x_pos = x.abs().unwrap();
    let ops: [(&str, Op, Op, Kernel, bool); 4] = [
        (
            "exp",
            candle_repro::exp,
            |x| x.exp(),
            candle_repro::math::exp_slice,
            false,
        ),
        (
            "log",
            candle_repro::log,
            |x| x.log(),
            candle_repro::math::log_slice,
            true,
        ),
        (
            "sigmoid",
            candle_repro::sigmoid,
            candle_nn::ops::sigmoid,
            candle_repro::math::sigmoid_slice,
            false,
        ),
        (
            "silu",
            candle_repro::silu,
            |x| x.silu(),
            candle_repro::math::silu_slice,
            false,
        ),
    ];
    let xs = x.to_vec1::<f32>().unwrap();
    let mut mapped = vec![0f32; n];
    // The cache-resident blocks for the kernel-only runs: the first block of each input.
    let block = xs[..CHUNK].to_vec();
    let block_pos: Vec<f32> = block.iter().map(|v| v.abs()).collect();

    // best[0..3]: copy, faults, stream; then (ours, stock, kernel) per op.
    let mut best = vec![f64::INFINITY; 3 + 3 * ops.len()];
    let keep = |i: usize, t: f64, best: &mut Vec<f64>| best[i] = best[i].min(t);
    for _ in 0..9 {
        let t = time(|| {
            std::hint::black_box(x.apply_op1_no_bwd(&FreshCopy).unwrap());
        });
        keep(0, t, &mut best);
        let t = time(|| {
            let mut out = fresh_output(n);
            out.par_chunks_mut(CHUNK).for_each(|o| {
                for o in o.iter_mut().step_by(1024) {
                    o.write(0.0);
                }
            });
            std::hint::black_box(&out);
        });
        keep(1, t, &mut best);
        let t = time(|| {
            mapped
                .par_chunks_mut(CHUNK)
                .zip(xs.par_chunks(CHUNK))
                .for_each(|(o, x)| o.copy_from_slice(x));
            std::hint::black_box(&mapped);
        });
        keep(2, t, &mut best);
        for (i, (_, ours, stock, kernel, positive)) in ops.iter().enumerate() {
            let arg = if *positive { &x_pos } else { &x };
            let t = time(|| {
                std::hint::black_box(ours(arg).unwrap());
            });
            keep(3 + 3 * i, t, &mut best);
            let t = time(|| {
                std::hint::black_box(stock(arg).unwrap());
            });
            keep(4 + 3 * i, t, &mut best);
            let hot = if *positive { &block_pos } else { &block };
            let t = time(|| {
                (0..n / CHUNK).into_par_iter().for_each_init(
                    || vec![0f32; CHUNK],
                    |out, _| kernel(std::hint::black_box(hot), out),
                );
            });
            keep(5 + 3 * i, t, &mut best);
        }
    }
    let (copy, faults, stream) = (best[0], best[1], best[2]);
    println!(
        "16M-element f32 tensor, {} rayon threads, best of 9 (ms)",
        rayon::current_num_threads()
    );
    println!("copy (the floor): {copy:.2} ms");
    println!(
        "{:<8} {:>9} {:>9} {:>12} {:>22}",
        "op", "ours", "stock", "stock/ours", "stock/copy (the bound)"
    );
    for (i, (name, ..)) in ops.iter().enumerate() {
        let (ours, stock) = (best[3 + 3 * i], best[4 + 3 * i]);
        println!(
            "{:<8} {:>9.2} {:>9.2} {:>11.2}x {:>21.2}x",
            name,
            ours,
            stock,
            stock / ours,
            stock / copy
        );
    }
    println!();
    println!("parts: faults {faults:.2} ms, stream {stream:.2} ms (each measured alone)");
    println!(
        "{:<8} {:>11} {:>30} {:>26}",
        "op", "kernel (ms)", "faults + max(kernel, stream)", "stock / that (this kernel's best)"
    );
    for (i, (name, ..)) in ops.iter().enumerate() {
        let (stock, kernel) = (best[4 + 3 * i], best[5 + 3 * i]);
        let floor = faults + kernel.max(stream);
        println!(
            "{:<8} {:>11.2} {:>30.2} {:>25.2}x",
            name,
            kernel,
            floor,
            stock / floor
        );
    }
}
