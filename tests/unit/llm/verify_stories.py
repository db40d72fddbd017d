#!/usr/bin/env python3
"""`poot verify greedy` on stories260K (llama2.c checkpoint) from the empty
prompt, greedy, 256 steps, must print exactly the text the reference llama2.c
runner printed (the data README's "Expected outputs"). Also checks --ids and
--paged agree with the plain run."""
import os
import subprocess
import sys


def main():
    poot = os.environ.get("POOT")
    data = os.environ.get("POOT_DATA_DIR", "")
    model = os.path.join(data, "models", "stories260K", "stories260K.bin")
    tok = os.path.join(data, "models", "stories260K", "tok512.bin")
    readme = os.path.join(data, "README.md")
    if not poot or not os.path.exists(poot):
        print("SKIP: the poot binary is not built")
        return 77
    for p in (model, tok, readme):
        if not os.path.exists(p):
            print(f"SKIP: {p} is absent")
            return 77
    text = open(readme, encoding="utf-8").read()
    section = text.split("## Expected outputs", 1)[1]
    expected = section.split("```\n", 1)[1].split("```", 1)[0]

    base = [poot, "verify", "greedy", "-m", model, "--tokenizer", tok, "-n", "256"]
    got = subprocess.run(base, capture_output=True, text=True, timeout=300)
    if got.returncode != 0:
        print("poot verify failed:", got.stderr)
        return 1
    if got.stdout != expected:
        print("MISMATCH\nexpected:\n" + expected + "\ngot:\n" + got.stdout)
        return 1
    paged = subprocess.run(base + ["--paged"], capture_output=True, text=True, timeout=300)
    if paged.returncode != 0 or paged.stdout != expected:
        print("paged run differs:", paged.stderr, paged.stdout)
        return 1
    ids = subprocess.run(base + ["--ids"], capture_output=True, text=True, timeout=300)
    if ids.returncode != 0:
        print("--ids failed:", ids.stderr)
        return 1
    toks = [int(t) for t in ids.stdout.split()]
    if len(toks) != 256 or any(t < 0 or t >= 512 for t in toks) or 1 in toks:
        print("--ids: expected 256 ids in [0, 512) without BOS, got", len(toks))
        return 1
    # Bad usage exits 2; a missing tokenizer is a one-line failure (exit 1).
    if subprocess.run([poot, "verify", "greedy"], capture_output=True).returncode != 2:
        print("missing -m should exit 2")
        return 1
    r = subprocess.run([poot, "verify", "greedy", "-m", model], capture_output=True, text=True)
    if r.returncode != 1 or "tokenizer" not in r.stderr:
        print("a llama2.c model without --tokenizer should fail naming the tokenizer:", r.stderr)
        return 1
    if subprocess.run([poot, "verify", "--help"], capture_output=True).returncode != 0:
        print("--help should exit 0")
        return 1
    print("stories260K greedy text matches the reference (256 tokens, contiguous and paged)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
