#!/usr/bin/env python3
"""Randomized differential check of poot's chat templates against jinja2.

Generates conversations from a fixed seed — random roles and turn counts,
content built from awkward pieces (whitespace runs, \\r\\n, U+2028, emoji,
Jinja-looking text, quotes, backslashes, special tokens), content parts,
reasoning content, tool calls with object or string arguments, tool results,
tool lists, enable_thinking — renders each through every template of
$POOT_DATA_DIR/chat-templates with and without the generation prompt, with
jinja2 (transformers' setup) and with `poot template`, and compares bytes.

Usage: template_random_ref.py [SEED [COUNT]]   (default 20260101, 8)
Exit 0 all match, 1 a mismatch, 77 skipped.
"""
import concurrent.futures
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from template_ref import BOS, EOS, NOW, jinja_render, make_env  # noqa: E402

PIECES = ["hello", " ", "\n", "\t", "  ", "é", "😀", "{{ x }}", "{%", "'", '"', "\\", "<think>",
          "</think>", "<tool_call>", "a" * 50, "\u2028", "\x0b", " trailing ", "\r\n", "```",
          "日本", "<|im_end|>", "0", "-1", "None", "true"]


def make_conversation(rng):
    def text():
        return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6)))

    msgs = []
    if rng.random() < 0.5:
        msgs.append({"role": "system", "content": text()})
    for i in range(rng.randint(0, 5)):
        content = text() if rng.random() < 0.9 else [{"type": "text", "text": text()}]
        msgs.append({"role": "user", "content": content})
        if rng.random() < 0.8:
            m = {"role": "assistant", "content": text()}
            if rng.random() < 0.3:
                m["reasoning_content"] = text()
            if rng.random() < 0.2:
                args = rng.choice([{"a": text(), "n": rng.randint(-5, 5), "x": rng.random()},
                                   json.dumps({"a": text()})])
                m["tool_calls"] = [{"id": f"c{i}", "type": "function",
                                    "function": {"name": "f", "arguments": args}}]
                msgs.append(m)
                msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": text()})
                continue
            msgs.append(m)
    v = {"messages": msgs}
    if rng.random() < 0.3:
        v["enable_thinking"] = rng.random() < 0.5
    if rng.random() < 0.3:
        v["tools"] = [{"type": "function", "function": {
            "name": "f", "description": text(),
            "parameters": {"type": "object", "properties": {
                "a": {"type": "string", "description": text()}, "n": {"type": "integer"}},
                "required": ["a"]}}}]
    return v


def poot_render(poot, tpath, cpath, agp):
    cmd = [poot, "template", "--template", tpath, "--messages", cpath, "--bos", BOS, "--eos", EOS,
           "--now", str(NOW), "--add-generation-prompt" if agp else "--no-generation-prompt"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace").strip()


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 20260101
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    poot = os.environ.get("POOT")
    try:
        env = make_env()
    except ImportError:
        print("SKIP: the jinja2 Python package is not installed")
        return 77
    if not poot or not os.path.exists(poot):
        print("SKIP: the poot binary was not given (POOT)")
        return 77
    templates = sorted(glob.glob(os.path.join(os.environ.get("POOT_DATA_DIR", ""),
                                              "chat-templates", "*.jinja")))
    if not templates:
        print("SKIP: no chat templates under $POOT_DATA_DIR/chat-templates")
        return 77
    rng = random.Random(seed)
    bad = renders = 0
    with tempfile.TemporaryDirectory() as tmp:
        convs = []
        for k in range(count):
            path = os.path.join(tmp, f"conv{k}.json")
            v = make_conversation(rng)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(v, f, ensure_ascii=False)
            convs.append((path, v))
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
        futs = {(t, c, agp): pool.submit(poot_render, poot, t, c, agp)
                for t in templates for c, _ in convs for agp in (False, True)}
        for tpath in templates:
            with open(tpath, "rb") as f:
                source = f.read().decode("utf-8")
            name = os.path.basename(tpath)
            for cpath, v in convs:
                for agp in (False, True):
                    renders += 1
                    ok, ref = jinja_render(env, source, dict(v, bos_token=BOS, eos_token=EOS,
                                                             add_generation_prompt=agp))
                    rc, out, err = futs[(tpath, cpath, agp)].result()
                    case = f"{name} {os.path.basename(cpath)} agp={agp}"
                    if not ok:
                        if rc == 0:
                            bad += 1
                            print(f"FAIL {case}: jinja2 raised ({ref[:120]}) but poot rendered")
                    elif rc != 0:
                        bad += 1
                        print(f"FAIL {case}: poot failed: {err[:200]}")
                    elif out != ref.encode("utf-8"):
                        bad += 1
                        want = ref.encode("utf-8")
                        i = next((k for k in range(min(len(out), len(want))) if out[k] != want[k]),
                                 min(len(out), len(want)))
                        print(f"FAIL {case}: differs at byte {i}: jinja2 "
                              f"{want[max(0, i - 30):i + 30]!r} poot {out[max(0, i - 30):i + 30]!r}")
                        print(f"     conversation: {json.dumps(v, ensure_ascii=False)[:400]}")
        pool.shutdown()
    print(f"random conversations (seed {seed}, {count}): {renders - bad}/{renders} renders agree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
