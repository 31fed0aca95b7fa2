//! Sets `cfg(repro_workspace)` inside the repository, where the workspace tools exist (the
//! MPFR oracle that the math's unit tests check against); outside it (the packaged crate)
//! those checks are compiled out. The same rule as candle-repro's build script.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // The package check (.ci/package-check.sh) builds the unpacked crate in this target
    // directory, where cargo gives its build-script run the same hash as the repository's
    // (path packages hash their path relative to their workspace root): the variable it
    // sets makes cargo rerun this script on the way back, so the repository's build never
    // keeps the packaged crate's answer (no workspace tools) and skips their tests.
    println!("cargo:rerun-if-env-changed=REPRO_PACKAGE_CHECK");
    println!("cargo::rustc-check-cfg=cfg(repro_workspace)");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    if manifest.join("../tools/mpfr-oracle/Cargo.toml").exists() {
        println!("cargo:rustc-cfg=repro_workspace");
    }
}
