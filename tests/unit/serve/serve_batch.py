#!/usr/bin/env python3
"""`poot serve --max-seqs 4` (the batched engine, docs/serve.md "The two engines") end to end
on the demo model on Vulkan (SKIP without a Vulkan device or the demo model):

- five lost devices injected (POOT_SERVE_INJECT_FAULT=device_lost:3:5, docs/serve.md
  "Faults"), each after a sequence's 3rd id since it started: a lone streamed request that
  faults twice ends with an error event (DEVICE_LOST, "twice") instead of [DONE], a lone
  request that faults twice fails with 500 DEVICE_LOST; then four concurrent greedy
  completions, two of them streamed, go through the fifth (a new device context and executor,
  every sequence prefilled again from its ids) and give exactly the texts the one-sequence
  engine (--max-seqs 1) gives them (batch invariance and recovery through the server); five
  rebuilds and two failed requests are counted, and the running sequences and KV blocks in use
  return to 0;
- a stream closed after a few chunks is cancelled: the running sequences and the KV blocks
  in use return to 0 (/metrics);
- logprobs: a greedy completion (logprobs 3), a seeded sampled one streamed (logprobs 2) and a
  greedy chat (logprobs, top_logprobs 2) give the same tokens and alternatives at --max-seqs 4
  as at --max-seqs 1 (the seeded draw too), and logprobs within LP_TOL (the runner's paged K/V
  against the driver's contiguous ones: the same math through other kernels; see LP_TOL and
  llm_batch_vulkan test_logprobs);
- penalties and grammars: a json_schema completion (response_format), a chat with a forced
  tool call (tool_choice required) and a penalized completion (presence, frequency and
  repetition penalties), sent together with a greedy one, give the --max-seqs 1 texts, tool
  calls and finish reasons at --max-seqs 4;
- an image to this text model is a 400 naming the field (images at --max-seqs 4 on a vision
  model: serve_vision).
The fault checks share the batched server with the rest: a server's start (compiling its
entries) costs more CPU time than the three recoveries (CI time). The executor reset
(KERNEL_FAULT) is tested on the runner (llm_batch_vulkan test_recover)."""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

PROMPTS = ["Once upon a time", "The little dog", "In the morning, Lily", "Tom wanted to"]
# 4·τ: τ the tier-2 tolerance of a logit (docs/verification.md, poot_verify_tolerance:
# κ·λ·u·√(2S), κ = 8, λ = 6, u = 2^-24, rms taken as 1) of the demo model (6 layers, hidden
# 256, head_dim 32, 8 heads, ffn 512) at a capacity of 512; each engine's logits are within τ
# of the oracle's, so 2·τ of each other, and a logprob x_i − lse(x) moves by at most twice
# that (2.1e-3). Both engines keep f16 K/V here (the default; the f16 rounding of a row can
# differ by an ulp): measured 2.5e-4 apart on lavapipe.
LP_TOL = 4 * 8 * 6 * 2**-24 * (2 * (6 * (4 * 256 + 32 + 2 * 512 + 8 * 32 + 512) + 2 * 256)) ** 0.5
LP_REQS = [
    ("/v1/completions", {"prompt": PROMPTS[1], "max_tokens": 8, "temperature": 0, "logprobs": 3}),
    ("/v1/completions", {"prompt": PROMPTS[2], "max_tokens": 8, "temperature": 1, "seed": 7,
                         "logprobs": 2, "stream": True}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": PROMPTS[3]}],
                              "max_tokens": 6, "temperature": 0, "logprobs": True,
                              "top_logprobs": 2}),
]


SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                         "age": {"type": "integer", "minimum": 0,
                                                 "maximum": 99}},
          "required": ["name", "age"], "additionalProperties": False}
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string", "maxLength": 10}},
    "required": ["city"], "additionalProperties": False}}}
# Penalties and grammars, run together at --max-seqs 4 beside a greedy request.
CONSTRAINED = [
    ("/v1/completions", {"prompt": PROMPTS[0], "max_tokens": 40, "temperature": 0,
                         "response_format": {"type": "json_schema",
                                             "json_schema": {"name": "p", "schema": SCHEMA}}}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": PROMPTS[2]}],
                              "max_tokens": 48, "temperature": 0, "tools": [TOOL],
                              "tool_choice": "required"}),
    ("/v1/completions", {"prompt": PROMPTS[3], "max_tokens": 16, "temperature": 0,
                         "presence_penalty": 2, "frequency_penalty": 2,
                         "repetition_penalty": 8}),
    ("/v1/completions", {"prompt": PROMPTS[3], "max_tokens": 16, "temperature": 0}),
]


def answer_of(s, path, body):
    """A request's text (completions) or message (chat: content and tool calls, ids dropped)."""
    ch = json.load(s.post(path, body))["choices"][0]
    if "text" in ch:
        return ch["text"], ch["finish_reason"]
    msg = ch["message"]
    calls = [(c["function"]["name"], c["function"]["arguments"]) for c in msg.get("tool_calls") or []]
    return msg.get("content"), calls, ch["finish_reason"]


def answer_all(s, reqs):
    out = {}

    def one(i):
        out[i] = answer_of(s, *reqs[i])
    ts = [threading.Thread(target=one, args=(i,)) for i in range(len(reqs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return [out.get(i) for i in range(len(reqs))]


def logprobs_of(s, path, body):
    """[(token, logprob, [(alternative, logprob)…])…] of one request, whole or streamed."""
    if body.get("stream"):
        parts = []
        for line in s.post(path, body):
            line = line.decode().strip()
            if line.startswith("data: {"):
                parts += [c["logprobs"] for c in json.loads(line[6:])["choices"] if c.get("logprobs")]
    else:
        parts = [json.load(s.post(path, body))["choices"][0]["logprobs"]]
    out = []
    for lp in parts:
        if "content" in lp:  # chat
            out += [(t["token"], t["logprob"], [(a["token"], a["logprob"]) for a in t["top_logprobs"]])
                    for t in lp["content"]]
        else:
            out += [(t, l, list(a.items())) for t, l, a in
                    zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"])]
    return out


def same_logprobs(a, b):
    """The same tokens and alternatives, the logprobs within LP_TOL; the largest difference."""
    if len(a) != len(b) or not a:
        return False, None
    worst = 0.0
    for (ta, la, aa), (tb, lb, ab) in zip(a, b):
        if ta != tb or [t for t, _ in aa] != [t for t, _ in ab]:
            return False, None
        worst = max([worst, abs(la - lb)] + [abs(x - y) for (_, x), (_, y) in zip(aa, ab)])
    return worst <= LP_TOL, worst


class Server:
    def __init__(self, poot, model, seqs, fault=None):
        env = dict(os.environ, POOT_SERVE_INJECT_FAULT=fault) if fault else None
        self.p = subprocess.Popen([poot, "serve", "-m", model, "--device", "vulkan", "--port", "0",
                                   "--max-seqs", str(seqs), "-q"], stdout=subprocess.PIPE, text=True,
                                  env=env)
        line = self.p.stdout.readline()
        self.base = line[line.index("http://"):].split()[0].rstrip("/")

    def post(self, path, body, stream=False):
        req = urllib.request.Request(self.base + path, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        return urllib.request.urlopen(req, timeout=300)

    def metrics(self):
        text = urllib.request.urlopen(self.base + "/metrics", timeout=60).read().decode()
        return {l.split()[0]: float(l.split()[1]) for l in text.splitlines()
                if l and not l.startswith("#")}

    def stop(self):
        self.p.terminate()
        return self.p.wait(timeout=60)


def complete(s, i, out):
    body = {"prompt": PROMPTS[i], "max_tokens": 24, "temperature": 0}
    if i % 2:  # streamed
        body["stream"] = True
        text = ""
        for line in s.post("/v1/completions", body):
            line = line.decode().strip()
            if line.startswith("data: ") and line != "data: [DONE]":
                ch = json.loads(line[6:])
                text += "".join(c["text"] for c in ch["choices"])
        out[i] = text
    else:
        out[i] = json.load(s.post("/v1/completions", body))["choices"][0]["text"]


def run_all(s):
    out = {}
    ts = [threading.Thread(target=complete, args=(s, i, out)) for i in range(len(PROMPTS))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return [out.get(i) for i in range(len(PROMPTS))]


def wait_idle(s):
    """The metrics once no sequence runs and no KV block is used (or after 30 s)."""
    deadline = time.time() + 30
    m = s.metrics()
    while time.time() < deadline and (m.get("poot_running_sequences") or m.get("poot_kv_blocks_used")):
        time.sleep(0.2)
        m = s.metrics()
    return m


def main():
    poot = os.environ.get("POOT")
    if not poot or not os.path.exists(poot):
        print("SKIP: the poot binary is not built")
        return 77
    devs = json.loads(subprocess.run([poot, "devices", "--json"], capture_output=True,
                                     text=True).stdout)
    vk = [b for b in devs["backends"] if b["name"] == "vulkan"]
    if not vk or not vk[0]["present"]:
        print("SKIP: no Vulkan device")
        return 77
    src = os.environ.get("POOT_SOURCE_DIR") or os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    model = os.path.join(src, "models", "poot-demo.gguf")
    if not os.path.exists(model):
        print("SKIP: the demo model is absent")
        return 77
    failed = 0

    def check(ok, what, detail=""):
        nonlocal failed
        print(("ok    " if ok else "FAIL  ") + what + (f": {detail}" if detail and not ok else ""))
        failed += 0 if ok else 1

    one = Server(poot, model, 1)
    try:
        want = run_all(one)
        want_lp = [logprobs_of(one, path, body) for path, body in LP_REQS]
        want_c = [answer_of(one, path, body) for path, body in CONSTRAINED]
    finally:
        one.stop()
    s = Server(poot, model, 4, "device_lost:3:5")
    try:
        events = [l.decode().strip() for l in s.post("/v1/completions", {
            "prompt": PROMPTS[0], "max_tokens": 12, "temperature": 0, "stream": True})]
        data = [json.loads(l[6:]) for l in events if l.startswith("data: {")]
        err = data[-1].get("error", {}) if data else {}
        check(len(data) > 1 and err.get("code") == "DEVICE_LOST" and "twice" in err.get("message", "")
              and "data: [DONE]" not in events,
              "a stream that faults twice ends with an error event", repr(events[-3:]))
        try:
            s.post("/v1/completions", {"prompt": PROMPTS[0], "max_tokens": 12, "temperature": 0})
            check(False, "a request that faults twice fails", "200")
        except urllib.error.HTTPError as e:
            err = json.loads(e.read().decode())["error"]
            check(e.code == 500 and err["code"] == "DEVICE_LOST" and "twice" in err["message"],
                  "a request that faults twice fails alone: 500 DEVICE_LOST", f"{e.code} {err}")
        got = run_all(s)
        check(all(w for w in want), "the one-sequence engine answered all four", repr(want))
        check(got == want, "then four concurrent requests (two streamed) at --max-seqs 4, through a "
              "lost device, = one at a time", f"{got!r} != {want!r}")
        m = wait_idle(s)
        check(m.get('poot_device_recoveries_total{how="rebuild"}') == 5 and
              m.get("poot_device_fault_failures_total") == 2,
              "five new device contexts, two requests failed", str(m))
        check(m.get("poot_running_sequences") == 0 and m.get("poot_kv_blocks_used") == 0,
              "after the recoveries: no sequence runs, no block is used", str(m))
        # Cancel: read a few chunks of a long stream, then close it.
        r = s.post("/v1/completions", {"prompt": PROMPTS[0], "max_tokens": 200, "temperature": 0,
                                       "stream": True})
        for _ in range(3):
            r.readline()
        busy = s.metrics().get("poot_running_sequences", -1)
        r.close()
        m = wait_idle(s)
        check(busy == 1, "a stream in flight is one running sequence", str(busy))
        check(m.get("poot_running_sequences") == 0 and m.get("poot_kv_blocks_used") == 0,
              "a closed stream is cancelled: no sequence runs, no block is used", str(m))
        # Prefix reuse: a long prompt's full blocks, published by its first run, are
        # matched by its second (the counter counts prompt tokens matched in the pool).
        long_prompt = " ".join([PROMPTS[0]] * 8)
        before = m.get("poot_prefix_cache_hits_total", -1)
        texts = [json.loads(s.post("/v1/completions", {"prompt": long_prompt, "max_tokens": 2,
                                                       "temperature": 0}).read())["choices"][0]["text"]
                 for _ in range(2)]
        m = wait_idle(s)
        hits = m.get("poot_prefix_cache_hits_total", -1)
        check(texts[0] == texts[1] and before >= 0 and hits >= before + 16,
              "a repeated long prompt is matched in the pool (poot_prefix_cache_hits_total)",
              f"{before} -> {hits}, {texts!r}")
        got_lp = [logprobs_of(s, path, body) for path, body in LP_REQS]
        for (path, body), w, g in zip(LP_REQS, want_lp, got_lp):
            ok, worst = same_logprobs(w, g)
            check(ok, f"{path} logprobs{' streamed' if body.get('stream') else ''} at --max-seqs 4 "
                  f"= --max-seqs 1 (at most {worst:.3g} apart, tolerance {LP_TOL:.3g})",
                  f"{g!r} != {w!r}")
        t0 = time.time()
        got_c = answer_all(s, CONSTRAINED)
        print(f"(penalties and grammars at --max-seqs 4: {time.time() - t0:.1f} s)")
        names = ["json_schema completion", "forced tool call", "penalized completion",
                 "greedy beside them"]
        for name, w, g in zip(names, want_c, got_c):
            check(g == w, f"{name} at --max-seqs 4 = --max-seqs 1", f"{g!r} != {w!r}")
        check(want_c[0][0].startswith("{") and json.loads(want_c[0][0]).keys() == {"name", "age"},
              "the json_schema completion is the schema's JSON", repr(want_c[0]))
        check(want_c[1][1] and want_c[1][1][0][0] == "get_weather",
              "the forced tool call calls the tool", repr(want_c[1]))
        check(want_c[2][0] != want_c[3][0], "the penalties change the greedy text",
              repr(want_c[2:]))
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        try:
            s.post("/v1/chat/completions", {"max_tokens": 2, "messages": [
                {"role": "user", "content": [{"type": "text", "text": "x"}, image]}]})
            check(False, "an image to a text model at --max-seqs 4 is refused", "200")
        except urllib.error.HTTPError as e:
            err = json.loads(e.read().decode())["error"]
            check(e.code == 400 and err["param"] == "messages",
                  "an image to a text model at --max-seqs 4: 400 naming messages",
                  f"{e.code} {err}")
    finally:
        rc = s.stop()
    check(rc == 0, "the batched server stops cleanly", str(rc))
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
