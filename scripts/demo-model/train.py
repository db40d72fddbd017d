#!/usr/bin/env python3
"""Train poot's bundled demo model and export it as a Hugging Face folder.

Steps, all deterministic from --seed except for GPU nondeterminism:
  1. generate the synthetic corpus of corpus.py (stories and chats), in parallel;
  2. train a byte-level BPE tokenizer (GPT-2's ByteLevel pre-tokenizer and
     decoder, special tokens <|bos|> <|eos|> <|system|> <|user|> <|assistant|> <|end|>);
  3. train a small Llama (transformers LlamaForCausalLM) for a fixed time
     budget with AdamW, a cosine schedule and bf16 autocast;
  4. export model.safetensors (f32), config.json, generation_config.json,
     tokenizer.json and tokenizer_config.json (with a chat template);
  5. reload the exported folder and print greedy samples and a JSON summary.

Usage (needs torch, transformers, tokenizers, numpy; a GPU makes it fast):
  python3 train.py --out poot-demo-hf --minutes 4
"""

import argparse
import json
import math
import multiprocessing as mp
import os
import re
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

SPECIALS = ["<|bos|>", "<|eos|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
BOS, EOS, END = 0, 1, 5
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"
)


def log(*a):
    print(*a, flush=True)


# --------------------------------------------------------------------------
# Corpus.


def render_chat(msgs):
    """The chat template, rendered in Python (the same text as the Jinja one)."""
    out = ["<|bos|>"]
    for m in msgs:
        out.append("<|" + m["role"] + "|>\n" + m["content"] + "<|end|>\n")
    return "".join(out)


def gen_texts(seed, lo, hi):
    texts = []
    for i in range(lo, hi):
        d = corpus.document(seed, i)
        # Stories get <|bos|> here; chats carry it from the template.
        texts.append("<|bos|>" + d if isinstance(d, str) else render_chat(d))
    return texts


# GPT-2's pre-tokenizer regex restricted to ASCII (the corpus is ASCII), in
# Python's re: it splits exactly as the ByteLevel pre-tokenizer does, and a
# cache of word -> ids makes encoding far faster than one encode per document.
PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")
SPEC = re.compile("(" + "|".join(re.escape(s) for s in SPECIALS) + ")")
_W = {}


def _worker_init(tok_path):
    from tokenizers import Tokenizer

    _W["tok"] = Tokenizer.from_file(tok_path)
    _W["cache"] = {}


def fast_encode(text):
    tok, cache, out = _W["tok"], _W["cache"], []
    for part in SPEC.split(text):
        if not part:
            continue
        if part in SPECIALS:
            out.append(SPECIALS.index(part))
        elif not part.isascii():
            out.extend(tok.encode(part, add_special_tokens=False).ids)
        else:
            for w in PAT.findall(part):
                ids = cache.get(w)
                if ids is None:
                    ids = cache[w] = tok.encode(w, add_special_tokens=False).ids
                out.extend(ids)
    return out


def gen_tokens(args):
    seed, lo, hi = args
    ids, chars = [], 0
    for t in gen_texts(seed, lo, hi):
        chars += len(t)
        ids.extend(fast_encode(t))
        ids.append(EOS)
    return np.asarray(ids, dtype=np.int16), chars


def make_tokens(seed, n_docs, workers, tok_path):
    chunk = 2000
    jobs = [(seed, lo, min(lo + chunk, n_docs)) for lo in range(0, n_docs, chunk)]
    with mp.get_context("spawn").Pool(workers, initializer=_worker_init, initargs=(tok_path,)) as pool:
        parts = pool.map(gen_tokens, jobs)
    return np.concatenate([p[0] for p in parts]), sum(p[1] for p in parts)


# --------------------------------------------------------------------------
# Tokenizer.


def train_tokenizer(texts, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    # Train on the text without the markers (the added tokens are never split).
    def strip(t):
        for s in SPECIALS:
            t = t.replace(s, "")
        return t
    plain = (strip(t) for t in texts)
    tok.train_from_iterator(plain, trainer=trainer, length=len(texts))
    tok.post_processor = processors.TemplateProcessing(
        single="<|bos|> $A", pair="<|bos|> $A <|bos|> $B", special_tokens=[("<|bos|>", BOS)])
    for i, s in enumerate(SPECIALS):
        assert tok.token_to_id(s) == i, (s, tok.token_to_id(s))
    return tok


# --------------------------------------------------------------------------
# Model.


def model_config(a, vocab):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=vocab, hidden_size=a.hidden, intermediate_size=a.ffn,
        num_hidden_layers=a.layers, num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
        head_dim=a.hidden // a.heads, max_position_embeddings=a.ctx, rms_norm_eps=1e-5,
        rope_theta=10000.0, tie_word_embeddings=True, attention_bias=False, mlp_bias=False,
        hidden_act="silu", initializer_range=0.02, bos_token_id=BOS, eos_token_id=EOS,
        pad_token_id=None, use_cache=True)


def train(a, data, vocab):
    import torch
    import torch.nn.functional as F
    from transformers import LlamaForCausalLM

    torch.manual_seed(a.seed)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    cfg = model_config(a, vocab)
    model = LlamaForCausalLM(cfg)
    try:
        model.config._attn_implementation = "sdpa"
    except Exception:
        pass
    model.to(dev)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"params {n_params}")

    n_val = min(len(data) // 50, 2_000_000)
    tr = torch.from_numpy(data[:-n_val].astype(np.int64)).to(dev)
    va = torch.from_numpy(data[-n_val:].astype(np.int64)).to(dev)
    T, B = a.ctx, a.batch
    g = torch.Generator(device=dev)
    g.manual_seed(a.seed)

    def batch(src):
        ix = torch.randint(0, src.numel() - T - 1, (B,), device=dev, generator=g)
        off = ix[:, None] + torch.arange(T + 1, device=dev)[None, :]
        w = src[off]
        return w[:, :-1], w[:, 1:]

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8,
                            fused=(dev == "cuda"))
    amp = torch.autocast(device_type="cuda", dtype=torch.bfloat16) if dev == "cuda" else \
        torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=False)

    def lr_at(step, frac):
        warm = min(1.0, (step + 1) / a.warmup)
        return a.lr * warm * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0))))

    budget = a.minutes * 60.0
    t0 = time.time()
    step, tokens, ema = 0, 0, None
    model.train()
    while True:
        # The schedule follows the time budget, or the step count when
        # --max-steps is given (for a run that does not depend on speed).
        frac = step / a.max_steps if a.max_steps else (time.time() - t0) / budget
        if frac >= 1.0:
            break
        for gr in opt.param_groups:
            gr["lr"] = lr_at(step, frac)
        x, y = batch(tr)
        with amp:
            logits = model(input_ids=x).logits
        loss = F.cross_entropy(logits.float().view(-1, logits.size(-1)), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        tokens += B * T
        if step % 100 == 0 or step == 1:
            lv = loss.item()
            ema = lv if ema is None else 0.9 * ema + 0.1 * lv
            el = time.time() - t0
            log(f"step {step} loss {lv:.4f} lr {lr_at(step, frac):.2e} "
                f"{el:.0f}s {tokens / max(el, 1e-9) / 1e6:.2f}M tok/s")
    train_s = time.time() - t0

    model.eval()
    losses = []
    with torch.no_grad(), amp:
        for _ in range(20):
            x, y = batch(va)
            lg = model(input_ids=x).logits
            losses.append(F.cross_entropy(lg.float().view(-1, lg.size(-1)), y.reshape(-1)).item())
    val = float(np.mean(losses))
    final_train = loss.item()
    log(f"done: {step} steps, {tokens} tokens, {train_s:.1f}s, train loss {final_train:.4f}, val loss {val:.4f}")
    return model.float().cpu(), dict(params=n_params, steps=step, tokens=tokens, train_seconds=round(train_s, 1),
                                     train_loss=round(final_train, 4), val_loss=round(val, 4))


# --------------------------------------------------------------------------
# Export and samples.


def export(model, tok, out, a):
    os.makedirs(out, exist_ok=True)
    model.config.use_cache = True
    model.save_pretrained(out, safe_serialization=True)
    # Plain Llama fields as every reader knows them (older readers look for
    # rope_theta and torch_dtype at the top level).
    cpath = os.path.join(out, "config.json")
    cfg = json.load(open(cpath))
    cfg["rope_theta"] = 10000.0
    cfg["torch_dtype"] = "float32"
    cfg["eos_token_id"] = EOS
    cfg.pop("pad_token_id", None)
    json.dump(cfg, open(cpath, "w"), indent=2, sort_keys=True)
    tok.save(os.path.join(out, "tokenizer.json"))
    tcfg = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<|bos|>",
        "eos_token": "<|eos|>",
        "pad_token": "<|eos|>",
        "add_bos_token": True,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": a.ctx,
        "chat_template": CHAT_TEMPLATE,
        "additional_special_tokens": SPECIALS[2:],
    }
    json.dump(tcfg, open(os.path.join(out, "tokenizer_config.json"), "w"), indent=2)
    gcfg = {"bos_token_id": BOS, "eos_token_id": [EOS, END], "pad_token_id": EOS,
            "do_sample": False, "max_new_tokens": 256}
    json.dump(gcfg, open(os.path.join(out, "generation_config.json"), "w"), indent=2)


def samples(out, prompts, chats, n_new):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tk = AutoTokenizer.from_pretrained(out)
    m = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    m.eval()
    res = []
    for p in prompts:
        ids = tk(p, return_tensors="pt").input_ids
        with torch.no_grad():
            g = m.generate(ids, max_new_tokens=n_new, do_sample=False)
        text = tk.decode(g[0, ids.shape[1]:], skip_special_tokens=True)
        res.append({"prompt": p, "prompt_ids": ids[0].tolist(), "text": text})
        log(f"--- {p!r} {ids[0].tolist()}\n{p}{text}\n")
    for msgs in chats:
        s = tk.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        ids = tk(s, return_tensors="pt", add_special_tokens=False).input_ids
        with torch.no_grad():
            g = m.generate(ids, max_new_tokens=n_new, do_sample=False)
        text = tk.decode(g[0, ids.shape[1]:], skip_special_tokens=True)
        res.append({"messages": msgs, "prompt_ids": ids[0].tolist(), "text": text})
        log(f"--- chat {msgs[-1]['content']!r}\n{s!r}\n{text}\n")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder (Hugging Face layout)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--docs", type=int, default=600_000, help="corpus documents")
    ap.add_argument("--tok-docs", type=int, default=30_000, help="documents for the tokenizer")
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--ffn", type=int, default=512)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--minutes", type=float, default=4.0, help="training time budget")
    ap.add_argument("--max-steps", type=int, default=0,
                    help="train for this many steps instead of --minutes (0: the time budget)")
    ap.add_argument("--sample-tokens", type=int, default=200)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()

    t = time.time()
    tok = train_tokenizer(gen_texts(a.seed, 0, a.tok_docs), a.vocab)
    log(f"tokenizer: {tok.get_vocab_size()} tokens, {time.time() - t:.1f}s")
    os.makedirs(a.out, exist_ok=True)
    tok_path = os.path.join(a.out, "tokenizer.json")
    tok.save(tok_path)
    # The fast encoder must give the tokenizer's own ids.
    _worker_init(tok_path)
    check = gen_texts(a.seed + 1, 0, 300)
    for t_, e in zip(check, tok.encode_batch(check, add_special_tokens=False)):
        assert fast_encode(t_) == e.ids, t_
    t = time.time()
    data, n_chars = make_tokens(a.seed, a.docs, a.workers, tok_path)
    log(f"corpus: {a.docs} documents, {n_chars / 1e6:.1f} MB, {len(data) / 1e6:.1f}M tokens "
        f"({n_chars / len(data):.2f} chars/token), {time.time() - t:.1f}s")

    model, stats = train(a, data, tok.get_vocab_size())
    export(model, tok, a.out, a)
    res = samples(a.out,
                  ["Once upon a time", "One day, a little cat named", "Tom and Lily went to the park.",
                   "The dog"],
                  [[{"role": "user", "content": "Tell me a story about a brave fox."}],
                   [{"role": "user", "content": "What does a cow say?"}],
                   [{"role": "user", "content": "Hello!"}]],
                  a.sample_tokens)
    stats.update(vocab=tok.get_vocab_size(), corpus_docs=a.docs, corpus_mb=round(n_chars / 1e6, 1),
                 corpus_tokens=int(len(data)), seed=a.seed,
                 arch=dict(hidden=a.hidden, ffn=a.ffn, layers=a.layers, heads=a.heads, kv_heads=a.kv_heads,
                           ctx=a.ctx, batch=a.batch, lr=a.lr, minutes=a.minutes))
    json.dump({"stats": stats, "samples": res}, open(os.path.join(a.out, "train_report.json"), "w"), indent=2)
    log("RESULT " + json.dumps(stats))


if __name__ == "__main__":
    main()
