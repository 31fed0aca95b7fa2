//! Build script: with the `cuda` feature, compile every `kernels/<family>/<module>.cu` to PTX
//! with nvcc and leave it in OUT_DIR (as `<module>.ptx`), where `src/launch/cuda.rs` embeds
//! it with `include_str!`. Without the feature no CUDA install is needed (docs.rs builds the
//! documentation without the feature: candle's own CUDA backend, `candle-kernels`, needs
//! nvcc to build).
//! It also sets `cfg(repro_workspace)` inside the repository (see `workspace_tools`).
//!
//! The flags keep the device arithmetic IEEE: no contraction into fused multiply-add
//! (`--fmad=false`, the math mirrors Rust code that never contracts), IEEE division and square
//! root, no flush of subnormals to zero. `--use_fast_math` is never used. The PTX targets
//! `compute_$CUDA_COMPUTE_CAP` (default 80); the driver JIT-compiles it for newer GPUs.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build/kernel_sources.rs"]
mod kernel_sources;
use kernel_sources::kernel_sources;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // The package check (.ci/package-check.sh) builds the unpacked crate in this target
    // directory, where cargo gives its build-script run the same hash as the repository's
    // (path packages hash their path relative to their workspace root): the variable it
    // sets makes cargo rerun this script on the way back, so the repository's build never
    // keeps the packaged crate's answer (no workspace tools) and skips their tests.
    println!("cargo:rerun-if-env-changed=REPRO_PACKAGE_CHECK");
    println!("cargo:rerun-if-changed=build/kernel_sources.rs");
    println!("cargo:rerun-if-changed=kernels");
    for var in [
        "CUDA_COMPUTE_CAP",
        "NVCC",
        "CUDA_HOME",
        "CUDA_PATH",
        "NVCC_APPEND_FLAGS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    workspace_tools(&manifest);
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let kernels = manifest.join("kernels");

    let sources = kernel_sources(&kernels);
    let cap = compute_cap();
    let nvcc = nvcc_path();
    for src in &sources {
        let stem = src.file_stem().unwrap().to_string_lossy().into_owned();
        let ptx = out_dir.join(format!("{stem}.ptx"));
        let status = Command::new(&nvcc)
            .arg("--ptx")
            .arg(format!("--gpu-architecture=compute_{cap}"))
            .args(["-O3", "-std=c++17"])
            .args([
                "--fmad=false",
                "-prec-div=true",
                "-prec-sqrt=true",
                "-ftz=false",
            ])
            .arg("-I")
            .arg(&kernels)
            .arg("-o")
            .arg(&ptx)
            .arg(src)
            .status()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run nvcc ({}): {e}. Install the compiler with \
                     scripts/install-cuda-compiler.sh and source .venv-cuda/cuda-env.sh",
                    nvcc.display()
                )
            });
        assert!(status.success(), "nvcc failed on {}", src.display());
    }
}

/// In the repository, `cfg(repro_workspace)`: the tests and examples that check against the
/// workspace tools (`tools/mpfr-oracle`, the MPFR oracle; `tools/kernel-hostcheck`, the CUDA
/// headers compiled as host C++; `tools/cuda-emu`, the emulated CUDA device) are built. The packaged crate has no `tools/` (and cargo
/// drops the path dev-dependencies), so they are skipped, and the build says so.
fn workspace_tools(manifest: &Path) {
    println!("cargo::rustc-check-cfg=cfg(repro_workspace)");
    let tools = [
        "tools/mpfr-oracle",
        "tools/kernel-hostcheck",
        "tools/cuda-emu",
    ];
    if tools
        .iter()
        .all(|t| manifest.join(t).join("Cargo.toml").exists())
    {
        println!("cargo:rustc-cfg=repro_workspace");
    } else if std::env::var_os("DOCS_RS").is_none() {
        println!(
            "cargo:warning=outside the candle-repro repository: the tests and examples that \
             need the workspace tools (MPFR oracle, host-compiled CUDA headers) are skipped; \
             run them from a clone of the repository"
        );
    }
}

/// `CUDA_COMPUTE_CAP` as digits ("8.0", "80" and "sm_80" all give "80"), default 80.
fn compute_cap() -> String {
    let raw = std::env::var("CUDA_COMPUTE_CAP").unwrap_or_default();
    let digits: String = raw.chars().filter(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() {
        "80".to_string()
    } else {
        digits
    }
}

/// `$NVCC`, else `$CUDA_HOME/bin/nvcc` or `$CUDA_PATH/bin/nvcc`, else `nvcc` on PATH.
fn nvcc_path() -> PathBuf {
    if let Some(p) = std::env::var_os("NVCC") {
        return PathBuf::from(p);
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            let p = Path::new(&home).join("bin").join("nvcc");
            if p.exists() {
                return p;
            }
        }
    }
    PathBuf::from("nvcc")
}
