//! A CPU-emulated CUDA device for candle-repro's tests: every kernel of `kernels/*/*.cu`,
//! compiled as host C++ (see build.rs and `include/cuda_emu.h`), run over its grid with
//! the block's threads as fibers, real `__syncthreads` barriers, warp shuffles and votes,
//! `mma.sync` m16n8k16 from the PTX ISA's fragment tables, and guarded buffers: an
//! out-of-bounds access, a write to an input, a barrier not reached by every thread or a
//! collective with a missing lane is an `Err`, not a crash or a hang.
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

unsafe extern "C" {
    fn repro_emu_alloc(bytes: usize, map_len: *mut usize, data: *mut *mut c_void) -> *mut c_void;
    fn repro_emu_free(region: *mut c_void, map_len: usize);
    fn repro_emu_protect(region: *mut c_void, map_len: usize, read_only: i32) -> i32;
    fn repro_emu_has_kernel(module: *const c_char, kernel: *const c_char) -> i32;
    fn repro_emu_launch(
        module: *const c_char,
        kernel: *const c_char,
        grid: *const u32,
        block: *const u32,
        args: *const EmuArg,
        nargs: usize,
        err: *mut c_char,
        err_len: usize,
    ) -> i32;
}

/// Device memory of the emulated device: host pages whose last byte touches an
/// inaccessible page. New buffers are filled with 0xFF bytes (a NaN in every float format,
/// never the canonical one), so an output element a kernel forgets to write shows up.
pub struct Buffer {
    region: *mut c_void,
    map_len: usize,
    data: *mut u8,
    bytes: usize,
}

// SAFETY: the buffer owns its mapping; access goes through &/&mut.
unsafe impl Send for Buffer {}
// SAFETY: shared access only reads.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// `bytes` bytes, each 0xFF.
    pub fn new(bytes: usize) -> Self {
        let mut map_len = 0;
        let mut data = std::ptr::null_mut();
        // SAFETY: plain FFI call with out-pointers to locals.
        let region = unsafe { repro_emu_alloc(bytes, &mut map_len, &mut data) };
        assert!(
            !region.is_null(),
            "cannot map {bytes} bytes for the emulated device"
        );
        let mut b = Buffer {
            region,
            map_len,
            data: data.cast(),
            bytes,
        };
        b.as_bytes_mut().fill(0xFF);
        b
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

    /// Its contents, writable.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and writable outside a launch (launch restores write access).
        unsafe { std::slice::from_raw_parts_mut(self.data, self.bytes) }
    }

    fn protect(&self, read_only: bool) {
        // SAFETY: the region is this buffer's own mapping.
        let rc = unsafe { repro_emu_protect(self.region, self.map_len, read_only as i32) };
        assert_eq!(rc, 0, "mprotect failed");
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by repro_emu_alloc and is released once.
        unsafe { repro_emu_free(self.region, self.map_len) }
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

/// Run kernel `kernel` of `kernels/<family>/<module>.cu` over `grid` blocks of `block` threads.
/// The inputs are read-only while it runs. Errors: an unknown kernel, arguments that do not
/// match its parameters (count, pointer or value, size), an invalid configuration, an
/// out-of-bounds access, a write to an input, a barrier or warp collective not reached by
/// every thread it names, a deadlock, `__trap()`.
pub fn launch(
    module: &str,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    args: &[Arg<'_>],
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
    let raw: Vec<EmuArg> = args
        .iter()
        .zip(&pointers)
        .map(|(a, p)| match a {
            Arg::Value(v) => EmuArg {
                value: v.as_ptr().cast(),
                size: v.len() as u32,
                pointer: 0,
            },
            _ => EmuArg {
                value: (p as *const *mut c_void).cast(),
                size: std::mem::size_of::<*mut c_void>() as u32,
                pointer: 1,
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
    let mut err = vec![0u8; 1024];
    // SAFETY: the argument records point at live values (`pointers`, the Vec<u8>s) of the
    // sizes they state; the runtime checks them against the kernel's parameters.
    let rc = unsafe {
        repro_emu_launch(
            m.as_ptr(),
            k.as_ptr(),
            grid.as_ptr(),
            block.as_ptr(),
            raw.as_ptr(),
            raw.len(),
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
