#!/usr/bin/env python3
"""Writes tests/data/sampling/hf_vectors.json: fixed logit vectors run through
Hugging Face's logits processors, for tests/unit/llm/sampling_hf_test.c.

    hf_sampling_vectors.py [--numpy] [--out FILE]

Default mode needs torch and transformers (CPU only, one thread, a few
seconds): each case applies HF's SequenceBiasLogitsProcessor (one-token
sequences: a logit bias), RepetitionPenaltyLogitsProcessor, TopKLogitsWarper, TopPLogitsWarper, MinPLogitsWarper, TypicalLogitsWarper and
TemperatureLogitsWarper, one at a time or chained. OpenAI's presence and
frequency penalties have no HF processor; this script computes them itself
with OpenAI's formula (the same code in both modes):

    logit[j] -= count[j] * frequency_penalty + (count[j] > 0) * presence_penalty

--numpy replaces every HF processor by a numpy re-implementation of the same
algorithm in float32 (read from transformers' logits_process.py). Its output
is labelled "source": "numpy" and is NOT from Hugging Face; it let the C test
be written before the real run, and shows what the script assumes of HF (on
transformers 5.24.0 and torch 2.15.0 it matched bit for bit but for the order
of a tie inside top-p, which torch leaves unspecified).

Each case also carries "expect_poot": the surviving ids under poot's own
definitions (docs/sampling.md: llama.cpp's chain, sums in double, ties to the
lower id), computed here independently of the C code. A case whose
"compare" is "equal" is one where the definitions agree, and the script
checks that every cut is clear of rounding (margins below); any other
"compare" names a difference of definition (docs/sampling.md, "Hugging Face
vectors") that the case exhibits.

Deterministic: fixed numpy seeds, no torch randomness, one torch thread.
"""

import argparse
import math
import os
import platform
import sys

import numpy as np

F32 = np.float32
# A cut is "clear" when no cumulative mass lies within MASS_MARGIN of p, no
# logit within LOGIT_MARGIN of min-p's threshold, and typical-p's two scores
# around the cut differ by more than SCORE_MARGIN. HF sums in float32, poot in
# double; these margins are far above float32's rounding at these sizes.
MASS_MARGIN = 1e-4
LOGIT_MARGIN = 1e-3
SCORE_MARGIN = 1e-4
# POOT_SAMPLING_MAX_TOP_K: with top_k = 0, typical-p and top-p see the 1,024
# most likely tokens (docs/sampling.md, "Capacities").
MAX_TOP_K = 1024

# ------------------------------------------------------------- the vectors


def q3(x):
    """float32 values with three decimals: short in JSON, exact through strtof."""
    return np.round(np.asarray(x, dtype=np.float64), 3).astype(F32)


def make_vectors():
    v = {}
    r = np.random.default_rng(1501)
    x = r.normal(0.0, 1.0, 50)
    x[17] += 8.0
    v["peaked50"] = q3(x)
    v["flat50"] = q3(r.normal(0.0, 0.1, 50))
    x = r.normal(0.0, 3.0, 50)
    x[5] = 0.0
    x[6] = -0.0
    v["mixed50"] = q3(x)
    v["ties50"] = (r.integers(-12, 13, 50) / 4.0).astype(F32)
    r = np.random.default_rng(1502)
    v["gauss1000"] = q3(r.normal(0.0, 2.0, 1000))
    ranks = r.permutation(1000) + 1
    v["zipf1000"] = q3(-1.1 * np.log(ranks) + r.normal(0.0, 0.05, 1000) + 4.0)
    r = np.random.default_rng(1503)
    x = r.normal(0.0, 2.5, 32000)
    x[r.choice(32000, 8, replace=False)] = r.uniform(10.5, 12.5, 8)
    v["llm32000"] = q3(x)
    r = np.random.default_rng(1504)
    v["smooth32000"] = r.normal(0.0, 1.0, 32000).astype(F32)  # unquantized: no ties
    return v


# ------------------------------------------- OpenAI's penalties (both modes)


def openai_penalties(logits, history, presence, frequency):
    out = logits.copy()
    counts = np.bincount(np.asarray(history, dtype=np.int64), minlength=len(logits))
    seen = counts > 0
    c = counts[seen].astype(F32)
    out[seen] = out[seen] - c * F32(frequency) - F32(presence)
    return out


# --------------------------------- HF's processors, re-implemented in numpy


def np_softmax(x):
    m = np.max(x)
    e = np.exp((x - m).astype(F32)).astype(F32)
    return (e / np.sum(e, dtype=F32)).astype(F32)


class NumpyHF:
    """HF's algorithms in float32, as transformers' logits_process.py has them."""

    name = "numpy"

    @staticmethod
    def versions():
        return {"numpy": np.__version__}

    @staticmethod
    def bias(x, bias):
        b = np.zeros_like(x)
        for i, v in bias:
            b[i] = v
        return (x + b).astype(F32)

    @staticmethod
    def repetition(x, history, penalty):
        ids = np.unique(np.asarray(history, dtype=np.int64))
        s = x[ids]
        x = x.copy()
        x[ids] = np.where(s < 0, s * F32(penalty), s / F32(penalty)).astype(F32)
        return x

    @staticmethod
    def temperature(x, t):
        return (x / F32(t)).astype(F32)

    @staticmethod
    def top_k(x, k):
        k = min(k, len(x))
        kth = np.sort(x)[::-1][k - 1]
        return np.where(x < kth, F32(-np.inf), x).astype(F32)

    @staticmethod
    def top_p(x, p):
        idx = np.argsort(x, kind="stable")
        cum = np.cumsum(np_softmax(x[idx]), dtype=F32)
        remove = cum <= F32(1.0 - p)
        remove[-1:] = False
        out = x.copy()
        out[idx[remove]] = -np.inf
        return out

    @staticmethod
    def min_p(x, p):
        probs = np_softmax(x)
        remove = probs < F32(p) * np.max(probs)
        remove[np.argmax(probs)] = False
        return np.where(remove, F32(-np.inf), x).astype(F32)

    @staticmethod
    def typical(x, mass):
        with np.errstate(divide="ignore", invalid="ignore"):
            m = np.max(x)
            lse = m + F32(np.log(np.sum(np.exp((x - m).astype(F32)), dtype=F32)))
            normalized = (x - lse).astype(F32)
            p = np.exp(normalized).astype(F32)
            ent = -np.nansum(normalized * p, dtype=F32)
            shifted = np.abs(-normalized - ent).astype(F32)
        idx = np.argsort(shifted, kind="stable")
        ss = shifted[idx]
        cum = np.cumsum(np_softmax(x[idx]), dtype=F32)
        last = min(int(np.sum(cum < F32(mass))), len(x) - 1)
        remove = ss > ss[last]
        remove[:1] = False
        out = x.copy()
        out[idx[remove]] = -np.inf
        return out


class TorchHF:
    """The real thing: transformers' processors on CPU torch tensors."""

    name = "transformers"

    def __init__(self):
        import torch
        import transformers

        torch.set_num_threads(1)
        self.torch, self.tf = torch, transformers

    def versions(self):
        return {
            "numpy": np.__version__,
            "torch": self.torch.__version__,
            "transformers": self.tf.__version__,
        }

    def _run(self, proc, x, history=None):
        t = self.torch
        ids = t.tensor([list(history or [0])], dtype=t.long)
        out = proc(ids, t.from_numpy(x.copy()).unsqueeze(0))
        return out.squeeze(0).numpy().astype(F32)

    def bias(self, x, bias):
        seq = {(int(i),): float(v) for i, v in bias}
        try:
            proc = self.tf.SequenceBiasLogitsProcessor(sequence_bias=seq)
        except (TypeError, ValueError):  # a version that takes only [[ids], bias] pairs
            proc = self.tf.SequenceBiasLogitsProcessor(
                sequence_bias=[[[int(i)], float(v)] for i, v in bias]
            )
        return self._run(proc, x)

    def repetition(self, x, history, penalty):
        return self._run(
            self.tf.RepetitionPenaltyLogitsProcessor(penalty=float(penalty)), x, history
        )

    def temperature(self, x, t):
        return self._run(self.tf.TemperatureLogitsWarper(float(t)), x)

    def top_k(self, x, k):
        return self._run(self.tf.TopKLogitsWarper(top_k=int(k)), x)

    def top_p(self, x, p):
        return self._run(self.tf.TopPLogitsWarper(top_p=float(p)), x)

    def min_p(self, x, p):
        return self._run(self.tf.MinPLogitsWarper(min_p=float(p)), x)

    def typical(self, x, mass):
        return self._run(self.tf.TypicalLogitsWarper(mass=float(mass)), x)


# ----------------------------------- poot's definitions, for expect_poot


class Cut(Exception):
    pass


def poot_penalize(x, counts, rep, presence, frequency):
    x = x.copy()
    seen = counts > 0
    s = x[seen]
    s = np.where(s <= 0, s * F32(rep), s / F32(rep)).astype(F32)
    x[seen] = (s - (counts[seen].astype(F32) * F32(frequency) + F32(presence))).astype(F32)
    return x


def softmax64(logits):
    e = np.exp(logits.astype(np.float64) - float(np.max(logits)))
    return e / np.sum(e)


def poot_survivors(x, counts, p, bias, check):
    """Survivor ids (sorted by logit, ties to the lower id) under poot's chain.
    check: raise Cut when a cut lies within the margins."""
    x = x.copy()
    for i, v in bias:
        x[i] = F32(x[i] + F32(v))
    x = poot_penalize(x, counts, p["repeat_penalty"], p["presence_penalty"], p["frequency_penalty"])
    ids = [i for i in range(len(x)) if x[i] > -np.inf]
    ids.sort(key=lambda i: (-float(x[i]), i))
    ids = np.array(ids, dtype=np.int64)
    k = p["top_k"]
    capped = False
    if k == 0 and (p["typical_p"] < 1.0 or p["top_p"] < 1.0):
        k = MAX_TOP_K  # the sorting samplers see at most the capacity
        capped = True
    cap_tie = False
    if k > 0 and k < len(ids):
        cap_tie = bool(x[ids[k - 1]] == x[ids[k]])
        if check and cap_tie and not capped:
            raise Cut("top-k cut inside a tie")
        ids = ids[:k]
    if p["typical_p"] < 1.0:
        ids = poot_typical(x, ids, p["typical_p"], check)
    if p["top_p"] < 1.0:
        if p["top_k"] == 0 and p["typical_p"] >= 1.0:
            # top-p over the whole vocabulary: the mass of the full softmax,
            # though only the capacity's most likely tokens can be kept
            alive = x[x > -np.inf].astype(np.float64)
            mx = float(np.max(alive))
            prob = np.exp(x[ids].astype(np.float64) - mx) / np.sum(np.exp(alive - mx))
        else:
            prob = softmax64(x[ids])
        cum = np.cumsum(prob)
        keep = next((i + 1 for i in range(len(ids)) if cum[i] >= p["top_p"]), len(ids))
        if check and (np.min(np.abs(cum - p["top_p"])) < MASS_MARGIN):
            raise Cut("top-p cut within %g of p" % MASS_MARGIN)
        if check and keep < len(ids) and x[ids[keep - 1]] == x[ids[keep]]:
            raise Cut("top-p cut inside a tie")
        ids = ids[:keep]
    if check and capped and cap_tie and len(ids) == MAX_TOP_K:
        raise Cut("the capacity's cut inside a tie")
    if p["min_p"] > 0.0:
        thr = F32(x[ids[0]]) + F32(math.log(p["min_p"]))
        keep = max(1, int(np.sum(x[ids] >= thr)))
        if check and np.min(np.abs(x[ids].astype(np.float64) - float(thr))) < LOGIT_MARGIN:
            raise Cut("min-p threshold within %g of a logit" % LOGIT_MARGIN)
        ids = ids[:keep]
    return ids


def poot_typical(x, ids, mass, check):
    prob = softmax64(x[ids])
    ent = -np.sum(prob * np.log(prob))
    score = np.abs(-np.log(prob) - ent)
    order = sorted(range(len(ids)), key=lambda r: (score[r], r))
    cum = np.cumsum(prob[order])
    keep = next((i + 1 for i in range(len(ids)) if cum[i] > mass), len(ids))
    if check:
        if np.min(np.abs(cum - mass)) < MASS_MARGIN:
            raise Cut("typical cut within %g of p" % MASS_MARGIN)
        if keep < len(ids) and score[order[keep]] - score[order[keep - 1]] < SCORE_MARGIN:
            raise Cut("typical cut between near-equal scores")
    kept = ids[sorted(order[:keep])]
    return kept


# ------------------------------------------------------------------ cases

OFF = {
    "top_k": 0,
    "top_p": 1.0,
    "min_p": 0.0,
    "typical_p": 1.0,
    "repeat_penalty": 1.0,
    "repeat_last_n": -1,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "temperature": 1.0,
}


def history_for(vec, n, seed):
    r = np.random.default_rng(seed)
    return [int(t) for t in r.integers(0, len(vec), n)]


def case(name, vector, compare="equal", history=(), order=None, bias=(), **params):
    p = dict(OFF)
    for k, v in params.items():
        if k not in p:
            raise SystemExit("case %s: unknown parameter %s" % (name, k))
        p[k] = v
    return {
        "name": name,
        "vector": vector,
        "compare": compare,
        "history": list(history),
        "params": p,
        "order": order,
        "bias": [(int(i), float(b)) for i, b in bias],
    }


def tie_k(x):
    """The smallest k >= 3 whose cut lies inside a tie (top-k keeps exactly k)."""
    s = np.sort(x)[::-1]
    return next(k for k in range(3, len(s)) if s[k - 1] == s[k])


def tie_top_p(x):
    """A p whose top-p cut (poot's order) falls inside a tie group of 3 or more."""
    ids = sorted(range(len(x)), key=lambda i: (-float(x[i]), i))
    cum = np.cumsum(softmax64(x[ids]))
    for m in range(2, len(ids) - 2):
        if x[ids[m - 1]] == x[ids[m]] == x[ids[m + 1]] and cum[m - 2] > 0.3:
            return float((cum[m - 2] + cum[m - 1]) / 2)
    raise SystemExit("no tie group for top-p")


def tie_typical(x):
    """A mass whose typical-p cut falls inside a group of equal scores."""
    ids = np.array(sorted(range(len(x)), key=lambda i: (-float(x[i]), i)))
    prob = softmax64(x[ids])
    score = np.abs(-np.log(prob) - (-np.sum(prob * np.log(prob))))
    order = sorted(range(len(ids)), key=lambda r: (score[r], r))
    cum = np.cumsum(prob[order])
    for m in range(2, len(ids) - 1):
        if score[order[m - 1]] == score[order[m]] and cum[m - 2] > 0.2:
            return float((cum[m - 2] + cum[m - 1]) / 2)
    raise SystemExit("no tie group for typical-p")


def make_cases(v):
    h50 = [17, 5, 6, 3, 3, 3, 40, 41, 0, 17, 22, 9]  # 17 the peak, 5 and 6 are +0 and -0
    h1000 = history_for(v["gauss1000"], 64, 7) + [int(np.argmax(v["gauss1000"]))]
    h32k = history_for(v["llm32000"], 60, 8) + [int(i) for i in np.argsort(v["llm32000"])[-4:]]
    hwin = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 40, 41, 42, 43, 44, 45, 46, 47]
    c = [
        # Penalties alone.
        case("repetition_peaked50", "peaked50", history=h50, repeat_penalty=1.3),
        case("repetition_mixed50", "mixed50", history=h50, repeat_penalty=1.3),
        case("repetition_reward_mixed50", "mixed50", history=h50, repeat_penalty=0.8),
        case("presence_mixed50", "mixed50", history=h50, presence_penalty=0.6),
        case("frequency_mixed50", "mixed50", history=h50, frequency_penalty=0.4),
        case(
            "presence_frequency_negative_mixed50",
            "mixed50",
            history=h50,
            presence_penalty=-0.5,
            frequency_penalty=-0.25,
        ),
        case(
            "all_penalties_gauss1000",
            "gauss1000",
            history=h1000,
            repeat_penalty=1.15,
            presence_penalty=0.3,
            frequency_penalty=0.2,
        ),
        case(
            "repetition_window_gauss1000",
            "gauss1000",
            history=hwin,
            repeat_penalty=1.5,
            repeat_last_n=8,
        ),
        # Logit bias (HF's SequenceBiasLogitsProcessor with one-token sequences),
        # before the penalties in both (generate() adds it first).
        case("bias_mixed50", "mixed50", bias=[(3, 2.5), (10, -1.25), (20, -np.inf), (5, 1.0)]),
        case(
            "bias_penalties_top_k_mixed50",
            "mixed50",
            history=h50,
            bias=[(3, 1.5), (17, -2.0), (9, -np.inf)],
            repeat_penalty=1.3,
            presence_penalty=0.6,
            frequency_penalty=0.4,
            top_k=10,
        ),
        case(
            "bias_ban_top_p_gauss1000",
            "gauss1000",
            bias=[(int(i), -np.inf) for i in np.argsort(v["gauss1000"])[-3:]],
            top_p=0.9,
        ),
        # Truncations alone, temperature 1.
        case("top_k_1_mixed50", "mixed50", top_k=1),
        case("top_k_5_peaked50", "peaked50", top_k=5),
        case("top_k_7_mixed50", "mixed50", top_k=7),
        case("top_k_20_gauss1000", "gauss1000", top_k=20),
        case("top_k_40_llm32000", "llm32000", top_k=40),
        case("top_p_0.9_mixed50", "mixed50", top_p=0.9),
        case("top_p_0.95_flat50", "flat50", top_p=0.95),
        case("top_p_0.5_zipf1000", "zipf1000", top_p=0.5),
        case("top_p_0.8_peaked50", "peaked50", top_p=0.8),
        case("top_p_0.99_peaked50", "peaked50", top_p=0.99),
        case("min_p_0.05_mixed50", "mixed50", min_p=0.05),
        case("min_p_0.01_gauss1000", "gauss1000", min_p=0.01),
        case("min_p_0.05_llm32000", "llm32000", min_p=0.05),
        case("min_p_0.3_flat50", "flat50", min_p=0.3),
        case("typical_0.9_mixed50", "mixed50", typical_p=0.9),
        case("typical_0.5_zipf1000", "zipf1000", typical_p=0.5),
        case("typical_0.2_peaked50", "peaked50", typical_p=0.2),
        case("typical_0.7_flat50", "flat50", typical_p=0.7),
        # Chains, in poot's order (top-k, typical, top-p, min-p) with HF's warpers.
        case("llama_defaults_gauss1000", "gauss1000", top_k=40, top_p=0.95, min_p=0.05),
        case("llama_defaults_llm32000", "llm32000", top_k=40, top_p=0.95, min_p=0.05),
        case(
            "penalties_top_k_llm32000",
            "llm32000",
            history=h32k,
            repeat_penalty=1.1,
            presence_penalty=0.2,
            frequency_penalty=0.1,
            top_k=40,
        ),
        case(
            "everything_gauss1000",
            "gauss1000",
            history=h1000,
            repeat_penalty=1.2,
            presence_penalty=0.3,
            frequency_penalty=0.2,
            top_k=50,
            typical_p=0.9,
            top_p=0.9,
            min_p=0.02,
        ),
        case("top_p_min_p_mixed50", "mixed50", top_p=0.9, min_p=0.1),
        case(
            "penalties_typical_mixed50",
            "mixed50",
            history=h50,
            repeat_penalty=1.3,
            frequency_penalty=0.5,
            typical_p=0.8,
        ),
        # Temperature where it commutes with the truncation (top-k only).
        case("temperature_0.7_mixed50", "mixed50", temperature=0.7),
        case("temperature_0.5_top_k_10_gauss1000", "gauss1000", temperature=0.5, top_k=10),
        case(
            "temperature_1.5_penalties_top_k_mixed50",
            "mixed50",
            history=h50,
            temperature=1.5,
            repeat_penalty=1.3,
            top_k=8,
        ),
        # Differences of definition.
        case("ties_top_k", "ties50", compare="top_k_ties", top_k=tie_k(v["ties50"])),
        case("ties_top_p", "ties50", compare="top_p_ties", top_p=tie_top_p(v["ties50"])),
        case("ties_typical", "ties50", compare="typical_ties", typical_p=tie_typical(v["ties50"])),
        case(
            "temperature_first_top_p",
            "mixed50",
            compare="temperature_first",
            temperature=0.5,
            top_p=0.9,
        ),
        case(
            "temperature_first_min_p",
            "gauss1000",
            compare="temperature_first",
            temperature=1.5,
            min_p=0.1,
        ),
        case(
            "generate_order_top_p_typical",
            "gauss1000",
            compare="generate_order",
            top_p=0.6,
            typical_p=0.5,
            order="hf_generate",
        ),
        case("top_p_whole_vocab_llm32000", "llm32000", top_p=0.8),
        case("top_p_capacity_smooth32000", "smooth32000", compare="top_k_capacity", top_p=0.9),
        case(
            "repetition_no_window",
            "gauss1000",
            compare="no_window",
            history=hwin,
            repeat_penalty=1.5,
            repeat_last_n=8,
        ),
    ]
    return c


# ------------------------------------------------------------ applying HF


def window(history, last_n):
    return history if last_n < 0 else history[len(history) - last_n :] if last_n else []


def apply_hf(hf, x, c):
    """The HF processors of one case, in poot's order unless the case asks for
    generate()'s (temperature, top-k, top-p, min-p, typical). Returns the
    output logits and the chain applied, in words."""
    p, chain = c["params"], []
    if c["bias"]:
        x = hf.bias(x, c["bias"])
        chain.append("SequenceBiasLogitsProcessor(%d single-token entries)" % len(c["bias"]))
    hist = c["history"] if c["compare"] == "no_window" else window(c["history"], p["repeat_last_n"])
    if p["repeat_penalty"] != 1.0 and hist:
        x = hf.repetition(x, hist, p["repeat_penalty"])
        chain.append(
            "RepetitionPenaltyLogitsProcessor(penalty=%r) on %d ids"
            % (p["repeat_penalty"], len(hist))
        )
    if (p["presence_penalty"] or p["frequency_penalty"]) and hist:
        x = openai_penalties(x, hist, p["presence_penalty"], p["frequency_penalty"])
        chain.append(
            "OpenAI presence=%r frequency=%r (this script)"
            % (p["presence_penalty"], p["frequency_penalty"])
        )
    warpers = []
    if p["temperature"] != 1.0:
        warpers.append(("temperature", p["temperature"], "TemperatureLogitsWarper"))
    if p["top_k"] > 0:
        warpers.append(("top_k", p["top_k"], "TopKLogitsWarper"))
    if c["order"] == "hf_generate":
        if p["top_p"] < 1.0:
            warpers.append(("top_p", p["top_p"], "TopPLogitsWarper"))
        if p["min_p"] > 0.0:
            warpers.append(("min_p", p["min_p"], "MinPLogitsWarper"))
        if p["typical_p"] < 1.0:
            warpers.append(("typical", p["typical_p"], "TypicalLogitsWarper"))
    else:
        if p["typical_p"] < 1.0:
            warpers.append(("typical", p["typical_p"], "TypicalLogitsWarper"))
        if p["top_p"] < 1.0:
            warpers.append(("top_p", p["top_p"], "TopPLogitsWarper"))
        if p["min_p"] > 0.0:
            warpers.append(("min_p", p["min_p"], "MinPLogitsWarper"))
    for fn, arg, cls in warpers:
        x = getattr(hf, fn)(x, arg)
        chain.append("%s(%r)" % (cls, arg))
    return x, chain


# ------------------------------------------------------------- the output


def fnum(x):
    """The shortest decimal that float32 reads back exactly; null for -inf."""
    if x == -np.inf:
        return "null"
    if not np.isfinite(x):
        raise SystemExit("a non-finite output logit %r" % x)
    return str(F32(x))


def farray(a):
    return "[" + ",".join(fnum(x) for x in a) + "]"


def jstr(s):
    import json

    return json.dumps(s)


def jval(v):
    if isinstance(v, float):
        return repr(v)
    return jstr(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)


OPENAI = "logit -= count * frequency + (count > 0) * presence, in float32, computed by the script"


def members(pairs, sep):
    """A JSON object's members from (key, already-rendered value) pairs."""
    return sep.join("%s: %s" % (jstr(k), v) for k, v in pairs)


def case_json(c, hfout, chain, expect):
    params = members(((k, jval(c["params"][k])) for k in OFF), ", ")
    bias = ", ".join("[%d, %s]" % (i, fnum(F32(b))) for i, b in c["bias"])
    pairs = (
        ("name", jstr(c["name"])),
        ("vector", jstr(c["vector"])),
        ("compare", jstr(c["compare"])),
        ("history", "[%s]" % ",".join(str(t) for t in c["history"])),
        ("params", "{%s}" % params),
        ("bias", "[%s]" % bias),
        ("hf_chain", "[%s]" % ", ".join(jstr(s) for s in chain)),
        ("hf_out", farray(hfout)),
        ("expect_poot", "[%s]" % ",".join(str(int(t)) for t in sorted(expect))),
    )
    return "{%s}" % members(pairs, ",\n ")


def write(path, hf, vectors, results):
    label = (
        "numpy re-implementation of HF's logits processors: NOT from Hugging Face; rerun "
        "without --numpy on a machine with torch and transformers"
        if hf.name == "numpy"
        else "Hugging Face transformers' logits processors on CPU torch"
    )
    vers = dict(hf.versions(), python=platform.python_version())
    top = [
        ("generator", jstr("scripts/hf_sampling_vectors.py")),
        ("source", jstr(hf.name)),
        ("label", jstr(label)),
        ("versions", "{%s}" % members(((k, jstr(str(vers[k]))) for k in sorted(vers)), ", ")),
        ("openai_penalties", jstr(OPENAI)),
        ("vectors", "{\n%s\n}" % members(((k, farray(v)) for k, v in vectors.items()), ",\n")),
        ("cases", "[\n%s\n]" % ",\n".join(case_json(*r) for r in results)),
    ]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("{\n%s\n}\n" % members(top, ",\n"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--numpy", action="store_true", help="numpy re-implementation, not HF (labelled so)"
    )
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument(
        "--out",
        default=os.path.normpath(
            os.path.join(here, "..", "tests", "data", "sampling", "hf_vectors.json")
        ),
    )
    a = ap.parse_args()
    hf = NumpyHF() if a.numpy else TorchHF()
    vectors = make_vectors()
    results, bad = [], 0
    for c in make_cases(vectors):
        x = vectors[c["vector"]]
        p = c["params"]
        counts = np.bincount(
            np.asarray(window(c["history"], p["repeat_last_n"]), dtype=np.int64), minlength=len(x)
        )
        try:
            expect = poot_survivors(x, counts, p, c["bias"], check=c["compare"] == "equal")
        except Cut as e:
            raise SystemExit("case %s: %s; change its parameters" % (c["name"], e))
        hfout, chain = apply_hf(hf, x, c)
        kept = set(np.nonzero(hfout > -np.inf)[0].tolist())
        same = kept == set(expect.tolist())
        if c["compare"] == "equal" and not same:
            bad += 1
        print(
            "%-42s %-18s HF keeps %5d, poot %5d%s"
            % (c["name"], c["compare"], len(kept), len(expect), "" if same else "  (sets differ)")
        )
        results.append((c, hfout, chain, expect))
    write(a.out, hf, vectors, results)
    print(
        "wrote %s (%d cases, %s, %d bytes)" % (a.out, len(results), hf.name, os.path.getsize(a.out))
    )
    if bad:
        print("%d case(s) marked equal have different surviving sets" % bad, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
