//! The device half of `crate::audio`: launch plans of `kernels/audio/audio.cu`, the same
//! names as the CPU half (`super::cpu`): `frames`, `power`, `log_mel_finish`. Strided
//! operands are gathered first.

use super::{Framing, PadMode};
use crate::launch::{Device, KernelArg, LaunchPlan, Module, Slot, contiguous, grid_stride_blocks};
use candle_core::{DType, Layout, Result, bail};

const BLOCK: u32 = 256;
const MAX_BLOCKS: u64 = 65_535;

fn check_f32<D: Device + ?Sized>(dev: &D, b: &D::Buffer, op: &str) -> Result<()> {
    if dev.dtype(b) != DType::F32 {
        bail!("candle-repro {op}: expected f32, got {:?}", dev.dtype(b))
    }
    Ok(())
}

/// The windowed frames (batch, frames, n_fft) of signals `x` (batch, len).
pub fn frames<D: Device + ?Sized>(
    dev: &D,
    x: (&D::Buffer, &Layout),
    w: (&D::Buffer, &Layout),
    g: &Framing,
) -> Result<D::Buffer> {
    check_f32(dev, x.0, "stft")?;
    check_f32(dev, w.0, "stft")?;
    let n = x.1.shape().elem_count();
    if g.len == 0 || n % g.len != 0 || w.1.shape().elem_count() != g.n_fft {
        bail!("candle-repro stft: the signal or window does not match the framing")
    }
    let batch = n / g.len;
    let count = batch * g.frames * g.n_fft;
    let mut out = dev.alloc(DType::F32, count)?;
    if count == 0 {
        return Ok(out);
    }
    let (mut sx, mut sw) = (None, None);
    let (cx, x0) = contiguous(dev, x.0, x.1, &mut sx)?;
    let (cw, w0) = contiguous(dev, w.0, w.1, &mut sw)?;
    let blocks = grid_stride_blocks(count as u64, BLOCK, MAX_BLOCKS);
    let plan = LaunchPlan::new(
        Module::Audio,
        "repro_audio_frames_f32".into(),
        blocks,
        BLOCK,
    )
    .arg(KernelArg::U64(count as u64))
    .arg(KernelArg::U64(g.len as u64))
    .arg(KernelArg::U64(g.n_fft as u64))
    .arg(KernelArg::U64(g.hop as u64))
    .arg(KernelArg::U64(g.pad as u64))
    .arg(KernelArg::I32(i32::from(g.mode == PadMode::Reflect)))
    .arg(KernelArg::U64(g.frames as u64))
    .buf(0, DType::F32, x0, n)
    .buf(1, DType::F32, w0, g.n_fft)
    .buf(2, DType::F32, 0, count);
    dev.launch(
        &plan,
        &mut [Slot::In(cx), Slot::In(cw), Slot::Out(&mut out)],
    )?;
    Ok(out)
}

/// |z|^2 of complex values (..., 2): a buffer of half the elements.
pub fn power<D: Device + ?Sized>(dev: &D, z: (&D::Buffer, &Layout)) -> Result<D::Buffer> {
    check_f32(dev, z.0, "power_spectrum")?;
    let n = z.1.shape().elem_count();
    if n % 2 != 0 {
        bail!("candle-repro power_spectrum: an odd number of values is not complex pairs")
    }
    let count = n / 2;
    let mut out = dev.alloc(DType::F32, count)?;
    if count == 0 {
        return Ok(out);
    }
    let mut sz = None;
    let (cz, z0) = contiguous(dev, z.0, z.1, &mut sz)?;
    let blocks = grid_stride_blocks(count as u64, BLOCK, MAX_BLOCKS);
    let plan = LaunchPlan::new(Module::Audio, "repro_audio_power_f32".into(), blocks, BLOCK)
        .arg(KernelArg::U64(count as u64))
        .buf(0, DType::F32, z0, n)
        .buf(1, DType::F32, 0, count);
    dev.launch(&plan, &mut [Slot::In(cz), Slot::Out(&mut out)])?;
    Ok(out)
}

/// Whisper's end of the recipe on mel energies (batch, frames, n_mels): (batch, n_mels,
/// frames), one block per example.
pub fn log_mel_finish<D: Device + ?Sized>(
    dev: &D,
    mel: (&D::Buffer, &Layout),
) -> Result<D::Buffer> {
    check_f32(dev, mel.0, "log_mel_spectrogram")?;
    let dims = mel.1.dims();
    if dims.len() < 2 {
        bail!("candle-repro log_mel_spectrogram: expected (..., frames, n_mels)")
    }
    let (frames, n_mels) = (dims[dims.len() - 2], dims[dims.len() - 1]);
    let n = mel.1.shape().elem_count();
    let mut out = dev.alloc(DType::F32, n)?;
    if n == 0 {
        return Ok(out);
    }
    let batch = n / (frames * n_mels);
    if batch > u32::MAX as usize {
        bail!("candle-repro log_mel_spectrogram: {batch} examples exceed one launch")
    }
    let mut sm = None;
    let (cm, m0) = contiguous(dev, mel.0, mel.1, &mut sm)?;
    let plan = LaunchPlan::new(
        Module::Audio,
        "repro_audio_log_mel_finish_f32".into(),
        batch as u32,
        BLOCK,
    )
    .arg(KernelArg::U64(frames as u64))
    .arg(KernelArg::U64(n_mels as u64))
    .buf(0, DType::F32, m0, n)
    .buf(1, DType::F32, 0, n);
    dev.launch(&plan, &mut [Slot::In(cm), Slot::Out(&mut out)])?;
    Ok(out)
}
