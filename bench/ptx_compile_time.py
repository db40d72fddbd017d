#!/usr/bin/env python3
"""Where a model's first compile on the PTX device goes, offline: poot's own
host time per entry, and the CUDA driver's JIT (ptxas) time per kernel.

    ptx_compile_time.py --poot build/tools/poot --fake build/fakecuda -m MODEL
                        [--ptxas ptxas] [--bench-args "-p 512 -n 64"] [--out DIR]
                        [--json FILE]

Runs `poot bench --device ptx` against the test suite's fake libcuda.so.1
(tests/unit/devices/ptx_fake_cuda.c), which writes every module the device
loads to a folder (POOT_FAKECUDA_PTX_DIR): the kernels the driver JITs for the
entries (decode and the prefill ladder), except that the fake has no
cuLaunchKernelEx, so each lacks the one griddepcontrol.wait a CUDA 12.3+
driver's modules have. The engine's INFO lines give each entry's host time
(plan and buffers, kernels) and how many of its kernels were new to the
device. Then each module is assembled with `ptxas -arch=sm_90 -O3` (what the
driver's JIT runs), one at a time, and its CPU time (user + system of the
child) is taken. Prints a Markdown table per entry, the slowest kernels, the
sum, and modules whose text repeats once the header comment (name and hash)
is dropped; --json writes every module's figures.
"""
import argparse
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ENTRY_RE = re.compile(r"engine: (\d+) of (\d+) kernels compiled for .* in ([\d.]+) ms")
PLAN_RE = re.compile(r"engine: plan of (\d+) dispatches, (\d+) kernels: plan and buffers "
                     r"([\d.]+) ms, kernels ([\d.]+) ms, record ([\d.]+) ms")


def ptxas_seconds(ptxas, path, arch):
    """CPU seconds (user + system) of one ptxas run, and its cubin's size."""
    cubin = path + ".cubin"
    t0 = time.monotonic()
    pid = os.spawnvp(os.P_NOWAIT, ptxas, [ptxas, f"-arch={arch}", "-O3", path, "-o", cubin])
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"ptx_compile_time: ptxas failed on {path}")
    size = os.path.getsize(cubin)
    os.unlink(cubin)
    return ru.ru_utime + ru.ru_stime, wall, size


def body_hash(text):
    """The module's hash without its header comment (kernel name and hash)."""
    lines = text.split("\n")
    return hashlib.sha256("\n".join(lines[3:]).encode()).hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--poot", required=True)
    ap.add_argument("--fake", required=True, help="folder of the fake libcuda.so.1")
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--ptxas", default="ptxas")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--bench-args", default="-p 512 -n 64")
    ap.add_argument("--out", help="keep the modules here (default: a temporary folder)")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--json", help="also write every module's figures here")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="poot-ptx-")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".ptx"):
            os.unlink(os.path.join(out, f))
    env = dict(os.environ, LD_LIBRARY_PATH=a.fake, POOT_FAKECUDA_PTX_DIR=out,
               POOT_PTX_COMPILE_THREADS="1")
    cmd = [a.poot, "bench", "-m", a.model, "--device", "ptx", "--copy-mib", "0", "-v",
           *shlex.split(a.bench_args)]
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit(f"ptx_compile_time: {' '.join(cmd)} failed:\n{r.stdout[-3000:]}")
    entries, pending = [], None
    for line in r.stdout.splitlines():
        m = ENTRY_RE.search(line)
        if m:
            pending = (int(m.group(1)), int(m.group(2)))
            continue
        m = PLAN_RE.search(line)
        if m:
            new, total = pending if pending else (0, int(m.group(2)))
            entries.append({"dispatches": int(m.group(1)), "kernels": int(m.group(2)),
                            "new": new, "plan_ms": float(m.group(3)),
                            "kernels_ms": float(m.group(4))})
            pending = None
    cap = [ln for ln in r.stdout.splitlines() if ln.startswith("compile+capture")]
    files = sorted(f for f in os.listdir(out) if f.endswith(".ptx"))
    if sum(e["new"] for e in entries) != len(files):
        sys.exit(f"ptx_compile_time: {len(files)} modules but the log counts "
                 f"{sum(e['new'] for e in entries)}:\n{r.stdout[-3000:]}")
    # The entries as poot_driver_prepare makes them: decode, then the rungs.
    rows, at, bodies = [], 0, {}
    for i, e in enumerate(entries):
        ks = []
        for f in files[at:at + e["new"]]:
            p = os.path.join(out, f)
            text = open(p).read()
            cpu, wall, cubin = ptxas_seconds(a.ptxas, p, a.arch)
            name = f[5:-4]
            ks.append({"file": f, "name": name, "bytes": len(text), "cpu": cpu, "wall": wall,
                       "cubin": cubin})
            bodies.setdefault(body_hash(text), []).append(f)
        at += e["new"]
        e["ks"] = ks
        rows.append(e)
    print(f"model {a.model}; `poot bench {a.bench_args}`; {cap[0] if cap else ''}")
    print()
    print("| entry | dispatches | kernels | new to the device | host plan + buffers (ms) "
          "| host render + load (ms) | ptxas CPU (s) | largest kernel (s) |")
    print("| --- | --: | --: | --: | --: | --: | --: | --: |")
    total = 0.0
    for i, e in enumerate(rows):
        s = sum(k["cpu"] for k in e["ks"])
        big = max((k["cpu"] for k in e["ks"]), default=0.0)
        total += s
        print(f"| {i} | {e['dispatches']} | {e['kernels']} | {e['new']} | {e['plan_ms']:.1f} "
              f"| {e['kernels_ms']:.1f} | {s:.2f} | {big:.2f} |")
    print(f"\nptxas CPU in all: {total:.2f} s over {len(files)} modules")
    allk = [(k, i) for i, e in enumerate(rows) for k in e["ks"]]
    allk.sort(key=lambda x: -x[0]["cpu"])
    print(f"\n| kernel (entry) | PTX bytes | cubin bytes | ptxas CPU (s) |")
    print("| --- | --: | --: | --: |")
    for k, i in allk[:a.top]:
        print(f"| {k['file']} ({i}) | {k['bytes']:,} | {k['cubin']:,} | {k['cpu']:.2f} |")
    dup = [v for v in bodies.values() if len(v) > 1]
    print(f"\nmodules whose text repeats apart from the header: {len(dup)}")
    for v in dup:
        print("  " + " ".join(v))
    print(f"\nmodules in {out}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
