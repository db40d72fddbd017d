#!/usr/bin/env python3
"""The JSON Schema corpus against Python's jsonschema (an implementation independent of
poot's): (1) every corpus schema is a valid draft 2020-12 schema, its "valid" instances
validate and its "invalid" ones do not, with the format checker on; (2) the corpus runner
walks every schema's grammar with random allowed bytes (seeded) and each walk must parse as
JSON and validate against its schema.

Usage: json_schema_check.py PATH/TO/json_schema_corpus_test [--count N] [--seed S]"""
import argparse
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile


def strict_schema(schema):
    """OpenAI's strict reading: a schema with "properties" and no "additionalProperties"
    allows no other members (poot's strict_properties option)."""
    if isinstance(schema, list):
        return [strict_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, v in schema.items():
        if k in ("properties", "$defs", "definitions"):
            out[k] = {name: strict_schema(sub) for name, sub in v.items()}
        elif k in ("enum", "const", "required", "type"):
            out[k] = v
        else:
            out[k] = strict_schema(v)
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def validator_for(doc, jsonschema):
    schema = doc["schema"]
    if doc.get("options", {}).get("strict"):
        schema = strict_schema(copy.deepcopy(schema))
    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runner")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=15)
    args = ap.parse_args()
    try:
        import jsonschema
        import rfc3339_validator  # noqa: F401 (the format checker's date-time and time)
    except ImportError as e:
        print(f"SKIP: {e} (scripts/deps/pip-json-schema.txt)")
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    corpus = os.path.join(here, "..", "..", "data", "json_schema")
    files = sorted(glob.glob(os.path.join(corpus, "*.json")))
    validators = {}
    bad = 0
    n_valid = n_invalid = 0
    for path in files:
        name = os.path.basename(path)
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        try:
            v = validator_for(doc, jsonschema)
        except jsonschema.SchemaError as e:
            print(f"{name}: not a valid schema: {e.message}")
            bad += 1
            continue
        validators[name] = (v, doc.get("walk", True), min(args.count, doc.get("walks", args.count)))
        for i, inst in enumerate(doc.get("valid", [])):
            n_valid += 1
            errs = list(v.iter_errors(inst))
            if errs:
                print(f"{name}: valid[{i}] does not validate: {errs[0].message}")
                bad += 1
        for i, inst in enumerate(doc.get("invalid", [])):
            n_invalid += 1
            if v.is_valid(inst):
                print(f"{name}: invalid[{i}] validates: {json.dumps(inst)}")
                bad += 1
    print(f"labels: {len(files)} schemas, {n_valid} valid and {n_invalid} invalid instances, "
          f"{bad} wrong")

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "walks.jsonl")
        env = dict(os.environ, POOT_SOURCE_DIR=os.path.join(here, "..", "..", ".."))
        r = subprocess.run([args.runner, "--generate", str(args.count), str(args.seed), out],
                           env=env, capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            print("the runner failed:", r.stderr[-4000:])
            return 1
        walks = {}
        with open(out, encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                walks.setdefault(rec["file"], []).append(rec["text"])
    walk_bad = 0
    total = 0
    for name, (v, walkable, want) in validators.items():
        texts = walks.get(name, [])
        if walkable and len(texts) < want:
            print(f"{name}: only {len(texts)} walks")
            walk_bad += 1
        for t in texts:
            total += 1
            try:
                inst = json.loads(t)
            except ValueError as e:
                print(f"{name}: a walk is not JSON ({e}): {t!r}")
                walk_bad += 1
                continue
            errs = list(v.iter_errors(inst))
            if errs:
                print(f"{name}: a walk does not validate ({errs[0].message}): {t!r}")
                walk_bad += 1
    print(f"walks: {total} strings over {len(walks)} schemas, {walk_bad} wrong")
    return 1 if bad or walk_bad else 0


if __name__ == "__main__":
    sys.exit(main())
