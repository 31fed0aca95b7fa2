//! The GGUF block formats: what each block's bytes mean, decoded exactly.
//!
//! Every quantized type stores blocks of `LEN` weights in `BYTES` bytes. Within a block the
//! weights fall into groups of `GROUP` that share a scale a and an offset c, and weight l
//! of group g is
//!
//! ```text
//!     w = a_g * q_l - c_g
//! ```
//!
//! with q_l a small integer code (it fits an i8 in every type) and a_g, c_g products of
//! the block's f16 (Q8_K: f32) scales with small integers. The table (d, dmin the block's
//! scales; sc, m its sub-block scales; q the code as stored):
//!
//! | type | LEN | GROUP | a | q | c |
//! |---|---|---|---|---|---|
//! | Q4_0 | 32 | 32 | d | q - 8 | 0 |
//! | Q4_1 | 32 | 32 | d | q | -m |
//! | Q5_0 | 32 | 32 | d | q - 16 | 0 |
//! | Q5_1 | 32 | 32 | d | q | -m |
//! | Q8_0, Q8_1 | 32 | 32 | d | q (i8) | 0 |
//! | Q2_K | 256 | 16 | d sc | q (2 bits) | dmin m |
//! | Q3_K | 256 | 16 | d (sc - 32) | q - 4 (3 bits; the high bit from hmask) | 0 |
//! | Q4_K | 256 | 32 | d sc | q (4 bits) | dmin m |
//! | Q5_K | 256 | 32 | d sc | q (5 bits) | dmin m |
//! | Q6_K | 256 | 16 | d sc (sc an i8) | q - 32 (6 bits) | 0 |
//! | Q8_K | 256 | 256 | d (f32) | q (i8) | 0 |
//!
//! This is the reference dequantization of ggml (`dequantize_row_*` in llama.cpp's
//! `ggml-quants.c`; the byte layouts of `ggml-common.h`) with each product and difference
//! taken exactly, in the reference's own order of operations: ((d sc) q) - (dmin m), and
//! so on. A weight's value therefore is a real number, and its signed zeros, infinities
//! and NaN are those IEEE arithmetic gives that expression (an inf or NaN scale: inf * 0
//! is NaN, a NaN scale makes its weights NaN).
//!
//! # Every weight is exact in f64
//! Finite f16 values are multiples of 2^-24 below 2^16. a is d times an integer of at
//! most 8 significant bits (below 2^24 and a multiple of 2^-24), a q adds at most 8 bits
//! and c at most 6: a q - c is a multiple of 2^-24 below 2^30, i.e. an integer below 2^54
//! times 2^-24, exact in f64's 53 bits (the sum is below 2^29 in every type, so 2^53
//! units suffice). Q8_K's f32 d (24 bits) times an i8 has at most 32 bits. So the f64
//! evaluation of the reference expression is exact, and every weight is also a multiple
//! of 2^-149 below 2^137, which `ExactDot::add_product_wide` needs.
//!
//! ggml's own dequantization evaluates the same expression in f32, which rounds where the
//! value needs more than 24 bits: d q + m (Q4_1, Q5_1), (d sc) q - dmin m (Q2_K, Q4_K,
//! Q5_K) and d q for an f32 d (Q8_K); the other types are exact in f32. candle's f32
//! dequantization is that rounding of our exact value (tests/quantized.rs checks it).

use candle_core::quantized::GgmlDType;
use candle_core::{Result, bail};

/// f16 bits (little-endian bytes) to their exact value.
#[inline(always)]
pub(crate) fn f16_at(b: &[u8], at: usize) -> f64 {
    crate::math::round::f16_bits_to_f32(u16::from_le_bytes([b[at], b[at + 1]])) as f64
}

/// A block format of quantized codes (every GGUF type but F32, F16 and BF16).
pub(crate) trait QuantBlock: 'static {
    /// Weights per block.
    const LEN: usize;
    /// Bytes per block.
    const BYTES: usize;
    /// Weights per group (one scale a and offset c).
    const GROUP: usize;
    /// Whether c can be nonzero.
    const HAS_MIN: bool;
    /// The codes (q[..LEN]) and each group's a and c (a[..LEN / GROUP], likewise c) of the
    /// block `b` (BYTES bytes).
    fn unpack(b: &[u8], q: &mut [i8], a: &mut [f64], c: &mut [f64]);
    /// Weight e's code q (e < LEN) of the block `b`: `unpack`'s q[e], read alone. (The
    /// host side of a mirror: only the CUDA decode kernel decodes per element; here the
    /// unit test checks these against `unpack`, which the CPU paths use.)
    #[cfg_attr(not(test), allow(dead_code))]
    fn code(b: &[u8], e: usize) -> i32;
    /// Group g's a and c (g < LEN / GROUP) of the block `b`: `unpack`'s a[g] and c[g], the
    /// same expressions. With [`QuantBlock::code`] weight e is a q - c with g = e / GROUP:
    /// the per-element decoding that the CUDA decode kernel (`repro_qgemv_*` of
    /// `kernels/quantized/quantized.cu`) runs through their mirrors in `blocks.cuh`.
    #[cfg_attr(not(test), allow(dead_code))]
    fn group_scale(b: &[u8], g: usize) -> (f64, f64);
}

/// The exact weights of one block into `out` (LEN values): a q - c per weight.
#[inline(always)]
pub(crate) fn decode_quant<B: QuantBlock>(b: &[u8], out: &mut [f64]) {
    let mut q = [0i8; 256];
    let mut a = [0f64; 16];
    let mut c = [0f64; 16];
    B::unpack(b, &mut q[..B::LEN], &mut a, &mut c);
    let out = &mut out[..B::LEN];
    for (g, (ws, qs)) in out
        .chunks_exact_mut(B::GROUP)
        .zip(q[..B::LEN].chunks_exact(B::GROUP))
        .enumerate()
    {
        let (ag, cg) = (a[g], c[g]);
        for (w, &q) in ws.iter_mut().zip(qs) {
            // Both steps exact (module header): the reference expression's value.
            *w = ag * q as f64 - cg;
        }
    }
}

/// The sub-block scale and min of Q4_K and Q5_K (6 bits each, packed in 12 bytes).
#[inline(always)]
pub(crate) fn scale_min_k4(j: usize, s: &[u8]) -> (u8, u8) {
    if j < 4 {
        (s[j] & 63, s[j + 4] & 63)
    } else {
        (
            (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4),
            (s[j + 4] >> 4) | ((s[j] >> 6) << 4),
        )
    }
}

macro_rules! quant_block {
    ($(#[$m:meta])* $name:ident, len $len:expr, bytes $bytes:expr, group $group:expr,
     min $min:expr, |$b:ident, $q:ident, $a:ident, $c:ident| $body:block,
     code |$cb:ident, $ce:ident| $code:block,
     scale |$sb:ident, $sg:ident| $scale:block) => {
        $(#[$m])*
        pub(crate) struct $name;
        impl QuantBlock for $name {
            const LEN: usize = $len;
            const BYTES: usize = $bytes;
            const GROUP: usize = $group;
            const HAS_MIN: bool = $min;
            #[inline(always)]
            fn unpack($b: &[u8], $q: &mut [i8], $a: &mut [f64], $c: &mut [f64]) {
                let $b = &$b[..$bytes];
                let $q = &mut $q[..$len];
                $body
            }
            #[inline(always)]
            fn code($cb: &[u8], $ce: usize) -> i32 {
                let $cb = &$cb[..$bytes];
                $code
            }
            #[inline(always)]
            fn group_scale($sb: &[u8], $sg: usize) -> (f64, f64) {
                let $sb = &$sb[..$bytes];
                $scale
            }
        }
    };
}

quant_block!(
    /// d f16, then 16 bytes of 4-bit codes (low nibbles: weights 0..16, high: 16..32).
    Q4_0, len 32, bytes 18, group 32, min false, |b, q, a, c| {
        a[0] = f16_at(b, 0);
        c[0] = 0.0;
        for j in 0..16 {
            q[j] = (b[2 + j] & 0xF) as i8 - 8;
            q[j + 16] = (b[2 + j] >> 4) as i8 - 8;
        }
    },
    code |b, e| {
        let v = b[2 + e % 16];
        (if e < 16 { v & 0xF } else { v >> 4 }) as i32 - 8
    },
    scale |b, _g| { (f16_at(b, 0), 0.0) }
);

quant_block!(
    /// d, m f16, then 16 bytes of 4-bit codes; w = d q + m.
    Q4_1, len 32, bytes 20, group 32, min true, |b, q, a, c| {
        a[0] = f16_at(b, 0);
        c[0] = -f16_at(b, 2);
        for j in 0..16 {
            q[j] = (b[4 + j] & 0xF) as i8;
            q[j + 16] = (b[4 + j] >> 4) as i8;
        }
    },
    code |b, e| {
        let v = b[4 + e % 16];
        (if e < 16 { v & 0xF } else { v >> 4 }) as i32
    },
    scale |b, _g| { (f16_at(b, 0), -f16_at(b, 2)) }
);

quant_block!(
    /// d f16, 4 bytes of fifth bits (bit j: weight j), 16 bytes of 4-bit codes.
    Q5_0, len 32, bytes 22, group 32, min false, |b, q, a, c| {
        a[0] = f16_at(b, 0);
        c[0] = 0.0;
        let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
        for j in 0..16 {
            let h0 = ((qh >> j) & 1) as u8;
            let h1 = ((qh >> (j + 16)) & 1) as u8;
            q[j] = ((b[6 + j] & 0xF) | (h0 << 4)) as i8 - 16;
            q[j + 16] = ((b[6 + j] >> 4) | (h1 << 4)) as i8 - 16;
        }
    },
    code |b, e| {
        let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
        let v = b[6 + e % 16];
        let lo = if e < 16 { v & 0xF } else { v >> 4 };
        (lo | ((((qh >> e) & 1) as u8) << 4)) as i32 - 16
    },
    scale |b, _g| { (f16_at(b, 0), 0.0) }
);

quant_block!(
    /// d, m f16, 4 bytes of fifth bits, 16 bytes of 4-bit codes; w = d q + m.
    Q5_1, len 32, bytes 24, group 32, min true, |b, q, a, c| {
        a[0] = f16_at(b, 0);
        c[0] = -f16_at(b, 2);
        let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        for j in 0..16 {
            let h0 = ((qh >> j) & 1) as u8;
            let h1 = ((qh >> (j + 16)) & 1) as u8;
            q[j] = ((b[8 + j] & 0xF) | (h0 << 4)) as i8;
            q[j + 16] = ((b[8 + j] >> 4) | (h1 << 4)) as i8;
        }
    },
    code |b, e| {
        let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        let v = b[8 + e % 16];
        let lo = if e < 16 { v & 0xF } else { v >> 4 };
        (lo | ((((qh >> e) & 1) as u8) << 4)) as i32
    },
    scale |b, _g| { (f16_at(b, 0), -f16_at(b, 2)) }
);

quant_block!(
    /// d f16, 32 i8 codes.
    Q8_0, len 32, bytes 34, group 32, min false, |b, q, a, c| {
        a[0] = f16_at(b, 0);
        c[0] = 0.0;
        for j in 0..32 {
            q[j] = b[2 + j] as i8;
        }
    },
    code |b, e| { b[2 + e] as i8 as i32 },
    scale |b, _g| { (f16_at(b, 0), 0.0) }
);

quant_block!(
    /// d f16, s f16 (d times the codes' sum: not part of the value), 32 i8 codes.
    Q8_1, len 32, bytes 36, group 32, min false, |b, q, a, c| {
        a[0] = f16_at(b, 0);
        c[0] = 0.0;
        for j in 0..32 {
            q[j] = b[4 + j] as i8;
        }
    },
    code |b, e| { b[4 + e] as i8 as i32 },
    scale |b, _g| { (f16_at(b, 0), 0.0) }
);

quant_block!(
    /// 16 bytes of 4-bit scale (low) and min (high) per group of 16, 64 bytes of 2-bit
    /// codes, d, dmin f16. Weight 128 h + 32 s + l (h < 2, s < 4, l < 32) is bits 2s of
    /// code byte 32 h + l, in group 8 h + 2 s + l / 16.
    Q2K, len 256, bytes 84, group 16, min true, |b, q, a, c| {
        let d = f16_at(b, 80);
        let dmin = f16_at(b, 82);
        for g in 0..16 {
            a[g] = d * (b[g] & 0xF) as f64;
            c[g] = dmin * (b[g] >> 4) as f64;
        }
        for h in 0..2 {
            for s in 0..4 {
                for l in 0..32 {
                    q[128 * h + 32 * s + l] = ((b[16 + 32 * h + l] >> (2 * s)) & 3) as i8;
                }
            }
        }
    },
    code |b, e| {
        let (h, s, l) = (e / 128, e % 128 / 32, e % 32);
        ((b[16 + 32 * h + l] >> (2 * s)) & 3) as i32
    },
    scale |b, g| {
        (f16_at(b, 80) * (b[g] & 0xF) as f64, f16_at(b, 82) * (b[g] >> 4) as f64)
    }
);

quant_block!(
    /// 32 bytes of high bits (hmask), 64 bytes of 2-bit codes, 12 bytes of 6-bit scales,
    /// d f16. Weight 128 h + 32 s + l: low bits 2s of code byte 32 h + l, high bit 4 h + s
    /// of hmask byte l (clear: subtract 4), group 8 h + 2 s + l / 16, a = d (sc - 32).
    Q3K, len 256, bytes 110, group 16, min false, |b, q, a, c| {
        let d = f16_at(b, 108);
        let s = &b[96..108];
        for g in 0..16 {
            // Low 4 bits: byte g mod 8 (high nibble from the second 8); top 2 bits: byte
            // 8 + g mod 4, bit pair g / 4.
            let low = if g < 8 { s[g] & 0xF } else { s[g - 8] >> 4 };
            let high = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
            let sc = (low | (high << 4)) as i32 - 32;
            a[g] = d * sc as f64;
            c[g] = 0.0;
        }
        for h in 0..2 {
            for sh in 0..4 {
                for l in 0..32 {
                    let low = (b[32 + 32 * h + l] >> (2 * sh)) & 3;
                    let high = (b[l] >> (4 * h + sh)) & 1;
                    q[128 * h + 32 * sh + l] = low as i8 - if high == 0 { 4 } else { 0 };
                }
            }
        }
    },
    code |b, e| {
        let (h, s, l) = (e / 128, e % 128 / 32, e % 32);
        let low = (b[32 + 32 * h + l] >> (2 * s)) & 3;
        let high = (b[l] >> (4 * h + s)) & 1;
        low as i32 - if high == 0 { 4 } else { 0 }
    },
    scale |b, g| {
        let s = &b[96..108];
        let low = if g < 8 { s[g] & 0xF } else { s[g - 8] >> 4 };
        let high = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
        let sc = (low | (high << 4)) as i32 - 32;
        (f16_at(b, 108) * sc as f64, 0.0)
    }
);

quant_block!(
    /// d, dmin f16, 12 bytes of 6-bit scales and mins, 128 bytes of 4-bit codes. Weight
    /// 64 j + l (l < 32) is the low nibble of code byte 32 j + l, weight 64 j + 32 + l its
    /// high nibble; groups 2 j and 2 j + 1.
    Q4K, len 256, bytes 144, group 32, min true, |b, q, a, c| {
        let d = f16_at(b, 0);
        let dmin = f16_at(b, 2);
        for g in 0..8 {
            let (sc, m) = scale_min_k4(g, &b[4..16]);
            a[g] = d * sc as f64;
            c[g] = dmin * m as f64;
        }
        for j in 0..4 {
            for l in 0..32 {
                let v = b[16 + 32 * j + l];
                q[64 * j + l] = (v & 0xF) as i8;
                q[64 * j + 32 + l] = (v >> 4) as i8;
            }
        }
    },
    code |b, e| {
        let (j, u, l) = (e / 64, e % 64 / 32, e % 32);
        let v = b[16 + 32 * j + l];
        (if u == 0 { v & 0xF } else { v >> 4 }) as i32
    },
    scale |b, g| {
        let (sc, m) = scale_min_k4(g, &b[4..16]);
        (f16_at(b, 0) * sc as f64, f16_at(b, 2) * m as f64)
    }
);

quant_block!(
    /// d, dmin f16, 12 bytes of scales and mins, 32 bytes of fifth bits (bit 2 j of byte
    /// l: weight 64 j + l; bit 2 j + 1: weight 64 j + 32 + l), 128 bytes of 4-bit codes
    /// laid out as in Q4_K.
    Q5K, len 256, bytes 176, group 32, min true, |b, q, a, c| {
        let d = f16_at(b, 0);
        let dmin = f16_at(b, 2);
        for g in 0..8 {
            let (sc, m) = scale_min_k4(g, &b[4..16]);
            a[g] = d * sc as f64;
            c[g] = dmin * m as f64;
        }
        for j in 0..4 {
            for l in 0..32 {
                let v = b[48 + 32 * j + l];
                let h = b[16 + l] >> (2 * j);
                q[64 * j + l] = ((v & 0xF) | ((h & 1) << 4)) as i8;
                q[64 * j + 32 + l] = ((v >> 4) | ((h & 2) << 3)) as i8;
            }
        }
    },
    code |b, e| {
        let (j, u, l) = (e / 64, e % 64 / 32, e % 32);
        let v = b[48 + 32 * j + l];
        let h = b[16 + l] >> (2 * j);
        (if u == 0 {
            (v & 0xF) | ((h & 1) << 4)
        } else {
            (v >> 4) | ((h & 2) << 3)
        }) as i32
    },
    scale |b, g| {
        let (sc, m) = scale_min_k4(g, &b[4..16]);
        (f16_at(b, 0) * sc as f64, f16_at(b, 2) * m as f64)
    }
);

quant_block!(
    /// 128 bytes of low 4 bits (ql), 64 bytes of high 2 bits (qh), 16 i8 scales, d f16.
    /// In half h, weights 128 h + l, + 32, + 64, + 96 (l < 32) take the low nibble of
    /// ql[64 h + l], of ql[64 h + 32 + l], the high nibble of each, and bit pairs 0, 2, 4,
    /// 6 of qh[32 h + l].
    Q6K, len 256, bytes 210, group 16, min false, |b, q, a, c| {
        let d = f16_at(b, 208);
        for g in 0..16 {
            a[g] = d * (b[192 + g] as i8) as f64;
            c[g] = 0.0;
        }
        for h in 0..2 {
            let (ql, qh) = (&b[64 * h..64 * h + 64], &b[128 + 32 * h..128 + 32 * h + 32]);
            for l in 0..32 {
                let o = 128 * h + l;
                q[o] = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) as i8 - 32;
                q[o + 32] = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) as i8 - 32;
                q[o + 64] = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i8 - 32;
                q[o + 96] = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i8 - 32;
            }
        }
    },
    code |b, e| {
        // e = 128 h + 32 t + l: ql byte 64 h + l (+ 32 for odd t), its low nibble for t < 2,
        // bit pair t of qh byte 32 h + l.
        let (h, t, l) = (e / 128, e % 128 / 32, e % 32);
        let v = b[64 * h + l + 32 * (t & 1)] >> (4 * (t >> 1));
        let hi = (b[128 + 32 * h + l] >> (2 * t)) & 3;
        ((v & 0xF) | (hi << 4)) as i32 - 32
    },
    scale |b, g| { (f16_at(b, 208) * (b[192 + g] as i8) as f64, 0.0) }
);

quant_block!(
    /// d f32, 256 i8 codes, 16 i16 sums of codes (not part of the value).
    Q8K, len 256, bytes 292, group 256, min false, |b, q, a, c| {
        a[0] = f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64;
        c[0] = 0.0;
        for j in 0..256 {
            q[j] = b[4 + j] as i8;
        }
    },
    code |b, e| { b[4 + e] as i8 as i32 },
    scale |b, _g| { (f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64, 0.0) }
);

/// A weight in its blocks: n rows of k weights of type `ty`, row j's blocks at
/// `bytes[j * row_bytes..]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QRows<'a> {
    pub ty: GgmlDType,
    pub n: usize,
    pub k: usize,
    pub bytes: &'a [u8],
}

impl QRows<'_> {
    /// Bytes per row.
    pub fn row_bytes(&self) -> usize {
        let (len, size) = geometry(self.ty);
        self.k / len * size
    }

    /// Row j's bytes.
    #[inline(always)]
    pub fn row(&self, j: usize) -> &[u8] {
        let rb = self.row_bytes();
        &self.bytes[j * rb..(j + 1) * rb]
    }

    /// Row j's exact values into `out` (k values).
    pub fn decode_row(&self, j: usize, out: &mut [f64]) {
        decode_run(self.ty, self.row(j), &mut out[..self.k]);
    }
}

/// (weights per block, bytes per block) of every type.
pub fn geometry(ty: GgmlDType) -> (usize, usize) {
    match ty {
        GgmlDType::F32 => (1, 4),
        GgmlDType::F16 | GgmlDType::BF16 => (1, 2),
        GgmlDType::Q4_0 => (Q4_0::LEN, Q4_0::BYTES),
        GgmlDType::Q4_1 => (Q4_1::LEN, Q4_1::BYTES),
        GgmlDType::Q5_0 => (Q5_0::LEN, Q5_0::BYTES),
        GgmlDType::Q5_1 => (Q5_1::LEN, Q5_1::BYTES),
        GgmlDType::Q8_0 => (Q8_0::LEN, Q8_0::BYTES),
        GgmlDType::Q8_1 => (Q8_1::LEN, Q8_1::BYTES),
        GgmlDType::Q2K => (Q2K::LEN, Q2K::BYTES),
        GgmlDType::Q3K => (Q3K::LEN, Q3K::BYTES),
        GgmlDType::Q4K => (Q4K::LEN, Q4K::BYTES),
        GgmlDType::Q5K => (Q5K::LEN, Q5K::BYTES),
        GgmlDType::Q6K => (Q6K::LEN, Q6K::BYTES),
        GgmlDType::Q8K => (Q8K::LEN, Q8K::BYTES),
    }
}

/// Calls `$body` with `$B` the [`QuantBlock`] of a quantized `$ty`, or `$float` for F32,
/// F16 and BF16.
macro_rules! with_block {
    ($ty:expr, $B:ident => $body:expr, float => $float:expr) => {{
        use $crate::quantized::blocks as qb;
        match $ty {
            candle_core::quantized::GgmlDType::Q4_0 => {
                type $B = qb::Q4_0;
                $body
            }
            candle_core::quantized::GgmlDType::Q4_1 => {
                type $B = qb::Q4_1;
                $body
            }
            candle_core::quantized::GgmlDType::Q5_0 => {
                type $B = qb::Q5_0;
                $body
            }
            candle_core::quantized::GgmlDType::Q5_1 => {
                type $B = qb::Q5_1;
                $body
            }
            candle_core::quantized::GgmlDType::Q8_0 => {
                type $B = qb::Q8_0;
                $body
            }
            candle_core::quantized::GgmlDType::Q8_1 => {
                type $B = qb::Q8_1;
                $body
            }
            candle_core::quantized::GgmlDType::Q2K => {
                type $B = qb::Q2K;
                $body
            }
            candle_core::quantized::GgmlDType::Q3K => {
                type $B = qb::Q3K;
                $body
            }
            candle_core::quantized::GgmlDType::Q4K => {
                type $B = qb::Q4K;
                $body
            }
            candle_core::quantized::GgmlDType::Q5K => {
                type $B = qb::Q5K;
                $body
            }
            candle_core::quantized::GgmlDType::Q6K => {
                type $B = qb::Q6K;
                $body
            }
            candle_core::quantized::GgmlDType::Q8K => {
                type $B = qb::Q8K;
                $body
            }
            candle_core::quantized::GgmlDType::F32
            | candle_core::quantized::GgmlDType::F16
            | candle_core::quantized::GgmlDType::BF16 => $float,
        }
    }};
}
pub(crate) use with_block;

/// The exact values of a float weight type's elements (F32, F16, BF16) into `out`.
#[inline(always)]
pub(crate) fn decode_float(ty: GgmlDType, b: &[u8], out: &mut [f64]) {
    match ty {
        GgmlDType::F32 => {
            for (o, v) in out.iter_mut().zip(b.chunks_exact(4)) {
                *o = f32::from_le_bytes([v[0], v[1], v[2], v[3]]) as f64;
            }
        }
        GgmlDType::F16 => {
            for (o, v) in out.iter_mut().zip(b.chunks_exact(2)) {
                *o = f16_at(v, 0);
            }
        }
        GgmlDType::BF16 => {
            for (o, v) in out.iter_mut().zip(b.chunks_exact(2)) {
                *o = f32::from_bits((u16::from_le_bytes([v[0], v[1]]) as u32) << 16) as f64;
            }
        }
        _ => unreachable!("decode_float: {ty:?} is quantized"),
    }
}

/// The exact values of the weights that the bytes `b` (whole blocks of `ty`) encode,
/// into `out` (as many values).
#[inline(always)]
pub(crate) fn decode_run(ty: GgmlDType, b: &[u8], out: &mut [f64]) {
    with_block!(ty, B => {
        for (bytes, o) in b.chunks_exact(B::BYTES).zip(out.chunks_exact_mut(B::LEN)) {
            decode_quant::<B>(bytes, o);
        }
    }, float => decode_float(ty, b, out))
}

/// The exact weight values of a tensor's bytes (`ty` blocks), as f64: for references and
/// tests. Checks that the bytes hold whole blocks.
pub fn dequantize_exact(ty: GgmlDType, bytes: &[u8]) -> Result<Vec<f64>> {
    let (len, size) = geometry(ty);
    if !bytes.len().is_multiple_of(size) {
        bail!(
            "candle-repro quantized: {} bytes are not whole {ty:?} blocks of {size} bytes",
            bytes.len()
        )
    }
    let mut out = vec![0f64; bytes.len() / size * len];
    decode_run(ty, bytes, &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `code` and `group_scale` against `unpack` for every weight and group of random
    /// blocks: random bytes (many seeds), then the same with each scale (the f16 at each
    /// offset of `scales`; Q8_K: its f32 d) set to inf, -inf, NaN, a subnormal, +0 and -0.
    fn check<B: QuantBlock>(scales: &[usize], f32_d: bool) -> usize {
        let mut s = 0x9E37_79B9_7F4A_7C15u64 ^ B::BYTES as u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let specials16: [u16; 7] = [0x7C00, 0xFC00, 0x7E01, 0x0001, 0x03FF, 0x0000, 0x8000];
        let specials32: [u32; 7] = [
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0001,
            0x0000_0001,
            0x007F_FFFF,
            0,
            0x8000_0000,
        ];
        let mut checked = 0;
        for seed in 0..200 {
            let mut b: Vec<u8> = (0..B::BYTES).map(|_| next() as u8).collect();
            if seed >= 100 {
                // A special value in one scale (the others stay random).
                let sp = seed % specials16.len();
                if f32_d {
                    b[..4].copy_from_slice(&specials32[sp].to_le_bytes());
                } else {
                    let at = scales[(seed / 7) % scales.len()];
                    b[at..at + 2].copy_from_slice(&specials16[sp].to_le_bytes());
                }
            }
            let (mut q, mut a, mut c) = ([0i8; 256], [0f64; 16], [0f64; 16]);
            B::unpack(&b, &mut q[..B::LEN], &mut a, &mut c);
            for (e, &qe) in q[..B::LEN].iter().enumerate() {
                assert_eq!(B::code(&b, e), qe as i32, "code {e}, seed {seed}");
            }
            for g in 0..B::LEN / B::GROUP {
                let (ag, cg) = B::group_scale(&b, g);
                assert_eq!(ag.to_bits(), a[g].to_bits(), "a of group {g}, seed {seed}");
                assert_eq!(cg.to_bits(), c[g].to_bits(), "c of group {g}, seed {seed}");
            }
            checked += B::LEN;
        }
        checked
    }

    #[test]
    fn per_element_decoding_matches_unpack() {
        let mut n = 0;
        n += check::<Q4_0>(&[0], false);
        n += check::<Q4_1>(&[0, 2], false);
        n += check::<Q5_0>(&[0], false);
        n += check::<Q5_1>(&[0, 2], false);
        n += check::<Q8_0>(&[0], false);
        n += check::<Q8_1>(&[0, 2], false);
        n += check::<Q2K>(&[80, 82], false);
        n += check::<Q3K>(&[108], false);
        n += check::<Q4K>(&[0, 2], false);
        n += check::<Q5K>(&[0, 2], false);
        n += check::<Q6K>(&[208], false);
        n += check::<Q8K>(&[0], true);
        assert_eq!(n, 200 * (6 * 32 + 6 * 256));
    }
}
