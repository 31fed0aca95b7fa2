//! The device half of the rotary embeddings: launch plans of `kernels/rope/rope.cu` (rope,
//! rope_i, rope_thd, forward and backward, and the fused op that computes cos/sin from the
//! positions), the operation-for-operation mirror of [`crate::rope::apply`]: the same bits
//! as the CPU. One thread per rotated pair, grid-stride.

use super::{FusedOp, RopeOp, err};
use crate::launch::{Device, KernelArg, LaunchPlan, Module, Slot, float_suffix};
use crate::rope::apply::{Geometry, RopeLayout};
use candle_core::{DType, Layout, Result};

/// Threads per block (`ROPE_BLOCK` in the kernel's `__launch_bounds__`).
const BLOCK: u32 = 256;
const MAX_BLOCKS: usize = 65_535 * 64;

fn contiguous_range(l: &Layout, what: &str) -> Result<(usize, usize)> {
    l.contiguous_offsets()
        .ok_or_else(|| err(format!("rope (cuda): {what} has to be contiguous")))
}

/// The plan's leading part: one thread per pair of `n` elements.
fn plan(kernel: String, n: usize) -> LaunchPlan {
    let blocks = (n / 2).div_ceil(BLOCK as usize).clamp(1, MAX_BLOCKS) as u32;
    LaunchPlan::new(Module::Rope, kernel, blocks, BLOCK)
}

/// The geometry arguments after the output: layout, b, h, t, d[, cs_t].
fn geometry_args(mut p: LaunchPlan, g: &Geometry, with_cs_t: bool) -> LaunchPlan {
    let layout = match g.layout {
        RopeLayout::Halves => 0,
        RopeLayout::Interleaved => 1,
        RopeLayout::Thd => 2,
    };
    p = p.arg(KernelArg::U32(layout));
    for v in [g.b, g.h, g.t, g.d] {
        p = p.arg(KernelArg::U64(v as u64));
    }
    if with_cs_t {
        p = p.arg(KernelArg::U64(g.cs_t as u64));
    }
    p
}

/// Rotation (`sgn` = 1 forward, -1 backward) of contiguous xs by the cos/sin tables, in the
/// shapes the op's checks admit ([`crate::rope::rope_with`]): a new contiguous buffer.
pub fn rope<D: Device + ?Sized>(
    dev: &D,
    layout: RopeLayout,
    sgn: f64,
    x: (&D::Buffer, &Layout),
    cos: (&D::Buffer, &Layout),
    sin: (&D::Buffer, &Layout),
) -> Result<D::Buffer> {
    let g = RopeOp { layout, sgn }.geometry(x.1, cos.1)?;
    let dtype = dev.dtype(x.0);
    if dev.dtype(cos.0) != dtype || dev.dtype(sin.0) != dtype {
        return Err(err(
            "rope (cuda): xs, cos and sin must have one dtype".into()
        ));
    }
    let suffix = float_suffix(dtype, "rope")?;
    let (x0, x1) = contiguous_range(x.1, "xs")?;
    let (c0, c1) = contiguous_range(cos.1, "cos")?;
    let (s0, s1) = contiguous_range(sin.1, "sin")?;
    let n = x1 - x0;
    let mut out = dev.alloc(dtype, n)?;
    if n / 2 == 0 {
        return Ok(out);
    }
    let p = plan(format!("repro_rope_{suffix}"), n)
        .buf(0, dtype, x0, n)
        .buf(1, dtype, c0, c1 - c0)
        .buf(2, dtype, s0, s1 - s0)
        .buf(3, dtype, 0, n);
    let p = geometry_args(p, &g, true)
        .arg(KernelArg::U32(g.batched as u32))
        .arg(KernelArg::F64(sgn));
    let slots = &mut [
        Slot::In(x.0),
        Slot::In(cos.0),
        Slot::In(sin.0),
        Slot::Out(&mut out),
    ];
    dev.launch(&p, slots)?;
    Ok(out)
}

/// The fused rotation: cos/sin computed per pair in the kernel from u32 positions ((t,) or
/// (b, t), contiguous), the inverse frequencies and the attention factor, as
/// [`crate::rope::rope_fused`] defines them.
#[allow(clippy::too_many_arguments)]
pub fn rope_fused<D: Device + ?Sized>(
    dev: &D,
    layout: RopeLayout,
    sgn: f64,
    inv_freq: &[f32],
    af: f32,
    x: (&D::Buffer, &Layout),
    pos: (&D::Buffer, &Layout),
) -> Result<D::Buffer> {
    let op = FusedOp {
        layout,
        sgn,
        inv: std::sync::Arc::new(inv_freq.to_vec()),
        af,
    };
    let g = op.geometry(x.1, pos.1)?;
    if inv_freq.len() * 2 != g.d {
        return Err(err(format!(
            "rope (cuda): head size {} does not match {} frequencies",
            g.d,
            inv_freq.len()
        )));
    }
    if dev.dtype(pos.0) != DType::U32 {
        return Err(err("rope (cuda): positions must be u32".into()));
    }
    let dtype = dev.dtype(x.0);
    let suffix = float_suffix(dtype, "rope_fused")?;
    let (x0, x1) = contiguous_range(x.1, "xs")?;
    let (p0, p1) = contiguous_range(pos.1, "positions")?;
    let n = x1 - x0;
    let mut out = dev.alloc(dtype, n)?;
    if n / 2 == 0 {
        return Ok(out);
    }
    let inv = dev.upload_f32(inv_freq)?;
    let p = plan(format!("repro_rope_fused_{suffix}"), n)
        .buf(0, dtype, x0, n)
        .buf(1, DType::U32, p0, p1 - p0)
        .buf(2, DType::F32, 0, inv_freq.len())
        .arg(KernelArg::F32(af))
        .buf(3, dtype, 0, n);
    let p = geometry_args(p, &g, false)
        .arg(KernelArg::U32(g.batched as u32))
        .arg(KernelArg::F64(sgn));
    dev.launch(
        &p,
        &mut [
            Slot::In(x.0),
            Slot::In(pos.0),
            Slot::In(&inv),
            Slot::Out(&mut out),
        ],
    )?;
    Ok(out)
}
