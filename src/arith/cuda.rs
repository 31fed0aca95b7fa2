//! The device half of `crate::arith`: the correctly rounded elementwise sum
//! (`kernels/arith/arith.cu`; strided operands gathered first, with 64-bit indices).

use crate::launch::{
    Device, KernelArg, LaunchPlan, Module, Slot, contiguous, float_suffix, grid_stride_blocks,
};
use candle_core::{Layout, Result, bail};

const BLOCK: u32 = 256;
const MAX_BLOCKS: u64 = 65_535;

/// a + b (same shape and dtype): a new contiguous buffer.
pub fn add<D: Device + ?Sized>(
    dev: &D,
    a: (&D::Buffer, &Layout),
    b: (&D::Buffer, &Layout),
) -> Result<D::Buffer> {
    let dtype = dev.dtype(a.0);
    if dev.dtype(b.0) != dtype || a.1.dims() != b.1.dims() {
        bail!("candle-repro add: operands differ in dtype or shape")
    }
    let suffix = float_suffix(dtype, "add")?;
    let count = a.1.shape().elem_count();
    let mut out = dev.alloc(dtype, count)?;
    if count == 0 {
        return Ok(out);
    }
    let (mut sa, mut sb) = (None, None);
    let (ca, a0) = contiguous(dev, a.0, a.1, &mut sa)?;
    let (cb, b0) = contiguous(dev, b.0, b.1, &mut sb)?;
    let blocks = grid_stride_blocks(count as u64, BLOCK, MAX_BLOCKS);
    let plan = LaunchPlan::new(Module::Arith, format!("repro_add_{suffix}"), blocks, BLOCK)
        .arg(KernelArg::U64(count as u64))
        .buf(0, dtype, a0, count)
        .buf(1, dtype, b0, count)
        .buf(2, dtype, 0, count);
    dev.launch(
        &plan,
        &mut [Slot::In(ca), Slot::In(cb), Slot::Out(&mut out)],
    )?;
    Ok(out)
}
