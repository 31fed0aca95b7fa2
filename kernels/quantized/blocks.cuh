// Mirror of src/quantized/blocks.rs: the GGUF block formats decoded exactly. Each block
// type is a struct with the Rust trait's constants (LEN, BYTES, GROUP, HAS_MIN) and its
// `unpack` (the codes q and each group's a and c, the same bytes, shifts and masks, the same
// f64 expressions in the same order), and the per-element `code(b, e)` (weight e's q) and
// `group_scale(b, g, &a, &c)` (group g's a and c: unpack's expressions) that the decode
// kernel repro_qgemv_* uses (no local arrays); decode_quant forms every weight a q - c in f64 (exact:
// the Rust file's header has the proof), decode_float widens the float types' elements.
// Runs whole inside kernels/quantized/quantized.cu on the emulated device
// (tests/emulated_device.rs, every type against the CPU op).
//
// Type ids: ggml's own `ggml_type` numbers (the tensor type field of a GGUF file), the same
// table as `type_id` in src/quantized/cuda.rs:
//   F32 0, F16 1, Q4_0 2, Q4_1 3, Q5_0 6, Q5_1 7, Q8_0 8, Q8_1 9, Q2_K 10, Q3_K 11, Q4_K 12,
//   Q5_K 13, Q6_K 14, Q8_K 15, BF16 30.
#pragma once

#include "../math/common.cuh"
#include "../math/round.cuh"

#define RQ_TYPE_F32 0u
#define RQ_TYPE_F16 1u
#define RQ_TYPE_Q4_0 2u
#define RQ_TYPE_Q4_1 3u
#define RQ_TYPE_Q5_0 6u
#define RQ_TYPE_Q5_1 7u
#define RQ_TYPE_Q8_0 8u
#define RQ_TYPE_Q8_1 9u
#define RQ_TYPE_Q2K 10u
#define RQ_TYPE_Q3K 11u
#define RQ_TYPE_Q4K 12u
#define RQ_TYPE_Q5K 13u
#define RQ_TYPE_Q6K 14u
#define RQ_TYPE_Q8K 15u
#define RQ_TYPE_BF16 30u

// X-macro over the quantized block types: X(type id, struct).
#define RQ_FOR_EACH_QUANT_BLOCK(X) \
    X(RQ_TYPE_Q4_0, Q4_0)          \
    X(RQ_TYPE_Q4_1, Q4_1)          \
    X(RQ_TYPE_Q5_0, Q5_0)          \
    X(RQ_TYPE_Q5_1, Q5_1)          \
    X(RQ_TYPE_Q8_0, Q8_0)          \
    X(RQ_TYPE_Q8_1, Q8_1)          \
    X(RQ_TYPE_Q2K, Q2K)            \
    X(RQ_TYPE_Q3K, Q3K)            \
    X(RQ_TYPE_Q4K, Q4K)            \
    X(RQ_TYPE_Q5K, Q5K)            \
    X(RQ_TYPE_Q6K, Q6K)            \
    X(RQ_TYPE_Q8K, Q8K)

namespace repro {
namespace quantized {

// f16 bits (little-endian bytes) to their exact value.
RM_FN double f16_at(const uint8_t* b, size_t at) {
    return (double)f16_bits_to_f32((uint16_t)(b[at] | ((uint16_t)b[at + 1] << 8)));
}

// f32 bits (little-endian bytes) to their value.
RM_FN float f32_at(const uint8_t* b, size_t at) {
    return f32_from_bits((uint32_t)b[at] | ((uint32_t)b[at + 1] << 8) |
                         ((uint32_t)b[at + 2] << 16) | ((uint32_t)b[at + 3] << 24));
}

// The sub-block scale and min of Q4_K and Q5_K (6 bits each, packed in 12 bytes).
RM_FN void scale_min_k4(int j, const uint8_t* s, uint8_t* sc, uint8_t* m) {
    if (j < 4) {
        *sc = (uint8_t)(s[j] & 63);
        *m = (uint8_t)(s[j + 4] & 63);
    } else {
        *sc = (uint8_t)((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        *m = (uint8_t)((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
    }
}

// d f16, then 16 bytes of 4-bit codes (low nibbles: weights 0..16, high: 16..32).
struct Q4_0 {
    static constexpr uint32_t LEN = 32, BYTES = 18, GROUP = 32;
    static constexpr bool HAS_MIN = false;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        a[0] = f16_at(b, 0);
        c[0] = 0.0;
        for (int j = 0; j < 16; j++) {
            q[j] = (int8_t)((b[2 + j] & 0xF) - 8);
            q[j + 16] = (int8_t)((b[2 + j] >> 4) - 8);
        }
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) {
        uint8_t v = b[2 + e % 16];
        return (int32_t)(e < 16 ? (v & 0xF) : (v >> 4)) - 8;
    }
    RM_FN static void group_scale(const uint8_t* b, uint32_t, double* a, double* c) {
        *a = f16_at(b, 0);
        *c = 0.0;
    }
};

// d, m f16, then 16 bytes of 4-bit codes; w = d q + m.
struct Q4_1 {
    static constexpr uint32_t LEN = 32, BYTES = 20, GROUP = 32;
    static constexpr bool HAS_MIN = true;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        a[0] = f16_at(b, 0);
        c[0] = -f16_at(b, 2);
        for (int j = 0; j < 16; j++) {
            q[j] = (int8_t)(b[4 + j] & 0xF);
            q[j + 16] = (int8_t)(b[4 + j] >> 4);
        }
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) {
        uint8_t v = b[4 + e % 16];
        return (int32_t)(e < 16 ? (v & 0xF) : (v >> 4));
    }
    RM_FN static void group_scale(const uint8_t* b, uint32_t, double* a, double* c) {
        *a = f16_at(b, 0);
        *c = -f16_at(b, 2);
    }
};

// d f16, 4 bytes of fifth bits (bit j: weight j), 16 bytes of 4-bit codes.
struct Q5_0 {
    static constexpr uint32_t LEN = 32, BYTES = 22, GROUP = 32;
    static constexpr bool HAS_MIN = false;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        a[0] = f16_at(b, 0);
        c[0] = 0.0;
        uint32_t qh = (uint32_t)b[2] | ((uint32_t)b[3] << 8) | ((uint32_t)b[4] << 16) |
                      ((uint32_t)b[5] << 24);
        for (int j = 0; j < 16; j++) {
            uint8_t h0 = (uint8_t)((qh >> j) & 1);
            uint8_t h1 = (uint8_t)((qh >> (j + 16)) & 1);
            q[j] = (int8_t)(((b[6 + j] & 0xF) | (h0 << 4)) - 16);
            q[j + 16] = (int8_t)(((b[6 + j] >> 4) | (h1 << 4)) - 16);
        }
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) {
        uint32_t qh = (uint32_t)b[2] | ((uint32_t)b[3] << 8) | ((uint32_t)b[4] << 16) |
                      ((uint32_t)b[5] << 24);
        uint8_t v = b[6 + e % 16];
        uint32_t lo = e < 16 ? (v & 0xF) : (v >> 4);
        return (int32_t)(lo | (((qh >> e) & 1) << 4)) - 16;
    }
    RM_FN static void group_scale(const uint8_t* b, uint32_t, double* a, double* c) {
        *a = f16_at(b, 0);
        *c = 0.0;
    }
};

// d, m f16, 4 bytes of fifth bits, 16 bytes of 4-bit codes; w = d q + m.
struct Q5_1 {
    static constexpr uint32_t LEN = 32, BYTES = 24, GROUP = 32;
    static constexpr bool HAS_MIN = true;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        a[0] = f16_at(b, 0);
        c[0] = -f16_at(b, 2);
        uint32_t qh = (uint32_t)b[4] | ((uint32_t)b[5] << 8) | ((uint32_t)b[6] << 16) |
                      ((uint32_t)b[7] << 24);
        for (int j = 0; j < 16; j++) {
            uint8_t h0 = (uint8_t)((qh >> j) & 1);
            uint8_t h1 = (uint8_t)((qh >> (j + 16)) & 1);
            q[j] = (int8_t)((b[8 + j] & 0xF) | (h0 << 4));
            q[j + 16] = (int8_t)((b[8 + j] >> 4) | (h1 << 4));
        }
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) {
        uint32_t qh = (uint32_t)b[4] | ((uint32_t)b[5] << 8) | ((uint32_t)b[6] << 16) |
                      ((uint32_t)b[7] << 24);
        uint8_t v = b[8 + e % 16];
        uint32_t lo = e < 16 ? (v & 0xF) : (v >> 4);
        return (int32_t)(lo | (((qh >> e) & 1) << 4));
    }
    RM_FN static void group_scale(const uint8_t* b, uint32_t, double* a, double* c) {
        *a = f16_at(b, 0);
        *c = -f16_at(b, 2);
    }
};

// d f16, 32 i8 codes.
struct Q8_0 {
    static constexpr uint32_t LEN = 32, BYTES = 34, GROUP = 32;
    static constexpr bool HAS_MIN = false;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        a[0] = f16_at(b, 0);
        c[0] = 0.0;
        for (int j = 0; j < 32; j++) q[j] = (int8_t)b[2 + j];
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) { return (int32_t)(int8_t)b[2 + e]; }
    RM_FN static void group_scale(const uint8_t* b, uint32_t, double* a, double* c) {
        *a = f16_at(b, 0);
        *c = 0.0;
    }
};

// d f16, s f16 (d times the codes' sum: not part of the value), 32 i8 codes.
struct Q8_1 {
    static constexpr uint32_t LEN = 32, BYTES = 36, GROUP = 32;
    static constexpr bool HAS_MIN = false;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        a[0] = f16_at(b, 0);
        c[0] = 0.0;
        for (int j = 0; j < 32; j++) q[j] = (int8_t)b[4 + j];
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) { return (int32_t)(int8_t)b[4 + e]; }
    RM_FN static void group_scale(const uint8_t* b, uint32_t, double* a, double* c) {
        *a = f16_at(b, 0);
        *c = 0.0;
    }
};

// 16 bytes of 4-bit scale (low) and min (high) per group of 16, 64 bytes of 2-bit codes,
// d, dmin f16. Weight 128 h + 32 s + l is bits 2s of code byte 32 h + l.
struct Q2K {
    static constexpr uint32_t LEN = 256, BYTES = 84, GROUP = 16;
    static constexpr bool HAS_MIN = true;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        double d = f16_at(b, 80);
        double dmin = f16_at(b, 82);
        for (int g = 0; g < 16; g++) {
            a[g] = d * (double)(b[g] & 0xF);
            c[g] = dmin * (double)(b[g] >> 4);
        }
        for (int h = 0; h < 2; h++)
            for (int s = 0; s < 4; s++)
                for (int l = 0; l < 32; l++)
                    q[128 * h + 32 * s + l] = (int8_t)((b[16 + 32 * h + l] >> (2 * s)) & 3);
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) {
        uint32_t h = e / 128, s = e % 128 / 32, l = e % 32;
        return (int32_t)((b[16 + 32 * h + l] >> (2 * s)) & 3);
    }
    RM_FN static void group_scale(const uint8_t* b, uint32_t g, double* a, double* c) {
        *a = f16_at(b, 80) * (double)(b[g] & 0xF);
        *c = f16_at(b, 82) * (double)(b[g] >> 4);
    }
};

// 32 bytes of high bits (hmask), 64 bytes of 2-bit codes, 12 bytes of 6-bit scales, d f16.
// Weight 128 h + 32 s + l: low bits 2s of code byte 32 h + l, high bit 4 h + s of hmask
// byte l (clear: subtract 4), group 8 h + 2 s + l / 16, a = d (sc - 32).
struct Q3K {
    static constexpr uint32_t LEN = 256, BYTES = 110, GROUP = 16;
    static constexpr bool HAS_MIN = false;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        double d = f16_at(b, 108);
        const uint8_t* s = b + 96;
        for (int g = 0; g < 16; g++) {
            uint8_t low = (uint8_t)(g < 8 ? (s[g] & 0xF) : (s[g - 8] >> 4));
            uint8_t high = (uint8_t)((s[8 + g % 4] >> (2 * (g / 4))) & 3);
            int32_t sc = (int32_t)(uint8_t)(low | (high << 4)) - 32;
            a[g] = d * (double)sc;
            c[g] = 0.0;
        }
        for (int h = 0; h < 2; h++)
            for (int sh = 0; sh < 4; sh++)
                for (int l = 0; l < 32; l++) {
                    uint8_t low = (uint8_t)((b[32 + 32 * h + l] >> (2 * sh)) & 3);
                    uint8_t high = (uint8_t)((b[l] >> (4 * h + sh)) & 1);
                    q[128 * h + 32 * sh + l] = (int8_t)((int8_t)low - (high == 0 ? 4 : 0));
                }
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) {
        uint32_t h = e / 128, s = e % 128 / 32, l = e % 32;
        uint32_t low = (b[32 + 32 * h + l] >> (2 * s)) & 3;
        uint32_t high = (b[l] >> (4 * h + s)) & 1;
        return (int32_t)low - (high == 0 ? 4 : 0);
    }
    RM_FN static void group_scale(const uint8_t* b, uint32_t g, double* a, double* c) {
        const uint8_t* s = b + 96;
        uint8_t low = (uint8_t)(g < 8 ? (s[g] & 0xF) : (s[g - 8] >> 4));
        uint8_t high = (uint8_t)((s[8 + g % 4] >> (2 * (g / 4))) & 3);
        int32_t sc = (int32_t)(uint8_t)(low | (high << 4)) - 32;
        *a = f16_at(b, 108) * (double)sc;
        *c = 0.0;
    }
};

// d, dmin f16, 12 bytes of 6-bit scales and mins, 128 bytes of 4-bit codes. Weight
// 64 j + l (l < 32) is the low nibble of code byte 32 j + l, weight 64 j + 32 + l its high
// nibble; groups 2 j and 2 j + 1.
struct Q4K {
    static constexpr uint32_t LEN = 256, BYTES = 144, GROUP = 32;
    static constexpr bool HAS_MIN = true;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        double d = f16_at(b, 0);
        double dmin = f16_at(b, 2);
        for (int g = 0; g < 8; g++) {
            uint8_t sc, m;
            scale_min_k4(g, b + 4, &sc, &m);
            a[g] = d * (double)sc;
            c[g] = dmin * (double)m;
        }
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 32; l++) {
                uint8_t v = b[16 + 32 * j + l];
                q[64 * j + l] = (int8_t)(v & 0xF);
                q[64 * j + 32 + l] = (int8_t)(v >> 4);
            }
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) {
        uint32_t j = e / 64, u = e % 64 / 32, l = e % 32;
        uint8_t v = b[16 + 32 * j + l];
        return (int32_t)(u == 0 ? (v & 0xF) : (v >> 4));
    }
    RM_FN static void group_scale(const uint8_t* b, uint32_t g, double* a, double* c) {
        uint8_t sc, m;
        scale_min_k4((int)g, b + 4, &sc, &m);
        *a = f16_at(b, 0) * (double)sc;
        *c = f16_at(b, 2) * (double)m;
    }
};

// d, dmin f16, 12 bytes of scales and mins, 32 bytes of fifth bits (bit 2 j of byte l:
// weight 64 j + l; bit 2 j + 1: weight 64 j + 32 + l), 128 bytes of 4-bit codes laid out
// as in Q4_K.
struct Q5K {
    static constexpr uint32_t LEN = 256, BYTES = 176, GROUP = 32;
    static constexpr bool HAS_MIN = true;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        double d = f16_at(b, 0);
        double dmin = f16_at(b, 2);
        for (int g = 0; g < 8; g++) {
            uint8_t sc, m;
            scale_min_k4(g, b + 4, &sc, &m);
            a[g] = d * (double)sc;
            c[g] = dmin * (double)m;
        }
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 32; l++) {
                uint8_t v = b[48 + 32 * j + l];
                uint8_t h = (uint8_t)(b[16 + l] >> (2 * j));
                q[64 * j + l] = (int8_t)((v & 0xF) | ((h & 1) << 4));
                q[64 * j + 32 + l] = (int8_t)((v >> 4) | ((h & 2) << 3));
            }
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) {
        uint32_t j = e / 64, u = e % 64 / 32, l = e % 32;
        uint8_t v = b[48 + 32 * j + l];
        uint8_t h = (uint8_t)(b[16 + l] >> (2 * j));
        return (int32_t)(u == 0 ? ((v & 0xF) | ((h & 1) << 4)) : ((v >> 4) | ((h & 2) << 3)));
    }
    RM_FN static void group_scale(const uint8_t* b, uint32_t g, double* a, double* c) {
        uint8_t sc, m;
        scale_min_k4((int)g, b + 4, &sc, &m);
        *a = f16_at(b, 0) * (double)sc;
        *c = f16_at(b, 2) * (double)m;
    }
};

// 128 bytes of low 4 bits (ql), 64 bytes of high 2 bits (qh), 16 i8 scales, d f16. In half
// h, weights 128 h + l, + 32, + 64, + 96 (l < 32) take the low nibble of ql[64 h + l], of
// ql[64 h + 32 + l], the high nibble of each, and bit pairs 0, 2, 4, 6 of qh[32 h + l].
struct Q6K {
    static constexpr uint32_t LEN = 256, BYTES = 210, GROUP = 16;
    static constexpr bool HAS_MIN = false;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        double d = f16_at(b, 208);
        for (int g = 0; g < 16; g++) {
            a[g] = d * (double)(int8_t)b[192 + g];
            c[g] = 0.0;
        }
        for (int h = 0; h < 2; h++) {
            const uint8_t* ql = b + 64 * h;
            const uint8_t* qh = b + 128 + 32 * h;
            for (int l = 0; l < 32; l++) {
                int o = 128 * h + l;
                q[o] = (int8_t)(((ql[l] & 0xF) | ((qh[l] & 3) << 4)) - 32);
                q[o + 32] = (int8_t)(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
                q[o + 64] = (int8_t)(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
                q[o + 96] = (int8_t)(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
            }
        }
    }
    // e = 128 h + 32 t + l: ql byte 64 h + l (+ 32 for odd t), its low nibble for t < 2,
    // bit pair t of qh byte 32 h + l.
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) {
        uint32_t h = e / 128, t = e % 128 / 32, l = e % 32;
        uint32_t v = (uint32_t)b[64 * h + l + 32 * (t & 1)] >> (4 * (t >> 1));
        uint32_t hi = ((uint32_t)b[128 + 32 * h + l] >> (2 * t)) & 3;
        return (int32_t)((v & 0xF) | (hi << 4)) - 32;
    }
    RM_FN static void group_scale(const uint8_t* b, uint32_t g, double* a, double* c) {
        *a = f16_at(b, 208) * (double)(int8_t)b[192 + g];
        *c = 0.0;
    }
};

// d f32, 256 i8 codes, 16 i16 sums of codes (not part of the value).
struct Q8K {
    static constexpr uint32_t LEN = 256, BYTES = 292, GROUP = 256;
    static constexpr bool HAS_MIN = false;
    RM_FN static void unpack(const uint8_t* b, int8_t* q, double* a, double* c) {
        a[0] = (double)f32_at(b, 0);
        c[0] = 0.0;
        for (int j = 0; j < 256; j++) q[j] = (int8_t)b[4 + j];
    }
    RM_FN static int32_t code(const uint8_t* b, uint32_t e) { return (int32_t)(int8_t)b[4 + e]; }
    RM_FN static void group_scale(const uint8_t* b, uint32_t, double* a, double* c) {
        *a = (double)f32_at(b, 0);
        *c = 0.0;
    }
};

// The exact weights of one block into `out` (LEN values): a q - c per weight.
template <class B>
RM_FN void decode_quant(const uint8_t* b, double* out) {
    int8_t q[256];
    double a[16];
    double c[16];
    B::unpack(b, q, a, c);
    for (uint32_t g = 0; g < B::LEN / B::GROUP; g++) {
        double ag = a[g], cg = c[g];
        for (uint32_t l = 0; l < B::GROUP; l++) {
            // Both steps exact (blocks.rs's header): the reference expression's value.
            out[g * B::GROUP + l] = ag * (double)q[g * B::GROUP + l] - cg;
        }
    }
}

// Whether `ty` is one of the float weight types (F32, F16, BF16: one weight per element).
RM_FN bool is_float_type(uint32_t ty) {
    return ty == RQ_TYPE_F32 || ty == RQ_TYPE_F16 || ty == RQ_TYPE_BF16;
}

// The exact value of element e of a float weight type's bytes `b` (decode_float).
RM_FN double decode_float(uint32_t ty, const uint8_t* b, size_t e) {
    if (ty == RQ_TYPE_F32) {
        return (double)f32_at(b, 4 * e);
    } else if (ty == RQ_TYPE_F16) {
        return f16_at(b, 2 * e);
    } else {
        uint16_t h = (uint16_t)(b[2 * e] | ((uint16_t)b[2 * e + 1] << 8));
        return (double)f32_from_bits(((uint32_t)h) << 16);
    }
}

// (weights per block, bytes per block) of every type (geometry); (0, 0) for an unknown id.
RM_FN void geometry(uint32_t ty, uint32_t* len, uint32_t* bytes) {
    switch (ty) {
        case RQ_TYPE_F32:
            *len = 1;
            *bytes = 4;
            return;
        case RQ_TYPE_F16:
        case RQ_TYPE_BF16:
            *len = 1;
            *bytes = 2;
            return;
#define RQ_GEOMETRY_CASE(id, B) \
    case id:                    \
        *len = B::LEN;          \
        *bytes = B::BYTES;      \
        return;
            RQ_FOR_EACH_QUANT_BLOCK(RQ_GEOMETRY_CASE)
#undef RQ_GEOMETRY_CASE
        default:
            *len = 0;
            *bytes = 0;
    }
}

// The exact values of the quantized block `b` of type `ty` into `out` (LEN values):
// decode_quant through the type id.
RM_FN void decode_quant_id(uint32_t ty, const uint8_t* b, double* out) {
    switch (ty) {
#define RQ_DECODE_CASE(id, B)   \
    case id:                    \
        decode_quant<B>(b, out); \
        return;
        RQ_FOR_EACH_QUANT_BLOCK(RQ_DECODE_CASE)
#undef RQ_DECODE_CASE
        default:
            return;
    }
}

}  // namespace quantized
}  // namespace repro
