#!/usr/bin/env python3
"""`poot serve` with images in chat completions (docs/serve.md "Images"), on Vulkan (lavapipe
in CI), with the seeded LLaVA-style test model llava-clip (scripts/reference/
make_vision_models.py, written into BUILD/vision-models as llm_vision does; SKIP without the
shared data's hf-tokenizers, the device or the openai client):

- a user message with an image_url part (a data: URL of tests/data/vision/images/photo.jpg,
  then of lossy.webp and palette.png) and text: the greedy reply equals `poot generate
  --image` on the prompt the model's chat template renders ("USER: <image>\\n… ASSISTANT:");
- streamed, the same text;
- an http URL is 400 (the server fetches nothing), bad base64 and bytes that are no image are
  400 naming the part;
- at --max-seqs 4 (the batched engine, docs/serve.md "The two engines"): two image requests
  (photo.jpg and lossy.webp: the same placeholder ids, other rows) sent together with two
  text chats give the texts the --max-seqs 1 server gave."""
import base64
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from serve_openai import Server, check, error_of, skip_reason  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
IMAGES = os.path.join(ROOT, "tests", "data", "vision", "images")
TEXT = "What is in this picture?"


def data_url(name, mime):
    with open(os.path.join(IMAGES, name), "rb") as f:
        return f"data:{mime};base64," + base64.b64encode(f.read()).decode()


def message(url):
    return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                         {"type": "text", "text": TEXT}]}]


TEXTS = ["Say something.", "Name a color."]


def text_message(text):
    return [{"role": "user", "content": text}]


def answer(c, messages):
    r = c.chat.completions.create(model="llava", messages=messages, temperature=0, max_tokens=8)
    return r.choices[0].message.content


def together(c, messages):
    out = [None] * len(messages)

    def one(i):
        try:
            out[i] = answer(c, messages[i])
        except Exception as e:  # noqa: BLE001 (reported as the reply)
            out[i] = f"error: {e}"
    ts = [threading.Thread(target=one, args=(i,)) for i in range(len(messages))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def generate(poot, model, image):
    p = subprocess.run([poot, "generate", "-m", model, "--device", "vulkan", "--image",
                        os.path.join(IMAGES, image), "-p", f"USER: <image>\n{TEXT} ASSISTANT:",
                        "-n", "8", "--temp", "0", "--json", "-q"],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "poot generate --image", p.stderr)
    return json.loads(p.stdout)["text"]


def main():
    poot = os.environ.get("POOT")
    build = os.environ.get("POOT_BINARY_DIR")
    why = skip_reason(poot, build, need_build=True)
    if why:
        print("SKIP:", why)
        return 77
    import openai
    sys.path.insert(0, os.path.join(ROOT, "scripts", "reference"))
    import make_vision_models as mvm
    data = mvm.mm.default_data_dir()
    if not os.path.isdir(os.path.join(data, "hf-tokenizers")):
        print(f"SKIP: no hf-tokenizers in the data folder {data}")
        return 77
    models = os.path.join(build, "vision-models")
    model = os.path.join(models, "llava-clip")
    if not os.path.exists(os.path.join(model, "model.safetensors")):
        mvm.write_model(mvm.model_spec("llava-clip"), models, data)
    t0 = time.time()
    cases = [("photo.jpg", "image/jpeg"), ("lossy.webp", "image/webp"), ("palette.png", "image/png")]
    want = {name: generate(poot, model, name) for name, _ in cases}
    s = Server(poot, model, "--alias", "llava")
    try:
        c = openai.OpenAI(base_url=s.base + "/v1", api_key="none", max_retries=0)
        for name, mime in cases:
            r = c.chat.completions.create(model="llava", messages=message(data_url(name, mime)),
                                          temperature=0, max_tokens=8)
            check(r.choices[0].message.content == want[name], name, repr(r.choices[0]),
                  repr(want[name]))
        check(len(set(want.values())) > 1, "the images give different replies", want)
        chunks = c.chat.completions.create(model="llava", temperature=0, max_tokens=8,
                                           messages=message(data_url("photo.jpg", "image/jpeg")),
                                           stream=True)
        text = "".join(k.choices[0].delta.content or "" for k in chunks if k.choices)
        check(text == want["photo.jpg"], "streamed", repr(text))
        for url, what in [("https://example.com/cat.png", "fetches nothing"),
                          ("data:image/png;base64,@@@@", "base64"),
                          ("data:image/png," + "abc", "base64"),
                          ("data:image/png;base64," + base64.b64encode(b"not an image").decode(),
                           "image 0")]:
            err = error_of(*s.raw("POST", "/v1/chat/completions", json.dumps(
                {"messages": message(url)}).encode())[::2], 400, "messages")
            check(what in err["message"], "error message", err, what)
        want_text = [answer(c, text_message(t)) for t in TEXTS]
    finally:
        s.stop()
    t1 = time.time()
    s = Server(poot, model, "--alias", "llava", "--max-seqs", "4")
    try:
        c = openai.OpenAI(base_url=s.base + "/v1", api_key="none", max_retries=0)
        msgs = [message(data_url("photo.jpg", "image/jpeg")), text_message(TEXTS[0]),
                message(data_url("lossy.webp", "image/webp")), text_message(TEXTS[1])]
        got = together(c, msgs)
        wants = [want["photo.jpg"], want_text[0], want["lossy.webp"], want_text[1]]
        check(got == wants, "--max-seqs 4: images beside text give the --max-seqs 1 texts",
              repr(got), repr(wants))
    finally:
        s.stop()
    print(f"(--max-seqs 4: {time.time() - t1:.1f} s)")
    print(f"PASS ({time.time() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
