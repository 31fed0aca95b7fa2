#!/usr/bin/env python3
"""Plant defects one at a time and report which tests catch each.

A defect is a textual edit of one source file (`find` must occur exactly once; it is
replaced by `replace`), and the tests that should catch it: a list of cargo test
invocations (arguments after `cargo test --release`). For each defect the script applies
the edit, runs its tests in order until one fails (caught), restores the file, and moves
on. A defect no test catches is reported as MISSED, one whose edit does not build as
BUILD-ERROR (a broken entry, not a catch); either makes the script exit 1.

Lists live beside this script as `*.toml` files:

    [[defect]]
    name = "matmul tier-1 bound x1/2 (CPU)"
    file = "core/src/matmul/kernel.rs"
    find = "const TIER1_COEFF: f64 = ..."
    replace = "const TIER1_COEFF: f64 = 0.5 * ..."
    tests = [["--test", "matmul", "tier1"], ["--test", "matmul_cuda_hostcheck"]]

Usage: python3 tools/plant-defects/plant.py [--list FILE.toml ...] [--only SUBSTRING]
       [--markdown OUT.md]
The working tree is restored even on Ctrl-C. Run it on a clean tree: it refuses files with
uncommitted changes, so a failed restore can never lose work.
"""
import argparse
import glob
import os
import subprocess
import sys
import time
import tomllib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def load(paths):
    defects = []
    for p in paths:
        with open(p, "rb") as f:
            data = tomllib.load(f)
        for d in data.get("defect", []):
            d["_list"] = os.path.basename(p)
            defects.append(d)
    return defects


def dirty(path):
    r = subprocess.run(["git", "status", "--porcelain", "--", path], cwd=ROOT,
                       capture_output=True, text=True, check=True)
    return r.stdout.strip() != ""


def run_tests(tests, log):
    """Returns (verdict, which test invocation failed first, seconds). A failure to build
    is not a catch: the edit broke compilation (or the tree is wrong), and no test ran."""
    t0 = time.time()
    for args in tests:
        cmd = ["cargo", "test", "--release", *args]
        r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        log.write(r.stdout)
        log.flush()
        if r.returncode != 0:
            if "error: could not compile" in r.stdout or "error[E" in r.stdout:
                return "BUILD-ERROR", " ".join(args), time.time() - t0
            return "caught", " ".join(args), time.time() - t0
    return "MISSED", None, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="append")
    ap.add_argument("--only")
    ap.add_argument("--markdown")
    ap.add_argument("--log", default="/tmp/plant-defects.log")
    a = ap.parse_args()
    lists = a.list or sorted(glob.glob(os.path.join(os.path.dirname(__file__), "*.toml")))
    defects = load(lists)
    if a.only:
        defects = [d for d in defects if a.only in d["name"]]
    rows = []
    missed = 0
    with open(a.log, "w") as log:
        for d in defects:
            path = os.path.join(ROOT, d["file"])
            if dirty(d["file"]):
                sys.exit(f"{d['file']} has uncommitted changes; commit or stash them first")
            with open(path) as f:
                orig = f.read()
            n = orig.count(d["find"])
            if n != 1:
                rows.append((d["name"], "STALE", f"`find` occurs {n} times in {d['file']}", 0.0))
                missed += 1
                print(f"STALE   {d['name']}: `find` occurs {n} times", flush=True)
                continue
            log.write(f"\n===== {d['name']} =====\n")
            log.flush()
            try:
                with open(path, "w") as f:
                    f.write(orig.replace(d["find"], d["replace"]))
                verdict, by, secs = run_tests(d["tests"], log)
            finally:
                with open(path, "w") as f:
                    f.write(orig)
            if verdict == "caught":
                rows.append((d["name"], "caught", by, secs))
                print(f"caught  {d['name']}  by `{by}`  ({secs:.0f} s)", flush=True)
            else:
                missed += 1
                rows.append((d["name"], verdict, by or "", secs))
                print(f"{verdict}  {d['name']}  ({secs:.0f} s)", flush=True)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("| planted defect | verdict | first failing `cargo test --release` |\n")
            f.write("|---|---|---|\n")
            for name, verdict, by, _ in rows:
                f.write(f"| {name} | {verdict} | {('`' + by + '`') if by else ''} |\n")
    print(f"{len(rows) - missed} of {len(rows)} planted defects caught")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
