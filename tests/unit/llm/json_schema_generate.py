#!/usr/bin/env python3
"""Every generation of the demo model under a JSON Schema grammar parses and validates.

Writes each corpus schema (tests/data/json_schema/*.json, its "schema") to a folder, runs
llm_json_schema_generate (greedy for every schema, sampled for every eighth) on DEVICE, and checks
each generation with Python's jsonschema (format checker on): a generation that ended because
the grammar was complete must parse as JSON and validate; one cut by the token limit or the
KV capacity is counted and printed, and must be a prefix the grammar allowed (the runner
checks that). At least 100 generations must be complete.

The corpus is cut into SHARDS parts (schema i goes to part i mod SHARDS) so that ctest runs
them side by side, each well inside its timeout on a loaded two-core machine; a part must
have at least 100 / SHARDS complete generations.

Usage: json_schema_generate.py PATH/TO/llm_json_schema_generate DEVICE [SHARD SHARDS]"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    binary, device = sys.argv[1], sys.argv[2]
    shard, shards = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) == 5 else (0, 1)
    if shards < 1 or not 0 <= shard < shards:
        print("FAIL: bad shard %d of %d" % (shard, shards))
        return 2
    try:
        import jsonschema
    except ImportError:
        print("FAIL: the jsonschema package is missing (scripts/deps/pip-json-schema.txt)")
        return 1
    root = os.path.join(os.path.dirname(__file__), "..", "..", "data", "json_schema")
    docs = {}
    with tempfile.TemporaryDirectory() as tmp:
        names = sorted(n for n in os.listdir(root) if n.endswith(".json"))
        for name in names[shard::shards]:
            with open(os.path.join(root, name)) as f:
                doc = json.load(f)
            docs[name] = doc["schema"]
            with open(os.path.join(tmp, name), "w") as f:
                json.dump(doc["schema"], f)
        out = os.path.join(tmp, "out.jsonl")
        # every eighth schema of the whole corpus is sampled too: every (8 / SHARDS)-th of a part
        every = str(max(1, 8 // shards))
        r = subprocess.run([binary, device, tmp, out, every], capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        if r.returncode == 77:
            return 77
        if r.returncode != 0:
            print("FAIL: llm_json_schema_generate exited %d" % r.returncode)
            return 1
        with open(out) as f:
            lines = [json.loads(line) for line in f]
    complete = cut = bad = 0
    for g in lines:
        schema = docs[g["file"]]
        if g["reason"] not in ("grammar", "stop_id"):
            cut += 1
            print("cut   %-34s %-7s %-8s %d bytes" % (g["file"], g["mode"], g["reason"],
                                                      len(g["text"])))
            continue
        complete += 1
        try:
            value = json.loads(g["text"])
            cls = jsonschema.validators.validator_for(schema)
            cls(schema, format_checker=cls.FORMAT_CHECKER).validate(value)
        except Exception as e:  # noqa: BLE001 - any failure is reported
            bad += 1
            print("FAIL  %s %s: %s\n      %r" % (g["file"], g["mode"], str(e).splitlines()[0],
                                                g["text"][:300]))
    print("%d generations: %d complete (%d invalid), %d cut by the token limit or the capacity"
          % (len(lines), complete, bad, cut))
    if bad or complete * shards < 100:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
