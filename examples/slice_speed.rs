//! Per-element cost of the slice kernels against the std/libm call that stock candle's CPU
//! ops make per element, one thread, 1M f32 arguments in [-8, 8) (|x| for log), best of 15
//! in thread CPU time, so that other work on a shared machine does not count.
//!
//! `cargo run --release --example slice_speed` (Linux; the criterion bench
//! `cargo bench --bench elementwise -- slice` measures the same pairs in wall time).

use candle_repro::math;

mod common;

use common::best_cpu_time;

fn main() {
    let n = 1 << 20;
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let x: Vec<f32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0
        })
        .collect();
    let x_pos: Vec<f32> = x.iter().map(|v| v.abs()).collect();
    let mut out = vec![0f32; n];
    println!(
        "{:<9} {:>12} {:>12} {:>7}",
        "function", "ours ns/el", "std ns/el", "ratio"
    );
    macro_rules! row {
        ($name:literal, $ours:expr, $arg:expr, |$v:ident| $stock:expr) => {{
            let ours = best_cpu_time(15, || $ours(std::hint::black_box(&$arg), &mut out));
            let stock = best_cpu_time(15, || {
                for (o, &$v) in out.iter_mut().zip(std::hint::black_box(&$arg).iter()) {
                    *o = $stock;
                }
            });
            let per = |t: f64| t * 1e9 / n as f64;
            println!(
                "{:<9} {:>12.2} {:>12.2} {:>6.2}x",
                $name,
                per(ours),
                per(stock),
                stock / ours
            );
        }};
    }
    row!("exp", math::exp_slice, x, |v| v.exp());
    row!("log", math::log_slice, x_pos, |v| v.ln());
    row!("log10", math::log10_slice, x_pos, |v| v.log10());
    row!("sin", math::sin_slice, x, |v| v.sin());
    row!("cos", math::cos_slice, x, |v| v.cos());
    row!("tanh", math::tanh_slice, x, |v| v.tanh());
    row!("sigmoid", math::sigmoid_slice, x, |v| 1.0
        / (1.0 + (-v).exp()));
    row!("silu", math::silu_slice, x, |v| v / (1.0 + (-v).exp()));
    row!("softplus", math::softplus_slice, x, |v| (v.exp() + 1.0)
        .ln());
    // What candle's CPU ops run per element for gelu (tanh form), gelu_erf and erf (candle's
    // own erf).
    row!("gelu", math::gelu_slice, x, |v| 0.5
        * v
        * (1.0 + (0.797_884_6 * v * (1.0 + 0.044715 * v * v)).tanh()));
    row!(
        "gelu_erf",
        math::gelu_erf_slice,
        x,
        |v| (candle_core::cpu::erf::erf_f32(v * std::f32::consts::FRAC_1_SQRT_2) + 1.0) * 0.5 * v
    );
    row!("erf", math::erf_slice, x, |v| {
        candle_core::cpu::erf::erf_f32(v)
    });
}
