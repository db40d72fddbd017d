#!/usr/bin/env python3
"""Runs WGSL compute kernels with the WebGPU implementation of PyPI's `wgpu`.

Usage:
  wgsl_run.py --probe OUT        write "<subgroup size> <f16> <f32 atomics> <i64>"
                                 to OUT: the adapter's subgroup size (0 without
                                 subgroups), then 1/0 for the features
                                 shader-f16, shader-float32-atomic and
                                 shader-int64 (naga's i64 extension)
  wgsl_run.py MANIFEST.json      run every job of the manifest

A manifest is {"jobs": [job, ...]}; a job is
  {"wgsl": path, "grid": [x, y, z],
   "buffers": [{"binding": n, "path": file, "uniform": false}, ...]}
Every buffer is created from its file's bytes (padded to whole words) and
bound at @group(0) @binding(n); after the dispatch every storage buffer is
read back into file + ".out". The bind group layout follows the WGSL's own
declarations (read-only storage, storage, uniform).

Exit 0 when every job ran, 1 when one failed (its error is printed), 77 (skip)
when wgpu is absent or finds no adapter, 2 on bad usage.
"""
import json
import re
import sys


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


DECL = re.compile(r"@group\(0\)\s*@binding\((\d+)\)\s*var<(storage|uniform)(?:\s*,\s*(read_write|read))?>")
ENTRY = re.compile(r"@compute[^{]*?\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def open_device():
    try:
        import wgpu  # noqa: F401
    except Exception as e:
        skip("the wgpu Python package is not importable (%s)" % e)
    try:
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    except Exception as e:
        skip("wgpu found no adapter (%s)" % (str(e).splitlines() or [""])[0])
    if adapter is None:
        skip("wgpu found no adapter")
    want = [f for f in ("shader-f16", "subgroup", "shader-float32-atomic", "shader-int64")
            if f in adapter.features]
    limits = {}
    for key in ("max-storage-buffers-per-shader-stage", "max-compute-workgroup-storage-size",
                "max-compute-invocations-per-workgroup", "max-storage-buffer-binding-size",
                "max-buffer-size", "max-bind-groups"):
        if key in adapter.limits:
            limits[key] = adapter.limits[key]
    device = adapter.request_device_sync(required_features=want, required_limits=limits)
    return wgpu, device


def run_job(wgpu, device, job):
    with open(job["wgsl"], encoding="utf-8") as fh:
        text = fh.read()
    m = ENTRY.search(text)
    entry = m.group(1) if m else "main"
    kinds = {}
    for b, space, access in DECL.findall(text):
        if space == "uniform":
            kinds[int(b)] = wgpu.BufferBindingType.uniform
        elif access == "read_write":
            kinds[int(b)] = wgpu.BufferBindingType.storage
        else:
            kinds[int(b)] = wgpu.BufferBindingType.read_only_storage
    module = device.create_shader_module(code=text)
    layout_entries = [{"binding": b, "visibility": wgpu.ShaderStage.COMPUTE,
                       "buffer": {"type": kinds[b]}} for b in sorted(kinds)]
    bgl = device.create_bind_group_layout(entries=layout_entries)
    pipeline = device.create_compute_pipeline(
        layout=device.create_pipeline_layout(bind_group_layouts=[bgl]),
        compute={"module": module, "entry_point": entry})
    buffers = {}
    for spec in job["buffers"]:
        b = spec["binding"]
        if b not in kinds:
            continue  # the kernel does not declare it
        with open(spec["path"], "rb") as fh:
            data = fh.read()
        uniform = kinds[b] == wgpu.BufferBindingType.uniform
        align = 16 if uniform else 4
        size = max(align, (len(data) + align - 1) // align * align)
        data = data + bytes(size - len(data))
        usage = (wgpu.BufferUsage.UNIFORM if uniform else wgpu.BufferUsage.STORAGE) | \
            wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        buf = device.create_buffer_with_data(data=data, usage=usage)
        buffers[b] = (buf, spec, uniform)
    missing = sorted(set(kinds) - set(buffers))
    if missing:
        raise RuntimeError("no buffer given for binding(s) %s" % missing)
    bind_group = device.create_bind_group(
        layout=bgl, entries=[{"binding": b, "resource": {"buffer": buffers[b][0]}}
                             for b in sorted(buffers)])
    encoder = device.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    cpass.set_bind_group(0, bind_group)
    cpass.dispatch_workgroups(*job["grid"])
    cpass.end()
    device.queue.submit([encoder.finish()])
    for b, (buf, spec, uniform) in buffers.items():
        if uniform:
            continue
        out = bytes(device.queue.read_buffer(buf))
        with open(spec["path"] + ".out", "wb") as fh:
            fh.write(out)


PROBE = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn probe(@builtin(subgroup_size) s: u32, @builtin(local_invocation_index) i: u32) {
  if (i == 0u) { out[0] = s; }
}
"""


def probe(path):
    wgpu, device = open_device()
    if "subgroup" not in device.features:
        size = 0
    else:
        buf = device.create_buffer(size=4, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
        module = device.create_shader_module(code=PROBE)
        pipeline = device.create_compute_pipeline(layout="auto",
                                                  compute={"module": module, "entry_point": "probe"})
        bg = device.create_bind_group(layout=pipeline.get_bind_group_layout(0),
                                      entries=[{"binding": 0, "resource": {"buffer": buf}}])
        enc = device.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipeline)
        p.set_bind_group(0, bg)
        p.dispatch_workgroups(1, 1, 1)
        p.end()
        device.queue.submit([enc.finish()])
        size = int.from_bytes(bytes(device.queue.read_buffer(buf))[:4], "little")
    with open(path, "w") as fh:
        fh.write("%d %d %d %d\n" % (size, 1 if "shader-f16" in device.features else 0,
                                     1 if "shader-float32-atomic" in device.features else 0,
                                     1 if "shader-int64" in device.features else 0))
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--probe":
        return probe(argv[2])
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__)
        return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2
    with open(argv[1], encoding="utf-8") as fh:
        manifest = json.load(fh)
    wgpu, device = open_device()
    failures = 0
    for job in manifest["jobs"]:
        try:
            run_job(wgpu, device, job)
        except Exception as e:
            failures += 1
            print("FAIL %s: %s" % (job["wgsl"], e))
    print("%d of %d WGSL jobs ran" % (len(manifest["jobs"]) - failures, len(manifest["jobs"])))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
