// Hard cases per function, as f32 bit patterns: inputs whose exact result lies closest to a
// rounding boundary (found by `cargo run --release --example verify_math`) and the edges of
// each function's regimes (overflow and underflow thresholds, switch points).
fn candle_repro_hard_cases(func: Func) -> Vec<f32> {
    let bits: &[u32] = match func {
        Func::Exp => &[],
        Func::Expm1 => &[],
        Func::Log => &[
            // nearest to a rounding boundary (hybrid exhaustive check, 2^-34..2^-29 ulp)
            0x65d890d3, 0x4c5d65a5, 0x4d604ebe, 0x41178feb, 0x1f116ab8, 0x66a8c860, 0x3c413d3a,
            0x6f31a8ec, 0x38dcbe38, 0x4665a9a6, 0x5ee8984e, 0x3bf86ef0,
            // around 1 and the edges of the table interval that holds 1
            0x3f7fffff, 0x3f800001, 0x3f7f8000, 0x3f7f7fff, 0x3f808000, 0x3f807fff,
            // largest subnormal, smallest normal + 1 ulp
            0x007fffff, 0x00800001,
        ],
        Func::Log1p => &[
            // nearest to a rounding boundary (hybrid exhaustive check, 2^-43..2^-29 ulp)
            0x35400003, 0xb53ffffd, 0x65d890d3, 0x3efd81ad, 0x3710001b, 0xb70fffe5, 0x55185f82,
            0x41078feb, 0x66a8c860, 0xbb0ec8c4, 0x6f31a8ec, 0x3770004b,
            // next to -1; tiny arguments; where 1 + x stops being exact in f64
            0xbf7fffff, 0xbf7ffffe, 0x33000000, 0xb3000000, 0x33800001, 0xb3800001, 0x4e000000,
            0x4e000001, 0x2f800000, 0xaf800000,
            // edges of the table interval that holds 1: 1 + x = 1 - 2^-9, 1 + 2^-8
            0xbb000000, 0x3b800000,
        ],
        Func::Sin => &[
            // regime edges: tiny-x shortcut (2^-26), no-reduction bound (2^-6), fast domain (2^31)
            0x3280_0000, 0x327F_FFFF, 0x3C80_0000, 0x3C7F_FFFF, 0x4F00_0000, 0x4EFF_FFFF,
            // f32 nearest pi, 2pi; inputs closest to multiples of pi (exact reduction scan)
            0x4049_0FDB, 0x40C9_0FDB, 0x6FF9_BE45, 0x5123_E87F, 0x7079_BE45, 0x51A3_E87F,
            0x43FC_E5F1, 0x70F9_BE45, 0x6A99_76F1, 0x5431_46A6, 0x6609_8498, 0x77D8_4625,
            // closest approach to a multiple of pi/64 over all f32, and below 2^17
            0x6CF9_BE45, 0x40FC_E5F1,
            // results within 2^-50 of a rounding boundary (hybrid exhaustive scan)
            0x3DCF_5597, 0x3EF3_830F,
        ],
        Func::Cos => &[
            // cos(2^-12) = 1 - 2^-25 + 2^-52.6: just above a midpoint; regime edges
            0x3980_0000, 0x3280_0000, 0x327F_FFFF, 0x3C80_0000, 0x3C7F_FFFF, 0x4F00_0000,
            0x4EFF_FFFF,
            // f32 nearest pi/2; inputs closest to odd multiples of pi/2 (exact reduction scan)
            0x3FC9_0FDB, 0x6F79_BE45, 0x50A3_E87F, 0x437C_E5F1, 0x6A19_76F1, 0x53B1_46A6,
            0x6589_8498, 0x7758_4625, 0x4C23_32E9, 0x4096_CBE4, 0x6C55_DA58, 0x5C07_BCD0,
            0x474D_246F,
            // results within 2^-50 of a rounding boundary (hybrid exhaustive scan)
            0x3C10_7FE6,
        ],
        Func::Tanh => &[],
        Func::Sigmoid => &[],
        Func::Silu => &[],
        Func::Softplus => &[],
    };
    bits.iter().map(|&b| f32::from_bits(b)).collect()
}
