//! RMSNorm and LayerNorm against an independent oracle (MPFR: exact sums, Ziv's strategy,
//! an exact check at midpoints): every output of random and adversarial rows in f32,
//! bf16 and f16, through the default tiers and through the exact tier alone; special
//! rows; invariance (a row alone and inside a batch, 1 and 2 threads); bad input.
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::{DType, Device, Module, Tensor};
use candle_repro::norm::norm_with;
use half::{bf16, f16};
use mpfr_oracle::{BF16, F16, F32, Format};

mod common;
use common::bits;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        (0..4).map(|_| self.unit()).sum::<f64>() * 1.7 - 3.4
    }
}

fn tensor(v: &[f64], dt: DType, shape: &[usize]) -> Tensor {
    let dev = &Device::Cpu;
    match dt {
        DType::F32 => Tensor::from_vec(v.iter().map(|&x| x as f32).collect::<Vec<_>>(), shape, dev),
        DType::BF16 => Tensor::from_vec(
            v.iter().map(|&x| bf16::from_f64(x)).collect::<Vec<_>>(),
            shape,
            dev,
        ),
        _ => Tensor::from_vec(
            v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>(),
            shape,
            dev,
        ),
    }
    .unwrap()
}

/// Values as the dtype holds them (widened by `half`).
fn values(t: &Tensor) -> Vec<f64> {
    let t = t.flatten_all().unwrap();
    match t.dtype() {
        DType::F32 => t
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|&x| x as f64)
            .collect(),
        DType::BF16 => t
            .to_vec1::<bf16>()
            .unwrap()
            .iter()
            .map(|x| x.to_f64())
            .collect(),
        _ => t
            .to_vec1::<f16>()
            .unwrap()
            .iter()
            .map(|x| x.to_f64())
            .collect(),
    }
}

fn fmt(dt: DType) -> Format {
    match dt {
        DType::F32 => F32,
        DType::BF16 => BF16,
        _ => F16,
    }
}

fn encode(v: f64, dt: DType) -> u32 {
    match dt {
        DType::F32 => (v as f32).to_bits(),
        DType::BF16 => bf16::from_f64(v).to_bits() as u32,
        _ => f16::from_f64(v).to_bits() as u32,
    }
}

/// Every output of rows x (rows, n) against the oracle, default tiers and exact tier
/// alone; returns the outputs checked.
#[allow(clippy::too_many_arguments)]
fn check(
    label: &str,
    dt: DType,
    n: usize,
    xv: &[f64],
    wv: &[f64],
    bv: Option<&[f64]>,
    eps: f32,
    remove_mean: bool,
) -> usize {
    let rows = xv.len() / n;
    let x = tensor(xv, dt, &[rows, n]);
    let w = tensor(wv, dt, &[n]);
    let b = bv.map(|b| tensor(b, dt, &[n]));
    let (xe, we) = (values(&x), values(&w));
    let be = b.as_ref().map(values);
    let mut want = Vec::with_capacity(xv.len());
    for r in 0..rows {
        let y = mpfr_oracle::norm::norm_row(
            &xe[r * n..(r + 1) * n],
            &we,
            be.as_deref(),
            eps as f64,
            remove_mean,
            fmt(dt),
        );
        want.extend(y.iter().map(|&v| encode(v, dt)));
    }
    for exact_only in [false, true] {
        let got = bits(&norm_with(&x, &w, b.as_ref(), eps, remove_mean, exact_only).unwrap());
        let bad: Vec<usize> = (0..want.len()).filter(|&i| got[i] != want[i]).collect();
        assert!(
            bad.is_empty(),
            "{label} {dt:?} n={n} exact_only={exact_only}: {} of {} misrounded, first {}: got {:#x} want {:#x}",
            bad.len(),
            want.len(),
            bad[0],
            got[bad[0]],
            want[bad[0]]
        );
    }
    want.len()
}

const DTYPES: [DType; 3] = [DType::F32, DType::BF16, DType::F16];

#[test]
fn random_rows_every_length() {
    let mut rng = Rng(1);
    let mut total = 0;
    for dt in DTYPES {
        for n in [1usize, 2, 3, 7, 8, 64, 576, 1000] {
            let rows = (4096 / n).clamp(1, 16);
            let xv: Vec<f64> = (0..rows * n).map(|_| rng.normal()).collect();
            let wv: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
            let bv: Vec<f64> = (0..n).map(|_| rng.normal() * 0.1).collect();
            for remove_mean in [false, true] {
                if remove_mean && n == 1 {
                    continue; // V = eps only: covered below
                }
                total += check("random", dt, n, &xv, &wv, None, 1e-5, remove_mean);
                if remove_mean {
                    total += check("random+bias", dt, n, &xv, &wv, Some(&bv), 1e-6, true);
                }
            }
        }
    }
    println!("random rows: {total} outputs, 0 misrounded");
}

#[test]
fn a_long_row() {
    let mut rng = Rng(2);
    let n = 1 << 20;
    let xv: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    let wv: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    let bv: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    let mut total = check("long rms", DType::F32, n, &xv, &wv, None, 1e-5, false);
    total += check("long ln", DType::BF16, n, &xv, &wv, Some(&bv), 1e-5, true);
    println!("rows of 2^20: {total} outputs, 0 misrounded");
}

#[test]
fn adversarial_rows() {
    let mut rng = Rng(3);
    let mut total = 0;
    for dt in DTYPES {
        let (big, tiny) = match dt {
            DType::F16 => (2f64.powi(12), 2f64.powi(-12)),
            _ => (2f64.powi(60), 2f64.powi(-60)),
        };
        let n = 16;
        let mut rows: Vec<Vec<f64>> = vec![
            // One huge entry among tiny ones.
            (0..n)
                .map(|i| if i == 3 { big } else { rng.normal() * tiny })
                .collect(),
            // Huge dynamic range throughout.
            (0..n)
                .map(|i| rng.normal() * if i % 2 == 0 { big } else { tiny })
                .collect(),
            // Near-constant: deviations far below the mean (cancellation in x - mean).
            (0..n)
                .map(|i| 1000.0 + if i % 4 == 0 { 1.0 / 64.0 } else { 0.0 })
                .collect(),
            // Constant: every deviation exactly 0 (LayerNorm: y = b, signed zeros).
            vec![3.0; n],
            // Signed zeros.
            (0..n)
                .map(|i| if i % 2 == 0 { 0.0 } else { -0.0 })
                .collect(),
        ];
        rows.push((0..n).map(|_| rng.normal()).collect());
        let xv: Vec<f64> = rows.concat();
        let wv: Vec<f64> = (0..n)
            .map(|i| if i == 5 { -0.0 } else { rng.normal() })
            .collect();
        let bv: Vec<f64> = (0..n)
            .map(|i| if i % 3 == 0 { -0.0 } else { rng.normal() })
            .collect();
        for remove_mean in [false, true] {
            total += check("adversarial", dt, n, &xv, &wv, None, 1e-5, remove_mean);
        }
        total += check("adversarial+bias", dt, n, &xv, &wv, Some(&bv), 1e-5, true);
        // Near-constant rows whose mean is not a binary fraction (n = 3, 7): the computed
        // mean is off by an ulp, a large error relative to the deviations.
        for n in [3usize, 7] {
            let p = match dt {
                DType::F32 => 24,
                DType::BF16 => 8,
                _ => 11,
            };
            let dev = 2f64.powi(1 - p); // one ulp of 1
            let xv: Vec<f64> = (0..64 * n)
                .map(|i| {
                    1.0 + if i % n == i / n % n { dev } else { 0.0 }
                        + if i / n % 5 == 0 { dev } else { 0.0 }
                })
                .collect();
            let wv: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
            let bv: Vec<f64> = (0..n).map(|_| rng.normal() * 1e-3).collect();
            total += check("near-constant", dt, n, &xv, &wv, None, 0.0, true);
            total += check("near-constant+bias", dt, n, &xv, &wv, Some(&bv), 0.0, true);
        }
    }
    println!("adversarial rows: {total} outputs, 0 misrounded");
}

/// x = [-1, 1]: mean 0, V = 1, so y = +-w + b exactly; with b = half an ulp, y sits on
/// a rounding midpoint (ties to even), or just off it by w's last bit.
#[test]
fn outputs_on_rounding_midpoints() {
    let mut total = 0;
    for dt in DTYPES {
        let p = match dt {
            DType::F32 => 24,
            DType::BF16 => 8,
            _ => 11,
        };
        let half = 2f64.powi(-p);
        let xv = [-1.0, 1.0];
        for w in [1.0, 1.0 + 2.0 * half, 1.5, 1.0 + 4.0 * half] {
            for b in [half, -half, 3.0 * half] {
                total += check("midpoint", dt, 2, &xv, &[w, w], Some(&[b, b]), 0.0, true);
            }
        }
    }
    println!("midpoints: {total} outputs, 0 misrounded");
}

#[test]
fn special_rows_follow_ieee() {
    let x = Tensor::new(
        &[
            [1.0f32, f32::INFINITY, 2.0],
            [0.0, 0.0, 0.0],
            [1.0, f32::NAN, 1.0],
        ],
        &Device::Cpu,
    )
    .unwrap();
    let w = Tensor::new(&[1.0f32, 1.0, -1.0], &Device::Cpu).unwrap();
    // RMSNorm: x / sqrt(inf) = 0 (signed), inf / inf = NaN; 0 / sqrt(0) = NaN; NaN rows NaN.
    let y = candle_repro::nn::rms_norm(&x, &w, 0.0)
        .unwrap()
        .to_vec2::<f32>()
        .unwrap();
    assert_eq!(y[0][0].to_bits(), 0);
    assert!(y[0][1].is_nan() && y[0][1].to_bits() == 0x7FC0_0000);
    assert_eq!(y[0][2].to_bits(), 0x8000_0000);
    assert!(y[1].iter().all(|v| v.is_nan()));
    assert!(y[2].iter().all(|v| v.to_bits() == 0x7FC0_0000));
    // With eps > 0 an all-zero row is 0 (signed by w).
    let y = candle_repro::nn::rms_norm(&x, &w, 1e-5)
        .unwrap()
        .to_vec2::<f32>()
        .unwrap();
    assert_eq!(
        y[1].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        vec![0, 0, 0x8000_0000]
    );
}

#[test]
fn a_row_alone_equals_the_row_in_a_batch_on_any_thread_count() {
    let mut rng = Rng(4);
    let (rows, n) = (300, 576);
    for dt in DTYPES {
        let xv: Vec<f64> = (0..rows * n).map(|_| rng.normal()).collect();
        let wv: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let bv: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let x = tensor(&xv, dt, &[rows, n]);
        let (w, b) = (tensor(&wv, dt, &[n]), tensor(&bv, dt, &[n]));
        for ln in [false, true] {
            let run = |x: &Tensor| {
                if ln {
                    candle_repro::nn::layer_norm(x, &w, &b, 1e-5).unwrap()
                } else {
                    candle_repro::nn::rms_norm(x, &w, 1e-5).unwrap()
                }
            };
            let full = bits(&run(&x));
            for r in [0usize, 77, 299] {
                assert_eq!(
                    bits(&run(&x.narrow(0, r, 1).unwrap())),
                    full[r * n..(r + 1) * n]
                );
            }
            let one = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            assert_eq!(one.install(|| bits(&run(&x))), full);
            // 3-D and strided inputs.
            let x3 = x.reshape((3, 100, n)).unwrap();
            assert_eq!(bits(&run(&x3)), full);
            let xt = x.t().unwrap().contiguous().unwrap().t().unwrap();
            assert_eq!(bits(&run(&xt)), full);
        }
    }
}

#[test]
fn modules_and_bad_input() {
    let x = Tensor::new(&[[1.0f32, 2.0, 3.0]], &Device::Cpu).unwrap();
    let w = Tensor::new(&[1.0f32, 1.0, 1.0], &Device::Cpu).unwrap();
    let b = Tensor::new(&[0.5f32, 0.0, 0.0], &Device::Cpu).unwrap();
    let m = candle_repro::nn::RmsNorm::new(w.clone(), 1e-5);
    assert_eq!(
        bits(&m.forward(&x).unwrap()),
        bits(&candle_repro::nn::rms_norm(&x, &w, 1e-5).unwrap())
    );
    let l = candle_repro::nn::LayerNorm::new(w.clone(), b.clone(), 1e-5);
    assert_eq!(
        bits(&l.forward(&x).unwrap()),
        bits(&candle_repro::nn::layer_norm(&x, &w, &b, 1e-5).unwrap())
    );
    let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
    assert_eq!(
        candle_repro::nn::RmsNorm::load(3, 1e-5, vb.clone())
            .unwrap()
            .weight()
            .dims(),
        &[3]
    );
    assert!(
        candle_repro::nn::LayerNorm::load(3, 1e-5, vb)
            .unwrap()
            .bias()
            .is_some()
    );
    // Errors, not panics.
    let e = |r: candle_core::Result<Tensor>| r.unwrap_err().to_string();
    assert!(
        e(candle_repro::nn::rms_norm(
            &x,
            &Tensor::new(&[1.0f32, 1.0], &Device::Cpu).unwrap(),
            1e-5
        ))
        .contains("shape")
    );
    assert!(
        e(candle_repro::nn::rms_norm(
            &x,
            &w.to_dtype(DType::BF16).unwrap(),
            1e-5
        ))
        .to_lowercase()
        .contains("dtype")
    );
    assert!(e(candle_repro::nn::rms_norm(&x, &w, -1.0)).contains("eps"));
    assert!(e(candle_repro::nn::rms_norm(&x, &w, f32::NAN)).contains("eps"));
    let x64 = x.to_dtype(DType::F64).unwrap();
    assert!(
        e(candle_repro::nn::rms_norm(
            &x64,
            &w.to_dtype(DType::F64).unwrap(),
            1e-5
        ))
        .to_lowercase()
        .contains("unsupported")
    );
}

/// Golden hashes of fixed rows per dtype and norm, computed by this code once and kept: a
/// change of any output bit shows here.
#[test]
fn golden_hashes() {
    let golden: [(DType, u64, u64); 3] = [
        (DType::F32, 0x020b_1260_1582_2879, 0x7fa9_65cd_6f08_651e),
        (DType::BF16, 0x6fe3_e26e_fbe7_cd6c, 0xe203_981b_9e57_9400),
        (DType::F16, 0x49e2_9457_2585_0917, 0x27fb_df88_a65d_67ea),
    ];
    let mut rng = Rng(99);
    let (rows, n) = (64, 576);
    let xv: Vec<f64> = (0..rows * n).map(|_| rng.normal()).collect();
    let wv: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    let bv: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    let fnv = |b: &[u32]| {
        b.iter()
            .flat_map(|x| x.to_le_bytes())
            .fold(0xcbf29ce484222325u64, |h, byte| {
                (h ^ byte as u64).wrapping_mul(0x100000001b3)
            })
    };
    let got: Vec<(DType, u64, u64)> = golden
        .iter()
        .map(|&(dt, _, _)| {
            let (x, w, b) = (
                tensor(&xv, dt, &[rows, n]),
                tensor(&wv, dt, &[n]),
                tensor(&bv, dt, &[n]),
            );
            let h_rms = fnv(&bits(&candle_repro::nn::rms_norm(&x, &w, 1e-5).unwrap()));
            let h_ln = fnv(&bits(
                &candle_repro::nn::layer_norm(&x, &w, &b, 1e-5).unwrap(),
            ));
            (dt, h_rms, h_ln)
        })
        .collect();
    assert_eq!(got, golden, "output bits changed (got {got:x?})");
}
