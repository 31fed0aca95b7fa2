//! A CPU-emulated CUDA device for candle-repro's tests: every kernel of `kernels/*/*.cu`,
//! compiled as host C++ (see build.rs and `include/cuda_emu.h`), run over its grid with
//! the block's threads as fibers, real `__syncthreads` barriers, warp shuffles and votes
//! (the PTX ISA's lane arithmetic), `mma.sync` m16n8k16 bf16 and m16n8k32 s8 from the PTX
//! ISA's fragment tables, and the checks of a sanitizer: an out-of-bounds access (guard
//! zones before and after every buffer, red zones between shared variables), a write to
//! an input, a read of device memory never written since allocation or of shared memory
//! the block has not written, a shared-memory race (two threads, one byte, one barrier
//! interval, a write among them), a barrier not reached by every thread, a collective with
//! a missing lane, an `mma` whose sums are not exact in its accumulator, and an output that
//! changes with the order the threads and blocks run in, are each an `Err`, not a crash, a
//! hang or a silent pass.
//!
//! Nothing here knows about candle or about any op: candle-repro's launch layer
//! (`candle_repro::launch`) computes the plan, and its test adapter (`tests/common/emu.rs`)
//! turns the plan's arguments into [`Arg`]s.

use std::ffi::{CString, c_char, c_void};

#[repr(C)]
struct EmuArg {
    value: *const c_void,
    size: u32,
    pointer: u32,
}

#[repr(C)]
struct EmuLaunchArg {
    arg: EmuArg,
    buffer: *mut BufInfo,
    writable: u32,
}

/// The runtime's record of a buffer (`BufInfo` in src/runtime.cpp).
#[repr(C)]
struct BufInfo {
    region: *mut c_char,
    map_len: usize,
    data: *mut u8,
    bytes: usize,
    init: *mut u8,
}

unsafe extern "C" {
    fn repro_emu_alloc(bytes: usize) -> *mut BufInfo;
    fn repro_emu_free(info: *mut BufInfo);
    fn repro_emu_mark_written(info: *mut BufInfo);
    fn repro_emu_protect(info: *mut BufInfo, read_only: i32) -> i32;
    fn repro_emu_has_kernel(module: *const c_char, kernel: *const c_char) -> i32;
    #[allow(clippy::too_many_arguments)]
    fn repro_emu_launch(
        module: *const c_char,
        kernel: *const c_char,
        grid: *const u32,
        block: *const u32,
        args: *const EmuLaunchArg,
        nargs: usize,
        schedules: u32,
        seed: u64,
        err: *mut c_char,
        err_len: usize,
    ) -> i32;
}

/// Device memory of the emulated device: host pages between 64 KiB inaccessible guard
/// zones, the last byte touching the one after. New buffers are filled with 0xFF bytes (a
/// NaN in every float format, never the canonical one), so an output element a kernel
/// forgets to write shows up, and marked unwritten: a kernel that reads a byte before
/// anything wrote it (the host through [`Buffer::from_bytes`] or [`Buffer::as_bytes_mut`],
/// or a kernel) fails its launch.
pub struct Buffer {
    info: *mut BufInfo,
    data: *mut u8,
    bytes: usize,
}

// SAFETY: the buffer owns its mapping; access goes through &/&mut.
unsafe impl Send for Buffer {}
// SAFETY: shared access only reads.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// `bytes` bytes, each 0xFF, none written.
    pub fn new(bytes: usize) -> Self {
        // SAFETY: plain FFI call.
        let info = unsafe { repro_emu_alloc(bytes) };
        assert!(
            !info.is_null(),
            "cannot map {bytes} bytes for the emulated device"
        );
        // SAFETY: a valid record, filled by repro_emu_alloc.
        let data = unsafe { (*info).data };
        Buffer { info, data, bytes }
    }

    /// A buffer holding a copy of `src`.
    pub fn from_bytes(src: &[u8]) -> Self {
        let mut b = Self::new(src.len());
        b.as_bytes_mut().copy_from_slice(src);
        b
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Its contents.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `data` points at `bytes` mapped, readable bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.data, self.bytes) }
    }

    /// Its contents, writable: every byte counts as written from now on.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the record is this buffer's own.
        unsafe { repro_emu_mark_written(self.info) };
        // SAFETY: as above, and writable outside a launch (launch restores write access).
        unsafe { std::slice::from_raw_parts_mut(self.data, self.bytes) }
    }

    /// Whether byte `i` has been written since allocation (by the host or a kernel).
    pub fn is_written(&self, i: usize) -> bool {
        assert!(i < self.bytes, "byte {i} of a {}-byte buffer", self.bytes);
        // SAFETY: `init` holds `bytes` bytes.
        unsafe { *(*self.info).init.add(i) != 0 }
    }

    fn protect(&self, read_only: bool) {
        // SAFETY: the record is this buffer's own mapping.
        let rc = unsafe { repro_emu_protect(self.info, read_only as i32) };
        assert_eq!(rc, 0, "mprotect failed");
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the record was made by repro_emu_alloc and is released once.
        unsafe { repro_emu_free(self.info) }
    }
}

/// One kernel argument.
pub enum Arg<'a> {
    /// A buffer the kernel only reads, at a byte offset: read-only during the launch.
    In(&'a Buffer, usize),
    /// A buffer the kernel writes (and may read), at a byte offset.
    Out(&'a Buffer, usize),
    /// A null device pointer.
    Null,
    /// A value passed by value: its bytes (little-endian, the kernel's parameter size).
    Value(Vec<u8>),
}

/// Whether module `module` (a `kernels/<family>/<module>.cu` file stem) has kernel `kernel`.
pub fn has_kernel(module: &str, kernel: &str) -> bool {
    let (m, k) = (CString::new(module).unwrap(), CString::new(kernel).unwrap());
    // SAFETY: two valid C strings.
    unsafe { repro_emu_has_kernel(m.as_ptr(), k.as_ptr()) != 0 }
}

/// The schedules every [`launch`] runs under: `REPRO_EMU_SCHEDULES` if set (at least 1),
/// else 3 (index order, reverse order, one seeded random order; see [`launch_with`]).
pub fn default_schedules() -> u32 {
    static N: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("REPRO_EMU_SCHEDULES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3)
            .max(1)
    })
}

thread_local! {
    static SCHEDULES: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with every [`launch`] on this thread under `schedules` schedules (for the
/// largest shapes, which the smaller ones already cover under several orders).
pub fn with_schedules<R>(schedules: u32, f: impl FnOnce() -> R) -> R {
    let saved = SCHEDULES.with(|s| s.replace(Some(schedules.max(1))));
    struct Restore(Option<u32>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCHEDULES.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(saved);
    f()
}

/// Run kernel `kernel` of `kernels/<family>/<module>.cu` over `grid` blocks of `block` threads,
/// under [`default_schedules`] schedules (or those of an enclosing [`with_schedules`]),
/// seed 0. See [`launch_with`].
pub fn launch(
    module: &str,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    args: &[Arg<'_>],
) -> Result<(), String> {
    let schedules = SCHEDULES
        .with(|s| s.get())
        .unwrap_or_else(default_schedules);
    launch_with(module, kernel, grid, block, args, schedules, 0)
}

/// Run kernel `kernel` of `kernels/<family>/<module>.cu` over `grid` blocks of `block` threads,
/// once per schedule: schedule 0 runs the blocks in order and each block's threads in index
/// order between collectives, schedule 1 both reversed, schedule k >= 2 both in random
/// orders drawn from `seed + k` (the threads' order drawn afresh at every barrier
/// interval). The written buffers are restored before each run and must hold the same
/// bytes after every one. The inputs are read-only while it runs. Errors: an unknown
/// kernel, arguments that do not match its parameters (count, pointer or value, size), an
/// invalid configuration, an out-of-bounds access, a write to an input, a read of device
/// memory never written, a read of shared memory the block has not written, a shared-memory
/// race, a barrier or warp collective not reached by every thread it names, a deadlock, an
/// inexact `mma`, `__trap()`, and outputs that differ between schedules.
pub fn launch_with(
    module: &str,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    args: &[Arg<'_>],
    schedules: u32,
    seed: u64,
) -> Result<(), String> {
    let (m, k) = (CString::new(module).unwrap(), CString::new(kernel).unwrap());
    // The pointer values must outlive the call: kept here, referenced by `raw`.
    let pointers: Vec<*mut c_void> = args
        .iter()
        .map(|a| match a {
            // SAFETY (both): the offset is checked against the buffer's size below.
            Arg::In(b, off) | Arg::Out(b, off) => unsafe { b.data.add(*off) }.cast(),
            _ => std::ptr::null_mut(),
        })
        .collect();
    for a in args {
        if let Arg::In(b, off) | Arg::Out(b, off) = a
            && *off > b.bytes
        {
            return Err(format!(
                "{kernel}: a buffer argument starts at byte {off} of a {}-byte buffer",
                b.bytes
            ));
        }
    }
    let raw: Vec<EmuLaunchArg> = args
        .iter()
        .zip(&pointers)
        .map(|(a, p)| match a {
            Arg::Value(v) => EmuLaunchArg {
                arg: EmuArg {
                    value: v.as_ptr().cast(),
                    size: v.len() as u32,
                    pointer: 0,
                },
                buffer: std::ptr::null_mut(),
                writable: 0,
            },
            _ => EmuLaunchArg {
                arg: EmuArg {
                    value: (p as *const *mut c_void).cast(),
                    size: std::mem::size_of::<*mut c_void>() as u32,
                    pointer: 1,
                },
                buffer: match a {
                    Arg::In(b, _) | Arg::Out(b, _) => b.info,
                    _ => std::ptr::null_mut(),
                },
                writable: matches!(a, Arg::Out(..)) as u32,
            },
        })
        .collect();
    let outputs: Vec<*const Buffer> = args
        .iter()
        .filter_map(|a| match a {
            Arg::Out(b, _) => Some(*b as *const Buffer),
            _ => None,
        })
        .collect();
    let inputs: Vec<&Buffer> = args
        .iter()
        .filter_map(|a| match a {
            Arg::In(b, _) if !outputs.contains(&(*b as *const Buffer)) => Some(*b),
            _ => None,
        })
        .collect();
    for b in &inputs {
        b.protect(true);
    }
    let mut err = vec![0u8; 2048];
    // SAFETY: the argument records point at live values (`pointers`, the Vec<u8>s) of the
    // sizes they state, and at live buffer records; the runtime checks them against the
    // kernel's parameters.
    let rc = unsafe {
        repro_emu_launch(
            m.as_ptr(),
            k.as_ptr(),
            grid.as_ptr(),
            block.as_ptr(),
            raw.as_ptr(),
            raw.len(),
            schedules,
            seed,
            err.as_mut_ptr().cast(),
            err.len(),
        )
    };
    for b in &inputs {
        b.protect(false);
    }
    if rc == 0 {
        Ok(())
    } else {
        let end = err.iter().position(|&c| c == 0).unwrap_or(err.len());
        Err(String::from_utf8_lossy(&err[..end]).into_owned())
    }
}
