//! The norm kernel's device code (`kernels/norm.cu` rows as blocks of T threads, through
//! `kernels/norm/row.cuh`), compiled as host C++, against the CPU norms bit for bit:
//! random, adversarial and special rows, RMSNorm and LayerNorm with and without bias,
//! f32, bf16 and f16, the exact tier alone, and 1, 32 and 256 threads per block. No CUDA
//! needed.
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

use candle_core::{DType, Device, Tensor};
use candle_repro::norm::norm_with;
use half::{bf16, f16};
use kernel_hostcheck::norm as dev;

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
    fn value(&mut self, specials: bool) -> f64 {
        match self.next() % if specials { 40 } else { 32 } {
            0 => 0.0,
            1 => -0.0,
            2 => 1e30,
            3 => -1e-30,
            32 => f64::NAN,
            33 => f64::INFINITY,
            34 => f64::NEG_INFINITY,
            _ => (self.unit() - 0.5) * 4.0,
        }
    }
}

fn rows_bits(
    dt: DType,
    n: usize,
    x: &[f64],
    w: &[f64],
    b: Option<&[f64]>,
    remove_mean: bool,
    eps: f32,
) -> usize {
    let cpu = &Device::Cpu;
    let rows = x.len() / n;
    let xt = Tensor::from_vec(x.to_vec(), (rows, n), cpu)
        .unwrap()
        .to_dtype(dt)
        .unwrap();
    let wt = Tensor::from_vec(w.to_vec(), n, cpu)
        .unwrap()
        .to_dtype(dt)
        .unwrap();
    let bt = b.map(|b| {
        Tensor::from_vec(b.to_vec(), n, cpu)
            .unwrap()
            .to_dtype(dt)
            .unwrap()
    });
    for exact_only in [false, true] {
        let want = norm_with(&xt, &wt, bt.as_ref(), eps, remove_mean, exact_only).unwrap();
        let want = want.flatten_all().unwrap();
        for threads in [1u32, 32, 256] {
            let (got, want): (Vec<u32>, Vec<u32>) = match dt {
                DType::F32 => {
                    let f = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                    let bb = bt.as_ref().map(f);
                    let g = dev::f32(
                        n,
                        &f(&xt),
                        &f(&wt),
                        bb.as_deref(),
                        remove_mean,
                        eps,
                        exact_only,
                        threads,
                    );
                    (
                        g.iter().map(|v| v.to_bits()).collect(),
                        want.to_vec1::<f32>()
                            .unwrap()
                            .iter()
                            .map(|v| v.to_bits())
                            .collect(),
                    )
                }
                DType::BF16 => {
                    let f = |t: &Tensor| -> Vec<u16> {
                        t.flatten_all()
                            .unwrap()
                            .to_vec1::<bf16>()
                            .unwrap()
                            .iter()
                            .map(|v| v.to_bits())
                            .collect()
                    };
                    let bb = bt.as_ref().map(f);
                    let g = dev::bf16(
                        n,
                        &f(&xt),
                        &f(&wt),
                        bb.as_deref(),
                        remove_mean,
                        eps,
                        exact_only,
                        threads,
                    );
                    (
                        g.iter().map(|&v| v as u32).collect(),
                        f(&want).iter().map(|&v| v as u32).collect(),
                    )
                }
                _ => {
                    let f = |t: &Tensor| -> Vec<u16> {
                        t.flatten_all()
                            .unwrap()
                            .to_vec1::<f16>()
                            .unwrap()
                            .iter()
                            .map(|v| v.to_bits())
                            .collect()
                    };
                    let bb = bt.as_ref().map(f);
                    let g = dev::f16(
                        n,
                        &f(&xt),
                        &f(&wt),
                        bb.as_deref(),
                        remove_mean,
                        eps,
                        exact_only,
                        threads,
                    );
                    (
                        g.iter().map(|&v| v as u32).collect(),
                        f(&want).iter().map(|&v| v as u32).collect(),
                    )
                }
            };
            let bad: Vec<usize> = (0..want.len()).filter(|&i| got[i] != want[i]).collect();
            assert!(
                bad.is_empty(),
                "{dt:?} n={n} mean={remove_mean} exact_only={exact_only} T={threads}: {} differ, first {}: device {:#x} CPU {:#x}",
                bad.len(),
                bad[0],
                got[bad[0]],
                want[bad[0]]
            );
        }
    }
    x.len()
}

#[test]
fn device_norms_equal_cpu_norms() {
    let mut rng = Rng(1);
    let mut total = 0;
    for dt in [DType::F32, DType::BF16, DType::F16] {
        for n in [1usize, 2, 5, 64, 576, 1000] {
            for specials in [false, true] {
                let rows = 6;
                let x: Vec<f64> = (0..rows * n).map(|_| rng.value(specials)).collect();
                let w: Vec<f64> = (0..n).map(|_| rng.value(false)).collect();
                let b: Vec<f64> = (0..n).map(|_| rng.value(specials)).collect();
                for mean in [false, true] {
                    total += rows_bits(dt, n, &x, &w, None, mean, 1e-5);
                    total += rows_bits(dt, n, &x, &w, Some(&b), mean, 0.0);
                }
            }
        }
        // Constant and near-constant rows (V = 0 with eps = 0; the mean an ulp off).
        let x: Vec<f64> = [
            vec![2.0; 7],
            (0..7)
                .map(|i| 1.0 + if i == 0 { 2f64.powi(-20) } else { 0.0 })
                .collect(),
        ]
        .concat();
        let w: Vec<f64> = (0..7).map(|_| rng.value(false)).collect();
        total += rows_bits(dt, 7, &x, &w, None, true, 0.0);
        total += rows_bits(dt, 7, &x, &w, Some(&w), true, 0.0);
    }
    println!(
        "device norm code vs CPU: {total} outputs x 2 tier settings x 3 block sizes, 0 differences"
    );
}
