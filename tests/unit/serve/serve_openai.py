#!/usr/bin/env python3
"""`poot serve` end to end with the `openai` client (SKIP without a Vulkan device, the
demo model or the client), on the demo model at a context of 128:

- /health, /v1/models (the alias, max_model_len);
- /v1/completions greedy equals `poot generate --temp 0`'s text; a list of two prompts;
  stop strings cut the text (finish_reason "stop"); logprobs (completions' shape);
- /v1/chat/completions greedy ("Hello!" → the README's answer); streaming chunks join to
  the same text, with role first, finish_reason last, a usage chunk and [DONE];
  n = 2; logprobs with top_logprobs (chat's shape, the chosen token first); a strict JSON
  schema parses and validates; the same seed gives the same text;
- cancel mid-stream: the request stops within a few steps (generation counters) and the
  next request still works;
- errors in OpenAI's shape: a wrong API key (401), malformed JSON (400), a wrong type
  naming its field (400), a body past --max-body-bytes (413), a prompt past the context
  (400, context_length_exceeded), a full queue (429 with Retry-After);
- /metrics counters move;
- tools (a test template in the hermes format, which opens a <think> block when no tools
  are given): tool_choice "required" and a named function make a call parsed into
  `tool_calls` whose arguments validate against the tool's schema, streamed (a tool_calls
  delta with its index) and not, finish_reason "tool_calls"; the second turn with the
  call (arguments as a JSON string) and the tool's result renders and answers;
  tool_choice "none" gives content; the reasoning block comes back as reasoning_content,
  streamed as delta.reasoning_content;
- injected device faults (POOT_SERVE_INJECT_FAULT): a lost device and a kernel fault are
  recovered with the unfaulted text; a request that faults twice fails alone (500 naming
  the status) and the next one is answered."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

KEY = "sk-poot-test"
CTX = 128


def fail(*msg):
    print("FAIL:", *msg)
    sys.exit(1)


def check(cond, *msg):
    if not cond:
        fail(*msg)


class Server:
    def __init__(self, poot, model, *args, env=None, ctx=CTX):
        e = dict(os.environ)
        e.update(env or {})
        self.p = subprocess.Popen([poot, "serve", "-m", model, "--device", "vulkan", "--port", "0",
                                   "--ctx", str(ctx), "-q", *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
        line = self.p.stdout.readline()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+) ", line)
        if not m:
            self.p.kill()
            fail("no listening line:", line, self.p.stderr.read())
        self.port = int(m.group(1))
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.p.send_signal(2)
        try:
            rc = self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            fail("the server did not stop on SIGINT")
        check(rc == 0, "the server exited", rc, self.p.stderr.read())

    def raw(self, method, path, body=None, key=KEY, headers=None):
        req = urllib.request.Request(self.base + path, data=body, method=method)
        if key:
            req.add_header("Authorization", "Bearer " + key)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read().decode()

    def metrics(self):
        status, _, text = self.raw("GET", "/metrics")
        check(status == 200, "/metrics", status)
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
        return out


def error_of(status, body, want_status, want_param=None, want_code=None):
    check(status == want_status, "status", status, "wanted", want_status, body)
    err = json.loads(body)["error"]
    check(set(err) == {"message", "type", "param", "code"}, "error shape", err)
    check(err["message"], "an empty error message")
    if want_param is not None:
        check(err["param"] == want_param, "param", err, "wanted", want_param)
    if want_code is not None:
        check(err["code"] == want_code, "code", err, "wanted", want_code)
    return err


def main_checks(poot, model, openai):
    generate = subprocess.run([poot, "generate", "-m", model, "--device", "vulkan", "-p",
                               "Once upon a time", "-n", "12", "--temp", "0", "--json", "-q"],
                              capture_output=True, text=True, timeout=300)
    check(generate.returncode == 0, "poot generate", generate.stderr)
    want = json.loads(generate.stdout)["text"]
    s = Server(poot, model, "--api-key", KEY, "--alias", "demo", "--max-queue", "1",
               "--max-body-bytes", "65536")
    try:
        c = openai.OpenAI(base_url=s.base + "/v1", api_key=KEY, max_retries=0)
        status, _, body = s.raw("GET", "/health", key=None)
        check(status == 200 and json.loads(body)["status"] == "ok", "/health", status, body)
        models = c.models.list().data
        check([m.id for m in models] == ["demo"], "models", models)
        check(json.loads(s.raw("GET", "/v1/models")[2])["data"][0]["max_model_len"] == CTX,
              "max_model_len")

        # completions
        r = c.completions.create(model="demo", prompt="Once upon a time", max_tokens=12,
                                 temperature=0)
        check(r.choices[0].text == want, "greedy completion", repr(r.choices[0].text), repr(want))
        check(r.choices[0].finish_reason == "length", "finish_reason", r.choices[0])
        check(r.usage.completion_tokens == 12 and r.usage.prompt_tokens > 0, "usage", r.usage)
        r = c.completions.create(model="demo", prompt=["Once upon a time", "Once upon a time"],
                                 max_tokens=12, temperature=0)
        check([ch.index for ch in r.choices] == [0, 1] and
              all(ch.text == want for ch in r.choices), "two prompts", r.choices)
        cut = want.index("Jake")
        r = c.completions.create(model="demo", prompt="Once upon a time", max_tokens=12,
                                 temperature=0, stop=["Jake", "zzz"])
        check(r.choices[0].text == want[:cut] and r.choices[0].finish_reason == "stop",
              "stop string", r.choices[0])
        r = c.completions.create(model="demo", prompt="Once upon a time", max_tokens=4,
                                 temperature=0, logprobs=3)
        lp = r.choices[0].logprobs
        check(len(lp.tokens) == 4 and len(lp.token_logprobs) == 4 and len(lp.top_logprobs) == 4,
              "completion logprobs", lp)
        check("".join(lp.tokens) == r.choices[0].text and lp.text_offset[0] == 0,
              "logprob tokens", lp)
        check(all(len(t) == 3 and max(t.values()) <= 0 for t in lp.top_logprobs), "top", lp)

        # chat
        msgs = [{"role": "user", "content": "Hello!"}]
        hello = "Hello! I am Poot. Would you like to hear a story?"
        r = c.chat.completions.create(model="demo", messages=msgs, temperature=0)
        check(r.choices[0].message.content == hello and r.choices[0].finish_reason == "stop",
              "greedy chat", r.choices[0])
        parts = [{"role": "user", "content": [{"type": "text", "text": "Hel"},
                                              {"type": "text", "text": "lo!"}]}]
        r = c.chat.completions.create(model="demo", messages=parts, temperature=0)
        check(r.choices[0].message.content == hello, "content parts", r.choices[0])
        chunks = list(c.chat.completions.create(model="demo", messages=msgs, temperature=0,
                                                stream=True,
                                                stream_options={"include_usage": True}))
        text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
        check(text == hello, "streamed chat", repr(text))
        check(chunks[0].choices[0].delta.role == "assistant", "role first", chunks[0])
        check(chunks[-2].choices[0].finish_reason == "stop", "finish last", chunks[-2])
        check(chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0, "usage chunk",
              chunks[-1])
        status, _, body = s.raw("POST", "/v1/chat/completions", json.dumps(
            {"messages": msgs, "max_tokens": 2, "stream": True}).encode())
        check(body.endswith("data: [DONE]\n\n"), "[DONE]", body[-80:])
        r = c.chat.completions.create(model="demo", messages=msgs, temperature=0, n=2,
                                      max_tokens=6)
        check(len(r.choices) == 2 and r.choices[0].message.content == r.choices[1].message.content
              and r.usage.completion_tokens == 12, "n = 2 greedy", r)
        r = c.chat.completions.create(model="demo", messages=msgs, temperature=1.0, n=2,
                                      max_tokens=8, seed=7)
        check([ch.index for ch in r.choices] == [0, 1], "n = 2 sampled", r)
        r = c.chat.completions.create(model="demo", messages=msgs, temperature=0, max_tokens=5,
                                      logprobs=True, top_logprobs=2)
        content = r.choices[0].logprobs.content
        check(len(content) == 5 and all(len(t.top_logprobs) == 2 for t in content),
              "chat logprobs", content)
        check(all(t.token == t.top_logprobs[0].token and t.logprob <= 0 and
                  t.top_logprobs[0].logprob >= t.top_logprobs[1].logprob for t in content),
              "greedy picks the top logprob", content)
        check("".join(t.token for t in content) == r.choices[0].message.content, "tokens", r)
        chunks = list(c.chat.completions.create(model="demo", messages=msgs, temperature=0,
                                                max_tokens=5, logprobs=True, top_logprobs=2,
                                                stream=True))
        streamed = [t for ch in chunks if ch.choices and ch.choices[0].logprobs
                    for t in ch.choices[0].logprobs.content]
        check([(t.token, t.top_logprobs[1].token) for t in streamed] ==
              [(t.token, t.top_logprobs[1].token) for t in content] and
              sum(1 for ch in chunks if ch.choices and ch.choices[0].logprobs) >= 4,
              "streamed logprobs ride on their chunks", chunks)
        schema = {"type": "object", "properties": {"answer": {"type": "string",
                                                              "enum": ["yes", "no"]}},
                  "required": ["answer"], "additionalProperties": False}
        r = c.chat.completions.create(model="demo", messages=msgs, temperature=0, max_tokens=40,
                                      response_format={"type": "json_schema", "json_schema": {
                                          "name": "yn", "schema": schema, "strict": True}})
        obj = json.loads(r.choices[0].message.content)
        check(list(obj) == ["answer"] and obj["answer"] in ("yes", "no"), "json schema", obj)
        runs = [c.chat.completions.create(model="demo", messages=msgs, temperature=1.0,
                                          max_tokens=12, seed=seed).choices[0].message.content
                for seed in (42, 42, 43)]
        check(runs[0] == runs[1], "same seed, same text", runs)

        # cancel mid-stream, then the next request works
        before = s.metrics()
        stream = c.completions.create(model="demo", prompt="Once upon a time", max_tokens=100,
                                      temperature=0, stream=True)
        got = 0
        for _ in stream:
            got += 1
            if got == 3:
                break
        stream.close()
        for _ in range(100):
            m = s.metrics()
            if m['poot_requests_total{endpoint="completions",outcome="cancelled"}'] > \
                    before['poot_requests_total{endpoint="completions",outcome="cancelled"}']:
                break
            time.sleep(0.05)
        else:
            fail("the closed stream was not counted as cancelled")
        made = m["poot_generation_tokens_total"] - before["poot_generation_tokens_total"]
        check(made <= got + 4, "the cancelled request went on for", made, "tokens after", got)
        r = c.completions.create(model="demo", prompt="Once upon a time", max_tokens=12,
                                 temperature=0)
        check(r.choices[0].text == want, "after the cancel", r.choices[0].text)

        # errors
        bad = openai.OpenAI(base_url=s.base + "/v1", api_key="sk-wrong", max_retries=0)
        try:
            bad.models.list()
            fail("a wrong key was accepted")
        except openai.AuthenticationError as err:
            check(err.status_code == 401, "wrong key", err)
        error_of(*s.raw("GET", "/v1/models", key="sk-poot-tesT")[::2], 401)
        error_of(*s.raw("GET", "/v1/models", key=None)[::2], 401)
        error_of(*s.raw("POST", "/v1/chat/completions", b'{"messages": [')[::2], 400)
        error_of(*s.raw("POST", "/v1/chat/completions",
                        b'{"messages": [{"role": "user", "content": "x"}], "temperature": "hot"}'
                        )[::2], 400, "temperature")
        error_of(*s.raw("POST", "/v1/chat/completions",
                        b'{"messages": [{"role": "user", "content": "x"}], "n": 0}')[::2], 400, "n")
        error_of(*s.raw("POST", "/v1/completions", b'{"prompt": "' + b"a" * 70000 + b'"}')[::2],
                 413)
        # a text model has no vision tower
        error_of(*s.raw("POST", "/v1/chat/completions", json.dumps({"messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {
                "url": "data:image/png;base64,iVBORw0KGgo="}}]}]}).encode())[::2], 400,
            "messages")
        # a decoder does not embed
        error_of(*s.raw("POST", "/v1/embeddings", b'{"input": "x"}')[::2], 400, "model",
                 "model_not_supported")
        try:
            c.completions.create(model="demo", prompt="word " * 300, max_tokens=4)
            fail("a prompt past the context was accepted")
        except openai.BadRequestError as err:
            e = err.body if isinstance(err.body, dict) and "code" in err.body else \
                err.body.get("error", err.body)
            check(e["code"] == "context_length_exceeded" and str(CTX) in e["message"],
                  "context error", err.body)

        # a full queue: one running, one waiting, the third is 429
        bodies = json.dumps({"prompt": "Once upon a time", "max_tokens": 100, "temperature": 0,
                             "stream": True}).encode()
        socks = []
        for _ in range(2):
            sk = socket.create_connection(("127.0.0.1", s.port))
            sk.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                       KEY.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: " +
                       str(len(bodies)).encode() + b"\r\n\r\n" + bodies)
            socks.append(sk)
            time.sleep(0.3)
        status, headers, body = s.raw("POST", "/v1/completions", bodies)
        error_of(status, body, 429, None, "queue_full")
        check(headers.get("Retry-After") == "1", "Retry-After", headers)
        for sk in socks:
            sk.close()
        key = 'poot_requests_total{endpoint="completions",outcome="cancelled"}'
        for _ in range(100):
            m = s.metrics()
            if m[key] >= 3 and m["poot_queue_depth"] == 0 and m["poot_running_sequences"] == 0:
                break
            time.sleep(0.05)
        else:
            fail("the closed requests were not cancelled", m)
        check(m['poot_requests_total{endpoint="completions",outcome="rejected"}'] == 1, "rejected")
        check(m['poot_requests_total{endpoint="chat_completions",outcome="ok"}'] >= 9, "chat ok", m)
        check(m['poot_requests_total{endpoint="chat_completions",outcome="client_error"}'] >= 3,
              "client errors", m)
        check(m["poot_time_to_first_token_seconds_count"] > 10 and
              m["poot_inter_token_latency_seconds_count"] > 50, "histograms", m)
        check(m["poot_prompt_tokens_total"] > 0 and m["poot_generation_tokens_total"] > 100,
              "token counters", m)
        r = c.completions.create(model="demo", prompt="Once upon a time", max_tokens=12,
                                 temperature=0)
        check(r.choices[0].text == want, "after the 429", r.choices[0].text)
    finally:
        s.stop()
    return want


# A hermes-format template for the demo model (poot_toolcall_params_detect reads the
# <tool_call> marker with an "arguments" key); without tools the reply starts in a <think>
# block, so the reasoning split is testable with a model that never writes one.
TOOL_TEMPLATE = """{{ bos_token }}{% if tools %}<|system|>
Tools: {% for t in tools %}{{ t.function.name }} {% endfor %}<|end|>
{% endif %}{% for m in messages %}{% if m.role == 'assistant' and m.tool_calls %}<|assistant|>
{% for tc in m.tool_calls %}<tool_call>
{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}
</tool_call>{% endfor %}<|end|>
{% elif m.role == 'tool' %}<|user|>
<tool_response>{{ m.content }}</tool_response><|end|>
{% else %}{{ '<|' + m.role + '|>\n' + m.content + '<|end|>\n' }}{% endif %}{% endfor %}\
{% if add_generation_prompt %}<|assistant|>
{% if not tools %}<think>
{% endif %}{% endif %}"""

WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 10},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "add", "parameters": {
             "type": "object", "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 99},
                                   "b": {"type": "integer", "minimum": 0, "maximum": 99}},
             "required": ["a", "b"], "additionalProperties": False}}}]


def tool_checks(poot, model, openai, tmp):
    import jsonschema
    path = os.path.join(tmp, "tools.jinja")
    with open(path, "w") as f:
        f.write(TOOL_TEMPLATE)
    s = Server(poot, model, "--chat-template", path, "--alias", "demo", ctx=256)
    try:
        c = openai.OpenAI(base_url=s.base + "/v1", api_key="none", max_retries=0)
        msgs = [{"role": "user", "content": "What is the weather in Paris?"}]
        named = {"type": "function", "function": {"name": "get_weather"}}
        r = c.chat.completions.create(model="demo", messages=msgs, tools=TOOLS, tool_choice=named,
                                      temperature=0, max_tokens=120)
        ch = r.choices[0]
        check(ch.finish_reason == "tool_calls" and len(ch.message.tool_calls) == 1 and
              not ch.message.content, "a named function call", ch)
        call = ch.message.tool_calls[0]
        check(call.type == "function" and call.function.name == "get_weather" and
              re.fullmatch(r"call_[A-Za-z0-9]{24}", call.id), "the call", call)
        args = json.loads(call.function.arguments)
        jsonschema.validate(args, WEATHER)
        chunks = list(c.chat.completions.create(model="demo", messages=msgs, tools=TOOLS,
                                                tool_choice="required", temperature=0,
                                                max_tokens=120, stream=True,
                                                parallel_tool_calls=False))
        deltas = [tc for k in chunks if k.choices for tc in (k.choices[0].delta.tool_calls or [])]
        check(len(deltas) == 1 and deltas[0].index == 0 and deltas[0].id.startswith("call_"),
              "streamed tool_calls delta", chunks)
        check(chunks[-1].choices[0].finish_reason == "tool_calls", "streamed finish", chunks[-1])
        check(not "".join(k.choices[0].delta.content or "" for k in chunks), "no content", chunks)
        sargs = json.loads(deltas[0].function.arguments)
        schema = WEATHER if deltas[0].function.name == "get_weather" else \
            TOOLS[1]["function"]["parameters"]
        jsonschema.validate(sargs, schema)
        # the second turn: the call (arguments as the client sends them, a JSON string) and
        # the tool's result render, and the model answers in text
        turn2 = msgs + [{"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function", "function": {
                "name": "get_weather", "arguments": call.function.arguments}}]},
            {"role": "tool", "tool_call_id": call.id, "content": "22 degrees and sunny"}]
        r2 = c.chat.completions.create(model="demo", messages=turn2, tools=TOOLS, temperature=0,
                                       max_tokens=30)
        check(r2.choices[0].message.content and not r2.choices[0].message.tool_calls and
              r2.usage.prompt_tokens > r.usage.prompt_tokens + 20, "the second turn", r2)
        r3 = c.chat.completions.create(model="demo", messages=msgs, tools=TOOLS,
                                       tool_choice="none", temperature=0, max_tokens=12)
        check(r3.choices[0].message.content and not r3.choices[0].message.tool_calls,
              "tool_choice none", r3)
        # reasoning: the template opened <think>, so the whole reply is reasoning
        hello = [{"role": "user", "content": "Hello!"}]
        r4 = c.chat.completions.create(model="demo", messages=hello, temperature=0, max_tokens=16)
        reasoning = r4.choices[0].message.model_extra.get("reasoning_content")
        check(reasoning and not r4.choices[0].message.content, "reasoning_content", r4)
        chunks = list(c.chat.completions.create(model="demo", messages=hello, temperature=0,
                                                max_tokens=16, stream=True))
        streamed = "".join((k.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
                           for k in chunks if k.choices)
        check(streamed == reasoning, "streamed reasoning", repr(streamed), repr(reasoning))
        error_of(*s.raw("POST", "/v1/chat/completions", json.dumps(
            {"messages": msgs, "tools": TOOLS, "tool_choice": {"type": "function", "function": {
                "name": "nope"}}}).encode())[::2], 400, "tools")
        error_of(*s.raw("POST", "/v1/chat/completions", json.dumps(
            {"messages": msgs, "tool_choice": "required"}).encode())[::2], 400, "tool_choice")
        error_of(*s.raw("POST", "/v1/chat/completions", json.dumps(
            {"messages": msgs, "tools": [{"type": "function"}]}).encode())[::2], 400, "tools")
    finally:
        s.stop()


def fault_checks(poot, model, openai, want):
    req = {"prompt": "Once upon a time", "max_tokens": 12, "temperature": 0}
    # 3 lost devices: the first request faults twice (500), the second once (recovered)
    s = Server(poot, model, env={"POOT_SERVE_INJECT_FAULT": "device_lost:3:3"})
    try:
        err = error_of(*s.raw("POST", "/v1/completions", json.dumps(req).encode())[::2], 500,
                       None, "DEVICE_LOST")
        check("twice" in err["message"], "twice", err)
        status, _, body = s.raw("POST", "/v1/completions", json.dumps(req).encode())
        check(status == 200 and json.loads(body)["choices"][0]["text"] == want,
              "recovered from a lost device", status, body)
        m = s.metrics()
        check(m['poot_device_recoveries_total{how="rebuild"}'] >= 2 and
              m["poot_device_fault_failures_total"] == 1, "fault metrics", m)
    finally:
        s.stop()
    s = Server(poot, model, env={"POOT_SERVE_INJECT_FAULT": "kernel_fault:3"})
    try:
        c = openai.OpenAI(base_url=s.base + "/v1", api_key="none", max_retries=0)
        chunks = c.completions.create(stream=True, model="poot-demo.gguf", **req)
        text = "".join(ch.choices[0].text for ch in chunks if ch.choices)
        check(text == want, "streamed through a kernel fault", repr(text))
        check(s.metrics()['poot_device_recoveries_total{how="reset"}'] == 1, "reset counted")
    finally:
        s.stop()


def skip_reason(poot, build=None, need_build=False, need_openai=True):
    """Why a serve test cannot run here (printed as its SKIP line), or None: the
    poot binary (and the build folder), the openai client, a Vulkan device."""
    if not poot or not os.path.exists(poot) or (need_build and not build):
        return "the poot binary is not built"
    if need_openai:
        try:
            import openai  # noqa: F401
        except ImportError:
            return "the openai client is not installed (scripts/deps.sh)"
    devs = json.loads(subprocess.run([poot, "devices", "--json"], capture_output=True,
                                     text=True).stdout)
    vk = [b for b in devs["backends"] if b["name"] == "vulkan"]
    if not vk or not vk[0]["present"]:
        return "no Vulkan device: " + (vk[0]["reason"] if vk else "not built")
    return None


def main():
    poot = os.environ.get("POOT")
    why = skip_reason(poot)
    if why:
        print("SKIP:", why)
        return 77
    import openai
    src = os.environ.get("POOT_SOURCE_DIR") or os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    model = os.path.join(src, "models", "poot-demo.gguf")
    if not os.path.exists(model):
        print("SKIP: the demo model is absent:", model)
        return 77
    t0 = time.time()
    want = main_checks(poot, model, openai)
    fault_checks(poot, model, openai, want)
    t1 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        tool_checks(poot, model, openai, tmp)
    print(f"tools and reasoning: {time.time() - t1:.1f} s")
    print(f"PASS ({time.time() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
