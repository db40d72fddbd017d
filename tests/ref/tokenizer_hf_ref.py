#!/usr/bin/env python3
"""Reference ids from the Hugging Face `tokenizers` package for poot's
tokenizer tests.

Generates a deterministic set of test strings (random Unicode from many
scripts, whitespace runs, digits, code, special-token text), encodes each
with the given tokenizer.json (no BOS/EOS; once with added/special tokens
split, as `tokenizers` does by default, once with special tokens treated as
text) and writes a JSON array of objects

    {"text": str, "ids": [...], "ids_plain": [...], "nfc": bool}

to OUT. Exits 77 (skip) when `tokenizers` is not installed.

usage: tokenizer_hf_ref.py TOKENIZER_JSON OUT [COUNT]
       tokenizer_hf_ref.py --synthetic NAME TOKENIZER_OUT OUT [COUNT]

The second form first writes a small byte-level tokenizer.json whose ids are
the bytes of the normalized, pre-tokenized text, so that the normalizer NAME
(nfc, nfd, nfkc, nfkd, bert) is compared on its own.
"""
import json
import random
import sys
import unicodedata

try:
    from tokenizers import Tokenizer
except ImportError:
    print("SKIP: the Python package 'tokenizers' is not installed")
    sys.exit(77)

BLOCKS = [
    (0x20, 0x7E), (0xA0, 0xFF), (0x100, 0x17F), (0x370, 0x3FF), (0x400, 0x4FF),
    (0x300, 0x36F), (0x590, 0x5FF), (0x600, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F),
    (0x1100, 0x11FF), (0x3040, 0x30FF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3),
    (0x2000, 0x206F), (0x2190, 0x22FF), (0xFF00, 0xFFEF), (0x1F300, 0x1F6FF),
    (0x1F900, 0x1F9FF), (0xF900, 0xFAFF), (0x10000, 0x1007F),
]
SPACES = [" ", "  ", "\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\u3000", "   \t  "]
WORDS = ["hello", "world", "The", "don't", "I'm", "we'll", "HELLO", "naïve", "café",
         "Äpfel", "Straße", "日本語", "привет", "مرحبا", "नमस्ते", "안녕하세요", "🦙", "x"]
CODE = [
    "def f(x):\n    return x * 2\n",
    "int main(void) {\n\tprintf(\"%d\\n\", 42);\n\treturn 0;\n}\n",
    "for (i = 0; i < n; ++i) a[i] += b[i] >> 3;",
    "    if x != None and y <= 10:\n        pass  # comment\n",
    "<div class=\"a\">&nbsp;</div>",
    "SELECT * FROM t WHERE id = 7;",
    "x = {'a': [1, 2, 3], \"b\": None}",
    "const f = async () => { await g(); };",
    "#include <stdio.h>\n",
    "$ ls -la | grep '^d' > out.txt 2>&1",
]


def rand_char(rng):
    while True:
        lo, hi = rng.choice(BLOCKS)
        c = chr(rng.randint(lo, hi))
        if unicodedata.category(c) in ("Cs", "Cn", "Co") or c in ("\x00", "\u2581"):
            continue
        return c


def gen(rng, specials, count):
    out = ["", " ", "a", "Hello world", " Hello world", "Hello\n\nworld", "1234567890",
           "3.14159 2,718 1e-9 0x1F", "  leading", "trailing  ", "\t\ttabs\t"]
    for s in specials[:4]:
        out.append(s)
        out.append("Hello " + s + " world" + s)
    while len(out) < count:
        kind = rng.randrange(6)
        if kind == 0:
            s = "".join(rand_char(rng) for _ in range(rng.randint(1, 30)))
        elif kind == 1:
            s = "".join(rng.choice(WORDS) + rng.choice(SPACES) for _ in range(rng.randint(1, 8)))
        elif kind == 2:
            s = "".join(rng.choice(["0", "1", "7", "42", "999", "12345", "3.5", ",", " ", "-", "%"])
                        for _ in range(rng.randint(1, 16)))
        elif kind == 3:
            s = "".join(rng.choice(CODE) for _ in range(rng.randint(1, 3)))
        elif kind == 4:
            s = "".join(rng.choice(SPACES) for _ in range(rng.randint(1, 6)))
            s = rng.choice(["", "x"]) + s + rng.choice(["", "y", "\n"])
        else:
            parts = [rng.choice(WORDS), rand_char(rng), rng.choice(SPACES), rng.choice(CODE[:3])]
            if specials and rng.random() < 0.5:
                parts.append(rng.choice(specials))
            rng.shuffle(parts)
            s = "".join(parts)
        out.append(s)
    return out[:count]


def byte_chars():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def synthetic(name, path):
    """A tokenizer.json: one normalizer, a whitespace-keeping pre-tokenizer, byte ids."""
    norms = {
        "nfc": {"type": "NFC"}, "nfd": {"type": "NFD"},
        "nfkc": {"type": "NFKC"}, "nfkd": {"type": "NFKD"},
        "bert": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                 "strip_accents": None, "lowercase": True},
    }
    pre = [{"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
            "use_regex": False}]
    if name == "bert":
        pre.insert(0, {"type": "BertPreTokenizer"})
    chars = byte_chars()
    vocab = {chars[b]: b for b in range(256)}
    tok = {"version": "1.0", "added_tokens": [], "normalizer": norms[name],
           "pre_tokenizer": {"type": "Sequence", "pretokenizers": pre},
           "post_processor": None, "decoder": None,
           "model": {"type": "BPE", "vocab": vocab, "merges": []}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tok, f)


def main():
    args = sys.argv[1:]
    if len(args) >= 4 and args[0] == "--synthetic":
        synthetic(args[1], args[2])
        args = args[2:]
    if len(args) < 2:
        print(__doc__)
        return 2
    path, out_path = args[0], args[1]
    count = int(args[2]) if len(args) > 2 else 300
    tok = Tokenizer.from_file(path)
    with open(path, encoding="utf-8") as f:
        added = json.load(f).get("added_tokens", [])
    specials = [a["content"] for a in added][:6]
    rng = random.Random(20240611)
    cases = []
    texts = gen(rng, specials, count)
    for t in texts:
        tok.encode_special_tokens = False
        ids = tok.encode(t, add_special_tokens=False).ids
        tok.encode_special_tokens = True
        plain = tok.encode(t, add_special_tokens=False).ids
        cases.append({"text": t, "ids": ids, "ids_plain": plain,
                      "nfc": unicodedata.normalize("NFC", t) == t})
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
