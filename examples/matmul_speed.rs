//! The correctly rounded matmul against stock candle's `Tensor::matmul`, same inputs,
//! timed in alternating rounds (wall time, best of `ROUNDS` each, on rayon's threads):
//! the shapes of the matmul issue (SmolLM2's MLP product, 1024^3, the decode GEMV) in
//! f32 and bf16. `RAYON_NUM_THREADS` sets the threads.
//!
//! For the GEMV rows it also prints the weight bandwidth against a copy of the same
//! bytes (one `memcpy`-like pass over a buffer of the weight's size).

use candle_core::{DType, Device, Tensor};
use std::time::Instant;

const ROUNDS: usize = 7;

fn best_of(f: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// Best times of a and b over alternating rounds.
fn ab(mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    let (mut ta, mut tb) = (f64::INFINITY, f64::INFINITY);
    a();
    b();
    for _ in 0..ROUNDS {
        ta = ta.min(best_of(&mut a));
        tb = tb.min(best_of(&mut b));
    }
    (ta, tb)
}

fn main() -> candle_core::Result<()> {
    let dev = Device::Cpu;
    println!(
        "threads: {}, vector path: {:?}",
        rayon::current_num_threads(),
        candle_repro::math::VectorPath::detect()
    );
    println!("| product | dtype | candle-repro ms | stock ms | stock / ours | GFLOP/s ours |");
    println!("|---|---|---|---|---|---|");
    let shapes: [(&str, usize, usize, usize, bool); 3] = [
        ("x (2048, 576) w (1536, 576)^T", 2048, 576, 1536, true),
        ("1024^3", 1024, 1024, 1024, false),
        ("decode x (1, 4096) w (4096, 4096)^T", 1, 4096, 4096, true),
    ];
    for (name, m, k, n, weight) in shapes {
        for dt in [DType::F32, DType::BF16] {
            let x = Tensor::randn(0f32, 1.0, (m, k), &dev)?.to_dtype(dt)?;
            let b = if weight {
                Tensor::randn(0f32, 1.0, (n, k), &dev)?.to_dtype(dt)?.t()?
            } else {
                Tensor::randn(0f32, 1.0, (k, n), &dev)?.to_dtype(dt)?
            };
            let (ours, stock) = ab(
                || {
                    candle_repro::matmul(&x, &b).unwrap();
                },
                || {
                    x.matmul(&b).unwrap();
                },
            );
            let gflops = 2.0 * (m * n * k) as f64 / ours / 1e9;
            println!(
                "| {name} | {dt:?} | {:.2} | {:.2} | {:.2}x | {gflops:.1} |",
                ours * 1e3,
                stock * 1e3,
                stock / ours
            );
            if m == 1 {
                let bytes = n * k * dt.size_in_bytes();
                let src = vec![1u8; bytes];
                let mut dst = vec![0u8; bytes];
                let copy = (0..ROUNDS)
                    .map(|_| {
                        let t = Instant::now();
                        dst.copy_from_slice(std::hint::black_box(&src));
                        std::hint::black_box(&dst);
                        t.elapsed().as_secs_f64()
                    })
                    .fold(f64::INFINITY, f64::min);
                println!(
                    "|   weight read | {dt:?} | {:.1} GB/s | copy {:.1} GB/s | {:.0}% of copy | |",
                    bytes as f64 / ours / 1e9,
                    bytes as f64 / copy / 1e9,
                    100.0 * copy / ours
                );
            }
        }
    }
    Ok(())
}
