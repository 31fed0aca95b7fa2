// Mirror of core/src/math/trig.rs (sin, cos: table + Cody-Waite fast path, exact Payne-Hanek
// accurate path). Constants and tables generated from the Rust file by
// tools/kernel-hostcheck/scripts/rust_consts_to_cuh.py; same operations in the same order;
// see the Rust file for the algorithm and its bounds. Rust's u128 arithmetic is spelled
// with unsigned __int128 (nvcc supports it in device code), and its u128 -> f64 conversion
// with an explicit round-to-nearest-even (u128_to_f64 below).
#pragma once

#include "dd.cuh"
#include "round.cuh"
#include "unary.cuh"

namespace repro {
namespace m_trig {

typedef unsigned __int128 u128;

constexpr double P1 = 0x1.921f000000000p-5;  // 0x3FA921F000000000
constexpr double P2 = 0x1.6a88000000000p-22;  // 0x3E96A88000000000
constexpr double P3 = 0x1.0b46000000000p-39;  // 0x3D80B46000000000
constexpr double P4 = 0x1.1a60000000000p-59;  // 0x3C41A60000000000
constexpr double P5 = 0x1.3198a2e037073p-74;  // 0x3B53198A2E037073
constexpr double INV_STEP = 0x1.45f306dc9c883p+4;  // 0x40345F306DC9C883
constexpr double FS1 = -0x1.5555555555555p-3;  // 0xBFC5555555555555
constexpr double FS2 = 0x1.1111111111111p-7;  // 0x3F81111111111111
constexpr double FS3 = -0x1.a01a01a01a01ap-13;  // 0xBF2A01A01A01A01A
constexpr double FC1 = -0x1.0000000000000p-1;  // 0xBFE0000000000000
constexpr double FC2 = 0x1.5555555555555p-5;  // 0x3FA5555555555555
constexpr double FC3 = -0x1.6c16c16c16c17p-10;  // 0xBF56C16C16C16C17
constexpr double MAGIC = 0x1.8000000000000p+52;  // 0x4338000000000000
constexpr double TINY = 0x1.0000000000000p-26;  // 0x3E50000000000000
constexpr double NO_REDUCTION = 0x1.0000000000000p-6;  // 0x3F90000000000000
RM_FN DD PI_64() { return DD::make(0x1.921fb54442d18p-5, 0x1.1a62633145c07p-59); }  // 0x3FA921FB54442D18, 0x3C41A62633145C07
constexpr float FAST_LIMIT = 0x1.0000000000000p+31f;  // 0x4F000000
RM_DEFINE_TABLE(uint64_t, TWO_OVER_PI, {
    0x0000000000000000ULL,
    0xA2F9836E4E441529ULL,
    0xFC2757D1F534DDC0ULL,
    0xDB6295993C439041ULL,
    0xFE5163ABDEBBC561ULL,
    0xB7246E3A424DD2E0ULL,
    0x06492EEA09D1921CULL,
    0xFE1DEB1CB129A73EULL,
})
RM_DEFINE_TABLE(uint64_t, SIN_TABLE, {
    0x0000000000000000ULL, 0x0000000000000000ULL,
    0x3FA91F65F10DD814ULL, 0xBC2912BD0D569A90ULL,
    0x3FB917A6BC29B42CULL, 0xBC3E2718D26ED688ULL,
    0x3FC2C8106E8E613AULL, 0x3C513000A89A11E0ULL,
    0x3FC8F8B83C69A60BULL, 0xBC626D19B9FF8D82ULL,
    0x3FCF19F97B215F1BULL, 0xBC642DEEF11DA2C4ULL,
    0x3FD294062ED59F06ULL, 0xBC75D28DA2C4612DULL,
    0x3FD58F9A75AB1FDDULL, 0xBC1EFDC0D58CF620ULL,
    0x3FD87DE2A6AEA963ULL, 0xBC672CEDD3D5A610ULL,
    0x3FDB5D1009E15CC0ULL, 0x3C65B362CB974183ULL,
    0x3FDE2B5D3806F63BULL, 0x3C5E0D891D3C6841ULL,
    0x3FE073879922FFEEULL, 0xBC8A5A014347406CULL,
    0x3FE1C73B39AE68C8ULL, 0x3C8B25DD267F6600ULL,
    0x3FE30FF7FCE17035ULL, 0xBC6EFCC626F74A6FULL,
    0x3FE44CF325091DD6ULL, 0x3C68076A2CFDC6B3ULL,
    0x3FE57D69348CECA0ULL, 0xBC875720992BFBB2ULL,
    0x3FE6A09E667F3BCDULL, 0xBC8BDD3413B26456ULL,
    0x3FE7B5DF226AAFAFULL, 0xBC70F537ACDF0AD7ULL,
    0x3FE8BC806B151741ULL, 0xBC82C5E12ED1336DULL,
    0x3FE9B3E047F38741ULL, 0xBC830EE286712474ULL,
    0x3FEA9B66290EA1A3ULL, 0x3C39F630E8B6DAC8ULL,
    0x3FEB728345196E3EULL, 0xBC8BC69F324E6D61ULL,
    0x3FEC38B2F180BDB1ULL, 0xBC76E0B1757C8D07ULL,
    0x3FECED7AF43CC773ULL, 0xBC5E7B6BB5AB58AEULL,
    0x3FED906BCF328D46ULL, 0x3C7457E610231AC2ULL,
    0x3FEE212104F686E5ULL, 0xBC8014C76C126527ULL,
    0x3FEE9F4156C62DDAULL, 0x3C8760B1E2E3F81EULL,
    0x3FEF0A7EFB9230D7ULL, 0x3C752C7ADC6B4989ULL,
    0x3FEF6297CFF75CB0ULL, 0x3C7562172A361FD3ULL,
    0x3FEFA7557F08A517ULL, 0xBC87A0A8CA13571FULL,
    0x3FEFD88DA3D12526ULL, 0xBC887DF6378811C7ULL,
    0x3FEFF621E3796D7EULL, 0xBC6C57BC2E24AA15ULL,
    0x3FF0000000000000ULL, 0x0000000000000000ULL,
    0x3FEFF621E3796D7EULL, 0xBC6C57BC2E24AA15ULL,
    0x3FEFD88DA3D12526ULL, 0xBC887DF6378811C7ULL,
    0x3FEFA7557F08A517ULL, 0xBC87A0A8CA13571FULL,
    0x3FEF6297CFF75CB0ULL, 0x3C7562172A361FD3ULL,
    0x3FEF0A7EFB9230D7ULL, 0x3C752C7ADC6B4989ULL,
    0x3FEE9F4156C62DDAULL, 0x3C8760B1E2E3F81EULL,
    0x3FEE212104F686E5ULL, 0xBC8014C76C126527ULL,
    0x3FED906BCF328D46ULL, 0x3C7457E610231AC2ULL,
    0x3FECED7AF43CC773ULL, 0xBC5E7B6BB5AB58AEULL,
    0x3FEC38B2F180BDB1ULL, 0xBC76E0B1757C8D07ULL,
    0x3FEB728345196E3EULL, 0xBC8BC69F324E6D61ULL,
    0x3FEA9B66290EA1A3ULL, 0x3C39F630E8B6DAC8ULL,
    0x3FE9B3E047F38741ULL, 0xBC830EE286712474ULL,
    0x3FE8BC806B151741ULL, 0xBC82C5E12ED1336DULL,
    0x3FE7B5DF226AAFAFULL, 0xBC70F537ACDF0AD7ULL,
    0x3FE6A09E667F3BCDULL, 0xBC8BDD3413B26456ULL,
    0x3FE57D69348CECA0ULL, 0xBC875720992BFBB2ULL,
    0x3FE44CF325091DD6ULL, 0x3C68076A2CFDC6B3ULL,
    0x3FE30FF7FCE17035ULL, 0xBC6EFCC626F74A6FULL,
    0x3FE1C73B39AE68C8ULL, 0x3C8B25DD267F6600ULL,
    0x3FE073879922FFEEULL, 0xBC8A5A014347406CULL,
    0x3FDE2B5D3806F63BULL, 0x3C5E0D891D3C6841ULL,
    0x3FDB5D1009E15CC0ULL, 0x3C65B362CB974183ULL,
    0x3FD87DE2A6AEA963ULL, 0xBC672CEDD3D5A610ULL,
    0x3FD58F9A75AB1FDDULL, 0xBC1EFDC0D58CF620ULL,
    0x3FD294062ED59F06ULL, 0xBC75D28DA2C4612DULL,
    0x3FCF19F97B215F1BULL, 0xBC642DEEF11DA2C4ULL,
    0x3FC8F8B83C69A60BULL, 0xBC626D19B9FF8D82ULL,
    0x3FC2C8106E8E613AULL, 0x3C513000A89A11E0ULL,
    0x3FB917A6BC29B42CULL, 0xBC3E2718D26ED688ULL,
    0x3FA91F65F10DD814ULL, 0xBC2912BD0D569A90ULL,
    0x0000000000000000ULL, 0x0000000000000000ULL,
    0xBFA91F65F10DD814ULL, 0x3C2912BD0D569A90ULL,
    0xBFB917A6BC29B42CULL, 0x3C3E2718D26ED688ULL,
    0xBFC2C8106E8E613AULL, 0xBC513000A89A11E0ULL,
    0xBFC8F8B83C69A60BULL, 0x3C626D19B9FF8D82ULL,
    0xBFCF19F97B215F1BULL, 0x3C642DEEF11DA2C4ULL,
    0xBFD294062ED59F06ULL, 0x3C75D28DA2C4612DULL,
    0xBFD58F9A75AB1FDDULL, 0x3C1EFDC0D58CF620ULL,
    0xBFD87DE2A6AEA963ULL, 0x3C672CEDD3D5A610ULL,
    0xBFDB5D1009E15CC0ULL, 0xBC65B362CB974183ULL,
    0xBFDE2B5D3806F63BULL, 0xBC5E0D891D3C6841ULL,
    0xBFE073879922FFEEULL, 0x3C8A5A014347406CULL,
    0xBFE1C73B39AE68C8ULL, 0xBC8B25DD267F6600ULL,
    0xBFE30FF7FCE17035ULL, 0x3C6EFCC626F74A6FULL,
    0xBFE44CF325091DD6ULL, 0xBC68076A2CFDC6B3ULL,
    0xBFE57D69348CECA0ULL, 0x3C875720992BFBB2ULL,
    0xBFE6A09E667F3BCDULL, 0x3C8BDD3413B26456ULL,
    0xBFE7B5DF226AAFAFULL, 0x3C70F537ACDF0AD7ULL,
    0xBFE8BC806B151741ULL, 0x3C82C5E12ED1336DULL,
    0xBFE9B3E047F38741ULL, 0x3C830EE286712474ULL,
    0xBFEA9B66290EA1A3ULL, 0xBC39F630E8B6DAC8ULL,
    0xBFEB728345196E3EULL, 0x3C8BC69F324E6D61ULL,
    0xBFEC38B2F180BDB1ULL, 0x3C76E0B1757C8D07ULL,
    0xBFECED7AF43CC773ULL, 0x3C5E7B6BB5AB58AEULL,
    0xBFED906BCF328D46ULL, 0xBC7457E610231AC2ULL,
    0xBFEE212104F686E5ULL, 0x3C8014C76C126527ULL,
    0xBFEE9F4156C62DDAULL, 0xBC8760B1E2E3F81EULL,
    0xBFEF0A7EFB9230D7ULL, 0xBC752C7ADC6B4989ULL,
    0xBFEF6297CFF75CB0ULL, 0xBC7562172A361FD3ULL,
    0xBFEFA7557F08A517ULL, 0x3C87A0A8CA13571FULL,
    0xBFEFD88DA3D12526ULL, 0x3C887DF6378811C7ULL,
    0xBFEFF621E3796D7EULL, 0x3C6C57BC2E24AA15ULL,
    0xBFF0000000000000ULL, 0x0000000000000000ULL,
    0xBFEFF621E3796D7EULL, 0x3C6C57BC2E24AA15ULL,
    0xBFEFD88DA3D12526ULL, 0x3C887DF6378811C7ULL,
    0xBFEFA7557F08A517ULL, 0x3C87A0A8CA13571FULL,
    0xBFEF6297CFF75CB0ULL, 0xBC7562172A361FD3ULL,
    0xBFEF0A7EFB9230D7ULL, 0xBC752C7ADC6B4989ULL,
    0xBFEE9F4156C62DDAULL, 0xBC8760B1E2E3F81EULL,
    0xBFEE212104F686E5ULL, 0x3C8014C76C126527ULL,
    0xBFED906BCF328D46ULL, 0xBC7457E610231AC2ULL,
    0xBFECED7AF43CC773ULL, 0x3C5E7B6BB5AB58AEULL,
    0xBFEC38B2F180BDB1ULL, 0x3C76E0B1757C8D07ULL,
    0xBFEB728345196E3EULL, 0x3C8BC69F324E6D61ULL,
    0xBFEA9B66290EA1A3ULL, 0xBC39F630E8B6DAC8ULL,
    0xBFE9B3E047F38741ULL, 0x3C830EE286712474ULL,
    0xBFE8BC806B151741ULL, 0x3C82C5E12ED1336DULL,
    0xBFE7B5DF226AAFAFULL, 0x3C70F537ACDF0AD7ULL,
    0xBFE6A09E667F3BCDULL, 0x3C8BDD3413B26456ULL,
    0xBFE57D69348CECA0ULL, 0x3C875720992BFBB2ULL,
    0xBFE44CF325091DD6ULL, 0xBC68076A2CFDC6B3ULL,
    0xBFE30FF7FCE17035ULL, 0x3C6EFCC626F74A6FULL,
    0xBFE1C73B39AE68C8ULL, 0xBC8B25DD267F6600ULL,
    0xBFE073879922FFEEULL, 0x3C8A5A014347406CULL,
    0xBFDE2B5D3806F63BULL, 0xBC5E0D891D3C6841ULL,
    0xBFDB5D1009E15CC0ULL, 0xBC65B362CB974183ULL,
    0xBFD87DE2A6AEA963ULL, 0x3C672CEDD3D5A610ULL,
    0xBFD58F9A75AB1FDDULL, 0x3C1EFDC0D58CF620ULL,
    0xBFD294062ED59F06ULL, 0x3C75D28DA2C4612DULL,
    0xBFCF19F97B215F1BULL, 0x3C642DEEF11DA2C4ULL,
    0xBFC8F8B83C69A60BULL, 0x3C626D19B9FF8D82ULL,
    0xBFC2C8106E8E613AULL, 0xBC513000A89A11E0ULL,
    0xBFB917A6BC29B42CULL, 0x3C3E2718D26ED688ULL,
    0xBFA91F65F10DD814ULL, 0x3C2912BD0D569A90ULL,
})
RM_DEFINE_TABLE(uint64_t, ACC_SIN, {
    0xBFC5555555555555ULL, 0xBC65555555555555ULL,
    0x3F81111111111111ULL, 0x3C01111111111111ULL,
    0xBF2A01A01A01A01AULL, 0xBB6A01A01A01A01AULL,
    0x3EC71DE3A556C734ULL, 0xBB6C154F8DDC6C00ULL,
    0xBE5AE64567F544E4ULL, 0x3AFC062E06D1F209ULL,
    0x3DE6124613A86D09ULL, 0x3A8F28E0CC748EBEULL,
    0xBD6AE7F3E733B81FULL, 0xB9E1D8656B0EE8CBULL,
    0x3CE952C77030AD4AULL, 0x398AC981465DDC6CULL,
})
RM_DEFINE_TABLE(uint64_t, ACC_COS, {
    0xBFE0000000000000ULL, 0x0000000000000000ULL,
    0x3FA5555555555555ULL, 0x3C45555555555555ULL,
    0xBF56C16C16C16C17ULL, 0x3BEF49F49F49F49FULL,
    0x3EFA01A01A01A01AULL, 0x3B3A01A01A01A01AULL,
    0xBE927E4FB7789F5CULL, 0xBB3CBBC05B4FA99AULL,
    0x3E21EED8EFF8D898ULL, 0xBAC2AEC959E14C06ULL,
    0xBDA93974A8C07C9DULL, 0xBA305D6F8A2EFD1FULL,
    0x3D2AE7F3E733B81FULL, 0x39A1D8656B0EE8CBULL,
})


#define RM_TRIG_T(name, i) f64_from_bits(RM_TABLE(name)[i])

// SIN_HI[j] = SIN_TABLE[j].0
RM_FN double sin_hi(uint32_t j) { return RM_TRIG_T(SIN_TABLE, 2 * j); }

// ACC_SIN[i] / ACC_COS[i] as double-doubles.
RM_FN DD acc_sin(int i) { return DD::make(RM_TRIG_T(ACC_SIN, 2 * i), RM_TRIG_T(ACC_SIN, 2 * i + 1)); }
RM_FN DD acc_cos(int i) { return DD::make(RM_TRIG_T(ACC_COS, 2 * i), RM_TRIG_T(ACC_COS, 2 * i + 1)); }

// u64::leading_zeros (64 for 0).
RM_FN uint32_t clz64(uint64_t v) {
#if defined(__CUDA_ARCH__)
    return (uint32_t)__clzll((long long)v);
#else
    return v == 0 ? 64u : (uint32_t)__builtin_clzll(v);
#endif
}

// `v as f64` for a u128: round to nearest, ties to even (the bits below the top 64 are
// folded into a sticky bit far below the rounding position, then one IEEE conversion).
RM_FN double u128_to_f64(u128 v) {
    uint64_t hi = (uint64_t)(v >> 64);
    uint64_t lo = (uint64_t)v;
    if (hi == 0) {
        return (double)lo;
    }
    uint32_t lz = clz64(hi);
    uint64_t top = lz == 0 ? hi : ((hi << lz) | (lo >> (64 - lz)));
    uint64_t rest = lo << lz;
    top |= rest != 0 ? 1 : 0;
    return (double)top * pow2((int32_t)(64 - lz));
}

RM_FN void fast_parts(float x, uint32_t* j, double* sr, double* cr) {
    double xd = (double)x;
    double t = xd * INV_STEP + MAGIC;
    double k = t - MAGIC;
    *j = (uint32_t)(f64_to_bits(t) & 127);
    double r = ((((xd - k * P1) - k * P2) - k * P3) - k * P4) - k * P5;
    double z = r * r;
    *sr = r + (r * z) * (FS1 + z * (FS2 + z * FS3));
    *cr = 1.0 + z * (FC1 + z * (FC2 + z * FC3));
}

RM_FN void sincos_poly_dd(DD r, DD* sr, DD* cr) {
    DD z = r.mul(r);
    double zh = z.hi;
    double ts = acc_sin(3).hi + zh * (acc_sin(4).hi + zh * (acc_sin(5).hi + zh * acc_sin(6).hi));
    DD ps = DD::from_f64(ts).mul(z).add(acc_sin(2)).mul(z).add(acc_sin(1)).mul(z).add(acc_sin(0));
    *sr = r.add(r.mul(z).mul(ps));
    double tc = acc_cos(3).hi + zh * (acc_cos(4).hi + zh * (acc_cos(5).hi + zh * acc_cos(6).hi));
    DD pc = DD::from_f64(tc).mul(z).add(acc_cos(2)).mul(z).add(acc_cos(1)).mul(z).add(acc_cos(0));
    *cr = DD::from_f64(1.0).add(z.mul(pc));
}

RM_FN DD table_dd(uint32_t j) {
    uint32_t i = j & 127;
    return DD::make(RM_TRIG_T(SIN_TABLE, 2 * i), RM_TRIG_T(SIN_TABLE, 2 * i + 1));
}

RM_FN void combine_dd(uint32_t j, DD sr, DD cr, DD* sin_out, DD* cos_out) {
    DD s = table_dd(j);
    DD c = table_dd(j + 32);
    *sin_out = s.mul(cr).add(c.mul(sr));
    *cos_out = c.mul(cr).sub(s.mul(sr));
}

RM_FN uint64_t two_over_pi(uint32_t i) { return RM_TABLE(TWO_OVER_PI)[i]; }

RM_FN DD reduce_pi64(float a, uint32_t* j_out) {
    uint32_t bits = f32_to_bits(a);
    uint64_t m = (uint64_t)((bits & 0x7FFFFFu) | 0x800000u);
    int32_t e = ((int32_t)((bits >> 23) & 0xFF)) - 150;
    int32_t tt = e - 1 + 63;
    tt = tt < 0 ? 0 : (tt > 166 ? 166 : tt);
    uint32_t t = (uint32_t)tt;
    uint32_t q = t / 64;
    uint32_t sh = t % 64;
    uint64_t w[3];
    for (uint32_t k = 0; k < 3; k++) {
        uint64_t hi = two_over_pi(q + k) << sh;
        uint64_t lo = (two_over_pi(q + k + 1) >> 1) >> (63 - sh);
        w[k] = hi | lo;
    }
    u128 p2 = ((u128)m) * ((u128)w[2]);
    u128 p1 = ((u128)m) * ((u128)w[1]) + (p2 >> 64);
    uint64_t r0 = m * w[0] + (uint64_t)(p1 >> 64);
    uint64_t r1 = (uint64_t)p1;
    uint64_t r2 = (uint64_t)p2;
    uint32_t j = (uint32_t)(r0 >> 57);
    uint64_t f0 = (r0 << 7) | (r1 >> 57);
    uint64_t f1 = (r1 << 7) | (r2 >> 57);
    uint64_t f2 = r2 << 7;
    bool negative = (f0 >> 63) == 1;
    if (negative) {
        j += 1;
        uint64_t n2 = (~f2) + 1;
        uint64_t c2 = n2 < (~f2) ? 1 : 0;
        uint64_t n1 = (~f1) + c2;
        uint64_t c1 = n1 < (~f1) ? 1 : 0;
        uint64_t n0 = (~f0) + c1;
        f0 = n0;
        f1 = n1;
        f2 = n2;
    }
    int32_t lz = 0;
    if (f0 == 0) {
        f0 = f1;
        f1 = f2;
        f2 = 0;
        lz = 64;
    }
    uint32_t s = clz64(f0) % 64;
    u128 n = (((((u128)f0) << 64) | (u128)f1) << s) | (u128)((f2 >> 1) >> (63 - s));
    lz += (int32_t)s;
    double scale = pow2(-53 - lz);
    double hi = ((double)(uint64_t)(n >> 75)) * scale;
    double lo = u128_to_f64(n & ((((u128)1) << 75) - 1)) * pow2(-128 - lz);
    double h2, l2;
    fast_two_sum(hi, lo, &h2, &l2);
    *j_out = j & 127;
    return negative ? DD::make(-h2, -l2) : DD::make(h2, l2);
}

RM_FN void sincos_dd(float x, DD* sin_out, DD* cos_out) {
    double xd = (double)x;
    double a = fabs_(xd);
    if (a < TINY) {
        double lo = -(xd * xd * xd) * F64(0x3FC5555555555555);
        *sin_out = DD::make(xd, lo);
        *cos_out = DD::make(1.0, -(xd * xd) * 0.5);
        return;
    }
    uint32_t j;
    DD r;
    if (a < NO_REDUCTION) {
        j = 0;
        r = DD::from_f64(a);
    } else {
        DD f = reduce_pi64(f64_to_f32(a), &j);
        r = f.mul(PI_64());
    }
    DD sr, cr;
    sincos_poly_dd(r, &sr, &cr);
    DD sn, cs;
    combine_dd(j, sr, cr, &sn, &cs);
    *sin_out = x < 0.0f ? sn.neg() : sn;
    *cos_out = cs;
}

}  // namespace m_trig

struct Sin {
    RM_FN static double fast_rel_err() { return F64(0x3D00000000000000); }  // 2^-47
    RM_FN static bool in_fast_domain(float x) { return fabs_f32(x) < m_trig::FAST_LIMIT; }
    RM_FN static double fast(float x) {
        using namespace m_trig;
        uint32_t j;
        double sr, cr;
        fast_parts(x, &j, &sr, &cr);
        double y = sin_hi(j) * cr + sin_hi((j + 32) & 127) * sr;
        return x == 0.0f ? (double)x : y;
    }
    RM_FN static double accurate(float x) {
        if (!is_finite_f32(x)) {
            return F64(0x7FF8000000000000);
        }
        if (x == 0.0f) {
            return (double)x;
        }
        DD s, c;
        m_trig::sincos_dd(x, &s, &c);
        return round_odd(s);
    }
};

struct Cos {
    RM_FN static double fast_rel_err() { return F64(0x3D00000000000000); }  // 2^-47
    RM_FN static bool in_fast_domain(float x) { return fabs_f32(x) < m_trig::FAST_LIMIT; }
    RM_FN static double fast(float x) {
        using namespace m_trig;
        uint32_t j;
        double sr, cr;
        fast_parts(x, &j, &sr, &cr);
        return sin_hi((j + 32) & 127) * cr - sin_hi(j) * sr;
    }
    RM_FN static double accurate(float x) {
        if (!is_finite_f32(x)) {
            return F64(0x7FF8000000000000);
        }
        DD s, c;
        m_trig::sincos_dd(x, &s, &c);
        return round_odd(c);
    }
};

}  // namespace repro
