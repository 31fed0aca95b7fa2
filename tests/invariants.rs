//! Source-level invariants of the library: no platform transcendental functions and no
//! fast-math anywhere in the code that computes results (src/, kernels/, build.rs). A fused
//! multiply-add appears only in the two helpers that write it out (`madd` in
//! `core/src/math/madd.rs`, `fma_f64` in `kernels/math/common.cuh`): an IEEE operation rounded
//! once. No compiler contracts anything (Rust never does; nvcc gets `--fmad=false`), so the
//! bits cannot depend on whether a CPU or GPU would fuse. Tests and tools may use anything
//! as an oracle.

use std::path::Path;

/// Rust std / libm transcendental and fused operations.
const RUST_FORBIDDEN: &[&str] = &[
    ".exp()",
    ".exp2()",
    ".exp_m1()",
    ".ln()",
    ".ln_1p()",
    ".log2()",
    ".log10()",
    ".log(",
    ".sin()",
    ".cos()",
    ".tan()",
    ".sin_cos()",
    ".tanh()",
    ".sinh()",
    ".cosh()",
    ".powf(",
    ".powi(",
    ".cbrt()",
    ".hypot(",
    ".atan",
    ".asin",
    ".acos",
    "mul_add",
    "libm::",
    "use_fast_math",
    "fmad=true",
    "ftz=true",
];

/// CUDA / C math library calls and fast-math, for kernels/ (our own functions carry a
/// prefix, e.g. `repro_exp`, so bare names are the library's).
const CUDA_FORBIDDEN: &[&str] = &[
    "__expf",
    "__logf",
    "__sinf",
    "__cosf",
    "__powf",
    "__fdividef",
    "__fma_rn",
    "__fmaf_rn",
    "expf(",
    "logf(",
    "log10f(",
    "sinf(",
    "cosf(",
    "tanhf(",
    "powf(",
    "exp(",
    "log(",
    "log10(",
    "sin(",
    "cos(",
    "tanh(",
    "pow(",
    "exp2(",
    "log2(",
    "expm1(",
    "log1p(",
    "sincos(",
    "fma(",
    "fmaf(",
    "use_fast_math",
    "fmad=true",
    "ftz=true",
];

/// The places where a forbidden name is the point: the fused multiply-add helpers, Rust's
/// `madd` (on `f64::mul_add`) and its CUDA mirror `fma_f64` (on the device intrinsic, and
/// the host C library's correctly rounded `fma`).
const ALLOWED: &[(&str, &str)] = &[
    ("core/src/math/madd.rs", "mul_add"),
    ("kernels/math/common.cuh", "__fma_rn"),
];

fn code_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            code_files(&p, out);
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("rs" | "cu" | "cuh" | "h" | "cpp")
        ) {
            out.push(p);
        }
    }
}

/// The code part of a line: without `//` comments (and not inside `#[cfg(test)]` modules,
/// which the scan skips by stopping at them).
fn code_part(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

#[test]
fn library_code_uses_only_basic_ieee_operations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("build.rs")];
    code_files(&root.join("src"), &mut files);
    code_files(&root.join("kernels"), &mut files);
    assert!(files.len() > 10, "the scan found too few files: {files:?}");
    let mut hits = vec![];
    for f in files.iter().filter(|f| f.exists()) {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                break; // unit tests may use oracles
            }
            let code = code_part(line);
            let is_rust = f.extension().is_some_and(|e| e == "rs");
            let forbidden = if is_rust {
                RUST_FORBIDDEN
            } else {
                CUDA_FORBIDDEN
            };
            for pat in forbidden {
                if ALLOWED
                    .iter()
                    .any(|(file, p)| p == pat && f.ends_with(file))
                {
                    continue;
                }
                // identifiers that merely end in a forbidden name (e.g. `fast_exp(`, `my_log(`)
                // are ours; only the bare names count
                let bare = code.match_indices(pat).any(|(at, _)| {
                    is_rust
                        || pat.starts_with("__")
                        || !code[..at]
                            .chars()
                            .next_back()
                            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                });
                if bare {
                    hits.push(format!(
                        "{}:{}: `{pat}` in: {}",
                        f.display(),
                        i + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "platform math / fast-math / a hidden FMA in library code:\n{}",
        hits.join("\n")
    );
}
