"""PyTorch's figures on the GPU machine, for the comparisons of issue 30 (run on the device).

    python3 tools/gpu/torch_baselines.py FFT_DIR

* device-to-device copy bandwidth (bytes read + written per second);
* cuFFT (torch.fft.fft, complex64): time per batch of 2^23 complex values for n = 2^6..2^12
  and one n = 2^18 row;
* the error of cuFFT and of ours (files written by `gpu_report fftdump FFT_DIR`) against an
  f64 reference (numpy's pocketfft in complex128 on the f32 inputs): max over rows of
  max|y - ref| / max|ref|, and the RMS of |y - ref| / rms|ref|;
* torch.matmul 4096^3 in bf16 (cuBLAS) and in f32 with TF32 off.
Times: CUDA events, best of 10 after 3 warm-ups.
"""

import sys

import numpy as np
import torch


def best_ms(f, reps=10):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        torch.cuda.synchronize()
        best = min(best, a.elapsed_time(b))
    return best


def main():
    fft_dir = sys.argv[1] if len(sys.argv) > 1 else None
    dev = torch.device("cuda")
    p = torch.cuda.get_device_properties(0)
    print(f"torch {torch.__version__}, {p.name}, {p.multi_processor_count} SMs")
    x = torch.randn(1 << 24, device=dev)
    y = torch.empty_like(x)
    ms = best_ms(lambda: y.copy_(x))
    print(f"copy 16M f32 (64 MiB read + 64 MiB written): {ms * 1e3:.1f} us, {2 * x.numel() * 4 / ms / 1e6:.0f} GB/s")
    ms = best_ms(lambda: torch.exp(x))
    print(f"torch.exp 16M f32: {ms * 1e3:.1f} us")

    print()
    print("cuFFT (torch.fft.fft, complex64), 2^23 complex values per batch (one row for n = 2^18)")
    for log_n in [6, 8, 10, 12, 18]:
        n = 1 << log_n
        rows = 1 if log_n == 18 else (1 << 23) // n
        z = torch.randn(rows, n, dtype=torch.complex64, device=dev)
        ms = best_ms(lambda: torch.fft.fft(z))
        print(f"n={n:>7} rows={rows:>6}: {ms * 1e3:9.1f} us ({ms * 1e3 / rows:.3f} us/row), "
              f"{2 * z.numel() * 8 / ms / 1e6:.0f} GB/s")

    if fft_dir:
        print()
        print("error against an f64 reference (same f32 inputs): max rel = max_rows max|y-ref|/max|ref|;"
              " rms rel = rms|y-ref| / rms|ref|")
        for log_n in [6, 8, 10, 12, 18]:
            n = 1 << log_n
            raw = np.fromfile(f"{fft_dir}/fft_{n}_x.bin", dtype="<f4").reshape(-1, n, 2)
            xc = raw[..., 0].astype(np.float64) + 1j * raw[..., 1].astype(np.float64)
            ref = np.fft.fft(xc, axis=-1)
            cu = torch.fft.fft(torch.from_numpy(raw).to(dev).contiguous().view(torch.complex64)
                               .reshape(-1, n)).cpu().numpy().astype(np.complex128)
            rows = {"cuFFT": cu}
            for what in ["f32", "ozaki"]:
                o = np.fromfile(f"{fft_dir}/fft_{n}_{what}.bin", dtype="<f4").reshape(-1, n, 2)
                rows["ours " + what] = o[..., 0].astype(np.float64) + 1j * o[..., 1]
            parts = []
            for name, y in rows.items():
                d = np.abs(y - ref)
                mx = np.max(d.max(axis=1) / np.abs(ref).max(axis=1))
                rms = np.sqrt(np.mean(d ** 2) / np.mean(np.abs(ref) ** 2))
                parts.append(f"{name} {mx:.2e}/{rms:.2e}")
            print(f"n={n:>7} rows={raw.shape[0]:>3}: " + "   ".join(parts))

    print()
    for dt in [torch.bfloat16, torch.float32]:
        torch.backends.cuda.matmul.allow_tf32 = False
        a = torch.randn(4096, 4096, device=dev).to(dt)
        b = torch.randn(4096, 4096, device=dev).to(dt)
        ms = best_ms(lambda: a @ b)
        print(f"torch.matmul 4096^3 {dt}: {ms:.3f} ms, {2 * 4096 ** 3 / ms / 1e9:.0f} TFLOP/s")


if __name__ == "__main__":
    main()
