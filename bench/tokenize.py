#!/usr/bin/env python3
"""Benchmark (not a test): tokenize ~1 MB of mixed text with the Llama 3
vocabulary, by poot and by the Python `tokenizers` package, on the same input.

usage: bench/tokenize.py [--poot PATH] [--data DIR] [--mb 1.0] [--repeat 5]

poot is timed through `poot tokenize --timing`, which reports the time of
loading the vocabulary and of the encode call alone (best of --repeat runs). `tokenizers` is timed on Tokenizer.encode() of the
same string (the reference runs single-threaded on one string). Both must give
the same ids; the script says so.
"""
import argparse
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def make_text(nbytes, seed=7):
    rng = random.Random(seed)
    words = ("the of and to in is was that for on with as by at from his her they be this "
             "have not are but had one all were when we there can been has more if will "
             "would who so no out up said what its about into than them only other new "
             "some could time these two may first then do any like my now over such our "
             "man me even most made after also did many before must through back years "
             "where much your way well down should because each just those people Mr how "
             "too little state good very make world still own see men work long get here "
             "between both life being under never day same another know while last").split()
    code = ["def f(x, y=3):\n    return {'a': x ** 2, \"b\": [y, None]}\n",
            "for (int i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];\n}\n",
            "if err != nil {\n        return fmt.Errorf(\"open %s: %w\", path, err)\n}\n",
            "<li class=\"item\"><a href=\"/x?id=42&amp;p=7\">next &raquo;</a></li>\n"]
    intl = ["Grüße aus München, schöne Straße. ", "Ceci n'est pas une pipe — voilà! ",
            "日本語のテキストを少し。", "这是一个中文句子，包含标点。", "Привет, как дела? ",
            "مرحبا بالعالم ", "नमस्ते दुनिया ", "안녕하세요 세계 ", "🦙🚀✅ emoji 👍🏽 ",
            "Ελληνικά γράμματα. "]
    out, size = [], 0
    while size < nbytes:
        r = rng.random()
        if r < 0.6:
            n = rng.randint(8, 30)
            s = " ".join(rng.choice(words) for _ in range(n))
            s = s[0].upper() + s[1:] + rng.choice([". ", ", ", "! ", "? ", ".\n\n", ";\n"])
        elif r < 0.75:
            s = rng.choice(code)
        elif r < 0.9:
            s = rng.choice(intl)
        else:
            s = " ".join(str(rng.randint(0, 10 ** rng.randint(1, 9))) for _ in range(rng.randint(1, 6)))
            s += rng.choice(["  ", "\t", "\n", "    \n"])
        out.append(s)
        size += len(s.encode("utf-8"))
    return "".join(out)


def run_poot(poot, model, path):
    """Returns (load seconds, encode seconds, stdout)."""
    with open(path, "rb") as f:
        r = subprocess.run([poot, "tokenize", "-m", model, "--no-bos", "--timing"], stdin=f,
                           capture_output=True, check=True)
    words = r.stderr.decode().split()
    return float(words[words.index("load") + 1]), float(words[words.index("encode") + 1]), r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--poot", default=os.environ.get("POOT", os.path.join(HERE, "..", "build", "tools", "poot")))
    ap.add_argument("--data", default=os.environ.get("POOT_DATA_DIR", os.path.join(HERE, "..", "..", "shared", "data")))
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", default="/tmp")
    a = ap.parse_args()
    model = os.path.join(a.data, "hf-tokenizers", "llama3", "tokenizer.json")
    gguf = os.path.join(a.data, "vocab", "ggml-vocab-llama-bpe.gguf")
    text = make_text(int(a.mb * 1e6))
    data = text.encode("utf-8")
    mb = len(data) / 1e6
    path = os.path.join(a.workdir, "poot-bench-tokenize.txt")
    with open(path, "wb") as f:
        f.write(data)
    print(f"input: {len(data)} bytes of mixed text (prose, code, 9 scripts, emoji, digits)")

    try:
        from tokenizers import Tokenizer
        import tokenizers
        hf_version = tokenizers.__version__
    except ImportError:
        Tokenizer = None
        print("tokenizers is not installed: no reference timings")

    # (label, poot inputs, tokenizer.json for the reference); the first is the
    # benchmark proper, the others are for context.
    suites = [
        ("Llama 3", [("tokenizer.json", model), ("GGUF", gguf)], model),
        ("Qwen3 / Qwen2", [("tokenizer.json", os.path.join(a.data, "hf-tokenizers", "qwen3")),
                           ("GGUF", os.path.join(a.data, "vocab", "ggml-vocab-qwen2.gguf"))],
         os.path.join(a.data, "hf-tokenizers", "qwen3", "tokenizer.json")),
        ("SentencePiece (Llama 2 style)",
         [("tokenizer.json", os.path.join(a.data, "hf-tokenizers", "llama2")),
          ("GGUF llama-spm", os.path.join(a.data, "vocab", "ggml-vocab-llama-spm.gguf"))],
         os.path.join(a.data, "hf-tokenizers", "llama2", "tokenizer.json")),
    ]
    ok = True
    for label, inputs, ref_json in suites:
        print(f"== {label}")
        results = {}
        for name, m in inputs:
            runs = [run_poot(a.poot, m, path) for _ in range(a.repeat)]
            load = min(r[0] for r in runs)
            enc = min(r[1] for r in runs)
            ids = [int(x) for x in runs[0][2].split()]
            results[name] = ids
            print(f"poot ({name}): {len(ids)} tokens, load {load:.3f} s, "
                  f"encode {enc:.3f} s = {mb / enc:.1f} MB/s")
        if Tokenizer is None:
            continue
        tok = Tokenizer.from_file(ref_json)
        best = None
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            ref = tok.encode(text, add_special_tokens=False).ids
            t = time.perf_counter() - t0
            best = t if best is None else min(best, t)
        print(f"tokenizers {hf_version} (Python): {len(ref)} tokens, encode {best:.3f} s "
              f"= {mb / best:.1f} MB/s")
        # For context: the same text as a batch of lines, which tokenizers
        # spreads over all cores (the ids differ slightly at line ends).
        lines = text.splitlines(keepends=True)
        bbest = None
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            tok.encode_batch(lines, add_special_tokens=False)
            t = time.perf_counter() - t0
            bbest = t if bbest is None else min(bbest, t)
        print(f"tokenizers {hf_version} (Python), encode_batch of {len(lines)} lines on "
              f"{os.cpu_count()} cores: {bbest:.3f} s = {mb / bbest:.1f} MB/s")
        same = ref == results["tokenizer.json"]
        ok = ok and same
        print("ids identical to tokenizers (tokenizer.json):", same)
        if label != "SentencePiece (Llama 2 style)":  # a different vocabulary from llama-spm
            print("ids identical, tokenizer.json and GGUF:",
                  results["tokenizer.json"] == results[inputs[1][0]])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
