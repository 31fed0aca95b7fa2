// The audio front end's kernels (src/audio/mod.rs defines them; src/audio/cuda.rs
// launches them), each element by the steps of audio/audio.cuh, the mirror of
// src/audio/cpu.rs:
//   repro_audio_frames_f32(count, len, n_fft, hop, pad, reflect, frames, x, w, out):
//       out[b, t, j] = x[b, source(t hop + j - pad)] * w[j] (0 * w[j] for a zero), count =
//       batch * frames * n_fft, grid-stride;
//   repro_audio_power_f32(count, z, out): out[e] = power_one(z[2e], z[2e + 1]);
//   repro_audio_log_mel_finish_f32(frames, n_mels, mel, out): one block per example
//       (REPRO_AUDIO_BLOCK threads): the logarithms written transposed, their maximum
//       (exact in any order: a shared-memory tree), then the final map in place.
#include "audio/audio.cuh"

#define REPRO_AUDIO_BLOCK 256

using namespace repro;
using namespace repro::audio;

extern "C" __global__ void __launch_bounds__(REPRO_AUDIO_BLOCK) repro_audio_frames_f32(
    uint64_t count, uint64_t len, uint64_t n_fft, uint64_t hop, uint64_t pad, int32_t reflect,
    uint64_t frames, const float* x, const float* w, float* out) {
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t j = e % n_fft;
        uint64_t r = e / n_fft;
        uint64_t t = r % frames;
        uint64_t b = r / frames;
        int64_t i = (int64_t)(t * hop + j) - (int64_t)pad;
        int64_t s = source(i, (int64_t)len, reflect);
        float v = s >= 0 ? x[b * len + (uint64_t)s] * w[j] : 0.0f * w[j];
        out[e] = canonical(v);
    }
}

extern "C" __global__ void __launch_bounds__(REPRO_AUDIO_BLOCK)
    repro_audio_power_f32(uint64_t count, const float* z, float* out) {
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (uint64_t)gridDim.x * blockDim.x) {
        out[e] = power_one(z[2 * e], z[2 * e + 1]);
    }
}

extern "C" __global__ void __launch_bounds__(REPRO_AUDIO_BLOCK)
    repro_audio_log_mel_finish_f32(uint64_t frames, uint64_t n_mels, const float* mel,
                                   float* out) {
    REPRO_SHARED(float, s_top, [REPRO_AUDIO_BLOCK]);
    const uint32_t T = blockDim.x;
    const uint32_t tid = threadIdx.x;
    const uint64_t item = frames * n_mels;
    const float* src = mel + (uint64_t)blockIdx.x * item;
    float* dst = out + (uint64_t)blockIdx.x * item;
    // 1. The logarithms, transposed: output e = (mel i, frame t).
    float top = f32_from_bits(0xFF800000u);
    for (uint64_t e = tid; e < item; e += T) {
        uint64_t i = e / frames, t = e % frames;
        float v = log10_floor(src[t * n_mels + i]);
        dst[e] = v;
        top = max_nan(top, v);
    }
    s_top[tid] = top;
    __syncthreads();
    for (uint32_t k = T / 2; k > 0; k /= 2) {
        if (tid < k) s_top[tid] = max_nan(s_top[tid], s_top[tid + k]);
        __syncthreads();
    }
    const float low = s_top[0] - 8.0f;
    // 2. The final map, each thread over the elements it wrote.
    for (uint64_t e = tid; e < item; e += T) {
        dst[e] = finish_one(dst[e], low);
    }
}
