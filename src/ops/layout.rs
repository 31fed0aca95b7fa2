//! Reading a tensor's storage in logical (row-major) order, whatever its layout.

use candle_core::Layout;
use std::borrow::Cow;

/// The elements of `data` that `layout` describes, in row-major order: a borrowed slice
/// when the layout is contiguous, a gathered copy otherwise.
pub(crate) fn logical_elements<'a, T: Copy>(data: &'a [T], layout: &Layout) -> Cow<'a, [T]> {
    if let Some((start, end)) = layout.contiguous_offsets() {
        return Cow::Borrowed(&data[start..end]);
    }
    let dims = layout.dims();
    let strides = layout.stride();
    let n = layout.shape().elem_count();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return Cow::Owned(out);
    }
    // Odometer over all dimensions but the last; the last is a strided run.
    let rank = dims.len();
    let (inner, inner_stride) = (dims[rank - 1], strides[rank - 1]);
    let mut index = vec![0usize; rank - 1];
    let mut offset = layout.start_offset();
    loop {
        out.extend((0..inner).map(|i| data[offset + i * inner_stride]));
        // advance the odometer
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return Cow::Owned(out);
            }
            d -= 1;
            index[d] += 1;
            offset += strides[d];
            if index[d] < dims[d] {
                break;
            }
            offset -= strides[d] * dims[d];
            index[d] = 0;
        }
    }
}
