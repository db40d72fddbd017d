#!/usr/bin/env python3
"""Checkpoints written by transformers itself, against transformers' own greedy ids.

The references in tests/data/hf-checkpoints/<name>.json were made by
scripts/reference/hf_checkpoints.py on a machine with torch and transformers:
every supported family with its features switched on (rope scalings whose
original context is shorter than the positions, theta far from 10,000, sliding
windows shorter than prompt + output, soft-caps, biases, q/k norms, tied and
untied heads), built with transformers' config classes, filled with the seeded
weights of make_models.py and saved with `save_pretrained`, so config.json is
exactly what transformers writes today. Each holds that config.json, the
sha256 of every saved tensor, 4 prompts with 40 greedy ids and the top-two
margins, and the metadata and tensor table of the GGUF that llama.cpp's
convert_hf_to_gguf.py wrote from the folder.

This test rebuilds each folder (numpy only; every tensor's sha256 must equal
the saved one), then runs `poot verify greedy --json --ignore-eos -n 40` on
one route:
  safetensors  the folder itself
  gguf         the GGUF `poot convert` writes from it (f32)
  llama-cpp    llama.cpp's GGUF: poot convert's file with llama.cpp's metadata
               put in place of its own; every tensor must be byte-identical to
               llama.cpp's (name, type, shape, sha256), so the file equals
               llama.cpp's up to the tokenizer tables, which are checked
               against llama.cpp's too
and on one device (eval: the oracle; vulkan, ptx: the device, whose ids are
also checked against the oracle's by poot itself). The prompt ids must equal
transformers'; the greedy ids must equal transformers', except for a flip where
the reference's top-two margin is inside the tier-2 flip tolerance
(verify_hf.tolerances(), docs/verification.md).

Usage: verify_hf_checkpoints.py --route R [--device D] [--llama-cpp-dir DIR] [NAME ...]
Exit 0 pass, 1 failure, 77 skipped (data, numpy, poot or the device absent, or
llama.cpp's converter could not write or drops what the model needs).
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("POOT_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "scripts", "reference"))
sys.path.insert(0, HERE)

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

# What GGUF cannot hold, so that `poot convert` must refuse the model (the
# refusal is checked; the route is then reported as a skip).
GGUF_REFUSES = {
    "llama-dynamic": "dynamic (NTK) rope scaling has no GGUF form",
}

# What llama.cpp's converter leaves out of its file, so that its GGUF cannot
# match transformers (reported as a skip with the reason, never as a pass).
LLAMA_CPP_DROPS = {
    "llama-dynamic": "llama.cpp's converter writes no dynamic (NTK) rope scaling",
    "qwen2": "llama.cpp's converter writes no sliding window for Qwen 2 (use_sliding_window)",
    "mistral": "llama.cpp's converter writes Mistral as llama without its sliding window",
    "gemma": "llama.cpp's Gemma converter writes no rope.freq_base (its file runs at theta 10,000)",
    "gemma2": "llama.cpp's converter writes no query_pre_attn_scalar (its Gemma 2 scales queries "
              "by head_dim^-0.5)",
    "gemma3": "llama.cpp's converter writes no layer_types (its Gemma 3 makes every 6th layer "
              "global)",
}


def sha256(b):
    return hashlib.sha256(b).hexdigest()


def run(cmd, timeout=900):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def build_folder(ref, data, d):
    """The reference's folder: its config.json, the seeded weights, the tokenizer."""
    import make_models as mm

    os.makedirs(d, exist_ok=True)
    weights = mm.make_weights(ref["spec"])
    saved = {}
    for name, info in ref["tensors"].items():
        if name not in weights:
            return "tensor %s of the saved file is not among the seeded weights" % name
        t = weights[name]
        if list(t.shape) != info["shape"] or info["dtype"] != "F32":
            return "tensor %s: %s %s, saved %s %s" % (name, t.shape, t.dtype, info["shape"], info["dtype"])
        if sha256(np.ascontiguousarray(t, dtype="<f4").tobytes()) != info["sha256"]:
            return "tensor %s differs from the one transformers saved" % name
        saved[name] = t
    mm.write_safetensors(os.path.join(d, "model.safetensors"), saved)
    mm.write_json(os.path.join(d, "config.json"), ref["config"])
    if ref.get("generation_config"):
        mm.write_json(os.path.join(d, "generation_config.json"), ref["generation_config"])
    tj, tc = mm.tokenizer_files(ref["spec"], data)
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    mm.write_json(os.path.join(d, "tokenizer_config.json"), tc)
    return None


def gguf_fields(reader):
    """{key: (GGUFValueType, value or list)} of a GGUFReader."""
    import gguf

    out = {}
    for k, f in reader.fields.items():
        if k.startswith("GGUF."):
            continue
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            sub = f.types[-1]
            if sub == gguf.GGUFValueType.STRING:
                vals = [bytes(f.parts[i]).decode("utf-8") for i in f.data]
            else:
                vals = [f.parts[i].tolist()[0] for i in f.data]
            out[k] = (t, sub, vals)
        elif t == gguf.GGUFValueType.STRING:
            out[k] = (t, None, bytes(f.parts[f.data[0]]).decode("utf-8"))
        else:
            out[k] = (t, None, f.parts[f.data[0]].tolist()[0])
    return out


def llama_cpp_file(ref, poot_gguf, out):
    """poot convert's file with llama.cpp's metadata; None or the reason it cannot be."""
    import gguf

    lc = ref.get("llama_cpp") or {}
    if "metadata" not in lc:
        return "llama.cpp's converter failed on this folder", []
    rd = gguf.GGUFReader(poot_gguf)
    mine = {t.name: t for t in rd.tensors}
    theirs = lc["tensors"]
    problems = []
    if sorted(mine) != sorted(t["name"] for t in theirs):
        problems.append("tensor names differ: poot %s, llama.cpp %s" %
                        (sorted(set(mine) - {t["name"] for t in theirs}),
                         sorted({t["name"] for t in theirs} - set(mine))))
    for t in theirs:
        m = mine.get(t["name"])
        if m is None:
            continue
        if m.tensor_type.name != t["type"] or [int(x) for x in m.shape] != t["shape"]:
            problems.append("%s: poot %s %s, llama.cpp %s %s" % (t["name"], m.tensor_type.name,
                                                                 list(m.shape), t["type"], t["shape"]))
        elif sha256(bytes(m.data.tobytes())) != t["sha256"]:
            problems.append("%s: data differs from llama.cpp's" % t["name"])
    fields = gguf_fields(rd)
    meta = lc["metadata"]
    for k, v in meta.items():
        if v["type"] == "array" and v.get("values") is None and k not in fields:
            problems.append("%s: poot convert writes none" % k)
    if problems:
        return "FAIL " + "; ".join(problems[:6]), []
    # The tokenizer tables (the only values recorded by hash) come from poot's
    # file; where they differ from llama.cpp's it is said. The prompts are
    # given as ids, so the model is compared whatever the tables hold.
    notes = ["%s: %s differs from llama.cpp's table" % (ref["name"], k) for k, v in meta.items()
             if v["type"] == "array" and v.get("values") is None and
             sha256(json.dumps(fields[k][2], ensure_ascii=False).encode()) != v["sha256"]]
    arch = meta["general.architecture"]["value"]
    w = gguf.GGUFWriter(out, arch)
    types = {t.name: t for t in gguf.GGUFValueType}
    for k, v in meta.items():
        if k == "general.architecture":
            continue
        if v["type"] == "array":
            if v.get("values") is None:
                w.add_key_value(k, fields[k][2], gguf.GGUFValueType.ARRAY, sub_type=fields[k][1])
            else:
                w.add_key_value(k, v["values"], gguf.GGUFValueType.ARRAY, sub_type=types[v["of"]])
        else:
            w.add_key_value(k, v["value"], types[v["type"]])
    for t in theirs:
        w.add_tensor(t["name"], np.ascontiguousarray(mine[t["name"]].data),
                     raw_dtype=gguf.GGMLQuantizationType[t["type"]])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return None, notes


def reference_of(ref, case):
    """The ids and margins to compare with: transformers' cached generate, or
    for a model whose cached generate is known not to compute the model (see
    `reference_why`), its forward over the whole sequence at every step."""
    if ref.get("reference") == "nocache":
        return case["greedy_ids_nocache"], case["margins_nocache"]
    return case["greedy_ids"], case["margins"]


def check_inspect(poot, folder, ref):
    """`poot inspect` says how poot reads the folder: its rope scaling."""
    rp = ref["config"].get("rope_parameters") or {}
    rp = rp.get("full_attention", rp)
    want = {"default": "none"}.get(rp.get("rope_type", "default"), rp.get("rope_type"))
    r = run([poot, "inspect", folder])
    line = next((l for l in r.stdout.splitlines() if l.strip().startswith("rope ")), "")
    if r.returncode != 0 or ("scaling %s" % want) not in line:
        return ["%s: poot inspect shows %r, expected scaling %s" % (ref["name"], line.strip(), want)]
    return []


def check_case(poot, model, ref, case, device, by_ids):
    """Failure messages of one prompt (empty: passed), and notes."""
    import verify_hf

    want, margins = reference_of(ref, case)
    n = len(want)
    prompt = ["--prompt-ids", ",".join(str(i) for i in case["prompt_ids"])] if by_ids else \
        ["-p", case["prompt"]]
    # f32 K/V, as transformers keeps its cache: the flip tolerance bounds f32
    # arithmetic, and the f16 cache (--kv-type f16) (2^-11 relative on every key and
    # value) moves the logits further: llama-linear's 'Once upon a time' then
    # flips at step 24, a near-tie (margin 0.0071) that an f32 bound of
    # 0.0040 does not cover. The device's f16 cache is checked against the
    # oracle's by verify_device.py and the driver tests.
    cmd = [poot, "verify", "greedy", "-m", model] + prompt + ["-n", str(n), "--json",
                                                              "--logits", "1", "--ignore-eos",
                                                              "--kv-type", "f32"]
    if device != "eval":
        cmd += ["--device", device]
    r = run(cmd)
    where = "%s %r" % (ref["name"], case["prompt"][:24])
    if r.returncode != 0:
        return ["%s: poot verify failed: %s" % (where, (r.stderr or r.stdout).strip()[-600:])], []
    got = json.loads(r.stdout)
    if got["prompt_ids"] != case["prompt_ids"]:
        return ["%s: prompt ids %s, transformers %s" % (where, got["prompt_ids"], case["prompt_ids"])], []
    first = np.array([x if x is not None else np.nan for x in got["logits"][0]], dtype=np.float64)
    rms = float(np.sqrt(np.nanmean(np.square(first))))
    cfg = dict(ref["config"])
    cfg.setdefault("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    _, flip_tol = verify_hf.tolerances(cfg, len(case["prompt_ids"]) + n, "f32", rms)
    ids = got["ids"]
    for k in range(min(len(ids), len(want))):
        if ids[k] != want[k]:
            m = margins[k]
            if m <= flip_tol:
                return [], ["%s: step %d flips (%d vs %d) where transformers' margin %.4g <= %.4g" %
                            (where, k, ids[k], want[k], m, flip_tol)]
            return ["%s: step %d gives %d, transformers %d with margin %.4g > tolerance %.4g" %
                    (where, k, ids[k], want[k], m, flip_tol)], []
    if len(ids) != len(want):
        return ["%s: %d ids, transformers %d" % (where, len(ids), len(want))], []
    return [], []


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--route", required=True, choices=["safetensors", "gguf", "llama-cpp"])
    ap.add_argument("--device", default="eval")
    ap.add_argument("--llama-cpp-dir", default=None,
                    help="llama-cpp route: read llama.cpp's own files, DIR/<name>.llama-cpp.gguf "
                         "(as scripts/reference/hf_checkpoints.py keeps them), not the rebuilt one")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    poot = os.environ.get("POOT")
    data = os.environ.get("POOT_DATA_DIR", "")
    refdir = os.path.join(SRC, "tests", "data", "hf-checkpoints")
    if np is None:
        print("SKIP: numpy is not installed")
        return 77
    if not poot or not os.path.exists(poot):
        print("SKIP: the poot binary is not built")
        return 77
    if not os.path.isdir(os.path.join(data, "hf-tokenizers")):
        print("SKIP: the test data (hf-tokenizers) is absent")
        return 77
    if args.route == "llama-cpp":
        try:
            import gguf  # noqa: F401
        except ImportError:
            print("SKIP: the gguf package is not installed")
            return 77
    if args.device != "eval":
        r = run([poot, "devices"])
        backend = args.device.split(":")[0]
        if not any(l.split()[:2] == [backend, "present"] for l in r.stdout.splitlines()):
            print("SKIP: no %s device" % args.device)
            return 77
    names = args.names or sorted(f[:-5] for f in os.listdir(refdir) if f.endswith(".json"))
    failures, notes, skips, checked = [], [], [], 0
    tmp = tempfile.mkdtemp(prefix="poot-hf-ckpt-")
    try:
        for name in names:
            with open(os.path.join(refdir, name + ".json"), encoding="utf-8") as f:
                ref = json.load(f)
            folder = os.path.join(tmp, name)
            why = build_folder(ref, data, folder)
            if why:
                failures.append("%s: %s" % (name, why))
                continue
            model = folder
            if args.route == "safetensors" and args.device == "eval":
                failures += check_inspect(poot, folder, ref)
            if args.route in ("gguf", "llama-cpp"):
                model = os.path.join(tmp, name + ".gguf")
                r = run([poot, "convert", folder, model, "--type", "f32"])
                if name in GGUF_REFUSES:
                    if r.returncode == 1 and GGUF_REFUSES[name] in r.stderr and \
                            not os.path.exists(model):
                        skips.append("%s: poot convert refuses it, as it must: %s" %
                                     (name, r.stderr.strip()))
                    else:
                        failures.append("%s: poot convert must refuse it (%s): rc %d, %s" %
                                        (name, GGUF_REFUSES[name], r.returncode, r.stderr.strip()))
                    continue
                if r.returncode != 0:
                    failures.append("%s: poot convert: %s" % (name, r.stderr.strip()))
                    continue
            if args.route == "llama-cpp":
                if name in LLAMA_CPP_DROPS:
                    skips.append("%s: %s" % (name, LLAMA_CPP_DROPS[name]))
                    continue
                lc = os.path.join(tmp, name + ".llama-cpp.gguf")
                if args.llama_cpp_dir:
                    lc = os.path.join(args.llama_cpp_dir, name + ".llama-cpp.gguf")
                    why = None if os.path.exists(lc) else "no llama.cpp file %s" % lc
                else:
                    why, tnotes = llama_cpp_file(ref, model, lc)
                    notes += tnotes
                if why and why.startswith("FAIL "):
                    failures.append("%s: against llama.cpp's GGUF: %s" % (name, why[5:]))
                    continue
                if why:
                    skips.append("%s: %s" % (name, why))
                    continue
                model = lc
            if ref.get("reference") == "nocache":
                notes.append("%s: compared with transformers' forward over the whole sequence: %s"
                             % (name, ref.get("reference_why")))
            # llama.cpp's file carries llama.cpp's tokenizer conventions (Gemma's:
            # no space prefix), so that route starts from transformers' ids.
            by_ids = args.route == "llama-cpp"
            for case in ref["cases"]:
                f, n = check_case(poot, model, ref, case, args.device, by_ids)
                failures += f
                notes += n
                checked += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for n in notes:
        print("note", n)
    for s in skips:
        print("SKIP", s)
    for f in failures:
        print("FAIL", f)
    print("%s on %s: %d prompts checked, %d failures, %d models skipped" %
          (args.route, args.device, checked, len(failures), len(skips)))
    if failures:
        return 1
    if skips:
        return 77
    return 0 if checked else 77


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
