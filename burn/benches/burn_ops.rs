//! The Burn op against the slice kernel (or the core's row function) it runs, on the same
//! values (issue 29's speed goal: the Flex path within 10% of the kernel, i.e. no copy and
//! no overhead beyond the output allocation that any op returning a new tensor pays). Both
//! run over rayon's threads in the same chunks; the kernel side allocates its output too.

use burn_tensor::{DType, Device, Tensor, TensorData};
use criterion::{Criterion, criterion_group, criterion_main};
use repro_core::buffer::{self, map_parallel};
use repro_core::norm::NormParams;
use repro_core::rope::apply::apply;
use repro_core::rope::{Geometry, RopeLayout};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let n = 1 << 22;
    let v: Vec<f32> = (0..n)
        .map(|i| ((i % 20_001) as f32 - 10_000.0) / 997.0)
        .collect();
    let device = Device::flex();
    let x = Tensor::<1>::from_data(TensorData::new(v.clone(), [n]), &device);
    for (name, kernel) in [
        (
            "exp",
            repro_core::math::exp_slice_uninit::<f32> as fn(&[f32], &mut [_]),
        ),
        ("tanh", repro_core::math::tanh_slice_uninit::<f32>),
    ] {
        let f = burn_repro::by_name::<1>(name).unwrap();
        let mut g = c.benchmark_group(format!("{name} f32 4M"));
        g.sample_size(20);
        g.bench_function("burn-repro on Flex", |b| {
            b.iter(|| black_box(f(black_box(x.clone())).unwrap()))
        });
        g.bench_function("slice kernel (repro-core)", |b| {
            b.iter(|| black_box(map_parallel(black_box(&v), kernel)))
        });
        g.finish();
    }

    // Rows: softmax over 4096 rows of 1024, RMSNorm over 1024 rows of 4096, against the
    // core's row functions on the same slices (each allocating its output).
    let rows = Tensor::<2>::from_data(TensorData::new(v.clone(), [4096, 1024]), &device);
    let mut g = c.benchmark_group("softmax f32 4096 x 1024");
    g.sample_size(20);
    g.bench_function("burn-repro on Flex", |b| {
        b.iter(|| black_box(burn_repro::softmax(black_box(rows.clone()), 1).unwrap()))
    });
    g.bench_function("slice rows (repro-core)", |b| {
        b.iter(|| black_box(softmax_slice(black_box(&v), 1024)))
    });
    g.finish();

    let rows = Tensor::<2>::from_data(TensorData::new(v.clone(), [1024, 4096]), &device);
    let w: Vec<f32> = (0..4096).map(|i| 1.0 + (i % 7) as f32 / 8.0).collect();
    let wt = Tensor::<1>::from_data(TensorData::new(w.clone(), [4096]), &device);
    let mut g = c.benchmark_group("rms_norm f32 1024 x 4096");
    g.sample_size(20);
    g.bench_function("burn-repro on Flex", |b| {
        b.iter(|| {
            black_box(burn_repro::rms_norm(black_box(rows.clone()), wt.clone(), 1e-6).unwrap())
        })
    });
    g.bench_function("slice rows (repro-core)", |b| {
        b.iter(|| black_box(rms_norm_slice(black_box(&v), &w)))
    });
    g.finish();

    // RoPE: (1, 32, 512, 128) against the core's rotation, with Llama 3.1's tables.
    let cfg = burn_repro::RopeConfig::llama31(128);
    let (cos, sin) = burn_repro::rope_tables(&cfg, 512, DType::F32, &device).unwrap();
    let (cv, sv) = (flat(&cos), flat(&sin));
    let n = 32 * 512 * 128;
    let xs = Tensor::<4>::from_data(TensorData::new(v[..n].to_vec(), [1, 32, 512, 128]), &device);
    let geometry = Geometry {
        layout: RopeLayout::Halves,
        b: 1,
        h: 32,
        t: 512,
        d: 128,
        cs_t: 512,
        batched: false,
    };
    let mut g = c.benchmark_group("rope f32 (1, 32, 512, 128)");
    g.sample_size(20);
    g.bench_function("burn-repro on Flex", |b| {
        b.iter(|| {
            black_box(burn_repro::rope(black_box(xs.clone()), cos.clone(), sin.clone()).unwrap())
        })
    });
    g.bench_function("slice rotation (repro-core)", |b| {
        b.iter(|| black_box(apply(&geometry, black_box(&v[..n]), &cv, &sv, 1.0)))
    });
    g.finish();

    // The matmul: x (m, 576) times a weight stored (1536, 576) and read transposed in place
    // (a model's linear layer), decode (m = 1, the GEMV path) and prefill (m = 128, the GEMM).
    let (k, n) = (576, 1536);
    let wv: Vec<f32> = v[..n * k].to_vec();
    let w = Tensor::<2>::from_data(TensorData::new(wv.clone(), [n, k]), &device).transpose();
    for m in [1, 128] {
        let xv: Vec<f32> = v[n * k..n * k + m * k].to_vec();
        let x = Tensor::<2>::from_data(TensorData::new(xv.clone(), [m, k]), &device);
        let mut g = c.benchmark_group(format!("matmul f32 {m} x {k} x {n}, w^T"));
        g.sample_size(20);
        g.bench_function("burn-repro on Flex", |b| {
            b.iter(|| black_box(burn_repro::matmul(black_box(x.clone()), w.clone()).unwrap()))
        });
        g.bench_function("slice product (repro-core)", |b| {
            b.iter(|| black_box(matmul_slice(black_box(&xv), &wv, (m, k, n))))
        });
        g.finish();
    }

    // The FFT over 256 rows of 1024 (the last dimension): the real transform (its output
    // split into two parts), and the complex one (its two parts interleaved first), against
    // the core's rows on an interleaved buffer, as candle-repro's op runs them.
    use repro_core::fft::kind::FftKind;
    use repro_core::fft::{Norm, Precision};
    let (rows, len) = (256, 1024);
    let re = Tensor::<2>::from_data(
        TensorData::new(v[..rows * len].to_vec(), [rows, len]),
        &device,
    );
    let im = Tensor::<2>::from_data(
        TensorData::new(v[rows * len..2 * rows * len].to_vec(), [rows, len]),
        &device,
    );
    let mut g = c.benchmark_group("rfft f32 256 x 1024");
    g.sample_size(20);
    g.bench_function("burn-repro on Flex", |b| {
        b.iter(|| black_box(burn_repro::rfft(black_box(re.clone()), 1, None).unwrap()))
    });
    g.bench_function("slice rows (repro-core)", |b| {
        b.iter(|| {
            black_box(fft_slice(
                FftKind::Rfft,
                len,
                black_box(&v[..rows * len]),
                &[rows, len],
            ))
        })
    });
    g.finish();
    let interleaved: Vec<f32> = v[..2 * rows * len].to_vec();
    let mut g = c.benchmark_group("cfft f32 256 x 1024");
    g.sample_size(20);
    g.bench_function("burn-repro on Flex", |b| {
        b.iter(|| black_box(burn_repro::cfft(black_box(re.clone()), im.clone(), 1, None).unwrap()))
    });
    g.bench_function("slice parts (repro-core)", |b| {
        b.iter(|| {
            black_box(
                repro_core::fft::rows::complex_parts(
                    FftKind::Fft,
                    None,
                    Norm::Backward,
                    Precision::F32,
                    rows,
                    len,
                    black_box(&v[..rows * len]),
                    Some(&v[rows * len..2 * rows * len]),
                )
                .unwrap(),
            )
        })
    });
    g.bench_function("slice rows (repro-core)", |b| {
        b.iter(|| {
            black_box(fft_slice(
                FftKind::Fft,
                len,
                black_box(&interleaved),
                &[rows, len, 2],
            ))
        })
    });
    g.finish();

    fn fft_slice(kind: FftKind, n: usize, x: &[f32], dims: &[usize]) -> Vec<f32> {
        repro_core::fft::rows::transform(kind, n, Norm::Backward, Precision::F32, x.into(), dims)
            .unwrap()
    }
}

/// The core's product of x (m, k) by w^T, w stored (n, k), as the adapters call it.
fn matmul_slice(x: &[f32], w: &[f32], (m, k, n): (usize, usize, usize)) -> Vec<f32> {
    use repro_core::matmul::{Problem, View};
    let a = View {
        data: x,
        base: 0,
        rs: k,
        cs: 1,
    };
    let b = View {
        data: w,
        base: 0,
        rs: 1,
        cs: k,
    };
    let p = Problem::new((m, k, n), vec![a], vec![b], None).unwrap();
    repro_core::matmul::matmul::<f32, f32>(&p)
}

/// A tensor's f32 values.
fn flat(t: &Tensor<2>) -> Vec<f32> {
    t.clone().into_data().as_slice::<f32>().unwrap().to_vec()
}

/// The core's softmax rows into a new vector, as the adapters call them.
fn softmax_slice(x: &[f32], n: usize) -> Vec<f32> {
    let mut out = buffer::uninit::<f32>(x.len());
    repro_core::softmax::softmax_rows(false, n, x, &mut out);
    // SAFETY: softmax_rows wrote every element.
    unsafe { buffer::assume_init(out) }
}

/// The core's RMSNorm rows into a new vector, as the adapters call them.
fn rms_norm_slice(x: &[f32], w: &[f32]) -> Vec<f32> {
    let mut out = buffer::uninit::<f32>(x.len());
    let p = NormParams {
        remove_mean: false,
        eps: 1e-6,
        exact_only: false,
    };
    repro_core::norm::norm_rows(x, w, None, p, &mut out);
    // SAFETY: norm_rows wrote every row.
    unsafe { buffer::assume_init(out) }
}

criterion_group!(benches, bench);
criterion_main!(benches);
