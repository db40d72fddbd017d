#!/usr/bin/env python3
"""Checkpoints as transformers itself writes them, and their greedy references.

Usage (on a machine with torch and transformers; the GPU is used when present):
    hf_checkpoints.py WORKDIR --out tests/data/hf-checkpoints [--only NAME ...]
                      [--llama-cpp SRC_DIR] [--steps 40] [--list]

For every variant below the script
  1. builds the config with transformers' own config class from the keyword
     arguments a user would pass (4.x spellings: transformers converts them to
     what it writes today, e.g. `rope_parameters`, `layer_types`),
  2. creates the model from that config, fills its parameters with the
     seeded, machine-independent weights of make_models.py (the tensors are
     byte-identical wherever numpy runs, so a test can rebuild the file),
  3. saves it with `save_pretrained` (config.json, generation_config.json and
     model.safetensors exactly as transformers writes them) and adds the
     tokenizer files of the data folder,
  4. records transformers' greedy continuation of every prompt (`generate`
     with its KV cache, as a user runs it; EOS does not stop it) with the
     top1 - top2 logit margin at every step,
  5. with --llama-cpp, converts the folder with llama.cpp's
     convert_hf_to_gguf.py (f32) and records that file's metadata and tensor
     table (name, type, shape, sha256 of the data). llama.cpp reads the
     Llama-2-style vocabularies of Gemma and Phi-3 only from a SentencePiece
     tokenizer.model, which the data folder lacks: for those a copy of the
     folder gets one made from tokenizer.json (spm_model()).

Writes OUT/<name>.json:
    {"name", "family", "tokenizer", "spec": the make_models spec the weights
     come from, "config": config.json as saved, "generation_config",
     "tensors": {name: {"dtype", "shape", "sha256"}} of the saved
     model.safetensors, "transformers", "torch", "device", "steps",
     "cases": [{"prompt", "prompt_ids", "greedy_ids", "margins", "text"}],
     "llama_cpp": {"metadata": {key: value}, "tensors": [...]} or an "error"}
and keeps the folders (and llama.cpp's GGUF files) under WORKDIR.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_models as mm  # noqa: E402

PROMPTS = [
    "Once upon a time",
    "The capital of France is",
    "def fibonacci(n):\n    return",
    "Größe, naïve café: 東京へ 🚀 привет",
]

# The positions of every case (prompt + 40 steps) reach past 50, so each
# original context below (16) is shorter than the sequences and every sliding
# window (8, 12) is shorter than prompt + output.
ORIG = 16


def factors(n, long):
    if long:
        return [round(1.0 + 3.0 * (i / (n - 1)) ** 2 * (n - 1), 4) for i in range(n)]
    return [round(1.0 + 0.07 * i, 4) for i in range(n)]


# Models whose cached `generate` in transformers 5.17 is not the model's own
# computation, and why; their reference is the forward over the whole sequence
# at every step (`greedy_ids_nocache`), the test says which it compares with.
GENERATE_BROKEN = {
    "phi3": "transformers 5.17's Phi3ForCausalLM.prepare_inputs_for_generation drops the KV cache "
            "when the sequence first passes original_max_position_embeddings (to recompute it with "
            "the long factors), but generate still passes only the newest token "
            "(next_sequence_length): that step runs without its context and the cache restarts "
            "from it. The forward over the whole sequence is Phi-3's definition (and poot's: "
            "poot_model_rope_restart_length).",
}


def variants():
    """(name, make_models family, tokenizer, arch, model_type, layers, kv heads, tied, config)."""
    v = []

    def add(name, fam, tok, arch, mt, layers, kv, tied, extra):
        v.append((name, fam, tok, arch, mt, layers, kv, tied, extra))

    add("llama3", "llama", "llama2", "LlamaForCausalLM", "llama", 2, 2, True, {
        "rope_theta": 500000.0, "max_position_embeddings": 131072,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": ORIG}})
    add("llama-linear", "llama", "llama2", "LlamaForCausalLM", "llama", 2, 4, False, {
        "rope_theta": 50000.0, "max_position_embeddings": 8192,
        "rope_scaling": {"rope_type": "linear", "factor": 4.0}})
    add("llama-yarn", "llama", "llama2", "LlamaForCausalLM", "llama", 2, 2, False, {
        "rope_theta": 100000.0, "max_position_embeddings": 4 * ORIG,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                         "original_max_position_embeddings": ORIG}})
    add("llama-dynamic", "llama", "llama2", "LlamaForCausalLM", "llama", 2, 2, False, {
        "rope_theta": 10000.0, "max_position_embeddings": ORIG,
        "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})
    add("mistral", "mistral", "llama2", "MistralForCausalLM", "mistral", 2, 2, False, {
        "rope_theta": 1000000.0, "sliding_window": 8, "max_position_embeddings": 32768})
    add("qwen2", "qwen2", "qwen3", "Qwen2ForCausalLM", "qwen2", 2, 2, False, {
        "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 32768,
        "use_sliding_window": True, "sliding_window": 8, "max_window_layers": 1})
    add("qwen2-yarn", "qwen2", "qwen3", "Qwen2ForCausalLM", "qwen2", 2, 2, True, {
        "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 4 * ORIG,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                         "original_max_position_embeddings": ORIG}})
    add("qwen3", "qwen3", "qwen3", "Qwen3ForCausalLM", "qwen3", 2, 2, True, {
        "head_dim": mm.HEAD_DIM, "rope_theta": 5000000.0, "rms_norm_eps": 1e-6,
        "max_position_embeddings": 40960})
    add("gemma", "gemma", "llama2", "GemmaForCausalLM", "gemma", 2, 1, True, {
        "head_dim": mm.HEAD_DIM, "hidden_act": "gelu_pytorch_tanh",
        "hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-6, "rope_theta": 20000.0,
        "pad_token_id": 0, "max_position_embeddings": 8192})
    add("gemma2", "gemma", "llama2", "Gemma2ForCausalLM", "gemma2", 3, 2, True, {
        "head_dim": mm.HEAD_DIM, "hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-6,
        "pad_token_id": 0, "sliding_window": 8, "max_position_embeddings": 8192,
        "query_pre_attn_scalar": 24, "attn_logit_softcapping": 50.0,
        "final_logit_softcapping": 30.0, "rope_theta": 10000.0})
    add("gemma3", "gemma", "llama2", "Gemma3ForCausalLM", "gemma3_text", 4, 2, True, {
        "head_dim": mm.HEAD_DIM, "hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-6,
        "pad_token_id": 0, "sliding_window": 8, "max_position_embeddings": 32768,
        "query_pre_attn_scalar": 16, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0},
        "layer_types": ["sliding_attention", "sliding_attention", "full_attention",
                        "sliding_attention"]})
    # Gemma 3 as llama.cpp's file can carry it: layer types in its default
    # period of 6, the query scale head_dim^-0.5.
    add("gemma3-p6", "gemma", "llama2", "Gemma3ForCausalLM", "gemma3_text", 6, 2, True, {
        "head_dim": mm.HEAD_DIM, "hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-6,
        "pad_token_id": 0, "sliding_window": 8, "max_position_embeddings": 32768,
        "query_pre_attn_scalar": mm.HEAD_DIM, "rope_theta": 1000000.0,
        "rope_local_base_freq": 10000.0, "rope_scaling": {"rope_type": "linear", "factor": 4.0},
        "sliding_window_pattern": 6})
    rd = mm.HEAD_DIM // 2  # partial_rotary_factor 0.5: 8 rotated features, 4 pairs
    add("phi3", "phi3", "llama2", "Phi3ForCausalLM", "phi3", 2, 2, False, {
        "pad_token_id": 0, "sliding_window": 12, "partial_rotary_factor": 0.5,
        "max_position_embeddings": 4096, "original_max_position_embeddings": ORIG,
        "rope_scaling": {"rope_type": "longrope", "short_factor": factors(rd // 2, False),
                         "long_factor": factors(rd // 2, True)}})
    return v


def spec_of(var):
    name, fam, tok, arch, mt, layers, kv, tied, extra = var
    spec = mm.llama_like(name, fam, arch, mt, tok, layers, kv, tied, extra)
    spec["config"].pop("torch_dtype", None)
    spec["config"].pop("use_cache", None)
    if fam == "gemma":  # real Gemma configs name the activation twice
        spec["config"]["hidden_act"] = spec["config"]["hidden_activation"] = "gelu_pytorch_tanh"
    return spec


def sha256_bytes(b):
    return hashlib.sha256(b).hexdigest()


def read_safetensors(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            lo, hi = info["data_offsets"]
            f.seek(base + lo)
            out[name] = {"dtype": info["dtype"], "shape": info["shape"],
                         "sha256": sha256_bytes(f.read(hi - lo))}
    return out


def build(var, workdir, data, torch, transformers):
    spec = spec_of(var)
    name = spec["name"]
    cfg_kw = dict(spec["config"])
    arch = cfg_kw.pop("architectures")[0]
    mt = cfg_kw.pop("model_type")
    config = transformers.AutoConfig.for_model(mt, architectures=[arch], **cfg_kw)
    config._attn_implementation = "eager"
    cls = getattr(transformers, arch)
    torch.manual_seed(0)
    model = cls(config).to(torch.float32)
    weights = mm.make_weights(spec)
    state = model.state_dict()
    missing = [k for k in state if k not in weights and not (k == "lm_head.weight" and spec["config"]["tie_word_embeddings"])]
    extra = [k for k in weights if k not in state]
    if missing or extra:
        raise SystemExit(f"{name}: weights do not match the model: missing {missing}, extra {extra}")
    with torch.no_grad():
        for k, t in state.items():
            if k in weights:
                if tuple(t.shape) != weights[k].shape:
                    raise SystemExit(f"{name}: {k} is {tuple(t.shape)}, weights {weights[k].shape}")
                t.copy_(torch.from_numpy(weights[k]))
    d = os.path.join(workdir, name)
    shutil.rmtree(d, ignore_errors=True)
    model.save_pretrained(d, safe_serialization=True)
    tj, tc = mm.tokenizer_files(spec, data)
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    mm.write_json(os.path.join(d, "tokenizer_config.json"), tc)
    return spec, model, d


def greedy(model, d, steps, torch, transformers, device):
    import copy

    tok = transformers.AutoTokenizer.from_pretrained(d)
    base = model.to(device).eval()
    cases = []
    for p in PROMPTS:
        # A fresh copy per prompt: dynamic rope keeps the longest sequence it
        # has seen in the module, which would leak from one prompt into the next.
        model = copy.deepcopy(base)
        ids = list(tok(p)["input_ids"])
        x = torch.tensor([ids], dtype=torch.long, device=device)
        gc = transformers.GenerationConfig(do_sample=False, max_new_tokens=steps, min_new_tokens=0,
                                           eos_token_id=None, pad_token_id=0, bos_token_id=None)
        with torch.no_grad():
            out = model.generate(x, attention_mask=torch.ones_like(x), generation_config=gc,
                                 output_logits=True, return_dict_in_generate=True, use_cache=True)
        new = [int(t) for t in out.sequences[0, len(ids):]]
        margins = []
        for step, lg in enumerate(out.logits):
            row = lg[0].to(torch.float32)
            top = torch.topk(row, 2)
            if int(torch.argmax(row)) != new[step]:
                raise SystemExit(f"generate's token {new[step]} is not the argmax at step {step}")
            margins.append(float(top.values[0] - top.values[1]))
        # The same greedy continuation without a cache (the whole sequence
        # each step): it must agree with generate's, except where a model's
        # cached generation differs by design (dynamic rope keeps the keys of
        # earlier steps at their shorter sequence's frequencies).
        m2 = copy.deepcopy(base)
        seq, nocache, nc_margins = list(ids), [], []
        with torch.no_grad():
            for step in range(steps):
                lg = m2(input_ids=torch.tensor([seq], dtype=torch.long, device=device),
                        use_cache=False).logits[0, -1].to(torch.float32)
                top = torch.topk(lg, 2)
                nxt = int(torch.argmax(lg))
                nocache.append(nxt)
                nc_margins.append(float(top.values[0] - top.values[1]))
                seq.append(nxt)
        agree = next((k for k in range(steps) if nocache[k] != new[k]), None)
        cases.append({"prompt": p, "prompt_ids": ids, "greedy_ids": new, "margins": margins,
                      "greedy_ids_nocache": nocache, "margins_nocache": nc_margins,
                      "nocache_differs_at": agree, "text": tok.decode(new)})
        if agree is not None:
            print(f"    without a cache the ids differ from step {agree} (margin there "
                  f"{margins[agree]:.3f})", flush=True)
        print(f"  {p[:30]!r}: {len(ids)} prompt ids, min margin {min(margins):.3f}, "
              f"median {float(np.median(margins)):.3f}", flush=True)
    return cases


def gguf_value(field):
    import gguf

    t = field.types[0] if field.types else None
    if t == gguf.GGUFValueType.ARRAY:
        sub = field.types[-1]
        if sub == gguf.GGUFValueType.STRING:
            vals = [bytes(field.parts[i]).decode("utf-8", "replace") for i in field.data]
        else:
            vals = [field.parts[i].tolist()[0] for i in field.data]
        return {"type": "array", "of": sub.name, "len": len(vals),
                "sha256": sha256_bytes(json.dumps(vals, ensure_ascii=False).encode()),
                "values": vals if len(vals) <= 64 else None}
    if t == gguf.GGUFValueType.STRING:
        return {"type": "STRING", "value": bytes(field.parts[field.data[0]]).decode("utf-8", "replace")}
    return {"type": t.name, "value": field.parts[field.data[0]].tolist()[0]}


def spm_model(d, dst):
    """A SentencePiece tokenizer.model equal to the folder's tokenizer.json (a
    SentencePiece-style BPE with byte fallback): llama.cpp's converter reads
    Llama-2-style vocabularies of Gemma and Phi-3 only from that file. Scores
    follow the merge ranks as in poot's converter: a token made by merge rank
    r scores -r, a token no merge makes -(merges + id)."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    with open(os.path.join(d, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    vocab = tj["model"]["vocab"]
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in tj["model"]["merges"]]
    n = len(vocab)
    score = [-float(len(merges) + i) for i in range(n)]
    seen = set()
    for r, (a, b) in enumerate(merges):
        t = vocab.get(a + b)
        if t is not None and t not in seen:
            seen.add(t)
            score[t] = -float(r)
    special = {t["id"] for t in tj.get("added_tokens", []) if t.get("special")}
    inv = {i: t for t, i in vocab.items()}
    m = pb.ModelProto()
    m.trainer_spec.model_type = pb.TrainerSpec.BPE
    m.trainer_spec.vocab_size = n
    m.trainer_spec.byte_fallback = True
    m.trainer_spec.unk_id, m.trainer_spec.bos_id, m.trainer_spec.eos_id, m.trainer_spec.pad_id = 0, 1, 2, -1
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.add_dummy_prefix = True
    m.normalizer_spec.remove_extra_whitespaces = False
    m.normalizer_spec.escape_whitespaces = True
    for i in range(n):
        tok = inv[i]
        p = m.pieces.add()
        p.piece = tok
        p.score = score[i]
        if i == tj["model"].get("unk_id", 0) or tok == "<unk>":
            p.type = pb.ModelProto.SentencePiece.UNKNOWN
        elif i in special:
            p.type = pb.ModelProto.SentencePiece.CONTROL
        elif len(tok) == 6 and tok.startswith("<0x") and tok.endswith(">"):
            p.type = pb.ModelProto.SentencePiece.BYTE
        else:
            p.type = pb.ModelProto.SentencePiece.NORMAL
    with open(os.path.join(dst, "tokenizer.model"), "wb") as f:
        f.write(m.SerializeToString())


def llama_cpp(d, src, workdir, spm):
    out = os.path.join(workdir, os.path.basename(d) + ".llama-cpp.gguf")
    if spm:  # convert a copy that also holds tokenizer.model
        copy_dir = d + ".llama-cpp-input"
        shutil.rmtree(copy_dir, ignore_errors=True)
        shutil.copytree(d, copy_dir)
        spm_model(d, copy_dir)
        d = copy_dir
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(src, "gguf-py") + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, os.path.join(src, "convert_hf_to_gguf.py"), d,
                        "--outtype", "f32", "--outfile", out], capture_output=True, text=True,
                       env=env)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout)[-3000:]}
    sys.path.insert(0, os.path.join(src, "gguf-py"))
    import gguf

    rd = gguf.GGUFReader(out)
    meta = {k: gguf_value(f) for k, f in rd.fields.items() if not k.startswith("GGUF.")}
    tensors = [{"name": t.name, "type": t.tensor_type.name, "shape": [int(x) for x in t.shape],
                "sha256": sha256_bytes(bytes(t.data.tobytes()))} for t in rd.tensors]
    return {"file": os.path.basename(out), "metadata": meta, "tensors": tensors}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workdir", nargs="?")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", nargs="+")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--llama-cpp", default=None, help="llama.cpp source folder (convert_hf_to_gguf.py)")
    ap.add_argument("--data", default=None)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    vs = variants()
    if args.list:
        print("\n".join(v[0] for v in vs))
        return 0
    if not args.workdir or not args.out:
        ap.error("WORKDIR and --out are required")
    if args.only:
        vs = [v for v in vs if v[0] in args.only]
    try:
        import torch
        import transformers
    except ImportError as e:
        print(f"SKIP: {e}")
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = "cuda" if torch.cuda.is_available() else "cpu"
    data = args.data or mm.default_data_dir()
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for var in vs:
        print(f"{var[0]}:", flush=True)
        try:
            spec, model, d = build(var, args.workdir, data, torch, transformers)
            cases = greedy(model, d, args.steps, torch, transformers, device)
        except Exception as e:  # one variant's failure is reported, the rest go on
            import traceback

            traceback.print_exc()
            failed += 1
            continue
        with open(os.path.join(d, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        gen = None
        if os.path.exists(os.path.join(d, "generation_config.json")):
            with open(os.path.join(d, "generation_config.json"), encoding="utf-8") as f:
                gen = json.load(f)
        ref_kind = "nocache" if spec["name"] in GENERATE_BROKEN else "generate"
        doc = {"name": spec["name"], "family": spec["family"], "tokenizer": spec["tokenizer"],
               "reference": ref_kind, "reference_why": GENERATE_BROKEN.get(spec["name"]),
               "spec": {k: spec[k] for k in ("name", "family", "tokenizer", "config")},
               "config": config, "generation_config": gen,
               "tensors": read_safetensors(os.path.join(d, "model.safetensors")),
               "transformers": transformers.__version__, "torch": torch.__version__,
               "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
               "steps": args.steps, "cases": cases}
        if args.llama_cpp:
            spm = spec["tokenizer"] == "llama2" and spec["family"] in ("gemma", "phi3")
            doc["llama_cpp"] = llama_cpp(d, args.llama_cpp, args.workdir, spm)
            doc["llama_cpp"]["tokenizer_model"] = spm
            if "error" in doc["llama_cpp"]:
                print(f"  llama.cpp convert failed: {doc['llama_cpp']['error'][-400:]}")
        with open(os.path.join(args.out, spec["name"] + ".json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
