//! A small Llama-style attention block (RMSNorm, q/k/v projections, rotary embedding with
//! Llama-3.1 scaling, causal softmax attention, output projection; random weights from a
//! fixed seed) run with candle-repro's correctly rounded tables, `rope` and
//! `softmax_last_dim`, and the same block with stock candle (candle-transformers' way of
//! building the tables, `candle_nn::rotary_emb::rope`, `candle_nn::ops::softmax_last_dim`).
//!
//! For every device (CPU, and CUDA with `--features cuda` when a GPU is present) and dtype
//! it prints FNV-1a hashes of each stage's output bits. The stages that are ours (tables,
//! rope of a fixed tensor, softmax of fixed scores) hash the same on every device; the full
//! block also goes through candle's matmuls and reductions, which are stock and may differ
//! between devices, so its hash is shown but only the repro stages are claimed identical.
//!
//! `cargo run --release --example llama_block [-- --features cuda]`

use candle_core::{D, DType, Device, Result, Tensor};
use candle_repro::rope::{RopeConfig, RopeTables};

const HIDDEN: usize = 256;
const HEADS: usize = 4;
const HEAD_DIM: usize = HIDDEN / HEADS;
const SEQ: usize = 48;
const MAX_POS: usize = 4096;
const SEED: u64 = 0x5EED_1234_ABCD_0042;

/// Deterministic values in [-scale, scale) from a xorshift stream (no device RNG).
fn seeded(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0) * scale
        })
        .collect()
}

fn param(shape: &[usize], seed: u64, scale: f32, dt: DType, dev: &Device) -> Result<Tensor> {
    let n = shape.iter().product();
    Tensor::from_vec(seeded(n, seed, scale), shape, &Device::Cpu)?
        .to_dtype(dt)?
        .to_device(dev)
}

fn fnv(t: &Tensor) -> Result<u64> {
    let t = t.to_device(&Device::Cpu)?.flatten_all()?;
    let bytes: Vec<u8> = match t.dtype() {
        DType::F32 => t
            .to_vec1::<f32>()?
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect(),
        DType::BF16 => t
            .to_vec1::<half::bf16>()?
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect(),
        _ => t
            .to_vec1::<half::f16>()?
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect(),
    };
    let mut h = 0xCBF2_9CE4_8422_2325u64;
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    Ok(h)
}

struct Weights {
    norm: Tensor,
    wq: Tensor,
    wk: Tensor,
    wv: Tensor,
    wo: Tensor,
}

impl Weights {
    fn new(dt: DType, dev: &Device) -> Result<Weights> {
        let s = 1.0 / (HIDDEN as f32).sqrt();
        Ok(Weights {
            norm: param(&[HIDDEN], SEED, 1.0, dt, dev)?.abs()?,
            wq: param(&[HIDDEN, HIDDEN], SEED + 1, s, dt, dev)?,
            wk: param(&[HIDDEN, HIDDEN], SEED + 2, s, dt, dev)?,
            wv: param(&[HIDDEN, HIDDEN], SEED + 3, s, dt, dev)?,
            wo: param(&[HIDDEN, HIDDEN], SEED + 4, s, dt, dev)?,
        })
    }
}

type RopeFn = fn(&Tensor, &Tensor, &Tensor) -> Result<Tensor>;
type SoftmaxFn = fn(&Tensor) -> Result<Tensor>;

/// The block; returns (scores softmax, output).
fn block(
    x: &Tensor,
    w: &Weights,
    cos: &Tensor,
    sin: &Tensor,
    rope: RopeFn,
    softmax: SoftmaxFn,
) -> Result<(Tensor, Tensor)> {
    let (b, t, _) = x.dims3()?;
    // RMSNorm in f32
    let xf = x.to_dtype(DType::F32)?;
    let rms = (xf.sqr()?.mean_keepdim(D::Minus1)? + 1e-5)?.sqrt()?;
    let xn = xf
        .broadcast_div(&rms)?
        .to_dtype(x.dtype())?
        .broadcast_mul(&w.norm)?;
    let proj = |wm: &Tensor| -> Result<Tensor> {
        xn.broadcast_matmul(&wm.t()?)?
            .reshape((b, t, HEADS, HEAD_DIM))?
            .transpose(1, 2)?
            .contiguous()
    };
    let (q, k, v) = (proj(&w.wq)?, proj(&w.wk)?, proj(&w.wv)?);
    let cos = cos.narrow(0, 0, t)?;
    let sin = sin.narrow(0, 0, t)?;
    let q = rope(&q, &cos, &sin)?;
    let k = rope(&k, &cos, &sin)?;
    let scale = 1.0 / (HEAD_DIM as f64).sqrt();
    let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?;
    let mask: Vec<f32> = (0..t * t)
        .map(|k| {
            if k % t > k / t {
                f32::NEG_INFINITY
            } else {
                0.0
            }
        })
        .collect();
    let mask = Tensor::from_vec(mask, (t, t), x.device())?.to_dtype(x.dtype())?;
    let p = softmax(&scores.broadcast_add(&mask)?.contiguous()?)?;
    let o = p
        .matmul(&v)?
        .transpose(1, 2)?
        .reshape((b, t, HIDDEN))?
        .broadcast_matmul(&w.wo.t()?)?;
    Ok((p, o))
}

/// candle-transformers' llama.rs tables: host powf, a matmul, Tensor::cos/sin on the device.
fn stock_tables(dt: DType, dev: &Device) -> Result<(Tensor, Tensor)> {
    let (factor, low, high, old) = (8f32, 1f32, 4f32, 8192f32);
    let inv: Vec<f32> = (0..HEAD_DIM)
        .step_by(2)
        .map(|i| 1f32 / 500000f32.powf(i as f32 / HEAD_DIM as f32))
        .map(|freq| {
            let wavelen = 2. * std::f32::consts::PI / freq;
            if wavelen < old / high {
                freq
            } else if wavelen > old / low {
                freq / factor
            } else {
                let smooth = (old / wavelen - low) / (high - low);
                (1. - smooth) * freq / factor + smooth * freq
            }
        })
        .collect();
    let inv = Tensor::new(inv, dev)?.reshape((1, HEAD_DIM / 2))?;
    let idx = Tensor::arange(0, MAX_POS as u32, dev)?
        .to_dtype(DType::F32)?
        .reshape((MAX_POS, 1))?
        .matmul(&inv)?;
    Ok((idx.cos()?.to_dtype(dt)?, idx.sin()?.to_dtype(dt)?))
}

fn run(dev: &Device, dev_name: &str) -> Result<()> {
    for dt in [DType::F32, DType::BF16, DType::F16] {
        let w = Weights::new(dt, dev)?;
        let x = param(&[1, SEQ, HIDDEN], SEED + 9, 1.0, dt, dev)?;
        let tables = RopeTables::new(&RopeConfig::llama31(HEAD_DIM), MAX_POS, dt, dev)?;
        let (scos, ssin) = stock_tables(dt, dev)?;
        // repro-only stages on fixed inputs (identical on every device)
        let qf = param(&[1, HEADS, SEQ, HEAD_DIM], SEED + 10, 2.0, dt, dev)?;
        let cos = tables.cos.narrow(0, 0, SEQ)?;
        let sin = tables.sin.narrow(0, 0, SEQ)?;
        let rq = candle_repro::rope::rope(&qf, &cos, &sin)?;
        let sf = param(&[HEADS, SEQ, SEQ], SEED + 11, 8.0, dt, dev)?;
        let sm = candle_repro::softmax_last_dim(&sf)?;
        let (p, o) = block(
            &x,
            &w,
            &tables.cos,
            &tables.sin,
            candle_repro::rope::rope,
            candle_repro::softmax_last_dim,
        )?;
        let (sp, so) = block(
            &x,
            &w,
            &scos,
            &ssin,
            candle_nn::rotary_emb::rope,
            candle_nn::ops::softmax_last_dim,
        )?;
        let srq =
            candle_nn::rotary_emb::rope(&qf, &scos.narrow(0, 0, SEQ)?, &ssin.narrow(0, 0, SEQ)?)?;
        let ssm = candle_nn::ops::softmax_last_dim(&sf)?;
        let diff = (o.to_dtype(DType::F32)? - so.to_dtype(DType::F32)?)?
            .abs()?
            .max_all()?
            .to_scalar::<f32>()?;
        println!("{dev_name} {dt:?}");
        println!(
            "  repro : tables {:016x}/{:016x}  rope(q) {:016x}  softmax {:016x}  | block probs {:016x} out {:016x}",
            fnv(&tables.cos)?,
            fnv(&tables.sin)?,
            fnv(&rq)?,
            fnv(&sm)?,
            fnv(&p)?,
            fnv(&o)?
        );
        println!(
            "  stock : tables {:016x}/{:016x}  rope(q) {:016x}  softmax {:016x}  | block probs {:016x} out {:016x}",
            fnv(&scos)?,
            fnv(&ssin)?,
            fnv(&srq)?,
            fnv(&ssm)?,
            fnv(&sp)?,
            fnv(&so)?
        );
        println!("  max |out_repro - out_stock| = {diff:.3e}");
    }
    Ok(())
}

fn main() -> Result<()> {
    println!(
        "Llama-style attention block: hidden {HIDDEN}, {HEADS} heads of {HEAD_DIM}, {SEQ} tokens, llama3 rope (theta 500000), seed {SEED:#x}"
    );
    run(&Device::Cpu, "cpu")?;
    #[cfg(feature = "cuda")]
    match Device::new_cuda(0) {
        Ok(gpu) => run(&gpu, "cuda:0")?,
        Err(e) => println!(
            "cuda: skipped: no CUDA device ({})",
            e.to_string().lines().next().unwrap_or("")
        ),
    }
    Ok(())
}
