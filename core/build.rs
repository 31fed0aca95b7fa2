//! Sets `cfg(repro_workspace)` inside the repository, where the workspace tools exist (the
//! MPFR oracle that the math's unit tests check against); outside it (the packaged crate)
//! those checks are compiled out. The same rule as candle-repro's build script.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(repro_workspace)");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    if manifest.join("../tools/mpfr-oracle/Cargo.toml").exists() {
        println!("cargo:rustc-cfg=repro_workspace");
    }
}
