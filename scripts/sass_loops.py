#!/usr/bin/env python3
"""Registers, spills and the instructions of each loop of PTX kernels.

For every PTX file: `ptxas -arch=ARCH -v` gives registers and spills; with
--nvdisasm (the CUDA disassembler, a path or a name on PATH) the cubin is
disassembled and each loop (a label and the last branch back to it) is
reported with its instruction count and a histogram of opcodes. Without a
disassembler the PTX itself is read (close to SASS for integer and float
arithmetic, but with a mov for every constant, which SASS folds; movs are
left out of the counts).

    scripts/sass_loops.py --nvdisasm nvdisasm DIR/k007_poot_contract.ptx --elems 512

--elems N divides the largest loop's count by N (the weight elements times
rows one lane handles per trip of it: the GEMV's chunks per trip x 64
elements x rows per subgroup x roots), giving instructions per element and
row. Used for docs/PERFORMANCE.md's per-kernel instruction counts.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

SASS_LINE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z0-9_]+)(\.[A-Z0-9_.]+)?")
SASS_LABEL = re.compile(r"^(\.L_x_\d+):")
SASS_BRANCH = re.compile(r"BRA\s+`\((\.L_x_\d+)\)")
PTX_LABEL = re.compile(r"^(\$?L__\w+):")
PTX_INST = re.compile(r"^\s+(@!?%p\d+\s+)?([a-z][a-z0-9_]*)(\.[a-z0-9_.]+)?\s")
PTX_BRANCH = re.compile(r"bra(\.uni)?\s+(\$?L__\w+);")


def ptxas_info(ptxas, arch, ptx, cubin):
    r = subprocess.run([ptxas, f"-arch={arch}", "-v", ptx, "-o", cubin],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{ptx}: ptxas failed:\n{r.stderr}")
    regs = re.search(r"Used (\d+) registers", r.stderr)
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", r.stderr)
    return (int(regs.group(1)) if regs else -1,
            (int(spill.group(1)) + int(spill.group(2))) if spill else 0)


def loops(lines, label_re, inst_fn, branch_re):
    """[(label, [opcodes])] for every label some later branch jumps back to,
    the body reaching the last such branch."""
    insts, labels, back = [], {}, {}
    for line in lines:
        m = label_re.match(line)
        if m:
            labels[m.group(1)] = len(insts)
            continue
        op = inst_fn(line)
        if op is None:
            continue
        insts.append(op)
        b = branch_re.search(line)
        if b:
            name = b.group(b.lastindex)
            if name in labels:
                back[name] = len(insts)
    return [(name, insts[labels[name]:end]) for name, end in back.items()], insts


def sass_op(line):
    m = SASS_LINE.match(line)
    return m.group(3) if m else None


def ptx_op(line):
    m = PTX_INST.match(line)
    if not m or m.group(2) == "mov":
        return None
    return m.group(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ptx", nargs="+")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--ptxas", default="ptxas")
    ap.add_argument("--nvdisasm", help="the CUDA disassembler (SASS counts)")
    ap.add_argument("--elems", type=int, help="element-rows per trip of the largest loop")
    ap.add_argument("--top", type=int, default=12, help="opcodes shown per loop")
    a = ap.parse_args()
    dis = shutil.which(a.nvdisasm) if a.nvdisasm else None
    if a.nvdisasm and not dis:
        sys.exit(f"no disassembler at {a.nvdisasm}")
    with tempfile.TemporaryDirectory() as tmp:
        for ptx in a.ptx:
            cubin = os.path.join(tmp, "k.cubin")
            regs, spill = ptxas_info(a.ptxas, a.arch, ptx, cubin)
            if dis:
                text = subprocess.run([dis, "-c", cubin], capture_output=True, text=True,
                                      check=True).stdout.splitlines()
                ls, allv = loops(text, SASS_LABEL, sass_op, SASS_BRANCH)
                kind = "SASS"
            else:
                text = open(ptx).read().splitlines()
                ls, allv = loops(text, PTX_LABEL, ptx_op, PTX_BRANCH)
                kind = "PTX (movs left out)"
            print(f"{os.path.basename(ptx)}: {regs} registers, {spill} bytes spilled, "
                  f"{len(allv)} {kind} instructions")
            ls.sort(key=lambda x: -len(x[1]))
            for i, (name, body) in enumerate(ls):
                if len(body) < 32:
                    continue
                hist = collections.Counter(body).most_common(a.top)
                per = ""
                if i == 0 and a.elems:
                    per = f", {len(body) / a.elems:.2f} per element-row"
                print(f"  loop {name}: {len(body)} instructions{per}")
                print("    " + " ".join(f"{op} {n}" for op, n in hist))


if __name__ == "__main__":
    main()
