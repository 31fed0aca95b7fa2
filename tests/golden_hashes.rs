//! Golden hashes of the ops whose own test files check correctness but not stability:
//! softmax and log-softmax (forward and backward), the elementwise functions' backward
//! passes, the RoPE tables and the three rotation
//! layouts, the FFT in each precision, `add` and `to_f8e4m3`. The bits of every op are part
//! of the crate's contract (docs/CONTRACT.md: a change of any output bit is a breaking
//! change); the matmul, norm, elementwise and model tests keep their own golden hashes.
//!
//! Each hash is FNV-1a over the output bits of a fixed input, computed by this code once,
//! after the op's own tests (MPFR oracle, invariance, host cross-check) passed, and kept.
//! After a deliberate change of output bits, print the new values with
//! `REPRO_PRINT_GOLDEN=1 cargo test --release --test golden_hashes -- --nocapture`.

mod common;

use candle_core::{DType, Device, Tensor};
use candle_repro::fft::{Norm, Precision, fft_with, ifft_with, irfft_with, rfft_with};
use candle_repro::rope::{RopeConfig, RopeTables, rope, rope_i, rope_thd};
use candle_repro::{Overflow, add, log_softmax_last_dim, softmax_last_dim, to_f8e4m3};

/// Deterministic values in [-scale, scale) from a 64-bit LCG (no dependence on candle's
/// random generator, whose stream may change between versions).
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

fn input(shape: &[usize], seed: u64, scale: f32, dt: DType) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_vec(values(n, seed, scale), shape, &Device::Cpu)
        .and_then(|t| t.to_dtype(dt))
        .unwrap()
}

/// FNV-1a over the output bits, each element widened to u32.
fn fnv(t: &Tensor) -> u64 {
    common::fnv1a(&common::bits(t))
}

/// Compares every (name, hash) with the golden table; prints the table when asked to.
fn check(got: Vec<(String, u64)>, golden: &[(&str, u64)]) {
    if std::env::var_os("REPRO_PRINT_GOLDEN").is_some() {
        for (name, h) in &got {
            println!("        (\"{name}\", 0x{h:016x}),");
        }
    }
    let golden: Vec<(String, u64)> = golden.iter().map(|&(n, h)| (n.to_string(), h)).collect();
    let changed: Vec<String> = got
        .iter()
        .zip(&golden)
        .filter(|(g, w)| g != w)
        .map(|(g, w)| format!("{}: 0x{:016x}, golden 0x{:016x}", g.0, g.1, w.1))
        .collect();
    assert_eq!(got.len(), golden.len(), "the case list changed");
    assert!(
        changed.is_empty(),
        "output bits changed:\n{}",
        changed.join("\n")
    );
}

const DTYPES: [DType; 3] = [DType::F32, DType::BF16, DType::F16];

#[test]
fn softmax_golden_hashes() {
    let mut got = vec![];
    for dt in DTYPES {
        // Rows of 1, 7, 100 and 1000 values, spread enough that some e_i underflow.
        for n in [1usize, 7, 100, 1000] {
            let x = input(&[3, n], n as u64, 30.0, dt);
            let y = softmax_last_dim(&x).unwrap();
            let l = log_softmax_last_dim(&x).unwrap();
            got.push((format!("softmax {dt:?} n={n}"), fnv(&y)));
            got.push((format!("log_softmax {dt:?} n={n}"), fnv(&l)));
        }
        // Backward through candle's autograd, for both ops.
        let x = candle_core::Var::from_tensor(&input(&[4, 64], 9, 5.0, dt)).unwrap();
        let g = input(&[4, 64], 10, 1.0, dt);
        for (name, y) in [
            ("softmax", softmax_last_dim(&x).unwrap()),
            ("log_softmax", log_softmax_last_dim(&x).unwrap()),
        ] {
            let grads = (y * &g).unwrap().sum_all().unwrap().backward().unwrap();
            let dx = grads.get(&x).unwrap();
            got.push((format!("{name} bwd {dt:?}"), fnv(dx)));
        }
    }
    check(got, SOFTMAX);
}

#[test]
fn elementwise_backward_golden_hashes() {
    let mut got = vec![];
    for dt in DTYPES {
        // Inputs over [-12, 12) (every function's interesting range; log's NaN side too).
        let x = input(&[64, 33], 21, 12.0, dt);
        let g = input(&[64, 33], 22, 2.0, dt);
        for f in candle_repro::UnaryFn::ALL {
            let dx = candle_repro::unary_bwd(&x, &g, f).unwrap();
            got.push((format!("{} bwd {dt:?}", f.name()), fnv(&dx)));
        }
        let dx = candle_repro::softplus_with_bwd(&x, &g, 2.0, 3.0).unwrap();
        got.push((format!("softplus_with bwd {dt:?}"), fnv(&dx)));
    }
    check(got, ELEMENTWISE_BWD);
}

// exp and expm1 share their hashes: both factors are e^x correctly rounded.
const ELEMENTWISE_BWD: &[(&str, u64)] = &[
    ("exp bwd F32", 0x5960139190dee550),
    ("expm1 bwd F32", 0x5960139190dee550),
    ("log bwd F32", 0x02ed7c6074683baa),
    ("log1p bwd F32", 0xe88514f51e24c534),
    ("log10 bwd F32", 0x380c63680b2334db),
    ("sin bwd F32", 0x8ce0877eaeef2af8),
    ("cos bwd F32", 0x33fb764af6fa4190),
    ("tanh bwd F32", 0xbe2e515b7157f3e5),
    ("sigmoid bwd F32", 0x21c7204d16045950),
    ("silu bwd F32", 0xd4a53375b59f1371),
    ("softplus bwd F32", 0x0e479000f1e5f12a),
    ("erf bwd F32", 0xe58033346072459a),
    ("gelu bwd F32", 0xd6cc805c7d691a92),
    ("gelu_erf bwd F32", 0xc3fbc86fd4bb3ae8),
    ("softplus_with bwd F32", 0x551ab7f5dbb3fd1e),
    ("exp bwd BF16", 0x271fa4fcf4e0d100),
    ("expm1 bwd BF16", 0x271fa4fcf4e0d100),
    ("log bwd BF16", 0x65b59b082bb2f406),
    ("log1p bwd BF16", 0x7934937123c6b5bd),
    ("log10 bwd BF16", 0x1cf2533266ffdac4),
    ("sin bwd BF16", 0x1ef50114bf5b4dfa),
    ("cos bwd BF16", 0xc42df0747b70af48),
    ("tanh bwd BF16", 0xc6e133395a13894b),
    ("sigmoid bwd BF16", 0x8616c1e9f324bfc3),
    ("silu bwd BF16", 0xa0b14e2084500392),
    ("softplus bwd BF16", 0x98cd5628d90c255e),
    ("erf bwd BF16", 0x3a2ffa9586eaa843),
    ("gelu bwd BF16", 0x2f29dfe3251de93a),
    ("gelu_erf bwd BF16", 0xa95a7f159cdecabe),
    ("softplus_with bwd BF16", 0xc6977551f06a1117),
    ("exp bwd F16", 0x5b02dee3a6dadd85),
    ("expm1 bwd F16", 0x5b02dee3a6dadd85),
    ("log bwd F16", 0xa852799798867e11),
    ("log1p bwd F16", 0x01cde48c5310012d),
    ("log10 bwd F16", 0x2a82d41d751e5b2d),
    ("sin bwd F16", 0xe6f725392af68264),
    ("cos bwd F16", 0x8748b0da8e1d917d),
    ("tanh bwd F16", 0x17546dca9e632572),
    ("sigmoid bwd F16", 0xf512fd455f722a63),
    ("silu bwd F16", 0x3cc6ea16e9fca983),
    ("softplus bwd F16", 0x7ff2953852b53357),
    ("erf bwd F16", 0x9bcddb119af64a6e),
    ("gelu bwd F16", 0x5f64ee030660b196),
    ("gelu_erf bwd F16", 0x794c77995ff36616),
    ("softplus_with bwd F16", 0x043fbc2d262e2545),
];

#[test]
fn rope_golden_hashes() {
    let mut got = vec![];
    for (name, cfg) in [
        ("plain", RopeConfig::new(10000.0, 64)),
        ("llama31", RopeConfig::llama31(64)),
    ] {
        for dt in DTYPES {
            let t = RopeTables::new(&cfg, 4096, dt, &Device::Cpu).unwrap();
            got.push((format!("tables {name} {dt:?} cos"), fnv(&t.cos)));
            got.push((format!("tables {name} {dt:?} sin"), fnv(&t.sin)));
            // Positions 1000..1012 of (b, h, t, d) and (b, t, h, d) inputs.
            let (cos, sin) = (
                t.cos.narrow(0, 1000, 12).unwrap(),
                t.sin.narrow(0, 1000, 12).unwrap(),
            );
            let bhtd = input(&[2, 3, 12, 64], 21, 4.0, dt);
            let bthd = input(&[2, 12, 3, 64], 22, 4.0, dt);
            got.push((
                format!("rope {name} {dt:?}"),
                fnv(&rope(&bhtd, &cos, &sin).unwrap()),
            ));
            got.push((
                format!("rope_i {name} {dt:?}"),
                fnv(&rope_i(&bhtd, &cos, &sin).unwrap()),
            ));
            got.push((
                format!("rope_thd {name} {dt:?}"),
                fnv(&rope_thd(&bthd, &cos, &sin).unwrap()),
            ));
        }
    }
    check(got, ROPE);
}

#[test]
fn fft_golden_hashes() {
    let mut got = vec![];
    for (pname, p) in [
        ("f32", Precision::F32),
        ("ozaki", Precision::Ozaki),
        ("f64", Precision::F64Internal),
    ] {
        // Powers of two, mixed-radix sizes (360 = 2^3 3^2 5, 48 = 2^4 3: Bluestein until
        // contract 0.3), a prime (Bluestein) and a DFT-GEMM size.
        for n in [8usize, 512, 4096, 360, 1009, 48] {
            let x = input(&[2, n, 2], n as u64 + 100, 1.0, DType::F32);
            let r = input(&[2, n], n as u64 + 200, 1.0, DType::F32);
            let f = fft_with(&x, Norm::Backward, p).unwrap();
            let i = ifft_with(&x, Norm::Ortho, p).unwrap();
            let rf = rfft_with(&r, Norm::Forward, p).unwrap();
            let ir = irfft_with(&rf, Some(n), Norm::Forward, p).unwrap();
            got.push((format!("fft {pname} n={n}"), fnv(&f)));
            got.push((format!("ifft {pname} n={n}"), fnv(&i)));
            got.push((format!("rfft {pname} n={n}"), fnv(&rf)));
            got.push((format!("irfft {pname} n={n}"), fnv(&ir)));
        }
    }
    check(got, FFT);
}

#[test]
fn add_and_cast_golden_hashes() {
    let mut got = vec![];
    for dt in DTYPES {
        // Operands of every relative size, so that some sums round and some cancel.
        let a = input(&[4096], 31, 1.0, dt);
        let b = (input(&[4096], 32, 1.0, DType::F32)
            * Tensor::from_vec(
                (0..4096)
                    .map(|i| 2f32.powi((i % 61) - 30))
                    .collect::<Vec<_>>(),
                4096,
                &Device::Cpu,
            )
            .unwrap())
        .unwrap()
        .to_dtype(dt)
        .unwrap();
        got.push((format!("add {dt:?}"), fnv(&add(&a, &b).unwrap())));
        let wide = input(&[4096], 33, 600.0, dt);
        for (name, o) in [("saturate", Overflow::Saturate), ("nan", Overflow::Nan)] {
            let c = to_f8e4m3(&wide, o).unwrap();
            got.push((format!("to_f8e4m3 {name} {dt:?}"), fnv(&c)));
        }
    }
    check(got, ADD_CAST);
}

const SOFTMAX: &[(&str, u64)] = &[
    ("softmax F32 n=1", 0x8eec_422e_2592_0948),
    ("log_softmax F32 n=1", 0x5467_b0da_1d10_6495),
    ("softmax F32 n=7", 0x3875_cee7_b167_e243),
    ("log_softmax F32 n=7", 0xcb94_417d_6a14_748d),
    ("softmax F32 n=100", 0xbd9b_2f6f_e456_ac6a),
    ("log_softmax F32 n=100", 0x7186_3528_d8cd_9944),
    ("softmax F32 n=1000", 0x1c4e_240e_ff18_1b4a),
    ("log_softmax F32 n=1000", 0xec24_60d6_f2e4_4bde),
    ("softmax bwd F32", 0x3d53_e403_a99e_0b78),
    ("log_softmax bwd F32", 0xc360_c41c_6aa9_b107),
    ("softmax BF16 n=1", 0xff76_c2d0_5231_c850),
    ("log_softmax BF16 n=1", 0x5467_b0da_1d10_6495),
    ("softmax BF16 n=7", 0x12a4_1229_d534_0def),
    ("log_softmax BF16 n=7", 0xe751_517c_4f75_703d),
    ("softmax BF16 n=100", 0x99d4_208f_0e96_69ec),
    ("log_softmax BF16 n=100", 0x204f_3c5d_f8ff_d488),
    ("softmax BF16 n=1000", 0xad17_7dcc_9cca_ebe0),
    ("log_softmax BF16 n=1000", 0x504c_8c49_53a6_5d86),
    ("softmax bwd BF16", 0xc65e_fbdd_98e4_8b5a),
    ("log_softmax bwd BF16", 0x5662_01e8_6cd1_61b9),
    ("softmax F16 n=1", 0xcef8_a7db_a884_7761),
    ("log_softmax F16 n=1", 0x5467_b0da_1d10_6495),
    ("softmax F16 n=7", 0xe449_657f_d820_6f15),
    ("log_softmax F16 n=7", 0x1b2c_145a_f5c0_b8a8),
    ("softmax F16 n=100", 0x9bc2_aed7_4e0e_86cf),
    ("log_softmax F16 n=100", 0xd365_2188_f8ef_e8f3),
    ("softmax F16 n=1000", 0xda58_a08a_a4bb_85da),
    ("log_softmax F16 n=1000", 0xd398_6c69_cbec_1e8b),
    ("softmax bwd F16", 0xac5a_5dac_4019_9221),
    ("log_softmax bwd F16", 0xf343_c0e8_70f7_e37e),
];
const ROPE: &[(&str, u64)] = &[
    ("tables plain F32 cos", 0x2b43_55ab_e2da_76d1),
    ("tables plain F32 sin", 0xdfeb_2002_c539_169b),
    ("rope plain F32", 0x6f5b_c546_6126_056a),
    ("rope_i plain F32", 0xad8f_352f_eb6f_f2bb),
    ("rope_thd plain F32", 0xe1e2_6b87_1d08_6cc1),
    ("tables plain BF16 cos", 0xbbc9_4eee_148b_926b),
    ("tables plain BF16 sin", 0x13a6_515d_9a11_bb26),
    ("rope plain BF16", 0xe2d4_3e95_bc21_d8b6),
    ("rope_i plain BF16", 0x9c64_661e_4458_d440),
    ("rope_thd plain BF16", 0x501e_883a_7f2e_1ae2),
    ("tables plain F16 cos", 0xce86_accd_c2cd_81f3),
    ("tables plain F16 sin", 0x8a9a_f49f_096d_c70a),
    ("rope plain F16", 0x664c_b18b_c35e_18ba),
    ("rope_i plain F16", 0xeb96_397c_e8e3_79cb),
    ("rope_thd plain F16", 0x84c3_59b0_17c0_7b67),
    ("tables llama31 F32 cos", 0x81bf_ca78_bf79_e9ba),
    ("tables llama31 F32 sin", 0xeab2_7f3d_218c_5e13),
    ("rope llama31 F32", 0x6078_eb4f_c305_7699),
    ("rope_i llama31 F32", 0xa6e9_488a_a5da_0f7b),
    ("rope_thd llama31 F32", 0xf174_f606_969e_076a),
    ("tables llama31 BF16 cos", 0x5161_6194_4129_f75d),
    ("tables llama31 BF16 sin", 0xae4d_73b4_6f23_e83a),
    ("rope llama31 BF16", 0x43ba_2df2_021e_184e),
    ("rope_i llama31 BF16", 0xfea7_6e71_a764_7851),
    ("rope_thd llama31 BF16", 0x37ab_68de_74a3_1ac7),
    ("tables llama31 F16 cos", 0x96ff_0317_1464_3a96),
    ("tables llama31 F16 sin", 0xe83d_8520_4507_90d5),
    ("rope llama31 F16", 0xd244_bb89_c991_3661),
    ("rope_i llama31 F16", 0x2185_3f95_b778_cf50),
    ("rope_thd llama31 F16", 0xa54f_ccae_af88_7b79),
];
const FFT: &[(&str, u64)] = &[
    ("fft f32 n=8", 0xe3e3_5021_59e0_2633),
    ("ifft f32 n=8", 0x69d8_954b_7355_eeb1),
    ("rfft f32 n=8", 0xb3a4_30e3_2bd7_7e26),
    ("irfft f32 n=8", 0x8cd3_b763_c010_b974),
    ("fft f32 n=512", 0xc912_7944_eb8e_3f50),
    ("ifft f32 n=512", 0x795d_dbf3_9e8c_5e2b),
    ("rfft f32 n=512", 0xc3be_05b6_0ffd_d9ef),
    ("irfft f32 n=512", 0x243f_6607_0836_e478),
    ("fft f32 n=4096", 0xa53c_6ba7_1fc7_a996),
    ("ifft f32 n=4096", 0xe4e2_e3b9_523d_cd58),
    ("rfft f32 n=4096", 0xbe10_cb04_3497_1b72),
    ("irfft f32 n=4096", 0x875b_af38_c081_410d),
    ("fft f32 n=360", 0x4e54_6e51_146f_0c8d),
    ("ifft f32 n=360", 0x80f6_ea84_2338_5443),
    ("rfft f32 n=360", 0x33c5_14c3_1ac9_88e6),
    ("irfft f32 n=360", 0x0cdf_a2c8_1744_8fac),
    ("fft f32 n=1009", 0xf0fc_166b_e455_100b),
    ("ifft f32 n=1009", 0xfd20_4efa_89a7_a912),
    ("rfft f32 n=1009", 0xea6b_6777_78c5_48f0),
    ("irfft f32 n=1009", 0x69a1_962a_3c76_e167),
    ("fft f32 n=48", 0x24ec_71af_c597_8b61),
    ("ifft f32 n=48", 0xf476_918c_66ef_86d9),
    ("rfft f32 n=48", 0x98e0_1e4a_42b5_183d),
    ("irfft f32 n=48", 0x939e_68d5_4a50_f228),
    ("fft ozaki n=8", 0x2b2a_82b1_9771_5262),
    ("ifft ozaki n=8", 0xb511_4740_7aad_f79d),
    ("rfft ozaki n=8", 0x9d42_621a_3e69_2849),
    ("irfft ozaki n=8", 0x4498_1693_405d_e1b8),
    ("fft ozaki n=512", 0x4c61_297f_1f82_c647),
    ("ifft ozaki n=512", 0x0949_1636_2e35_fed9),
    ("rfft ozaki n=512", 0x60ac_c277_716a_5f80),
    ("irfft ozaki n=512", 0xb38d_4e5d_7772_b25e),
    ("fft ozaki n=4096", 0xd379_b59f_bcd4_fb62),
    ("ifft ozaki n=4096", 0xfd6f_0a53_790c_8e2a),
    ("rfft ozaki n=4096", 0x171f_bf0f_3fa4_1476),
    ("irfft ozaki n=4096", 0x1dd2_7339_467b_e2db),
    ("fft ozaki n=360", 0x7215_e88b_a4d0_5125),
    ("ifft ozaki n=360", 0xc85b_7beb_1025_d0d3),
    ("rfft ozaki n=360", 0xbf5c_5f77_a9eb_c889),
    ("irfft ozaki n=360", 0x9eb7_5302_fb6f_acc3),
    ("fft ozaki n=1009", 0xe995_d04f_74ac_03c5),
    ("ifft ozaki n=1009", 0x6b63_85ae_c804_5b37),
    ("rfft ozaki n=1009", 0xdbdb_468f_d888_0848),
    ("irfft ozaki n=1009", 0x1a38_738f_469e_b407),
    ("fft ozaki n=48", 0x3873_005b_cb9b_3094),
    ("ifft ozaki n=48", 0xa5de_ec2e_329e_9e2d),
    ("rfft ozaki n=48", 0x1ed3_e364_7658_720d),
    ("irfft ozaki n=48", 0xde26_6016_b98b_b8b2),
    ("fft f64 n=8", 0x2b2a_82b1_9771_5262),
    ("ifft f64 n=8", 0xb511_4740_7aad_f79d),
    ("rfft f64 n=8", 0x9d42_621a_3e69_2849),
    ("irfft f64 n=8", 0x4498_1693_405d_e1b8),
    ("fft f64 n=512", 0xa754_4cd5_f315_1758),
    ("ifft f64 n=512", 0xabf8_8c6e_aa2d_f35e),
    ("rfft f64 n=512", 0x7d50_1071_0b6f_ce11),
    ("irfft f64 n=512", 0x0a38_4155_889f_44e2),
    ("fft f64 n=4096", 0xd36c_d4fa_46c9_4823),
    ("ifft f64 n=4096", 0xd36b_1ac3_f7cf_8559),
    ("rfft f64 n=4096", 0x508d_80e8_0693_cd33),
    ("irfft f64 n=4096", 0x5bde_fef7_ab08_95b3),
    ("fft f64 n=360", 0x279a_d332_d303_4b0f),
    ("ifft f64 n=360", 0x418e_2f0f_6afe_8ab3),
    ("rfft f64 n=360", 0xc7f7_ceca_d45c_f432),
    ("irfft f64 n=360", 0xc9d4_b7d0_468d_ee79),
    ("fft f64 n=1009", 0x6cb6_db01_a1b0_08d2),
    ("ifft f64 n=1009", 0x1c79_00e3_fba5_3a72),
    ("rfft f64 n=1009", 0xa62e_4dda_2673_e7fb),
    ("irfft f64 n=1009", 0x1df7_4a03_7b29_01da),
    ("fft f64 n=48", 0xbe72_f950_5fe4_7133),
    ("ifft f64 n=48", 0xb178_3eef_4f3d_ec75),
    ("rfft f64 n=48", 0xd52e_96e3_3776_b3bc),
    ("irfft f64 n=48", 0xc6d5_2afd_8d85_1d1d),
];
const ADD_CAST: &[(&str, u64)] = &[
    ("add F32", 0x9456_d6c0_608a_36e1),
    ("to_f8e4m3 saturate F32", 0x440d_ca9a_a9e2_395b),
    ("to_f8e4m3 nan F32", 0x99e0_e237_c201_ffeb),
    ("add BF16", 0xf7e3_adf7_cc8f_d760),
    ("to_f8e4m3 saturate BF16", 0x0faf_061f_99a7_117e),
    ("to_f8e4m3 nan BF16", 0x33f7_3cb1_a147_321f),
    ("add F16", 0x53ee_06e3_bcbb_dfe9),
    ("to_f8e4m3 saturate F16", 0x7e5a_b067_ade8_7d41),
    ("to_f8e4m3 nan F16", 0x4b54_5f2a_afa5_6960),
];
