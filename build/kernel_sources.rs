//! The kernel sources, listed the same way by the crate's build script (PTX with nvcc) and
//! the emulated device's (`tools/cuda-emu`, host C++), so both build the same modules.

use std::path::{Path, PathBuf};

/// The kernel modules: `kernels/<family>/<module>.cu`, one folder per op family (the
/// headers beside them, `*.cuh`, are included, not compiled alone). Sorted, and each module
/// name (the file stem, the PTX module's name) used once.
pub fn kernel_sources(kernels: &Path) -> Vec<PathBuf> {
    let mut sources = Vec::new();
    for dir in std::fs::read_dir(kernels).expect("kernels/ directory") {
        let dir = dir.expect("kernels/ entry").path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).expect("kernels/<family>/") {
            let file = file.expect("kernels/<family>/ entry").path();
            if file.extension().is_some_and(|x| x == "cu") {
                sources.push(file);
            }
        }
    }
    sources.sort();
    let mut stems: Vec<_> = sources.iter().map(|p| p.file_stem().unwrap()).collect();
    stems.sort();
    stems.dedup();
    assert_eq!(
        stems.len(),
        sources.len(),
        "two kernel modules share a name"
    );
    sources
}
