//! The CUDA mirror's constants and tables are the Rust ones: for every `core/src/math/<family>.rs`
//! with a device mirror, `tools/kernel-hostcheck/scripts/rust_consts_to_cuh.py` (the
//! generator that wrote them) is run again on the Rust file, and each line it prints
//! (a scalar as a hex float with its bit pattern, a double-double, a table of bit patterns)
//! must appear verbatim in `kernels/math/<family>.cuh`. A coefficient edited on one side
//! only fails here, before any host cross-check runs. Needs python3 (no packages).
//!
//! `cargo test --release --test cuda_constants`
// Needs the repository's tools and kernels; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use std::path::Path;
use std::process::Command;

/// Constants the generator prints that the mirror does not hold as such, and why.
const NOT_MIRRORED: &[(&str, &str, &str)] = &[
    (
        "exp",
        "NORMAL_RESULT_MIN",
        "used only by the CPU slice kernels' fast rounding test (fast_result_normal)",
    ),
    (
        "trig",
        "FAST_REL_ERR",
        "an associated const in Rust; the mirror's fast_rel_err() returns the same bits",
    ),
];

fn regenerate(family: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("tools/kernel-hostcheck/scripts/rust_consts_to_cuh.py"))
        .arg(root.join(format!("core/src/math/{family}.rs")))
        .output()
        .expect("python3 runs the constant generator");
    assert!(
        out.status.success(),
        "generator failed on {family}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cuda_constants_are_the_rust_bit_patterns() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for family in [
        "exp", "log", "sigmoid", "softplus", "tanh", "trig", "recip", "erf", "gelu",
    ] {
        let generated = regenerate(family);
        let cuh = std::fs::read_to_string(root.join(format!("kernels/math/{family}.cuh")))
            .expect("the mirror header");
        let mut lines = 0;
        for line in generated.lines().filter(|l| !l.trim().is_empty()) {
            let exempt = NOT_MIRRORED
                .iter()
                .any(|(f, name, _)| *f == family && line.contains(&format!(" {name} ")));
            if exempt {
                continue;
            }
            assert!(
                cuh.contains(line),
                "kernels/math/{family}.cuh lacks the generated line\n  {line}\n\
                 (regenerate: python3 tools/kernel-hostcheck/scripts/rust_consts_to_cuh.py \
                 core/src/math/{family}.rs)"
            );
            lines += 1;
        }
        assert!(lines > 0, "{family}: the generator found no constant");
        checked += lines;
    }
    // The exemptions still hold the Rust bits where the mirror has them another way.
    let trig = std::fs::read_to_string(root.join("kernels/math/trig.cuh")).unwrap();
    assert!(trig.contains("fast_rel_err() { return F64(0x3D00000000000000); }"));
    println!("{checked} generated lines found in kernels/math/*.cuh");
}

/// The CUDA list of the unary functions (`REPRO_FOR_EACH_UNARY` in kernels/math/all.cuh,
/// which names the kernels' entry points and the host check's shim) is the Rust one
/// (`core/src/math/functions.rs`, seen here through `UnaryFn::ALL`): same names, same structs,
/// same order.
#[test]
fn cuda_unary_list_is_the_rust_list() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = std::fs::read_to_string(root.join("kernels/math/all.cuh")).unwrap();
    let start = all
        .find("#define REPRO_FOR_EACH_UNARY(X)")
        .expect("kernels/math/all.cuh defines REPRO_FOR_EACH_UNARY");
    let mut cuda = Vec::new();
    for line in all[start..].lines().skip(1) {
        let entry = line.trim().trim_end_matches('\\').trim();
        let Some(args) = entry.strip_prefix("X(").and_then(|e| e.strip_suffix(')')) else {
            panic!("unexpected line in REPRO_FOR_EACH_UNARY: {line:?}");
        };
        let (name, ty) = args.split_once(',').expect("X(name, Struct)");
        cuda.push((name.trim().to_string(), ty.trim().to_string()));
        if !line.trim_end().ends_with('\\') {
            break;
        }
    }
    let rust: Vec<(String, String)> = candle_repro::UnaryFn::ALL
        .iter()
        .map(|f| (f.name().to_string(), format!("{f:?}")))
        .collect();
    assert_eq!(
        cuda, rust,
        "REPRO_FOR_EACH_UNARY (left) differs from core/src/math/functions.rs (right)"
    );
}
