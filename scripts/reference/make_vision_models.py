#!/usr/bin/env python3
"""Write the seeded random-weight LLaVA-style reference models and the test images.

Usage:
    make_vision_models.py OUTDIR [--only NAME ...] [--data DIR] [--list]
    make_vision_models.py --images DIR

Each model folder is a Hugging Face LlavaForConditionalGeneration folder:
config.json (vision_config, text_config, image_token_index), model.safetensors
(f32, the names transformers 4.x writes: vision_tower.vision_model.*,
multi_modal_projector.*, language_model.model.*, language_model.lm_head.*),
preprocessor_config.json (CLIPImageProcessor or SiglipImageProcessor),
processor_config.json, tokenizer.json / tokenizer_config.json (the llama2
reference tokenizer with an added "<image>" token and a LLaVA-style chat
template) and cases.json (what scripts/reference/hf_vision.py runs).

The weights come from make_models.py's counter-based generator (byte-identical
on every machine; numpy only).  --images writes the committed test images of
tests/data/vision/images (needs Pillow; the images are committed, so only
someone changing them runs it).
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as mm  # noqa: E402

IMAGE_TOKEN = "<image>"
IMAGE_TOKEN_ID = 32000
TEXT_VOCAB = 32064  # llava-1.5 pads the 32001 tokens to 32064

# The llava-hf/llava-1.5 chat template's shape ("USER: <image>\n... ASSISTANT:"),
# written with plain loops so every template engine renders it.
LLAVA_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['role'] != 'system' %}{{ message['role'].upper() + ': ' }}{% endif %}"
    "{% if message['content'] is string %}{{ message['content'] + ' ' }}"
    "{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}{{ '<image>\\n' }}{% endif %}{% endfor %}"
    "{% for c in message['content'] %}{% if c['type'] == 'text' %}{{ c['text'] + ' ' }}{% endif %}{% endfor %}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)

CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]

# name -> (tower, vision dims, LLaVA selection)
VISION = {
    "llava-clip": {
        "tower": "clip", "image_size": 32, "patch_size": 8, "hidden": 64, "heads": 4, "inter": 128,
        "layers": 2, "feature_layer": -2, "strategy": "default",
    },
    "llava-siglip": {
        "tower": "siglip", "image_size": 48, "patch_size": 16, "hidden": 48, "heads": 4, "inter": 96,
        "layers": 2, "feature_layer": -1, "strategy": "full",
    },
}

IMAGES = ["gradient.png", "shapes-rgba.png", "gray.png", "palette.png", "photo.jpg", "lossy.webp"]
CAPTION_PROMPT = IMAGE_TOKEN + "\nDescribe the image."
CHAT_TEXT = "What is in this picture?"


def n_image_rows(v):
    patches = (v["image_size"] // v["patch_size"]) ** 2
    if v["tower"] == "clip":
        patches += 1  # the class token
    if v["strategy"] == "default":
        patches -= 1
    return patches


def vision_config(v):
    common = {
        "hidden_size": v["hidden"], "intermediate_size": v["inter"], "num_hidden_layers": v["layers"],
        "num_attention_heads": v["heads"], "num_channels": 3, "image_size": v["image_size"],
        "patch_size": v["patch_size"], "attention_dropout": 0.0,
    }
    if v["tower"] == "clip":
        common.update({"model_type": "clip_vision_model", "hidden_act": "quick_gelu",
                       "layer_norm_eps": 1e-5, "projection_dim": v["hidden"]})
    else:
        common.update({"model_type": "siglip_vision_model", "hidden_act": "gelu_pytorch_tanh",
                       "layer_norm_eps": 1e-6, "vision_use_head": False})
    return common


def model_spec(name):
    v = VISION[name]
    text = mm.llama_like(name, "llama", "LlamaForCausalLM", "llama", "llama2", 2, 2, False,
                         {"attention_bias": False, "mlp_bias": False})
    tcfg = dict(text["config"])
    tcfg["vocab_size"] = TEXT_VOCAB
    del tcfg["architectures"]
    cfg = {
        "architectures": ["LlavaForConditionalGeneration"],
        "model_type": "llava",
        "image_token_index": IMAGE_TOKEN_ID,
        "image_token_id": IMAGE_TOKEN_ID,
        "projector_hidden_act": "gelu",
        "multimodal_projector_bias": True,
        "vision_feature_layer": v["feature_layer"],
        "vision_feature_select_strategy": v["strategy"],
        "image_seq_length": n_image_rows(v),
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "vision_config": vision_config(v),
        "text_config": tcfg,
    }
    images = IMAGES if name == "llava-clip" else IMAGES[:2] + IMAGES[4:]
    cases = [{"prompt": CAPTION_PROMPT, "chat": False, "image": im} for im in images[:3]]
    cases.append({"prompt": None, "chat": True, "image": images[-1], "messages": [
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": CHAT_TEXT}]}]})
    return {"name": name, "vision": v, "config": cfg, "text_spec": text, "cases": cases, "images": images}


def preprocessor_config(v):
    if v["tower"] == "clip":
        return {
            "image_processor_type": "CLIPImageProcessor", "do_convert_rgb": True,
            "do_resize": True, "size": {"shortest_edge": v["image_size"]}, "resample": 3,
            "do_center_crop": True, "crop_size": {"height": v["image_size"], "width": v["image_size"]},
            "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
            "image_mean": CLIP_MEAN, "image_std": CLIP_STD,
        }
    return {
        "image_processor_type": "SiglipImageProcessor", "do_convert_rgb": True,
        "do_resize": True, "size": {"height": v["image_size"], "width": v["image_size"]}, "resample": 3,
        "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
    }


def layer_norm(m, name, size):
    return {name + ".weight": mm.tensor(m, name + ".w", [size], 0.1, 1.0),
            name + ".bias": mm.tensor(m, name + ".b", [size], 0.1)}


def affine(m, name, out_dim, in_dim, gain, bias=0.1):
    return {name + ".weight": mm.linear(m, name + ".w", out_dim, in_dim, gain),
            name + ".bias": mm.tensor(m, name + ".b", [out_dim], bias)}


def vision_weights(spec):
    m, v = spec["name"], spec["vision"]
    H, P = v["hidden"], v["patch_size"]
    n_patches = (v["image_size"] // P) ** 2
    w = {}
    e = "vision_tower.vision_model.embeddings."
    w[e + "patch_embedding.weight"] = mm.tensor(m, e + "patch", [H, 3, P, P], 1.0 / (3 * P * P) ** 0.5)
    if v["tower"] == "clip":
        w[e + "class_embedding"] = mm.tensor(m, e + "cls", [H], 1.0)
        w[e + "position_embedding.weight"] = mm.tensor(m, e + "pos", [n_patches + 1, H], 0.5)
        w.update(layer_norm(m, "vision_tower.vision_model.pre_layrnorm", H))
    else:
        w[e + "patch_embedding.bias"] = mm.tensor(m, e + "patch_b", [H], 0.1)
        w[e + "position_embedding.weight"] = mm.tensor(m, e + "pos", [n_patches, H], 0.5)
    for i in range(v["layers"]):
        p = f"vision_tower.vision_model.encoder.layers.{i}."
        w.update(layer_norm(m, p + "layer_norm1", H))
        w.update(affine(m, p + "self_attn.q_proj", H, H, 1.4))
        w.update(affine(m, p + "self_attn.k_proj", H, H, 1.4))
        w.update(affine(m, p + "self_attn.v_proj", H, H, 1.0))
        w.update(affine(m, p + "self_attn.out_proj", H, H, 0.8))
        w.update(layer_norm(m, p + "layer_norm2", H))
        w.update(affine(m, p + "mlp.fc1", v["inter"], H, 1.5))
        w.update(affine(m, p + "mlp.fc2", H, v["inter"], 0.8))
    w.update(layer_norm(m, "vision_tower.vision_model.post_layernorm", H))
    T = spec["config"]["text_config"]["hidden_size"]
    w.update(affine(m, "multi_modal_projector.linear_1", T, H, 1.5))
    w.update(affine(m, "multi_modal_projector.linear_2", T, T, 1.0))
    return w


def text_weights(spec):
    ts = dict(spec["text_spec"])
    ts["config"] = dict(spec["config"]["text_config"], architectures=["LlamaForCausalLM"])
    w = {}
    for k, t in mm.make_weights(ts).items():
        if k.startswith("model."):
            w["language_model." + k] = t
        elif k == "lm_head.weight":
            w["language_model.lm_head.weight"] = t
        else:
            raise SystemExit("unexpected text tensor " + k)
    return w


def tokenizer_files(spec, data):
    tj, tc = mm.tokenizer_files({"name": "llama2", "tokenizer": "llama2"}, data)
    tj["added_tokens"].append({"id": IMAGE_TOKEN_ID, "content": IMAGE_TOKEN, "single_word": False,
                               "lstrip": False, "rstrip": False, "normalized": False, "special": True})
    tc["added_tokens_decoder"][str(IMAGE_TOKEN_ID)] = {
        "content": IMAGE_TOKEN, "lstrip": False, "normalized": False, "rstrip": False,
        "single_word": False, "special": True}
    tc["chat_template"] = LLAVA_TEMPLATE
    tc["processor_class"] = "LlavaProcessor"
    return tj, tc


def write_model(spec, outdir, data):
    import json

    d = os.path.join(outdir, spec["name"])
    os.makedirs(d, exist_ok=True)
    weights = vision_weights(spec)
    weights.update(text_weights(spec))
    mm.write_safetensors(os.path.join(d, "model.safetensors"), weights)
    mm.write_json(os.path.join(d, "config.json"), spec["config"])
    v = spec["vision"]
    mm.write_json(os.path.join(d, "preprocessor_config.json"), preprocessor_config(v))
    mm.write_json(os.path.join(d, "processor_config.json"), {
        "processor_class": "LlavaProcessor", "image_token": IMAGE_TOKEN, "patch_size": v["patch_size"],
        "vision_feature_select_strategy": v["strategy"],
        "num_additional_image_tokens": 1 if v["tower"] == "clip" else 0})
    tj, tc = tokenizer_files(spec, data)
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    mm.write_json(os.path.join(d, "tokenizer_config.json"), tc)
    mm.write_json(os.path.join(d, "cases.json"), {
        "name": spec["name"], "family": "llava", "tower": v["tower"], "image_rows": n_image_rows(v),
        "weights": "f32", "cases": spec["cases"], "images": spec["images"]})
    n = sum(t.size for t in weights.values())
    print(f"{spec['name']}: {len(weights)} tensors, {n} parameters -> {d}")


# ---------------------------------------------------------------- images


def write_images(d):
    """The committed test images: small, deterministic, each a different decoder path."""
    from PIL import Image

    os.makedirs(d, exist_ok=True)
    y, x = np.mgrid[0:31, 0:45]
    rgb = np.stack([x * 255 // 44, y * 255 // 30, (x * y) % 256], axis=-1).astype(np.uint8)
    Image.fromarray(rgb, "RGB").save(os.path.join(d, "gradient.png"))
    y, x = np.mgrid[0:40, 0:24]
    rgba = np.zeros((40, 24, 4), np.uint8)
    disk = (x - 12) ** 2 + (y - 20) ** 2 < 81
    rgba[..., 0] = np.where(disk, 230, 20)
    rgba[..., 1] = np.where(disk, 40, (y * 6) % 256)
    rgba[..., 2] = np.where((x // 4 + y // 4) % 2 == 0, 200, 60)
    rgba[..., 3] = (x * 10 + y * 3) % 256
    Image.fromarray(rgba, "RGBA").save(os.path.join(d, "shapes-rgba.png"))
    y, x = np.mgrid[0:50, 0:50]
    gray = ((np.sin(x / 5.0) * np.cos(y / 7.0) + 1.0) * 127.5).astype(np.uint8)
    Image.fromarray(gray, "L").save(os.path.join(d, "gray.png"))
    y, x = np.mgrid[0:20, 0:33]
    pal = Image.fromarray(((x // 3 + 2 * (y // 4)) % 16).astype(np.uint8), "L").convert("P")
    palette = []
    for i in range(256):
        palette += [(i * 37) % 256, (i * 91) % 256, (i * 53 + 17) % 256]
    pal.putpalette(palette)
    pal.save(os.path.join(d, "palette.png"))
    y, x = np.mgrid[0:48, 0:64]
    photo = np.stack([
        128 + 100 * np.sin(x / 6.0 + y / 9.0),
        128 + 90 * np.cos(x / 11.0 - y / 5.0),
        np.where((x - 40) ** 2 + (y - 20) ** 2 < 120, 240, 30 + 2 * y),
    ], axis=-1).clip(0, 255).astype(np.uint8)
    Image.fromarray(photo, "RGB").save(os.path.join(d, "photo.jpg"), quality=90)
    y, x = np.mgrid[0:29, 0:37]
    web = np.stack([(x * 7) % 256, (y * 9) % 256, ((x + y) * 5) % 256], axis=-1).astype(np.uint8)
    Image.fromarray(web, "RGB").save(os.path.join(d, "lossy.webp"), quality=80, method=4)
    print(f"images -> {d}")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--data", default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--images", metavar="DIR", help="write the test images to DIR and exit")
    args = ap.parse_args(argv)
    if args.images:
        write_images(args.images)
        return 0
    names = list(VISION)
    if args.list:
        print("\n".join(names))
        return 0
    if not args.outdir:
        ap.error("OUTDIR is required")
    if args.only:
        bad = [n for n in args.only if n not in VISION]
        if bad:
            ap.error("unknown model(s): " + ", ".join(bad) + "; known: " + ", ".join(names))
        names = args.only
    data = args.data or mm.default_data_dir()
    if not os.path.isdir(os.path.join(data, "hf-tokenizers")):
        print(f"make_vision_models: no hf-tokenizers in data folder {data}", file=sys.stderr)
        return 1
    for n in names:
        write_model(model_spec(n), args.outdir, data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
