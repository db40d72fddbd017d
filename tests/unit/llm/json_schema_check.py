#!/usr/bin/env python3
"""The JSON Schema corpus against Python's jsonschema (an implementation independent of
poot's): (1) every corpus schema is a valid draft 2020-12 schema, its "valid" instances
validate and its "invalid" ones do not, with the format checker on; (2) the corpus runner
walks every schema's grammar with random allowed bytes (seeded) and each walk must parse as
JSON and validate against its schema; (3) the same for random schemas (seeded: strings with
lengths, formats and patterns, integer and decimal ranges, enums, objects with required and
additional members, arrays with prefixes and counts, anyOf, type lists, nested).

Usage: json_schema_check.py PATH/TO/json_schema_corpus_test [--count N] [--seed S]
                            [--random K] [--random-walks W]"""
import argparse
import copy
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

PATTERNS = ["^[a-z]{1,5}$", "^\\d{2,4}$", "^[A-Z][a-z]*$", "^(ab|cd)+$", "^x?y*z$",
            "^[^\"\\\\]{0,3}$", "^[0-9a-f]{4}(-[0-9a-f]{2})?$", "^.{2}\\.$", "^[\\w ]+!?$"]
FORMATS = ["date", "time", "date-time", "uuid", "email", "ipv4"]
NAMES = ["a", "b", "id", "name", "x_y", "\u00e4", "q\"", "tags", "n1"]
SCALARS = ["s", "", "\u00e9\"", 0, -7, 12, 2.5, True, False, None]


PATTERN_EXAMPLES = {
    "^[a-z]{1,5}$": ["a", "hello"], "^\\d{2,4}$": ["12", "9999"], "^[A-Z][a-z]*$": ["A", "Bcd"],
    "^(ab|cd)+$": ["ab", "cdab"], "^x?y*z$": ["z", "xyyz"], "^[^\"\\\\]{0,3}$": ["", "a\u00e9\n"],
    "^[0-9a-f]{4}(-[0-9a-f]{2})?$": ["beef", "0a1b-ff"], "^.{2}\\.$": ["ab.", "\"\\."],
    "^[\\w ]+!?$": ["hi there!", "x_1"]}
FORMAT_EXAMPLES = {"date": ["2024-02-29", "1999-12-31"], "time": ["12:00:00Z", "23:59:59.5+01:00"],
                   "date-time": ["2024-01-01T00:00:00Z"], "uuid": ["123e4567-e89b-12d3-a456-426614174000"],
                   "email": ["a@b.co"], "ipv4": ["10.0.0.1", "255.255.255.0"]}
CHARS = "ab Z0\u00e9\u65e5\U0001f642\"\\\n\t/"


def rand_value(r, s, depth=0):
    """A value meant to validate against a schema of rand_schema's kinds (checked afterwards)."""
    if s is True or s == {}:
        return r.choice([1, "v", None, [True], {"k": 0}])
    if "enum" in s:
        return r.choice(s["enum"])
    if "const" in s:
        return s["const"]
    if "anyOf" in s:
        return rand_value(r, r.choice(s["anyOf"]), depth + 1)
    t = s.get("type")
    if isinstance(t, list):
        t = r.choice(t)
        return {"string": "s", "integer": r.randint(-99, 99), "boolean": True, "null": None,
                "array": [], "object": {}}[t]
    if t == "string":
        if "format" in s:
            return r.choice(FORMAT_EXAMPLES[s["format"]])
        if "pattern" in s:
            return r.choice(PATTERN_EXAMPLES[s["pattern"]])
        n = r.randint(s.get("minLength", 0), s.get("maxLength", s.get("minLength", 0) + 5))
        return "".join(r.choice(CHARS) for _ in range(n))
    if t == "integer":
        lo = s.get("minimum", s.get("exclusiveMinimum", -10**6) + 1)
        hi = s.get("maximum", s.get("exclusiveMaximum", 10**6) - 1)
        edge = [lo - 1, lo, hi, hi + 1]  # the bounds and one past them (labelled afterwards)
        return r.choice(edge) if r.random() < 0.4 else (r.randint(lo, hi) if lo <= hi else lo)
    if t == "number":
        lo = s.get("minimum", s.get("exclusiveMinimum", -1000))
        hi = s.get("maximum", s.get("exclusiveMaximum", 1000))
        if r.random() < 0.4:
            b = r.choice([lo, hi])
            x = round(b + r.choice([-0.001, 0, 0.001, -1, 1]), 3)
        else:
            x = round(r.uniform(lo, hi), r.randint(0, 3))
        # never -0.0 (bounded numbers exclude it) nor 93.0 (Python counts it as an integer,
        # poot's integers are canonical; docs/json_schema.md)
        return int(x) if x == int(x) else x
    if t == "boolean":
        return r.random() < 0.5
    if t == "null":
        return None
    if t == "object":
        out = {}
        req = s.get("required", [])
        for k, sub in s.get("properties", {}).items():
            if k in req or r.random() < 0.5:
                out[k] = rand_value(r, sub, depth + 1)
        ap = s.get("additionalProperties", True)
        if ap is not False and r.random() < 0.5:
            out["zz" + str(r.randint(0, 9))] = rand_value(r, ap, depth + 1)
        return out
    if t == "array":
        prefix = s.get("prefixItems", [])
        items = s.get("items", True)
        lo, hi = s.get("minItems", 0), s.get("maxItems", s.get("minItems", 0) + 3)
        n = r.randint(lo, hi)
        if items is False:
            n = min(n, len(prefix))
        return [rand_value(r, prefix[i] if i < len(prefix) else items, depth + 1) for i in range(n)]
    return None


def mutate(r, v):
    """A nearby value (often invalid)."""
    c = r.random()
    if isinstance(v, dict) and v and c < 0.5:
        k = r.choice(list(v))
        w = dict(v)
        w[k] = mutate(r, v[k])
        return w
    if isinstance(v, list) and v and c < 0.5:
        w = list(v)
        i = r.randrange(len(w))
        w[i] = mutate(r, w[i])
        return w
    # ASCII strings only: poot's \w is ASCII where Python's is Unicode (a documented subset)
    return r.choice([None, True, "x", "", -1, 3.5, 10**7, [], {}, {"zz": 1}, "2024-02-30",
                     "e" * 9])


RX_ALPHABET = "ab0_ -.\"\\\n"
RX_SPECIAL = set(".^$*+?{}[]()|\\")


def rx_char(r):
    c = r.choice(RX_ALPHABET)
    if c == "\n":
        return "\\n", c
    return ("\\" + c if c in RX_SPECIAL else c), c


def rx_gen(r, depth):
    """A random pattern of the supported subset: (text, nullable, sample strings it matches)."""
    k = r.random()
    if depth > 2 or k < 0.35:
        text, c = rx_char(r)
        return text, False, [c]
    if k < 0.5:
        members = r.sample("ab0_ -.", r.randint(1, 3))
        neg = r.random() < 0.3
        body = "".join("\\" + m if m in "-\\]^" else m for m in members)
        pool = [c for c in RX_ALPHABET if (c in members) != neg] or ["a"]
        return "[" + ("^" if neg else "") + body + "]", False, [r.choice(pool)]
    if k < 0.55:
        return ".", False, [r.choice("ab\"\\ ")]
    if k < 0.6:
        return r.choice([("\\d", False, ["0"]), ("\\w", False, ["b"]), ("\\s", False, [" "])])
    parts = [rx_gen(r, depth + 1) for _ in range(r.randint(1, 3))]
    if k < 0.75:  # alternation in a group
        alts = [rx_gen(r, depth + 1) for _ in range(r.randint(2, 3))]
        text = "(" + ("?:" if r.random() < 0.5 else "") + "|".join(a[0] for a in alts) + ")"
        pick = r.choice(alts)
        return text, any(a[1] for a in alts), pick[2]
    text = "".join(p[0] for p in parts)
    nullable = all(p[1] for p in parts)
    sample = ["".join(r.choice(p[2]) for p in parts)]
    if len(parts) > 1:
        text = "(?:" + text + ")"
    q = r.choice(["", "*", "+", "?", "{2}", "{1,3}", "{2,}", "{,2}", "*?", "+?"])
    if nullable and q not in ("", "?"):
        q = "?"
    if q in ("*", "?", "{,2}", "*?"):
        nullable = True
        sample.append("")
    if q in ("+", "{2,}", "{1,3}", "+?", "{2}"):
        sample = [sample[0] * (2 if q in ("{2}", "{2,}") else 1)]
    if q and len(parts) == 1:
        text = "(?:" + text + ")"
    return text + q, nullable, sample


def regex_check(args, jsonschema):
    """Random patterns of the subset against Python's re.search (through jsonschema): random
    strings and strings derived from the pattern, labelled by jsonschema, must be accepted or
    refused by poot's grammar for {"type":"string","pattern":P}."""
    r = random.Random(args.seed + 2)
    cls = jsonschema.Draft202012Validator
    nv = ni = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.random):
            text, _, samples = rx_gen(r, 0)
            if r.random() < 0.4:
                text = "^" + text
            if r.random() < 0.4:
                text = text + "$"
            schema = {"type": "string", "pattern": text}
            v = cls(schema)
            strings = samples + ["".join(r.choice(RX_ALPHABET) for _ in range(r.randint(0, 6)))
                                 for _ in range(8)]
            strings += [x + r.choice(RX_ALPHABET) for x in samples] + ["z" + x for x in samples]
            valid = sorted({x for x in strings if v.is_valid(x)})
            invalid = sorted({x for x in strings if not v.is_valid(x)})
            nv += len(valid)
            ni += len(invalid)
            with open(os.path.join(tmp, f"p{i:04d}.json"), "w", encoding="utf-8") as f:
                json.dump({"schema": schema, "valid": valid, "invalid": invalid}, f)
        res = subprocess.run([args.runner, "--check", tmp], capture_output=True, text=True,
                             timeout=1200)
    print(f"random patterns: {args.random} patterns, {nv} matching and {ni} other strings "
          f"(labelled by Python's re.search): {'ok' if res.returncode == 0 else 'FAILED'}")
    if res.returncode != 0:
        print(res.stderr[-6000:])
        return 1
    return 0


def rand_bounds(r, s, a, b, integer):
    """Sets a random subset of the four bound keywords for the interval a < b."""
    lo = r.choice(["minimum", "exclusiveMinimum", None])
    hi = r.choice(["maximum", "exclusiveMaximum", None])
    if integer and lo == "exclusiveMinimum" and hi == "exclusiveMaximum" and b - a < 2:
        hi = "maximum"
    if lo:
        s[lo] = a
    if hi:
        s[hi] = b


def rand_schema(r, depth):
    kinds = ["string", "integer", "number", "boolean", "null", "enum"]
    if depth < 3:
        kinds += ["object", "object", "array", "array", "anyOf", "types"]
    k = r.choice(kinds)
    if k == "string":
        s = {"type": "string"}
        c = r.random()
        if c < 0.3:
            s["minLength"] = r.randint(0, 4)
            if r.random() < 0.7:
                s["maxLength"] = s["minLength"] + r.randint(0, 6)
        elif c < 0.5:
            s["format"] = r.choice(FORMATS)
        elif c < 0.7:
            s["pattern"] = r.choice(PATTERNS)
        return s
    if k == "integer":
        s = {"type": "integer"}
        a = r.randint(-3000, 3000) * r.choice([1, 1, 1000003])
        rand_bounds(r, s, a, a + r.randint(1, 5000), True)
        return s
    if k == "number":
        s = {"type": "number"}
        d = r.randint(0, 3)
        a = round(r.uniform(-100, 100), d)
        b = round(a + r.uniform(0.01, 200), d)
        if b <= a:
            b = a + 1
        rand_bounds(r, s, a, b, False)
        return s
    if k in ("boolean", "null"):
        return {"type": k}
    if k == "enum":
        vals = r.sample(SCALARS, r.randint(1, 4))
        return {"const": vals[0]} if len(vals) == 1 and r.random() < 0.5 else {"enum": vals}
    if k == "object":
        names = r.sample(NAMES, r.randint(0, 4))
        s = {"type": "object", "properties": {n: rand_schema(r, depth + 1) for n in names}}
        req = [n for n in names if r.random() < 0.5]
        if req:
            s["required"] = req
        c = r.random()
        if c < 0.4:
            s["additionalProperties"] = False
        elif c < 0.6:
            s["additionalProperties"] = rand_schema(r, depth + 1)
        return s
    if k == "array":
        s = {"type": "array"}
        if r.random() < 0.3:
            s["prefixItems"] = [rand_schema(r, depth + 1) for _ in range(r.randint(1, 2))]
        c = r.random()
        if c < 0.2:
            s["items"] = False
        elif c < 0.8:
            s["items"] = rand_schema(r, depth + 1)
        if r.random() < 0.5:
            s["minItems"] = r.randint(0, 2)
        if r.random() < 0.5:
            s["maxItems"] = s.get("minItems", 0) + r.randint(0, 3)
        if s.get("items") is False and "prefixItems" not in s:
            s["minItems"] = 0
        elif s.get("items") is False:
            s["minItems"] = min(s.get("minItems", 0), len(s["prefixItems"]))
        return s
    if k == "anyOf":
        return {"anyOf": [rand_schema(r, depth + 1) for _ in range(r.randint(2, 3))]}
    return {"type": r.sample(["string", "integer", "boolean", "null", "array", "object"], r.randint(2, 3))}


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
    ap.add_argument("--random", type=int, default=200)
    ap.add_argument("--random-walks", type=int, default=20)
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
    rand_bad = random_schemas(args, jsonschema, here)
    rx_bad = regex_check(args, jsonschema)
    return 1 if bad or walk_bad or rand_bad or rx_bad else 0


def random_schemas(args, jsonschema, here):
    r = random.Random(args.seed)
    cls = jsonschema.Draft202012Validator
    with tempfile.TemporaryDirectory() as tmp:
        schemas = {}
        for i in range(args.random):
            schema = rand_schema(r, 0)
            cls.check_schema(schema)
            name = f"r{i:04d}.json"
            schemas[name] = schema
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                json.dump({"schema": schema, "valid": [], "invalid": []}, f, ensure_ascii=False)
        out = os.path.join(tmp, "walks.jsonl")
        res = subprocess.run([args.runner, "--generate", str(args.random_walks), str(args.seed), out,
                              tmp], capture_output=True, text=True, timeout=1200)
        if res.returncode != 0:
            print("random schemas: the runner failed:", res.stderr[-4000:])
            return 1
        bad = total = 0
        with open(out, encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                total += 1
                schema = schemas[rec["file"]]
                try:
                    inst = json.loads(rec["text"])
                except ValueError as e:
                    print(f"random {rec['file']}: a walk is not JSON ({e}): {rec['text']!r}")
                    bad += 1
                    continue
                errs = list(cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(inst))
                if errs:
                    print(f"random {rec['file']} {json.dumps(schema)}: a walk does not validate "
                          f"({errs[0].message}): {rec['text']!r}")
                    bad += 1
    print(f"random schemas: {args.random} schemas, {total} walks, {bad} wrong")
    return bad + random_instances(args, jsonschema, schemas)


def random_instances(args, jsonschema, schemas):
    """Instances of the random schemas, labelled by jsonschema, checked by the runner: the
    valid ones must be accepted and the invalid ones refused."""
    r = random.Random(args.seed + 1)
    cls = jsonschema.Draft202012Validator
    nv = ni = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, schema in schemas.items():
            v = cls(schema, format_checker=cls.FORMAT_CHECKER)
            valid, invalid = [], []
            # A mutation that stays valid may be valid through another anyOf member whose
            # members come in another order (poot keeps each member's order), so such
            # mutations are kept only where the schema has no anyOf.
            ordered = "anyOf" not in json.dumps(schema)
            for _ in range(6):
                x = rand_value(r, schema)
                (valid if v.is_valid(x) else invalid).append(x)
                y = mutate(r, x)
                if not v.is_valid(y):
                    invalid.append(y)
                elif ordered:
                    valid.append(y)
            nv += len(valid)
            ni += len(invalid)
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                json.dump({"schema": schema, "valid": valid, "invalid": invalid}, f,
                          ensure_ascii=False)
        res = subprocess.run([args.runner, "--check", tmp], capture_output=True, text=True,
                             timeout=1200)
    print(f"random instances: {nv} valid and {ni} invalid (labelled by jsonschema): "
          f"{'ok' if res.returncode == 0 else 'FAILED'}")
    if res.returncode != 0:
        print(res.stderr[-6000:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
