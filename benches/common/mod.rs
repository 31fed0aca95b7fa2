//! Helpers shared by the benches (`mod common;`).

/// A deterministic spread of `n` values in [-half_range, half_range) (xorshift64).
pub fn input(n: usize, half_range: f32) -> Vec<f32> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * (2.0 * half_range) - half_range
        })
        .collect()
}
