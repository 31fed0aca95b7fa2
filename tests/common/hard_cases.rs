// Hard cases per function, as f32 bit patterns: inputs whose exact result lies closest to a
// rounding boundary (found by `cargo run --release --example verify_math`) and the edges of
// each function's regimes (overflow and underflow thresholds, switch points).
fn candle_repro_hard_cases(func: Func) -> Vec<f32> {
    let bits: &[u32] = match func {
        Func::Exp => &[
            // nearest to a rounding boundary (hybrid exhaustive check, 2^-28.7..2^-26.6 ulp)
            0xC16912CD, 0xBBF0EDF1, 0xC2B2E798, 0x377EFF81, 0xBAE0E25C, 0xB3000000, 0x39C6BE5B,
            0x38E69CC1, 0x383A3EF1, 0x3D1A274E,
            // overflow: 88.72283 is the last finite result
            0x42B17217, 0x42B17218,
            // underflow: e^x crosses 2^-150 (half the smallest subnormal) near -103.97208
            0xC2CFF1B3, 0xC2CFF1B4, 0xC2CFF1B5,
            // fast-domain edges +-128 and the accurate path's -110 cut
            0x43000000, 0x43000001, 0xC3000000, 0xC3000001, 0xC2DC0000, 0xC2DC0001,
        ],
        Func::Expm1 => &[
            // nearest to a rounding boundary (hybrid exhaustive check, 2^-29.1..2^-26.3 ulp)
            0x3DC252DD, 0x3A254E7A, 0x34CA62C1, 0xB675CBFC, 0x33B504F3, 0xBB7B3B6C, 0x36322B1B,
            0xB3800000, 0x40315B33, 0x4001B249,
            // e^x - 1 reaches -1 after rounding: e^x crosses 2^-25 near -17.32868
            0xC18AA122, 0xC18AA123, 0xC18AA124,
            // tiny x: expm1(x) rounds to x below about 2^-24
            0x33000000, 0xB3000000, 0x33800000, 0x34000000, 0xB4000000,
            // overflow, fast-domain edges, the k = 0 / k = +-1 reduction boundary (ln2/256)
            0x42B17217, 0x42B17218, 0x43000000, 0xC3000000, 0xC2DC0000, 0x3B317218, 0xBB317218,
        ],
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
        // log10: nearest to a rounding boundary (hybrid exhaustive check: the first four
        // have f64 references exactly on a midpoint, MPFR decided them; the rest 2^-29 ulp;
        // then 0x0a4d4ce8, whose fast value lies exactly on a midpoint like those four's,
        // from the hard-input scan), exact results 10^k (k = 1..10), f32 nearest 0.1, 0.01, 0.001, and log's
        // regime edges (around 1, the table interval that holds 1, subnormal / normal).
        Func::Log10 => &[
            0x62a6c1dd, 0x610567e4, 0x45bdedc8, 0x0efeee7a, 0x6f592c3c, 0x65903d25, 0x604df02c,
            0x4dff4ddc, 0x43079cce, 0x427a28e9, 0x2f149212, 0x13ae78d3, 0x0a4d4ce8,
            0x41200000, 0x42C80000, 0x447A0000, 0x461C4000, 0x47C35000, 0x49742400, 0x4B189680,
            0x4CBEBC20, 0x4E6E6B28, 0x501502F9, 0x3DCCCCCD, 0x3C23D70A, 0x3A83126F,
            0x3f7fffff, 0x3f800001, 0x3f7f8000, 0x3f7f7fff, 0x3f808000, 0x3f807fff,
            0x007fffff, 0x00800001,
        ],
        Func::Sin => &[
            // regime edges: tiny-x shortcut (2^-26), no-reduction bound (2^-6), fast domain (2^31)
            0x3280_0000, 0x327F_FFFF, 0x3C80_0000, 0x3C7F_FFFF, 0x4F00_0000, 0x4EFF_FFFF,
            // f32 nearest pi, 2pi; inputs closest to multiples of pi (exact reduction scan)
            0x4049_0FDB, 0x40C9_0FDB, 0x6FF9_BE45, 0x5123_E87F, 0x7079_BE45, 0x51A3_E87F,
            0x43FC_E5F1, 0x70F9_BE45, 0x6A99_76F1, 0x5431_46A6, 0x6609_8498, 0x77D8_4625,
            // closest approach to a multiple of pi/64 over all f32, and below 2^17
            0x6CF9_BE45, 0x40FC_E5F1,
            // results within about 2^-50 of a rounding boundary (exhaustive f32 scan)
            0x3DCF_5597, 0x3EF3_830F, 0x42D4_4528, 0x4371_ADE3, 0x45A8_ABB3, 0x4619_9998,
            0x4967_CB9B, 0x4A98_7933, 0x4AA5_A796, 0x4ECD_11C7, 0x4FB5_6937, 0x55CA_FB2A,
            0x58DF_B085, 0x5A93_5F4C, 0x5CDA_A4F7, 0x5DAD_D689, 0x5F20_8D82, 0x616D_8730,
            0x61DF_C847, 0x6446_CEC0, 0x653C_EE8F, 0x6705_1B8D, 0x67A9_242B, 0x6A3F_60FF,
            0x6D73_4599, 0x6DCE_A82E, 0x6E64_9053, 0x7324_3F06, 0x79D1_F6D3, 0x7A5A_ACDB,
            0x7A81_7B08, 0x7C2E_964A, 0x7F2A_2CA7,
        ],
        Func::Cos => &[
            // cos(2^-12) = 1 - 2^-25 + 2^-52.6: just above a midpoint; regime edges
            0x3980_0000, 0x3280_0000, 0x327F_FFFF, 0x3C80_0000, 0x3C7F_FFFF, 0x4F00_0000,
            0x4EFF_FFFF,
            // f32 nearest pi/2; inputs closest to odd multiples of pi/2 (exact reduction scan)
            0x3FC9_0FDB, 0x6F79_BE45, 0x50A3_E87F, 0x437C_E5F1, 0x6A19_76F1, 0x53B1_46A6,
            0x6589_8498, 0x7758_4625, 0x4C23_32E9, 0x4096_CBE4, 0x6C55_DA58, 0x5C07_BCD0,
            0x474D_246F,
            // results within about 2^-50 of a rounding boundary (exhaustive f32 scan)
            0x3980_0000, 0x3A0F_1BBD, 0x3A54_4395, 0x3C10_7FE6, 0x4237_8DB8, 0x4247_90CE,
            0x46F8_5A22, 0x47A0_E238, 0x4A01_DCA4, 0x4E5B_65FF, 0x504B_E581, 0x52D9_D3FE,
            0x52F8_8494, 0x55E5_235D, 0x5922_AA80, 0x5944_3C0A, 0x5A1A_3626, 0x5A8C_921B,
            0x5F18_B878, 0x6115_CB11, 0x6170_3976, 0x6978_E912, 0x744F_D5D8, 0x75DA_4C95,
            0x76D7_173F, 0x77F7_B624, 0x7908_CD73, 0x797C_EF4F, 0x7A38_AB34, 0x7A4B_1A27,
            0x7C64_841E, 0x7C69_AE1E, 0x7DB9_1687,
        ],
        // Closest to midpoints (hybrid exhaustive check of x in [0, 10], tanh is odd), the
        // saturation to 1 (9.0109), the series/expm1 switch (2^-25), the clamp (20), and
        // x ~ 2^-12 where x^3/3 is about half an ulp of x.
        Func::Tanh => &[
            0x3ac37de2, 0x3eee0566, 0x40acb4d0, 0xbac37de2, 0xbeee0566, 0xc0acb4d0, 0x41102cb3,
            0x41102cb4, 0xc1102cb4, 0x32ffffff, 0x33000000, 0xb3000000, 0x419fffff, 0x41a00000,
            0x41a00001, 0xc1a00000, 0x39800000, 0x39b504f3, 0x3a000000,
        ],
        // 1/2 + x/4 - x^3/48 next to midpoints (2^-23, -2^-24, ...), closest non-structural
        // cases, the switch at x = -1 and at x/2 = 2^-25, saturation (17.3287 -> 1,
        // -103.972 -> 0), the accurate path's limits (40, -200) and the fast domain's (700).
        Func::Sigmoid => &[
            0x34000000, 0x34c00000, 0x35200000, 0xb3800000, 0xb4400000, 0xb4a00000, 0x38008000,
            0xb7808000, 0x3a689801, 0x3b128604, 0x3d21bc81, 0x3e8dffaf, 0xba928601, 0xbda363f4,
            0xbe104170, 0xbf1964d0, 0xbf800000, 0xbf800001, 0x337fffff, 0x33800000, 0x421fffff,
            0x42200000, 0xc3480000, 0xc3480001, 0x442f0000, 0x442f0001, 0xc42f0000, 0xc42f0001,
            0x418aa122, 0x418aa123, 0xc2cff1b4, 0xc2cff1b5,
        ],
        // Subnormal x (x/2 is a midpoint, x^2/4 decides), x/2 + x^2/4 next to midpoints,
        // closest non-structural cases, the switch at x = -1, underflow (-108.66),
        // silu(x) = x from 16.677, the accurate path's limits (40, -200) and 700.
        Func::Silu => &[
            0x00000001, 0x00000003, 0x80000001, 0x80000003, 0x007fffff, 0x00800001, 0x80800001,
            0x34000000, 0x35400000, 0x33b504f3, 0x35e24630, 0x3711c456, 0x37c6e079, 0x37f58941,
            0x38126c8e, 0x3958ec88, 0x395f8905, 0x3afa4289, 0x3c3e6610, 0x3c99acda, 0x3ecea6b0,
            0x3f9290c2, 0xb3b504f3, 0xb5e24630, 0xb711c456, 0xb7c6e079, 0xb7f58941, 0xb8126c8e,
            0xb958ec88, 0xb95f8905, 0xbafa4289, 0xbc3e6610, 0xbc99acda, 0xbf503320, 0xc0a8fb13,
            0xc1ee41a0, 0xbf800000, 0xbf800001, 0xc2d95213, 0xc2d95214, 0x41856a70, 0x41856a71,
            0x421fffff, 0x42200000, 0xc3480000, 0xc3480001, 0x442f0000, 0xc42f0000, 0xc42f0001,
        ],
        // Closest to midpoints (hybrid exhaustive check of [-112, 20]), ln2 + x/2 near 0,
        // underflow (-103.972), softplus(x) = x from 14.556, the accurate path's limits
        // (40, -200) and the fast domain's (-700).
        Func::Softplus => &[
            0x398b9622, 0x39c4c3c9, 0x39ea41d0, 0x3a294d42, 0x3ad68ba7, 0x3aef7621, 0x3fd7f6b4,
            0x40a3f888, 0xb36fa39f, 0xb6addf56, 0xb8dc1f6f, 0xba095059, 0xba41eced, 0xbe6064b3,
            0xbee22485, 0xbf29a208, 0xc11559bf, 0x34000000, 0xb4000000, 0xc2cff1b4, 0xc2cff1b5,
            0x4168e5bf, 0x4168e5c0, 0x421fffff, 0x42200000, 0xc3480000, 0xc3480001, 0xc42f0000,
            0xc42f0001,
        ],
        // erf: nearest to a rounding boundary (hybrid exhaustive check, 0..2^-26 ulp; the
        // tiny ones are 2/sqrt(pi) x for x = c 2^k), the interval edges of the fast table
        // near 0 (1/16) and the switch from the series to the Taylor expansion of M (1),
        // saturation to 1 (3.9192059) and the clamp / accurate saturation (6); tiny x.
        Func::Erf => &[
            0x3940EAD6, 0xB940EAD6, 0x39C0057D, 0xB9C0057D, 0x36AEA466, 0xB6AEA466, 0x358E9D2D,
            0xB58E9D2D, 0xB22A320C, 0xB1AA320C, 0xB12A320C, 0xB0AA320C,
            0x3D800000, 0x3D7FFFFF, 0xBD800000, 0x3F800000, 0x3F7FFFFF, 0xBF800000, 0x407AD444,
            0x407AD445, 0xC07AD445, 0x40C00000, 0x40BFFFFF, 0xC0C00000, 0x00000003, 0x80000003,
            0x33800000, 0x2F800000,
        ],
        // gelu: nearest to a rounding boundary (hybrid exhaustive check, 0..2^-26.7 ulp;
        // 0x00FFFFFF: x/2 a midpoint just below the normals), subnormal x (x/2 a midpoint,
        // A x^2/4 decides), the tanh / exp switches at +-1, gelu(x) = x from 4.9941 on,
        // underflow to -0 (-10.7709), the fast domain's end and the accurate path's
        // saturation (-12), the saturation at 8.
        Func::Gelu => &[
            0xB7B0A46F, 0x37B0A46F, 0x00FFFFFF, 0x38028E89, 0xB8028E89, 0x334AA765, 0xB34AA765,
            0xC0773385, 0xBB9377A9, 0xB7F5C377, 0x3F414D8F,
            0x00000001, 0x00000003, 0x80000001, 0x80000003, 0x007FFFFF, 0x807FFFFF, 0x3F800000,
            0x3F7FFFFF, 0xBF800000, 0xBF7FFFFF, 0x409FCFF8, 0x409FCFF9, 0xC12C5579, 0xC12C557A,
            0xC1400000, 0xC1400001, 0xC13FFFFF, 0x41000000, 0x40FFFFFF,
        ],
        // gelu_erf: nearest to a rounding boundary (hybrid exhaustive check, 0..2^-27 ulp;
        // near 0 gelu_erf and gelu agree to x^2, so they share the tiny cases), subnormal
        // x, the series / Taylor switches at +-1, gelu_erf(x) = x from 5.3475 on,
        // underflow to -0 (-14.3560), the fast domain's end and the accurate path's
        // saturation (-15), the saturation at 9.
        Func::GeluErf => &[
            0x37B0A46F, 0xB7B0A46F, 0x00FFFFFF, 0xC1092947, 0xB8CA1BE2, 0x38CA1BE2, 0xBE493CC6,
            0xB8028E89, 0x3EADA244, 0x38028E89, 0xB34AA765,
            0x00000001, 0x00000003, 0x80000001, 0x80000003, 0x007FFFFF, 0x807FFFFF, 0x3F800000,
            0x3F7FFFFF, 0xBF800000, 0xBF7FFFFF, 0x40AB1ED8, 0x40AB1ED9, 0xC165B274, 0xC165B275,
            0xC1700000, 0xC1700001, 0xC16FFFFF, 0x41100000, 0x410FFFFF,
        ],
    };
    bits.iter().map(|&b| f32::from_bits(b)).collect()
}
