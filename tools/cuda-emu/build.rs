//! Build the emulated device: every kernel module of candle-repro
//! (`kernels/<family>/<module>.cu`) compiled as host C++ (with `include/cuda_emu.h`
//! force-included, no contraction into FMA, IEEE semantics), plus a table of its kernels per module for the runtime (`src/runtime.cpp`).
//!
//! The kernel units are compiled with `-fsanitize=thread`: every load and store calls a
//! `__tsan_*` function, which the runtime defines (no sanitizer runtime is linked) to check
//! shared memory and device buffers. Loop-to-memset/memcpy rewriting is off there, so no
//! store escapes the callbacks. The runtime itself is not instrumented.
//!
//! The kernels are listed by preprocessing each file with `REPRO_EMU_SCAN`, where
//! `__global__` becomes a marker: the kernels that macros generate are found as well, and
//! the table is written from the compiler's view of the file, never by hand.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "../../build/kernel_sources.rs"]
mod kernel_sources;
use kernel_sources::kernel_sources;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let kernels = manifest
        .join("../../kernels")
        .canonicalize()
        .expect("kernels/");
    let include = manifest.join("include");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../../build/kernel_sources.rs");
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=src/runtime.cpp");
    println!("cargo:rerun-if-changed={}", kernels.display());

    let mut sources = kernel_sources(&kernels);
    // The emulator's own self-test kernels (module "selftest"), after the crate's.
    sources.push(manifest.join("selftest/selftest.cu"));
    println!("cargo:rerun-if-changed=selftest");

    let base = || {
        let mut b = cc::Build::new();
        b.cpp(true)
            .include(&kernels)
            .include(&include)
            .flag("-std=c++17")
            .flag("-ffp-contract=off")
            .flag_if_supported("-fno-fast-math")
            .flag_if_supported("-fexcess-precision=standard")
            .flag("-include")
            .flag(include.join("cuda_emu.h").to_str().expect("utf-8 path"))
            .opt_level(2);
        b
    };

    let mut runtime = base();
    runtime
        .file(manifest.join("src/runtime.cpp"))
        .warnings(true);
    let mut build = base();
    build
        .flag("-fsanitize=thread")
        .flag_if_supported("--param=tsan-instrument-func-entry-exit=0")
        .flag_if_supported("-fno-tree-loop-distribute-patterns");
    let mut registry = String::from("#include \"emu_abi.h\"\n");
    let mut modules = String::new();
    for src in &sources {
        let stem = src.file_stem().unwrap().to_string_lossy().into_owned();
        let names = kernel_names(&base(), src);
        assert!(!names.is_empty(), "no kernel found in {}", src.display());
        let mut unit = format!(
            "#include \"{}\"\n#include \"emu_abi.h\"\n\
             extern \"C\" const repro_emu::Entry repro_emu_module_{stem}[] = {{\n",
            src.display()
        );
        for name in &names {
            writeln!(unit, "    repro_emu::entry(\"{name}\", &{name}),").unwrap();
        }
        unit.push_str("    {nullptr, nullptr, nullptr, nullptr}};\n");
        let path = out.join(format!("emu_module_{stem}.cpp"));
        write_if_changed(&path, &unit);
        build.file(&path);
        writeln!(
            registry,
            "extern \"C\" const repro_emu::Entry repro_emu_module_{stem}[];"
        )
        .unwrap();
        writeln!(modules, "    {{\"{stem}\", repro_emu_module_{stem}}},").unwrap();
    }
    write!(
        registry,
        "extern \"C\" const repro_emu::ModuleEntry repro_emu_modules[] = {{\n{modules}    {{nullptr, nullptr}}}};\n"
    )
    .unwrap();
    let path = out.join("emu_registry.cpp");
    write_if_changed(&path, &registry);
    build.file(&path);
    build.compile("cuda_emu_kernels");
    runtime.compile("cuda_emu");
}

/// The `extern "C" __global__` functions of one kernel file, in the order they appear.
fn kernel_names(base: &cc::Build, src: &Path) -> Vec<String> {
    let mut cmd = base.get_compiler().to_command();
    cmd.args(["-E", "-DREPRO_EMU_SCAN", "-x", "c++"]).arg(src);
    let output = cmd.output().expect("run the C++ preprocessor");
    assert!(
        output.status.success(),
        "preprocessing {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let mut names = Vec::new();
    for (pos, _) in text.match_indices("__repro_emu_kernel__") {
        let mut words = text[pos + "__repro_emu_kernel__".len()..]
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty());
        assert_eq!(words.next(), Some("void"), "a kernel returns void");
        let name = words.next().expect("kernel name").to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("write generated source");
    }
}
