//! Compile the device math header as plain host C++ (no contraction into FMA, IEEE
//! semantics) so the tests can compare it bit for bit with the Rust functions: src/shim.cpp
//! (the elementwise functions of math/all.cuh) and src/matmul_shim.cpp (the matmul kernels'
//! dot products and f8e4m3 conversions). The kernels themselves run on the emulated device
//! (tools/cuda-emu).

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let kernels = std::path::Path::new(&manifest).join("../../kernels");
    println!("cargo:rerun-if-changed=src/shim.cpp");
    println!("cargo:rerun-if-changed=src/matmul_shim.cpp");
    println!("cargo:rerun-if-changed={}", kernels.display());
    cc::Build::new()
        .cpp(true)
        .file("src/shim.cpp")
        .file("src/matmul_shim.cpp")
        .include(&kernels)
        .flag("-std=c++17")
        .flag("-ffp-contract=off")
        .flag_if_supported("-fno-fast-math")
        .flag_if_supported("-fexcess-precision=standard")
        .opt_level(2)
        .warnings(true)
        .compile("kernel_hostcheck");
}
