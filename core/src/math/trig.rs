//! Sine and cosine (radians), correctly rounded for every f32, bf16 and f16 input.
//!
//! # Algorithm
//!
//! Both functions write x = j*pi/64 + r (mod 2*pi), j in 0..128, |r| <= pi/128, and use
//! sin x = S_j cos r + C_j sin r, cos x = C_j cos r - S_j sin r with a 128-entry table
//! S_j = sin(2*pi*j/128), C_j = S_(j+32 mod 128) (double-double; the fast path uses the
//! `hi` parts, the correctly rounded doubles). S_0, S_32, S_64, S_96 are exactly 0, 1, 0, -1.
//!
//! **Fast path** (|x| < 2^31, branch-free f64): k = round(x * 64/pi) with the 1.5*2^52
//! trick (j = k mod 128 is read from the sum's low bits); Cody-Waite reduction
//! r = ((((x - k P1) - k P2) - k P3) - k P4) - k P5 where P1..P4 hold the bits of pi/64 of
//! weights 2^-5..2^-21, 2^-22..2^-38, 2^-39..2^-55, 2^-56..2^-72 and P5 the rest rounded
//! (|pi/64 - P1 - ... - P5| < 2^-127.9). Then Taylor polynomials
//! sin r = r + r^3 (c3 + c5 z + c7 z^2), cos r = 1 + z (c2 + c4 z + c6 z^2), z = r^2,
//! in Horner form, and the angle-addition formula above.
//!
//! Error bound of the fast path (relative, before the final rounding), u = 2^-53:
//! * reduction: |k| < 2^36, so every k Pi (i <= 4) is exact. For k != 0, x >= 2^-6 is a
//!   multiple of 2^-29; x - k P1 is a multiple of 2^-29 below 2^15 (45 bits), the next
//!   difference a multiple of 2^-38 below 2^-2 (37 bits), the next a multiple of 2^-55 below
//!   2^-5 (51 bits): all exact. Two roundings remain: - k P4 (u (|r| + 2^-36)) and - k P5
//!   (u |r|), plus the rounding of k P5 and the truncation of pi/64 (2^-89 + 2^-90
//!   absolute). The smallest |r| of any f32 is 2^-34.2 (|x * 64/pi - k| >= 2^-29.86 over all
//!   f32 >= 2^-6, exhaustive scan with the exact reduction below), so r has relative error
//!   <= 2.72u = 2^-51.56. (k may miss the nearest integer by one when x * 64/pi is within
//!   2^-16 of a half-integer: then |r| <= pi/128 (1 + 2^-15), which changes nothing below.)
//! * polynomials: truncation <= r^8/9! < 2^-61 (sin), r^8/8! < 2^-58 (cos) relative; the
//!   correction terms are below 1.01e-4 (sin) and 3.1e-4 (cos) of the result, so their
//!   own rounding errors add < 2^-64; the final addition adds u: sin r within 2^-51.1,
//!   cos r within 2^-52.8;
//! * combination: table entries (u), two products (u each), one sum (u). Where neither
//!   term vanishes (j not in {0, 32, 64, 96} for the vanishing one) |S_j cos r| + |C_j sin r|
//!   <= 3.01 |sin x| (worst at j = 1: 0.0736 vs 0.0245), so the error is at most
//!   3.01 (2^-51.1 + 2u) + u < 2^-48.8; where one term vanishes the other is an exact
//!   product by +-1 and the bound is that of sin r or cos r.
//!
//! FAST_REL_ERR = 2^-47 leaves a margin of 1.8 bits over this; measured maximum over a
//! sample of 1/29 of all f32 below 2^31: 2^-50.98 (sin), 2^-51.01 (cos).
//!
//! **Accurate path** (every finite x, double-double):
//! * |x| < 2^-26: sin x = x - x^3/6, cos x = 1 - x^2/2 (the omitted terms are below 2^-108
//!   of the result); x^3/6 (< 2^-54.6 |x|) may underflow, then x itself is returned: it is
//!   representable in the output format (the input is) and the exact value lies far closer
//!   to it than to any rounding boundary, so the final rounding is the same.
//! * 2^-26 <= |x| < 2^-6: r = |x| exactly, j = 0.
//! * otherwise the exact Payne-Hanek reduction `reduce_pi64`: |x| = m 2^e with a 24-bit
//!   integer m; x * 64/pi mod 128 only depends on the 192 bits of 2/pi from bit e-1 on,
//!   read from TWO_OVER_PI (448 bits after one zero word, so that reads before the binary
//!   point give zeros); the low 192 bits of the integer product m * W are 7 integer bits
//!   (j) and 185 fraction bits (f, rounded to nearest so |f| <= 1/2), with an absolute error
//!   below m 2^-185 < 2^-161 from the dropped bits of 2/pi. Over all f32 >= 2^-6 the
//!   smallest |f| is 2^-29.86 (x = 0x6CF9BE45, exhaustive scan), so f is normalized with a
//!   shift below 64 and converted to a double-double with relative error < 2^-105.9
//!   (truncation to 128 bits, rounding of the 75 low bits to 53), then r = f * pi/64
//!   (double-double product, 7u^2): r within 2^-102.5.
//! * sin r, cos r by Taylor series to r^15 and r^14 (truncation < 2^-111 relative): the
//!   last three Horner steps in double-double, the small tail (terms below 2^-58 of the
//!   result) in f64; error < 2^-103. The combination with the double-double table
//!   amplifies by at most 3.01: final relative error < 2^-100 (for j in {0, 64} the
//!   result is +-sin r exactly, for j in {32, 96} +-cos r).
//!
//! The result is rounded to odd (`super::dd::round_odd`) and the framework rounds once
//! more to f32, bf16 or f16. An error of 2^-100 is far below what the hardest f32 cases
//! need; the structural near-cases are sin x ~ x (|x| small: distance x^2/6 >= 2^-54.6
//! relative for |x| >= 2^-26) and cos x ~ 1 - x^2/2 (1 - 2^-25 + 2^-52.6 at x = 2^-12).
//!
//! Checked: every positive f32 bit pattern (and every 16th negative one; both paths are
//! odd/even by construction) against glibc's double sin/cos with a 2^-50 margin, MPFR for
//! the 66 undecided cases: no misrounded result.
//!
//! Exceptional inputs: sin(+-0) = +-0 (exact, also on the fast path, by a select),
//! cos(+-0) = 1, sin/cos(+-inf) = NaN, NaN -> NaN (canonical). Tiny x: sin x rounds to x.
//!
//! Internal API for other ops: `sincos_dd` (both values of an f32 argument as
//! double-doubles, < 2^-100), `sincos_dd_of_turns` (sin and cos of 2*pi*num/den
//! with exact rational reduction, < 2^-100: for RoPE tables and FFT twiddles).
//! Constants: `tools/gen_trig_tables.py` (mpmath) prints every table and coefficient below.

use super::dd::{DD, fast_two_sum};
use super::round::pow2;
use super::unary::CrUnary;

/// Bits of 2/pi after the binary point, 64 per word, after one zero word.
const TWO_OVER_PI: [u64; 8] = [
    0x0000000000000000,
    0xA2F9836E4E441529,
    0xFC2757D1F534DDC0,
    0xDB6295993C439041,
    0xFE5163ABDEBBC561,
    0xB7246E3A424DD2E0,
    0x06492EEA09D1921C,
    0xFE1DEB1CB129A73E,
];
/// sin(2*pi*j/128) as (hi, lo) double-double bits, j = 0..127.
const SIN_TABLE: [(u64, u64); 128] = [
    (0x0000000000000000, 0x0000000000000000), // 0.0
    (0x3FA91F65F10DD814, 0xBC2912BD0D569A90), // 0.049067674327418014
    (0x3FB917A6BC29B42C, 0xBC3E2718D26ED688), // 0.098017140329560602
    (0x3FC2C8106E8E613A, 0x3C513000A89A11E0), // 0.14673047445536175
    (0x3FC8F8B83C69A60B, 0xBC626D19B9FF8D82), // 0.19509032201612827
    (0x3FCF19F97B215F1B, 0xBC642DEEF11DA2C4), // 0.24298017990326389
    (0x3FD294062ED59F06, 0xBC75D28DA2C4612D), // 0.29028467725446237
    (0x3FD58F9A75AB1FDD, 0xBC1EFDC0D58CF620), // 0.33688985339222005
    (0x3FD87DE2A6AEA963, 0xBC672CEDD3D5A610), // 0.38268343236508977
    (0x3FDB5D1009E15CC0, 0x3C65B362CB974183), // 0.42755509343028209
    (0x3FDE2B5D3806F63B, 0x3C5E0D891D3C6841), // 0.47139673682599765
    (0x3FE073879922FFEE, 0xBC8A5A014347406C), // 0.51410274419322173
    (0x3FE1C73B39AE68C8, 0x3C8B25DD267F6600), // 0.55557023301960222
    (0x3FE30FF7FCE17035, 0xBC6EFCC626F74A6F), // 0.59569930449243334
    (0x3FE44CF325091DD6, 0x3C68076A2CFDC6B3), // 0.6343932841636455
    (0x3FE57D69348CECA0, 0xBC875720992BFBB2), // 0.6715589548470184
    (0x3FE6A09E667F3BCD, 0xBC8BDD3413B26456), // 0.70710678118654752
    (0x3FE7B5DF226AAFAF, 0xBC70F537ACDF0AD7), // 0.74095112535495909
    (0x3FE8BC806B151741, 0xBC82C5E12ED1336D), // 0.77301045336273696
    (0x3FE9B3E047F38741, 0xBC830EE286712474), // 0.80320753148064491
    (0x3FEA9B66290EA1A3, 0x3C39F630E8B6DAC8), // 0.83146961230254524
    (0x3FEB728345196E3E, 0xBC8BC69F324E6D61), // 0.85772861000027207
    (0x3FEC38B2F180BDB1, 0xBC76E0B1757C8D07), // 0.88192126434835503
    (0x3FECED7AF43CC773, 0xBC5E7B6BB5AB58AE), // 0.90398929312344333
    (0x3FED906BCF328D46, 0x3C7457E610231AC2), // 0.92387953251128676
    (0x3FEE212104F686E5, 0xBC8014C76C126527), // 0.94154406518302078
    (0x3FEE9F4156C62DDA, 0x3C8760B1E2E3F81E), // 0.95694033573220886
    (0x3FEF0A7EFB9230D7, 0x3C752C7ADC6B4989), // 0.97003125319454399
    (0x3FEF6297CFF75CB0, 0x3C7562172A361FD3), // 0.98078528040323045
    (0x3FEFA7557F08A517, 0xBC87A0A8CA13571F), // 0.98917650996478097
    (0x3FEFD88DA3D12526, 0xBC887DF6378811C7), // 0.99518472667219689
    (0x3FEFF621E3796D7E, 0xBC6C57BC2E24AA15), // 0.99879545620517239
    (0x3FF0000000000000, 0x0000000000000000), // 1.0
    (0x3FEFF621E3796D7E, 0xBC6C57BC2E24AA15), // 0.99879545620517239
    (0x3FEFD88DA3D12526, 0xBC887DF6378811C7), // 0.99518472667219689
    (0x3FEFA7557F08A517, 0xBC87A0A8CA13571F), // 0.98917650996478097
    (0x3FEF6297CFF75CB0, 0x3C7562172A361FD3), // 0.98078528040323045
    (0x3FEF0A7EFB9230D7, 0x3C752C7ADC6B4989), // 0.97003125319454399
    (0x3FEE9F4156C62DDA, 0x3C8760B1E2E3F81E), // 0.95694033573220886
    (0x3FEE212104F686E5, 0xBC8014C76C126527), // 0.94154406518302078
    (0x3FED906BCF328D46, 0x3C7457E610231AC2), // 0.92387953251128676
    (0x3FECED7AF43CC773, 0xBC5E7B6BB5AB58AE), // 0.90398929312344333
    (0x3FEC38B2F180BDB1, 0xBC76E0B1757C8D07), // 0.88192126434835503
    (0x3FEB728345196E3E, 0xBC8BC69F324E6D61), // 0.85772861000027207
    (0x3FEA9B66290EA1A3, 0x3C39F630E8B6DAC8), // 0.83146961230254524
    (0x3FE9B3E047F38741, 0xBC830EE286712474), // 0.80320753148064491
    (0x3FE8BC806B151741, 0xBC82C5E12ED1336D), // 0.77301045336273696
    (0x3FE7B5DF226AAFAF, 0xBC70F537ACDF0AD7), // 0.74095112535495909
    (0x3FE6A09E667F3BCD, 0xBC8BDD3413B26456), // 0.70710678118654752
    (0x3FE57D69348CECA0, 0xBC875720992BFBB2), // 0.6715589548470184
    (0x3FE44CF325091DD6, 0x3C68076A2CFDC6B3), // 0.6343932841636455
    (0x3FE30FF7FCE17035, 0xBC6EFCC626F74A6F), // 0.59569930449243334
    (0x3FE1C73B39AE68C8, 0x3C8B25DD267F6600), // 0.55557023301960222
    (0x3FE073879922FFEE, 0xBC8A5A014347406C), // 0.51410274419322173
    (0x3FDE2B5D3806F63B, 0x3C5E0D891D3C6841), // 0.47139673682599765
    (0x3FDB5D1009E15CC0, 0x3C65B362CB974183), // 0.42755509343028209
    (0x3FD87DE2A6AEA963, 0xBC672CEDD3D5A610), // 0.38268343236508977
    (0x3FD58F9A75AB1FDD, 0xBC1EFDC0D58CF620), // 0.33688985339222005
    (0x3FD294062ED59F06, 0xBC75D28DA2C4612D), // 0.29028467725446237
    (0x3FCF19F97B215F1B, 0xBC642DEEF11DA2C4), // 0.24298017990326389
    (0x3FC8F8B83C69A60B, 0xBC626D19B9FF8D82), // 0.19509032201612827
    (0x3FC2C8106E8E613A, 0x3C513000A89A11E0), // 0.14673047445536175
    (0x3FB917A6BC29B42C, 0xBC3E2718D26ED688), // 0.098017140329560602
    (0x3FA91F65F10DD814, 0xBC2912BD0D569A90), // 0.049067674327418014
    (0x0000000000000000, 0x0000000000000000), // 0.0
    (0xBFA91F65F10DD814, 0x3C2912BD0D569A90), // -0.049067674327418014
    (0xBFB917A6BC29B42C, 0x3C3E2718D26ED688), // -0.098017140329560602
    (0xBFC2C8106E8E613A, 0xBC513000A89A11E0), // -0.14673047445536175
    (0xBFC8F8B83C69A60B, 0x3C626D19B9FF8D82), // -0.19509032201612827
    (0xBFCF19F97B215F1B, 0x3C642DEEF11DA2C4), // -0.24298017990326389
    (0xBFD294062ED59F06, 0x3C75D28DA2C4612D), // -0.29028467725446237
    (0xBFD58F9A75AB1FDD, 0x3C1EFDC0D58CF620), // -0.33688985339222005
    (0xBFD87DE2A6AEA963, 0x3C672CEDD3D5A610), // -0.38268343236508977
    (0xBFDB5D1009E15CC0, 0xBC65B362CB974183), // -0.42755509343028209
    (0xBFDE2B5D3806F63B, 0xBC5E0D891D3C6841), // -0.47139673682599765
    (0xBFE073879922FFEE, 0x3C8A5A014347406C), // -0.51410274419322173
    (0xBFE1C73B39AE68C8, 0xBC8B25DD267F6600), // -0.55557023301960222
    (0xBFE30FF7FCE17035, 0x3C6EFCC626F74A6F), // -0.59569930449243334
    (0xBFE44CF325091DD6, 0xBC68076A2CFDC6B3), // -0.6343932841636455
    (0xBFE57D69348CECA0, 0x3C875720992BFBB2), // -0.6715589548470184
    (0xBFE6A09E667F3BCD, 0x3C8BDD3413B26456), // -0.70710678118654752
    (0xBFE7B5DF226AAFAF, 0x3C70F537ACDF0AD7), // -0.74095112535495909
    (0xBFE8BC806B151741, 0x3C82C5E12ED1336D), // -0.77301045336273696
    (0xBFE9B3E047F38741, 0x3C830EE286712474), // -0.80320753148064491
    (0xBFEA9B66290EA1A3, 0xBC39F630E8B6DAC8), // -0.83146961230254524
    (0xBFEB728345196E3E, 0x3C8BC69F324E6D61), // -0.85772861000027207
    (0xBFEC38B2F180BDB1, 0x3C76E0B1757C8D07), // -0.88192126434835503
    (0xBFECED7AF43CC773, 0x3C5E7B6BB5AB58AE), // -0.90398929312344333
    (0xBFED906BCF328D46, 0xBC7457E610231AC2), // -0.92387953251128676
    (0xBFEE212104F686E5, 0x3C8014C76C126527), // -0.94154406518302078
    (0xBFEE9F4156C62DDA, 0xBC8760B1E2E3F81E), // -0.95694033573220886
    (0xBFEF0A7EFB9230D7, 0xBC752C7ADC6B4989), // -0.97003125319454399
    (0xBFEF6297CFF75CB0, 0xBC7562172A361FD3), // -0.98078528040323045
    (0xBFEFA7557F08A517, 0x3C87A0A8CA13571F), // -0.98917650996478097
    (0xBFEFD88DA3D12526, 0x3C887DF6378811C7), // -0.99518472667219689
    (0xBFEFF621E3796D7E, 0x3C6C57BC2E24AA15), // -0.99879545620517239
    (0xBFF0000000000000, 0x0000000000000000), // -1.0
    (0xBFEFF621E3796D7E, 0x3C6C57BC2E24AA15), // -0.99879545620517239
    (0xBFEFD88DA3D12526, 0x3C887DF6378811C7), // -0.99518472667219689
    (0xBFEFA7557F08A517, 0x3C87A0A8CA13571F), // -0.98917650996478097
    (0xBFEF6297CFF75CB0, 0xBC7562172A361FD3), // -0.98078528040323045
    (0xBFEF0A7EFB9230D7, 0xBC752C7ADC6B4989), // -0.97003125319454399
    (0xBFEE9F4156C62DDA, 0xBC8760B1E2E3F81E), // -0.95694033573220886
    (0xBFEE212104F686E5, 0x3C8014C76C126527), // -0.94154406518302078
    (0xBFED906BCF328D46, 0xBC7457E610231AC2), // -0.92387953251128676
    (0xBFECED7AF43CC773, 0x3C5E7B6BB5AB58AE), // -0.90398929312344333
    (0xBFEC38B2F180BDB1, 0x3C76E0B1757C8D07), // -0.88192126434835503
    (0xBFEB728345196E3E, 0x3C8BC69F324E6D61), // -0.85772861000027207
    (0xBFEA9B66290EA1A3, 0xBC39F630E8B6DAC8), // -0.83146961230254524
    (0xBFE9B3E047F38741, 0x3C830EE286712474), // -0.80320753148064491
    (0xBFE8BC806B151741, 0x3C82C5E12ED1336D), // -0.77301045336273696
    (0xBFE7B5DF226AAFAF, 0x3C70F537ACDF0AD7), // -0.74095112535495909
    (0xBFE6A09E667F3BCD, 0x3C8BDD3413B26456), // -0.70710678118654752
    (0xBFE57D69348CECA0, 0x3C875720992BFBB2), // -0.6715589548470184
    (0xBFE44CF325091DD6, 0xBC68076A2CFDC6B3), // -0.6343932841636455
    (0xBFE30FF7FCE17035, 0x3C6EFCC626F74A6F), // -0.59569930449243334
    (0xBFE1C73B39AE68C8, 0xBC8B25DD267F6600), // -0.55557023301960222
    (0xBFE073879922FFEE, 0x3C8A5A014347406C), // -0.51410274419322173
    (0xBFDE2B5D3806F63B, 0xBC5E0D891D3C6841), // -0.47139673682599765
    (0xBFDB5D1009E15CC0, 0xBC65B362CB974183), // -0.42755509343028209
    (0xBFD87DE2A6AEA963, 0x3C672CEDD3D5A610), // -0.38268343236508977
    (0xBFD58F9A75AB1FDD, 0x3C1EFDC0D58CF620), // -0.33688985339222005
    (0xBFD294062ED59F06, 0x3C75D28DA2C4612D), // -0.29028467725446237
    (0xBFCF19F97B215F1B, 0x3C642DEEF11DA2C4), // -0.24298017990326389
    (0xBFC8F8B83C69A60B, 0x3C626D19B9FF8D82), // -0.19509032201612827
    (0xBFC2C8106E8E613A, 0xBC513000A89A11E0), // -0.14673047445536175
    (0xBFB917A6BC29B42C, 0x3C3E2718D26ED688), // -0.098017140329560602
    (0xBFA91F65F10DD814, 0x3C2912BD0D569A90), // -0.049067674327418014
];
/// pi/64, bits of weight 2^-5..2^-21.
const P1: f64 = f64::from_bits(0x3FA921F000000000) /* 0.049087047576904296875 */;
/// pi/64, bits of weight 2^-22..2^-38.
const P2: f64 = f64::from_bits(0x3E96A88000000000) /* 3.3763353712856769562e-7 */;
/// pi/64, bits of weight 2^-39..2^-55.
const P3: f64 = f64::from_bits(0x3D80B46000000000) /* 1.8990919947725615202e-12 */;
/// pi/64, bits of weight 2^-56..2^-72.
const P4: f64 = f64::from_bits(0x3C41A60000000000) /* 1.913447427847464466e-18 */;
/// pi/64 - P1 - P2 - P3 - P4, rounded.
const P5: f64 = f64::from_bits(0x3B53198A2E037073) /* 6.3195820274873460387e-23 */;
// |pi/64 - (P1 + ... + P5)| = 2^-127.90
/// 64/pi rounded.
const INV_STEP: f64 = f64::from_bits(0x40345F306DC9C883) /* 20.371832715762602978 */;
/// pi/64 as a double-double.
const PI_64: DD = DD::from_bits(0x3FA921FB54442D18, 0x3C41A62633145C07); // 0.0490873852123405193509788
const FS1: f64 = f64::from_bits(0xBFC5555555555555) /* -0.16666666666666666667 */;
const FS2: f64 = f64::from_bits(0x3F81111111111111) /* 0.0083333333333333333333 */;
const FS3: f64 = f64::from_bits(0xBF2A01A01A01A01A) /* -0.0001984126984126984127 */;
const FC1: f64 = f64::from_bits(0xBFE0000000000000) /* -0.5 */;
const FC2: f64 = f64::from_bits(0x3FA5555555555555) /* 0.041666666666666666667 */;
const FC3: f64 = f64::from_bits(0xBF56C16C16C16C17) /* -0.0013888888888888888889 */;
/// (-1)^(i+1) / (2i+3)!, i = 0..7, as double-doubles.
const ACC_SIN: [DD; 8] = [
    DD::from_bits(0xBFC5555555555555, 0xBC65555555555555), // -0.16666666666666666667
    DD::from_bits(0x3F81111111111111, 0x3C01111111111111), // 0.0083333333333333333333
    DD::from_bits(0xBF2A01A01A01A01A, 0xBB6A01A01A01A01A), // -0.0001984126984126984127
    DD::from_bits(0x3EC71DE3A556C734, 0xBB6C154F8DDC6C00), // 2.7557319223985890653e-6
    DD::from_bits(0xBE5AE64567F544E4, 0x3AFC062E06D1F209), // -2.5052108385441718775e-8
    DD::from_bits(0x3DE6124613A86D09, 0x3A8F28E0CC748EBE), // 1.6059043836821614599e-10
    DD::from_bits(0xBD6AE7F3E733B81F, 0xB9E1D8656B0EE8CB), // -7.6471637318198164759e-13
    DD::from_bits(0x3CE952C77030AD4A, 0x398AC981465DDC6C), // 2.8114572543455207632e-15
];
/// (-1)^(i+1) / (2i+2)!, i = 0..7, as double-doubles.
const ACC_COS: [DD; 8] = [
    DD::from_bits(0xBFE0000000000000, 0x0000000000000000), // -0.5
    DD::from_bits(0x3FA5555555555555, 0x3C45555555555555), // 0.041666666666666666667
    DD::from_bits(0xBF56C16C16C16C17, 0x3BEF49F49F49F49F), // -0.0013888888888888888889
    DD::from_bits(0x3EFA01A01A01A01A, 0x3B3A01A01A01A01A), // 0.000024801587301587301587
    DD::from_bits(0xBE927E4FB7789F5C, 0xBB3CBBC05B4FA99A), // -2.7557319223985890653e-7
    DD::from_bits(0x3E21EED8EFF8D898, 0xBAC2AEC959E14C06), // 2.0876756987868098979e-9
    DD::from_bits(0xBDA93974A8C07C9D, 0xBA305D6F8A2EFD1F), // -1.1470745597729724714e-11
    DD::from_bits(0x3D2AE7F3E733B81F, 0x39A1D8656B0EE8CB), // 4.7794773323873852974e-14
];
// ---- end of generated constants ----

/// sin(2*pi*j/128) rounded to f64: the fast path's table (the `hi` parts of SIN_TABLE).
static SIN_HI: [f64; 128] = {
    let mut t = [0.0; 128];
    let mut j = 0;
    while j < 128 {
        t[j] = f64::from_bits(SIN_TABLE[j].0);
        j += 1;
    }
    t
};

/// 1.5 * 2^52 (0x4338000000000000): x + MAGIC rounds x (|x| < 2^51) to an integer k, and
/// the low bits of the sum's encoding are k in two's complement.
const MAGIC: f64 = f64::from_bits(0x4338_0000_0000_0000);

/// Bound of the fast path's domain: 2^31 (0x4F000000 as f32). Below it |k| < 2^36, so
/// k * P1 .. k * P4 are exact.
const FAST_LIMIT: f32 = f32::from_bits(0x4F00_0000);

/// Below 2^-26 (0x3E50000000000000): sin x = x - x^3/6 and cos x = 1 - x^2/2 to far more
/// than 106 bits, with the next terms too small to move the odd rounding.
const TINY: f64 = f64::from_bits(0x3E50_0000_0000_0000);

/// Below 2^-6 (0x3F90000000000000 = 0.015625 < pi/128): the reduced argument is x itself.
const NO_REDUCTION: f64 = f64::from_bits(0x3F90_0000_0000_0000);

/// Fast reduction and polynomials: (j, sin r, cos r) with x = j*pi/64 + r (mod 2*pi),
/// |r| <= pi/128 (1 + 2^-15). Straight-line f64 code.
#[inline(always)]
fn fast_parts(x: f32) -> (usize, f64, f64) {
    let xd = x as f64;
    let t = xd * INV_STEP + MAGIC;
    let k = t - MAGIC;
    let j = (t.to_bits() & 127) as usize;
    // k*P1 .. k*P4 are exact (|k| < 2^36, 17-bit parts) and so are the first three
    // differences (see the module documentation); two roundings remain, both relative to r.
    let r = ((((xd - k * P1) - k * P2) - k * P3) - k * P4) - k * P5;
    let z = r * r;
    let sr = r + (r * z) * (FS1 + z * (FS2 + z * FS3));
    let cr = 1.0 + z * (FC1 + z * (FC2 + z * FC3));
    (j, sr, cr)
}

/// sin r and cos r for a double-double |r| <= pi/128 (1 + 2^-15), relative error below
/// 2^-104 each (Taylor series to r^15 and r^14; the terms from z^4 on in f64).
#[inline(always)]
fn sincos_poly_dd(r: DD) -> (DD, DD) {
    let z = r.mul(r);
    let zh = z.hi;
    let ts = ACC_SIN[3].hi + zh * (ACC_SIN[4].hi + zh * (ACC_SIN[5].hi + zh * ACC_SIN[6].hi));
    let ps = DD::from_f64(ts)
        .mul(z)
        .add(ACC_SIN[2])
        .mul(z)
        .add(ACC_SIN[1])
        .mul(z)
        .add(ACC_SIN[0]);
    let sr = r.add(r.mul(z).mul(ps));
    let tc = ACC_COS[3].hi + zh * (ACC_COS[4].hi + zh * (ACC_COS[5].hi + zh * ACC_COS[6].hi));
    let pc = DD::from_f64(tc)
        .mul(z)
        .add(ACC_COS[2])
        .mul(z)
        .add(ACC_COS[1])
        .mul(z)
        .add(ACC_COS[0]);
    let cr = DD::from_f64(1.0).add(z.mul(pc));
    (sr, cr)
}

#[inline(always)]
fn table_dd(j: usize) -> DD {
    let (h, l) = SIN_TABLE[j & 127];
    DD::from_bits(h, l)
}

/// (sin, cos) of j*pi/64 + r from sin r, cos r: the angle-addition formulas with the
/// double-double table.
#[inline(always)]
fn combine_dd(j: usize, sr: DD, cr: DD) -> (DD, DD) {
    let s = table_dd(j);
    let c = table_dd(j + 32);
    let sin = s.mul(cr).add(c.mul(sr));
    let cos = c.mul(cr).sub(s.mul(sr));
    (sin, cos)
}

/// Exact (Payne-Hanek) reduction of a finite a >= 2^-6: a * 64/pi = 128*n + j + f with
/// j in 0..128 and |f| <= 1/2; returns j and f as a double-double of relative error below
/// 2^-104 (see the module documentation).
#[doc(hidden)]
pub fn reduce_pi64(a: f32) -> (usize, DD) {
    let bits = a.to_bits();
    let m = ((bits & 0x7F_FFFF) | 0x80_0000) as u64; // a = m * 2^e, a normal here
    let e = ((bits >> 23) & 0xFF) as i32 - 150;
    // a*64/pi = m * 2^(e+5) * 2/pi. Bits b_i of 2/pi (weight 2^-i) with e+5-i >= 7 only add
    // multiples of 128: the first bit that matters is i = e - 1. Bit i sits at index i + 63
    // of TWO_OVER_PI (after the zero word); e >= -29 and e <= 104 keep the index in 33..=166.
    let t = (e - 1 + 63).clamp(0, 166) as u32;
    let q = (t / 64) as usize;
    let sh = t % 64;
    let word = |k: usize| -> u64 {
        let hi = TWO_OVER_PI[q + k] << sh;
        // (>> 1) >> (63 - sh): no shift by 64 when sh = 0.
        let lo = (TWO_OVER_PI[q + k + 1] >> 1) >> (63 - sh);
        hi | lo
    };
    let (w0, w1, w2) = (word(0), word(1), word(2));
    // W = bits i = e-1 .. e+190; a*64/pi = m * W * 2^-185 (mod 128) + m * tail, with the
    // tail below 2^-185: the low 192 bits of m*W hold 7 integer and 185 fraction bits.
    let p2 = (m as u128) * (w2 as u128);
    let p1 = (m as u128) * (w1 as u128) + (p2 >> 64);
    let r0 = m.wrapping_mul(w0).wrapping_add((p1 >> 64) as u64);
    let (r1, r2) = (p1 as u64, p2 as u64);
    let mut j = (r0 >> 57) as usize;
    // The fraction, left-aligned in 192 bits.
    let mut f0 = (r0 << 7) | (r1 >> 57);
    let mut f1 = (r1 << 7) | (r2 >> 57);
    let mut f2 = r2 << 7;
    let negative = f0 >> 63 == 1;
    if negative {
        // f >= 1/2: round j up and negate the fraction (192-bit two's complement).
        j += 1;
        let (n2, c2) = (!f2).overflowing_add(1);
        let (n1, c1) = (!f1).overflowing_add(c2 as u64);
        let n0 = (!f0).wrapping_add(c1 as u64);
        (f0, f1, f2) = (n0, n1, n2);
    }
    // Normalize: |f| >= 2^-60 for every f32 (see the module documentation), so at most one
    // whole-word shift and one bit shift.
    let mut lz = 0i32;
    if f0 == 0 {
        (f0, f1, f2) = (f1, f2, 0);
        lz = 64;
    }
    let s = f0.leading_zeros() % 64;
    let n = ((((f0 as u128) << 64) | f1 as u128) << s) | (((f2 >> 1) >> (63 - s)) as u128);
    lz += s as i32;
    // |f| = n * 2^(-128 - lz), n in [2^127, 2^128): split into 53 + 75 bits.
    let scale = pow2(-53 - lz);
    let hi = ((n >> 75) as u64) as f64 * scale;
    let lo = ((n & ((1u128 << 75) - 1)) as f64) * pow2(-128 - lz);
    let (hi, lo) = fast_two_sum(hi, lo);
    let f = if negative {
        DD::new(-hi, -lo)
    } else {
        DD::new(hi, lo)
    };
    (j & 127, f)
}

/// sin x and cos x as double-doubles, relative error below 2^-100 each, for every finite
/// f32 x (exact for x = ±0: (±0, 1)).
#[doc(hidden)]
pub fn sincos_dd(x: f32) -> (DD, DD) {
    let xd = x as f64;
    let a = xd.abs();
    if a < TINY {
        // sin x = x - x^3/6 (x^3/6 < 2^-54.6 |x|; if it underflows, x alone rounds the
        // same way as the exact value: x is representable in the output format and the
        // exact value is within 2^-54.6 relative of it). cos x = 1 - x^2/2 (x^2 exact,
        // below 2^-52, so |lo| <= ulp(1)/2).
        let lo = -(xd * xd * xd) * f64::from_bits(0x3FC5_5555_5555_5555); // 1/6
        let sin = DD::new(xd, lo);
        let cos = DD::new(1.0, -(xd * xd) * 0.5);
        return (sin, cos);
    }
    let (j, r) = if a < NO_REDUCTION {
        (0, DD::from_f64(a))
    } else {
        let (j, f) = reduce_pi64(a as f32);
        (j, f.mul(PI_64))
    };
    let (sr, cr) = sincos_poly_dd(r);
    let (sin, cos) = combine_dd(j, sr, cr);
    if x < 0.0 {
        (sin.neg(), cos)
    } else {
        (sin, cos)
    }
}

/// (sin(2*pi*num/den), cos(2*pi*num/den)), num/den of a full turn, as double-doubles with relative error below
/// 2^-100 each (exact zeros and ones where the angle is a multiple of pi/2). For RoPE
/// tables, FFT twiddles. Requires den > 0.
#[doc(hidden)]
pub fn sincos_dd_of_turns(num: u64, den: u64) -> (DD, DD) {
    assert!(den > 0, "sincos_dd_of_turns: zero denominator");
    let n = num % den;
    // 128 n / den = j + f, |f| <= 1/2, with exact integer arithmetic.
    let p = (n as u128) * 128;
    let d = den as u128;
    let j0 = p / d;
    let rem = p - j0 * d;
    let (j, rem) = if 2 * rem > d {
        (j0 + 1, rem as i128 - d as i128)
    } else {
        (j0, rem as i128)
    };
    let to_dd = |v: i128| -> DD {
        let hi = v as f64;
        DD::new(hi, (v - hi as i128) as f64)
    };
    let f = to_dd(rem).div(to_dd(d as i128));
    let r = f.mul(PI_64);
    let (sr, cr) = sincos_poly_dd(r);
    combine_dd((j & 127) as usize, sr, cr)
}

#[doc(hidden)]
pub struct Sin;

impl CrUnary for Sin {
    const FAST_REL_ERR: f64 = f64::from_bits(0x3D00_0000_0000_0000); // 2^-47
    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        x.abs() < FAST_LIMIT
    }
    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        let (j, sr, cr) = fast_parts(x);
        let y = SIN_HI[j] * cr + SIN_HI[(j + 32) & 127] * sr;
        // sin(-0) = -0 (the sum above gives +0).
        if x == 0.0 { x as f64 } else { y }
    }
    fn accurate(x: f32) -> f64 {
        if !x.is_finite() {
            return f64::NAN;
        }
        if x == 0.0 {
            return x as f64;
        }
        super::dd::round_odd(sincos_dd(x).0)
    }
}

#[doc(hidden)]
pub struct Cos;

impl CrUnary for Cos {
    const FAST_REL_ERR: f64 = f64::from_bits(0x3D00_0000_0000_0000); // 2^-47
    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        x.abs() < FAST_LIMIT
    }
    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        let (j, sr, cr) = fast_parts(x);
        SIN_HI[(j + 32) & 127] * cr - SIN_HI[j] * sr
    }
    fn accurate(x: f32) -> f64 {
        if !x.is_finite() {
            return f64::NAN;
        }
        super::dd::round_odd(sincos_dd(x).1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values() {
        assert_eq!(crate::math::sin(0.0).to_bits(), 0);
        assert_eq!(crate::math::sin(-0.0).to_bits(), 0x8000_0000);
        assert_eq!(crate::math::cos(0.0), 1.0);
        assert_eq!(crate::math::cos(-0.0), 1.0);
        for v in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            assert_eq!(crate::math::sin(v).to_bits(), 0x7FC0_0000);
            assert_eq!(crate::math::cos(v).to_bits(), 0x7FC0_0000);
        }
        let tiny = f32::from_bits(1);
        assert_eq!(crate::math::sin(tiny), tiny);
        assert_eq!(crate::math::sin(-tiny), -tiny);
        assert_eq!(crate::math::cos(tiny), 1.0);
        let mut out = [0.0f32; 32];
        let mut xs = [0.5f32; 32];
        xs[3] = -0.0;
        crate::math::sin_slice(&xs, &mut out);
        assert_eq!(out[3].to_bits(), 0x8000_0000);
    }

    #[test]
    fn reduction_matches_dd_reduction() {
        // For moderate x, x*64/pi in double-double is accurate enough to check j and f.
        for i in 1..20000u32 {
            let x = (i as f32) * 0.37 + 0.02;
            let (j, f) = reduce_pi64(x);
            let y = DD::from_f64(x as f64).div(PI_64);
            let k = y.hi.round();
            let fr = y.add_f64(-k);
            assert_eq!(j, (k as i64).rem_euclid(128) as usize, "x = {x}");
            assert!((fr.hi - f.hi).abs() <= 1e-25, "x = {x}: {fr:?} vs {f:?}");
        }
    }

    #[test]
    fn pi_fraction() {
        let (s, c) = sincos_dd_of_turns(1, 4);
        assert_eq!((s, c), (DD::new(1.0, 0.0), DD::new(0.0, 0.0)));
        let (s, c) = sincos_dd_of_turns(3, 8);
        let h = f64::from_bits(0x3FE6_A09E_667F_3BCD); // sqrt(2)/2
        assert!((s.hi - h).abs() <= 1e-16 && (c.hi + h).abs() <= 1e-16);
        let (s, c) = sincos_dd_of_turns(5, 6);
        // sin(5pi/3) = -sqrt(3)/2, cos = 1/2
        let r3 = s.mul(s).add_f64(-0.75);
        assert!(r3.hi.abs() < 1e-30, "{s:?}");
        assert!(c.add_f64(-0.5).hi.abs() < 1e-30, "{c:?}");
    }
}
