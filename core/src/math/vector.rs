//! The vector paths ([`VectorPath`]: detection, the crate-wide [`best_path`] and its test
//! cap) and running one kernel on a chosen path: the kernel is written once and compiled
//! once per instruction set (with that set's target features), and [`runnable`] decides,
//! in one place for the whole crate, which copy runs: the one asked for, or the widest
//! below it that this CPU has. Every copy gives the same bits; the path only picks vector
//! widths.
//!
//! Two ways to write the copies, one decision:
//! * [`run_on`]: the kernel is a struct generic over an instruction-set marker ([`Isa`])
//!   (the matmul, the FFT's Stockham stages);
//! * [`path_copies!`]: a function that takes its slices as parameters (the elementwise
//!   map, softmax's row passes, rope's rows). A kernel struct carries its slices as
//!   fields, which drops LLVM's `noalias` on them, and loops that write one slice while
//!   reading another then stop vectorizing (measured: exp 0.57 -> 2.9 ns per element on
//!   AVX2); as parameters of the compiled copy they keep it.
//!
//! The kernels must be `#[inline(always)]`, and so must everything they call that does
//! arithmetic (no closure in between): they are then compiled inside the
//! `#[target_feature]` copies, and the compiler vectorizes them for that width.

/// Which compiled copy of the slice kernels runs. Every copy gives the same bits; this
/// only picks the widest vectors the CPU has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorPath {
    /// The baseline target (SSE2 on x86-64, NEON on aarch64).
    Baseline,
    /// x86-64 AVX2 + FMA copy.
    Avx2,
    /// x86-64 AVX-512 (F, DQ, VL, BW) + FMA copy.
    Avx512,
}

impl VectorPath {
    /// The widest path this CPU supports.
    pub fn detect() -> VectorPath {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512dq")
                && std::is_x86_feature_detected!("avx512vl")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("fma")
            {
                return VectorPath::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                return VectorPath::Avx2;
            }
        }
        VectorPath::Baseline
    }

    /// Every path this CPU can run (for tests that compare them).
    pub fn available() -> Vec<VectorPath> {
        let mut paths = vec![VectorPath::Baseline];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                paths.push(VectorPath::Avx2);
            }
            if VectorPath::detect() == VectorPath::Avx512 {
                paths.push(VectorPath::Avx512);
            }
        }
        paths
    }
}

/// A process-wide cap on the vector path (0: none, 1: baseline, 2: AVX2, 3: AVX-512).
static FORCED_PATH: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Cap every op's vector path at `path` (`None`: the widest the CPU has), for tests and
/// benchmarks that compare the paths on whole models. Outputs never change with it.
#[doc(hidden)]
pub fn force_vector_path(path: Option<VectorPath>) {
    let v = match path {
        None => 0,
        Some(VectorPath::Baseline) => 1,
        Some(VectorPath::Avx2) => 2,
        Some(VectorPath::Avx512) => 3,
    };
    FORCED_PATH.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// The vector path every op takes: the widest this CPU has (detected once), or the cap
/// [`force_vector_path`] set if lower.
#[doc(hidden)]
pub fn best_path() -> VectorPath {
    static PATH: std::sync::OnceLock<VectorPath> = std::sync::OnceLock::new();
    let detected = *PATH.get_or_init(VectorPath::detect);
    let rank = |p: VectorPath| match p {
        VectorPath::Baseline => 1,
        VectorPath::Avx2 => 2,
        VectorPath::Avx512 => 3,
    };
    match FORCED_PATH.load(std::sync::atomic::Ordering::Relaxed) {
        1 => VectorPath::Baseline,
        2 if rank(detected) >= 2 => VectorPath::Avx2,
        _ => detected,
    }
}

/// An instruction-set marker: what the copy of a kernel compiled for it may assume.
#[doc(hidden)]
pub trait Isa {
    /// Whether the copy fuses the multiply-adds it writes out (`crate::math::madd`).
    const FUSED: bool;
    /// The widest vector register, in bytes (kernels that pick explicit SIMD types).
    const VECTOR_BYTES: usize;
}

/// The target's baseline (SSE2 on x86-64, NEON on aarch64).
#[doc(hidden)]
pub struct Baseline;
/// x86-64 AVX2 + FMA.
#[doc(hidden)]
pub struct Avx2;
/// x86-64 AVX-512 (F, DQ, VL, BW) + AVX2 + FMA.
#[doc(hidden)]
pub struct Avx512;

impl Isa for Baseline {
    const FUSED: bool = crate::math::madd::TARGET_FUSES;
    const VECTOR_BYTES: usize = 16;
}
impl Isa for Avx2 {
    const FUSED: bool = true;
    const VECTOR_BYTES: usize = 32;
}
impl Isa for Avx512 {
    const FUSED: bool = true;
    const VECTOR_BYTES: usize = 64;
}

/// A kernel with its arguments, run by [`run_on`].
#[doc(hidden)]
pub trait PathKernel<Out> {
    /// The kernel on instruction set `I` (must be `#[inline(always)]`, see the module
    /// header).
    fn run<I: Isa>(self) -> Out;
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
fn run_avx512<Out, K: PathKernel<Out>>(k: K) -> Out {
    k.run::<Avx512>()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_avx2<Out, K: PathKernel<Out>>(k: K) -> Out {
    k.run::<Avx2>()
}

/// The path that runs when `path` is asked for: `path` itself, or the widest path below
/// it that this CPU has ([`best_path`], which tests may cap). Only
/// x86-64 has paths above the baseline.
#[doc(hidden)]
pub fn runnable(path: VectorPath) -> VectorPath {
    let best = best_path();
    match path {
        VectorPath::Avx512 if best == VectorPath::Avx512 => VectorPath::Avx512,
        VectorPath::Avx2 | VectorPath::Avx512 if best != VectorPath::Baseline => VectorPath::Avx2,
        _ => VectorPath::Baseline,
    }
}

/// Run `k` on `path`, or on the widest path below it that this CPU has ([`runnable`]).
#[doc(hidden)]
pub fn run_on<Out, K: PathKernel<Out>>(path: VectorPath, k: K) -> Out {
    match runnable(path) {
        // SAFETY: `runnable` returns a path above the baseline only where the CPU has it.
        #[cfg(target_arch = "x86_64")]
        VectorPath::Avx512 => unsafe { run_avx512(k) },
        #[cfg(target_arch = "x86_64")]
        VectorPath::Avx2 => unsafe { run_avx2(k) },
        _ => k.run::<Baseline>(),
    }
}

/// Defines `fn name<generics>(path: VectorPath, args...) -> ret` that calls `body(args...)`
/// compiled for the path [`runnable`] picks: the baseline copy or a copy with the AVX2 /
/// AVX-512 target features of [`Isa`]'s markers. The arguments stay parameters of each
/// copy (see the module header on `noalias`). `where I: Isa` names the copy's
/// instruction-set marker ([`Baseline`], [`Avx2`], [`Avx512`]) `I` inside the body.
///
/// ```ignore
/// path_copies! {
///     fn max_mv<F: Format>(x: &[F]) -> f32 = max_pass::<F>;
/// }
/// path_copies! {
///     fn map_with<U: CrUnary, F: Format>(xs: &[F], out: &mut [Out<F>]) where I: Isa
///         = map_generic::<U, F, { <I as Isa>::FUSED }>;
/// }
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! path_copies {
    ($(#[$meta:meta])* $vis:vis fn $name:ident<$($g:ident: $bound:path),*>(
        $($arg:ident: $ty:ty),* $(,)?
    ) $(-> $ret:ty)? $(where $isa:ident: Isa)? = $body:expr;) => {
        $(#[$meta])*
        $vis fn $name<$($g: $bound),*>(
            path: $crate::math::VectorPath,
            $($arg: $ty),*
        ) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
            fn avx512<$($g: $bound),*>($($arg: $ty),*) $(-> $ret)? {
                $(type $isa = $crate::math::vector::Avx512;)?
                $body($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn avx2<$($g: $bound),*>($($arg: $ty),*) $(-> $ret)? {
                $(type $isa = $crate::math::vector::Avx2;)?
                $body($($arg),*)
            }
            match $crate::math::vector::runnable(path) {
                // SAFETY: `runnable` returns a path above the baseline only where the CPU
                // has its features.
                #[cfg(target_arch = "x86_64")]
                $crate::math::VectorPath::Avx512 => unsafe { avx512::<$($g),*>($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                $crate::math::VectorPath::Avx2 => unsafe { avx2::<$($g),*>($($arg),*) },
                _ => {
                    $(type $isa = $crate::math::vector::Baseline;)?
                    $body($($arg),*)
                }
            }
        }
    };
}
#[doc(hidden)]
pub use crate::path_copies;
