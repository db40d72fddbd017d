#!/usr/bin/env python3
"""The vision tower against independent references (docs/vision.md "Tests").

Usage: vision_check.py VISION_PROBE

Writes the seeded LLaVA-style models with scripts/reference/make_vision_models.py
(into $POOT_BINARY_DIR/vision-models, once), then checks, for each model and
each test image of tests/data/vision/images:

  decoding   every image decodes; a truncated PNG/JPEG/WebP and a text file are
             FORMAT naming the file; an image for a text-only model is
             UNSUPPORTED (poot generate --image).
  pixels     poot's pixel_values equal, bit for bit, a Pillow + numpy
             implementation of transformers' CLIP/SigLIP processors (when
             Pillow is installed) and the committed transformers vectors
             (tests/data/vision/<model>.pixels.npy, when present).
  rows       the tower + projector on poot_eval against a float64 numpy
             implementation written from transformers' modeling code (relative
             1e-4), against transformers' rows (<model>.rows.npy, when present;
             relative 1e-3), and on every present device (vulkan, ptx, wgpu) against
             poot_eval (relative 1e-3; SKIP per absent device).
  captions   with the committed transformers ids (<model>.json, when present):
             greedy ids on the oracle from the committed prompt ids, and
             `poot generate --image` on each present device from the prompt
             text, equal to transformers' (a flip only where transformers'
             margin is inside the tier-2 flip tolerance, docs/verification.md).
  batch      llava-clip's chat prompt with two images (photo.jpg, lossy.webp) through
             the batched runner with image rows on Vulkan and PTX when present
             (`vision_probe batch`: alone, beside a text request and each other,
             preempted, through the row sampler, after a kernel fault) equal to the
             single driver's ids, whose greedy ids equal the oracle's for
             photo.jpg; different images at the same placeholder ids share no
             block.

Exit 0 when everything that could run passed, 77 when nothing could run, 1 on
a failure.  Needs numpy.
"""

import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("POOT_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts", "reference"))

IMAGES = os.path.join(ROOT, "tests", "data", "vision", "images")
VECTORS = os.path.join(ROOT, "tests", "data", "vision")
DEVICES = ["vulkan", "ptx", "wgpu"]


def run(cmd, timeout=600):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


# ------------------------------------------------------------ safetensors


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        data = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        assert meta["dtype"] == "F32", name
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(meta["shape"]).astype(np.float64)
    del base
    return out


# ------------------------------------------------------------ the processors


def pil_pixels(image_path, pc):
    """transformers' CLIPImageProcessor / SiglipImageProcessor (the slow, PIL
    ones) step by step: convert_rgb, Pillow BICUBIC resize, center crop,
    rescale in float64 then float32, normalize in float32."""
    from PIL import Image

    img = Image.open(image_path)
    if img.mode != "RGB":  # transformers' convert_rgb: onto white through the alpha
        img = img.convert("RGBA")
        white = Image.new("RGBA", img.size, "WHITE")
        white.paste(img, (0, 0), img)
        img = white.convert("RGB")
    w, h = img.size
    size = pc["size"]
    if "shortest_edge" in size:
        s = size["shortest_edge"]
        short, long_ = (w, h) if w <= h else (h, w)
        new_long = int(s * long_ / short)
        nw, nh = (s, new_long) if w <= h else (new_long, s)
    else:
        nw, nh = size["width"], size["height"]
    if (nw, nh) != (w, h):
        img = img.resize((nw, nh), resample=Image.BICUBIC, reducing_gap=None)
    a = np.array(img)
    if pc.get("do_center_crop"):
        ch, cw = pc["crop_size"]["height"], pc["crop_size"]["width"]
        top, left = (a.shape[0] - ch) // 2, (a.shape[1] - cw) // 2
        assert top >= 0 and left >= 0, "padding crop not exercised by the test images"
        a = a[top:top + ch, left:left + cw]
    x = (a.astype(np.float64) * pc["rescale_factor"]).astype(np.float32)
    mean = np.array(pc["image_mean"], dtype=np.float32)
    std = np.array(pc["image_std"], dtype=np.float32)
    x = (x - mean) / std
    return x.transpose(2, 0, 1).astype(np.float32)


# ------------------------------------------------------------ the tower


def layer_norm(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def act(name, x):
    if name == "quick_gelu":
        return x / (1.0 + np.exp(-1.702 * x))
    if name in ("gelu_pytorch_tanh", "gelu_new"):
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    if name == "gelu":
        erf = np.vectorize(math.erf)
        return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    raise ValueError(name)


def numpy_rows(W, cfg, pixels):
    """LlavaModel.get_image_features in float64, from transformers' CLIP /
    SigLIP vision modeling code."""
    vc = cfg["vision_config"]
    clip = vc["model_type"] == "clip_vision_model"
    H, P, S = vc["hidden_size"], vc["patch_size"], vc["image_size"]
    nh, G, eps = vc["num_attention_heads"], S // P, vc["layer_norm_eps"]
    D = H // nh
    e = "vision_tower.vision_model.embeddings."
    px = pixels.astype(np.float64)
    x = px.reshape(3, G, P, G, P).transpose(1, 3, 0, 2, 4).reshape(G * G, 3 * P * P)
    h = x @ W[e + "patch_embedding.weight"].reshape(H, -1).T
    if clip:
        h = np.concatenate([W[e + "class_embedding"][None], h], axis=0)
    else:
        h = h + W[e + "patch_embedding.bias"]
    h = h + W[e + "position_embedding.weight"]
    if clip:
        p = "vision_tower.vision_model.pre_layrnorm."
        h = layer_norm(h, W[p + "weight"], W[p + "bias"], eps)
    L = vc["num_hidden_layers"]
    k = cfg["vision_feature_layer"]
    k = k if k >= 0 else L + 1 + k
    N = h.shape[0]
    for i in range(k):
        p = f"vision_tower.vision_model.encoder.layers.{i}."

        def lin(name, v):
            return v @ W[p + name + ".weight"].T + W[p + name + ".bias"]

        a = layer_norm(h, W[p + "layer_norm1.weight"], W[p + "layer_norm1.bias"], eps)
        q = lin("self_attn.q_proj", a).reshape(N, nh, D).transpose(1, 0, 2)
        kk = lin("self_attn.k_proj", a).reshape(N, nh, D).transpose(1, 0, 2)
        v = lin("self_attn.v_proj", a).reshape(N, nh, D).transpose(1, 0, 2)
        s = q @ kk.transpose(0, 2, 1) / math.sqrt(D)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        o = (s @ v).transpose(1, 0, 2).reshape(N, H)
        h = h + lin("self_attn.out_proj", o)
        a = layer_norm(h, W[p + "layer_norm2.weight"], W[p + "layer_norm2.bias"], eps)
        h = h + lin("mlp.fc2", act(vc["hidden_act"], lin("mlp.fc1", a)))
    if cfg["vision_feature_select_strategy"] == "default":
        h = h[1:]
    m = "multi_modal_projector."
    y = h @ W[m + "linear_1.weight"].T + W[m + "linear_1.bias"]
    y = act(cfg.get("projector_hidden_act", "gelu"), y)
    return y @ W[m + "linear_2.weight"].T + W[m + "linear_2.bias"]


def rel_err(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b)) / max(1.0, float(np.max(np.abs(b)))))


# ------------------------------------------------------------ the check


class Check:
    def __init__(self, probe, poot, tmp):
        self.probe, self.poot, self.tmp = probe, poot, tmp
        self.failures, self.passed, self.skipped = [], 0, 0
        self.absent = set()  # devices found absent

    def ok(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failures.append(what)
            print("FAIL:", what)

    def skip(self, what):
        self.skipped += 1
        print("SKIP:", what)

    def probe_f32(self, args, shape):
        out = os.path.join(self.tmp, "out.f32")
        r = run([self.probe] + args + [out])
        if r.returncode == 77:
            return None, r.stdout.strip()
        if r.returncode != 0:
            return False, (r.stderr or r.stdout).strip()
        return np.fromfile(out, dtype="<f4").reshape(shape), ""


def check_decoding(c, poot, model_dir, text_model):
    for im in sorted(os.listdir(IMAGES)):
        r = run([c.probe, "decode", os.path.join(IMAGES, im)])
        c.ok(r.returncode == 0, f"decode {im}: {r.stdout.strip()}")
    bad = {}
    for im in ("gradient.png", "photo.jpg", "lossy.webp"):
        with open(os.path.join(IMAGES, im), "rb") as f:
            data = f.read()
        bad["truncated-" + im] = data[: len(data) // 2]
    bad["not-an-image.png"] = b"hello, this is text\n"
    for name, data in bad.items():
        path = os.path.join(c.tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        r = run([c.probe, "decode", path])
        c.ok(r.returncode == 3 and r.stdout.startswith("FORMAT") and name in r.stdout,
             f"{name}: expected FORMAT naming the file, got rc {r.returncode}: {r.stdout.strip()}")
    if poot and text_model:
        r = run([poot, "generate", "-m", text_model, "--image", os.path.join(IMAGES, "gradient.png"),
                 "-p", "hi", "-n", "1", "--temp", "0", "-q"])
        c.ok(r.returncode == 1 and "UNSUPPORTED" in r.stderr.upper() or "no vision tower" in r.stderr,
             f"an image for a text-only model: rc {r.returncode}: {r.stderr.strip()[-300:]}")
    if poot:
        path = os.path.join(c.tmp, "truncated-gradient.png")
        r = run([poot, "generate", "-m", model_dir, "--image", path, "-p", "hi", "-n", "1",
                 "--temp", "0", "-q", "--device", "auto"])
        c.ok(r.returncode == 1 and path in r.stderr,
             f"a truncated image: rc {r.returncode}: {r.stderr.strip()[-300:]}")


def check_pixels(c, name, model_dir, images):
    pc = json.load(open(os.path.join(model_dir, "preprocessor_config.json")))
    S = json.load(open(os.path.join(model_dir, "config.json")))["vision_config"]["image_size"]
    try:
        import PIL  # noqa: F401
        have_pil = True
    except ImportError:
        have_pil = False
        c.skip(f"{name}: Pillow is absent (scripts/deps/pip-vision.txt): no Pillow pixel check")
    ref_path = os.path.join(VECTORS, name + ".pixels.npy")
    ref = np.load(ref_path) if os.path.exists(ref_path) else None
    if ref is None:
        c.skip(f"{name}: no committed transformers pixels ({ref_path})")
    pixels = {}
    for i, im in enumerate(images):
        got, msg = c.probe_f32(["pixels", model_dir, os.path.join(IMAGES, im)], (3, S, S))
        if got is None or got is False:
            c.ok(False, f"{name} {im}: pixels: {msg}")
            continue
        pixels[im] = got
        if have_pil:
            want = pil_pixels(os.path.join(IMAGES, im), pc)
            d = int(np.sum(got != want))
            c.ok(d == 0, f"{name} {im}: {d} pixel values differ from Pillow's processor "
                         f"(max {float(np.max(np.abs(got - want))):.3g})")
        if ref is not None:
            d = int(np.sum(got != ref[i]))
            c.ok(d == 0, f"{name} {im}: {d} pixel values differ from transformers' "
                         f"(max {float(np.max(np.abs(got - ref[i]))):.3g})")
    return pixels


def extra_images(tmp):
    """More of Pillow's modes, written at test time (needs Pillow): LA, a
    palette and a gray image with tRNS, 16-bit gray and RGB, an interlaced
    PNG, a gray JPEG and a WebP with alpha."""
    from PIL import Image

    y, x = np.mgrid[0:27, 0:41]
    g = ((x * 6 + y * 3) % 256).astype(np.uint8)
    a = ((x * 13 + y * 29) % 256).astype(np.uint8)
    rgb = np.stack([g, (x * 9 % 256).astype(np.uint8), (y * 11 % 256).astype(np.uint8)], -1)
    out = {}

    def save(name, im, **kw):
        path = os.path.join(tmp, name)
        im.save(path, **kw)
        out[name] = path

    save("la.png", Image.merge("LA", [Image.fromarray(g), Image.fromarray(a)]))
    p = Image.fromarray((g // 16).astype(np.uint8), "L").convert("P")
    p.putpalette([(i * 37) % 256 for i in range(768)])
    p.info["transparency"] = bytes((i * 40) % 256 for i in range(16))
    save("palette-trns.png", p, transparency=p.info["transparency"])
    save("gray-trns.png", Image.fromarray(g // 32 * 32), transparency=64)
    save("gray16.png", Image.fromarray((x * 97 + y * 13).astype(np.uint16)))
    save("rgb-interlaced.png", Image.fromarray(rgb), interlace=1)
    save("gray.jpg", Image.fromarray(g), quality=85)
    save("alpha.webp", Image.fromarray(np.dstack([rgb, a]), "RGBA"), quality=80)
    save("alpha-lossless.webp", Image.fromarray(np.dstack([rgb, a]), "RGBA"), lossless=True)
    return out


def check_extra_pixels(c, name, model_dir):
    try:
        import PIL  # noqa: F401
    except ImportError:
        return
    pc = json.load(open(os.path.join(model_dir, "preprocessor_config.json")))
    S = json.load(open(os.path.join(model_dir, "config.json")))["vision_config"]["image_size"]
    for im, path in extra_images(c.tmp).items():
        got, msg = c.probe_f32(["pixels", model_dir, path], (3, S, S))
        if got is None or got is False:
            c.ok(False, f"{name} {im}: pixels: {msg}")
            continue
        want = pil_pixels(path, pc)
        d = int(np.sum(got != want))
        c.ok(d == 0, f"{name} {im}: {d} pixel values differ from Pillow's processor")


def check_rows(c, name, model_dir, images, cfg):
    W = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    ref_path = os.path.join(VECTORS, name + ".rows.npy")
    ref = np.load(ref_path) if os.path.exists(ref_path) else None
    if ref is None:
        c.skip(f"{name}: no committed transformers rows ({ref_path})")
    meta = json.load(open(os.path.join(model_dir, "cases.json")))
    shape = (meta["image_rows"], cfg["text_config"]["hidden_size"])
    for i, im in enumerate(images):
        path = os.path.join(IMAGES, im)
        px, msg = c.probe_f32(["pixels", model_dir, path], (3,) + (cfg["vision_config"]["image_size"],) * 2)
        oracle, msg = c.probe_f32(["rows", model_dir, path, "eval"], shape)
        if oracle is None or oracle is False:
            c.ok(False, f"{name} {im}: oracle rows: {msg}")
            continue
        e = rel_err(oracle, numpy_rows(W, cfg, px))
        c.ok(e <= 1e-4, f"{name} {im}: oracle rows vs numpy: relative {e:.3g} > 1e-4")
        if ref is not None:
            e = rel_err(oracle, ref[i].astype(np.float64))
            c.ok(e <= 1e-3, f"{name} {im}: oracle rows vs transformers: relative {e:.3g} > 1e-3")
        for dev in DEVICES:
            if dev in c.absent:
                continue
            got, msg = c.probe_f32(["rows", model_dir, path, dev], shape)
            if got is None:
                c.absent.add(dev)
                c.skip(f"{dev}: {msg}")
                continue
            if got is False:
                c.ok(False, f"{name} {im}: {dev} rows: {msg}")
                continue
            e = rel_err(got, oracle.astype(np.float64))
            c.ok(e <= 1e-3, f"{name} {im}: {dev} rows vs poot_eval: relative {e:.3g} > 1e-3")


def flip_tol(cfg, case):
    import verify_hf

    tc = dict(cfg["text_config"])
    tc.setdefault("head_dim", tc["hidden_size"] // tc["num_attention_heads"])
    n = len(case["prompt_ids"]) + len(case["greedy_ids"])
    # The tower adds its own reductions before the first layer: counted as
    # doubling the text model's error (docs/vision.md "Tests").
    _, flip = verify_hf.tolerances(tc, n, "f32", case.get("logits_rms") or 14.0)
    return 2.0 * flip


def compare_ids(c, where, got, case, tol):
    want, margins = case["greedy_ids"], case["margins"]
    for k in range(min(len(got), len(want))):
        if got[k] != want[k]:
            if margins[k] <= tol:
                print(f"NOTE: {where}: step {k} flips ({got[k]} vs {want[k]}) at margin "
                      f"{margins[k]:.4g} <= {tol:.4g}")
                c.ok(True, "")
                return
            c.ok(False, f"{where}: step {k} gives {got[k]}, transformers {want[k]} with margin "
                        f"{margins[k]:.4g} > {tol:.4g}")
            return
    c.ok(len(got) == len(want), f"{where}: {len(got)} ids, transformers {len(want)}")


def check_chat(c, where, model_dir, image, case, tol, dev):
    """poot chat --image (the /image path) renders the model's template with
    the image placeholder: the same prompt length and reply as transformers'."""
    text = case["messages"][0]["content"][1]["text"]
    steps = len(case["greedy_ids"])
    r = run([c.poot, "chat", "-m", model_dir, "--image", image, "-p", text, "-n", str(steps),
             "--temp", "0", "--ignore-eos", "--json", "-q", "--device", dev], timeout=900)
    if r.returncode != 0:
        c.ok(False, f"{where}: poot chat --device {dev}: {r.stderr.strip()[-400:]}")
        return
    got = json.loads(r.stdout.strip().splitlines()[-1])
    c.ok(got["n_prompt"] == len(case["prompt_ids"]),
         f"{where} ({dev}): {got['n_prompt']} prompt ids, transformers {len(case['prompt_ids'])}")
    if got["reply"].strip() == case["text"].strip():
        c.ok(True, "")
    elif min(case["margins"]) <= tol:
        print(f"NOTE: {where} ({dev}): the reply differs where transformers' margin "
              f"{min(case['margins']):.4g} <= {tol:.4g}: {got['reply']!r} vs {case['text']!r}")
    else:
        c.ok(False, f"{where} ({dev}): reply {got['reply']!r}, transformers {case['text']!r}")


def check_captions(c, name, model_dir, cfg):
    ref_path = os.path.join(VECTORS, name + ".json")
    if not os.path.exists(ref_path):
        c.skip(f"{name}: no committed transformers captions ({ref_path})")
        return
    ref = json.load(open(ref_path))
    import hashlib

    h = hashlib.sha256(open(os.path.join(model_dir, "model.safetensors"), "rb").read()).hexdigest()
    if h != ref.get("model_sha256"):
        c.ok(False, f"{name}: make_vision_models.py wrote another model.safetensors than the one "
                    f"the committed vectors were made from ({h} vs {ref.get('model_sha256')})")
        return
    for case in ref["cases"]:
        tol = flip_tol(cfg, case)
        image = os.path.join(IMAGES, case["image"])
        steps = len(case["greedy_ids"])
        where = f"{name} {case['image']} {'chat' if case['chat'] else 'caption'}"
        r = run([c.probe, "greedy", model_dir, image, str(steps)] + [str(i) for i in case["prompt_ids"]],
                timeout=900)
        if r.returncode != 0:
            c.ok(False, f"{where}: oracle greedy: {r.stderr.strip()[-300:]}")
        else:
            compare_ids(c, where + " (oracle)", [int(x) for x in r.stdout.split()], case, tol)
        if not c.poot:
            continue
        for dev in DEVICES:
            if dev in c.absent:
                continue
            if case["chat"]:
                check_chat(c, where, model_dir, image, case, tol, dev)
                continue
            r = run([c.poot, "generate", "-m", model_dir, "--image", image, "-p", case["prompt"],
                     "-n", str(steps), "--temp", "0", "--ignore-eos", "--json", "-q",
                     "--device", dev], timeout=900)
            if r.returncode != 0 and ("NO_DEVICE" in r.stderr or "no " + dev in r.stderr.lower()
                                      or "not present" in r.stderr or "not available" in r.stderr):
                c.skip(f"{where}: {dev}: absent")
                continue
            if r.returncode != 0:
                c.ok(False, f"{where}: poot generate --device {dev}: {r.stderr.strip()[-400:]}")
                continue
            got = json.loads(r.stdout)
            c.ok(got["n_prompt"] == len(case["prompt_ids"]),
                 f"{where} ({dev}): {got['n_prompt']} prompt ids, transformers {len(case['prompt_ids'])}")
            compare_ids(c, f"{where} ({dev})", got["ids"], case, tol)


def check_batch(c, name, model_dir):
    ref_path = os.path.join(VECTORS, name + ".json")
    if not os.path.exists(ref_path):
        c.skip(f"{name}: batch: no committed prompt ids ({ref_path})")
        return
    case = [k for k in json.load(open(ref_path))["cases"] if k["chat"]][0]
    ids = [str(i) for i in case["prompt_ids"]]
    images = [os.path.join(IMAGES, "photo.jpg"), os.path.join(IMAGES, "lossy.webp")]
    r = run([c.probe, "greedy", model_dir, images[0], "8"] + ids)
    oracle = r.stdout.split() if r.returncode == 0 else None
    c.ok(oracle is not None, f"{name}: batch: oracle greedy: {r.stderr.strip()[-300:]}")
    # Not on wgpu: its entries compile for seconds each there (4.3 s against lavapipe's 3.6 s
    # on the development machine, for the same check: CI time).
    for dev in [d for d in DEVICES if d != "wgpu"]:
        if dev in c.absent:
            continue
        r = run([c.probe, "batch", model_dir, images[0], images[1], dev, "8"] + ids)
        if r.returncode == 77:
            c.skip(f"{name}: batch: {dev}: absent")
            continue
        print(r.stdout.strip())
        c.ok(r.returncode == 0, f"{name}: batch ({dev}): {(r.stdout + r.stderr).strip()[-600:]}")
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("driver A:")]
        if oracle is not None and lines:
            c.ok(lines[0].split()[2:] == oracle,
                 f"{name}: batch ({dev}): the driver's ids {lines[0]} differ from the oracle's "
                 f"{' '.join(oracle)}")


def five(name):
    """transformers 5's spelling of a 4.x LLaVA tensor name."""
    if name.startswith("language_model.model."):
        return "model.language_model." + name[len("language_model.model."):]
    if name == "language_model.lm_head.weight":
        return "lm_head.weight"
    return "model." + name


def check_naming(c, name, model_dir, models):
    """The same model with its tensors named as transformers 5 writes them (or,
    when the committed vectors record them, exactly as the reference machine's
    save_pretrained wrote them) gives the same rows and ids."""
    import make_models as mm

    W = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    ref_path = os.path.join(VECTORS, name + ".json")
    saved = set(json.load(open(ref_path)).get("saved_tensor_names", [])) if os.path.exists(ref_path) else set()
    renamed = {}
    for n, t in W.items():
        m = n if n in saved else five(n)
        c.ok(not saved or m in saved, f"{name}: {n} is neither spelling save_pretrained wrote")
        renamed[m] = t.astype(np.float32)
    d = os.path.join(models, name + "-v5")
    os.makedirs(d, exist_ok=True)
    mm.write_safetensors(os.path.join(d, "model.safetensors"), renamed)
    for f in os.listdir(model_dir):
        if f != "model.safetensors":
            with open(os.path.join(model_dir, f), "rb") as src, open(os.path.join(d, f), "wb") as dst:
                dst.write(src.read())
    image = os.path.join(IMAGES, "photo.jpg")
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    meta = json.load(open(os.path.join(model_dir, "cases.json")))
    shape = (meta["image_rows"], cfg["text_config"]["hidden_size"])
    a, msg_a = c.probe_f32(["rows", model_dir, image, "eval"], shape)
    b, msg_b = c.probe_f32(["rows", d, image, "eval"], shape)
    c.ok(a is not None and a is not False and b is not None and b is not False and np.array_equal(a, b),
         f"{name}: rows of the 5.x-named folder differ ({msg_a} {msg_b})")
    ids = ["1"] + ["32000"] * meta["image_rows"] + ["28705", "13", "22836"]
    ra = run([c.probe, "greedy", model_dir, image, "4"] + ids)
    rb = run([c.probe, "greedy", d, image, "4"] + ids)
    c.ok(ra.returncode == 0 and ra.stdout == rb.stdout,
         f"{name}: greedy ids of the 5.x-named folder differ: {ra.stdout.strip()} vs "
         f"{rb.stdout.strip()} {rb.stderr.strip()[-200:]}")


def write_f16_tower(model_dir, dst):
    """The folder with its tower and projector in f16 (as real LLaVA files)."""
    W = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    os.makedirs(dst, exist_ok=True)
    header, off, blobs = {}, 0, []
    for n in sorted(W):
        vision = n.startswith("vision_tower.") or n.startswith("multi_modal_projector.")
        t = W[n].astype(np.float16 if vision else np.float32)
        b = t.tobytes()
        header[n] = {"dtype": "F16" if vision else "F32", "shape": list(t.shape),
                     "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(os.path.join(dst, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    for f in os.listdir(model_dir):
        if f != "model.safetensors":
            with open(os.path.join(model_dir, f), "rb") as a, open(os.path.join(dst, f), "wb") as b:
                b.write(a.read())


def check_f16(c, name, model_dir, models):
    """f16 tower weights (converted in the graph): the rows stay within f16's
    rounding of the f32 model's (relative 5e-3), on the oracle and on each
    device against the oracle (relative 1e-3)."""
    d = os.path.join(models, name + "-f16")
    write_f16_tower(model_dir, d)
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    meta = json.load(open(os.path.join(model_dir, "cases.json")))
    shape = (meta["image_rows"], cfg["text_config"]["hidden_size"])
    image = os.path.join(IMAGES, "photo.jpg")
    f32, _ = c.probe_f32(["rows", model_dir, image, "eval"], shape)
    f16, msg = c.probe_f32(["rows", d, image, "eval"], shape)
    if f16 is None or f16 is False:
        c.ok(False, f"{name} f16: oracle rows: {msg}")
        return
    e = rel_err(f16, f32.astype(np.float64))
    c.ok(e <= 5e-3, f"{name} f16: oracle rows vs f32: relative {e:.3g} > 5e-3")
    for dev in DEVICES:
        if dev in c.absent:
            continue
        got, msg = c.probe_f32(["rows", d, image, dev], shape)
        if got is None:
            continue
        ok = got is not False and rel_err(got, f16.astype(np.float64)) <= 1e-3
        c.ok(ok, f"{name} f16: {dev} rows vs poot_eval: {msg or rel_err(got, f16.astype(np.float64))}")


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    probe = argv[0]
    poot = os.environ.get("POOT")
    build = os.environ.get("POOT_BINARY_DIR") or tempfile.gettempdir()
    models = os.path.join(build, "vision-models")
    import make_vision_models as mvm

    data = mvm.mm.default_data_dir()
    if not os.path.isdir(os.path.join(data, "hf-tokenizers")):
        print(f"SKIP: no hf-tokenizers in the data folder {data}")
        return 77
    for name in mvm.VISION:
        if not os.path.exists(os.path.join(models, name, "model.safetensors")):
            mvm.write_model(mvm.model_spec(name), models, data)
    text_model = None
    with tempfile.TemporaryDirectory() as tmp:
        c = Check(probe, poot, tmp)
        # A text-only model of the same shapes: the LLaVA folder's text half.
        import make_models as mm

        spec = [s for s in mm.model_specs() if s["name"] == "llama2"][0]
        text_model = os.path.join(models, "text-only")
        if not os.path.exists(os.path.join(text_model, "model.safetensors")):
            mm.write_model(spec, models, data, False)
            os.replace(os.path.join(models, "llama2"), text_model)
        for n, name in enumerate(mvm.VISION):
            d = os.path.join(models, name)
            cfg = json.load(open(os.path.join(d, "config.json")))
            images = json.load(open(os.path.join(d, "cases.json")))["images"]
            if n == 0:
                check_decoding(c, poot, d, text_model)
            check_pixels(c, name, d, images)
            check_extra_pixels(c, name, d)
            check_rows(c, name, d, images, cfg)
            check_captions(c, name, d, cfg)
            if n == 0:
                check_batch(c, name, d)
            check_naming(c, name, d, models)
            check_f16(c, name, d, models)
        print(f"vision_check: {c.passed} passed, {len(c.failures)} failed, {c.skipped} skipped")
        for f in c.failures:
            print("  ", f)
        return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
