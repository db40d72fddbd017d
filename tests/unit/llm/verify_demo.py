#!/usr/bin/env python3
"""Tier 3 for the bundled demo model: `poot verify greedy` on models/poot-demo.gguf
against Hugging Face transformers' greedy ids (tests/data/demo/poot-demo.json, made
by scripts/reference/hf_greedy.py on the model's Hugging Face export with its 2-D
weights rounded to f16 as the GGUF stores them). Identical prompt ids; identical
greedy ids except where the reference's top-two margin is inside the tier-2
flip tolerance of docs/verification.md (then the flip is reported and the
comparison of that case stops)."""
import json
import os
import subprocess
import sys
import tempfile

FLIP_TOL = 5e-3  # 2 x the f32 logit tolerance of this model (docs/verification.md)


def main():
    src = os.environ.get("POOT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    poot = os.environ.get("POOT")
    if not poot:
        print("SKIP: POOT (the poot binary) is not set")
        return 77
    model = os.path.join(src, "models", "poot-demo.gguf")
    ref = json.load(open(os.path.join(src, "tests", "data", "demo", "poot-demo.json"), encoding="utf-8"))
    ok = True
    for case in ref["cases"]:
        n = len(case["greedy_ids"])
        cmd = [poot, "verify", "greedy", "-m", model, "-n", str(n), "--ids", "--ignore-eos"]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            msgs = f.name
            json.dump(case.get("messages", []), f)
        try:
            if case["chat"]:
                cmd += ["--messages", msgs]
            else:
                cmd += ["-p", case["prompt"]]
                tok = subprocess.run([poot, "tokenize", "-m", model], input=case["prompt"],
                                     capture_output=True, text=True, timeout=60)
                got = [int(x) for x in tok.stdout.split()]
                if got != case["prompt_ids"]:
                    print("FAIL %r: prompt ids %s, transformers %s" % (case["prompt"], got, case["prompt_ids"]))
                    ok = False
                    continue
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        finally:
            os.unlink(msgs)
        if r.returncode != 0:
            print("FAIL %r: poot verify exited %d: %s" % (case["prompt"], r.returncode, r.stderr.strip()))
            ok = False
            continue
        ids = [int(x) for x in r.stdout.split()]
        want = case["greedy_ids"]
        for i, w in enumerate(want):
            g = ids[i] if i < len(ids) else None
            if g == w:
                continue
            m = case["margins"][i]
            if m <= FLIP_TOL:
                print("flip %r at step %d: poot %s, transformers %d, margin %.4g (inside %.g)"
                      % (case["prompt"][:30], i, g, w, m, FLIP_TOL))
            else:
                print("FAIL %r at step %d: poot %s, transformers %d, margin %.4g"
                      % (case["prompt"][:30], i, g, w, m))
                ok = False
            break
        else:
            print("ok   %r: %d ids identical" % (case["prompt"][:30], len(want)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
