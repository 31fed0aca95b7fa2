//! A Llama-style transformer block written twice, once over Burn tensors with burn-repro's
//! ops and once over candle tensors with candle-repro's, on the same weights and input: the
//! two outputs have the same bits (their hashes are printed), in f32 and in bf16. Then the
//! Burn block runs on the first tokens alone, as a prefill of a shorter prompt would: each
//! row it shares with the full run has the same bits.
//!
//! The block: x + attention(rms_norm(x)), then + SwiGLU MLP(rms_norm(.)); attention with
//! four heads of 16, RoPE on q and k, a causal mask, softmax. 1/sqrt(16) = 1/4 is folded
//! into Wq (a power of two: exact). Every op is burn-repro's or candle-repro's except the
//! residual additions, the causal mask and the product silu(gate) * up, which are single
//! IEEE operations (correctly rounded in both frameworks, also in bf16: a product of two
//! bf16 values is exact in f32, and so is any sum that bf16 rounding could tell from the
//! f32 one).
//!
//! Run: `cargo run --release -p burn-repro --example transformer_block`

use burn_tensor::{Bool, DType, Device, Tensor, TensorData, bf16};
use candle_core::{Device as Cpu, Module, Tensor as CTensor};
use candle_repro::rope::{RopeConfig, RopeTables};

const D_MODEL: usize = 64;
const HEADS: usize = 4;
const HEAD_DIM: usize = 16;
const HIDDEN: usize = 160;
const TOKENS: usize = 12;
const EPS: f32 = 1e-5;

/// Deterministic values: a 64-bit LCG, uniform multiples of 2^-12 in (-scale, scale).
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = ((s >> 40) % 8191) as f32 / 4095.0 - 1.0;
            u * scale
        })
        .collect()
}

/// A block's weights, candle's layout: linear weights (out, in).
struct Weights {
    attn_norm: Vec<f32>,
    wq: Vec<f32>,
    wk: Vec<f32>,
    wv: Vec<f32>,
    wo: Vec<f32>,
    mlp_norm: Vec<f32>,
    w_gate: Vec<f32>,
    w_up: Vec<f32>,
    w_down: Vec<f32>,
}

impl Weights {
    fn new() -> Weights {
        let d = D_MODEL;
        let s = 1.0 / (d as f32).sqrt();
        Weights {
            attn_norm: values(d, 1, 1.0).iter().map(|v| 1.0 + v / 8.0).collect(),
            // The 1/4 of the attention scores, folded in.
            wq: values(d * d, 2, s).iter().map(|v| v / 4.0).collect(),
            wk: values(d * d, 3, s),
            wv: values(d * d, 4, s),
            wo: values(d * d, 5, s),
            mlp_norm: values(d, 6, 1.0).iter().map(|v| 1.0 + v / 8.0).collect(),
            w_gate: values(HIDDEN * d, 7, s),
            w_up: values(HIDDEN * d, 8, s),
            w_down: values(d * HIDDEN, 9, 1.0 / (HIDDEN as f32).sqrt()),
        }
    }
}

/// The output bits (16-bit dtypes widened) hashed with FNV-1a.
fn fnv(bits: impl IntoIterator<Item = u32>) -> u64 {
    bits.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn burn_bits<const N: usize>(t: Tensor<N>) -> Vec<u32> {
    let data = t.into_data();
    match data.dtype() {
        DType::F32 => data.iter::<f32>().map(f32::to_bits).collect(),
        _ => data
            .as_slice::<bf16>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits() as u32)
            .collect(),
    }
}

fn candle_bits(t: &CTensor) -> Vec<u32> {
    let t = t.flatten_all().unwrap();
    match t.dtype() {
        candle_core::DType::F32 => t
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect(),
        _ => t
            .to_vec1::<half::bf16>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits() as u32)
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------
// Burn
// ---------------------------------------------------------------------------------------

/// A Burn tensor of `dtype` from f32 values.
fn burn<const N: usize>(v: &[f32], shape: [usize; N], dtype: DType, dev: &Device) -> Tensor<N> {
    let data = match dtype {
        DType::F32 => TensorData::new(v.to_vec(), shape),
        _ => TensorData::new(v.iter().map(|&x| bf16::from_f32(x)).collect(), shape),
    };
    Tensor::from_data(data, (dev, dtype))
}

/// A linear weight in Burn's layout (d_input, d_output): the (out, in) values transposed
/// in place, as a checkpoint's weights load.
fn burn_weight(w: &[f32], out: usize, inp: usize, dtype: DType, dev: &Device) -> Tensor<2> {
    burn(w, [out, inp], dtype, dev).transpose()
}

fn burn_block(w: &Weights, x: Tensor<3>, dtype: DType, dev: &Device) -> Tensor<3> {
    let t = x.dims()[1];
    let lin = |x: Tensor<3>, wv: &[f32], out: usize, inp: usize| {
        burn_repro::linear(x, burn_weight(wv, out, inp, dtype, dev), None).unwrap()
    };
    let heads = |x: Tensor<3>| x.reshape([1, t, HEADS, HEAD_DIM]).swap_dims(1, 2);
    let cfg = burn_repro::RopeConfig::new(10000.0, HEAD_DIM);
    let (cos, sin) = burn_repro::rope_tables(&cfg, t, dtype, dev).unwrap();

    let h = burn_repro::rms_norm(x.clone(), burn(&w.attn_norm, [D_MODEL], dtype, dev), EPS);
    let h = h.unwrap();
    let q = heads(lin(h.clone(), &w.wq, D_MODEL, D_MODEL));
    let k = heads(lin(h.clone(), &w.wk, D_MODEL, D_MODEL));
    let v = heads(lin(h, &w.wv, D_MODEL, D_MODEL));
    let q = burn_repro::rope(q, cos.clone(), sin.clone()).unwrap();
    let k = burn_repro::rope(k, cos, sin).unwrap();
    let scores = burn_repro::matmul(q, k.swap_dims(2, 3)).unwrap();
    let future: Tensor<4, Bool> = Tensor::<2, Bool>::tril_mask([t, t], 0, dev).unsqueeze();
    let scores = scores.mask_fill(future, f32::NEG_INFINITY);
    let att = burn_repro::softmax(scores, 3).unwrap();
    let o = burn_repro::matmul(att, v).unwrap();
    let o = o.swap_dims(1, 2).reshape([1, t, D_MODEL]);
    let x = x + lin(o, &w.wo, D_MODEL, D_MODEL);

    let h = burn_repro::rms_norm(x.clone(), burn(&w.mlp_norm, [D_MODEL], dtype, dev), EPS);
    let h = h.unwrap();
    let gate = burn_repro::silu(lin(h.clone(), &w.w_gate, HIDDEN, D_MODEL)).unwrap();
    let up = lin(h, &w.w_up, HIDDEN, D_MODEL);
    x.clone() + lin(gate * up, &w.w_down, D_MODEL, HIDDEN)
}

// ---------------------------------------------------------------------------------------
// candle
// ---------------------------------------------------------------------------------------

fn candle(v: &[f32], shape: &[usize], dtype: DType) -> CTensor {
    let t = CTensor::from_vec(v.to_vec(), shape, &Cpu::Cpu).unwrap();
    match dtype {
        DType::F32 => t,
        _ => t.to_dtype(candle_core::DType::BF16).unwrap(),
    }
}

fn candle_block(w: &Weights, x: &CTensor, dtype: DType) -> candle_core::Result<CTensor> {
    let t = x.dim(1)?;
    let cd = x.dtype();
    let lin = |x: &CTensor, wv: &[f32], out: usize, inp: usize| {
        candle_repro::nn::Linear::new(candle(wv, &[out, inp], dtype), None).forward(x)
    };
    let heads = |x: CTensor| -> candle_core::Result<CTensor> {
        x.reshape((1, t, HEADS, HEAD_DIM))?
            .transpose(1, 2)?
            .contiguous()
    };
    let tables = RopeTables::new(&RopeConfig::new(10000.0, HEAD_DIM), t, cd, &Cpu::Cpu)?;

    let h = candle_repro::nn::rms_norm(x, &candle(&w.attn_norm, &[D_MODEL], dtype), EPS)?;
    let q = heads(lin(&h, &w.wq, D_MODEL, D_MODEL)?)?;
    let k = heads(lin(&h, &w.wk, D_MODEL, D_MODEL)?)?;
    let v = heads(lin(&h, &w.wv, D_MODEL, D_MODEL)?)?;
    let q = candle_repro::rope::rope(&q, &tables.cos, &tables.sin)?;
    let k = candle_repro::rope::rope(&k, &tables.cos, &tables.sin)?;
    let scores = candle_repro::matmul(&q, &k.t()?)?;
    let future: Vec<u8> = (0..t * t).map(|i| (i % t > i / t) as u8).collect();
    let future = CTensor::from_vec(future, (t, t), &Cpu::Cpu)?.broadcast_as(scores.shape())?;
    let neg_inf = CTensor::full(f32::NEG_INFINITY, scores.shape(), &Cpu::Cpu)?.to_dtype(cd)?;
    let scores = future.where_cond(&neg_inf, &scores)?;
    let att = candle_repro::softmax_last_dim(&scores)?;
    let o = candle_repro::matmul(&att, &v)?;
    let o = o.transpose(1, 2)?.contiguous()?.reshape((1, t, D_MODEL))?;
    let x = (x + lin(&o, &w.wo, D_MODEL, D_MODEL)?)?;

    let h = candle_repro::nn::rms_norm(&x, &candle(&w.mlp_norm, &[D_MODEL], dtype), EPS)?;
    let gate = candle_repro::silu(&lin(&h, &w.w_gate, HIDDEN, D_MODEL)?)?;
    let up = lin(&h, &w.w_up, HIDDEN, D_MODEL)?;
    &x + lin(&(gate * up)?, &w.w_down, D_MODEL, HIDDEN)?
}

fn main() -> candle_core::Result<()> {
    let w = Weights::new();
    let xv = values(TOKENS * D_MODEL, 10, 2.0);
    let dev = Device::flex();
    let mut all_equal = true;
    for dtype in [DType::F32, DType::BF16] {
        let x = burn(&xv, [1, TOKENS, D_MODEL], dtype, &dev);
        let burn_out = burn_bits(burn_block(&w, x, dtype, &dev));
        let candle_out = candle_bits(&candle_block(
            &w,
            &candle(&xv, &[1, TOKENS, D_MODEL], dtype),
            dtype,
        )?);
        // A block that computes NaN or inf would hide nothing in a hash: refuse it.
        let finite = match dtype {
            DType::F32 => burn_out.iter().all(|&b| f32::from_bits(b).is_finite()),
            _ => burn_out.iter().all(|&b| (b & 0x7f80) != 0x7f80),
        };
        if !finite {
            candle_core::bail!("{dtype:?}: the block's output has non-finite values");
        }
        let same = burn_out == candle_out;
        all_equal &= same;
        println!(
            "{dtype:?}: Burn (Flex) {:016x}, candle-repro {:016x}: {}",
            fnv(burn_out.iter().copied()),
            fnv(candle_out.iter().copied()),
            if same {
                "the same bits"
            } else {
                "DIFFERENT BITS"
            }
        );
        // The first tokens alone (a shorter prompt): the rows they share with the full run.
        let short = TOKENS - 5;
        let xs = burn(&xv[..short * D_MODEL], [1, short, D_MODEL], dtype, &dev);
        let rows = burn_bits(burn_block(&w, xs, dtype, &dev));
        let prefix = rows[..] == burn_out[..short * D_MODEL];
        all_equal &= prefix;
        println!(
            "{dtype:?}: {short} tokens alone give the first {short} rows of the {TOKENS}-token run: {}",
            if prefix {
                "the same bits"
            } else {
                "DIFFERENT BITS"
            }
        );
    }
    if !all_equal {
        candle_core::bail!("the Burn and candle blocks disagree");
    }
    Ok(())
}
