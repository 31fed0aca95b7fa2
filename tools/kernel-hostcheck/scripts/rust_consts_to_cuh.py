#!/usr/bin/env python3
"""Print the constants and tables of a core/src/math/<family>.rs file as C++ for the CUDA
mirror under kernels/math/, so the mirror's constants are the Rust bit patterns by
construction:

  const NAME: f64 = f64::from_bits(0x...);      -> constexpr double NAME = <hex float>;
  const NAME: DD = DD::from_bits(0x..., 0x...);  -> RM_FN DD NAME() { ... }
  static/const NAME: [u64; N] / [(u64, u64); N] / [f64; N] of from_bits
                                                 -> RM_DEFINE_TABLE(uint64_t, NAME, {...})
                                                    (pairs flattened: [i].0 -> [2i])
  static/const NAME: [[u64; K]; N]               -> the same, rows flattened: [i][k] -> [K i + k]
Usage: rust_consts_to_cuh.py core/src/math/exp.rs
"""
import re
import struct
import sys


def hexfloat(bits):
    v = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if v != v or v in (float("inf"), float("-inf")):
        return None
    return v.hex()


def scalar(bits):
    h = hexfloat(bits)
    return h if h is not None else f"F64(0x{bits:016X})"


src = open(sys.argv[1]).read()
src_nocomments = re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", src), flags=re.S)
out = []
for m in re.finditer(
    r"(?:pub(?:\(crate\))?\s+)?const\s+(\w+)\s*:\s*f64\s*=\s*f64::from_bits\(\s*(0x[0-9A-Fa-f_]+|\d+)\s*\)\s*;",
    src_nocomments,
):
    name, bits = m.group(1), int(m.group(2).replace("_", ""), 0)
    h = hexfloat(bits)
    if h is None:
        out.append(f"#define {name} F64(0x{bits:016X})")
    else:
        out.append(f"constexpr double {name} = {h};  // 0x{bits:016X}")
for m in re.finditer(
    r"(?:pub(?:\(crate\))?\s+)?const\s+(\w+)\s*:\s*DD\s*=\s*DD::from_bits\(\s*(0x[0-9A-Fa-f_]+)\s*,\s*(0x[0-9A-Fa-f_]+)\s*,?\s*\)\s*;",
    src_nocomments,
):
    name = m.group(1)
    hi, lo = (int(m.group(i).replace("_", ""), 16) for i in (2, 3))
    out.append(
        f"RM_FN DD {name}() {{ return DD::make({scalar(hi)}, {scalar(lo)}); }}"
        f"  // 0x{hi:016X}, 0x{lo:016X}"
    )
for m in re.finditer(
    r"(?:pub(?:\(crate\))?\s+)?const\s+(\w+)\s*:\s*f32\s*=\s*f32::from_bits\(\s*(0x[0-9A-Fa-f_]+)\s*\)\s*;",
    src_nocomments,
):
    name, bits = m.group(1), int(m.group(2).replace("_", ""), 16)
    v = struct.unpack("<f", struct.pack("<I", bits))[0]
    out.append(f"constexpr float {name} = {v.hex()}f;  // 0x{bits:08X}")
for m in re.finditer(
    r"(?:pub(?:\(crate\))?\s+)?const\s+(\w+)\s*:\s*(u64|u32|i64|i32)\s*=\s*(0x[0-9A-Fa-f_]+|\d+)\s*;",
    src_nocomments,
):
    name, ty, v = m.group(1), m.group(2), int(m.group(3).replace("_", ""), 0)
    cty = {"u64": "uint64_t", "u32": "uint32_t", "i64": "int64_t", "i32": "int32_t"}[ty]
    suffix = {"u64": "ULL", "u32": "u", "i64": "LL", "i32": ""}[ty]
    out.append(f"constexpr {cty} {name} = 0x{v:X}{suffix};")
for m in re.finditer(
    r"(?:pub(?:\(crate\))?\s+)?const\s+(\w+)\s*:\s*DD\s*=\s*DD::new\(\s*f64::from_bits\(\s*(0x[0-9A-Fa-f_]+)\s*\)\s*,\s*f64::from_bits\(\s*(0x[0-9A-Fa-f_]+)\s*\)\s*,?\s*\)\s*;",
    src_nocomments,
):
    name = m.group(1)
    hi, lo = (int(m.group(i).replace("_", ""), 16) for i in (2, 3))
    out.append(
        f"RM_FN DD {name}() {{ return DD::make({scalar(hi)}, {scalar(lo)}); }}"
        f"  // 0x{hi:016X}, 0x{lo:016X}"
    )
for m in re.finditer(
    r"(?:pub(?:\(crate\))?\s+)?(?:static|const)\s+(\w+)\s*:\s*\[\s*\[\s*u64\s*;\s*(\d+)\s*\]\s*;\s*(\d+)\s*\]\s*=\s*\[(.*?)\]\s*;",
    src_nocomments,
    re.S,
):
    # A table of rows, [[u64; K]; N]: flattened, [i][k] -> [K i + k], one row per line.
    name, k, n, body = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
    nums = [int(x.replace("_", ""), 16) for x in re.findall(r"0x[0-9A-Fa-f_]+", body)]
    assert len(nums) == n * k, (name, len(nums), n, k)
    rows = []
    for i in range(0, len(nums), k):
        rows.append("    " + ", ".join(f"0x{v:016X}ULL" for v in nums[i : i + k]) + ",")
    out.append(f"RM_DEFINE_TABLE(uint64_t, {name}, {{\n" + "\n".join(rows) + "\n})")
for m in re.finditer(
    r"(?:pub(?:\(crate\))?\s+)?(?:static|const)\s+(\w+)\s*:\s*\[\s*([^;\]]+?)\s*;\s*(\d+)\s*\]\s*=\s*\[(.*?)\]\s*;",
    src_nocomments,
    re.S,
):
    name, elem, n, body = m.group(1), m.group(2), int(m.group(3)), m.group(4)
    nums = [int(x.replace("_", ""), 0) for x in re.findall(r"0x[0-9A-Fa-f_]+|\b\d+\b", body)]
    if "from_bits" not in body and elem.strip() not in ("u64", "(u64, u64)", "(u64,u64)"):
        print(f"// skipped table {name}: element type {elem}", file=sys.stderr)
        continue
    per = 2 if elem.replace(" ", "") in ("(u64,u64)", "DD") else 1
    assert len(nums) == n * per, (name, len(nums), n, per)
    rows = []
    for i in range(0, len(nums), per):
        rows.append("    " + ", ".join(f"0x{v:016X}ULL" for v in nums[i : i + per]) + ",")
    out.append(f"RM_DEFINE_TABLE(uint64_t, {name}, {{\n" + "\n".join(rows) + "\n})")
print("\n".join(out))
