//! PTX lint (feature `cuda`; needs nvcc's `ptxas`, no GPU): every PTX module built from
//! `kernels/*/*.cu` must contain only IEEE-exact arithmetic, and must assemble for sm_80 and
//! sm_90.
//!
//! Rejected: any `.approx` or `.ftz` modifier, the approximate special-function
//! instructions (`ex2.`, `lg2.`, `sin.`, `cos.`, `rsqrt.`, `tanh.`), `rcp.approx`,
//! `sqrt.approx`, `div.full`, `mad`, and every `fma` but `fma.rn.f64`: the code fuses only
//! where it says so (`fma_f64`, Rust's `mul_add`, on doubles); any other fused operation in
//! the PTX would mean nvcc contracted something the Rust code rounds twice (the build
//! passes `--fmad=false`).
#![cfg(feature = "cuda")]

use candle_repro::UnaryFn;
use candle_repro::launch::PTX_MODULES;
use std::path::PathBuf;
use std::process::Command;

/// The opcode of a PTX instruction line (`@%p1 bra ...` gives `bra`), or None for
/// directives, labels, braces and blank lines.
fn opcode(line: &str) -> Option<&str> {
    let code = line.split("//").next().unwrap_or("").trim();
    let code = if code.starts_with('@') {
        code.split_once(char::is_whitespace)?.1.trim_start()
    } else {
        code
    };
    let op = code.split(|c: char| c.is_whitespace() || c == ';').next()?;
    if op.is_empty() || op.starts_with('.') || op.starts_with('{') || op.starts_with('}') {
        return None;
    }
    if op.ends_with(':') || op.starts_with('$') {
        return None; // a label
    }
    Some(op)
}

/// Why this instruction is forbidden, or None.
fn forbidden(op: &str) -> Option<&'static str> {
    const PREFIXES: &[(&str, &str)] = &[
        ("ex2.", "approximate 2^x"),
        ("lg2.", "approximate log2"),
        ("sin.", "approximate sine"),
        ("cos.", "approximate cosine"),
        ("tanh.", "approximate tanh"),
        ("rsqrt.", "approximate reciprocal square root"),
        ("rcp.approx", "approximate reciprocal"),
        ("sqrt.approx", "approximate square root"),
        ("div.full", "approximate division"),
        ("div.approx", "approximate division"),
        (
            "fma.",
            "fused multiply-add other than fma.rn.f64 (nothing else is fused)",
        ),
    ];
    if op == "fma.rn.f64" {
        return None; // the written-out fma_f64 (Rust's mul_add)
    }
    if op.contains(".approx") {
        return Some("approximate instruction");
    }
    if op.contains(".ftz") {
        return Some("flush-to-zero");
    }
    if op.starts_with("mad.") && (op.contains(".f32") || op.contains(".f64") || op.contains(".f16"))
    {
        return Some("floating-point multiply-add");
    }
    PREFIXES
        .iter()
        .find(|(p, _)| op.starts_with(p))
        .map(|(_, why)| *why)
}

#[test]
fn ptx_has_no_approximate_or_ftz_instructions() {
    assert!(!PTX_MODULES.is_empty());
    let mut bad = Vec::new();
    let mut instructions = 0usize;
    for (module, ptx) in PTX_MODULES {
        for (i, line) in ptx.lines().enumerate() {
            let Some(op) = opcode(line) else { continue };
            instructions += 1;
            // Belt and braces: the modifiers are rejected anywhere on an instruction line.
            let why = forbidden(op).or_else(|| {
                (line.contains(".approx") || line.contains(".ftz")).then_some("approx/ftz")
            });
            if let Some(why) = why {
                bad.push(format!("{module}.ptx:{}: {} ({why})", i + 1, line.trim()));
            }
        }
    }
    println!(
        "ptx lint: {} modules, {instructions} instructions, {} forbidden",
        PTX_MODULES.len(),
        bad.len()
    );
    assert!(
        bad.is_empty(),
        "forbidden instructions in the PTX:\n{}",
        bad.join("\n")
    );
}

#[test]
fn lint_catches_forbidden_instructions() {
    for line in [
        "\tex2.approx.ftz.f32 %f2, %f1;",
        "\tlg2.approx.f32 %f2, %f1;",
        "\tsin.approx.f32 %f2, %f1;",
        "\tcos.approx.f32 %f2, %f1;",
        "\trcp.approx.ftz.f64 %fd2, %fd1;",
        "\tsqrt.approx.f32 %f2, %f1;",
        "\tdiv.full.f32 %f3, %f1, %f2;",
        "\t@%p1 mul.ftz.f32 %f3, %f1, %f2;",
        "\tfma.rn.f32 %f4, %f1, %f2, %f3;",
        "\tfma.rn.ftz.f32 %f4, %f1, %f2, %f3;",
        "\tfma.rz.f64 %fd4, %fd1, %fd2, %fd3;",
        "\tmad.rn.f32 %f4, %f1, %f2, %f3;",
    ] {
        let op = opcode(line).expect(line);
        assert!(forbidden(op).is_some(), "{line} passed the lint");
    }
    for line in [
        "\tdiv.rn.f64 %fd3, %fd1, %fd2;",
        "\tsqrt.rn.f64 %fd2, %fd1;",
        "\tmul.rn.f64 %fd3, %fd1, %fd2;",
        "\tfma.rn.f64 %fd4, %fd1, %fd2, %fd3;",
        "\tcvt.rn.f32.f64 %f1, %fd1;",
        "\tmad.lo.s64 %rd4, %rd1, %rd2, %rd3;",
        "\t@%p1 bra $L__BB0_2;",
        "$L__BB0_2:",
        "\t.reg .f64 %fd<20>;",
        "// sin.approx in a comment",
    ] {
        assert!(
            opcode(line).and_then(forbidden).is_none(),
            "{line} was rejected"
        );
    }
}

#[test]
fn every_kernel_is_in_the_ptx() {
    let (_, ptx) = PTX_MODULES
        .iter()
        .find(|(m, _)| *m == "elementwise")
        .expect("elementwise module");
    for f in UnaryFn::ALL {
        let name = f.name();
        for suffix in ["f32", "bf16", "f16"] {
            let entry = format!(".entry repro_{name}_{suffix}(");
            assert!(ptx.contains(&entry), "missing kernel {entry}");
        }
    }
}

#[test]
fn every_fft_kernel_is_in_the_ptx() {
    let (_, ptx) = PTX_MODULES
        .iter()
        .find(|(m, _)| *m == "fft")
        .expect("fft module");
    for name in candle_repro::fft::cuda::FFT_KERNELS {
        let entry = format!(".entry {name}(");
        assert!(ptx.contains(&entry), "missing kernel {entry}");
    }
    // The tensor-core Ozaki variant is compiled (and assembled by the test below) even
    // while the launcher does not select it.
    assert!(ptx.contains("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
}

#[test]
fn the_matmul_integer_tier_is_in_the_ptx() {
    let (_, ptx) = PTX_MODULES
        .iter()
        .find(|(m, _)| *m == "matmul")
        .expect("matmul module");
    for dt in ["f32", "bf16", "f16"] {
        for entry in [
            format!(".entry repro_matmul_slices_{dt}("),
            format!(".entry repro_matmul_ozaki_{dt}_{dt}("),
        ] {
            assert!(ptx.contains(&entry), "missing kernel {entry}");
        }
    }
    assert!(ptx.contains("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"));
}

/// `ptxas` next to the nvcc the build used: `$CUDA_HOME/bin`, `$CUDA_PATH/bin`, or PATH.
fn ptxas() -> PathBuf {
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            let p = PathBuf::from(home).join("bin").join("ptxas");
            if p.exists() {
                return p;
            }
        }
    }
    PathBuf::from("ptxas")
}

#[test]
fn ptx_assembles_for_sm80_and_sm90() {
    let dir = std::env::temp_dir().join(format!("candle-repro-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (module, ptx) in PTX_MODULES {
        let src = dir.join(format!("{module}.ptx"));
        std::fs::write(&src, ptx).unwrap();
        // Both architectures at once: ptxas is single-threaded, and this test is the
        // longest step of CI (about 7 minutes run one after the other on 2 cores).
        let runs: Vec<_> = ["sm_80", "sm_90"]
            .into_iter()
            .map(|arch| {
                let out = dir.join(format!("{module}.{arch}.cubin"));
                let child = Command::new(ptxas())
                    .arg(format!("-arch={arch}"))
                    .arg("-v")
                    .arg(&src)
                    .arg("-o")
                    .arg(&out)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap_or_else(|e| {
                        panic!("cannot run ptxas ({e}); source .venv-cuda/cuda-env.sh")
                    });
                (arch, child)
            })
            .collect();
        for (arch, child) in runs {
            let res = child.wait_with_output().unwrap();
            let log = String::from_utf8_lossy(&res.stderr);
            assert!(
                res.status.success(),
                "ptxas -arch={arch} failed on {module}.ptx:\n{log}"
            );
            // Resource usage per kernel, for the record (spills hurt throughput).
            let max_regs = log
                .lines()
                .filter_map(|l| l.split("Used ").nth(1))
                .filter_map(|l| l.split(' ').next()?.parse::<u32>().ok())
                .max()
                .unwrap_or(0);
            let spills = log
                .lines()
                .filter(|l| l.contains("spill stores") && !l.contains(" 0 bytes spill stores"))
                .count();
            println!(
                "ptxas {arch} {module}: ok, max {max_regs} registers per thread, {spills} kernels with spills"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
