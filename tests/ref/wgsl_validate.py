#!/usr/bin/env python3
"""Validates WGSL files with the WebGPU implementation of PyPI's `wgpu`.

Usage: wgsl_validate.py FILE.wgsl...   (or a folder holding *.wgsl files)

Each file is compiled by creating a shader module (which parses and validates
it) and then a compute pipeline with an automatic layout for its `@compute`
entry point (which translates it for the backend, on this machine Vulkan). A
device is requested with every optional feature the files need and the
adapter has: `shader-f16` for `enable f16;`, `subgroup` for subgroup
builtins, `shader-float32-atomic` for atomics on f32, `shader-int64` (naga's
extension) for i64.

Prints `OK name` or `FAIL name: reason` per file. Exit 0 when every file is
accepted, 1 when one is rejected, 77 (skip) when wgpu is absent or no
adapter can be found, 2 on bad usage.
"""
import os
import re
import sys


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def collect(args):
    files = []
    for a in args:
        if os.path.isdir(a):
            files += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".wgsl"))
        else:
            files.append(a)
    return files


def needed_features(text):
    need = set()
    if "enable f16;" in text:
        need.add("shader-f16")
    if "subgroup" in text:
        need.add("subgroup")
    if "atomic<f32>" in text:
        need.add("shader-float32-atomic")
    if re.search(r"\bi64\b", text):
        need.add("shader-int64")  # naga's extension, not WebGPU
    return need


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    files = collect(argv[1:])
    if not files:
        print("no .wgsl files given", file=sys.stderr)
        return 2
    try:
        import wgpu  # noqa: F401 (the import is the check)
    except Exception as e:  # pragma: no cover - depends on the machine
        skip("the wgpu Python package is not importable (%s)" % e)
    texts = {}
    for f in files:
        with open(f, encoding="utf-8") as fh:
            texts[f] = fh.read()
    try:
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    except Exception as e:
        skip("wgpu found no adapter (%s)" % (str(e).splitlines() or [""])[0])
    if adapter is None:
        skip("wgpu found no adapter")
    need = set()
    for t in texts.values():
        need |= needed_features(t)
    have = set(adapter.features)
    missing = sorted(need - have)
    device = adapter.request_device_sync(required_features=sorted(need & have))
    failures = 0
    for f, text in texts.items():
        name = os.path.basename(f)
        lacking = sorted(needed_features(text) - have)
        if lacking:
            print("SKIPPED %s: the adapter lacks %s" % (name, ", ".join(lacking)))
            continue
        try:
            m = re.search(r"@compute[^{]*?\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", text)
            entry = m.group(1) if m else "main"
            module = device.create_shader_module(code=text)
            device.create_compute_pipeline(
                layout="auto", compute={"module": module, "entry_point": entry})
            print("OK " + name)
        except Exception as e:
            failures += 1
            print("FAIL %s: %s" % (name, e))
    if missing:
        print("note: the adapter lacks %s" % ", ".join(missing))
    print("%d of %d WGSL files accepted" % (len(texts) - failures, len(texts)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
