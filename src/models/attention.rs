//! What the models' attention shares: the mask (causal, padding, sliding window) and the
//! attention of rotated queries against the whole KV cache, each step an op with a
//! definition or an exact selection (see the models' module documentation).

use candle_core::{Device, Result, Tensor};

/// True where a query (row) may not see a key (column): (b, 1, s, total) u8, or `None`
/// when nothing is masked. The key at position j is visible to the query at position
/// i = index_pos + row when j <= i, j is not padding (row b's first `lengths[b]` tokens
/// are real), and, with a window w, i - j < w.
pub(crate) fn attention_mask(
    b: usize,
    s: usize,
    index_pos: usize,
    lengths: Option<&[usize]>,
    window: Option<usize>,
    dev: &Device,
) -> Result<Option<Tensor>> {
    let total = index_pos + s;
    let mut m = vec![0u8; b * s * total];
    let mut any = false;
    for bi in 0..b {
        let valid = lengths.map_or(total, |l| index_pos + l[bi]);
        for i in 0..s {
            let q = index_pos + i;
            for j in 0..total {
                let hidden = j > q || j >= valid || window.is_some_and(|w| q - j >= w);
                any |= hidden;
                m[(bi * s + i) * total + j] = hidden as u8;
            }
        }
    }
    if !any {
        return Ok(None);
    }
    Ok(Some(Tensor::from_vec(m, (b, 1, s, total), dev)?))
}

/// softmax(q k^T / sqrt(hd), masked) v for q (b, nh, s, hd) and k, v (b, nkv, total, hd),
/// as (b, s, nh hd): the correctly rounded products (each KV head's query heads stacked),
/// the scale as one IEEE multiplication in the compute dtype (1/sqrt(hd) rounded to f32,
/// then to the dtype; exact for a power of two), masked scores set to -inf (a selection),
/// the crate's softmax (masked entries give exactly 0, and exact zeros add nothing to the
/// exact sums of the product with v).
pub(crate) fn attend(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    (nh, nkv, hd): (usize, usize, usize),
) -> Result<Tensor> {
    let (b, _, s, _) = q.dims4()?;
    let total = k.dim(2)?;
    let rep = nh / nkv;
    let qg = q.reshape((b, nkv, rep * s, hd))?;
    let scores = crate::matmul(&qg, &k.t()?)?;
    let scale = Tensor::new((1.0 / (hd as f64).sqrt()) as f32, scores.device())?
        .to_dtype(scores.dtype())?;
    let scores = scores.broadcast_mul(&scale)?.reshape((b, nh, s, total))?;
    let scores = match mask {
        Some(m) => {
            let m = m.broadcast_as(scores.shape())?;
            let neg = Tensor::new(f32::NEG_INFINITY, scores.device())?
                .to_dtype(scores.dtype())?
                .broadcast_as(scores.shape())?;
            m.where_cond(&neg, &scores)?
        }
        None => scores,
    };
    let p = crate::softmax_last_dim(&scores)?;
    let o = crate::matmul(&p.reshape((b, nkv, rep * s, total))?, v)?;
    o.reshape((b, nh, s, hd))?
        .transpose(1, 2)?
        .reshape((b, s, nh * hd))
}

/// Appends (k, v) to a layer's cache (when `cache`) and returns the keys and values the
/// queries attend to, checking that they cover `total` positions.
pub(crate) fn with_cache(
    kv_cache: &mut Option<(Tensor, Tensor)>,
    k: Tensor,
    v: Tensor,
    cache: bool,
    total: usize,
) -> Result<(Tensor, Tensor)> {
    let (k, v) = match (&*kv_cache, cache) {
        (Some((kc, vc)), true) => (Tensor::cat(&[kc, &k], 2)?, Tensor::cat(&[vc, &v], 2)?),
        _ => (k, v),
    };
    if cache {
        *kv_cache = Some((k.clone(), v.clone()));
    }
    if k.dim(2)? != total {
        candle_core::bail!(
            "candle-repro: KV cache of {} positions, expected {total}",
            k.dim(2)?
        )
    }
    Ok((k, v))
}
