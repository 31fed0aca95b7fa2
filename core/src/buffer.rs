//! Output buffers for the CPU kernels: allocated uninitialized (every kernel writes every
//! element, so zero-filling would only cost a pass over memory) and, for large buffers on
//! Linux, marked for transparent huge pages: the first touch of a fresh 64 MiB output
//! otherwise costs 16,384 page faults, more than the arithmetic of most elementwise ops.
//! Neither changes any value.

use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Elements per rayon task of [`map_parallel`]: large enough to amortize scheduling, small
/// enough to balance.
pub const CHUNK: usize = 1 << 14;

/// `kernel` (which writes every slot it is given) over `input` in fixed chunks of [`CHUNK`]
/// on rayon's threads, into a new vector. Each element's value must not depend on its
/// chunk (the elementwise kernels compute every element alone), so neither the split nor
/// the thread count changes a bit.
pub fn map_parallel<T: Sync, U: Send>(
    input: &[T],
    kernel: impl Fn(&[T], &mut [MaybeUninit<U>]) + Sync,
) -> Vec<U> {
    let mut out = uninit::<U>(input.len());
    out.par_chunks_mut(CHUNK)
        .zip(input.par_chunks(CHUNK))
        .for_each(|(o, x)| kernel(x, o));
    // SAFETY: the chunks cover the whole buffer and the kernel writes every slot.
    unsafe { assume_init(out) }
}

/// [`map_parallel`] over two inputs of one length (`a[i]` and `b[i]` make `out[i]`).
pub fn map2_parallel<T: Sync, U: Send>(
    a: &[T],
    b: &[T],
    kernel: impl Fn(&[T], &[T], &mut [MaybeUninit<U>]) + Sync,
) -> Vec<U> {
    assert_eq!(
        a.len(),
        b.len(),
        "map2_parallel: inputs of different lengths"
    );
    let mut out = uninit::<U>(a.len());
    out.par_chunks_mut(CHUNK)
        .zip(a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)))
        .for_each(|(o, (a, b))| kernel(a, b, o));
    // SAFETY: the chunks cover the whole buffer and the kernel writes every slot.
    unsafe { assume_init(out) }
}

/// An output buffer of `n` uninitialized elements.
pub fn uninit<F>(n: usize) -> Vec<MaybeUninit<F>> {
    let mut v: Vec<MaybeUninit<F>> = Vec::with_capacity(n);
    hint_huge_pages(v.as_ptr() as usize, n * std::mem::size_of::<F>());
    // SAFETY: MaybeUninit elements need no initialization.
    unsafe { v.set_len(n) };
    v
}

/// The buffer as initialized values.
///
/// # Safety
/// Every element must have been written.
pub unsafe fn assume_init<F>(v: Vec<MaybeUninit<F>>) -> Vec<F> {
    let mut v = std::mem::ManuallyDrop::new(v);
    let (ptr, len, cap) = (v.as_mut_ptr(), v.len(), v.capacity());
    // SAFETY: MaybeUninit<F> has F's layout; the caller guarantees initialization.
    unsafe { Vec::from_raw_parts(ptr as *mut F, len, cap) }
}

#[cfg(target_os = "linux")]
fn hint_huge_pages(addr: usize, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < 4 * HUGE {
        return;
    }
    unsafe extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    const MADV_HUGEPAGE: i32 = 14;
    let start = (addr + HUGE - 1) & !(HUGE - 1);
    let end = (addr + bytes) & !(HUGE - 1);
    if end > start {
        // SAFETY: a hint on whole pages inside this allocation; the result is ignored
        // (EINVAL where transparent huge pages are unavailable).
        unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn hint_huge_pages(_addr: usize, _bytes: usize) {}
