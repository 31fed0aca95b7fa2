//! CUDA launches of `kernels/rope.cu`: rope / rope_i / rope_thd forward and backward, the
//! operation-for-operation mirror of [`crate::rope::apply`] (same bits as the CPU).

use crate::rope::apply::{Geometry, RopeLayout};
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::{CudaDType, CudaStorageSlice, WrapErr};
use candle_core::{CudaDevice, CudaStorage, Layout, Result, Shape};

/// PTX of `kernels/rope.cu`.
pub const ROPE_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/rope.ptx"));

/// Module name in candle's per-device module cache.
const ROPE_MODULE: &str = "candle_repro_rope";

/// Threads per block (`ROPE_BLOCK` in the kernel's `__launch_bounds__`).
const BLOCK: u32 = 256;

fn err(msg: String) -> candle_core::Error {
    candle_core::Error::Msg(format!("candle-repro rope (cuda): {msg}"))
}

/// Forward (`sgn` = 1) or backward (`sgn` = -1) rotation of contiguous inputs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rope_fwd(
    g: &Geometry,
    sgn: f64,
    s1: &CudaStorage,
    l1: &Layout,
    s2: &CudaStorage,
    l2: &Layout,
    s3: &CudaStorage,
    l3: &Layout,
) -> Result<(CudaStorage, Shape)> {
    let dev = &s1.device;
    let out = match (&s1.slice, &s2.slice, &s3.slice) {
        (CudaStorageSlice::F32(x), CudaStorageSlice::F32(c), CudaStorageSlice::F32(s)) => {
            CudaStorage::wrap_cuda_slice(
                launch(dev, "f32", g, sgn, x, l1, c, l2, s, l3)?,
                dev.clone(),
            )
        }
        (CudaStorageSlice::BF16(x), CudaStorageSlice::BF16(c), CudaStorageSlice::BF16(s)) => {
            CudaStorage::wrap_cuda_slice(
                launch(dev, "bf16", g, sgn, x, l1, c, l2, s, l3)?,
                dev.clone(),
            )
        }
        (CudaStorageSlice::F16(x), CudaStorageSlice::F16(c), CudaStorageSlice::F16(s)) => {
            CudaStorage::wrap_cuda_slice(
                launch(dev, "f16", g, sgn, x, l1, c, l2, s, l3)?,
                dev.clone(),
            )
        }
        _ => {
            return Err(err(
                "unsupported dtypes (f32, bf16 or f16, the same for xs, cos and sin)".into(),
            ));
        }
    };
    Ok((out, l1.shape().clone()))
}

#[allow(clippy::too_many_arguments)]
fn launch<T: DeviceRepr + CudaDType>(
    dev: &CudaDevice,
    suffix: &str,
    g: &Geometry,
    sgn: f64,
    x: &CudaSlice<T>,
    lx: &Layout,
    c: &CudaSlice<T>,
    lc: &Layout,
    s: &CudaSlice<T>,
    ls: &Layout,
) -> Result<CudaSlice<T>> {
    let range = |l: &Layout, what: &str| {
        l.contiguous_offsets()
            .ok_or_else(|| err(format!("{what} has to be contiguous")))
    };
    let (x0, x1) = range(lx, "xs")?;
    let (c0, c1) = range(lc, "cos")?;
    let (s0, s1) = range(ls, "sin")?;
    let n = x1 - x0;
    // SAFETY: every element is written by the kernel (each pair writes its two outputs).
    let mut out = unsafe { dev.alloc::<T>(n)? };
    let pairs = n / 2;
    if pairs == 0 {
        return Ok(out);
    }
    let func =
        dev.get_or_load_custom_func(&format!("repro_rope_{suffix}"), ROPE_MODULE, ROPE_PTX)?;
    let (xv, cv, sv) = (x.slice(x0..x1), c.slice(c0..c1), s.slice(s0..s1));
    let layout: u32 = match g.layout {
        RopeLayout::Halves => 0,
        RopeLayout::Interleaved => 1,
        RopeLayout::Thd => 2,
    };
    let (b, h, t, d, cs_t) = (
        g.b as u64,
        g.h as u64,
        g.t as u64,
        g.d as u64,
        g.cs_t as u64,
    );
    let batched = g.batched as u32;
    let mut builder = func.builder();
    builder.arg(&xv);
    builder.arg(&cv);
    builder.arg(&sv);
    builder.arg(&mut out);
    builder.arg(&layout);
    builder.arg(&b);
    builder.arg(&h);
    builder.arg(&t);
    builder.arg(&d);
    builder.arg(&cs_t);
    builder.arg(&batched);
    builder.arg(&sgn);
    let blocks = pairs.div_ceil(BLOCK as usize).clamp(1, 65535 * 64) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the arguments match the kernel's signature (x, cos, sin, y, layout, b, h, t,
    // d, cs_t, batched, sgn); the views hold the elements the geometry addresses (checked
    // by the shape rules before the op runs).
    unsafe { builder.launch(cfg) }.w()?;
    Ok(out)
}

/// The fused op: cos/sin computed in the kernel from u32 positions and the frequencies.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rope_fused_fwd(
    g: &Geometry,
    sgn: f64,
    inv_freq: &[f32],
    af: f32,
    s1: &CudaStorage,
    l1: &Layout,
    s2: &CudaStorage,
    l2: &Layout,
) -> Result<(CudaStorage, Shape)> {
    let dev = &s1.device;
    let CudaStorageSlice::U32(pos) = &s2.slice else {
        return Err(err("positions must be u32".into()));
    };
    let out = match &s1.slice {
        CudaStorageSlice::F32(x) => CudaStorage::wrap_cuda_slice(
            launch_fused(dev, "f32", g, sgn, inv_freq, af, x, l1, pos, l2)?,
            dev.clone(),
        ),
        CudaStorageSlice::BF16(x) => CudaStorage::wrap_cuda_slice(
            launch_fused(dev, "bf16", g, sgn, inv_freq, af, x, l1, pos, l2)?,
            dev.clone(),
        ),
        CudaStorageSlice::F16(x) => CudaStorage::wrap_cuda_slice(
            launch_fused(dev, "f16", g, sgn, inv_freq, af, x, l1, pos, l2)?,
            dev.clone(),
        ),
        _ => return Err(err("unsupported dtype (f32, bf16 or f16)".into())),
    };
    Ok((out, l1.shape().clone()))
}

#[allow(clippy::too_many_arguments)]
fn launch_fused<T: DeviceRepr + CudaDType>(
    dev: &CudaDevice,
    suffix: &str,
    g: &Geometry,
    sgn: f64,
    inv_freq: &[f32],
    af: f32,
    x: &CudaSlice<T>,
    lx: &Layout,
    pos: &CudaSlice<u32>,
    lp: &Layout,
) -> Result<CudaSlice<T>> {
    let (x0, x1) = lx
        .contiguous_offsets()
        .ok_or_else(|| err("xs has to be contiguous".into()))?;
    let (p0, p1) = lp
        .contiguous_offsets()
        .ok_or_else(|| err("positions have to be contiguous".into()))?;
    if inv_freq.len() * 2 != g.d {
        return Err(err(format!(
            "head size {} does not match {} frequencies",
            g.d,
            inv_freq.len()
        )));
    }
    let n = x1 - x0;
    // SAFETY: every element is written by the kernel (each pair writes its two outputs).
    let mut out = unsafe { dev.alloc::<T>(n)? };
    let pairs = n / 2;
    if pairs == 0 {
        return Ok(out);
    }
    let inv = dev.clone_htod(inv_freq)?;
    let func =
        dev.get_or_load_custom_func(&format!("repro_rope_fused_{suffix}"), ROPE_MODULE, ROPE_PTX)?;
    let (xv, pv) = (x.slice(x0..x1), pos.slice(p0..p1));
    let layout: u32 = match g.layout {
        RopeLayout::Halves => 0,
        RopeLayout::Interleaved => 1,
        RopeLayout::Thd => 2,
    };
    let (b, h, t, d) = (g.b as u64, g.h as u64, g.t as u64, g.d as u64);
    let batched = g.batched as u32;
    let mut builder = func.builder();
    builder.arg(&xv);
    builder.arg(&pv);
    builder.arg(&inv);
    builder.arg(&af);
    builder.arg(&mut out);
    builder.arg(&layout);
    builder.arg(&b);
    builder.arg(&h);
    builder.arg(&t);
    builder.arg(&d);
    builder.arg(&batched);
    builder.arg(&sgn);
    let blocks = pairs.div_ceil(BLOCK as usize).clamp(1, 65535 * 64) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the arguments match the kernel's signature (x, pos, inv_freq, af, y, layout, b,
    // h, t, d, batched, sgn); positions hold t (or b*t) values, inv_freq d/2.
    unsafe { builder.launch(cfg) }.w()?;
    Ok(out)
}
