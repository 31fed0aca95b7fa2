//! Contiguous copies of strided device tensors with 64-bit indices (`kernels/launch/gather.cu`):
//! candle's own strided copy computes offsets in 32 bits, wrong beyond 2^32 elements. Every
//! family's device half gathers its strided inputs with [`contiguous`].

use super::{Device, KernelArg, LaunchPlan, Module, Slot, grid_stride_blocks};
use candle_core::{Layout, Result, bail};

const BLOCK: u32 = 256;
const MAX_BLOCKS: u64 = 65_535;

/// The launch plan of a gather of the elements `layout` describes, from slot 0 (the source,
/// `src_len` elements of `dtype`) into slot 2 (contiguous, `count` elements), with the dims
/// then strides in slot 1.
pub fn plan_gather(
    dtype: candle_core::DType,
    src_len: usize,
    layout: &Layout,
) -> Result<LaunchPlan> {
    let kernel = match dtype.size_in_bytes() {
        1 => "repro_gather_u8",
        2 => "repro_gather_u16",
        4 => "repro_gather_u32",
        8 => "repro_gather_u64",
        _ => bail!("candle-repro gather: unsupported dtype {dtype:?}"),
    };
    let count = layout.shape().elem_count() as u64;
    let rank = layout.dims().len();
    let base = layout.start_offset();
    Ok(LaunchPlan::new(
        Module::Gather,
        kernel.to_string(),
        grid_stride_blocks(count, BLOCK, MAX_BLOCKS),
        BLOCK,
    )
    .arg(KernelArg::U64(count))
    .buf(0, dtype, 0, src_len)
    .arg(KernelArg::U64(base as u64))
    .arg(KernelArg::U32(rank as u32))
    .buf(1, candle_core::DType::I64, 0, 2 * rank)
    .buf(2, dtype, 0, count as usize))
}

/// A contiguous copy of the elements `layout` describes in `src` (any dtype, any rank).
pub fn gather<D: Device + ?Sized>(dev: &D, src: &D::Buffer, layout: &Layout) -> Result<D::Buffer> {
    let dtype = dev.dtype(src);
    let count = layout.shape().elem_count();
    let mut out = dev.alloc(dtype, count)?;
    if count == 0 {
        return Ok(out);
    }
    let mut ds: Vec<u64> = layout.dims().iter().map(|&d| d as u64).collect();
    ds.extend(layout.stride().iter().map(|&s| s as u64));
    let ds = dev.upload_u64(&ds)?;
    let plan = plan_gather(dtype, dev.len(src), layout)?;
    dev.launch(
        &plan,
        &mut [Slot::In(src), Slot::In(&ds), Slot::Out(&mut out)],
    )?;
    Ok(out)
}

/// `src` with its contiguous start offset, or a gathered copy starting at 0 (kept in
/// `slot`).
pub fn contiguous<'a, D: Device + ?Sized>(
    dev: &D,
    src: &'a D::Buffer,
    layout: &Layout,
    slot: &'a mut Option<D::Buffer>,
) -> Result<(&'a D::Buffer, usize)> {
    match layout.contiguous_offsets() {
        Some((start, _)) => Ok((src, start)),
        None => Ok((slot.insert(gather(dev, src, layout)?), 0)),
    }
}
