//! How far the elementwise tensor ops are from memory's limit. A 16M-element f32 op reads
//! 64 MiB and writes a fresh 64 MiB tensor whose pages the kernel must first zero. The
//! `copy` row is an op that does only that: a fresh output allocated as candle-repro's ops
//! allocate theirs (uninitialized, with the transparent huge-page hint of
//! `src/ops/buffer.rs`), filled by a parallel copy in the same 16K-element chunks, with no
//! arithmetic. No op that returns a new tensor can beat it here, so stock / copy is the
//! largest speed ratio any implementation could show against stock candle on this machine.
//!
//! `cargo run --release --example memory_floor` (Linux; RAYON_NUM_THREADS sets the
//! threads). Wall time, best of 9 per op, the ops taken in alternating rounds.

use candle_core::{CpuStorage, CustomOp1, Device, Layout, Shape, Tensor};
use rayon::prelude::*;
use std::time::Instant;

/// A copy into a fresh, huge-page-hinted, uninitialized output.
struct FreshCopy;

unsafe extern "C" {
    fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
}

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
        let mut out: Vec<std::mem::MaybeUninit<f32>> = Vec::with_capacity(v.len());
        // MADV_HUGEPAGE (14) on the whole 2 MiB pages inside the buffer, as the crate does.
        const HUGE: usize = 2 << 20;
        let addr = out.as_ptr() as usize;
        let (lo, hi) = (
            (addr + HUGE - 1) & !(HUGE - 1),
            (addr + 4 * v.len()) & !(HUGE - 1),
        );
        if hi > lo {
            // SAFETY: a hint on whole pages inside this allocation.
            unsafe { madvise(lo as *mut std::ffi::c_void, hi - lo, 14) };
        }
        // SAFETY: MaybeUninit elements need no initialization.
        unsafe { out.set_len(v.len()) };
        out.par_chunks_mut(1 << 14)
            .zip(v.par_chunks(1 << 14))
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

fn main() {
    let n = 16usize << 20;
    let x = Tensor::rand(-8f32, 8f32, n, &Device::Cpu).unwrap();
    let x_pos = x.abs().unwrap();
    let ops: [(&str, Op, Op, bool); 4] = [
        ("exp", candle_repro::exp, |x| x.exp(), false),
        ("log", candle_repro::log, |x| x.log(), true),
        (
            "sigmoid",
            candle_repro::sigmoid,
            candle_nn::ops::sigmoid,
            false,
        ),
        ("silu", candle_repro::silu, |x| x.silu(), false),
    ];
    let copy = |x: &Tensor| x.apply_op1_no_bwd(&FreshCopy);
    let time = |f: &dyn Fn() -> Tensor| {
        let t = Instant::now();
        std::hint::black_box(f());
        t.elapsed().as_secs_f64() * 1e3
    };
    // best[0] = copy, then (ours, stock) per op.
    let mut best = vec![f64::INFINITY; 1 + 2 * ops.len()];
    for _ in 0..9 {
        best[0] = best[0].min(time(&|| copy(&x).unwrap()));
        for (i, (_, ours, stock, positive)) in ops.iter().enumerate() {
            let arg = if *positive { &x_pos } else { &x };
            best[1 + 2 * i] = best[1 + 2 * i].min(time(&|| ours(arg).unwrap()));
            best[2 + 2 * i] = best[2 + 2 * i].min(time(&|| stock(arg).unwrap()));
        }
    }
    println!(
        "16M-element f32 tensor, {} rayon threads, best of 9 (ms)",
        rayon::current_num_threads()
    );
    println!("copy (the floor): {:.2} ms", best[0]);
    println!(
        "{:<8} {:>9} {:>9} {:>12} {:>22}",
        "op", "ours", "stock", "stock/ours", "stock/copy (the bound)"
    );
    for (i, (name, ..)) in ops.iter().enumerate() {
        let (ours, stock) = (best[1 + 2 * i], best[2 + 2 * i]);
        println!(
            "{:<8} {:>9.2} {:>9.2} {:>11.2}x {:>21.2}x",
            name,
            ours,
            stock,
            stock / ours,
            stock / best[0]
        );
    }
}
