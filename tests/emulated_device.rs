//! Every converted kernel family on the emulated CUDA device (`tools/cuda-emu`): the
//! crate's own launch code (`candle_repro::launch`, the `launch` functions of each family's
//! device half) computes the plans as for a GPU, the emulator runs the `kernels/*/*.cu` text
//! compiled as host C++ with real barriers, warp collectives and guarded buffers, and every
//! output is compared bit for bit with the CPU op. Sizes are small but cover several blocks,
//! grid-stride tails, rows longer and shorter than a block, and strided inputs (gathered by
//! the 64-bit gather kernel first). No CUDA needed.
// Needs the workspace tools; skipped in the packaged crate (see build.rs).
#![cfg(repro_workspace)]

mod common;

use candle_core::{DType, Device as Cpu, IndexOp, Tensor};
use candle_repro::UnaryFn;
use candle_repro::launch::{self, Device, KernelArg, Slot};
use common::bits;
use common::emu::{Emu, download, upload};

const FLOATS: [DType; 3] = [DType::F32, DType::BF16, DType::F16];

/// Deterministic test values: a mix of ordinary magnitudes, random bit patterns (NaNs with
/// payloads, infinities, subnormals included) and the special values.
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let specials = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE / 8.0,
        -1e-40,
        88.7,
        -104.0,
    ];
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            match i % 11 {
                0 => f32::from_bits(s as u32),
                1 => specials[(s >> 40) as usize % specials.len()],
                _ => ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32 * scale,
            }
        })
        .collect()
}

fn tensor(rows: usize, cols: usize, seed: u64, scale: f32, dtype: DType) -> Tensor {
    Tensor::from_vec(values(rows * cols, seed, scale), (rows, cols), &Cpu::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap()
}

/// The views the tests run on: contiguous, transposed (strided) and narrowed (a start
/// offset, contiguous rows).
fn views(t: &Tensor) -> Vec<(&'static str, Tensor)> {
    let (r, c) = t.dims2().unwrap();
    let mut v = vec![
        ("contiguous", t.clone()),
        ("transposed", t.t().unwrap()),
        ("narrowed", t.i((1..r, ..)).unwrap()),
    ];
    if c > 2 {
        v.push(("strided window", t.i((1..r, 2..c)).unwrap()));
    }
    v
}

fn same_bits(what: &str, got: &Tensor, want: &Tensor) {
    let (g, w) = (bits(got), bits(want));
    assert_eq!(g.len(), w.len(), "{what}: lengths");
    let diff = g.iter().zip(&w).filter(|(a, b)| a != b).count();
    if let Some(i) = g.iter().zip(&w).position(|(a, b)| a != b) {
        panic!(
            "{what}: {diff} of {} outputs differ; first at {i}: device {:#x}, CPU {:#x}",
            g.len(),
            g[i],
            w[i]
        );
    }
}

fn run_unary(f: UnaryFn, x: &Tensor) -> Tensor {
    let (buf, layout) = upload(x);
    let out = candle_repro::elementwise::cuda::unary(&Emu, f, &buf, &layout).unwrap();
    download(&out, x.dims())
}

#[test]
fn elementwise_functions_match_the_cpu() {
    for f in UnaryFn::ALL {
        let name = f.name();
        for dtype in FLOATS {
            let t = tensor(37, 29, name.len() as u64, 30.0, dtype);
            for (view, x) in views(&t) {
                let got = run_unary(f, &x);
                same_bits(
                    &format!("{name} {dtype:?} {view}"),
                    &got,
                    &candle_repro::unary(&x, f).unwrap(),
                );
            }
        }
    }
}

#[test]
fn softplus_with_matches_the_cpu() {
    for dtype in FLOATS {
        let t = tensor(19, 23, 7, 40.0, dtype);
        for (beta, threshold) in [(1.0f32, 20.0f32), (2.0, 20.0), (0.5, 3.0)] {
            for (view, x) in views(&t) {
                let (buf, layout) = upload(&x);
                let out = candle_repro::elementwise::cuda::softplus_with(
                    &Emu, beta, threshold, &buf, &layout,
                )
                .unwrap();
                let want = candle_repro::softplus_with(&x, beta as f64, threshold as f64).unwrap();
                let what = format!("softplus_with({beta}, {threshold}) {dtype:?} {view}");
                same_bits(&what, &download(&out, x.dims()), &want);
            }
        }
    }
}

#[test]
fn elementwise_backward_matches_the_cpu() {
    for f in UnaryFn::ALL {
        let name = f.name();
        for dtype in FLOATS {
            let x = tensor(31, 27, 40 + name.len() as u64, 30.0, dtype);
            let g = tensor(31, 27, 3, 4.0, dtype);
            for ((view, xv), (_, gv)) in views(&x).into_iter().zip(views(&g)) {
                let (xb, xl) = upload(&xv);
                let (gb, gl) = upload(&gv);
                let out = candle_repro::elementwise::cuda::unary_backward(
                    &Emu,
                    f,
                    (&xb, &xl),
                    (&gb, &gl),
                )
                .unwrap();
                let want = candle_repro::unary_bwd(&xv, &gv, f).unwrap();
                same_bits(
                    &format!("{name} backward {dtype:?} {view}"),
                    &download(&out, xv.dims()),
                    &want,
                );
            }
        }
    }
    for dtype in FLOATS {
        let x = tensor(19, 23, 7, 40.0, dtype);
        let g = tensor(19, 23, 8, 4.0, dtype);
        for (beta, threshold) in [(1.0f32, 20.0f32), (2.0, 20.0), (0.5, 3.0)] {
            for ((view, xv), (_, gv)) in views(&x).into_iter().zip(views(&g)) {
                let (xb, xl) = upload(&xv);
                let (gb, gl) = upload(&gv);
                let out = candle_repro::elementwise::cuda::softplus_with_backward(
                    &Emu,
                    beta,
                    threshold,
                    (&xb, &xl),
                    (&gb, &gl),
                )
                .unwrap();
                let want = candle_repro::softplus_with_bwd(&xv, &gv, beta as f64, threshold as f64)
                    .unwrap();
                let what = format!("softplus_with({beta}, {threshold}) backward {dtype:?} {view}");
                same_bits(&what, &download(&out, xv.dims()), &want);
            }
        }
    }
}

#[path = "data/grad_log10_hard.rs"]
mod grad_hard;

/// log10's backward kernel on the pairs where one ulp of LN10 or of x * LN10 shows
/// (`tools/grad_hard_inputs.py`): the CPU's bits, which are numpy's (tests/elementwise_grad.rs).
#[test]
fn log10_backward_on_its_hardest_inputs_matches_the_cpu() {
    let pairs = grad_hard::GRAD_LOG10_HARD;
    let col = |k: usize| -> Tensor {
        let v: Vec<f32> = pairs
            .iter()
            .map(|p| f32::from_bits([p.0, p.1][k]))
            .collect();
        Tensor::from_vec(v, pairs.len(), &Cpu::Cpu).unwrap()
    };
    let (x, g) = (col(0), col(1));
    let (xb, xl) = upload(&x);
    let (gb, gl) = upload(&g);
    let out = candle_repro::elementwise::cuda::unary_backward(
        &Emu,
        UnaryFn::Log10,
        (&xb, &xl),
        (&gb, &gl),
    )
    .unwrap();
    let want = candle_repro::unary_bwd(&x, &g, UnaryFn::Log10).unwrap();
    same_bits(
        "log10 backward, hardest pairs",
        &download(&out, x.dims()),
        &want,
    );
}

#[test]
fn add_matches_the_cpu() {
    for dtype in FLOATS {
        let a = tensor(33, 41, 1, 1e3, dtype);
        let b = tensor(33, 41, 2, 1e3, dtype);
        for ((view, x), (_, y)) in views(&a).into_iter().zip(views(&b)) {
            let (xb, xl) = upload(&x);
            let (yb, yl) = upload(&y);
            let out = candle_repro::arith::cuda::add(&Emu, (&xb, &xl), (&yb, &yl)).unwrap();
            let want = candle_repro::add(&x, &y).unwrap();
            same_bits(
                &format!("add {dtype:?} {view}"),
                &download(&out, x.dims()),
                &want,
            );
        }
    }
}

/// Rows of `n` with special rows among them: all -inf, +inf entries, NaN, huge spreads.
fn softmax_input(rows: usize, n: usize, dtype: DType) -> Tensor {
    let mut v = values(rows * n, n as u64, 12.0);
    for (r, row) in v.chunks_mut(n).enumerate() {
        for x in row.iter_mut() {
            if x.is_nan() && r % 3 != 0 {
                *x = 1.5; // NaN rows only where wanted
            }
        }
        match r % 6 {
            1 => row.iter_mut().for_each(|x| *x = f32::NEG_INFINITY),
            2 => row[n / 2] = f32::INFINITY,
            4 => row[0] = 80.0,
            _ => {}
        }
    }
    Tensor::from_vec(v, (rows, n), &Cpu::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap()
}

#[test]
fn softmax_and_log_softmax_match_the_cpu() {
    // Rows shorter than a block (idle threads), longer (several elements per thread).
    for (rows, n) in [(12, 7), (7, 300), (3, 1000)] {
        for dtype in FLOATS {
            let t = softmax_input(rows, n, dtype);
            for (view, x) in views(&t) {
                for log in [false, true] {
                    let (buf, layout) = upload(&x);
                    let out =
                        candle_repro::softmax::cuda::softmax_fwd(&Emu, log, &buf, &layout).unwrap();
                    let want = if log {
                        candle_repro::log_softmax_last_dim(&x).unwrap()
                    } else {
                        candle_repro::softmax_last_dim(&x).unwrap()
                    };
                    let what = format!("softmax log={log} {rows}x{n} {dtype:?} {view}");
                    same_bits(&what, &download(&out, x.dims()), &want);
                }
            }
        }
    }
}

/// The CPU backward pass (the op's own row function) on the logical elements.
fn cpu_softmax_bwd(log: bool, y: &Tensor, g: &Tensor) -> Tensor {
    fn apply<T: candle_repro::math::Format + candle_core::WithDType + Default>(
        log: bool,
        y: &Tensor,
        g: &Tensor,
    ) -> Tensor {
        let n = *y.dims().last().unwrap();
        let yv = y.flatten_all().unwrap().to_vec1::<T>().unwrap();
        let gv = g.flatten_all().unwrap().to_vec1::<T>().unwrap();
        let out = candle_repro::softmax::softmax_bwd_slice(log, n, &yv, &gv);
        Tensor::from_vec(out, y.dims(), &Cpu::Cpu).unwrap()
    }
    match y.dtype() {
        DType::F32 => apply::<f32>(log, y, g),
        DType::BF16 => apply::<half::bf16>(log, y, g),
        _ => apply::<half::f16>(log, y, g),
    }
}

#[test]
fn softmax_backward_matches_the_cpu() {
    for (rows, n) in [(9, 5), (5, 300)] {
        for dtype in FLOATS {
            let x = tensor(rows, n, 3, 6.0, DType::F32)
                .clamp(-50f32, 50f32)
                .unwrap();
            let g = tensor(rows, n, 4, 2.0, DType::F32)
                .clamp(-4f32, 4f32)
                .unwrap();
            let g = g.to_dtype(dtype).unwrap();
            for log in [false, true] {
                let x = x.to_dtype(dtype).unwrap();
                let y = if log {
                    candle_repro::log_softmax_last_dim(&x).unwrap()
                } else {
                    candle_repro::softmax_last_dim(&x).unwrap()
                };
                for ((view, yv), (_, gv)) in views(&y).into_iter().zip(views(&g)) {
                    let (yb, yl) = upload(&yv);
                    let (gb, gl) = upload(&gv);
                    let out =
                        candle_repro::softmax::cuda::softmax_bwd(&Emu, log, (&yb, &yl), (&gb, &gl))
                            .unwrap();
                    let what = format!("softmax-bwd log={log} {rows}x{n} {dtype:?} {view}");
                    same_bits(
                        &what,
                        &download(&out, yv.dims()),
                        &cpu_softmax_bwd(log, &yv, &gv),
                    );
                }
            }
        }
    }
}

/// Rows for the block-size test: mostly uniform in [-spread, spread], with a large value and
/// a huge negative one every 97 entries.
fn spread_rows(seed: u64, rows: usize, n: usize, spread: f32) -> Vec<f32> {
    let mut s = seed;
    (0..rows * n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 40) as f32 / (1u64 << 24) as f32;
            match i % 97 {
                0 => 3.0,
                1 => -1e30,
                _ => (u * 2.0 - 1.0) * spread,
            }
        })
        .collect()
}

/// The softmax kernels' bits do not depend on how a row is divided among a block's threads:
/// the real plans with their block size replaced (256 as planned, 32, 1), on random rows
/// long enough for several exact-sum flushes per thread (2048 terms each) and on the
/// special rows, forward and both backward passes (on the forward output and on x itself:
/// arbitrary y, huge and non-finite values included), against the CPU.
#[test]
fn softmax_bits_do_not_depend_on_the_block_size() {
    use candle_repro::softmax::cuda::{softmax_bwd_plan, softmax_fwd_plan};
    let inf = f32::INFINITY;
    let ninf = f32::NEG_INFINITY;
    let specials: Vec<Vec<f32>> = vec![
        vec![7.0],
        vec![inf],
        vec![ninf],
        vec![ninf; 5],
        vec![1.0, f32::NAN, 3.0],
        vec![inf, f32::NAN],
        vec![inf, 0.0, inf, ninf],
        vec![inf, inf, inf],
        vec![ninf, 2.0],
        vec![0.0, -100.0, -745.5, -1e38],
        vec![3.0e38, -3.0e38, 3.0e38],
        vec![1e-45, -1e-45, 0.0, -0.0],
    ];
    // (rows, n, x, g): random rows (5000 and 100 000 long: flushes per thread at 1 and 32
    // threads), then each special row with another special row as its gradient.
    let mut cases = Vec::new();
    for (i, &(r, n, spread)) in [
        (30usize, 1usize, 5.0f32),
        (20, 33, 20.0),
        (6, 1000, 10.0),
        (2, 5000, 3.0),
        (1, 100_000, 30.0),
    ]
    .iter()
    .enumerate()
    {
        let x = spread_rows(0xABCD + i as u64, r, n, spread);
        let g = spread_rows(0x1234 + i as u64, r, n, 1.0 + i as f32);
        cases.push((r, n, x, g));
    }
    for (i, x) in specials.iter().enumerate() {
        let other = &specials[(i + 5) % specials.len()];
        let g = (0..x.len()).map(|j| other[(j + 1) % other.len()]).collect();
        cases.push((1, x.len(), x.clone(), g));
    }
    let mut launches = 0;
    for (rows, n, x, g) in &cases {
        let (rows, n) = (*rows, *n);
        for dtype in FLOATS {
            let to = |v: &[f32]| {
                Tensor::from_vec(v.to_vec(), (rows, n), &Cpu::Cpu)
                    .unwrap()
                    .to_dtype(dtype)
                    .unwrap()
            };
            let (x, g) = (to(x), to(g));
            for log in [false, true] {
                let y = if log {
                    candle_repro::log_softmax_last_dim(&x).unwrap()
                } else {
                    candle_repro::softmax_last_dim(&x).unwrap()
                };
                let (xb, _) = upload(&x);
                let (yb, _) = upload(&y);
                let (gb, _) = upload(&g);
                for threads in [256u32, 32, 1] {
                    let what = format!("log={log} {rows}x{n} {dtype:?} block={threads}");
                    let mut plan = softmax_fwd_plan(log, dtype, rows, n, 0).unwrap();
                    plan.block = (threads, 1, 1);
                    let mut out = Emu.alloc(dtype, rows * n).unwrap();
                    Emu.launch(&plan, &mut [Slot::In(&xb), Slot::Out(&mut out)])
                        .unwrap();
                    same_bits(&format!("fwd {what}"), &download(&out, (rows, n)), &y);
                    for (yname, yt, ybuf) in [("y", &y, &yb), ("y = x", &x, &xb)] {
                        let mut plan = softmax_bwd_plan(log, dtype, rows, n, 0, 0).unwrap();
                        plan.block = (threads, 1, 1);
                        let mut out = Emu.alloc(dtype, rows * n).unwrap();
                        Emu.launch(
                            &plan,
                            &mut [Slot::In(ybuf), Slot::In(&gb), Slot::Out(&mut out)],
                        )
                        .unwrap();
                        same_bits(
                            &format!("bwd({yname}) {what}"),
                            &download(&out, (rows, n)),
                            &cpu_softmax_bwd(log, yt, &g),
                        );
                    }
                    launches += 3;
                }
            }
        }
    }
    println!(
        "{launches} launches on {} row sets: 0 differing bits",
        cases.len()
    );
}

/// Row values for the norm block-size test: ordinary, zeros, huge and tiny, and (with
/// `specials`) NaN and infinities.
fn norm_value(rng: &mut Lcg, specials: bool) -> f32 {
    match rng.next() % if specials { 40 } else { 32 } {
        0 => 0.0,
        1 => -0.0,
        2 => 1e30,
        3 => -1e-30,
        32 => f32::NAN,
        33 => f32::INFINITY,
        34 => f32::NEG_INFINITY,
        _ => ((rng.unit() - 0.5) * 4.0) as f32,
    }
}

/// The norm kernel's bits do not depend on how a row is divided among a block's threads:
/// the real plan with 256 (as planned), 32 and 1 threads per block, on random, adversarial
/// and special rows, RMSNorm and LayerNorm with and without bias, eps 1e-5 and 0, the
/// exact tier alone or not, constant and near-constant rows (variance 0 with eps 0).
#[test]
fn norms_do_not_depend_on_the_block_size() {
    use candle_repro::norm::{cuda::norm_plan, norm_with};
    let mut rng = Lcg(1);
    let mut launches = 0;
    let mut run =
        |dt: DType, n: usize, x: &[f32], w: &[f32], b: Option<&[f32]>, mean: bool, eps| {
            let rows = x.len() / n;
            let to = |v: &[f32], shape: &[usize]| {
                Tensor::from_vec(v.to_vec(), shape, &Cpu::Cpu)
                    .unwrap()
                    .to_dtype(dt)
                    .unwrap()
            };
            let (xt, wt) = (to(x, &[rows, n]), to(w, &[n]));
            let bt = b.map(|b| to(b, &[n]));
            let ((xb, _), (wb, _)) = (upload(&xt), upload(&wt));
            let bu = bt.as_ref().map(upload);
            for exact_only in [false, true] {
                let want = norm_with(&xt, &wt, bt.as_ref(), eps, mean, exact_only).unwrap();
                for threads in [256u32, 32, 1] {
                    let b0 = bu.as_ref().map(|_| 0);
                    let mut plan =
                        norm_plan(dt, rows, n, (0, 0, b0), mean, eps, exact_only).unwrap();
                    plan.block = (threads, 1, 1);
                    let mut out = Emu.alloc(dt, rows * n).unwrap();
                    let mut slots = vec![Slot::In(&xb), Slot::In(&wb), Slot::Out(&mut out)];
                    if let Some((bb, _)) = &bu {
                        slots.push(Slot::In(bb));
                    }
                    Emu.launch(&plan, &mut slots).unwrap();
                    let what = format!(
                        "norm {dt:?} n={n} mean={mean} bias={} eps={eps} exact={exact_only} \
                     block={threads}",
                        b.is_some()
                    );
                    same_bits(&what, &download(&out, (rows, n)), &want);
                    launches += 1;
                }
            }
        };
    for dt in FLOATS {
        for n in [1usize, 2, 5, 64, 576, 1000] {
            for specials in [false, true] {
                let rows = 6;
                let x: Vec<f32> = (0..rows * n)
                    .map(|_| norm_value(&mut rng, specials))
                    .collect();
                let w: Vec<f32> = (0..n).map(|_| norm_value(&mut rng, false)).collect();
                let b: Vec<f32> = (0..n).map(|_| norm_value(&mut rng, specials)).collect();
                for mean in [false, true] {
                    run(dt, n, &x, &w, None, mean, 1e-5);
                    run(dt, n, &x, &w, Some(&b), mean, 0.0);
                }
            }
        }
        // Constant and near-constant rows (V = 0 with eps = 0; the mean an ulp off).
        let x: Vec<f32> = [
            vec![2.0; 7],
            (0..7)
                .map(|i| 1.0 + if i == 0 { (2f32).powi(-20) } else { 0.0 })
                .collect(),
        ]
        .concat();
        let w: Vec<f32> = (0..7).map(|_| norm_value(&mut rng, false)).collect();
        run(dt, 7, &x, &w, None, true, 0.0);
        run(dt, 7, &x, &w, Some(&w), true, 0.0);
    }
    println!("{launches} norm launches: device == CPU");
}

#[test]
fn norms_match_the_cpu() {
    use candle_repro::norm::norm_with;
    for (rows, n) in [(6, 1), (9, 7), (4, 300), (2, 1000)] {
        for dtype in FLOATS {
            let t = tensor(rows, n, n as u64, 5.0, DType::F32)
                .clamp(-1e4f32, 1e4f32)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let w = tensor(1, n, 5, 2.0, DType::F32).clamp(-3f32, 3f32).unwrap();
            let w = w.to_dtype(dtype).unwrap().flatten_all().unwrap();
            let b = tensor(1, n, 6, 1.0, DType::F32).clamp(-1f32, 1f32).unwrap();
            let b = b.to_dtype(dtype).unwrap().flatten_all().unwrap();
            for (view, x) in views(&t) {
                if x.dims()[1] != n {
                    continue; // the norm runs over the last dimension: views that keep it
                }
                for remove_mean in [false, true] {
                    for exact_only in [false, true] {
                        for bias in [None, Some(&b)] {
                            let (xb, xl) = upload(&x);
                            let (wb, wl) = upload(&w);
                            let bu = bias.map(upload);
                            let bb = bu.as_ref().map(|(bb, bl)| (bb, bl));
                            let out = candle_repro::norm::cuda::norm(
                                &Emu,
                                remove_mean,
                                1e-5,
                                exact_only,
                                (&xb, &xl),
                                (&wb, &wl),
                                bb,
                            )
                            .unwrap();
                            let want =
                                norm_with(&x, &w, bias, 1e-5, remove_mean, exact_only).unwrap();
                            let what = format!(
                                "norm mean={remove_mean} exact={exact_only} bias={} \
                                 {rows}x{n} {dtype:?} {view}",
                                bias.is_some()
                            );
                            same_bits(&what, &download(&out, x.dims()), &want);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn gather_copies_every_strided_layout() {
    // Every element size, rank 1 to 4, transposes, narrows, broadcasts (stride 0).
    let base = Tensor::arange(0u32, 2 * 3 * 5 * 7, &Cpu::Cpu).unwrap();
    let t4 = base.reshape((2, 3, 5, 7)).unwrap();
    let cases: Vec<Tensor> = vec![
        t4.permute((3, 1, 0, 2)).unwrap(),
        t4.i((.., 1.., 2..4, ..)).unwrap(),
        t4.i((1, .., 3, ..)).unwrap().t().unwrap(),
        base.i(5..40).unwrap(),
        t4.i((0, 0, .., 0))
            .unwrap()
            .unsqueeze(1)
            .unwrap()
            .broadcast_as((5, 4))
            .unwrap(),
    ];
    for (i, c) in cases.iter().enumerate() {
        for dtype in [DType::U8, DType::F16, DType::U32, DType::F64] {
            let x = c.to_dtype(dtype).unwrap();
            // to_dtype makes a contiguous copy: rebuild the view on the converted storage.
            let x = match i {
                0 => t4.to_dtype(dtype).unwrap().permute((3, 1, 0, 2)).unwrap(),
                1 => t4.to_dtype(dtype).unwrap().i((.., 1.., 2..4, ..)).unwrap(),
                2 => t4
                    .to_dtype(dtype)
                    .unwrap()
                    .i((1, .., 3, ..))
                    .unwrap()
                    .t()
                    .unwrap(),
                3 => base.to_dtype(dtype).unwrap().i(5..40).unwrap(),
                _ => x
                    .i((.., 0))
                    .unwrap()
                    .unsqueeze(1)
                    .unwrap()
                    .broadcast_as((5, 4))
                    .unwrap(),
            };
            let (buf, layout) = upload(&x);
            let out = launch::gather(&Emu, &buf, &layout).unwrap();
            let got = download(&out, x.dims()).to_dtype(DType::F64).unwrap();
            let want = x.to_dtype(DType::F64).unwrap();
            let (g, w) = (
                got.flatten_all().unwrap().to_vec1::<f64>().unwrap(),
                want.flatten_all().unwrap().to_vec1::<f64>().unwrap(),
            );
            assert_eq!(g, w, "gather case {i} {dtype:?}");
        }
    }
}

/// The launch layer and the emulator refuse what a GPU would silently run wrong: swapped
/// arguments, a pointer past its buffer, a write into an input.
#[test]
fn bad_plans_are_errors_not_garbage() {
    let x = Tensor::arange(0f32, 64.0, &Cpu::Cpu)
        .unwrap()
        .reshape((8, 8))
        .unwrap()
        .t()
        .unwrap();
    let (buf, layout) = upload(&x);
    let plan = launch::gather::plan_gather(DType::F32, 64, &layout).unwrap();
    let dims = Emu.upload_u64(&[8, 8, 1, 8]).unwrap();
    let run = |plan: &launch::LaunchPlan| {
        let mut out = Emu.alloc(DType::F32, 64).unwrap();
        // Written by the host first: swapped, the kernel reads it, and the write into the
        // input is the error wanted (not the read of unwritten memory before it).
        out.mem.as_bytes_mut().fill(0);
        Emu.launch(
            plan,
            &mut [Slot::In(&buf), Slot::In(&dims), Slot::Out(&mut out)],
        )
        .map(|_| download(&out, (8, 8)))
    };
    let good = run(&plan).unwrap();
    same_bits("gather", &good, &x.contiguous().unwrap());

    // Swapped value arguments (base and rank: u64 and u32): the kernel's parameter sizes.
    let mut swapped = plan.clone();
    swapped.args.swap(2, 3);
    let e = run(&swapped).unwrap_err().to_string();
    assert!(e.contains("argument 2"), "{e}");
    // Swapped source and destination: the kernel would write into the input.
    let mut swapped = plan.clone();
    swapped.args.swap(1, 5);
    let e = run(&swapped).unwrap_err().to_string();
    assert!(e.contains("read-only"), "{e}");
    // A base offset past the data: the reads leave the buffer.
    let mut past = plan.clone();
    past.args[2] = KernelArg::U64(60);
    let e = run(&past).unwrap_err().to_string();
    assert!(e.contains("past the end"), "{e}");
    // A pointer that claims more elements than its buffer has: refused before launching.
    let mut long = plan.clone();
    if let KernelArg::Buf { len, .. } = &mut long.args[5] {
        *len = 65;
    }
    let e = run(&long).unwrap_err().to_string();
    assert!(e.contains("spans elements"), "{e}");
}

/// The FFT's tensor-core stage (`repro_fft_stockham8_ozaki_mma`: warp shuffles and
/// `mma.sync` m16n8k16 bf16, whose fragments the emulator lays out from the PTX ISA's
/// tables) against the plain-loop kernel of the same stage (`repro_fft_stockham8_ozaki`,
/// checked against the CPU FFT by `fft_plans_match_the_cpu`): the same bits, for
/// a first stage (no twiddles) and a later one, with zero and NaN butterflies, and blocks
/// of 2 warps so that the warps loop over several groups of 8 butterflies.
#[test]
fn fft_tensor_core_stage_matches_the_plain_stage() {
    use launch::{LaunchPlan, Module};
    let w8: Vec<f32> = candle_repro::fft::ozaki::w8_digits_for_tests().concat();
    assert_eq!(w8.len(), 4 * 256);
    for (rows, len, ns) in [(3usize, 64usize, 1usize), (2, 512, 8), (1, 512, 64)] {
        let n = rows * len;
        let mut re = values(n, len as u64 + ns as u64, 3.0);
        let mut im = values(n, 99 + ns as u64, 3.0);
        for v in re.iter_mut().chain(im.iter_mut()) {
            if !v.is_finite() || v.abs() > 1e30 {
                *v = 0.5; // finite inputs, then chosen special butterflies below
            }
        }
        // Butterfly 0 of row 0 all zeros (its 8 inputs i + r * len / 8), one with a NaN.
        for r in 0..8 {
            re[r * len / 8] = 0.0;
            im[r * len / 8] = 0.0;
        }
        re[1 + 3 * len / 8] = f32::NAN;
        let tw_len = (7 * ns).max(1);
        let tw_re: Vec<f32> = values(tw_len, 5, 1.0)
            .iter()
            .map(|v| v.clamp(-1.0, 1.0))
            .collect();
        let tw_im: Vec<f32> = values(tw_len, 6, 1.0)
            .iter()
            .map(|v| v.clamp(-1.0, 1.0))
            .collect();
        let up = |v: &[f32]| {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            common::emu::EmuBuf {
                dtype: DType::F32,
                len: v.len(),
                mem: cuda_emu::Buffer::from_bytes(&bytes),
            }
        };
        let (sre, sim, twr, twi, w) = (up(&re), up(&im), up(&tw_re), up(&tw_im), up(&w8));
        let total = n / 8;
        let run = |kernel: &str| {
            let plan = LaunchPlan::new(Module::Fft, kernel.to_string(), 2, 64)
                .arg(KernelArg::U64(total as u64))
                .arg(KernelArg::U64(len as u64))
                .arg(KernelArg::U64(ns as u64))
                .buf(0, DType::F32, 0, n)
                .buf(1, DType::F32, 0, n)
                .buf(2, DType::F32, 0, n)
                .buf(3, DType::F32, 0, n)
                .buf(4, DType::F32, 0, tw_len)
                .buf(5, DType::F32, 0, tw_len)
                .buf(6, DType::F32, 0, w8.len());
            let (mut dre, mut dim) = (
                Emu.alloc(DType::F32, n).unwrap(),
                Emu.alloc(DType::F32, n).unwrap(),
            );
            Emu.launch(
                &plan,
                &mut [
                    Slot::In(&sre),
                    Slot::In(&sim),
                    Slot::Out(&mut dre),
                    Slot::Out(&mut dim),
                    Slot::In(&twr),
                    Slot::In(&twi),
                    Slot::In(&w),
                ],
            )
            .unwrap();
            Tensor::cat(&[download(&dre, n), download(&dim, n)], 0).unwrap()
        };
        let plain = run("repro_fft_stockham8_ozaki");
        let mma = run("repro_fft_stockham8_ozaki_mma");
        let what = format!("ozaki stage rows={rows} len={len} ns={ns}");
        same_bits(&what, &mma, &plain);
        // Not vacuous: the plain stage wrote every output, not all of them zero or NaN.
        let b = bits(&plain);
        assert!(
            b.iter().all(|&x| x != 0xFFFF_FFFF),
            "{what}: an output was not written"
        );
        assert!(
            b.iter().filter(|&&x| x != 0 && x != 0x7FC0_0000).count() > n,
            "{what}"
        );
    }
}

fn selftest(kernel: &str, threads: u32, out_len: usize) -> Result<Vec<i32>, String> {
    let out = cuda_emu::Buffer::new(out_len * 4);
    cuda_emu::launch(
        "selftest",
        kernel,
        [1, 1, 1],
        [threads, 1, 1],
        &[cuda_emu::Arg::Out(&out, 0)],
    )?;
    Ok(out
        .as_bytes()
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

/// The emulator's collectives on correct code give what CUDA defines.
#[test]
fn emulator_collectives_follow_cuda() {
    let out = selftest("selftest_collectives", 32, 128).unwrap();
    for t in 0..32 {
        assert_eq!(out[t], 496, "block sum");
        assert_eq!(out[32 + t], ((t + 1) % 32) as i32, "shuffle");
        assert_eq!(out[64 + t], 496, "xor butterfly");
        assert_eq!(out[96 + t] as u32, 0xAAAA_AAAA, "ballot");
    }
}

/// A CuTe layout, (thread, value) -> index, with the thread as (threadID_in_group,
/// groupID) = (t % 4, t / 4) and the value's modes colexicographic: each mode (extent,
/// stride).
struct CuteLayout {
    thr: [(usize, usize); 2],
    val: &'static [(usize, usize)],
}

impl CuteLayout {
    fn index(&self, t: usize, v: usize) -> usize {
        let (mut i, mut rest) = (0, t);
        for (e, s) in self.thr {
            i += rest % e * s;
            rest /= e;
        }
        rest = v;
        for (e, s) in self.val {
            i += rest % e * s;
            rest /= e;
        }
        i
    }
}

// The fragment layouts of CuTe (cute/atom/mma_traits_sm80.hpp), as data: for an M x K
// operand A the index is m + M k, for B (N x K) n + N k, for C/D (M x N) m + M n; value v
// of a thread is bits [w v, w (v + 1)) of its registers (w the element width).
// SM80_16x8x16_F32BF16BF16F32_TN:
//   A ((4,8),(2,2,2)):((32,1),(16,8,128)), B ((4,8),(2,2)):((16,1),(8,64)),
//   C ((4,8),(2,2)):((32,1),(16,8));
// SM80_16x8x32_S32S8S8S32_TN:
//   A ((4,8),(4,2,2)):((64,1),(16,8,256)), B ((4,8),(4,2)):((32,1),(8,128)), C as above.
const BF16_A: CuteLayout = CuteLayout {
    thr: [(4, 32), (8, 1)],
    val: &[(2, 16), (2, 8), (2, 128)],
};
const BF16_B: CuteLayout = CuteLayout {
    thr: [(4, 16), (8, 1)],
    val: &[(2, 8), (2, 64)],
};
const S8_A: CuteLayout = CuteLayout {
    thr: [(4, 64), (8, 1)],
    val: &[(4, 16), (2, 8), (2, 256)],
};
const S8_B: CuteLayout = CuteLayout {
    thr: [(4, 32), (8, 1)],
    val: &[(4, 8), (2, 128)],
};
const ACC_C: CuteLayout = CuteLayout {
    thr: [(4, 32), (8, 1)],
    val: &[(2, 16), (2, 8)],
};

/// The CuTe tables above agree with a few entries read off the PTX ISA's fragment figures
/// by hand (lane 5: groupID 1, threadID_in_group 1).
#[test]
fn mma_layout_tables_agree_with_the_ptx_figures() {
    // m16n8k16 .bf16 A: a0,a1 = (1, 2), (1, 3); a2,a3 = (9, 2), (9, 3); a4 = (1, 10); a6 = (9, 10).
    let a = |v| (BF16_A.index(5, v) % 16, BF16_A.index(5, v) / 16);
    assert_eq!(
        [a(0), a(1), a(2), a(3), a(4), a(6)],
        [(1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (9, 10)]
    );
    // B (k, n): b0,b1 = (2, 1), (3, 1); b2 = (10, 1).
    let b = |v| (BF16_B.index(5, v) / 8, BF16_B.index(5, v) % 8);
    assert_eq!([b(0), b(1), b(2)], [(2, 1), (3, 1), (10, 1)]);
    // C/D: c0,c1 = (1, 2), (1, 3); c2 = (9, 2).
    let c = |v| (ACC_C.index(5, v) % 16, ACC_C.index(5, v) / 16);
    assert_eq!([c(0), c(1), c(2)], [(1, 2), (1, 3), (9, 2)]);
    // m16n8k32 .s8 A: a0..a3 = (1, 4..7); a4 = (9, 4); a8 = (1, 20); a12 = (9, 20).
    let a = |v| (S8_A.index(5, v) % 16, S8_A.index(5, v) / 16);
    assert_eq!(
        [a(0), a(3), a(4), a(8), a(12)],
        [(1, 4), (1, 7), (9, 4), (1, 20), (9, 20)]
    );
    // B (k, n): b0..b3 = (4..7, 1); b4 = (20, 1).
    let b = |v| (S8_B.index(5, v) / 8, S8_B.index(5, v) % 8);
    assert_eq!([b(0), b(3), b(4)], [(4, 1), (7, 1), (20, 1)]);
}

fn words_u32(b: &cuda_emu::Buffer) -> Vec<u32> {
    b.as_bytes()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The emulator's mma.sync decodes the fragments as CuTe's tables say: A, B, C of small
/// integers (exact in bf16 and f32, or s8 and s32) packed by the tables, D unpacked by
/// them, against the exact product. A swapped register or a misread element in the
/// emulator fails here even if a kernel makes the same mistake.
#[test]
fn emulator_mma_fragments_follow_the_cute_tables() {
    let mut rng = Lcg(26);
    for kind in ["bf16", "s8"] {
        for _ in 0..4 {
            let (k, al, bl) = if kind == "bf16" {
                (16, &BF16_A, &BF16_B)
            } else {
                (32, &S8_A, &S8_B)
            };
            let span = if kind == "bf16" { 17 } else { 256 };
            let mut draw = |n: usize| -> Vec<i64> {
                (0..n)
                    .map(|_| rng.below(span) as i64 - span as i64 / 2)
                    .collect()
            };
            let a = draw(16 * k); // a[m * k + kk]
            let b = draw(k * 8); // b[kk * 8 + n]
            let c: Vec<i64> = draw(128).iter().map(|v| v * 1000).collect(); // c[m * 8 + n]
            let (per, width) = if kind == "bf16" { (2, 16) } else { (4, 8) };
            let enc = |v: i64| -> u32 {
                if kind == "bf16" {
                    half::bf16::from_f32(v as f32).to_bits() as u32
                } else {
                    v as i8 as u8 as u32
                }
            };
            let mut af = vec![0u32; 128];
            let mut bf = vec![0u32; 64];
            let mut cf = vec![0u32; 128];
            for t in 0..32 {
                for v in 0..4 * per {
                    let i = al.index(t, v);
                    let (m, kk) = (i % 16, i / 16);
                    af[4 * t + v / per] |= enc(a[m * k + kk]) << (width * (v % per));
                }
                for v in 0..2 * per {
                    let i = bl.index(t, v);
                    let (n, kk) = (i % 8, i / 8);
                    bf[2 * t + v / per] |= enc(b[kk * 8 + n]) << (width * (v % per));
                }
                for v in 0..4 {
                    let i = ACC_C.index(t, v);
                    let x = c[(i % 16) * 8 + i / 16];
                    cf[4 * t + v] = if kind == "bf16" {
                        (x as f32).to_bits()
                    } else {
                        x as i32 as u32
                    };
                }
            }
            let bytes = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
            let (ab, bb, cb) = (
                cuda_emu::Buffer::from_bytes(&bytes(&af)),
                cuda_emu::Buffer::from_bytes(&bytes(&bf)),
                cuda_emu::Buffer::from_bytes(&bytes(&cf)),
            );
            let d = cuda_emu::Buffer::new(128 * 4);
            let args = [
                cuda_emu::Arg::In(&ab, 0),
                cuda_emu::Arg::In(&bb, 0),
                cuda_emu::Arg::In(&cb, 0),
                cuda_emu::Arg::Out(&d, 0),
            ];
            let kernel = format!("selftest_mma_{kind}");
            cuda_emu::launch("selftest", &kernel, [1, 1, 1], [32, 1, 1], &args).unwrap();
            let got = words_u32(&d);
            for t in 0..32 {
                for v in 0..4 {
                    let i = ACC_C.index(t, v);
                    let (m, n) = (i % 16, i / 16);
                    let want: i64 =
                        (0..k).map(|kk| a[m * k + kk] * b[kk * 8 + n]).sum::<i64>() + c[m * 8 + n];
                    let g = got[4 * t + v];
                    let g = if kind == "bf16" {
                        f32::from_bits(g) as i64
                    } else {
                        g as i32 as i64
                    };
                    assert_eq!(g, want, "{kind}: D[{m}][{n}] (lane {t}, register {v})");
                }
            }
        }
    }
}

/// Shuffles as the PTX ISA defines shfl.sync (lane operand's low 5 bits, the segment and
/// clamp CUDA passes for a width): answers worked out by hand from the ISA's rules.
#[test]
fn emulator_shuffle_lanes_follow_ptx() {
    let out = selftest("selftest_shuffle_lanes", 32, 320).unwrap();
    for t in 0..32i32 {
        let own = 100 + t;
        let want = [
            // down 33: offset 1; the last lane keeps its own.
            if t < 31 { own + 1 } else { own },
            // idx -1: lane 31.
            131,
            // xor 33: xor 1.
            100 + (t ^ 1),
            // up 33 in segments of 8: offset 1 within the segment.
            if t % 8 >= 1 { own - 1 } else { own },
            // idx 9 in segments of 8: lane 1 of the segment.
            100 + (t & !7) + 1,
            // xor 8 in segments of 8: the earlier segment readable, the later not.
            if t & 8 != 0 { 100 + (t ^ 8) } else { own },
            // down -1: offset 31; only lane 0 has a source (lane 31).
            if t == 0 { 131 } else { own },
            // up 3 in segments of 16.
            if t % 16 >= 3 { own - 3 } else { own },
            // down 5 in segments of 16.
            if t % 16 <= 10 { own + 5 } else { own },
            // idx t - 41 in segments of 4: low 2 bits of t - 41.
            100 + (t & !3) + ((t - 41) & 3),
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(out[k * 32 + t as usize], *w, "case {k}, lane {t}");
        }
    }
}

fn launch_one(
    kernel: &str,
    grid: u32,
    threads: u32,
    args: &[cuda_emu::Arg<'_>],
) -> Result<(), String> {
    cuda_emu::launch_with(
        "selftest",
        kernel,
        [grid, 1, 1],
        [threads, 1, 1],
        args,
        3,
        7,
    )
}

/// The sanitizer's detectors, each on a kernel with its defect: clear messages naming the
/// kernel, the shared variable and offset or the buffer, and the threads; a warp collective
/// does order a warp's shared accesses; mma sums not exact in f32 are an error.
#[test]
fn emulator_reports_sanitizer_defects() {
    let has = |e: &str, parts: &[&str]| {
        for p in parts {
            assert!(e.contains(p), "{p:?} not in: {e}");
        }
    };
    let out = cuda_emu::Buffer::new(64 * 4);
    let e = launch_one(
        "selftest_missing_barrier",
        1,
        32,
        &[cuda_emu::Arg::Out(&out, 0)],
    )
    .unwrap_err();
    has(
        &e,
        &[
            "selftest_missing_barrier: shared-memory race",
            "of `s` (declared at selftest.cu:",
            "shared offset",
            "thread (",
            "same barrier interval",
        ],
    );
    let e = launch_one(
        "selftest_shared_from_previous_block",
        2,
        32,
        &[cuda_emu::Arg::Out(&out, 0)],
    )
    .unwrap_err();
    has(
        &e,
        &[
            "selftest_shared_from_previous_block: thread (0,0,0) of block (1,0,0) reads byte 0 of `s`",
            "which this block has not written",
        ],
    );
    let unwritten = cuda_emu::Buffer::new(32 * 4);
    let e = launch_one(
        "selftest_read_unwritten",
        1,
        32,
        &[
            cuda_emu::Arg::In(&unwritten, 0),
            cuda_emu::Arg::Out(&out, 0),
        ],
    )
    .unwrap_err();
    has(
        &e,
        &[
            "selftest_read_unwritten: uninitialized device memory",
            "reads 4 bytes at byte 0 of argument 0",
        ],
    );
    let e = launch_one(
        "selftest_write_before",
        1,
        32,
        &[cuda_emu::Arg::Out(&out, 0)],
    )
    .unwrap_err();
    has(
        &e,
        &[
            "selftest_write_before: out-of-bounds access",
            "thread (0,0,0) of block (0,0,0) writes 4 bytes 4 bytes before the start of argument 0",
        ],
    );
    // Order-dependent results: each order alone "works".
    let acc = cuda_emu::Buffer::from_bytes(&0f32.to_le_bytes());
    let args = [cuda_emu::Arg::Out(&acc, 0)];
    cuda_emu::launch_with(
        "selftest",
        "selftest_order_dependent",
        [1; 3],
        [32, 1, 1],
        &args,
        1,
        0,
    )
    .unwrap();
    let e = launch_one("selftest_order_dependent", 1, 32, &args).unwrap_err();
    has(
        &e,
        &[
            "selftest_order_dependent: the output depends on the schedule",
            "in index order",
            "in reverse order",
        ],
    );
    let e = launch_one("selftest_block_order_dependent", 8, 32, &args).unwrap_err();
    has(
        &e,
        &["selftest_block_order_dependent: the output depends on the schedule"],
    );
    // Ordered by a warp collective: no race, under every schedule.
    launch_one(
        "selftest_warp_ordered_shared",
        1,
        32,
        &[cuda_emu::Arg::Out(&out, 0)],
    )
    .unwrap();
    for (t, w) in words_u32(&out).iter().take(32).enumerate() {
        assert_eq!(*w, 10 * (t as u32 ^ 1), "lane {t}");
    }
    let e = launch_one(
        "selftest_mma_inexact",
        1,
        32,
        &[cuda_emu::Arg::Out(&out, 0)],
    )
    .unwrap_err();
    has(
        &e,
        &[
            "mma.sync m16n8k16 bf16 -> f32 at selftest.cu:",
            "D[0][0] (lane 0, register 0)",
            "not all exact in f32",
        ],
    );
}

/// Divergent barriers, lanes missing from a collective: errors naming the call site; a
/// stack overflow of an emulated thread, also on stacks reused from an earlier launch.
#[test]
fn emulator_reports_barrier_and_warp_defects() {
    let e = selftest("selftest_divergent_barrier", 64, 64).unwrap_err();
    assert!(
        e.contains("not reached by") && e.contains("selftest.cu"),
        "{e}"
    );
    let e = selftest("selftest_split_barrier", 32, 32).unwrap_err();
    assert!(e.contains("different __syncthreads"), "{e}");
    let e = selftest("selftest_shuffle_exited_lane", 32, 32).unwrap_err();
    assert!(e.contains("exited"), "{e}");
    let e = selftest("selftest_shuffle_outside_mask", 32, 32).unwrap_err();
    assert!(e.contains("not in the mask"), "{e}");
    // Twice: the second launch runs on the stacks the first one gave back.
    for _ in 0..2 {
        let e = selftest("selftest_stack_overflow", 2, 2).unwrap_err();
        assert!(e.contains("stack overflow of an emulated thread"), "{e}");
    }
    // The stacks are still usable afterwards.
    assert_eq!(selftest("selftest_collectives", 32, 128).unwrap()[0], 496);
}

/// Rotary embeddings, every layout, forward and backward, 2D tables narrowed to an offset
/// and per-batch 3D tables, and the fused op (cos/sin computed in the kernel, YaRN's
/// attention factor included), against the CPU ops.
#[test]
fn rope_matches_the_cpu() {
    use candle_repro::rope::{self, RopeConfig, RopeLayout, RopeTables};
    let (b, h, t, d) = (2, 3, 5, 16);
    for dtype in FLOATS {
        for cfg in [
            RopeConfig::new(10000.0, d),
            RopeConfig::yarn(10000.0, d, 4.0, 64),
        ] {
            let tables = RopeTables::new(&cfg, 700, dtype, &Cpu::Cpu).unwrap();
            let (cos2, sin2) = (
                tables.cos.i(600..600 + t).unwrap(),
                tables.sin.i(600..600 + t).unwrap(),
            );
            let pos = Tensor::new(&[[3u32, 699, 0, 17, 64], [5, 6, 7, 8, 650]], &Cpu::Cpu).unwrap();
            let pick = |m: &Tensor| {
                let rows: Vec<Tensor> = (0..b)
                    .map(|i| m.index_select(&pos.i(i).unwrap(), 0).unwrap())
                    .collect();
                Tensor::stack(&rows, 0).unwrap()
            };
            let (cos3, sin3) = (pick(&tables.cos), pick(&tables.sin));
            for layout in [RopeLayout::Halves, RopeLayout::Interleaved, RopeLayout::Thd] {
                let shape = match layout {
                    RopeLayout::Thd => (b, t, h, d),
                    _ => (b, h, t, d),
                };
                let x = Tensor::from_vec(values(b * h * t * d, 11, 4.0), shape, &Cpu::Cpu)
                    .unwrap()
                    .to_dtype(dtype)
                    .unwrap();
                for (tables_kind, cos, sin) in [("2D", &cos2, &sin2), ("3D", &cos3, &sin3)] {
                    for sgn in [1.0, -1.0] {
                        let want = if sgn > 0.0 {
                            rope::rope_with(layout, &x, cos, sin).unwrap()
                        } else {
                            match layout {
                                RopeLayout::Halves => rope::rope_bwd(&x, cos, sin),
                                RopeLayout::Interleaved => rope::rope_i_bwd(&x, cos, sin),
                                RopeLayout::Thd => rope::rope_thd_bwd(&x, cos, sin),
                            }
                            .unwrap()
                        };
                        let ((xb, xl), (cb, cl), (sb, sl)) = (upload(&x), upload(cos), upload(sin));
                        let out =
                            rope::cuda::rope(&Emu, layout, sgn, (&xb, &xl), (&cb, &cl), (&sb, &sl))
                                .unwrap();
                        let what = format!("rope {layout:?} sgn={sgn} {tables_kind} {dtype:?}");
                        same_bits(&what, &download(&out, x.dims()), &want);
                    }
                }
                for positions in [pos.i(1).unwrap(), pos.clone()] {
                    let want = rope::rope_fused(layout, &x, &positions, &tables.freqs).unwrap();
                    let ((xb, xl), (pb, pl)) = (upload(&x), upload(&positions));
                    let f = &tables.freqs;
                    let out = rope::cuda::rope_fused(
                        &Emu,
                        layout,
                        1.0,
                        &f.inv_freq,
                        f.attention_factor,
                        (&xb, &xl),
                        (&pb, &pl),
                    )
                    .unwrap();
                    let what = format!(
                        "rope_fused {layout:?} positions {:?} {dtype:?}",
                        positions.dims()
                    );
                    same_bits(&what, &download(&out, x.dims()), &want);
                }
            }
        }
    }
}

/// Values from random bits of the format (every exponent, subnormals, a few inf/NaN); for
/// f32 half of them moderate, so that the rotations' sums cancel and round.
fn random_bits_tensor(n: usize, shape: &[usize], dt: DType, seed: u64) -> Tensor {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    match dt {
        DType::F32 => {
            let v: Vec<f32> = (0..n)
                .map(|k| {
                    let r = next();
                    match k % 4 {
                        0 | 1 => ((r >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0,
                        _ => f32::from_bits((r >> 32) as u32),
                    }
                })
                .collect();
            Tensor::from_vec(v, shape, &Cpu::Cpu).unwrap()
        }
        DType::BF16 => {
            let v: Vec<half::bf16> = (0..n)
                .map(|_| half::bf16::from_bits((next() >> 48) as u16))
                .collect();
            Tensor::from_vec(v, shape, &Cpu::Cpu).unwrap()
        }
        _ => {
            let v: Vec<half::f16> = (0..n)
                .map(|_| half::f16::from_bits((next() >> 48) as u16))
                .collect();
            Tensor::from_vec(v, shape, &Cpu::Cpu).unwrap()
        }
    }
}

/// Rotations on inputs that stress the rounding (random bits over the whole exponent
/// range, cancellations, subnormals, inf and NaN, in x and in the tables), every dtype,
/// layout, direction and table shape (2D and per-batch 3D, longer than t), a head
/// dimension of 128 over several blocks.
#[test]
fn rope_matches_the_cpu_on_hard_inputs() {
    use candle_repro::rope::{RopeLayout, rope_bwd, rope_i_bwd, rope_thd_bwd, rope_with};
    let mut cases = 0;
    for dt in FLOATS {
        for layout in [RopeLayout::Halves, RopeLayout::Interleaved, RopeLayout::Thd] {
            for (b, h, t, d, cs_t, batched) in [
                (2usize, 3usize, 5usize, 16usize, 9usize, false),
                (3, 2, 4, 8, 6, true),
                (1, 8, 64, 128, 64, false),
            ] {
                for sgn in [1.0f64, -1.0] {
                    let shape = if layout == RopeLayout::Thd {
                        vec![b, t, h, d]
                    } else {
                        vec![b, h, t, d]
                    };
                    let cs_shape = if batched {
                        vec![b, cs_t, d / 2]
                    } else {
                        vec![cs_t, d / 2]
                    };
                    let ncs: usize = cs_shape.iter().product();
                    let seed = (cases as u64 + 1) * 7919;
                    let x = random_bits_tensor(b * h * t * d, &shape, dt, seed);
                    let c = random_bits_tensor(ncs, &cs_shape, dt, seed + 1);
                    let s = random_bits_tensor(ncs, &cs_shape, dt, seed + 2);
                    // The ops take tables of exactly t rows, contiguous (a 2D narrowing keeps
                    // its start offset).
                    let first_rows = |m: &Tensor| {
                        m.narrow(cs_shape.len() - 2, 0, t)
                            .unwrap()
                            .contiguous()
                            .unwrap()
                    };
                    let (c_t, s_t) = (first_rows(&c), first_rows(&s));
                    let want = if sgn > 0.0 {
                        rope_with(layout, &x, &c_t, &s_t)
                    } else {
                        match layout {
                            RopeLayout::Halves => rope_bwd(&x, &c_t, &s_t),
                            RopeLayout::Interleaved => rope_i_bwd(&x, &c_t, &s_t),
                            RopeLayout::Thd => rope_thd_bwd(&x, &c_t, &s_t),
                        }
                    }
                    .unwrap();
                    let ((xb, xl), (cb, cl), (sb, sl)) = (upload(&x), upload(&c_t), upload(&s_t));
                    let out = candle_repro::rope::cuda::rope(
                        &Emu,
                        layout,
                        sgn,
                        (&xb, &xl),
                        (&cb, &cl),
                        (&sb, &sl),
                    )
                    .unwrap();
                    let what =
                        format!("rope {dt:?} {layout:?} sgn={sgn} {shape:?} batched={batched}");
                    same_bits(&what, &download(&out, x.dims()), &want);
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 54);
}

/// The fused kernel (cos/sin per element with the device trig mirror) against the CPU op:
/// plain, Llama 3.1 and YaRN frequencies, positions up to 2^32 - 1 (the exact argument
/// reduction), 1D and per-batch positions, every dtype and layout.
#[test]
fn rope_fused_matches_the_cpu_at_any_position() {
    use candle_repro::rope::{RopeConfig, RopeLayout, rope_freqs, rope_fused};
    let mut outputs = 0;
    for cfg in [
        RopeConfig::new(10000.0, 64),
        RopeConfig::llama31(128),
        RopeConfig::yarn(1e6, 32, 4.0, 32768),
    ] {
        let freqs = rope_freqs(&cfg).unwrap();
        let d = cfg.rotary_dim;
        for dt in FLOATS {
            for (li, layout) in [RopeLayout::Halves, RopeLayout::Interleaved, RopeLayout::Thd]
                .into_iter()
                .enumerate()
            {
                for batched in [false, true] {
                    let (b, h, t) = (2usize, 3usize, 40usize);
                    let shape = if layout == RopeLayout::Thd {
                        vec![b, t, h, d]
                    } else {
                        vec![b, h, t, d]
                    };
                    let x = random_bits_tensor(b * h * t * d, &shape, dt, 1234 + li as u64);
                    let npos = if batched { b * t } else { t };
                    let pv: Vec<u32> = (0..npos as u64)
                        .map(|k| match k % 4 {
                            0 => k as u32,
                            1 => (k * 2_654_435_761 % 131_072) as u32,
                            2 => (k * 0x9E37_79B9) as u32,
                            _ => u32::MAX - k as u32,
                        })
                        .collect();
                    let pos = if batched {
                        Tensor::from_vec(pv, (b, t), &Cpu::Cpu).unwrap()
                    } else {
                        Tensor::from_vec(pv, t, &Cpu::Cpu).unwrap()
                    };
                    let want = rope_fused(layout, &x, &pos, &freqs).unwrap();
                    let ((xb, xl), (pb, pl)) = (upload(&x), upload(&pos));
                    let out = candle_repro::rope::cuda::rope_fused(
                        &Emu,
                        layout,
                        1.0,
                        &freqs.inv_freq,
                        freqs.attention_factor,
                        (&xb, &xl),
                        (&pb, &pl),
                    )
                    .unwrap();
                    let what = format!("rope_fused {cfg:?} {dt:?} {layout:?} batched={batched}");
                    same_bits(&what, &download(&out, x.dims()), &want);
                    outputs += want.elem_count();
                }
            }
        }
    }
    println!("{outputs} fused rotations: device == CPU");
}

/// The device's tier-1 kernels: the f64 tiles and the integer tier (int8 slices), one warp
/// per 16 x 8 outputs and tiled.
const TIER1: [candle_repro::matmul::cuda::Tier1; 3] = [
    candle_repro::matmul::cuda::Tier1::F64Tiles,
    candle_repro::matmul::cuda::Tier1::Int8Slices,
    candle_repro::matmul::cuda::Tier1::Int8Tiled,
];

/// The matmul (stats and product kernels): several 64 x 64 tiles with tails, a batch,
/// transposed and narrowed operands read in place, every input dtype (f8e4m3 included),
/// other output dtypes, a fused bias, and each tier forced, against the CPU op.
#[test]
fn matmul_matches_the_cpu() {
    use candle_repro::matmul::{CpuConfig, matmul_with_config};
    let (m, k, n) = (70, 45, 131);
    let a32 = Tensor::from_vec(values(2 * m * k, 21, 3.0), (2, m, k), &Cpu::Cpu).unwrap();
    let w32 = Tensor::from_vec(values(2 * n * (k + 2), 22, 3.0), (2, n, k + 2), &Cpu::Cpu).unwrap();
    // Finite inputs (the special values have their own tests); b read through a transpose
    // of a narrowed tensor.
    let finite = |t: &Tensor| t.clamp(-1e4f32, 1e4f32).unwrap();
    let (a32, w32) = (finite(&a32), finite(&w32));
    let bias32 = Tensor::from_vec(values(n, 23, 2.0), n, &Cpu::Cpu).unwrap();
    let bias32 = finite(&bias32);
    for (in_dtype, out) in [
        (DType::F32, DType::F32),
        (DType::BF16, DType::BF16),
        (DType::F16, DType::F16),
        (DType::F8E4M3, DType::F32),
        (DType::F8E4M3, DType::BF16),
    ] {
        let conv = |t: &Tensor| {
            if in_dtype == DType::F8E4M3 {
                candle_repro::to_f8e4m3(t, candle_repro::Overflow::Saturate).unwrap()
            } else {
                t.to_dtype(in_dtype).unwrap()
            }
        };
        let a = conv(&a32);
        let b = conv(&w32).narrow(2, 1, k).unwrap().transpose(1, 2).unwrap();
        let bias = bias32.to_dtype(out).unwrap();
        for start_tier in [None, Some(2), Some(3)] {
            for with_bias in [false, true] {
                let cfg = CpuConfig {
                    start_tier,
                    ..CpuConfig::default()
                };
                let want =
                    matmul_with_config(&a, &b, with_bias.then_some(&bias), Some(out), cfg).unwrap();
                let ((ab, al), (bb, bl), (cb, cl)) = (upload(&a), upload(&b), upload(&bias));
                let bias_arg = with_bias.then_some((&cb, &cl));
                for tier1 in TIER1 {
                    let (got, shape) = candle_repro::matmul::cuda::matmul_tier1(
                        &Emu,
                        (&ab, &al),
                        (&bb, &bl),
                        bias_arg,
                        out,
                        start_tier,
                        tier1,
                    )
                    .unwrap();
                    let what = format!(
                        "matmul {in_dtype:?}->{out:?} tier={start_tier:?} bias={with_bias} \
                         {tier1:?}"
                    );
                    same_bits(&what, &download(&got, shape), &want);
                }
            }
        }
    }
}

/// The matmul on inputs that exercise every tier: values over the format's whole exponent
/// range, special values, k = 0, and sums that cancel to tiny values and land on rounding
/// midpoints, every input/output dtype pair, with and without bias, from each starting
/// tier, against the CPU.
#[test]
fn matmul_matches_the_cpu_on_hard_inputs() {
    use candle_repro::matmul::{CpuConfig, matmul_with_config};
    let mut rng = Lcg(2);
    let mut outputs = 0;
    let mut check = |dt: DType,
                     out: DType,
                     (m, k, n): (usize, usize, usize),
                     av: &[f64],
                     bv: &[f64],
                     cv: Option<&[f64]>| {
        let conv = |v: &[f64], shape: &[usize]| {
            let t = Tensor::from_vec(v.to_vec(), shape, &Cpu::Cpu).unwrap();
            if dt == DType::F8E4M3 {
                t.to_dtype(DType::F8E4M3).unwrap()
            } else {
                t.to_dtype(dt).unwrap()
            }
        };
        let (a, b) = (conv(av, &[m, k]), conv(bv, &[k, n]));
        let c = cv.map(|c| {
            Tensor::from_vec(c.to_vec(), n, &Cpu::Cpu)
                .unwrap()
                .to_dtype(out)
                .unwrap()
        });
        for start_tier in [None, Some(2), Some(3)] {
            let cfg = CpuConfig {
                start_tier,
                ..CpuConfig::default()
            };
            let want = matmul_with_config(&a, &b, c.as_ref(), Some(out), cfg).unwrap();
            let ((ab, al), (bb, bl)) = (upload(&a), upload(&b));
            let cu = c.as_ref().map(upload);
            let bias = cu.as_ref().map(|(cb, cl)| (cb, cl));
            for tier1 in TIER1 {
                let (got, shape) = candle_repro::matmul::cuda::matmul_tier1(
                    &Emu,
                    (&ab, &al),
                    (&bb, &bl),
                    bias,
                    out,
                    start_tier,
                    tier1,
                )
                .unwrap();
                let what = format!(
                    "matmul {dt:?}->{out:?} {m}x{k}x{n} tier={start_tier:?} bias={} {tier1:?}",
                    cv.is_some()
                );
                same_bits(&what, &download(&got, shape), &want);
                outputs += m * n;
            }
        }
    };
    for (dt, out, lo, hi) in [
        (DType::F32, DType::F32, -75, 63),
        (DType::BF16, DType::BF16, -75, 63),
        (DType::F16, DType::F16, -14, 7),
        (DType::F8E4M3, DType::F32, -9, 8),
        (DType::F8E4M3, DType::BF16, -9, 8),
    ] {
        for (m, k, n) in [(3, 1, 4), (5, 7, 3), (4, 64, 5), (3, 300, 4), (2, 0, 3)] {
            for specials in [false, true] {
                let av: Vec<f64> = (0..m * k).map(|_| rng.value(specials, lo, hi)).collect();
                let bv: Vec<f64> = (0..k * n).map(|_| rng.value(specials, lo, hi)).collect();
                let cv: Vec<f64> = (0..n).map(|_| rng.value(specials, lo, hi)).collect();
                check(dt, out, (m, k, n), &av, &bv, None);
                check(dt, out, (m, k, n), &av, &bv, Some(&cv));
            }
        }
        // Sums that cancel to tiny values and land on rounding midpoints.
        let (m, n, h) = (4, 4, 20);
        let k = 2 * h + 2;
        let mut av = vec![0.0; m * k];
        let mut bv = vec![0.0; k * n];
        for i in 0..m {
            for q in 0..h {
                let x = rng.sign() * (1.0 + rng.unit()) * 2f64.powi(hi / 2);
                av[i * k + q] = x;
                av[i * k + h + q] = -x;
            }
            av[i * k + 2 * h] = 1.0 + rng.below(8) as f64 / 8.0;
            av[i * k + 2 * h + 1] = 2f64.powi(if out == DType::F32 { -24 } else { -8 });
        }
        for j in 0..n {
            for q in 0..h {
                let y = (1.0 + rng.unit()) * 2f64.powi(hi / 2);
                bv[q * n + j] = y;
                bv[(h + q) * n + j] = y;
            }
            bv[2 * h * n + j] = 1.0;
            bv[(2 * h + 1) * n + j] = [1.0, -1.0, 3.0, 0.0][j];
        }
        check(dt, out, (m, k, n), &av, &bv, None);
    }
    println!(
        "{outputs} matmul outputs (3 starting tiers, {} tier-1 kernels): device == CPU",
        TIER1.len()
    );
}

/// The integer tier's hardest inputs (`kernels/matmul/ozaki.cuh`), every input dtype,
/// against the CPU: tails (elements below a block's slice window) whose products carry the
/// exact sum across an output midpoint while the covered part sits on the other side, on
/// the A side and the B side, upward and downward (the tier must refuse these: its tail
/// bound is tight here, Cauchy-Schwarz within 3%, so a halved or missing tail term decides
/// the wrong neighbour); elements exactly at the window's edge and just below it; the
/// largest significands in every element (the largest s32 sums the tier forms), with equal
/// and alternating signs; subnormals; values near the format's overflow; a NaN and an
/// infinity; all-equal rows; two k-blocks with exponents 2^40 apart.
#[test]
fn matmul_int8_tier_on_its_hardest_inputs() {
    use candle_repro::matmul::cuda::{Tier1, matmul_tier1};
    use candle_repro::matmul::{CpuConfig, matmul_with_config};
    let mut rng = Lcg(27);
    let mut outputs = 0;
    // (dtype, precision p, slice fraction bits F, the crossing lines' head exponent,
    // smallest subnormal exponent, largest finite)
    for (dt, p, f, hexp, sub, max) in [
        (DType::F32, 24, 42, 0, -149, f32::MAX as f64),
        (DType::BF16, 8, 28, 0, -133, 3.3895313892515355e38),
        (DType::F16, 11, 28, 15, -24, 65504.0),
    ] {
        let k = 128;
        let line = |head: f64, body: &[(usize, f64)]| {
            let mut v = vec![0.0; k];
            v[0] = head;
            for &(q, x) in body {
                v[q] = x;
            }
            v
        };
        let run =
            |count: usize, x: f64| -> Vec<(usize, f64)> { (1..=count).map(|q| (q, x)).collect() };
        // Behind a head h = 2^hexp (block exponent E = hexp + 1), a tail element 2^(hexp-F)
        // (Y = 0) times 2^(F-p-5): 33 of them add h 2^-p (33/32), past the midpoint above
        // h; 17 subtract h 2^-(p+1) (17/16), past the one below. Output (0, 1) carries A's
        // tails up, (1, 0) B's; (2, 1), (1, 2), (0, 3), (3, 0) go down.
        let h = 2f64.powi(hexp);
        let tail = 2f64.powi(hexp - f);
        let big = 2f64.powi(f - p - 5);
        let edge = 2f64.powi(hexp + p - f);
        let top = 2.0 - 2f64.powi(1 - p);
        let mut lines: Vec<Vec<f64>> = vec![
            line(h, &run(33, tail)),
            line(1.0, &run(33, big)),
            line(h, &run(17, -tail)),
            line(1.0, &run(17, -big)),
            // At the window's edge (covered) and one below (a one-bit tail).
            line(
                h,
                &[
                    (1, edge * (1.0 + 2f64.powi(1 - p))),
                    (2, edge * (1.0 - 2f64.powi(-p))),
                ],
            ),
            // The largest significands, equal and alternating signs.
            vec![top; k],
            (0..k)
                .map(|q| if q % 2 == 0 { top } else { -top })
                .collect(),
            // Subnormals and values near overflow.
            (0..k)
                .map(|q| (1 + (q % 7)) as f64 * 2f64.powi(sub))
                .collect(),
            (0..k)
                .map(|q| if q % 3 == 0 { max } else { -max / 3.0 })
                .collect(),
            // A NaN, an infinity.
            line(1.0, &[(5, f64::NAN)]),
            line(2.0, &[(70, f64::INFINITY)]),
            // All equal; two blocks 2^40 apart (f16: 2^20).
            vec![1.0 / 3.0; k],
            (0..k)
                .map(|q| {
                    let e = if dt == DType::F16 { 10 } else { 20 };
                    rng.sign() * (1.0 + rng.unit()) * 2f64.powi(if q < 64 { e } else { -e })
                })
                .collect(),
        ];
        for _ in 0..3 {
            lines.push((0..k).map(|_| rng.sign() * (1.0 + rng.unit())).collect());
        }
        let conv = |v: Vec<f64>, shape: (usize, usize)| {
            Tensor::from_vec(v, shape, &Cpu::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap()
        };
        let n = lines.len();
        let a = conv(lines.concat(), (n, k));
        // B's columns are the same lines: b = a^T, read through its strides.
        let b = a.t().unwrap();
        let bias = conv(lines.iter().map(|l| l[0] / 4.0).collect(), (1, n))
            .squeeze(0)
            .unwrap();
        for with_bias in [false, true] {
            let c = with_bias.then_some(&bias);
            let want = matmul_with_config(&a, &b, c, None, CpuConfig::default()).unwrap();
            let ((ab, al), (bb, bl), (cb, cl)) = (upload(&a), upload(&b), upload(&bias));
            for tier1 in [Tier1::Int8Slices, Tier1::Int8Tiled] {
                let (got, shape) = matmul_tier1(
                    &Emu,
                    (&ab, &al),
                    (&bb, &bl),
                    with_bias.then_some((&cb, &cl)),
                    dt,
                    None,
                    tier1,
                )
                .unwrap();
                let what = format!("{tier1:?} {dt:?} {n}x{k}x{n} bias={with_bias}");
                same_bits(&what, &download(&got, shape), &want);
                outputs += n * n;
            }
        }
    }
    println!("{outputs} integer-tier outputs on hard inputs: device == CPU");
}

/// What each tier-1 kernel decides alone (`start_tier = Some(0)`: the outputs it leaves are
/// NaN) on finite random products, (48, 576) x (576, 40), plain and with one element in 50
/// a hundred times larger (activation outliers, a wide spread in a block): every output it
/// decides has the CPU's bits, and the integer tier decides at least 99% of them (its
/// bound is not so loose that everything falls to tier 2, which would hide a wrong tier).
#[test]
fn matmul_int8_tier_decides_typical_outputs() {
    use candle_repro::matmul::cuda::matmul_tier1;
    let (m, k, n) = (48, 576, 40);
    let mut rng = Lcg(28);
    for outliers in [false, true] {
        let mut draw = |len: usize| -> Vec<f64> {
            (0..len)
                .map(|_| {
                    let x = rng.sign() * rng.unit() * 2.0;
                    if outliers && rng.below(50) == 0 {
                        100.0 * x
                    } else {
                        x
                    }
                })
                .collect()
        };
        let (av, bv) = (draw(m * k), draw(k * n));
        for dt in [DType::F32, DType::BF16, DType::F16] {
            let a = Tensor::from_vec(av.clone(), (m, k), &Cpu::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let b = Tensor::from_vec(bv.clone(), (k, n), &Cpu::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let want = bits(&candle_repro::matmul(&a, &b).unwrap());
            let ((ab, al), (bb, bl)) = (upload(&a), upload(&b));
            let mut line = format!("{dt:?} outliers={outliers}:");
            for tier1 in TIER1 {
                let (got, shape) =
                    matmul_tier1(&Emu, (&ab, &al), (&bb, &bl), None, dt, Some(0), tier1).unwrap();
                let got = download(&got, shape);
                let got_bits = bits(&got);
                let vals = got.to_dtype(DType::F32).unwrap().flatten_all().unwrap();
                let vals = vals.to_vec1::<f32>().unwrap();
                let mut decided = 0;
                for (q, v) in vals.iter().enumerate() {
                    if !v.is_nan() {
                        assert_eq!(got_bits[q], want[q], "{dt:?} {tier1:?} output {q}");
                        decided += 1;
                    }
                }
                let frac = decided as f64 / (m * n) as f64;
                line += &format!(" {tier1:?} decides {:.2}%", 100.0 * frac);
                if tier1 != candle_repro::matmul::cuda::Tier1::F64Tiles {
                    assert!(frac >= 0.99, "{line}");
                }
            }
            println!("{line}");
        }
    }
}

/// The line stats every matmul tier reads (`repro_matmul_stats`: the norm of each row of A
/// and column of B, and its sign classes) against their definition: norm = sqrt(sum of
/// x_q^2) over the whole line, a bound only, so the device's may differ from this f64 sum in
/// order alone, by at most 2 (k + 2) 2^-53 relative; the sign classes bit 0 for some
/// element with its sign bit clear, bit 1 for some with it set, exactly. Contiguous lines
/// (one warp each) and strided ones (8 chunks of k each) of lengths around the chunking,
/// line counts around the 32 lines of a block, two batches, and lines of zeros, of -0, with
/// an infinity and with a NaN. A norm that leaves out part of the line (a chunk, a tail) is
/// a defect the products' tests can miss (a short norm still bounds many sums): this one
/// does not.
#[test]
fn matmul_line_stats_match_their_definition() {
    use candle_repro::matmul::cuda::line_stats;
    let mut rng = Lcg(29);
    let mut checked = 0;
    for dt in [DType::F32, DType::BF16] {
        for (lines, k) in [(37, 1), (33, 7), (64, 8), (70, 63), (40, 129), (5, 600)] {
            let mut v: Vec<f64> = (0..lines * k)
                .map(|_| rng.sign() * (1.0 + rng.unit()) * 2f64.powi(rng.below(20) as i32 - 10))
                .collect();
            for q in 0..k {
                v[q] = 0.0;
                v[k + q] = -0.0;
            }
            v[2 * k + k / 2] = f64::INFINITY;
            v[3 * k + k - 1] = f64::NAN;
            let t = Tensor::from_vec(v, (lines, k), &Cpu::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let x: Vec<f32> = t
                .to_dtype(DType::F32)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap();
            let half = lines.div_ceil(2);
            // Lines as rows (contiguous) and as the columns of the transposed copy (strided),
            // each as two batches: lines 0..half at base 0, the rest at the second base.
            let rows = t.clone();
            let cols = t.t().unwrap().contiguous().unwrap();
            for (view, line_stride, elem_stride) in
                [(&rows, k as u64, 1u64), (&cols, 1, lines as u64)]
            {
                let (buf, _) = upload(view);
                let bases = Emu.upload_u64(&[0, half as u64 * line_stride]).unwrap();
                let stats = line_stats(
                    &Emu,
                    &buf,
                    &bases,
                    half as u64,
                    lines as u64,
                    k as u64,
                    line_stride,
                    elem_stride,
                )
                .unwrap();
                let norms: Vec<f64> = download(&stats.norm, lines.max(1)).to_vec1().unwrap();
                let signs: Vec<u8> = download(&stats.signs, lines.max(1)).to_vec1().unwrap();
                for l in 0..lines {
                    let line = &x[l * k..(l + 1) * k];
                    let sq: f64 = line.iter().map(|&e| e as f64 * e as f64).sum();
                    let want = sq.sqrt();
                    let mut want_signs = 0u8;
                    for &e in line {
                        want_signs |= 1 << (e.to_bits() >> 31);
                    }
                    let what =
                        format!("{dt:?} {lines} lines of {k}, stride {elem_stride}, line {l}");
                    assert_eq!(signs[l], want_signs, "{what}: sign classes");
                    let got = norms[l];
                    if want.is_nan() {
                        assert!(got.is_nan(), "{what}: norm {got} want NaN");
                    } else if want.is_infinite() || want == 0.0 {
                        assert_eq!(
                            got.to_bits(),
                            want.to_bits(),
                            "{what}: norm {got} want {want}"
                        );
                    } else {
                        let tol = 2.0 * (k as f64 + 2.0) * 2f64.powi(-53) * want;
                        assert!((got - want).abs() <= tol, "{what}: norm {got} want {want}");
                    }
                    checked += 1;
                }
            }
        }
    }
    println!("{checked} line norms and sign classes match their definition");
}

#[test]
fn to_f8e4m3_matches_the_cpu() {
    use candle_repro::Overflow;
    for dtype in FLOATS {
        let t = tensor(17, 19, 31, 600.0, dtype);
        for (view, x) in views(&t) {
            for overflow in [Overflow::Saturate, Overflow::Nan] {
                let (buf, layout) = upload(&x);
                let out =
                    candle_repro::matmul::cuda::to_f8e4m3(&Emu, &buf, &layout, overflow).unwrap();
                let got = download_f8(&out, x.dims());
                let want = candle_repro::to_f8e4m3(&x, overflow).unwrap();
                same_bits(
                    &format!("to_f8e4m3 {overflow:?} {dtype:?} {view}"),
                    &got,
                    &want,
                );
            }
        }
    }
}

fn download_f8(b: &common::emu::EmuBuf, dims: &[usize]) -> Tensor {
    let v: Vec<float8::F8E4M3> = b
        .mem
        .as_bytes()
        .iter()
        .map(|&x| float8::F8E4M3::from_bits(x))
        .collect();
    Tensor::from_vec(v, dims, &Cpu::Cpu).unwrap()
}

/// The FFT ops through their device launch code (gather, the op kernels around the
/// transform, the plan's steps, on tensor cores or not): fft, ifft, rfft and irfft (half
/// spectra shorter than, equal to and longer than n/2 + 1), every norm and precision, a
/// strided input, against the CPU ops.
#[test]
fn fft_ops_match_the_cpu() {
    use candle_repro::fft::cuda::fft_op;
    use candle_repro::fft::ops as cpu;
    use candle_repro::fft::ops::FftKind;
    use candle_repro::fft::{Norm, Precision};
    let rows = 3;
    let mut ops = 0;
    for n in [1usize, 2, 5, 12, 8, 16, 64, 512, 17, 100] {
        for precision in [Precision::F32, Precision::F64Internal, Precision::Ozaki] {
            let complex =
                Tensor::from_vec(values(2 * rows * n, n as u64, 2.0), (n, rows, 2), &Cpu::Cpu)
                    .unwrap()
                    .clamp(-1e3f32, 1e3f32)
                    .unwrap()
                    .transpose(0, 1)
                    .unwrap(); // (rows, n, 2), strided
            let real = Tensor::from_vec(values(rows * n, 3 + n as u64, 2.0), (rows, n), &Cpu::Cpu)
                .unwrap()
                .clamp(-1e3f32, 1e3f32)
                .unwrap();
            let spectrum = |m: usize| {
                Tensor::from_vec(
                    values(2 * rows * m, 7 + m as u64, 2.0),
                    (rows, m, 2),
                    &Cpu::Cpu,
                )
                .unwrap()
                .clamp(-1e3f32, 1e3f32)
                .unwrap()
            };
            let mut cases = Vec::new();
            for norm in [Norm::Backward, Norm::Ortho, Norm::Forward] {
                let c = &complex;
                cases.push((
                    FftKind::Fft,
                    norm,
                    c.clone(),
                    cpu::fft_with(c, norm, precision),
                ));
                cases.push((
                    FftKind::Ifft,
                    norm,
                    c.clone(),
                    cpu::ifft_with(c, norm, precision),
                ));
                let want = cpu::rfft_with(&real, norm, precision);
                cases.push((FftKind::Rfft, norm, real.clone(), want));
                for m in [n / 2 + 1, n / 2 + 3, (n / 4).max(1)] {
                    let h = spectrum(m);
                    let want = cpu::irfft_with(&h, Some(n), norm, precision);
                    cases.push((FftKind::Irfft, norm, h, want));
                }
            }
            for (kind, norm, x, want) in cases {
                let want = want.unwrap();
                let mmas: &[bool] = if precision == Precision::Ozaki {
                    &[false, true]
                } else {
                    &[false]
                };
                for &mma in mmas {
                    let (buf, layout) = upload(&x);
                    let out = fft_op(&Emu, kind, n, norm, precision, mma, &buf, &layout).unwrap();
                    let what = format!(
                        "{kind:?} {norm:?} n={n} {:?} {precision:?} mma={mma}",
                        x.dims()
                    );
                    same_bits(&what, &download(&out, want.dims()), &want);
                    ops += 1;
                }
            }
        }
    }
    println!("{ops} op calls: device == CPU");
}

#[path = "common/fft_ref.rs"]
mod fft_ref;
#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;

/// The transform of one plan through its device launch steps against the CPU plan.
fn check_fft_plan(n: usize, mma_too: bool) -> usize {
    use candle_repro::fft::cuda::FusedVariant;
    use candle_repro::fft::{FftPlan, Precision};
    let rows = match n {
        0..=4096 => 16,
        4097..=65536 => 8,
        _ => 2,
    };
    let mut compared = 0;
    for precision in [Precision::F32, Precision::Ozaki, Precision::F64Internal] {
        let plan = FftPlan::new(n, precision).unwrap();
        for inverse in [false, true] {
            let x = fft_ref::special_rows(rows, n, 0x9E37_79B9 ^ (n as u64) << 8 ^ inverse as u64);
            let z = fft_ref::deinterleave(&x);
            let mut want = vec![num_complex::Complex32::new(0.0, 0.0); z.len()];
            if inverse {
                plan.inverse_out_of_place(&z, &mut want).unwrap();
            } else {
                plan.forward_out_of_place(&z, &mut want).unwrap();
            }
            let want = Tensor::from_vec(fft_ref::interleave(&want), x.len(), &Cpu::Cpu).unwrap();
            let (buf, layout) = upload(&Tensor::from_vec(x.clone(), x.len(), &Cpu::Cpu).unwrap());
            let mmas: &[bool] = if mma_too && precision == Precision::Ozaki {
                &[false, true]
            } else {
                &[false]
            };
            for &mma in mmas {
                let src = (&buf, layout.start_offset(), x.len());
                let (out, kernels) = common::emu::launched(|| {
                    candle_repro::fft::cuda::transform(&Emu, &plan, inverse, mma, src).unwrap()
                });
                let what = format!("n={n} {precision:?} inverse={inverse} mma={mma}");
                // The pure Stockham plans of F32 up to 4096 points and F64Internal up to
                // 2048 are one launch of the fused shared-memory kernel; every other plan
                // runs step by step.
                let fused = match precision {
                    Precision::F32 => Some(("f32", 4096)),
                    Precision::F64Internal => Some(("f64", 2048)),
                    Precision::Ozaki => None,
                };
                match fused {
                    Some((t, max)) if n.is_power_of_two() && (16..=max).contains(&n) => {
                        let k = format!("{}_{t}", FusedVariant::DEFAULT.kernel());
                        assert_eq!(kernels, [k], "{what}")
                    }
                    _ => assert!(kernels.iter().all(|k| !k.contains("fused")), "{what}"),
                }
                same_bits(&what, &download(&out, x.len()), &want);
                compared += x.len() / 2;
            }
        }
    }
    compared
}

/// Every plan kind through the device launch steps (`fft::cuda::transform`: DFT-GEMM,
/// Stockham radix 2/4/8 and mixed-radix 3/5/7 stages, Bluestein's chirp steps, the Ozaki GEMM and stages, plain
/// and on tensor cores) on rows with NaN, infinities, zeros and subnormals: every power of
/// two 2^1..2^16 (2^20 below), n <= 16, Bluestein sizes, three precisions, forward and
/// inverse, against the CPU plan.
#[test]
fn fft_plans_match_the_cpu() {
    // Up to 4096 points under the default schedules (index, reverse and a random order of
    // the threads and blocks), the larger ones under one: the same kernels, and the
    // emulator's checks make them the slowest cases by far.
    let check = |n: usize, mma: bool| {
        if n <= 4096 {
            check_fft_plan(n, mma)
        } else {
            cuda_emu::with_schedules(1, || check_fft_plan(n, mma))
        }
    };
    let mut total = 0;
    for p in 1..=16 {
        total += check(1 << p, p <= 12);
    }
    for n in [
        1, 3, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 17, 24, 100, 127, 1000, 1155, 4097, 12345,
        // Mixed radix (Stockham radix 8/4/2 then 7, 5, 3): odd n, the audio lengths.
        18, 21, 45, 343, 400, 480, 2187, 3125,
    ] {
        total += check(n, n <= 1000);
    }
    println!("{total} transformed values: device steps == CPU");
}

/// Every fused shared-memory kernel ([`FusedVariant`]: `repro_fft_fused_<t>`, the swizzled
/// `repro_fft_fused_swz_<t>` and `repro_fft_fused_swzv_<t>`) at every n it takes, launched
/// with fewer blocks than groups of rows, so that a block runs a second group after a first
/// one (no barrier at the end of a group, a partial last group), forward and inverse,
/// against the CPU plan; and the 8-byte variant on an input that is not 8-byte aligned (its
/// 4-byte path).
#[test]
fn fft_fused_kernel_strides_over_groups() {
    use candle_repro::fft::cuda::{
        FUSED_BLOCK_F32, FUSED_BLOCK_F64, FUSED_MAX_F32, FUSED_MAX_F64, FusedVariant,
        fused_launch_variant, fused_stages,
    };
    use candle_repro::fft::{FftPlan, Precision};
    use candle_repro::launch::{Device, Slot};
    let mut cases = Vec::new();
    for (precision, block, max) in [
        (Precision::F32, FUSED_BLOCK_F32, FUSED_MAX_F32),
        (Precision::F64Internal, FUSED_BLOCK_F64, FUSED_MAX_F64),
    ] {
        for log_n in 4..=max.trailing_zeros() {
            cases.push((1usize << log_n, precision, block));
        }
    }
    let mut compared = 0;
    for (n, precision, block) in cases {
        // Two full groups and a third of half as many rows (partial where a group has more
        // than one row), on 2 blocks.
        let per_group = (block / n).max(1);
        let rows = 2 * per_group + per_group.div_ceil(2);
        let plan = FftPlan::new(n, precision).unwrap();
        let tables = candle_repro::fft::cuda::upload_tables(&Emu, &plan).unwrap();
        let stages = fused_stages(&tables.plan).unwrap();
        for inverse in [false, true] {
            let x = fft_ref::special_rows(rows, n, 0x5EED ^ (n as u64) << 8 ^ inverse as u64);
            let z = fft_ref::deinterleave(&x);
            let mut want = vec![num_complex::Complex32::new(0.0, 0.0); z.len()];
            if inverse {
                plan.inverse_out_of_place(&z, &mut want).unwrap();
            } else {
                plan.forward_out_of_place(&z, &mut want).unwrap();
            }
            let want = Tensor::from_vec(fft_ref::interleave(&want), x.len(), &Cpu::Cpu).unwrap();
            // The input at element 0 of a buffer (8-byte aligned: the emulator's buffers
            // end at a page) and at element 1 of a buffer of 2 more values (4 bytes off).
            let (aligned, _) = upload(&Tensor::from_vec(x.clone(), x.len(), &Cpu::Cpu).unwrap());
            let mut padded = vec![0.5f32];
            padded.extend_from_slice(&x);
            padded.push(0.5);
            let (shifted, _) = upload(&Tensor::from_vec(padded, x.len() + 2, &Cpu::Cpu).unwrap());
            for variant in FusedVariant::ALL {
                let starts: &[usize] = if variant == FusedVariant::SwizzleVec && n <= 256 {
                    &[0, 1]
                } else {
                    &[0]
                };
                for &start in starts {
                    let buf = if start == 0 { &aligned } else { &shifted };
                    let mut out = Emu.alloc(DType::F32, x.len()).unwrap();
                    let table_len = Emu.len(&tables.table);
                    let pl = fused_launch_variant(
                        &tables.plan,
                        &stages,
                        rows,
                        inverse,
                        start,
                        table_len,
                        2,
                        variant,
                    );
                    assert_eq!(pl.grid.0, 2);
                    Emu.launch(
                        &pl,
                        &mut [Slot::In(buf), Slot::Out(&mut out), Slot::In(&tables.table)],
                    )
                    .unwrap();
                    let what = format!(
                        "fused {variant:?} n={n} {precision:?} rows={rows} inverse={inverse} start={start}"
                    );
                    same_bits(&what, &download(&out, x.len()), &want);
                    compared += x.len() / 2;
                }
            }
        }
    }
    println!("{compared} complex values through the fused kernels: device == CPU");
}

/// The plan of 2^20 points (its own test: the slowest case, run beside the others), under
/// one schedule.
#[test]
fn fft_plan_of_2_20_points_matches_the_cpu() {
    let total = cuda_emu::with_schedules(1, || check_fft_plan(1 << 20, false));
    println!("{total} transformed values: device steps == CPU");
}

#[path = "common/quant_oracle.rs"]
mod quant_oracle;

/// Every quantized block type, in the layout the tests use.
const QTYPES: [candle_core::quantized::GgmlDType; 15] = {
    use candle_core::quantized::GgmlDType as G;
    [
        G::F32,
        G::F16,
        G::BF16,
        G::Q4_0,
        G::Q4_1,
        G::Q5_0,
        G::Q5_1,
        G::Q8_0,
        G::Q8_1,
        G::Q2K,
        G::Q3K,
        G::Q4K,
        G::Q5K,
        G::Q6K,
        G::Q8K,
    ]
};

/// Row `row` (x values in dt) made to cancel against the weight row `w`: `steps`
/// positions (from the end, |w| within 16 of the row's largest finite weight) are cleared, then each in
/// turn takes the dtype's value nearest -(exact sum of the others) / w_t. Each step leaves
/// the rounding error of its x_t, so the exact sum ends about 2^-p per step below the
/// terms (p the dtype's precision) and an f64 sum of them is mostly rounding error.
fn cancel_row(row: &mut [f64], w: &[f64], dt: DType, steps: usize) {
    let f64_fmt = mpfr_oracle::Format {
        precision: 53,
        emin: -1022,
        emax: 1023,
    };
    let wz: Vec<f64> = w
        .iter()
        .map(|&v| if v.is_finite() { v } else { 0.0 })
        .collect();
    let big = wz.iter().fold(0f64, |a, &b| a.max(b.abs()));
    let picks: Vec<usize> = (0..w.len())
        .rev()
        .filter(|&q| big > 0.0 && wz[q].abs() >= big / 16.0)
        .take(steps)
        .collect();
    for &t in &picks {
        row[t] = 0.0;
    }
    for &t in &picks {
        let rest = mpfr_oracle::dot(row, &wz, None, f64_fmt);
        row[t] = quant_oracle::into_dtype(-rest / w[t], dt);
    }
}

/// The quantized product (x's stats kernel, then a product kernel: the decode kernel, one
/// warp per column, for m <= 4 rows, else one thread per output; each block decoder of
/// `kernels/quantized/blocks.cuh`, unpack and the per-element code / group_scale, tiers 1
/// to 3) for all 15 block types, f32/bf16/f16 inputs, k from one block to 3072 (416 and 421:
/// a partial chunk of 256 after a whole one), against the CPU op under the same starting
/// tier. Weight rows: random blocks with tame scales, scales over the
/// whole f16 range, extreme codes (all 0x00 or 0xFF), all-zero bytes, an inf scale, a NaN
/// scale. x rows: random over the dtype's range, with an inf, with a NaN, all +0, all -0,
/// and two that cancel against a weight row to far below their terms (an output decided
/// from its f64 sum without the error bound is misrounded there). m = 1 to 5 rows
/// (read through a start offset), with and without a bias (f32, bf16 or f16; contiguous or
/// strided; -0 and inf among its values), each tier forced.
#[test]
fn quantized_product_matches_the_cpu() {
    use candle_repro::matmul::CpuConfig;
    use candle_repro::quantized::{QMatMul, blocks, cuda as qcuda, qmatmul_with_config};
    use quant_oracle::*;
    let mut rng = Lcg(404);
    let mut outputs = 0;
    for (ti, ty) in QTYPES.into_iter().enumerate() {
        let (len, size) = block_geometry(ty);
        // Each dtype with one block, a few, and 3072 weights.
        for (di, dt, kc) in (0..9).map(|c| (c / 3, FLOATS[c / 3], c % 3)) {
            let k = match kc {
                0 if len == 1 => 1,
                0 => len,
                // Past one chunk of 256 (the decode kernel's lanes: a partial last chunk
                // for the 32-weight and float types).
                1 if len == 256 => 3 * len,
                1 => 13 * 32 + if len == 1 { 5 } else { 0 },
                _ => 3072,
            };
            let (n, rb) = (6, k / len * size);
            let mut wbytes = Vec::with_capacity(n * rb);
            for row in 0..n {
                // Rows 0 and 5 tame, 4 over the whole f16 range; 1 zero, 2 inf, 3 NaN.
                // Rows 0 and 4 (the x rows cancel against them) not all zero.
                loop {
                    let b = random_blocks(ty, k / len, &mut rng, row != 4);
                    let w = blocks::dequantize_exact(ty, &b).unwrap();
                    if !matches!(row, 0 | 4) || w.iter().any(|&v| v != 0.0) {
                        wbytes.extend(b);
                        break;
                    }
                }
            }
            wbytes[rb..2 * rb].fill(0);
            let (d, dmin) = scale_offsets(ty);
            if let Some(o) = dmin {
                // Row 4: d and dmin 2^24 apart, so that its weights need up to about 45
                // bits and their products with x more than f64's 53 (tier 2 then needs
                // the low parts of its TwoProducts).
                for blk in wbytes[4 * rb..5 * rb].chunks_exact_mut(size) {
                    let scale = |e: i32, rng: &mut Lcg| {
                        half::f16::from_f64((1.0 + rng.unit()) * 2f64.powi(e)).to_bits()
                    };
                    let (lo, hi) = (scale(-13, &mut rng), scale(11, &mut rng));
                    let (a, c) = if rng.below(2) == 0 {
                        (lo, hi)
                    } else {
                        (hi, lo)
                    };
                    blk[d..d + 2].copy_from_slice(&a.to_le_bytes());
                    blk[o..o + 2].copy_from_slice(&c.to_le_bytes());
                }
            }
            let put = |bytes: &mut [u8], at: usize, inf: bool| match ty {
                candle_core::quantized::GgmlDType::Q8K | candle_core::quantized::GgmlDType::F32 => {
                    let v = if inf { f32::INFINITY } else { f32::NAN };
                    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes())
                }
                candle_core::quantized::GgmlDType::BF16 => {
                    let v: u16 = if inf { 0x7F80 } else { 0x7FC1 };
                    bytes[at..at + 2].copy_from_slice(&v.to_le_bytes())
                }
                _ => {
                    let v: u16 = if inf { 0x7C00 } else { 0x7E01 };
                    bytes[at..at + 2].copy_from_slice(&v.to_le_bytes())
                }
            };
            put(&mut wbytes, 2 * rb + d, true);
            put(&mut wbytes, 4 * rb - size + d, false);
            let w = blocks::dequantize_exact(ty, &wbytes).unwrap();
            let q = QMatMul::from_qtensor(qtensor(ty, &wbytes, n, k)).unwrap();
            let wdev = qcuda::upload_weight(&Emu, &q).unwrap();

            let m = 7;
            let (lo, hi) = if dt == DType::F16 { (-6, 6) } else { (-40, 40) };
            let mut xv: Vec<f64> = (0..m * k).map(|_| rng.value(false, lo, hi)).collect();
            xv[k + (k - 1) / 2] = f64::INFINITY;
            xv[2 * k + k / 3] = f64::NAN;
            xv[3 * k..4 * k].fill(0.0);
            xv[4 * k..5 * k].fill(-0.0);
            for (i, j) in [(5, 0), (6, 4)] {
                let row = &mut xv[i * k..(i + 1) * k];
                for v in row.iter_mut() {
                    *v = into_dtype(rng.normal(), dt);
                }
                cancel_row(row, &w[j * k..(j + 1) * k], dt, 6);
            }
            let (_, x) = input(&xv, dt, (m, k));

            let bias_dt = FLOATS[(ti + di + kc) % 3];
            let mut bv: Vec<f64> = (0..n).map(|_| rng.value(false, -4, 4)).collect();
            bv[1] = if (di + kc) % 2 == 0 { -0.0 } else { 0.0 };
            if (ti + kc) % 4 == 0 {
                bv[5] = f64::INFINITY;
            }
            let (_, b) = input(&bv, bias_dt, (n, 1));
            let bias = if (ti + kc) % 2 == 0 {
                b.reshape(n).unwrap()
            } else {
                // Every other value of a longer vector: stride 2.
                Tensor::cat(&[&b, &b], 1).unwrap().i((.., 0)).unwrap()
            };
            // m <= 4 rows: the decode kernel (repro_qgemv_*); 5: one thread per output.
            for (off, rows) in [(5, 1), (5, 2), (2, 3), (0, 4), (0, 5), (2, 5)] {
                let xm = x.narrow(0, off, rows).unwrap();
                let (xb, xl) = upload(&xm);
                for with_bias in [false, true] {
                    let bias = with_bias.then_some(&bias);
                    let bias_up = bias.map(upload);
                    for start_tier in [None, Some(2), Some(3)] {
                        let cfg = CpuConfig {
                            start_tier,
                            ..CpuConfig::default()
                        };
                        let want = qmatmul_with_config(&q, &xm, bias, cfg).unwrap();
                        let (got, shape) = qcuda::qmatmul(
                            &Emu,
                            (&xb, &xl),
                            &wdev,
                            bias_up.as_ref().map(|(b, l)| (b, l)),
                            start_tier,
                        )
                        .unwrap();
                        let what = format!(
                            "qmatmul {ty:?} {dt:?} k={k} m={rows} bias={:?} tier={start_tier:?}",
                            bias.map(|b| b.dtype())
                        );
                        same_bits(&what, &download(&got, shape), &want);
                        outputs += rows * n;
                    }
                }
            }
        }
    }
    println!("{outputs} quantized outputs (15 types, 3 starting tiers): device == CPU");
}

/// Bad input to the device entry point is an error, not a panic or a wrong launch.
#[test]
fn quantized_product_rejects_bad_input() {
    use candle_core::quantized::GgmlDType;
    use candle_repro::quantized::{QMatMul, cuda as qcuda};
    let mut rng = Lcg(9);
    let (n, k) = (3, 64);
    let bytes = quant_oracle::random_blocks(GgmlDType::Q4_0, n * k / 32, &mut rng, true);
    let q = QMatMul::from_qtensor(quant_oracle::qtensor(GgmlDType::Q4_0, &bytes, n, k)).unwrap();
    let w = qcuda::upload_weight(&Emu, &q).unwrap();
    let run = |x: &Tensor, bias: Option<&Tensor>| {
        let (xb, xl) = upload(x);
        let bu = bias.map(upload);
        qcuda::qmatmul(&Emu, (&xb, &xl), &w, bu.as_ref().map(|(b, l)| (b, l)), None)
    };
    let x = tensor(2, k, 1, 1.0, DType::F32);
    assert!(run(&x, None).is_ok());
    assert!(
        run(&tensor(2, k + 32, 1, 1.0, DType::F32), None).is_err(),
        "k"
    );
    assert!(
        run(&x.to_dtype(DType::F64).unwrap(), None).is_err(),
        "dtype"
    );
    assert!(
        run(&tensor(k, 2, 1, 1.0, DType::F32).t().unwrap(), None).is_err(),
        "strided x"
    );
    let long = tensor(1, n + 1, 2, 1.0, DType::F32).reshape(n + 1).unwrap();
    assert!(run(&x, Some(&long)).is_err(), "bias length");
    let b64 = tensor(1, n, 2, 1.0, DType::F64).reshape(n).unwrap();
    assert!(run(&x, Some(&b64)).is_err(), "bias dtype");
}
