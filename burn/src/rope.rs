//! Rotary position embeddings: the core's tables and rotation (`repro_core::rope`: the
//! exact operation sequence of the tables, the one-rounding scheme of the rotation), in the
//! three layouts of `candle_nn::rotary_emb`, with the backward pass (the rotation by
//! -theta).

use crate::Error;
use crate::autodiff::{AdTensor, grad_like, on_autodiff_flex};
use crate::flex::{
    Home, by_dtype, check_float, check_same, contiguous, from_flex, from_vec, to_flex, values,
};
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::checkpoint::strategy::CheckpointStrategy;
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops, OpsKind, unary as unary_step};
use burn_backend::TensorMetadata;
use burn_flex::{Flex, FlexTensor};
use burn_tensor::{DType, Device, Element, Int, Tensor, TensorData};
use repro_core::math::Format;
use repro_core::rope::apply::apply;
use repro_core::rope::{Geometry, RopeConfig, RopeFreqs, RopeLayout, fill_rows};

/// The rotation over Flex primitives: x in the layout's order, cos/sin rows of d/2.
fn forward<T: Format + Element + bytemuck::Pod + Default>(
    g: Geometry,
    sgn: f64,
    x: FlexTensor,
    cos: &FlexTensor,
    sin: &FlexTensor,
) -> FlexTensor {
    let x = contiguous(x);
    let (cos, sin) = (contiguous(cos.clone()), contiguous(sin.clone()));
    let y = apply(
        &g,
        values::<T>(&x),
        values::<T>(&cos),
        values::<T>(&sin),
        sgn,
    );
    from_vec(y, x.shape())
}

/// The backward step: the rotation by -theta of the output's gradient (the tables are
/// constants: no gradient reaches them, as in candle-repro).
#[derive(Debug)]
struct RopeBackward;

impl Backward<Flex, 1> for RopeBackward {
    /// The geometry and the tables.
    type State = (Geometry, FlexTensor, FlexTensor);

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (g, cos, sin) = ops.state;
        unary_step::<Flex, _>(ops.parents, ops.node, grads, |grad| {
            let grad = grad_like(grad, &cos);
            by_dtype!(cos.dtype(), forward(g, -1.0, grad, &cos, &sin))
        });
    }
}

/// The rotation of a tracked x, with the backward step registered.
fn tracked<C: CheckpointStrategy>(
    g: Geometry,
    x: AdTensor<C>,
    cos: AdTensor<C>,
    sin: AdTensor<C>,
) -> AdTensor<C> {
    let guard = x.node();
    let (x, cos, sin) = (
        x.into_primitive(),
        cos.into_primitive(),
        sin.into_primitive(),
    );
    let y = by_dtype!(x.dtype(), forward(g, 1.0, x, &cos, &sin));
    match RopeBackward
        .prepare::<C>([guard])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => prep.finish((g, cos, sin), y),
        OpsKind::UnTracked(prep) => prep.finish(y),
    }
}

/// candle_nn's shape rules, plus dtype and device checks; returns the geometry.
fn check<const C: usize>(
    layout: RopeLayout,
    x: &Tensor<4>,
    cos: &Tensor<C>,
    sin: &Tensor<C>,
) -> Result<Geometry, Error> {
    let op = layout.name();
    let invalid = |message: String| Error::Invalid { op, message };
    check_float(op, x.dtype())?;
    check_same(op, x, cos)?;
    check_same(op, x, sin)?;
    let dims = x.dims();
    let (b, h, t, d) = match layout {
        RopeLayout::Thd => (dims[0], dims[2], dims[1], dims[3]),
        _ => (dims[0], dims[1], dims[2], dims[3]),
    };
    if d % 2 != 0 {
        return Err(invalid(format!("the head size must be even, got {d}")));
    }
    if cos.dims() != sin.dims() {
        return Err(invalid(format!(
            "cos and sin shapes differ: {:?} vs {:?}",
            cos.dims(),
            sin.dims()
        )));
    }
    let cs = cos.dims();
    let (cs_t, cs_d, batched) = match C {
        2 => (cs[0], cs[1], false),
        3 if cs[0] == b => (cs[1], cs[2], true),
        3 => {
            return Err(invalid(format!(
                "inconsistent batch size: x {dims:?}, cos/sin {cs:?}"
            )));
        }
        _ => {
            return Err(invalid(format!(
                "cos/sin must be 2D (t, d/2) or 3D (b, t, d/2), got {cs:?}"
            )));
        }
    };
    if cs_d * 2 != d || t > cs_t {
        return Err(invalid(format!(
            "inconsistent last dim size: x {dims:?}, cos/sin {cs:?} (need (>= {t}, {}))",
            d / 2
        )));
    }
    Ok(Geometry {
        layout,
        b,
        h,
        t,
        d,
        cs_t,
        batched,
    })
}

/// Checks, then the rotation on any backend.
fn rotate<const C: usize>(
    layout: RopeLayout,
    x: Tensor<4>,
    cos: Tensor<C>,
    sin: Tensor<C>,
) -> Result<Tensor<4>, Error> {
    let g = check(layout, &x, &cos, &sin)?;
    run(layout.name(), g, x, cos, sin)
}

fn run<const C: usize>(
    op: &'static str,
    g: Geometry,
    x: Tensor<4>,
    cos: Tensor<C>,
    sin: Tensor<C>,
) -> Result<Tensor<4>, Error> {
    if x.is_autodiff() {
        if !x.is_tracked() {
            return Ok(run(op, g, x.inner(), cos.inner(), sin.inner())?.autodiff());
        }
        return on_autodiff_flex!(op, [x, cos, sin], |S| tracked::<S>(g, x, cos, sin));
    }
    let dtype = x.dtype();
    let (xp, home): (FlexTensor, Home) = to_flex(op, x)?;
    let (cp, _) = to_flex(op, cos)?;
    let (sp, _) = to_flex(op, sin)?;
    Ok(from_flex(
        by_dtype!(dtype, forward(g, 1.0, xp, &cp, &sp)),
        &home,
    ))
}

/// `candle_nn::rotary_emb::rope`: x (b, h, t, d), cos/sin (t', d/2) or (b, t', d/2) with
/// t' >= t; `y[i] = x[i] c - x[i+d/2] s`, `y[i+d/2] = x[i] s + x[i+d/2] c`, each exact value
/// rounded once to the dtype: the bits of candle-repro's `rope::rope`. Differentiable with
/// respect to x on `Device::flex().autodiff()` (the tables are constants).
///
/// ```
/// use burn_tensor::{DType, Device, Tensor};
/// use burn_repro::{RopeConfig, rope, rope_tables};
/// let dev = Device::flex();
/// let (cos, sin) = rope_tables(&RopeConfig::new(10000.0, 4), 16, DType::F32, &dev).unwrap();
/// // x (b, h, t, d) = (1, 1, 2, 4): e_0 at positions 0 and 1.
/// let x = Tensor::<4>::from_floats([[[[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]]], &dev);
/// let y = rope(x, cos, sin).unwrap().into_data();
/// let y = y.as_slice::<f32>().unwrap();
/// assert_eq!(y[..4], [1.0, 0.0, 0.0, 0.0]); // position 0: the identity
/// // Position 1 rotates (x[0], x[2]) by 1 rad: cos 1 and sin 1, correctly rounded.
/// assert_eq!(y[4..], [f32::from_bits(0x3F0A_5140), 0.0, f32::from_bits(0x3F57_6AA4), 0.0]);
/// ```
pub fn rope<const C: usize>(
    x: Tensor<4>,
    cos: Tensor<C>,
    sin: Tensor<C>,
) -> Result<Tensor<4>, Error> {
    rotate(RopeLayout::Halves, x, cos, sin)
}

/// `candle_nn::rotary_emb::rope_i`: interleaved pairs (`x[2i]`, `x[2i+1]`), x (b, h, t, d),
/// as [`rope`]: the bits of candle-repro's `rope::rope_i`.
pub fn rope_i<const C: usize>(
    x: Tensor<4>,
    cos: Tensor<C>,
    sin: Tensor<C>,
) -> Result<Tensor<4>, Error> {
    rotate(RopeLayout::Interleaved, x, cos, sin)
}

/// `candle_nn::rotary_emb::rope_thd`: x (b, t, h, d), rotated halves, as [`rope`]: the bits
/// of candle-repro's `rope::rope_thd`.
pub fn rope_thd<const C: usize>(
    x: Tensor<4>,
    cos: Tensor<C>,
    sin: Tensor<C>,
) -> Result<Tensor<4>, Error> {
    rotate(RopeLayout::Thd, x, cos, sin)
}

/// The cos and sin tables (max_positions, rotary_dim / 2) of a config in `dtype` (f32,
/// bf16 or f16) on `device`: Hugging Face transformers' rotary embedding with the two
/// transcendental steps correctly rounded (`repro_core::rope::tables`), computed on the
/// host: the bits of candle-repro's `RopeTables` on every device.
pub fn rope_tables(
    cfg: &RopeConfig,
    max_positions: usize,
    dtype: DType,
    device: &Device,
) -> Result<(Tensor<2>, Tensor<2>), Error> {
    let op = "rope_tables";
    check_float(op, dtype)?;
    let f = repro_core::rope::rope_freqs(cfg).map_err(|e| Error::Invalid {
        op,
        message: e.to_string(),
    })?;
    let (inv, af) = (&f.inv_freq, f.attention_factor);
    let positions: Vec<u64> = (0..max_positions as u64).collect();
    let (c, s) = by_dtype!(dtype, rows(inv, af, &positions));
    Ok((
        Tensor::from_data(c, (device, dtype)),
        Tensor::from_data(s, (device, dtype)),
    ))
}

/// The frequencies of a config (`inv_freq` and the attention factor), for [`rope_fused`]:
/// the core's `rope_freqs`, with its refusals (an odd rotary_dim, a non-finite theta) as
/// errors.
pub fn rope_freqs(cfg: &RopeConfig) -> Result<RopeFreqs, Error> {
    repro_core::rope::rope_freqs(cfg).map_err(|e| Error::Invalid {
        op: "rope_freqs",
        message: e.to_string(),
    })
}

/// Rotary embedding from positions (candle-repro's `rope::rope_fused`): `positions` is (t,)
/// or (b, t), integers in 0..2^32; the cos/sin rows of `freqs` at those positions are
/// computed here (one row per (batch, time) slot, shared by the heads) in x's dtype and
/// applied as [`rope`], [`rope_i`] or [`rope_thd`] would apply table rows: the same bits
/// as the table path, and as candle-repro's fused op. Differentiable with respect to x.
///
/// ```
/// use burn_tensor::{DType, Device, Int, Tensor};
/// use burn_repro::{RopeConfig, RopeLayout, rope, rope_freqs, rope_fused, rope_tables};
/// let dev = Device::flex();
/// let cfg = RopeConfig::llama31(8);
/// // Three tokens at positions 7, 999 and 0 (decode-style, not 0..t).
/// let positions = Tensor::<1, Int>::from_ints([7, 999, 0], &dev);
/// let x = Tensor::<1, Int>::arange(0..48, &dev).float().reshape([1, 2, 3, 8]);
/// let freqs = rope_freqs(&cfg).unwrap();
/// let y = rope_fused(RopeLayout::Halves, x.clone(), positions.clone(), &freqs).unwrap();
/// // The same bits as the table path on the rows of those positions.
/// let (cos, sin) = rope_tables(&cfg, 1000, DType::F32, &dev).unwrap();
/// let (cos, sin) = (cos.select(0, positions.clone()), sin.select(0, positions));
/// let z = rope(x, cos, sin).unwrap();
/// assert_eq!(y.into_data(), z.into_data());
/// ```
pub fn rope_fused<const P: usize>(
    layout: RopeLayout,
    x: Tensor<4>,
    positions: Tensor<P, Int>,
    freqs: &RopeFreqs,
) -> Result<Tensor<4>, Error> {
    let op = layout.name();
    let invalid = |message: String| Error::Invalid { op, message };
    check_float(op, x.dtype())?;
    let dims = x.dims();
    let (b, t, d) = match layout {
        RopeLayout::Thd => (dims[0], dims[1], dims[3]),
        _ => (dims[0], dims[2], dims[3]),
    };
    let half = freqs.inv_freq.len();
    if d != 2 * half {
        return Err(invalid(format!(
            "(fused) head size {d} does not match rotary_dim {}",
            2 * half
        )));
    }
    let pd = positions.dims();
    if !(pd[..] == [t] || pd[..] == [b, t]) {
        return Err(invalid(format!(
            "(fused) positions must be (t,) = ({t},) or (b, t) = ({b}, {t}), got {pd:?}"
        )));
    }
    let data = positions.into_data();
    let mut pos = Vec::with_capacity(data.num_elements());
    for p in data.iter::<i64>() {
        if !(0..=u32::MAX as i64).contains(&p) {
            return Err(invalid(format!("(fused) position {p} outside 0..2^32")));
        }
        pos.push(p as u64);
    }
    // The table rows of the positions, on x's device (an autodiff device included): the
    // table path then rotates, and its backward step serves this op too.
    let (dtype, device) = (x.dtype(), x.device());
    let (c, s) = by_dtype!(dtype, rows(&freqs.inv_freq, freqs.attention_factor, &pos));
    let upload = |v: TensorData| Tensor::<2>::from_data(v, (&device, dtype));
    let (cos, sin) = (upload(c), upload(s));
    if P == 1 {
        rotate(layout, x, cos, sin)
    } else {
        rotate(
            layout,
            x,
            cos.reshape([b, t, half]),
            sin.reshape([b, t, half]),
        )
    }
}

/// cos and sin rows (positions.len(), inv.len()) at the given positions.
fn rows<T: Format + Element + Default>(
    inv: &[f32],
    af: f32,
    positions: &[u64],
) -> (TensorData, TensorData) {
    let n = positions.len() * inv.len();
    let (mut c, mut s) = (vec![T::default(); n], vec![T::default(); n]);
    fill_rows(inv, af, positions, &mut c, &mut s);
    let shape = [positions.len(), inv.len()];
    (TensorData::new(c, shape), TensorData::new(s, shape))
}
