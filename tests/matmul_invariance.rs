//! The matmul's output bits do not depend on how or where a row is computed: alone (m = 1,
//! the decode GEMV) or inside a batch of 512 (prefill), at any batch position, on 1 or 2
//! threads, on every vector path, with any k-blocking, GEMV on or off, and whichever tier
//! decides. Stock candle's matmul is run on the same inputs, and how many of its outputs
//! change between decode and prefill is printed.

use candle_core::{DType, Device, IndexOp, Module, Tensor};
use candle_repro::math::VectorPath;
use candle_repro::matmul::{CpuConfig, matmul_with_config};

mod common;
use common::{bits, fnv1a as fnv};

fn randn(shape: (usize, usize), dt: DType, seed: u64) -> Tensor {
    // Deterministic pseudo-normal values (candle's randn has no seed on the CPU).
    let n = shape.0 * shape.1;
    let mut s = seed;
    let v: Vec<f32> = (0..n)
        .map(|_| {
            let mut t = 0.0f32;
            for _ in 0..4 {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                t += (s >> 40) as f32 / (1u64 << 24) as f32;
            }
            (t - 2.0) * 1.7
        })
        .collect();
    Tensor::from_vec(v, shape, &Device::Cpu)
        .unwrap()
        .to_dtype(dt)
        .unwrap()
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn decode_equals_prefill_at_every_batch_position() {
    let (m, k, n) = (512, 576, 1536);
    for dt in [DType::F32, DType::BF16, DType::F16] {
        let x = randn((m, k), dt, 1);
        let w = randn((n, k), dt, 2);
        let wt = w.t().unwrap();
        let full = bits(&candle_repro::matmul(&x, &wt).unwrap());
        let stock_full = bits(&x.matmul(&wt).unwrap());
        let mut stock_changed = 0;
        for r in [0usize, 77, 300, 511] {
            let row = x.i(r..r + 1).unwrap();
            let alone = bits(&candle_repro::matmul(&row, &wt).unwrap());
            assert_eq!(
                alone,
                full[r * n..(r + 1) * n],
                "{dt:?} row {r}: decode != prefill"
            );
            // The same row at another position of another batch.
            let other = randn((9, k), dt, 3 + r as u64);
            let batch =
                Tensor::cat(&[&other.i(0..5).unwrap(), &row, &other.i(5..9).unwrap()], 0).unwrap();
            let in_batch = bits(&candle_repro::matmul(&batch, &wt).unwrap());
            assert_eq!(
                in_batch[5 * n..6 * n],
                full[r * n..(r + 1) * n],
                "{dt:?} row {r} in a batch of 10"
            );
            let stock_alone = bits(&row.matmul(&wt).unwrap());
            stock_changed += (0..n)
                .filter(|&j| stock_alone[j] != stock_full[r * n + j])
                .count();
        }
        println!(
            "{dt:?} x ({m}, {k}) w ({n}, {k})^T: candle-repro decode vs prefill 0 of {} outputs differ; stock candle {stock_changed} of {}",
            4 * n,
            4 * n
        );
    }
}

/// Every configuration gives the bits of the default one. Every path's register tile runs
/// here; a path the CPU lacks runs its tile with the widest instruction set it has.
#[test]
fn threads_vector_paths_blocking_and_tiers_do_not_change_a_bit() {
    for dt in [DType::F32, DType::BF16, DType::F16] {
        for (m, k, n) in [(3usize, 700usize, 130usize), (200, 600, 300), (1, 1000, 70)] {
            let x = randn((m, k), dt, 10 + m as u64);
            let w = randn((n, k), dt, 20 + n as u64);
            let wt = w.t().unwrap();
            let b = randn((1, n), dt, 30).squeeze(0).unwrap();
            let want_plain = bits(&candle_repro::matmul(&x, &wt).unwrap());
            let want_bias = bits(&candle_repro::matmul_bias(&x, &wt, &b).unwrap());
            let mut runs = 0;
            for threads in [1usize, 2] {
                for path in [VectorPath::Baseline, VectorPath::Avx2, VectorPath::Avx512] {
                    for kc_max in [16usize, 100, 640] {
                        for gemv in [true, false] {
                            // bf16 and f16 GEMMs: each route forced (the default takes one).
                            let routes: &[Option<bool>] = if dt != DType::F32 && !gemv {
                                &[Some(true), Some(false)]
                            } else {
                                &[None]
                            };
                            for &float_route in routes {
                                let cfg = CpuConfig {
                                    path,
                                    kc_max,
                                    gemv,
                                    start_tier: None,
                                    int_tier: Some(true),
                                    int_tiled: false,
                                    int_tier_short_blocks: false,
                                    float_route,
                                };
                                let (plain, bias) = in_pool(threads, || {
                                    (
                                        bits(
                                            &matmul_with_config(&x, &wt, None, None, cfg).unwrap(),
                                        ),
                                        bits(
                                            &matmul_with_config(&x, &wt, Some(&b), None, cfg)
                                                .unwrap(),
                                        ),
                                    )
                                });
                                assert_eq!(
                                    plain, want_plain,
                                    "{dt:?} {m}x{k}x{n} {threads} threads {cfg:?}"
                                );
                                assert_eq!(
                                    bias, want_bias,
                                    "{dt:?} {m}x{k}x{n} {threads} threads {cfg:?} bias"
                                );
                                runs += 1;
                            }
                        }
                    }
                }
            }
            for tier in [2u8, 3] {
                let cfg = CpuConfig {
                    start_tier: Some(tier),
                    ..CpuConfig::default()
                };
                let got = bits(&matmul_with_config(&x, &wt, None, None, cfg).unwrap());
                assert_eq!(got, want_plain, "{dt:?} {m}x{k}x{n} from tier {tier}");
            }
            println!(
                "{dt:?} {m}x{k}x{n}: {runs} configurations (tiles of all three paths; instruction sets {:?}): identical",
                VectorPath::available()
            );
        }
    }
}

#[test]
fn layouts_and_batching_do_not_change_a_bit() {
    let (b, s, k, n) = (3, 17, 96, 40);
    for dt in [DType::F32, DType::BF16] {
        let x = randn((b * s, k), dt, 40).reshape((b, s, k)).unwrap();
        let w = randn((n, k), dt, 41);
        let bias = randn((1, n), dt, 42).squeeze(0).unwrap();
        let lin = candle_repro::nn::Linear::new(w.clone(), Some(bias.clone()));
        let y = bits(&lin.forward(&x).unwrap());
        // Each batch element alone, as a 2-D product with a fused bias.
        for bi in 0..b {
            let yb = bits(
                &candle_repro::matmul_bias(&x.i(bi).unwrap(), &w.t().unwrap(), &bias).unwrap(),
            );
            assert_eq!(
                yb,
                y[bi * s * n..(bi + 1) * s * n],
                "{dt:?} batch element {bi}"
            );
        }
        // A strided x (a transposed view made contiguous the other way round).
        let xt = x
            .transpose(1, 2)
            .unwrap()
            .contiguous()
            .unwrap()
            .transpose(1, 2)
            .unwrap();
        assert!(!xt.is_contiguous());
        assert_eq!(bits(&lin.forward(&xt).unwrap()), y, "{dt:?} strided input");
        // Batched 3-D products against a weight broadcast over the batch.
        let wb = w
            .t()
            .unwrap()
            .unsqueeze(0)
            .unwrap()
            .broadcast_as((b, k, n))
            .unwrap();
        let yb = bits(&candle_repro::matmul(&x, &wb).unwrap());
        let y0 =
            bits(&candle_repro::matmul(&x.reshape((b * s, k)).unwrap(), &w.t().unwrap()).unwrap());
        assert_eq!(yb, y0, "{dt:?} batched vs folded");
        assert_eq!(
            bits(&candle_repro::broadcast_matmul(&x, &w.t().unwrap()).unwrap()),
            y0,
            "{dt:?} broadcast_matmul"
        );
    }
}

/// Golden hashes of a fixed product per dtype (x (64, 576) times w (96, 576)^T plus a
/// bias), computed by this code once and kept: a change of any output bit shows here.
#[test]
fn golden_hashes() {
    let golden: [(DType, u64); 4] = [
        (DType::F32, 0xba9c_26e1_629f_2640),
        (DType::BF16, 0x5180_c088_f12b_ee8b),
        (DType::F16, 0x4c27_f212_6742_9555),
        (DType::F8E4M3, 0xda13_3305_08ca_714e),
    ];
    let got: Vec<(DType, u64)> = golden
        .iter()
        .map(|&(dt, _)| {
            let x = randn((64, 576), dt, 71);
            let w = randn((96, 576), dt, 72);
            let out_dt = if dt == DType::F8E4M3 { DType::F32 } else { dt };
            let b = randn((1, 96), out_dt, 73).squeeze(0).unwrap();
            let y = matmul_with_config(&x, &w.t().unwrap(), Some(&b), None, CpuConfig::default())
                .unwrap();
            (dt, fnv(&bits(&y)))
        })
        .collect();
    assert_eq!(got, golden, "output bits changed (got {got:x?})");
}
