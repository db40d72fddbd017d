#!/usr/bin/env python3
"""`poot generate` and `poot bench` round trips on Vulkan (SKIP when absent):
usage errors exit 2 and --help 0; stories260K from the empty prompt prints the
published llama2.c text; the demo model (the default without -m) streams text,
and its --ids equal `poot verify greedy --ids` (the oracle) for a prompt;
`poot bench --json` reports every figure with sane values. With --sampling
(the test llm_generate_sampling_cli), after the oracle check, the sampling
flags instead of the bench (`sampling_checks`): bad values exit 2 naming the field; a seed repeats its
text and the printed random seed repeats the run; other seeds differ;
--temp 0 is the oracle's greedy; --logit-bias ID-inf bans the id; grammars,
--stop and --n-probs shape the --json output."""
import re
import json
import os
import subprocess
import sys


def run(args, timeout=240):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def main():
    poot = os.environ.get("POOT")
    data = os.environ.get("POOT_DATA_DIR", "")
    if not poot or not os.path.exists(poot):
        print("SKIP: the poot binary is not built")
        return 77
    # Usage first: these need no device.
    for cmd in (["generate", "--help"], ["bench", "--help"]):
        r = run([poot] + cmd)
        if r.returncode != 0 or "usage" not in r.stdout:
            print(cmd, "should print usage and exit 0:", r.returncode, r.stdout, r.stderr)
            return 1
    for bad in (["generate", "--bogus"], ["generate", "--top-k", "x"],
                ["generate", "-n", "-1"], ["bench"], ["bench", "-m", "x", "--bogus"]):
        r = run([poot] + bad)
        if r.returncode != 2:
            print(bad, "should exit 2, got", r.returncode, r.stderr)
            return 1
    # Sampling values are checked before the model is opened, naming the field.
    for bad, field in ((["--top-p", "1.5"], "top_p"), (["--top-k", "2000"], "top_k"),
                       (["--temp", "-1"], "temperature"), (["--min-p", "2"], "min_p"),
                       (["--typical", "0"], "typical_p"), (["--repeat-penalty", "0"],
                                                           "repeat_penalty"),
                       (["--n-probs", "21"], "--n-probs"), (["--logit-bias", "5+x"],
                                                             "--logit-bias"),
                       (["--stop", ""], "--stop"), (["--seed", "-2"], "--seed"),
                       (["--grammar", "root ::= [a-"], "grammar:1:13"),
                       (["--grammar", "x", "--grammar-file", "y"], "not both"),
                       (["--json-schema", "{\"type\": 3}"], "--json-schema"),
                       (["--json-schema", "{\"not\": {}}"], "'not'"),
                       (["--json-schema", "{}", "--grammar", "x"], "not both")):
        r = run([poot, "generate", "-m", "/nonexistent"] + bad)
        if r.returncode != 2 or field not in r.stderr:
            print(bad, "should exit 2 naming", field, "got", r.returncode, r.stderr)
            return 1
    devs = json.loads(run([poot, "devices", "--json"]).stdout)
    vk = [b for b in devs["backends"] if b["name"] == "vulkan"]
    if not vk or not vk[0]["present"]:
        print("SKIP: no Vulkan device:", vk[0]["reason"] if vk else "not built")
        return 77
    r = run([poot, "generate", "-m", "/nonexistent/model.gguf", "--device", "vulkan"])
    if r.returncode != 1 or len(r.stderr.strip().splitlines()) != 1:
        print("a missing model should fail with one line:", r.returncode, r.stderr)
        return 1

    # stories260K: the published text, exactly.
    model = os.path.join(data, "models", "stories260K", "stories260K.bin")
    tok = os.path.join(data, "models", "stories260K", "tok512.bin")
    readme = os.path.join(data, "README.md")
    if all(os.path.exists(p) for p in (model, tok, readme)):
        text = open(readme, encoding="utf-8").read()
        expected = text.split("## Expected outputs", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
        r = run([poot, "generate", "-m", model, "-z", tok, "-n", "256", "--temp", "0",
                 "--device", "vulkan"])
        if r.returncode != 0 or r.stdout != expected:
            print("stories260K differs:", r.returncode, r.stderr, "\n" + r.stdout)
            return 1
        if "loaded" not in r.stderr or "compiling for vulkan" not in r.stderr:
            print("progress lines missing on stderr:", r.stderr)
            return 1
    else:
        print("note: stories260K data absent; that part skipped")

    # The demo model by default; ids against the oracle.
    prompt = "Once upon a time"
    r = run([poot, "generate", "-p", prompt, "-n", "24", "--temp", "0", "--device", "vulkan"])
    if r.returncode != 0 or not r.stdout.startswith(prompt) or len(r.stdout) < len(prompt) + 20:
        print("demo generate failed:", r.returncode, r.stderr, r.stdout)
        return 1
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    demo = os.path.join(src, "models", "poot-demo.gguf")
    got = run([poot, "generate", "-m", demo, "-p", prompt, "-n", "16", "--ids", "-q",
               "--chunk", "2", "--temp", "0", "--device", "vulkan"])
    ref = run([poot, "verify", "greedy", "-m", demo, "-p", prompt, "-n", "16", "--ids"])
    if got.returncode != 0 or ref.returncode != 0 or got.stdout.split() != ref.stdout.split():
        print("device ids differ from the oracle's:\n", got.stdout, got.stderr, "\n", ref.stdout,
              ref.stderr)
        return 1

    if "--sampling" in sys.argv[1:]:
        return sampling_checks(poot, demo, ref.stdout.split())

    # bench --json: every figure present and sane.
    r = run([poot, "bench", "-m", demo, "-p", "8", "-n", "8", "--eager-steps", "2",
             "--copy-mib", "8", "--profile", "2", "--device", "vulkan", "--json"])
    if r.returncode != 0:
        print("bench failed:", r.stderr)
        return 1
    b = json.loads(r.stdout)
    for k in ("decode_tok_s", "prefill_tok_s", "host_us_per_step", "dispatches_per_step",
              "capture_s", "replay_us_per_step", "eager_us_per_step", "copy_bandwidth_gb_s",
              "stream_bandwidth_gb_s", "limit_tok_s", "copy_limit_tok_s", "step_bytes",
              "kv_bytes"):
        if not (isinstance(b.get(k), (int, float)) and b[k] > 0):
            print("bench figure", k, "missing or not positive:", b)
            return 1
    if not b["eager_ids_equal"] or b["backend"] != "vulkan":
        print("bench: eager ids differ or wrong backend:", b)
        return 1
    if bench_consistent(b) or bench_fallback(poot, demo) or bench_batch(poot, demo):
        return 1
    print("generate and bench on Vulkan: stories260K text, demo ids = oracle, bench figures, "
          "profile bytes and bandwidth, probe fallback, --batch")
    return 0


def bench_consistent(b):
    """The limit comes from the stream probe and the profile's bytes agree with the step's
    (the demo model: 6 layers, tied embeddings, cap 32, K/V of kv_type): 1 when they do not."""
    # K/V: 6 layers x (K + V) x 32 positions x 2 heads x 32 x 2 (f16) or 4 (f32) bytes; the
    # weights as loaded.
    elem = {"f16": 2, "f32": 4}[b["kv_type"]]
    kv = 6 * 2 * 32 * 2 * 32 * elem
    checks = [("limit from the stream", b["limit_from"] == "stream" and
               abs(b["limit_tok_s"] - b["stream_bandwidth_gb_s"] * 1e9 / b["step_bytes"]) <=
               1e-3 * b["limit_tok_s"] + 0.01),
              ("the copy limit from the copy", abs(b["copy_limit_tok_s"] - b[
                  "copy_bandwidth_gb_s"] * 1e9 / b["step_bytes"]) <= 1e-3 * b["copy_limit_tok_s"]
               + 0.01),
              ("kv_bytes = the cache in kv_type", b["kv_bytes"] == kv),
              ("step = weights + K/V", b["step_bytes"] == b["weight_bytes"] + kv),
              ("the probe as asked", b["probe_mib"] == 8 and not b["probe_fell_back"])]
    p = b.get("profile", {})
    for what, tokens in (("decode", 1), ("prefill", 8)):
        t = p.get(what, {}).get("total")
        kinds = p.get(what, {}).get("kinds", [])
        if not t or not kinds:
            checks.append((f"profile {what} present", False))
            continue
        act = t["activation_bytes_per_step"]
        checks += [
            (f"{what}: kinds sum to the total",
             abs(sum(k["bytes_per_step"] for k in kinds) - t["bytes_per_step"]) <= len(kinds)),
            (f"{what}: parts sum to the total", abs(
                t["weight_bytes_per_step"] + t["kv_bytes_per_step"] + act - t["bytes_per_step"])
             <= 2),
            # Every weight is read once a step (the embedding's one row beside the classifier's
            # whole table), so the plan's weights match what was loaded within the activations.
            (f"{what}: weights as loaded", 0 <= t["weight_bytes_per_step"] - b["weight_bytes"]
             <= act),
            # The plan sweeps the whole cache and writes the step's new rows (of 32); the K/V
            # read at the visible positions is less.
            (f"{what}: K/V bound", kv <= t["kv_bound_bytes_per_step"] <= kv * (1 + tokens / 32)
             + 1 and
             0 < t["kv_bytes_per_step"] < t["kv_bound_bytes_per_step"]),
            (f"{what}: weights + K/V bound = step bytes within the activations",
             abs(t["weight_bytes_per_step"] + t["kv_bound_bytes_per_step"] - b["step_bytes"]) <=
             act),
            (f"{what}: achieved bandwidth against the stream", t["gb_s"] > 0 and
             abs(t["gb_s"] - t["bytes_per_step"] / (t["us_per_step"] * 1e3)) <= 1e-3 * (
                 1 + t["gb_s"])
             and 0 < t["fraction_of_stream"] <= 1.5),
            (f"{what}: kinds largest first", all(kinds[i]["us_per_step"] >=
                                                 kinds[i + 1]["us_per_step"]
                                                 for i in range(len(kinds) - 1))),
            (f"{what}: every kind's fraction in [0, 1.5]",
             all(0 <= k["fraction_of_stream"] <= 1.5 and k["bytes_per_step"] > 0
                 for k in kinds)),
        ]
    bad = [name for name, ok in checks if not ok]
    if bad:
        print("bench: inconsistent figures:", bad, json.dumps(b))
        return 1
    return 0


def bench_fallback(poot, demo):
    """--copy-mib larger than the device allows (--probe-limit-mib stands in) falls back to
    the largest size that fits and says so in JSON (cli_harden_test.sh checks the text): 1
    when it does not."""
    j = run([poot, "bench", "-m", demo, "-p", "0", "-n", "2", "--eager-steps", "0",
             "--copy-mib", "16", "--probe-limit-mib", "5", "--device", "vulkan", "--json"])
    if j.returncode != 0:
        print("bench with a probe limit failed:", j.stderr)
        return 1
    b = json.loads(j.stdout)
    if not (b["probe_fell_back"] and b["probe_asked_mib"] == 16 and b["probe_mib"] == 4 and
            b["stream_mib"] == 4 and "16 MiB do not fit" in b["probe_note"] and
            "5 MiB" in b["probe_note"] and b["stream_bandwidth_gb_s"] > 0):
        print("bench: the probe fallback is not reported:", j.stdout)
        return 1
    return 0


def bench_batch(poot, demo):
    """`poot bench --batch 3`: three sequences decode together (the runner's decode entries
    are 1, 2 and 3), and tok/s is 3 sequences times steps over their time: 1 when not."""
    j = run([poot, "bench", "-m", demo, "-p", "5", "-n", "4", "--batch", "3", "--device", "vulkan",
             "--json"])
    if j.returncode != 0:
        print("bench --batch failed:", j.stderr)
        return 1
    b = json.loads(j.stdout)
    want = 3 * 1e3 / b["ms_per_step"] if b["ms_per_step"] > 0 else 0
    if not (b["batch"] == 3 and b["decode_batch"] == 3 and b["steps"] == 3 and b["tok_s"] > 0 and
            abs(b["tok_s"] - want) <= 0.01 * want and b["kv_type"] == "f16" and
            b["num_blocks"] >= 3 and b["capture_s"] > 0):
        print("bench --batch: figures wrong:", j.stdout)
        return 1
    return 0


def gen_json(poot, demo, *args):
    """`poot generate --json` on the demo model; the parsed object and stderr."""
    r = run([poot, "generate", "-m", demo, "-p", "Once upon a time", "--device", "vulkan",
             "--json"] + list(args))
    if r.returncode != 0:
        raise RuntimeError(f"generate {args} failed ({r.returncode}): {r.stderr}")
    return json.loads(r.stdout), r.stderr


def sampling_checks(poot, demo, greedy_ids):
    """The sampling flags on the demo model (greedy_ids: the oracle's 16 ids)."""
    # --temp 0 is greedy: the oracle's ids, logprobs of the chosen id the highest.
    g, _ = gen_json(poot, demo, "-n", "16", "--temp", "0", "--n-probs", "3", "-q")
    if [str(i) for i in g["ids"]] != greedy_ids:
        print("--temp 0 differs from the oracle's greedy ids:", g["ids"], greedy_ids)
        return 1
    if len(g["probs"]) != 16 or any(
            len(p["top"]) != 3 or p["top"][0]["token"] != p["token"] or
            abs(p["top"][0]["logprob"] - p["logprob"]) > 1e-6 or
            not p["top"][0]["logprob"] >= p["top"][1]["logprob"] >= p["top"][2]["logprob"] or
            p["logprob"] > 0 for p in g["probs"]):
        print("--n-probs 3 under --temp 0: the chosen id should lead a sorted top 3:", g["probs"])
        return 1
    # The default is llama.cpp's sampling with a random seed, printed so the run repeats.
    a, err = gen_json(poot, demo, "-n", "32")
    m = re.search(r"seed (\d+) \(--seed \1 repeats this run\)", err)
    if not m or a["seed"] != int(m.group(1)) or a["temperature"] != 0.8:
        print("the default run should print its random seed and sample at 0.8:", err, a)
        return 1
    b, _ = gen_json(poot, demo, "-n", "32", "--seed", m.group(1), "-q")
    if b["ids"] != a["ids"]:
        print("--seed", m.group(1), "does not repeat the default run:", a["ids"], b["ids"])
        return 1
    # A fixed seed repeats; seeds differ from one another.
    texts = {}
    for seed in ("1", "2", "3", "1"):
        o, _ = gen_json(poot, demo, "-n", "40", "--seed", seed, "--temp", "1.0", "-q")
        if seed in texts and texts[seed] != o["text"]:
            print("--seed", seed, "gave two texts:", texts[seed], "/", o["text"])
            return 1
        texts[seed] = o["text"]
    if len(set(texts.values())) < 3:
        print("seeds 1, 2, 3 should give three texts:", texts)
        return 1
    # --logit-bias ID-inf: the greedy run's first id (",") never appears, with
    # greedy decoding and with sampling.
    banned = int(greedy_ids[0])
    for extra in (["--temp", "0"], ["--seed", "4"], ["--seed", "5", "--temp", "1.5"]):
        o, _ = gen_json(poot, demo, "-n", "48", "--logit-bias", f"{banned}-inf", "-q", *extra)
        if banned in o["ids"] or len(o["ids"]) == 0:
            print("--logit-bias", banned, "-inf", extra, ": the id appeared:", o["ids"])
            return 1
    # A positive bias makes an id win: 100 on "!" (id of the text "!").
    o, _ = gen_json(poot, demo, "-n", "4", "--temp", "0", "--logit-bias", "6+100", "-q")
    if o["ids"] != [6, 6, 6, 6]:
        print("--logit-bias 6+100 should make id 6 win every step:", o["ids"])
        return 1
    # Grammars: the output matches, and generation ends when the grammar does.
    for gbnf, pattern, extra in (
            ('root ::= "yes" | "no"', r"(yes|no)", ["--seed", "6"]),
            ("root ::= [a-z ]+", r"[a-z ]+", ["--seed", "7", "-n", "24"]),
            ('root ::= "The " [a-z]+ " " ("cat" | "dog") "."', r"The [a-z]+ (cat|dog)\.",
             ["--temp", "0", "-n", "30"])):
        o, _ = gen_json(poot, demo, "--grammar", gbnf, "-q", *extra)
        if not re.fullmatch(pattern, o["text"]):
            print("--grammar", gbnf, "output does not match", pattern, ":", repr(o["text"]))
            return 1
    gfile = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"poot-grammar-{os.getpid()}.gbnf")
    with open(gfile, "w", encoding="utf-8") as f:
        f.write('root ::= item ("," item)*\nitem ::= [0-9]\n')
    try:
        o, _ = gen_json(poot, demo, "--grammar-file", gfile, "--seed", "8", "-n", "12", "-q")
        if not re.fullmatch(r"[0-9](,[0-9])*,?", o["text"]):
            print("--grammar-file: output does not match a digit list:", repr(o["text"]))
            return 1
        with open(gfile, "w", encoding="utf-8") as f:
            f.write('root ::= "a"\nbad ::= [a-\n')
        r = run([poot, "generate", "-m", demo, "--grammar-file", gfile, "-q"])
        if r.returncode != 2 or "grammar:2:" not in r.stderr:
            print("a grammar file error should exit 2 with line:col:", r.returncode, r.stderr)
            return 1
    finally:
        os.unlink(gfile)
    # --stop cuts the greedy text before the stop string ("Jake" is its 7th word).
    full = run([poot, "generate", "-m", demo, "-p", "Once upon a time", "-n", "16", "--temp",
                "0", "-q", "--device", "vulkan", "--json"])
    full_text = json.loads(full.stdout)["text"]
    cut = full_text.index("Jake")
    for stop in (["--stop", "Jake"], ["--stop", "zzz,Jake"], ["--stop", "zzz", "--stop", "Jake"]):
        o, _ = gen_json(poot, demo, "-n", "16", "--temp", "0", "-q", *stop)
        if o["text"] != full_text[:cut] or o["reason"] != "stop_string":
            print(stop, "should cut at Jake:", repr(o["text"]), o["reason"], repr(full_text))
            return 1
    # Streaming: the stop string is never printed.
    r = run([poot, "generate", "-m", demo, "-p", "Once upon a time", "-n", "16", "--temp", "0",
             "-q", "--device", "vulkan", "--stop", "Jake"])
    if r.returncode != 0 or r.stdout != "Once upon a time" + full_text[:cut] + "\n":
        print("streamed --stop output:", repr(r.stdout))
        return 1
    # Penalties and the other truncations run (values only; they never recompile).
    o, _ = gen_json(poot, demo, "-n", "24", "--seed", "9", "--repeat-penalty", "1.3",
                    "--presence-penalty", "0.5", "--frequency-penalty", "0.5", "--typical",
                    "0.9", "--top-k", "10", "--min-p", "0.1", "--repeat-last-n", "-1", "-q")
    if len(o["ids"]) == 0 or o["seed"] != 9:
        print("penalties and typical: no output:", o)
        return 1
    # --ignore-eos with sampling: never draws the end-of-generation ids (1, 5).
    o, _ = gen_json(poot, demo, "-n", "200", "--seed", "10", "--ignore-eos", "-q")
    if len(o["ids"]) != 200 or 1 in o["ids"] or 5 in o["ids"]:
        print("--ignore-eos: 200 ids without 1 or 5 expected:", len(o["ids"]), o["reason"])
        return 1
    # Vocabulary checks come after the model is open, still exit 2.
    r = run([poot, "generate", "-m", demo, "--logit-bias", "5000+1", "-q", "--device", "vulkan"])
    if r.returncode != 2 or "logit_bias" not in r.stderr:
        print("a bias past the vocabulary should exit 2 naming logit_bias:", r.returncode,
              r.stderr)
        return 1
    print("ok sampling flags: seeds, greedy = oracle, bias, grammars, stops, n-probs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
