// Mirror of core/src/math/bigint.rs: fixed-size unsigned integers (32 64-bit limbs) and their
// signed form, for the exact decisions of the norms. Integer operations only. On overflow
// the Rust code panics; the callers' bounds keep far below, and here the limb arrays
// simply stop (the host check compares every result with the Rust code).
#pragma once

#include "common.cuh"

namespace repro {

#define RM_BIG_LIMBS 32

struct Big {
    uint64_t limbs[RM_BIG_LIMBS];

    RM_FN static Big zero() {
        Big b;
        for (int i = 0; i < RM_BIG_LIMBS; i++) b.limbs[i] = 0;
        return b;
    }
    RM_FN static Big from_u128(unsigned __int128 v) {
        Big b = zero();
        b.limbs[0] = (uint64_t)v;
        b.limbs[1] = (uint64_t)(v >> 64);
        return b;
    }
    RM_FN bool is_zero() const {
        for (int i = 0; i < RM_BIG_LIMBS; i++)
            if (limbs[i] != 0) return false;
        return true;
    }
    RM_FN int len() const {
        for (int i = RM_BIG_LIMBS - 1; i >= 0; i--)
            if (limbs[i] != 0) return i + 1;
        return 0;
    }
    RM_FN Big mul_u64(uint64_t m) const {
        Big out;
        unsigned __int128 carry = 0;
        for (int i = 0; i < RM_BIG_LIMBS; i++) {
            unsigned __int128 t = (unsigned __int128)limbs[i] * m + carry;
            out.limbs[i] = (uint64_t)t;
            carry = t >> 64;
        }
        return out;
    }
    RM_FN Big mul(const Big& o) const {
        int la = len(), lb = o.len();
        Big out = zero();
        for (int i = 0; i < la; i++) {
            unsigned __int128 carry = 0;
            for (int j = 0; j < lb && i + j < RM_BIG_LIMBS; j++) {
                unsigned __int128 t = (unsigned __int128)limbs[i] * o.limbs[j] +
                                      (unsigned __int128)out.limbs[i + j] + carry;
                out.limbs[i + j] = (uint64_t)t;
                carry = t >> 64;
            }
            for (int k = i + lb; carry != 0 && k < RM_BIG_LIMBS; k++) {
                unsigned __int128 t = (unsigned __int128)out.limbs[k] + carry;
                out.limbs[k] = (uint64_t)t;
                carry = t >> 64;
            }
        }
        return out;
    }
    RM_FN Big add(const Big& o) const {
        Big out;
        unsigned __int128 carry = 0;
        for (int i = 0; i < RM_BIG_LIMBS; i++) {
            unsigned __int128 t = (unsigned __int128)limbs[i] + o.limbs[i] + carry;
            out.limbs[i] = (uint64_t)t;
            carry = t >> 64;
        }
        return out;
    }
    RM_FN Big sub(const Big& o) const {
        Big out;
        uint64_t borrow = 0;
        for (int i = 0; i < RM_BIG_LIMBS; i++) {
            uint64_t d1 = limbs[i] - o.limbs[i];
            uint64_t b1 = limbs[i] < o.limbs[i] ? 1 : 0;
            uint64_t d2 = d1 - borrow;
            uint64_t b2 = d1 < borrow ? 1 : 0;
            out.limbs[i] = d2;
            borrow = b1 | b2;
        }
        return out;
    }
    RM_FN Big shl(uint32_t s) const {
        uint32_t words = s / 64, bits = s % 64;
        Big out = zero();
        for (int i = RM_BIG_LIMBS - 1; i >= (int)words; i--) {
            int src = i - (int)words;
            uint64_t v = limbs[src] << bits;
            if (bits > 0 && src > 0) v |= limbs[src - 1] >> (64 - bits);
            out.limbs[i] = v;
        }
        return out;
    }
    // -1, 0, 1 as self <, ==, > o.
    RM_FN int32_t cmp(const Big& o) const {
        for (int i = RM_BIG_LIMBS - 1; i >= 0; i--) {
            if (limbs[i] < o.limbs[i]) return -1;
            if (limbs[i] > o.limbs[i]) return 1;
        }
        return 0;
    }
};

struct SBig {
    bool neg;
    Big mag;

    RM_FN static SBig make(bool neg, const Big& mag) {
        SBig s;
        s.neg = neg && !mag.is_zero();
        s.mag = mag;
        return s;
    }
    RM_FN SBig add(const SBig& o) const {
        if (neg == o.neg) return make(neg, mag.add(o.mag));
        if (mag.cmp(o.mag) < 0) return make(o.neg, o.mag.sub(mag));
        return make(neg, mag.sub(o.mag));
    }
    RM_FN SBig mul(const SBig& o) const { return make(neg != o.neg, mag.mul(o.mag)); }
    RM_FN bool is_zero() const { return mag.is_zero(); }
};

// |x| = m 2^e, m < 2^53 (a finite f64).
RM_FN void decompose_f64(double x, bool* neg, uint64_t* m, int32_t* e) {
    uint64_t b = f64_to_bits(x);
    *neg = (b >> 63) == 1;
    int32_t field = (int32_t)((b >> 52) & 0x7FF);
    uint64_t frac = b & ((1ULL << 52) - 1);
    if (field == 0) {
        *m = frac;
        *e = -1074;
    } else {
        *m = frac | (1ULL << 52);
        *e = field - 1075;
    }
}

// m 2^e (signed) at scale 2^-base (e >= base unless m = 0).
RM_FN SBig scaled(bool neg, unsigned __int128 m, int32_t e, int32_t base) {
    if (m == 0) return SBig::make(false, Big::zero());
    return SBig::make(neg, Big::from_u128(m).shl((uint32_t)(e - base)));
}

}  // namespace repro
