//! CUDA elementwise ops against the CPU, bit for bit (feature `cuda`). On a machine without
//! a CUDA device the GPU tests print "skipped: no CUDA device" and pass; the CPU side of the
//! golden hashes runs everywhere.
//!
//! For every elementwise op and dtype: 10^7 + 7 elements (f32: a stride through the whole
//! bit space, NaNs, infinities and subnormals included; bf16 and f16: every bit pattern,
//! repeated in a scrambled order), CUDA output bits == CPU output bits, and both hash
//! (FNV-1a over the output bits) to the golden value committed below. Non-contiguous inputs
//! (a transposed view, a narrowed view with a start offset) are compared too.
//!
//! Regenerate the golden table after a deliberate change of the math with
//! `REPRO_PRINT_GOLDEN=1 cargo test --release --features cuda --test cuda_elementwise -- --nocapture golden`.
#![cfg(feature = "cuda")]

mod common;

use candle_core::{DType, Device, Tensor};
use candle_repro::UnaryFn;
use common::{bits, cuda_device};
use half::{bf16, f16};

/// Elements per (op, dtype) case.
const N: usize = 10_000_007;

/// The input bits of a case: f32 strides through all 2^32 patterns (429 * N ~ 2^32, odd
/// stride so every low-bit pattern occurs); 16-bit formats cycle through every pattern in
/// an order scrambled by an odd multiplier.
fn input_bits(dtype: DType) -> Vec<u32> {
    match dtype {
        DType::F32 => (0..N as u64)
            .map(|i| (i.wrapping_mul(429).wrapping_add(0x1234_5677)) as u32)
            .collect(),
        _ => (0..N as u64)
            .map(|i| (i.wrapping_mul(40503) as u32) & 0xFFFF)
            .collect(),
    }
}

fn input_tensor(dtype: DType, device: &Device) -> Tensor {
    let bits = input_bits(dtype);
    let t = match dtype {
        DType::F32 => {
            let v: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
            Tensor::from_vec(v, N, &Device::Cpu)
        }
        DType::BF16 => {
            let v: Vec<bf16> = bits.iter().map(|&b| bf16::from_bits(b as u16)).collect();
            Tensor::from_vec(v, N, &Device::Cpu)
        }
        DType::F16 => {
            let v: Vec<f16> = bits.iter().map(|&b| f16::from_bits(b as u16)).collect();
            Tensor::from_vec(v, N, &Device::Cpu)
        }
        other => panic!("unsupported dtype {other:?}"),
    };
    t.unwrap().to_device(device).unwrap()
}

/// FNV-1a (64-bit) over the output bits, 4 bytes per f32, 2 per 16-bit value (little end).
fn fnv1a(bits: &[u32], dtype: DType) -> u64 {
    let width = if dtype == DType::F32 { 4 } else { 2 };
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in bits {
        for byte in &b.to_le_bytes()[..width] {
            h ^= *byte as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    h
}

const DTYPES: [DType; 3] = [DType::F32, DType::BF16, DType::F16];

/// Golden FNV-1a hashes of the CPU outputs, per op and dtype (f32, bf16, f16), from
/// `REPRO_PRINT_GOLDEN=1` (see the module documentation). Correctly rounded results are
/// unique, so these change only if the inputs, the hash or the NaN encoding change.
const GOLDEN: &[(&str, [Option<u64>; 3])] = &[
    (
        "exp",
        [
            Some(0xCE56E3B965351BE8),
            Some(0xBE000E96391EF5B9),
            Some(0x751FC40FDDD2AF57),
        ],
    ),
    (
        "expm1",
        [
            Some(0x50D728A1966D77D3),
            Some(0xE440C696C784E277),
            Some(0xC53602C2300A903C),
        ],
    ),
    (
        "log",
        [
            Some(0x0C3DCBE374964E83),
            Some(0xC8BB28764F5B65D8),
            Some(0xA4F5040D209292AE),
        ],
    ),
    (
        "log1p",
        [
            Some(0xB96A417413FFC588),
            Some(0x405CF661E3324B0A),
            Some(0x60905F343AC6E346),
        ],
    ),
    (
        "log10",
        [
            Some(0x2AB9D56179C6E368),
            Some(0xBB48FF32D51C9950),
            Some(0x39C49A90CF9E827B),
        ],
    ),
    (
        "sin",
        [
            Some(0x600AE2B88538F75A),
            Some(0x4E468392DB33B5D4),
            Some(0xC0B8EE98F2516CE6),
        ],
    ),
    (
        "cos",
        [
            Some(0xD2149DD2D07C23AA),
            Some(0xB4F98E7E5432CC65),
            Some(0x908B1CDC19F56E68),
        ],
    ),
    (
        "tanh",
        [
            Some(0xC4DBCD7925A753C5),
            Some(0x4DC5A91E5226327D),
            Some(0xD695EBE588B35E01),
        ],
    ),
    (
        "sigmoid",
        [
            Some(0xE6211F6BB3A9CE24),
            Some(0xA66D4023BC6A9632),
            Some(0x3520651AC3753086),
        ],
    ),
    (
        "silu",
        [
            Some(0x08841AF4D14E0401),
            Some(0x486ECA9FCB7A096B),
            Some(0x16C9963A29B7D34E),
        ],
    ),
    (
        "softplus",
        [
            Some(0xC0193D7883CBFBC2),
            Some(0x275716ECCC63A7C3),
            Some(0xD8C72CCBACCB42E1),
        ],
    ),
    (
        "erf",
        [
            Some(0xB79ABE9D03D5CEEB),
            Some(0x2812636CDDF3EB31),
            Some(0x0EE4D027789786B8),
        ],
    ),
    (
        "gelu",
        [
            Some(0x5123119B359A1A0B),
            Some(0x0003A5357E56E602),
            Some(0x83AC6363F2F767B1),
        ],
    ),
    (
        "gelu_erf",
        [
            Some(0x219CD91E2F76F996),
            Some(0xEA4964747185DE17),
            Some(0xC1D8C547218E7039),
        ],
    ),
];

fn golden(f: UnaryFn, dtype: DType) -> Option<u64> {
    let i = DTYPES.iter().position(|d| *d == dtype).unwrap();
    GOLDEN
        .iter()
        .find(|(n, _)| *n == f.name())
        .and_then(|(_, h)| h[i])
}

fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "f32",
        DType::BF16 => "bf16",
        DType::F16 => "f16",
        _ => "?",
    }
}

/// CPU output bits of every case, checked against the golden hashes (runs without a GPU).
#[test]
fn golden_cpu_hashes() {
    let print = std::env::var_os("REPRO_PRINT_GOLDEN").is_some();
    let mut missing = Vec::new();
    let mut wrong = Vec::new();
    for f in UnaryFn::ALL {
        let mut line = Vec::new();
        for dtype in DTYPES {
            let x = input_tensor(dtype, &Device::Cpu);
            let y = candle_repro::unary(&x, f).unwrap();
            let h = fnv1a(&bits(&y), dtype);
            line.push(format!("Some(0x{h:016X})"));
            match golden(f, dtype) {
                None => missing.push(format!("{} {}", f.name(), dtype_name(dtype))),
                Some(g) if g != h => wrong.push(format!(
                    "{} {}: cpu 0x{h:016X}, golden 0x{g:016X}",
                    f.name(),
                    dtype_name(dtype)
                )),
                Some(_) => {}
            }
        }
        if print {
            println!("    (\"{}\", [{}]),", f.name(), line.join(", "));
        }
    }
    if !missing.is_empty() {
        println!("no golden hash committed for: {}", missing.join(", "));
    }
    assert!(
        print || wrong.is_empty(),
        "CPU outputs differ from the golden hashes:\n{}",
        wrong.join("\n")
    );
}

/// Every op and dtype on 10^7 elements: CUDA bits == CPU bits == golden.
#[test]
fn cuda_equals_cpu_bits() {
    let Some(dev) = cuda_device() else { return };
    let mut failures = Vec::new();
    for dtype in DTYPES {
        let x_cpu = input_tensor(dtype, &Device::Cpu);
        let x_gpu = x_cpu.to_device(&dev).unwrap();
        for f in UnaryFn::ALL {
            let cpu = bits(&candle_repro::unary(&x_cpu, f).unwrap());
            let gpu = bits(&candle_repro::unary(&x_gpu, f).unwrap());
            let x_bits = input_bits(dtype);
            let diffs: Vec<String> = (0..N)
                .filter(|&i| cpu[i] != gpu[i])
                .take(8)
                .map(|i| format!("x={:#x} cpu={:#x} cuda={:#x}", x_bits[i], cpu[i], gpu[i]))
                .collect();
            let (hc, hg) = (fnv1a(&cpu, dtype), fnv1a(&gpu, dtype));
            let gold = golden(f, dtype);
            println!(
                "{:>8} {:>4}: {N} elements, cuda == cpu: {}, hash 0x{hg:016X}, golden {}",
                f.name(),
                dtype_name(dtype),
                diffs.is_empty(),
                gold.map_or("none".to_string(), |g| format!("0x{g:016X}"))
            );
            if !diffs.is_empty() || hc != hg || gold.is_some_and(|g| g != hg) {
                failures.push(format!(
                    "{} {}: {}",
                    f.name(),
                    dtype_name(dtype),
                    diffs.join("; ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "CUDA != CPU:\n{}", failures.join("\n"));
}

/// Strided and offset layouts go through the kernels' index path.
#[test]
fn cuda_non_contiguous_layouts() {
    let Some(dev) = cuda_device() else { return };
    let n = 1000 * 1003;
    let v: Vec<f32> = (0..n as u32)
        .map(|i| f32::from_bits(i.wrapping_mul(4283) ^ 0x3F00_0000))
        .collect();
    let cpu = Tensor::from_vec(v, (1000, 1003), &Device::Cpu).unwrap();
    let gpu = cpu.to_device(&dev).unwrap();
    for dtype in DTYPES {
        let c = cpu.to_dtype(dtype).unwrap();
        let g = gpu.to_dtype(dtype).unwrap();
        for f in UnaryFn::ALL {
            // transposed view
            let a = bits(&candle_repro::unary(&c.t().unwrap(), f).unwrap());
            let b = bits(&candle_repro::unary(&g.t().unwrap(), f).unwrap());
            assert!(
                a == b,
                "{} {} transposed: CUDA != CPU",
                f.name(),
                dtype_name(dtype)
            );
            // narrowed view with a start offset and a row stride
            let cn = c.narrow(1, 7, 500).unwrap();
            let gn = g.narrow(1, 7, 500).unwrap();
            let a = bits(&candle_repro::unary(&cn, f).unwrap());
            let b = bits(&candle_repro::unary(&gn, f).unwrap());
            assert!(
                a == b,
                "{} {} narrowed: CUDA != CPU",
                f.name(),
                dtype_name(dtype)
            );
        }
    }
    // empty tensor
    let e = Tensor::zeros((0, 3), DType::F32, &dev).unwrap();
    let y = candle_repro::unary(&e, UnaryFn::Exp).unwrap();
    assert_eq!(y.dims(), &[0, 3]);
}

/// softplus_with (PyTorch's beta and threshold) on CUDA against the CPU.
#[test]
fn cuda_softplus_with() {
    let Some(dev) = cuda_device() else { return };
    let n = 1 << 20;
    let v: Vec<f32> = (0..n as u32)
        .map(|i| f32::from_bits(i.wrapping_mul(4099).wrapping_add(0x3000_0000)))
        .collect();
    let cpu = Tensor::from_vec(v, n, &Device::Cpu).unwrap();
    let gpu = cpu.to_device(&dev).unwrap();
    for dtype in DTYPES {
        let (c, g) = (cpu.to_dtype(dtype).unwrap(), gpu.to_dtype(dtype).unwrap());
        for (beta, threshold) in [(1.0, 20.0), (2.0, 20.0), (0.5, 5.0), (1.0, 3.0)] {
            let a = bits(&candle_repro::softplus_with(&c, beta, threshold).unwrap());
            let b = bits(&candle_repro::softplus_with(&g, beta, threshold).unwrap());
            assert!(
                a == b,
                "softplus_with({beta}, {threshold}) {}: CUDA != CPU",
                dtype_name(dtype)
            );
        }
    }
}
