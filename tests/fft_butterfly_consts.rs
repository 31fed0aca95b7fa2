//! The FFT's odd-radix butterfly constants (DFT3, DFT5, DFT7) on both devices are the
//! generator's output: `tools/gen_fft_butterfly_consts.py` (mpmath at 300 bits, rounded to
//! nearest by integer arithmetic) is run, and every line it prints must occur verbatim in
//! `core/src/fft/scalar.rs` (the Rust bit patterns) and `kernels/fft/butterflies.cuh` (the CUDA
//! ones). A constant edited on one side only, or by hand, fails here. The Rust values are
//! also checked against the crate's double-double twiddles (a unit test in scalar.rs).
//! Needs python3 with mpmath.
//!
//! `cargo test --release --test fft_butterfly_consts`
// Needs the repository's tools and kernels; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use std::path::Path;
use std::process::Command;

#[test]
fn butterfly_constants_are_the_generator_output_on_both_devices() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("tools/gen_fft_butterfly_consts.py"))
        .output()
        .expect("python3 runs the generator");
    assert!(
        out.status.success(),
        "generator failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (rust, cuda) = text
        .split_once("// CUDA (kernels/fft/butterflies.cuh)")
        .expect("two blocks");
    let rs = std::fs::read_to_string(root.join("core/src/fft/scalar.rs")).unwrap();
    let cuh = std::fs::read_to_string(root.join("kernels/fft/butterflies.cuh")).unwrap();
    let mut n = 0;
    for (block, file, name) in [(rust, &rs, "scalar.rs"), (cuda, &cuh, "butterflies.cuh")] {
        for line in block.lines().filter(|l| l.contains("0x")) {
            assert!(
                file.contains(line),
                "{name} lacks the generated line {line:?}"
            );
            n += 1;
        }
    }
    // 12 constants, f32 and f64, Rust and CUDA.
    assert_eq!(n, 48);
}
