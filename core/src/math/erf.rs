//! The error function erf and the exact GELU x Φ(x) = x/2 (1 + erf(x/√2)) (`gelu_erf`,
//! candle's `Tensor::gelu_erf`), correctly rounded.
//!
//! Notation: u = 2^-53, Φ the standard normal distribution function, and
//! M(s) = e^(s^2/2) Φ(-s) (the Mills ratio over √(2π)): smooth, decreasing from 1/2 at
//! s = 0 like 1/(s √(2π)), with Φ(-s) = e^(-s^2/2) M(s) and erfc(a) = 2 e^(-a^2) M(a√2).
//! Tables and constants come from `tools/gen_erf_coeffs.py` (mpmath), which also prints
//! the measured figures quoted below.
//!
//! # erf
//! erf is odd: everything works on a = |x| and x's sign is put back last with a bit
//! operation (so erf(-0) = -0 in every path).
//! * Fast path (every non-NaN input): a is clamped to 6 (erf(6) is within
//!   erfc(6) = 2^-55.37 of erf(a) for every a > 6, relative), i = round(8a) (the low bits
//!   of 8a + 1.5 2^52) and t = a - i/8, exact (for i >= 1, a >= 1/16 is a multiple of
//!   2^-27 and |t| <= 1/16; for i = 0, t = a). Then erf(a) ~ P_i(t), a degree-9
//!   polynomial per interval (ERF_POLY, 49 x 10 coefficients): P_i ~ erf(i/8 + t) on
//!   |t| <= 1/16, and P_0 the odd polynomial t (q0 + q1 t^2 + ... + q4 t^8) on [0, 1/16],
//!   written with zero even coefficients, so that its error stays relative down to the
//!   subnormals (the partial Horner values are of the order of 1 or of t, and their
//!   products of t^2 >= 2^-298, all far above the f64 subnormals). Horner's scheme with
//!   `madd` (fused in the FMA copies and on CUDA, two roundings in the x86-64 baseline).
//!   Error, measured by the script on 2001 points per interval with the rounded
//!   coefficients: approximation <= 2^-52.70 = 1.23u relative;
//!   evaluation, two roundings per step, sum_k |t|^k (|h_(k+1) t| + |h_k|) u / |P| <=
//!   3.01u (h_k the partial Horner values; the fused flavour has one rounding per step
//!   and stays below it); the clamp 0.19u. Total 4.43u; FAST_REL_ERR = 2^-50 = 8u.
//! * Accurate path (double-double, ~u^2 = 2^-106 per operation):
//!   - a < 1: erf(a) = (2/√π) a e^(-a^2) V(a^2) with V(T) = sum_n 2^n T^n / (2n + 1)!!,
//!     all terms positive, to n = 30 (tail < 2^-115 for T <= 1; ERF_SERIES holds the
//!     coefficients as double-doubles). a^2 is exact (a is an f32). V by Horner: each of
//!     the 30 steps (mul_f64 3u^2, add 3u^2) moves V by at most 6u^2 times the weight
//!     T^k v_k / v_0, whose sum is <= 1.75 (script): 10.5u^2, coefficient rounding u^2;
//!     `exp_dd` 2^-102 = 16u^2; the constant u^2 and three products 3 + 7 + 7u^2: total
//!     < 46u^2 = 2^-100.4.
//!   - 1 <= a < 6: erf(a) = 1 - 2 e^(-a^2) M(a√2). s = a√2 as a double-double (4u^2
//!     relative; |s M'(s)/M(s)| <= 1 there, so M moves by 4u^2 at most). M by `mills_dd`
//!     (below, <= 320u^2), `exp_dd` 16u^2, the product 7u^2; 1 - 2q (2q <= erfc(1) and
//!     erfc(1)/erf(1) = 0.187) scales these by 0.187 and adds 2u^2: < 68u^2 = 2^-99.9.
//!   - a >= 6: 0 < 1 - erf(a) < 2^-55.37, so erf(a) lies strictly between 1 - 2^-53 and
//!     1: its round-to-odd is 1 - 2^-53. erf(±inf) = ±1, erf(±0) = ±0, NaN -> NaN.
//! * `mills_dd(s)`, 1 <= s <= 15: the Taylor expansion of M around s0 = j/4 (j = round(4s),
//!   |d| = |s - s0| <= 1/8), from M(s0) (MILLS_DD) and the differential equation
//!   M' = s M - 1/√(2π): m_1 = s0 m_0 - 1/√(2π), (k + 1) m_(k+1) = s0 m_k + m_(k-1), to degree
//!   22 (tail < 2^-113 relative, script), then Horner in d. The recurrence cancels (M is
//!   the small solution of y' = s y), but an error in a coefficient acts on the sum like a
//!   multiple of the large solution e^(s^2/2), which grows by at most e^(s0 |d| + d^2/2)
//!   <= 6.6 over |d| <= 1/8: to first order the rounding of each step (at most 21u^2 of
//!   |s0 m_k| + |m_(k-1)|) contributes <= 21u^2 (|s0 d| + d^2) 1.14 e^(1.89) M with
//!   sum |m_k d^k| <= 1.14 M (script), and Horner about 10u^2 1.14: <= 320u^2 = 2^-97.7
//!   relative. (The tests compare these paths with MPFR at 200 bits.)
//!
//! # gelu_erf
//! gelu_erf(x) = x Φ(x), with Φ(x) = 1 - Φ(-x) = 1 - q for x >= 0 and q for x < 0, where
//! q = Φ(-|x|) = e^(-x^2/2) M(|x|) <= 1/2: no cancellation on either side, and both the
//! exponential's argument -x^2/2 and M's argument |x| are exact.
//! * Fast path, domain -15 <= x <= f32::MAX (below -15, |result| < 2^-163): s = |x| clamped
//!   to 15, i = round(2s), t = s - i/2 (exact as above), m = Q_i(t) with Q_i ~ M(i/2 + t) of
//!   degree 11 on |t| <= 1/4 (MILLS_POLY, 31 x 12; i = 0 on [0, 1/4]): approximation
//!   <= 2^-52.28 = 1.65u, evaluation <= 1.49u (measured as for erf). E =
//!   `exp_fast_f64`(-x^2/2) (x^2 exact; 2^-51 = 4u while the result is normal, x^2/2 <= 112.5
//!   for x <= 0), q = E m (u): q within 8.14u of Φ(-|x|). x < 0: x q adds u; x >= 0:
//!   1 - q (q <= 1/2 keeps q's error below 8.14u relative to 1 - q) and the two roundings:
//!   10.14u. Beyond 15 (x > 0 only) the clamp and E's underflow move 1 - q by less than
//!   2^-160. FAST_REL_ERR = 2^-49 = 16u.
//! * Accurate path: |x| < 1: gelu_erf(x) = (x + x e)/2 with e = erf(x/√2) =
//!   √(2/π) x e^(-x^2/2) V(x^2/2) (x^2/2 exact, <= 1/2): as for erf, < 46u^2; then x e
//!   (3u^2) and x + x e, where (x < 0) e's error grows by at most
//!   erf(1/√2)/(1 - erf(1/√2)) = 2.15 and the sum adds 2u^2: < 108u^2 = 2^-99.2.
//!   Keeping x + x e as a double-double matters for tiny x, where x/2 is itself a rounding
//!   midpoint of the output format and only the low part x^2/√(2π) decides. 1 <= |x| < 15
//!   (x < 9 for x > 0): q = e^(-x^2/2) M(|x|) with `exp_dd` and `mills_dd` (< 345u^2), the
//!   result x q (x < 0) or x - x q (x > 0; x q <= 0.19 (x - x q)): < 350u^2 = 2^-97.5.
//!   Saturated ranges: x >= 9: 0 < x - gelu_erf(x) < x Φ(-9) < 2^-62 x, strictly between
//!   x and the f64 below it, which is odd (x is an f32) and is returned; x < -15:
//!   0 < -gelu_erf(x) < 2^-163, below half the smallest subnormal of every output format,
//!   so -2^-1074 stands for it (not its round-to-odd, but it rounds to -0 in every format
//!   exactly as the result does, as silu's x < -128).
//! * Exceptional inputs: gelu_erf(±0) = ±0, gelu_erf(+inf) = +inf, gelu_erf(-inf) = -0
//!   (the limit, approached from below, as silu's), NaN -> NaN.

use super::dd::{DD, round_odd, two_sum};
use super::exp::{exp_dd, exp_fast_f64};
use super::madd::madd;
use super::unary::CrUnary;

#[doc(hidden)]
pub struct Erf;
#[doc(hidden)]
pub struct GeluErf;

/// Relative error of `Erf::fast` (module header): 2^-50.
const ERF_FAST_REL_ERR: f64 = f64::from_bits(0x3CD0_0000_0000_0000);
/// Relative error of `GeluErf::fast` (module header): 2^-49.
const GELU_ERF_FAST_REL_ERR: f64 = f64::from_bits(0x3CE0_0000_0000_0000);
/// 1.5 * 2^52 (0x4338000000000000): adding it to 0 <= v < 2^51 leaves round(v) in the low
/// bits of the sum.
const SHIFT: f64 = f64::from_bits(0x4338_0000_0000_0000);
/// 6.0 (0x4018000000000000): erf's fast-path clamp and the accurate path's saturation.
const ERF_SAT: f64 = f64::from_bits(0x4018_0000_0000_0000);
/// 15.0 (0x402E000000000000): the clamp of M's argument in gelu_erf's fast path.
const MILLS_MAX: f64 = f64::from_bits(0x402E_0000_0000_0000);
/// -15.0 (0xC02E000000000000): gelu_erf's fast domain starts here; below, the accurate
/// path returns -2^-1074 (|result| < 2^-163).
const GELU_ERF_LOW: f64 = f64::from_bits(0xC02E_0000_0000_0000);
/// 9.0 (0x4022000000000000): from here on x - gelu_erf(x) < 2^-62 x.
const GELU_ERF_HIGH: f64 = f64::from_bits(0x4022_0000_0000_0000);
/// 1.0 (0x3FF0000000000000): below it the accurate paths use the series V.
const SERIES_MAX: f64 = f64::from_bits(0x3FF0_0000_0000_0000);
/// 1 - 2^-53 (0x3FEFFFFFFFFFFFFF): the odd f64 just below 1.
const ONE_MINUS_U: f64 = f64::from_bits(0x3FEF_FFFF_FFFF_FFFF);
/// 2^-1074 (0x0000000000000001): the smallest positive f64, odd.
const TINY: f64 = f64::from_bits(1);
/// The sign bit of an f64.
const SIGN: u64 = 0x8000_0000_0000_0000;

/// P_i(t) ~ erf(i/8 + t) on |t| <= 1/16 (i = 0: odd, t = a in [0, 1/16]), degree 9, coefficient of t^k at [i][k]
static ERF_POLY: [[u64; 10]; 49] = [
    // 0
    [
        0x0000_0000_0000_0000,
        0x3FF2_0DD7_5042_9B6D,
        0x0000_0000_0000_0000,
        0xBFD8_1274_6B03_7889,
        0x0000_0000_0000_0000,
        0x3FBC_E2F2_19D8_7611,
        0x0000_0000_0000_0000,
        0xBF9B_82CC_478A_95BE,
        0x0000_0000_0000_0000,
        0x3F75_5CFD_ED96_CC13,
    ],
    // 1
    [
        0x3FC1_F5E1_A35C_3B89,
        0x3FF1_C62F_A1E8_69B6,
        0xBFC1_C62F_A1E8_662B,
        0xBFD6_F552_DBCC_3212,
        0x3FB1_96C9_CD55_46F2,
        0x3FBA_ABA6_23BC_B0DC,
        0xBF97_34E7_EE78_6C34,
        0xBF98_9257_4F40_1B32,
        0x3F76_EB28_8CD1_77E6,
        0x3F72_71E8_5BAF_002A,
    ],
    // 2
    [
        0x3FD1_AF54_E232_D609,
        0x3FF0_F5D1_602F_7E41,
        0xBFD0_F5D1_602F_7B4B,
        0xBFD3_C974_458C_BD6A,
        0x3FC0_40E8_A6A8_CA45,
        0x3FB4_7E5C_FED2_90A3,
        0xBFA4_C0B0_410F_CFDE,
        0xBF90_8D93_A8F6_2399,
        0x3F83_D1F4_6EFA_EE52,
        0x3F65_4F23_DDCB_4AE9,
    ],
    // 3
    [
        0x3FD9_DD0D_2B72_1F39,
        0x3FEF_5F0C_DAF1_5313,
        0xBFD7_8749_A434_FB19,
        0xBFCE_106C_51D1_EFFC,
        0x3FC5_529A_BC9C_A99D,
        0x3FA7_488B_8A8B_065F,
        0xBFA9_A792_1D81_9155,
        0xBF76_5C11_C33A_7A46,
        0x3F86_FF64_786D_46EF,
        0x3F20_6855_DF9C_8C1D,
    ],
    // 4
    [
        0x3FE0_A7EF_5C18_EDD2,
        0x3FEC_1EFC_A49A_5011,
        0xBFDC_1EFC_A49A_4D8F,
        0xBFC2_BF53_1866_E1A2,
        0x3FC7_6F27_DE58_7622,
        0x3F7D_FEEB_5BD4_FB31,
        0xBFA9_9F11_F0E1_77B6,
        0x3F76_23C1_A4C7_0BE1,
        0x3F84_8BCC_F6D9_60FB,
        0xBF61_B737_AA32_69F6,
    ],
    // 5
    [
        0x3FE3_F196_DCD0_F135,
        0x3FE8_6E96_9413_4B9E,
        0xBFDE_8A3C_3918_1D58,
        0xBFAC_8105_0216_8B8D,
        0x3FC6_963C_8A27_0B8B,
        0xBF9C_1242_DF75_19F4,
        0xBFA5_2B25_966A_236C,
        0x3F8C_7CD6_B925_4148,
        0x3F7B_5B6F_EDCC_16C1,
        0xBF6D_B5D5_00FF_161F,
    ],
    // 6
    [
        0x3FE6_C1C9_759D_0E5F,
        0x3FE4_92E4_2D78_D2C5,
        0xBFDE_DC56_4435_3C73,
        0x3F9B_6E85_91F6_5E67,
        0x3FC3_49B5_EAA6_0254,
        0xBFAB_42A1_88CD_111F,
        0xBF9B_8478_0096_88F8,
        0x3F92_E0AE_4B47_6886,
        0x3F62_DEFF_0037_FE08,
        0xBF70_3AA3_5393_4EA3,
    ],
    // 7
    [
        0x3FE9_1724_951B_8FC6,
        0x3FE0_CAB6_1F08_4B93,
        0xBFDD_62BE_B64E_85B1,
        0x3FB7_C9D7_56A1_133C,
        0x3FBC_C605_6805_7105,
        0xBFB1_350F_4B0E_35CE,
        0xBF85_3BB8_A9E8_E9EE,
        0x3F93_0AC1_39AF_A245,
        0xBF5E_1A90_16F9_02C2,
        0xBF6A_A626_D88D_C02F,
    ],
    // 8
    [
        0x3FEA_F767_A741_088B,
        0x3FDA_911F_096F_BC26,
        0xBFDA_911F_096F_BE1B,
        0x3FC1_B614_B0F5_27D3,
        0x3FB1_B614_B133_D8FC,
        0xBFB1_B614_B0F0_C4D9,
        0x3F72_E44F_5D62_4178,
        0x3F8F_096F_74BF_1191,
        0xBF73_8489_1BBB_6750,
        0xBF5E_DF8B_923A_7C5D,
    ],
    // 9
    [
        0x3FEC_6DAD_2829_EC62,
        0x3FD4_5E99_BCBB_7915,
        0xBFD6_EA6C_F452_EA10,
        0x3FC4_CB3C_F0AA_0C2C,
        0x3F9C_A508_3253_8DE0,
        0xBFAF_65D1_5F2F_0B98,
        0x3F8F_D1C1_97D1_D245,
        0x3F83_ACC8_4E99_B8FD,
        0xBF78_A86F_6619_CF88,
        0xBF37_B7F5_B1CD_4F05,
    ],
    // 10
    [
        0x3FED_8865_D98A_BE01,
        0x3FCE_4652_FADC_B6B2,
        0xBFD2_EBF3_DCC9_F374,
        0x3FC5_71D0_1C5C_57C7,
        0xBF79_3A9A_792E_48CD,
        0xBFA8_281C_E0D4_6E68,
        0x3F95_CFFE_742F_D9EC,
        0x3F6D_B442_632A_3FA3,
        0xBF77_4E53_8AE6_511B,
        0x3F4C_A7A2_E5DF_386A,
    ],
    // 11
    [
        0x3FEE_5768_C3B4_A3FC,
        0x3FC5_CE59_5C45_5B0A,
        0xBFCD_FBBA_DEDF_5E37,
        0x3FC4_374D_82E0_4D7C,
        0xBF9F_3B8D_5291_02F8,
        0xBF9F_572C_4CD1_D96E,
        0x3F96_B16E_9912_F383,
        0xBF57_3FEE_7775_0B80,
        0xBF71_70B3_B3F8_52E3,
        0x3F59_CC5C_537C_9F51,
    ],
    // 12
    [
        0x3FEE_EA55_5713_7AE0,
        0x3FBE_7237_26B8_24A9,
        0xBFC6_D5A9_5D0A_1B33,
        0x3FC1_C2A0_2BEB_6B88,
        0xBFA6_D5A9_5D13_8C50,
        0xBF8E_7237_2720_4C09,
        0x3F93_CA3D_A7AD_0189,
        0xBF73_6D71_5ED1_409C,
        0xBF63_5CC9_71C5_0AD8,
        0x3F5B_F915_DFE2_F724,
    ],
    // 13
    [
        0x3FEF_4F69_3B67_BD77,
        0x3FB4_99D4_78BC_A735,
        0xBFC0_BCFC_A219_46B8,
        0x3FBD_6631_E1A2_8F6C,
        0xBFA9_74C0_36AA_D105,
        0xBF61_7D43_0CA3_71AC,
        0x3F8D_8580_C3B7_B39C,
        0xBF79_54A9_EF04_ACF4,
        0xBF43_015C_A80F_5715,
        0x3F57_17B1_8EEC_14F3,
    ],
    // 14
    [
        0x3FEF_92D0_77F8_D56D,
        0x3FAB_0553_0322_1015,
        0xBFB7_A4A8_A2BD_CB3E,
        0x3FB7_148C_3D57_C31C,
        0xBFA8_A0DA_545D_A712,
        0x3F7B_2225_7DCB_79D8,
        0x3F82_5B39_87B2_1053,
        0xBF78_D10F_A9E3_63CE,
        0x3F47_C7E1_1A52_78B8,
        0x3F4D_4C7C_1E9E_8631,
    ],
    // 15
    [
        0x3FEF_BE61_EEF4_CF6A,
        0x3FA1_2CEB_37FF_9BC3,
        0xBFB0_1A1C_847F_9F89,
        0x3FB1_43D1_C6F4_F01B,
        0xBFA5_A316_5233_6CB3,
        0x3F87_79B1_E58E_62B8,
        0x3F70_D09D_45EE_CF6B,
        0xBF74_2FCC_533E_2163,
        0x3F57_5FFC_CB2E_FF72,
        0x3F37_C9B6_826F_B1A9,
    ],
    // 16
    [
        0x3FEF_D9AE_1427_95E3,
        0x3F95_29B9_E8CF_9A1E,
        0xBFA5_29B9_E8CF_96C1,
        0x3FA8_B0AE_3A47_87D0,
        0xBFA1_A2C5_9772_9307,
        0x3F8A_CE74_04ED_22FA,
        0x3F3E_195B_95AC_A521,
        0xBF6B_AE0C_9540_6CF9,
        0x3F5A_067F_EEC7_8AEF,
        0xBF09_BEE6_0382_A231,
    ],
    // 17
    [
        0x3FEF_EA42_18D6_594A,
        0x3F89_4624_E78E_0FAF,
        0xBF9A_DA87_3606_ED84,
        0x3FA0_EA47_5DA3_BD48,
        0xBF9A_FE55_3FBD_7B4D,
        0x3F89_973B_48C6_73F2,
        0xBF5D_D78A_79BE_79C2,
        0xBF5E_A03F_17EA_5236,
        0x3F56_A523_B1D3_3928,
        0xBF32_EE2A_D20D_8ECB,
    ],
    // 18
    [
        0x3FEF_F404_7603_19B4,
        0x3F7D_4143_A9DF_E965,
        0xBF90_74B6_0F8D_F2FC,
        0x3F96_3EF6_1E82_427A,
        0xBF93_8A98_327A_F51B,
        0x3F85_D3B1_7BD8_BBBA,
        0xBF67_CAE0_9EE1_DA06,
        0xBF45_F835_E676_87D7,
        0x3F50_5FB4_7510_9291,
        0xBF38_2A81_364F_31F9,
    ],
    // 19
    [
        0x3FEF_F996_0F3E_B327,
        0x3F70_6918_B635_5624,
        0xBF83_7CCD_585F_5915,
        0x3F8C_1EC1_02E3_6352,
        0xBF8A_E596_15E2_96FF,
        0x3F81_1DAE_4742_0357,
        0xBF69_82B3_6EE2_A453,
        0x3F20_2834_F97B_79A6,
        0x3F43_7C3C_D29C_1AC6,
        0xBF36_1998_6F87_DC20,
    ],
    // 20
    [
        0x3FEF_FCAA_8F4C_9BEA,
        0x3F61_D831_70FB_F6FB,
        0xBF76_4E3D_CD3A_FCC9,
        0x3F81_19DA_0C46_CC6D,
        0xBF81_A89B_97AE_7330,
        0x3F79_0E81_2843_E93B,
        0xBF66_ECDD_5F72_E048,
        0x3F41_C610_5DBD_F180,
        0x3F31_2237_4A72_3012,
        0xBF30_663E_D6DA_0220,
    ],
    // 21
    [
        0x3FEF_FE51_4BBD_C197,
        0x3F52_CE89_8809_244E,
        0xBF68_AF14_828C_0EC9,
        0x3F74_07FB_D18F_130E,
        0xBF76_2D4C_6D0D_3EF9,
        0x3F71_46C4_B3DA_1EC7,
        0xBF62_67F5_0F43_6DDA,
        0x3F46_4F89_D7E6_29E6,
        0x3F02_8AD0_5DD4_2195,
        0xBF24_03CB_BD4C_95E2,
    ],
    // 22
    [
        0x3FEF_FF2C_FB04_53D9,
        0x3F43_360C_CD23_DB3A,
        0xBF5A_6A51_9A11_63F6,
        0x3F66_9CF4_66CC_E29F,
        0xBF6A_B0C2_7352_0F06,
        0x3F66_9359_604C_628A,
        0xBF5B_2757_B85B_8AEC,
        0x3F45_2B63_8643_4169,
        0xBF17_316D_54B6_B629,
        0xBF12_B613_14BC_F0F7,
    ],
    // 23
    [
        0x3FEF_FF9B_A420_E834,
        0x3F33_0538_FBB7_7ECD,
        0xBF4B_5781_E9D7_E1A5,
        0x3F58_9E17_C074_D983,
        0xBF5E_D4AC_7D41_2C7E,
        0x3F5C_11F2_7035_4A5D,
        0xBF52_ADD3_00F5_6D3E,
        0x3F41_51F8_94E8_4A30,
        0xBF21_BB4E_13E7_6024,
        0xBEF1_131A_84D4_7539,
    ],
    // 24
    [
        0x3FEF_FFD1_AC41_35F9,
        0x3F22_408E_9BA3_327E,
        0xBF3B_60D5_E974_E560,
        0x3F49_DB74_B1D1_E5B5,
        0xBF51_1C85_B1B5_BBED,
        0x3F50_A7B5_5447_F3E7,
        0xBF48_2F24_7A0B_401D,
        0x3F39_98B6_087C_5788,
        0xBF21_A53E_8A88_53E6,
        0x3EEC_F19D_E52F_2DD2,
    ],
    // 25
    [
        0x3FEF_FFEB_3EBB_267B,
        0x3F10_F9E1_B4DD_36DE,
        0xBF2A_8670_AA99_B284,
        0x3F3A_3737_E2A2_FD2C,
        0xBF42_4544_F013_9D51,
        0x3F42_E7E7_63A9_7916,
        0xBF3D_A497_7434_A254,
        0x3F31_76D0_5000_0892,
        0xBF1D_283A_01D2_6A48,
        0x3EFA_9F2A_3ACA_BE86,
    ],
    // 26
    [
        0x3FEF_FFF6_F9F6_7E55,
        0x3EFE_9B5E_8D00_CE75,
        0xBF18_DE3C_D290_989C,
        0x3F29_AA48_9E3C_B688,
        0xBF32_C7D5_EF23_89C8,
        0x3F34_90A4_D20B_4EAD,
        0xBF31_4545_F9C0_08D8,
        0x3F26_47F7_F454_F26A,
        0xBF15_68CC_4D72_AB3C,
        0x3EFB_24AD_7944_6BA1,
    ],
    // 27
    [
        0x3FEF_FFFC_316D_9ED0,
        0x3EEA_BE09_E914_4B5E,
        0xBF06_9058_5CA8_E363,
        0x3F18_4522_FE88_1A0E,
        0xBF22_98F8_D4D7_D079,
        0x3F25_7757_7874_B0FB,
        0xBF23_30A9_663E_4B0B,
        0x3F1A_C999_DE83_6779,
        0xBF0C_C75D_F723_A213,
        0x3EF6_4A99_9DEF_3FA1,
    ],
    // 28
    [
        0x3FEF_FFFE_710D_565E,
        0x3ED6_A597_219A_93DA,
        0xBEF3_D0E4_3D66_C7D2,
        0x3F06_2CCE_A63C_AAFB,
        0xBF11_C077_229F_9B40,
        0x3F15_86BA_FCB2_C3AE,
        0xBF14_6151_52D6_7223,
        0x3F0E_827F_2DD7_2B90,
        0xBF01_FC44_A007_5BB1,
        0x3EF0_147B_8602_6475,
    ],
    // 29
    [
        0x3FEF_FFFF_618C_3DA6,
        0x3EC2_96A7_0F41_4056,
        0xBEE0_D887_65D2_5F5F,
        0x3EF3_94B1_FA66_FC59,
        0xBF00_5760_AEA1_A8CD,
        0x3F04_C1FE_48F9_F9FD,
        0xBF04_B97D_BF9F_971F,
        0x3F00_85C0_0C05_555D,
        0xBEF5_1A62_EEFA_4087,
        0x3EE5_1A8D_15AB_9294,
    ],
    // 30
    [
        0x3FEF_FFFF_C2F1_71E3,
        0x3EAD_9371_E2FF_7C42,
        0xBECB_BA3A_C4CD_624F,
        0x3EE0_B6A7_B0F1_8CE7,
        0xBEED_06F5_8A4D_805E,
        0x3EF3_436B_CA9E_C48F,
        0xBEF4_3575_5C2A_5A12,
        0x3EF1_10DC_82BF_9120,
        0xBEE7_6412_CD29_E73B,
        0x3ED9_A77C_A9B1_004D,
    ],
    // 31
    [
        0x3FEF_FFFF_E92C_ED93,
        0x3E96_CE1A_A3FD_7BF1,
        0xBEB6_17A9_CEDA_DA1D,
        0x3ECB_95FA_39B3_2281,
        0xBED8_E1FC_46BF_4194,
        0x3EE1_3717_227A_10C4,
        0xBEE2_EB21_7471_8D00,
        0x3EE0_D8C0_A0B6_F6F8,
        0xBED8_99AE_40E6_8FD5,
        0x3ECD_3244_4AFD_801E,
    ],
    // 32
    [
        0x3FEF_FFFF_F7B9_1176,
        0x3E81_0B14_88AE_B250,
        0xBEA1_0B14_88AB_834C,
        0x3EB6_03A5_308B_A8AE,
        0xBEC4_980E_2B86_2928,
        0x3ECD_A5F1_1065_E57B,
        0xBED1_04FC_4E0D_0AA8,
        0x3ECF_D7BE_FB73_691A,
        0xBEC8_A0D8_3A39_22C6,
        0x3EBF_5316_DC3A_C3AF,
    ],
    // 33
    [
        0x3FEF_FFFF_FD16_9D0C,
        0x3E68_B0CF_CE05_7A21,
        0xBE89_7656_4C6E_A86B,
        0x3EA0_FDAC_559A_A228,
        0xBEB0_7600_D16B_32E6,
        0x3EB8_9CA7_7793_1924,
        0xBEBD_7396_BD70_79D1,
        0x3EBC_D9D7_DED4_C8DA,
        0xBEB7_8765_E26E_12A4,
        0x3EAF_D624_E706_DEBD,
    ],
    // 34
    [
        0x3FEF_FFFF_FF01_A8B6,
        0x3E51_55A0_9065_D541,
        0xBE72_6AFA_9964_F8B9,
        0x3E89_5EA6_FDFD_E4DC,
        0xBE99_6BA7_44DE_CB88,
        0x3EA3_B468_0539_6B39,
        0xBEA8_8679_E3CB_E054,
        0x3EA9_16DF_03A4_9570,
        0xBEA5_7E0A_AA2E_675B,
        0x3E9E_C270_190A_11CE,
    ],
    // 35
    [
        0x3FEF_FFFF_FFAB_D229,
        0x3E37_974E_743D_EAD9,
        0xBE59_CD7D_CF15_95B1,
        0x3E72_52AF_6F46_D9C2,
        0xBE82_F735_5C8D_9148,
        0x3E8E_7103_0029_3C83,
        0xBE93_AAF7_46BE_77F7,
        0x3E94_F605_DA0F_1F0A,
        0xBE92_CCCA_EB5E_4D19,
        0x3E8C_53D6_124A_43B5,
    ],
    // 36
    [
        0x3FEF_FFFF_FFE4_FA30,
        0x3E1F_1E35_23B4_1EB2,
        0xBE41_80FD_E408_2EA0,
        0x3E59_9B86_655D_C65B,
        0xBE6B_598C_CEA4_738A,
        0x3E76_B1BA_FBE4_FDD0,
        0xBE7E_64E9_724E_C74E,
        0x3E80_D66E_64C5_843C,
        0xBE7F_892D_EC48_3172,
        0x3E78_EB10_8A45_6B6E,
    ],
    // 37
    [
        0x3FEF_FFFF_FFF7_9626,
        0x3E03_E44E_4530_1CB5,
        0xBE26_FFFA_7FE8_61D2,
        0x3E41_508F_768B_2A06,
        0xBE53_0FD0_DDA7_A2EB,
        0x3E60_5563_2F54_857E,
        0xBE66_A389_4E10_8A57,
        0x3E6A_06E8_C746_5723,
        0xBE69_634C_85E6_DE9F,
        0x3E64_F8BD_4193_A288,
    ],
    // 38
    [
        0x3FEF_FFFF_FFFD_759D,
        0x3DE8_A617_45EC_7F22,
        0xBE0D_453B_A2E1_912E,
        0x3E26_A8AE_BA41_15B2,
        0xBE39_B017_D301_0112,
        0x3E46_B43C_A1CF_CA28,
        0xBE50_42D7_2DB9_FCE2,
        0x3E53_5DB6_8667_C10E,
        0xBE53_A2AD_D2B3_BB08,
        0x3E50_E8FD_DA7C_DD27,
    ],
    // 39
    [
        0x3FEF_FFFF_FFFF_4188,
        0x3DCD_9A88_0F30_6F45,
        0xBDF2_0A2A_E921_CC0D,
        0x3E0C_B2A2_E559_6723,
        0xBE20_BC6E_EF1A_9E4C,
        0x3E2E_7BA5_8BD4_31DD,
        0xBE36_8908_17E7_D15F,
        0x3E3B_C28E_46A1_C646,
        0xBE3D_33AA_DE2F_3E8B,
        0x3E3A_281C_DEC6_2F95,
    ],
    // 40
    [
        0x3FEF_FFFF_FFFF_C9E8,
        0x3DB1_3AF4_F04F_9C5D,
        0xBDD5_89B2_2C32_7525,
        0x3DF1_96DA_0A9D_EF0F,
        0xBE05_16D3_FC7F_5BC7,
        0x3E13_C51D_1BFA_74C5,
        0xBE1E_2313_CF6F_A707,
        0x3E23_2C5A_553F_46AC,
        0xBE24_E417_88AB_B2F8,
        0x3E23_6C0C_63C4_A57C,
    ],
    // 41
    [
        0x3FEF_FFFF_FFFF_F11A,
        0x3D93_70AB_8327_B3A6,
        0xBDB8_E85B_BFC2_224F,
        0x3DD4_DECA_CBEB_0D17,
        0xBDE9_B3C5_A0B3_42C5,
        0x3DF8_C78E_5F46_16BA,
        0xBE03_739A_905F_076F,
        0x3E09_8885_A55E_317E,
        0xBE0C_C615_4665_C8B0,
        0x3E0B_B6C5_C672_97F8,
    ],
    // 42
    [
        0x3FEF_FFFF_FFFF_FC05,
        0x3D75_422E_F5D8_9AF4,
        0xBD9B_E6DD_A244_CFA5,
        0x3DB7_F8A0_F3CE_67D5,
        0xBDCE_4CB5_1614_D7E7,
        0x3DDE_044B_664F_7549,
        0xBDE8_3E5C_5C6A_BE23,
        0x3DF0_6579_D245_D626,
        0xBDF3_15A3_F05B_E173,
        0x3DF3_032D_CB02_A0EE,
    ],
    // 43
    [
        0x3FEF_FFFF_FFFF_FEF8,
        0x3D56_8823_E529_79BC,
        0xBD7E_46F0_3B62_543F,
        0x3D9A_A761_20CF_177D,
        0xBDB1_46FB_3232_7D96,
        0x3DC1_92D3_CE75_1748,
        0xBDCD_2E48_062E_FF0C,
        0x3DD4_50AD_6133_4718,
        0xBDD8_649F_E31F_0D5E,
        0x3DD9_190F_DF0D_C40D,
    ],
    // 44
    [
        0x3FEF_FFFF_FFFF_FFBE,
        0x3D37_2586_10B3_BE6E,
        0xBD5F_D398_563D_7138,
        0x3D7C_B12E_2F38_8698,
        0xBD93_1012_4638_047A,
        0x3DA3_E4A2_1ECD_7C38,
        0xBDB0_F6A7_B0B8_427E,
        0x3DB8_4A18_9568_34A3,
        0xBDBE_0DA7_0795_FB75,
        0x3DBF_E4B8_D35B_2326,
    ],
    // 45
    [
        0x3FEF_FFFF_FFFF_FFF0,
        0x3D17_0BEA_F9C8_0FB0,
        0xBD40_3461_372B_6454,
        0x3D5D_E74C_0D91_BF97,
        0xBD74_59C8_8C8F_BB58,
        0x3D85_C5EE_7213_586C,
        0xBD93_0DEB_C2DA_0990,
        0x3D9C_0831_CD7C_D5B8,
        0xBDA1_DA13_9EC2_664A,
        0x3DA3_8443_4E18_5280,
    ],
    // 46
    [
        0x3FEF_FFFF_FFFF_FFFC,
        0x3CF6_3DAF_8B4B_3218,
        0xBD1F_F8AC_571F_06B1,
        0x3D3E_2D06_D6BE_9AAC,
        0xBD55_05D9_E1CA_0647,
        0x3D67_0B70_5006_5027,
        0xBD74_AE72_DDD2_BCFA,
        0x3D7F_3C01_85BF_BE5C,
        0xBD84_74EE_4F38_EF06,
        0x3D87_0394_E1B4_6CE8,
    ],
    // 47
    [
        0x3FEF_FFFF_FFFF_FFFF,
        0x3CD4_CD9C_0415_A507,
        0xBCFE_8DFD_24B2_3CFF,
        0x3D1D_7C14_9F7E_4BDA,
        0xBD35_042A_85E0_5051,
        0x3D47_96A3_EBDA_6F50,
        0xBD55_B1B3_82C2_3312,
        0x3D60_CDDF_FF26_9597,
        0xBD66_9E1C_E949_3D8A,
        0x3D6A_284C_8820_429F,
    ],
    // 48
    [
        0x3FF0_0000_0000_0000,
        0x3CB2_DC11_9095_8EB1,
        0xBCDC_4A1A_5768_6E37,
        0x3CFB_E584_A585_5747,
        0xBD14_5543_ABB0_8FD9,
        0x3D27_5A82_17BA_D831,
        0xBD35_FEF9_E9E4_0BA8,
        0x3D41_76E3_4480_E509,
        0xBD48_2244_F9BF_FDD1,
        0x3D4C_AA65_77A9_81B4,
    ],
];
/// Q_i(t) ~ M(i/2 + t) on |t| <= 1/4 (i = 0: t in [0, 1/4]), degree 11, coefficient of t^k at [i][k]
static MILLS_POLY: [[u64; 12]; 31] = [
    // 0
    [
        0x3FE0_0000_0000_0000,
        0xBFD9_8845_33D4_364F,
        0x3FCF_FFFF_FFFF_FE67,
        0xBFC1_0583_77E2_5748,
        0x3FAF_FFFF_FFB7_AC74,
        0xBF9B_3C05_7FB2_0017,
        0x3F85_5553_DDEA_462D,
        0xBF6F_1FCE_1693_361A,
        0x3F55_5282_42F3_F5D0,
        0xBF3B_7A57_F3F4_C4E2,
        0x3F20_067B_345C_C910,
        0xBEFA_868A_FFA2_7657,
    ],
    // 1
    [
        0x3FD6_6027_AD4C_24AE,
        0xBFCC_B062_BA5C_47F1,
        0x3FBE_681D_FD6A_3828,
        0xBFAC_1DCE_F957_B251,
        0x3F97_60AA_3EDD_85E8,
        0xBF81_D150_5459_8523,
        0x3F69_3B1E_01ED_E0C4,
        0xBF50_C233_3E63_8142,
        0x3F35_0A20_721C_42D2,
        0xBF19_1D8F_95E0_7A4A,
        0x3EFD_0823_31FE_CD8F,
        0xBEDF_B8B2_2917_5FA9,
    ],
    // 2
    [
        0x3FD0_BDB2_E039_DF32,
        0xBFC1_9524_A734_AE3D,
        0x3FAF_CC82_327E_27E7,
        0xBF99_B00A_F18D_BEB6,
        0x3F82_F47C_B9A1_16C9,
        0xBF69_EFAD_BAA1_8C7C,
        0x3F50_A0C1_E8A8_BFC5,
        0xBF34_23C5_BCD4_3046,
        0x3F17_2F45_949B_087B,
        0xBEF9_7F6C_26D6_435B,
        0x3EDB_36B2_F94A_5848,
        0xBEBB_9B8C_4515_3E2C,
    ],
    // 3
    [
        0x3FCA_5705_5968_92B7,
        0xBFB7_1C04_C317_211E,
        0x3FA2_0403_8E2E_7578,
        0xBF89_9805_968B_7250,
        0x3F70_D602_EB6A_56DD,
        0xBF54_BF38_A317_7938,
        0x3F38_2624_A600_33A4,
        0xBF1A_B8F4_9E80_0F1D,
        0x3EFC_413F_8EB3_4DA1,
        0xBEDC_AB08_DE36_DD11,
        0x3EBC_4AEC_56F2_7F15,
        0xBE9A_ACE3_56BF_241B,
    ],
    // 4
    [
        0x3FC5_845D_CAD2_A54E,
        0xBFB0_0F9D_A406_4408,
        0x3F95_D300_9B31_85F2,
        0xBF7B_75F1_CCF2_B34B,
        0x3F60_300F_696B_6318,
        0xBF42_096A_38CC_7699,
        0x3F23_1E46_37E2_572F,
        0xBF03_60A2_B4CC_D5B2,
        0x3EE2_DBC0_E805_ECF9,
        0xBEC1_AF4C_2895_6F3A,
        0x3EA0_2ADC_8979_C16A,
        0xBE7C_5F04_66ED_7311,
    ],
    // 5
    [
        0x3FC2_1725_2317_00B8,
        0xBFA7_5AB6_3FBB_AB50,
        0x3F8B_F399_DA0D_ADA8,
        0xBF6F_6275_D265_FB5F,
        0x3F50_AC20_6D19_3050,
        0xBF30_DEE2_1002_ED62,
        0x3F10_5788_690F_2094,
        0xBEEE_6E83_E1EA_5A2E,
        0x3ECB_53D0_7DC4_AE82,
        0xBEA7_BC59_EB55_13C2,
        0x3E84_2455_2615_6F51,
        0xBE60_7913_668E_5332,
    ],
    // 6
    [
        0x3FBF_1B89_C231_E9B8,
        0xBFA1_9CEF_1176_3837,
        0x3F82_C08C_A002_55B6,
        0xBF62_ED73_326D_2AF4,
        0x3F42_39D8_E8C0_4062,
        0xBF20_D368_0C57_C774,
        0x3EFD_E6E4_B57D_5FC7,
        0xBED9_A853_B498_810C,
        0x3EB5_5131_C6B1_5EB4,
        0xBE91_308E_7B55_D714,
        0x3E6B_2410_1E72_6C13,
        0xBE44_BA38_1095_87F4,
    ],
    // 7
    [
        0x3FBB_396F_9CF1_E260,
        0xBF9B_6038_A809_03C9,
        0x3F7A_29F0_4F4F_F895,
        0xBF57_E822_0E10_3747,
        0x3F34_FB4A_0C06_1F6D,
        0xBF11_C0D0_D81F_3EB1,
        0x3EED_0DBC_5823_FCAF,
        0xBEC7_0CD4_674D_6B13,
        0x3EA1_C4F4_6D93_A11E,
        0xBE7A_AC22_6FA8_6C2C,
        0x3E53_A2B3_4614_F091,
        0xBE2C_0F8C_9934_EC44,
    ],
    // 8
    [
        0x3FB8_2B4B_B8C9_4DCE,
        0xBF95_CF97_B0AE_882C,
        0x3F72_DDA0_40D6_2D16,
        0xBF4F_6A4F_53AE_769C,
        0x3F29_43C4_B7F6_DF43,
        0xBF03_AE88_58AF_43E9,
        0x3EDD_C697_5753_56DC,
        0xBEB5_EA3A_0377_F669,
        0x3E8F_715E_CE54_DCE5,
        0xBE66_0544_971B_A5C6,
        0x3E3E_4EBD_3C14_6D50,
        0xBE14_4DCC_A996_05C8,
    ],
    // 9
    [
        0x3FB5_B5AC_D3B1_5FBB,
        0xBF91_BE2C_5ACA_A9DD,
        0x3F6B_FBAE_D8D6_0A2B,
        0xBF45_5BC0_08C2_D703,
        0x3F1F_A3B6_77D6_439F,
        0xBEF6_CAA2_88A6_5807,
        0x3ECF_FEA8_A4C9_74F3,
        0xBEA5_EAEC_4413_248F,
        0x3E7D_596B_17A5_43BB,
        0xBE53_3AF2_19AA_201F,
        0x3E28_CD4A_06B2_25B6,
        0xBDFF_38F3_871D_00C8,
    ],
    // 10
    [
        0x3FB3_B0FB_CB4C_77BE,
        0xBF8D_614E_B694_1456,
        0x3F65_42A9_92FE_B08E,
        0xBF3D_EA72_9E3C_FC4D,
        0x3F14_810F_80C4_6668,
        0xBEEB_6D94_BB61_5FBD,
        0x3EC1_EDB8_3FC6_5BCA,
        0xBE96_EFAF_AE1E_F09E,
        0x3E6C_BF47_1C80_F8F8,
        0xBE41_AB05_1268_A36C,
        0x3E15_67CC_AB3A_0861,
        0xBDE9_5F4B_9E5D_FA86,
    ],
    // 11
    [
        0x3FB2_01FA_9259_B7AC,
        0xBF88_B195_531B_3873,
        0x3F60_7E3E_9370_0DD0,
        0xBF35_7FF8_5961_8F9D,
        0x3F0B_643D_5FCF_8A16,
        0xBEE1_138D_C9AB_42AF,
        0x3EB4_DC8C_E40E_C443,
        0xBE88_FF51_A3F3_CB43,
        0x3E5D_681C_0653_F38C,
        0xBE30_FEF8_9085_F516,
        0x3E03_6399_4885_39E8,
        0xBDD5_AF6F_6792_B1E3,
    ],
    // 12
    [
        0x3FB0_9560_8C7B_15F1,
        0xBF85_068C_2372_ACE0,
        0x3F5A_0EEE_3CA2_891E,
        0xBF2F_9CC9_D4BB_2B7E,
        0x3F02_CAB6_E8B1_3364,
        0xBED5_EAFC_97A1_ABC8,
        0x3EA9_1A64_F61A_D81D,
        0xBE7C_41BE_DB7F_253B,
        0x3E4F_48A6_016C_FED6,
        0xBE21_0B7B_6E39_238F,
        0x3DF2_5A25_2F8E_1E0A,
        0xBDC3_6861_F875_E34A,
    ],
    // 13
    [
        0x3FAE_BA5F_E5B1_4B2A,
        0xBF82_1AE9_2685_27C7,
        0x3F54_EA50_718E_A868,
        0xBF27_B5FB_856F_E99E,
        0x3EFA_6741_523B_9ABD,
        0xBECC_E785_BB2B_F102,
        0x3E9F_2187_17F9_E4D6,
        0xBE70_8149_02B4_C31C,
        0x3E41_3DBE_0656_D730,
        0xBE11_C0C0_2D75_DCB4,
        0x3DE2_14B1_1EC5_A6FE,
        0xBDB2_1DC2_DCF8_6622,
    ],
    // 14
    [
        0x3FAC_9E12_0E48_8937,
        0xBF7F_7D59_D52F_902B,
        0x3F51_0637_3BEE_B10D,
        0xBF22_1A61_D893_C38A,
        0x3EF2_F219_E6D6_5881,
        0xBEC3_86F5_879B_FBD7,
        0x3E93_D576_025C_D8EA,
        0xBE63_DD14_C8FD_259D,
        0x3E33_A01B_1793_55E5,
        0xBE03_2360_8825_3E77,
        0x3DD2_7A29_2A34_4991,
        0xBDA1_933E_B228_A9A5,
    ],
    // 15
    [
        0x3FAA_C629_2BDB_BFDC,
        0xBF7B_9FA6_AD8C_9C8E,
        0x3F4C_0F9D_24FD_A2D4,
        0xBF1C_159C_E7E6_FDFB,
        0x3EEB_B5A0_B951_450D,
        0xBEBA_F782_E889_EF96,
        0x3E89_E63F_F918_DCDE,
        0xBE58_8F1A_D677_9B41,
        0x3E27_00B3_2A6C_663C,
        0xBDF5_4A34_1D56_468B,
        0x3DC3_8651_3906_CF50,
        0xBD91_A9E4_FBA8_E185,
    ],
    // 16
    [
        0x3FA9_2697_22F5_0CDD,
        0xBF78_6B84_37CA_5CFD,
        0x3F47_625D_6555_FC03,
        0xBF16_1891_89B2_BF79,
        0x3EE4_9CBD_BA33_C56C,
        0xBEB2_FDCA_5FF2_BB40,
        0x3E81_4A23_C2EC_8BF6,
        0xBE4F_1E2F_CDDB_EC9E,
        0x3E1B_B0BA_728A_AEB6,
        0xBDE8_5F9A_0C1D_CACE,
        0x3DB5_4626_D8CF_CA39,
        0xBD82_56A7_79C4_F2A7,
    ],
    // 17
    [
        0x3FA7_B5F3_3104_87CA,
        0xBF75_BCB3_EFD9_827D,
        0x3F43_AE80_45AD_A49D,
        0xBF11_9BA3_26C0_4C87,
        0x3EDF_245D_902A_666E,
        0xBEAB_3B58_3760_6D30,
        0x3E77_8DFE_390C_C038,
        0xBE44_28EE_ADD4_FE80,
        0x3E11_1403_52EF_123D,
        0xBDDC_A5D7_A8DF_9F34,
        0x3DA7_D7A2_9D86_5A9B,
        0xBD73_9DE7_4551_859E,
    ],
    // 18
    [
        0x3FA6_6CCB_7B9C_0C57,
        0xBF73_7812_312A_1BC5,
        0x3F40_B6E0_8995_A324,
        0xBF0C_6399_104B_5F52,
        0x3ED7_DB4E_0D67_AF0E,
        0xBEA3_D810_0F89_3787,
        0x3E70_57D5_2A00_CE0D,
        0xBE3A_A929_2C47_C385,
        0x3E05_8ADE_4B2E_0B18,
        0xBDD1_3F78_339F_33E3,
        0x3D9B_6C2C_AF6F_CA88,
        0xBD65_9220_AF13_B8B9,
    ],
    // 19
    [
        0x3FA5_4529_72F7_6B07,
        0xBF71_88FE_D399_CDF7,
        0x3F3C_9EB5_EC31_9C60,
        0xBF07_2077_E4B9_851B,
        0x3ED2_8278_C954_E410,
        0xBE9D_5A72_2A12_1CB0,
        0x3E67_106A_B24D_692A,
        0xBE31_F668_CDA9_A315,
        0x3DFB_BCE1_F635_EA2F,
        0xBDC5_3C85_B012_485B,
        0x3D90_26E6_7ED8_FDED,
        0xBD58_54E1_056A_FACC,
    ],
    // 20
    [
        0x3FA4_3A38_AE46_ED46,
        0xBF6F_BF2C_FDC6_DCC6,
        0x3F38_AF23_EAA8_D287,
        0xBF03_0557_5EFC_77C3,
        0x3ECD_0ED6_7DA7_994E,
        0xBE96_01BB_3EC5_86F9,
        0x3E60_872F_4CC3_A864,
        0xBE28_A002_352B_4492,
        0x3DF2_32DD_A878_DC51,
        0xBDBA_B0A6_682B_41D8,
        0x3D83_73D7_1ED7_D61D,
        0xBD4C_19D3_1A2F_926A,
    ],
    // 21
    [
        0x3FA3_4805_9D34_7DF7,
        0xBF6C_DEEA_BFA8_7E26,
        0x3F35_6EE3_DB7A_CB7F,
        0xBEFF_8FF2_9938_8293,
        0x3EC7_0D94_DDB6_B93D,
        0xBE90_B4C2_B608_BB7D,
        0x3E58_071B_E659_98A5,
        0xBE21_2650_7E8E_BD5E,
        0x3DE8_4D22_CF51_11A8,
        0xBDB1_180B_664B_092A,
        0x3D77_E990_6AE7_E453,
        0xBD40_9610_AC0F_72C7,
    ],
    // 22
    [
        0x3FA2_6B4C_FCCC_CA6C,
        0xBF6A_5DAC_1D4F_FDE3,
        0x3F32_B9AA_2972_F7F5,
        0xBEFA_65B0_B851_7DB4,
        0x3EC2_7815_575E_30D8,
        0xBE89_A856_6B32_9B1B,
        0x3E51_B229_23A9_70C4,
        0xBE18_3D8F_9674_EA2A,
        0x3DE0_7D66_10BF_C03B,
        0xBDA6_4903_2B1A_8A0E,
        0x3D6D_F585_F4EB_2042,
        0xBD33_FB6A_CA61_A6A0,
    ],
    // 23
    [
        0x3FA1_A157_4707_D06E,
        0xBF68_2BDE_DC7D_5944,
        0x3F30_73C6_236E_1158,
        0xBEF6_3DAC_4285_639A,
        0x3EBD_DC94_E78C_6FC7,
        0xBE83_E9B9_35A5_18B3,
        0x3E4A_6238_DEA5_6541,
        0xBE11_5DBC_F9C0_CEDE,
        0x3DD6_B792_A68B_1C48,
        0xBD9D_8853_A075_D454,
        0x3D63_1A33_9788_573D,
        0xBD28_88AD_39E8_A2D0,
    ],
    // 24
    [
        0x3FA0_E7DC_D1D9_3192,
        0xBF66_3CFC_8735_FAC0,
        0x3F2D_0FB6_385A_C0E4,
        0xBEF2_DDFA_2851_AE33,
        0x3EB8_57DF_7C07_72CC,
        0xBE7F_36E8_A8D1_951B,
        0x3E43_E415_1E38_8188,
        0xBE09_32ED_6544_CF97,
        0x3DCF_BC61_49C4_4965,
        0xBD93_DE6C_A8C1_2AF2,
        0x3D58_C3CB_4E7E_6AB5,
        0xBD1E_A8F4_CDB5_7D13,
    ],
    // 25
    [
        0x3FA0_3CF0_503C_2002,
        0xBF64_86DB_3B22_266A,
        0x3F29_CA85_04B8_FFF0,
        0xBEF0_1B37_E845_13B5,
        0x3EB3_FFB5_39A2_2484,
        0xBE78_B077_0C7B_02F7,
        0x3E3E_4EB3_FB0B_D47C,
        0xBE02_7F9A_5024_C064,
        0x3DC6_752D_40DC_5728,
        0xBD8B_1E0C_FCD2_BCB6,
        0x3D50_4D4B_FBBA_301E,
        0xBD13_7A29_2369_4571,
    ],
    // 26
    [
        0x3F9F_3DDC_25E8_B10B,
        0xBF63_012A_8393_3BBB,
        0x3F26_FDC4_065B_FEBA,
        0xBEEB_A914_CD7E_EBF4,
        0x3EB0_8C63_EC9B_E074,
        0xBE73_B1D7_B35C_B4CF,
        0x3E37_50C7_2573_3D66,
        0xBDFB_7569_D9C5_928C,
        0x3DC0_1611_E6B9_6C77,
        0xBD82_C0AC_429A_EAC5,
        0x3D45_C601_F999_03AA,
        0xBD09_21E0_1191_B32B,
    ],
    // 27
    [
        0x3F9E_18DD_B87C_8EFB,
        0xBF61_A510_158E_D64C,
        0x3F24_94A5_06E1_56DA,
        0xBEE7_E19D_403C_56B5,
        0x3EAB_9216_2B9B_6C1D,
        0xBE6F_ABB5_7D0A_46F9,
        0x3E32_19C0_D794_04AF,
        0xBDF4_96DC_A9AD_7844,
        0x3DB7_4ED4_91CB_64BF,
        0xBD7A_42C3_BFEA_CDEE,
        0x3D3D_79FF_3695_4288,
        0xBD00_73AA_174A_12E4,
    ],
    // 28
    [
        0x3F9D_087A_D6E0_CBF6,
        0xBF60_6CDB_E7C1_ECDD,
        0x3F22_7E80_535B_5CD6,
        0xBEE4_B934_F0A9_35F2,
        0x3EA7_1C80_31D3_6876,
        0xBE69_A75A_9CD8_7EA6,
        0x3E2C_5826_C3AE_BF2B,
        0xBDEF_2CAB_A9BF_952A,
        0x3DB1_1108_A325_A15C,
        0xBD72_9A71_8747_D70F,
        0x3D34_34EF_7BCA_6523,
        0xBCF5_D5B1_06AC_A5A9,
    ],
    // 29
    [
        0x3F9C_0A9C_3E7E_7BDE,
        0xBF5E_A79B_3196_0EF7,
        0x3F20_ADE6_639F_93C1,
        0xBEE2_119A_2B78_86E2,
        0x3EA3_7CAB_0E96_60E7,
        0xBE64_ECA1_400C_9A8D,
        0x3E26_5ED2_172C_27AE,
        0xBDE7_D068_6FF5_A8B5,
        0x3DA9_3E6D_CF60_B2B5,
        0xBD6A_A5D6_83CA_EFA1,
        0x3D2C_0947_C263_967E,
        0xBCED_5A68_FDB8_6DA5,
    ],
    // 30
    [
        0x3F9B_1D70_6D10_E138,
        0xBF5C_ABCD_9463_2C1E,
        0x3F1E_2FD8_F9F3_EDB9,
        0xBEDF_A60E_04D4_6AE3,
        0x3EA0_857A_AD99_3087,
        0xBE61_2D99_8884_C8A0,
        0x3E21_C9CA_44CA_F322,
        0xBDE2_588E_DCAA_1217,
        0x3DA2_D88A_7942_AA36,
        0xBD63_4888_12AD_6899,
        0x3D23_AB47_3C07_9894,
        0xBCE3_F862_69F3_AFC3,
    ],
];
/// M(j/4) for j = 4..60 (index j - 4) as (hi, lo) bit patterns.
static MILLS_DD: [(u64, u64); 57] = [
    (0x3FD0_BDB2_E039_DF32, 0xBC63_89F1_B0BB_D828), // 4/4
    (0x3FCD_898D_E09C_6F19, 0x3C6D_6AC4_8DA9_B5E4), // 5/4
    (0x3FCA_5705_5968_92B7, 0xBC4D_00BA_6107_C90E), // 6/4
    (0x3FC7_B5AB_D2FD_03AD, 0x3C58_00E5_2E98_304C), // 7/4
    (0x3FC5_845D_CAD2_A54E, 0x3C6C_9FF4_3B08_BF90), // 8/4
    (0x3FC3_AADD_DF19_E980, 0xBC5A_4235_D20A_0B3B), // 9/4
    (0x3FC2_1725_2317_00B8, 0x3C6B_027A_77AD_33E6), // 10/4
    (0x3FC0_BB96_8CDE_D93F, 0x3C01_88DF_3F4C_6335), // 11/4
    (0x3FBF_1B89_C231_E9B8, 0xBC5D_A9B4_1D83_3643), // 12/4
    (0x3FBD_0B31_C082_543C, 0xBC5F_A9E3_3C6A_CFBD), // 13/4
    (0x3FBB_396F_9CF1_E260, 0xBC21_646B_36C1_F44D), // 14/4
    (0x3FB9_9C2B_6DB3_B3A0, 0xBC4F_9A40_2F2D_631A), // 15/4
    (0x3FB8_2B4B_B8C9_4DCE, 0xBC49_90EA_270A_CA77), // 16/4
    (0x3FB6_E040_9710_781A, 0x3C38_B681_FC4E_DEAE), // 17/4
    (0x3FB5_B5AC_D3B1_5FBB, 0x3C53_B0A5_97C9_F99E), // 18/4
    (0x3FB4_A724_9909_B035, 0x3C4D_F2F0_8F62_E185), // 19/4
    (0x3FB3_B0FB_CB4C_77BE, 0x3C53_1794_A900_891F), // 20/4
    (0x3FB2_D01F_EC27_390A, 0xBC50_15CE_FFEE_ECFD), // 21/4
    (0x3FB2_01FA_9259_B7AC, 0x3C54_A005_C061_00B4), // 22/4
    (0x3FB1_445A_52CB_7B7C, 0xBC5D_EBE1_6E94_854F), // 23/4
    (0x3FB0_9560_8C7B_15F1, 0x3C1F_E1C4_AAF4_0C1A), // 24/4
    (0x3FAF_E6E5_E311_BEDC, 0x3C31_A8C3_7388_51B8), // 25/4
    (0x3FAE_BA5F_E5B1_4B2A, 0x3C3F_61ED_10BB_B526), // 26/4
    (0x3FAD_A2CA_D485_5D33, 0x3C40_67D4_BF68_9709), // 27/4
    (0x3FAC_9E12_0E48_8937, 0xBC42_5B6C_B9D6_98B5), // 28/4
    (0x3FAB_AA64_3D0B_C394, 0xBC32_8727_45F6_59D7), // 29/4
    (0x3FAA_C629_2BDB_BFDC, 0x3C24_EEB7_1192_E8B4), // 30/4
    (0x3FA9_EFF9_60C1_B22B, 0xBC36_18C3_E874_252F), // 31/4
    (0x3FA9_2697_22F5_0CDD, 0xBC49_4034_43E0_F2CA), // 32/4
    (0x3FA8_68E8_A7FD_36A7, 0xBBC2_EB7C_4EE1_16D7), // 33/4
    (0x3FA7_B5F3_3104_87CA, 0xBC0D_A813_9D5C_EFA4), // 34/4
    (0x3FA7_0CD6_ECD2_D1D2, 0xBC3B_8B99_0839_49F3), // 35/4
    (0x3FA6_6CCB_7B9C_0C57, 0xBC46_C7F8_B010_0BC9), // 36/4
    (0x3FA5_D51C_F8A0_5C9F, 0x3C46_FAF2_E29A_23D2), // 37/4
    (0x3FA5_4529_72F7_6B07, 0x3C44_132C_9912_5217), // 38/4
    (0x3FA4_BC5E_C31F_3A31, 0x3C42_9841_E506_4C9A), // 39/4
    (0x3FA4_3A38_AE46_ED46, 0xBC49_3A50_D2C0_D7B4), // 40/4
    (0x3FA3_BE3F_4B01_1168, 0xBC42_49EC_13A9_FCCC), // 41/4
    (0x3FA3_4805_9D34_7DF7, 0x3C19_68AD_6C51_219E), // 42/4
    (0x3FA2_D728_60E3_7A4D, 0xBC2D_888D_3C3F_F180), // 43/4
    (0x3FA2_6B4C_FCCC_CA6C, 0x3C39_84A9_32E2_FD40), // 44/4
    (0x3FA2_0420_9712_D63D, 0x3C4F_B23E_4221_2F95), // 45/4
    (0x3FA1_A157_4707_D06E, 0xBC22_215D_5DE6_C111), // 46/4
    (0x3FA1_42AB_6005_2C49, 0xBC19_6741_DB48_7487), // 47/4
    (0x3FA0_E7DC_D1D9_3192, 0x3C10_874A_781F_595A), // 48/4
    (0x3FA0_90B0_9BDD_B32C, 0xBC2D_892E_7584_B1E7), // 49/4
    (0x3FA0_3CF0_503C_2002, 0x3C48_9D0A_40D8_76E3), // 50/4
    (0x3F9F_D8D3_4A83_1A80, 0x3C30_BC6A_000D_C798), // 51/4
    (0x3F9F_3DDC_25E8_B10B, 0x3C27_BC56_E79F_E305), // 52/4
    (0x3F9E_A8A4_F6BE_A760, 0xBC33_326B_633D_8814), // 53/4
    (0x3F9E_18DD_B87C_8EFB, 0x3C2B_0303_9509_1EED), // 54/4
    (0x3F9D_8E3C_11CD_9536, 0xBC28_F332_5074_D6E3), // 55/4
    (0x3F9D_087A_D6E0_CBF6, 0xBC3E_F06B_4B4E_2B80), // 56/4
    (0x3F9C_8759_9881_F0E6, 0x3BC6_4CE9_ED3E_DCA7), // 57/4
    (0x3F9C_0A9C_3E7E_7BDE, 0x3C3C_47D2_0568_F0ED), // 58/4
    (0x3F9B_920A_AC0C_3310, 0xBC33_8FE6_C949_A873), // 59/4
    (0x3F9B_1D70_6D10_E138, 0xBC12_78BE_462D_2A73), // 60/4
];
/// 2^n / (2n + 1)!! for n = 0..30 as (hi, lo) bit patterns.
static ERF_SERIES: [(u64, u64); 31] = [
    (0x3FF0_0000_0000_0000, 0x0000_0000_0000_0000), // 0
    (0x3FE5_5555_5555_5555, 0x3C85_5555_5555_5555), // 1
    (0x3FD1_1111_1111_1111, 0x3C51_1111_1111_1111), // 2
    (0x3FB3_8138_1381_3814, 0xBC5F_B1FB_1FB1_FB20), // 3
    (0x3F91_566A_BC01_1567, 0xBC35_0FFB_AA65_5100), // 4
    (0x3F69_37E1_1175_F095, 0x3C05_BA34_D99B_2D18), // 5
    (0x3F3F_09B2_8BA4_D955, 0x3BD5_D17C_1F83_E8BB), // 6
    (0x3F10_8DB4_8EBE_51C7, 0x3B9D_7AA2_655D_AC39), // 7
    (0x3EDF_28DB_670B_E53B, 0xBB7B_8A0D_EE6A_81C7), // 8
    (0x3EAA_3D5A_71B9_2CD3, 0x3AE8_D4A5_62D7_3466), // 9
    (0x3E73_FDFB_C45C_52EA, 0xBAF7_32D3_8D94_3A75), // 10
    (0x3E3B_D0AC_3296_B624, 0x3AA8_7DB3_54A6_5235), // 11
    (0x3E01_CD3B_01A8_22A6, 0x3AAB_8F2D_1103_10D1), // 12
    (0x3DC5_1929_7D39_0C9F, 0x3A64_CF9D_B558_F77C), // 13
    (0x3D87_47E7_2912_D023, 0xBA2B_CB75_498C_2CB4), // 14
    (0x3D48_0828_6C76_8445, 0xB9E2_5E68_8DFC_0D1D), // 15
    (0x3D07_4DBA_97B8_BE52, 0x3992_ADC0_DD1E_EE53), // 16
    (0x3CC5_4E61_74C6_2A5A, 0xB961_0FA7_D56E_33F7), // 17
    (0x3C82_6D4D_5E13_2B8C, 0xB90F_58C1_278B_14A4), // 18
    (0x3C3E_3D36_C1C3_8FAA, 0x38DD_CE75_AE22_D6B6), // 19
    (0x3BF7_99EC_4C4D_B4D0, 0xB85B_6467_E553_2F50), // 20
    (0x3BB1_9050_980A_3336, 0xB85C_1093_B751_43B0), // 21
    (0x3B68_FAC2_4452_C5FD, 0xB80D_F571_5FBD_8817), // 22
    (0x3B21_01E0_DCD0_DDF3, 0xB7C0_4FF6_0AB7_82C9), // 23
    (0x3AD6_36B2_C25F_2C57, 0x3766_B1BB_F8E7_27BF), // 24
    (0x3A8B_E03F_B2A9_A10E, 0x36EB_0C64_1D24_B224), // 25
    (0x3A40_D4AD_B453_18CA, 0xB6E4_B714_5F81_07C5), // 26
    (0x39F3_95BC_2A44_C468, 0x3696_70C7_B61A_BA74), // 27
    (0x39A5_FD74_F512_D38C, 0xB648_3504_D0B9_9175), // 28
    (0x3957_DA87_8C03_10DD, 0xB5DF_4581_5E43_8CD6), // 29
    (0x3909_06D9_C10F_CE8B, 0x35AA_6BAB_B4EA_15D0), // 30
];
/// 2/sqrt(pi) as a double-double
const TWO_OVER_SQRT_PI: DD = DD::from_bits(0x3FF2_0DD7_5042_9B6D, 0x3C71_AE3A_914F_ED80);
/// sqrt(2/pi) as a double-double
const SQRT_2_OVER_PI: DD = DD::from_bits(0x3FE9_8845_33D4_3651, 0xBC8C_BC0D_30EB_FD15);
/// 1/sqrt(2 pi) as a double-double
const INV_SQRT_2PI: DD = DD::from_bits(0x3FD9_8845_33D4_3651, 0xBC7C_BC0D_30EB_FD15);
/// sqrt(2) as a double-double
const SQRT2: DD = DD::from_bits(0x3FF6_A09E_667F_3BCD, 0xBC9B_DD34_13B2_6456);

/// P_i(t) by Horner's scheme with `madd`.
#[inline(always)]
fn horner<const FUSED: bool, const N: usize>(p: &[u64; N], t: f64) -> f64 {
    let mut h = f64::from_bits(p[N - 1]);
    for k in (0..N - 1).rev() {
        h = madd::<FUSED>(h, t, f64::from_bits(p[k]));
    }
    h
}

/// erf(a) for 0 <= a (any a, +inf included; clamped to 6), within 4.43u (module header).
/// Total: NaN gives garbage, never a panic.
#[inline(always)]
fn erf_fast<const FUSED: bool>(a: f64) -> f64 {
    let a = if a > ERF_SAT { ERF_SAT } else { a };
    let k = a * 8.0 + SHIFT;
    let i = ((k.to_bits() & 63) as usize).min(48);
    let t = a - (k - SHIFT) * 0.125;
    horner::<FUSED, 10>(&ERF_POLY[i], t)
}

/// M(s) for 0 <= s (clamped to 15), within 3.14u (module header). Total.
#[inline(always)]
fn mills_fast<const FUSED: bool>(s: f64) -> f64 {
    let s = if s > MILLS_MAX { MILLS_MAX } else { s };
    let k = s * 2.0 + SHIFT;
    let i = ((k.to_bits() & 31) as usize).min(30);
    let t = s - (k - SHIFT) * 0.5;
    horner::<FUSED, 12>(&MILLS_POLY[i], t)
}

/// A double-double table entry.
#[inline(always)]
fn dd_at(e: (u64, u64)) -> DD {
    DD::from_bits(e.0, e.1)
}

/// V(T) = sum_n 2^n T^n / (2n + 1)!! for 0 <= T <= 1, relative error < 12u^2 (header).
fn erf_series(t: f64) -> DD {
    let mut v = dd_at(ERF_SERIES[30]);
    for n in (0..30).rev() {
        v = v.mul_f64(t).add(dd_at(ERF_SERIES[n]));
    }
    v
}

/// Degree of the Taylor expansion of M in `mills_dd`.
const TAYLOR_DEGREE: usize = 22;

/// M(s) = e^(s^2/2) Φ(-s) for 1 - 2^-40 <= s.hi <= 15.1, relative error about 320u^2
/// (module header).
fn mills_dd(s: DD) -> DD {
    let j = ((s.hi * 4.0 + 0.5) as usize).clamp(4, 60);
    let s0 = j as f64 * 0.25;
    // s.hi - s0 is exact (both multiples of ulp(s.hi) / 2^k, below 2^-2 apart).
    let (dh, dl) = two_sum(s.hi - s0, s.lo);
    let d = DD::new(dh, dl);
    let mut m = [DD::from_f64(0.0); TAYLOR_DEGREE + 1];
    m[0] = dd_at(MILLS_DD[j - 4]);
    m[1] = m[0].mul_f64(s0).sub(INV_SQRT_2PI);
    for k in 1..TAYLOR_DEGREE {
        m[k + 1] = m[k]
            .mul_f64(s0)
            .add(m[k - 1])
            .div(DD::from_f64((k + 1) as f64));
    }
    let mut acc = m[TAYLOR_DEGREE];
    for k in (0..TAYLOR_DEGREE).rev() {
        acc = acc.mul(d).add(m[k]);
    }
    acc
}

/// erf(a) as a double-double for 0 < a < 6 (module header: < 68u^2 relative).
fn erf_dd(a: f64) -> DD {
    let a2 = a * a;
    let e = exp_dd(DD::from_f64(-a2));
    if a < SERIES_MAX {
        TWO_OVER_SQRT_PI.mul_f64(a).mul(e).mul(erf_series(a2))
    } else {
        let q = e.mul(mills_dd(SQRT2.mul_f64(a)));
        q.scale(-2.0).add_f64(1.0)
    }
}

/// gelu_erf(x) as a double-double for -15 <= x < 9, x != 0 (module header).
fn gelu_erf_dd(x: f64) -> DD {
    let h = 0.5 * (x * x);
    let e = exp_dd(DD::from_f64(-h));
    if x.abs() < SERIES_MAX {
        // erf(x/√2) = √(2/π) x e^(-x^2/2) V(x^2/2), then (x + x erf)/2.
        let erf = SQRT_2_OVER_PI.mul_f64(x).mul(e).mul(erf_series(h));
        erf.mul_f64(x).add_f64(x).scale(0.5)
    } else {
        let q = e.mul(mills_dd(DD::from_f64(x.abs())));
        if x > 0.0 {
            q.mul_f64(-x).add_f64(x)
        } else {
            q.mul_f64(x)
        }
    }
}

impl CrUnary for Erf {
    const FAST_REL_ERR: f64 = ERF_FAST_REL_ERR;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        !x.is_nan()
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        let x = x as f64;
        let y = erf_fast::<FUSED>(x.abs());
        // |P| with x's sign (P >= 0 on the domain: clear its sign bit first).
        f64::from_bits((y.to_bits() & !SIGN) | (x.to_bits() & SIGN))
    }

    fn accurate(x: f32) -> f64 {
        let x = x as f64;
        let a = x.abs();
        if x.is_nan() || a == 0.0 {
            return x;
        }
        let r = if a == f64::INFINITY {
            1.0
        } else if a >= ERF_SAT {
            ONE_MINUS_U
        } else {
            round_odd(erf_dd(a))
        };
        f64::from_bits(r.to_bits() | (x.to_bits() & SIGN))
    }
}

impl CrUnary for GeluErf {
    const FAST_REL_ERR: f64 = GELU_ERF_FAST_REL_ERR;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        (x as f64) >= GELU_ERF_LOW && x <= f32::MAX
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        let x = x as f64;
        let m = mills_fast::<FUSED>(x.abs());
        let e = exp_fast_f64(-0.5 * (x * x));
        let q = e * m;
        let phi = if x >= 0.0 { 1.0 - q } else { q };
        x * phi
    }

    fn accurate(x: f32) -> f64 {
        let x = x as f64;
        if x.is_nan() || x == 0.0 || x == f64::INFINITY {
            x
        } else if x >= GELU_ERF_HIGH {
            f64::from_bits(x.to_bits() - 1)
        } else if x == f64::NEG_INFINITY {
            -0.0
        } else if x < GELU_ERF_LOW {
            -TINY
        } else {
            round_odd(gelu_erf_dd(x))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specials() {
        assert_eq!(Erf::accurate(0.0).to_bits(), 0);
        assert_eq!(Erf::accurate(-0.0).to_bits(), SIGN);
        assert_eq!(Erf::fast::<true>(-0.0).to_bits(), SIGN);
        assert_eq!(Erf::fast::<false>(0.0).to_bits(), 0);
        assert_eq!(Erf::accurate(f32::INFINITY), 1.0);
        assert_eq!(Erf::accurate(f32::NEG_INFINITY), -1.0);
        assert_eq!(Erf::accurate(7.0), ONE_MINUS_U);
        assert_eq!(Erf::accurate(-7.0), -ONE_MINUS_U);
        assert!(Erf::accurate(f32::NAN).is_nan());
        assert_eq!(GeluErf::accurate(0.0).to_bits(), 0);
        assert_eq!(GeluErf::accurate(-0.0).to_bits(), SIGN);
        assert_eq!(GeluErf::fast::<true>(-0.0).to_bits(), SIGN);
        assert_eq!(GeluErf::accurate(f32::INFINITY), f64::INFINITY);
        assert_eq!(GeluErf::accurate(f32::NEG_INFINITY).to_bits(), SIGN);
        assert_eq!(GeluErf::accurate(-20.0), -TINY);
        assert_eq!(GeluErf::accurate(10.0), f64::from_bits(10f64.to_bits() - 1));
        assert!(GeluErf::accurate(f32::NAN).is_nan());
        assert!(!GeluErf::in_fast_domain(f32::NAN) && !Erf::in_fast_domain(f32::NAN));
        assert!(!GeluErf::in_fast_domain(f32::INFINITY));
        // The fast paths are total: no panic on any lane.
        for x in [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN,
            -1e30,
        ] {
            let _ = (Erf::fast::<true>(x), GeluErf::fast::<false>(x));
        }
    }

    /// Both flavours of the fast paths within their bounds of the accurate path, on a grid
    /// through every table interval and past the clamps (tiny arguments included).
    #[test]
    fn fast_agrees_with_accurate() {
        let mut xs: Vec<f32> = (0..40_000)
            .map(|i| (i as f32 - 20_000.0) * 0.000_8)
            .collect();
        xs.extend((-149..0).map(|e| 2f32.powi(e)));
        xs.extend((-149..0).map(|e| -(2f32.powi(e) * 1.375)));
        for x in xs {
            for (what, domain, err, acc, f, g) in [
                (
                    "erf",
                    Erf::in_fast_domain(x),
                    Erf::FAST_REL_ERR,
                    Erf::accurate(x),
                    Erf::fast::<true>(x),
                    Erf::fast::<false>(x),
                ),
                (
                    "gelu_erf",
                    GeluErf::in_fast_domain(x),
                    GeluErf::FAST_REL_ERR,
                    GeluErf::accurate(x),
                    GeluErf::fast::<true>(x),
                    GeluErf::fast::<false>(x),
                ),
            ] {
                if !domain {
                    continue;
                }
                for y in [f, g] {
                    assert!(
                        (y - acc).abs() <= (err + f64::EPSILON) * acc.abs(),
                        "{what}({x:e}): fast {y:e}, accurate {acc:e}"
                    );
                }
            }
        }
    }

    // The oracle is a workspace tool, absent from the packaged crate (see build.rs).
    #[cfg(repro_workspace)]
    #[test]
    fn accurate_path_matches_mpfr() {
        use crate::math::round::Format;
        use mpfr_oracle::{Func, cr_f32};
        // Every 100003rd bit pattern (~43000 inputs, all exponents and both signs).
        for b in (0..=u32::MAX).step_by(100_003) {
            let x = f32::from_bits(b);
            for (func, acc) in [
                (Func::Erf, Erf::accurate as fn(f32) -> f64),
                (Func::GeluErf, GeluErf::accurate),
            ] {
                let ours = <f32 as Format>::round(acc(x));
                let cr = cr_f32(func, x);
                assert_eq!(ours.to_bits(), cr.to_bits(), "{func:?}({x:e}) ({b:#x})");
            }
        }
    }

    /// The double-double paths against MPFR at 200 bits, on every regime (series, Taylor
    /// expansion of M around every table point, both signs): the relative error stays
    /// within the header's bounds (2^-97 and below).
    #[cfg(repro_workspace)]
    #[test]
    fn double_double_paths_are_within_their_bounds() {
        use mpfr_oracle::{Func, approx_wide};
        let rel = |d: DD, (h, l): (f64, f64)| {
            // (d.hi - h) is exact when the two agree to a few ulps; then add the lows.
            (((d.hi - h) + (d.lo - l)) / h).abs()
        };
        let mut worst = [0f64; 4];
        let mut x = 2f64.powi(-30);
        let mut n = 0u32;
        while x < 15.0 {
            let xf = x as f32 as f64;
            if xf < 6.0 {
                let e = rel(erf_dd(xf), approx_wide(Func::Erf, xf));
                worst[(xf >= 1.0) as usize] = worst[(xf >= 1.0) as usize].max(e);
            }
            for s in [xf, -xf] {
                if s < GELU_ERF_HIGH {
                    let e = rel(gelu_erf_dd(s), approx_wide(Func::GeluErf, s));
                    worst[2 + (xf >= 1.0) as usize] = worst[2 + (xf >= 1.0) as usize].max(e);
                }
            }
            // Geometric below 1/4, then steps of about 1/1500 (every Taylor interval).
            x = if x < 0.25 { x * 1.07 } else { x + 0.000_687 };
            n += 1;
        }
        let log2 = |v: f64| v.log2();
        eprintln!(
            "{n} points: erf series 2^{:.1}, erf Taylor 2^{:.1}, gelu_erf series 2^{:.1}, gelu_erf Taylor 2^{:.1}",
            log2(worst[0]),
            log2(worst[1]),
            log2(worst[2]),
            log2(worst[3])
        );
        let u2 = 2f64.powi(-106);
        assert!(worst[0] < 46.0 * u2, "erf series {:e}", worst[0]);
        assert!(worst[1] < 68.0 * u2, "erf Taylor {:e}", worst[1]);
        assert!(worst[2] < 108.0 * u2, "gelu_erf series {:e}", worst[2]);
        assert!(worst[3] < 350.0 * u2, "gelu_erf Taylor {:e}", worst[3]);
    }
}
