#!/usr/bin/env python3
"""Vision reference vectors from Hugging Face transformers (LLaVA-style models).

Usage:
    hf_vision.py MODELDIR ... --images tests/data/vision/images --out tests/data/vision
                 [--steps 12] [--device cpu|cuda]

MODELDIR is a folder written by scripts/reference/make_vision_models.py.  Each
model is loaded as LlavaForConditionalGeneration in f32 with eager attention
(TF32 off).  For every model the script writes to OUT:

  <name>.pixels.npy  f32 [images, 3, S, S]: the image processor's pixel_values
                     for every image of cases.json "images" (the slow, PIL-based
                     processor: use_fast=False), in that order;
  <name>.rows.npy    f32 [images, rows, text_hidden]: the projector's output
                     rows for those pixels (the vision_feature_layer's hidden
                     state, selected by vision_feature_select_strategy, through
                     multi_modal_projector);
  <name>.json        the versions, the processor class, the tensor names that
                     this transformers' save_pretrained writes, and per case:
                     the image, the prompt text (chat cases rendered by the
                     tokenizer's chat template with add_generation_prompt), the
                     prompt ids with the image token expanded as LlavaProcessor
                     expands it, `--steps` greedy ids (the whole sequence again
                     each step, no KV cache, no stop at EOS) and the top1 - top2
                     logit margin at every step, and the RMS of the first
                     step's logits.

Needs torch, transformers and Pillow (no sentencepiece); exits 77 without them.
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def sha256(path):
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def image_processor(d, transformers):
    """The slow (PIL) processor the folder names; never the torchvision one."""
    pc = load(os.path.join(d, "preprocessor_config.json"))
    cls_name = pc["image_processor_type"]
    try:
        proc = transformers.AutoImageProcessor.from_pretrained(d, use_fast=False)
    except Exception as e:  # noqa: BLE001
        print(f"AutoImageProcessor(use_fast=False) failed ({e}); using {cls_name} directly", file=sys.stderr)
        proc = getattr(transformers, cls_name).from_pretrained(d)
    if type(proc).__name__.endswith("Fast"):
        print(f"{d}: this transformers gives the fast image processor {type(proc).__name__} only; "
              f"pixel_values come from the PIL steps of the slow processor re-implemented here",
              file=sys.stderr)
        return PilProcessor(pc, proc)
    return proc


class PilProcessor:
    """transformers 4.x's slow CLIP/SigLIP image processor, step by step (its
    convert_rgb, PIL BICUBIC resize, center_crop, rescale and normalize), for a
    transformers that no longer ships it.  The fast processor's pixels are
    reported beside it (they differ: torchvision resizes differently)."""

    def __init__(self, pc, fast):
        self.pc, self.fast = pc, fast

    def __call__(self, images, return_tensors="pt"):
        import torch
        from PIL import Image

        pc, img = self.pc, images
        if img.mode != "RGB":  # transformers' convert_rgb
            img = img.convert("RGBA")
            white = Image.new("RGBA", img.size, "WHITE")
            white.paste(img, (0, 0), img)
            img = white.convert("RGB")
        w, h = img.size
        size = pc["size"]
        if "shortest_edge" in size:
            s = size["shortest_edge"]
            short, long_ = (w, h) if w <= h else (h, w)
            nl = int(s * long_ / short)
            nw, nh = (s, nl) if w <= h else (nl, s)
        else:
            nw, nh = size["width"], size["height"]
        if (nw, nh) != (w, h):
            img = img.resize((nw, nh), resample=Image.BICUBIC, reducing_gap=None)
        a = np.array(img)
        if pc.get("do_center_crop"):
            ch, cw = pc["crop_size"]["height"], pc["crop_size"]["width"]
            top, left = (a.shape[0] - ch) // 2, (a.shape[1] - cw) // 2
            a = a[top:top + ch, left:left + cw]
        x = (a.astype(np.float64) * pc["rescale_factor"]).astype(np.float32)
        x = (x - np.array(pc["image_mean"], np.float32)) / np.array(pc["image_std"], np.float32)
        pv = torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)))[None]
        fast = self.fast(images=images, return_tensors="pt")["pixel_values"]
        print(f"  fast processor vs PIL steps: max |diff| {float((fast - pv).abs().max()):.4g}",
              file=sys.stderr)
        return {"pixel_values": pv}


def expand_prompt(text, n_rows, image_token):
    return text.replace(image_token, image_token * n_rows)


def image_rows(model, pixels, config, torch):
    """Projector rows exactly as LlavaModel.get_image_features computes them."""
    tower = getattr(model, "vision_tower", None)
    if tower is None:
        tower = model.model.vision_tower
    proj = getattr(model, "multi_modal_projector", None)
    if proj is None:
        proj = model.model.multi_modal_projector
    out = tower(pixels, output_hidden_states=True)
    feat = out.hidden_states[config["vision_feature_layer"]]
    if config["vision_feature_select_strategy"] == "default":
        feat = feat[:, 1:]
    manual = proj(feat)
    # The model's own method where it has one and returns the rows as a
    # tensor (its return type changed across versions); both must agree.
    fn = getattr(model, "get_image_features", None)
    try:
        got = fn(pixel_values=pixels, vision_feature_layer=config["vision_feature_layer"],
                 vision_feature_select_strategy=config["vision_feature_select_strategy"])
    except Exception as e:  # noqa: BLE001
        print(f"  get_image_features not used ({type(e).__name__}: {e})", file=sys.stderr)
        return manual
    if isinstance(got, (list, tuple)):
        got = got[0] if len(got) == 1 and hasattr(got[0], "shape") else None
    if hasattr(got, "pooler_output") and not hasattr(got, "shape"):
        got = got.pooler_output
    if got is not None and hasattr(got, "shape") and got.dim() == 2:
        got = got[None]
    if got is None or not hasattr(got, "shape") or tuple(got.shape) != tuple(manual.shape):
        print(f"  get_image_features gave {type(got).__name__}; kept the manual rows", file=sys.stderr)
        return manual
    d = float((got - manual).abs().max())
    print(f"  get_image_features vs manual rows: max |diff| {d:.3g}", file=sys.stderr)
    if d > 1e-5:
        raise SystemExit(f"get_image_features differs from the manual rows by {d}")
    return got


def run_model(d, args, torch, transformers):
    from PIL import Image

    meta = load(os.path.join(d, "cases.json"))
    config = load(os.path.join(d, "config.json"))
    name = meta["name"]
    device = args.device
    model, info = transformers.LlavaForConditionalGeneration.from_pretrained(
        d, dtype=torch.float32, attn_implementation="eager", output_loading_info=True)
    # SigLIP's attention-pooling head is not part of LLaVA's features (it reads
    # hidden states); a transformers without vision_use_head builds it anyway.
    missing = [k for k in info.get("missing_keys", []) if ".vision_model.head." not in k]
    bad = {"missing": sorted(missing),
           "unexpected": sorted(info.get("unexpected_keys", [])),
           "mismatched": list(info.get("mismatched_keys", []))}
    bad = {k: v for k, v in bad.items() if v}
    if bad:
        raise SystemExit(f"{name}: loading problems: {bad}")
    model = model.to(device).eval()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            model.save_pretrained(tmp, safe_serialization=True)
        except TypeError:  # a transformers that always writes safetensors
            model.save_pretrained(tmp)
        from safetensors import safe_open

        saved = []
        for f in sorted(os.listdir(tmp)):
            if f.endswith(".safetensors"):
                with safe_open(os.path.join(tmp, f), "np") as st:
                    saved += list(st.keys())
    tok = transformers.AutoTokenizer.from_pretrained(d)
    proc = image_processor(d, transformers)
    image_token = "<image>"
    image_token_id = config.get("image_token_index", config.get("image_token_id"))
    if tok.convert_tokens_to_ids(image_token) != image_token_id:
        raise SystemExit(f"{name}: the tokenizer's {image_token} is not {image_token_id}")

    pixels, rows = {}, {}
    with torch.no_grad():
        for im in meta["images"]:
            img = Image.open(os.path.join(args.images, im))
            pv = proc(images=img, return_tensors="pt")["pixel_values"]
            pixels[im] = pv[0].numpy().astype(np.float32)
            r = image_rows(model, pv.to(device), config, torch)
            rows[im] = r[0].cpu().numpy().astype(np.float32)
    n_rows = next(iter(rows.values())).shape[0]
    if n_rows != meta["image_rows"]:
        raise SystemExit(f"{name}: {n_rows} image rows, cases.json says {meta['image_rows']}")

    # LlavaProcessor, where it loads, must expand the prompt as expand_prompt does.
    llava_proc = None
    try:
        llava_proc = transformers.LlavaProcessor(
            image_processor=proc, tokenizer=tok, patch_size=config["vision_config"]["patch_size"],
            vision_feature_select_strategy=config["vision_feature_select_strategy"],
            num_additional_image_tokens=1 if meta["tower"] == "clip" else 0,
            image_token=image_token, chat_template=tok.chat_template)
    except Exception as e:  # noqa: BLE001
        print(f"{name}: LlavaProcessor not built ({e}); expanding the image token by hand", file=sys.stderr)

    cases = []
    for case in meta["cases"]:
        img = Image.open(os.path.join(args.images, case["image"]))
        if case["chat"]:
            text = tok.apply_chat_template(case["messages"], tokenize=False, add_generation_prompt=True)
            special = False  # the template writes BOS itself
        else:
            text = case["prompt"]
            special = True
        ids = list(tok(expand_prompt(text, n_rows, image_token), add_special_tokens=special)["input_ids"])
        if llava_proc is not None:
            try:
                got = llava_proc(images=img, text=text, add_special_tokens=special, return_tensors="pt")
                pids = got["input_ids"][0].tolist()
                if pids != ids:
                    raise SystemExit(f"{name}: LlavaProcessor ids differ from the expanded prompt's:\n"
                                     f"  {pids}\n  {ids}")
                if not np.array_equal(got["pixel_values"][0].numpy(), pixels[case["image"]]):
                    raise SystemExit(f"{name}: LlavaProcessor pixel_values differ from the image processor's")
            except SystemExit:
                raise
            except Exception as e:  # noqa: BLE001
                print(f"{name}: LlavaProcessor call failed ({e}); kept the hand expansion", file=sys.stderr)
        pv = torch.from_numpy(pixels[case["image"]])[None].to(device)
        seq = list(ids)
        greedy, margins, rms = [], [], None
        with torch.no_grad():
            for _ in range(args.steps):
                x = torch.tensor([seq], dtype=torch.long, device=device)
                out = model(input_ids=x, pixel_values=pv, use_cache=False)
                row = out.logits[0, -1].to(torch.float32)
                top = torch.topk(row, 2)
                nxt = int(torch.argmax(row))
                margins.append(float(top.values[0] - top.values[1]))
                if rms is None:
                    rms = float(torch.sqrt(torch.mean(row.double() ** 2)))
                greedy.append(nxt)
                seq.append(nxt)
        c = {"image": case["image"], "prompt": text, "chat": case["chat"]}
        if case["chat"]:
            c["messages"] = case["messages"]
        c.update({"prompt_ids": ids, "greedy_ids": greedy, "margins": margins, "logits_rms": rms,
                  "text": tok.decode(greedy)})
        cases.append(c)
        print(f"{name}: {case['image']}: {len(ids)} prompt ids, min margin {min(margins):.3f}, "
              f"out {c['text'][:60]!r}")

    doc = {
        "name": name, "tower": meta["tower"], "config": config,
        "transformers": transformers.__version__, "torch": torch.__version__,
        "pillow": __import__("PIL").__version__,
        "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else "cpu",
        "image_processor": type(proc).__name__ if not isinstance(proc, PilProcessor)
        else "PIL steps of the slow processor (this transformers has only " + type(proc.fast).__name__ + ")",
        "llava_processor": llava_proc is not None,
        "steps": args.steps, "images": meta["images"], "image_rows": n_rows,
        "model_sha256": sha256(os.path.join(d, "model.safetensors")),
        "saved_tensor_names": sorted(saved),
        "cases": cases,
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    np.save(os.path.join(args.out, name + ".pixels.npy"), np.stack([pixels[i] for i in meta["images"]]))
    np.save(os.path.join(args.out, name + ".rows.npy"), np.stack([rows[i] for i in meta["images"]]))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", metavar="MODELDIR")
    ap.add_argument("--images", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)
    try:
        import PIL  # noqa: F401
        import torch
        import transformers
    except ImportError as e:
        print(f"SKIP: hf_vision needs torch, transformers and Pillow ({e})")
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    failed = []
    for d in args.models:
        try:
            run_model(d.rstrip("/"), args, torch, transformers)
        except BaseException as e:  # report and go on with the other models
            import traceback

            traceback.print_exc()
            failed.append(f"{d}: {type(e).__name__}: {e}")
    for f in failed:
        print("FAILED", f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
