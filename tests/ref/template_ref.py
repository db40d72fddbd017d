#!/usr/bin/env python3
"""Reference check for poot's chat templates.

Renders every template of $POOT_DATA_DIR/chat-templates with every conversation
of tests/data/template/*.json, with and without the generation prompt, twice:
with Python jinja2 set up exactly as Hugging Face transformers sets it up
(ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, its
own tojson / raise_exception / strftime_now, the {% generation %} tag), and
with `poot template`. The bytes must be identical; where jinja2 raises (a
template rejecting a conversation shape), poot must fail too.

Usage: template_ref.py [--poot PATH] [--data DIR] [--verbose] [TEMPLATE-SUBSTRING...]
Exit: 0 all match, 1 a mismatch, 77 skipped (no jinja2, no data or no poot).
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
from datetime import datetime, timezone

# strftime_now() is fixed to this instant on both sides so that the output is
# deterministic: 2025-03-14 15:09:26 UTC.
NOW = 1741964966
BOS = "<s>"
EOS = "</s>"

# Templates known not to match, with the reason (kept in step with
# docs/chat-templates.md). Empty when all match.
KNOWN_MISMATCHES = {}


def make_env():
    import jinja2
    from jinja2.ext import Extension
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class GenerationTag(Extension):
        # transformers' AssistantTracker: {% generation %} renders its body.
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

        def _render(self, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.fromtimestamp(NOW, timezone.utc).strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


_compiled = {}


def jinja_render(env, source, variables):
    """Returns (ok, text_or_error)."""
    try:
        if source not in _compiled:
            _compiled[source] = env.from_string(source)
        tpl = _compiled[source]
    except Exception as e:  # syntax errors: poot must reject the template too
        return False, f"{type(e).__name__}: {e}"
    # transformers passes these explicitly (tools/documents None by default).
    ctx = {"tools": None, "documents": None, "add_generation_prompt": False}
    ctx.update(variables)
    try:
        return True, tpl.render(**ctx)
    except Exception as e:
        return False, f"{type(e).__name__}: {e}"


def poot_render(poot, template_path, conv_path, agp):
    cmd = [poot, "template", "--template", template_path, "--messages", conv_path,
           "--bos", BOS, "--eos", EOS, "--now", str(NOW),
           "--add-generation-prompt" if agp else "--no-generation-prompt"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace").strip()


def gguf_template(path):
    """(template, bos, eos) of a GGUF file, or None when it has no chat template.
    A minimal reader of the GGUF key/value section (v2/v3, little-endian),
    written from the format description; the gguf package is far too slow on
    vocabularies of 150k tokens for a test."""
    import struct

    with open(path, "rb") as f:
        data = f.read()
    if b"tokenizer.chat_template" not in data:
        return None
    magic, version = struct.unpack_from("<4sI", data, 0)
    if magic != b"GGUF" or version not in (2, 3):
        return None
    pos = 8
    n_tensors, n_kv = struct.unpack_from("<QQ", data, pos)
    pos += 16
    scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
              10: "<Q", 11: "<q", 12: "<d"}

    def read_str(pos):
        (n,) = struct.unpack_from("<Q", data, pos)
        return data[pos + 8:pos + 8 + n], pos + 8 + n

    def read_value(vtype, pos, keep):
        if vtype in scalar:
            fmt = scalar[vtype]
            return struct.unpack_from(fmt, data, pos)[0], pos + struct.calcsize(fmt)
        if vtype == 8:
            return read_str(pos)
        if vtype == 9:
            etype, count = struct.unpack_from("<IQ", data, pos)
            pos += 12
            items = []
            for _ in range(count):
                v, pos = read_value(etype, pos, keep)
                if keep:
                    items.append(v)
            return items, pos
        raise ValueError(f"bad GGUF value type {vtype}")

    kv = {}
    for _ in range(n_kv):
        key, pos = read_str(pos)
        (vtype,) = struct.unpack_from("<I", data, pos)
        pos += 4
        key = key.decode("utf-8")
        keep = key in ("tokenizer.chat_template", "tokenizer.ggml.tokens",
                       "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id")
        value, pos = read_value(vtype, pos, keep)
        if keep:
            kv[key] = value
    if "tokenizer.chat_template" not in kv:
        return None
    tokens = kv.get("tokenizer.ggml.tokens", [])

    def token(key):
        i = kv.get(key)
        return tokens[i].decode("utf-8") if i is not None and i < len(tokens) else None

    return (kv["tokenizer.chat_template"].decode("utf-8"), token("tokenizer.ggml.bos_token_id"),
            token("tokenizer.ggml.eos_token_id"))


def check_models(env, poot, data_dir, convs):
    """`poot template -m MODEL.gguf` against jinja2 on the template, BOS and EOS
    strings read from the file independently. Returns (models checked, problems)."""
    problems, checked = [], 0
    for path in sorted(glob.glob(os.path.join(data_dir or "", "vocab", "*.gguf"))):
        info = gguf_template(path)
        if info is None:
            continue
        checked += 1
        source, bos, eos = info
        for cpath in convs:
            with open(cpath, encoding="utf-8") as f:
                data = json.load(f)
            variables = {"messages": data} if isinstance(data, list) else dict(data)
            if bos is not None:
                variables["bos_token"] = bos
            if eos is not None:
                variables["eos_token"] = eos
            variables["add_generation_prompt"] = True
            ok, ref = jinja_render(env, source, variables)
            cmd = [poot, "template", "-m", path, "--messages", cpath, "--now", str(NOW),
                   "--add-generation-prompt"]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            case = f"{os.path.basename(path)} {os.path.basename(cpath)}"
            if not ok:
                if p.returncode == 0:
                    problems.append(f"{case}: jinja2 raised ({ref}) but poot rendered")
            elif p.returncode != 0:
                problems.append(f"{case}: poot failed: {p.stderr.decode(errors='replace').strip()}")
            elif p.stdout != ref.encode("utf-8"):
                problems.append(f"{case}: output differs: jinja2 {ref[:120]!r} poot {p.stdout[:120]!r}")
    return checked, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--poot", default=os.environ.get("POOT"))
    ap.add_argument("--data", default=os.environ.get("POOT_DATA_DIR"))
    ap.add_argument("--convs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "..", "data", "template"))
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("only", nargs="*")
    args = ap.parse_args()
    try:
        env = make_env()
    except ImportError:
        print("SKIP: the jinja2 Python package is not installed")
        return 77
    if not args.poot or not os.path.exists(args.poot):
        print("SKIP: the poot binary was not given (POOT)")
        return 77
    tdir = os.path.join(args.data or "", "chat-templates")
    templates = sorted(glob.glob(os.path.join(tdir, "*.jinja")))
    if not templates:
        print(f"SKIP: no chat templates under {tdir}")
        return 77
    if args.only:
        templates = [t for t in templates if any(o in os.path.basename(t) for o in args.only)]
    convs = sorted(glob.glob(os.path.join(args.convs, "*.json")))
    if not convs:
        print(f"FAIL: no conversations under {args.convs}")
        return 1

    # poot runs as separate processes: start them all on a pool up front.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
    pending = {(t, c, agp): pool.submit(poot_render, args.poot, t, c, agp)
               for t in templates for c in convs for agp in (False, True)}
    matching, failing = [], []
    cases = raised_both = 0
    for tpath in templates:
        name = os.path.basename(tpath)
        with open(tpath, "rb") as f:
            source = f.read().decode("utf-8")
        problems = []
        for cpath in convs:
            with open(cpath, encoding="utf-8") as f:
                data = json.load(f)
            variables = {"messages": data} if isinstance(data, list) else dict(data)
            variables["bos_token"] = BOS
            variables["eos_token"] = EOS
            for agp in (False, True):
                variables["add_generation_prompt"] = agp
                cases += 1
                ok, ref = jinja_render(env, source, variables)
                rc, out, err = pending[(tpath, cpath, agp)].result()
                case = f"{os.path.basename(cpath)} agp={agp}"
                if not ok:
                    if rc == 0:
                        problems.append(f"{case}: jinja2 raised ({ref}) but poot rendered")
                    else:
                        raised_both += 1
                        if args.verbose:
                            print(f"    both fail {name} {case}: jinja2 {ref[:100]} | poot {err[:100]}")
                    continue
                if rc != 0:
                    problems.append(f"{case}: poot failed: {err}")
                    continue
                want = ref.encode("utf-8")
                if out != want:
                    i = next((k for k in range(min(len(out), len(want))) if out[k] != want[k]),
                             min(len(out), len(want)))
                    problems.append(f"{case}: differs at byte {i}: jinja2 {want[max(0, i-40):i+40]!r}"
                                    f" poot {out[max(0, i-40):i+40]!r}")
        if problems:
            failing.append(name)
            expected = name in KNOWN_MISMATCHES
            print(f"{'XFAIL' if expected else 'FAIL '} {name}")
            for p in problems[: (20 if args.verbose else 3)]:
                print(f"    {p}")
        else:
            matching.append(name)
            if args.verbose:
                print(f"ok    {name}")
    pool.shutdown()
    print(f"templates matching byte-for-byte: {len(matching)}/{len(templates)} "
          f"({cases} renders, {raised_both} rejected by both jinja2 and poot)")
    unexpected = [n for n in failing if n not in KNOWN_MISMATCHES]
    if not args.only:
        checked, problems = check_models(env, args.poot, args.data, convs)
        for p in problems:
            print(f"FAIL  -m {p}")
        print(f"GGUF models with a chat template checked through -m: {checked}, "
              f"{'all match' if not problems else f'{len(problems)} problems'}")
        if problems:
            return 1
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
