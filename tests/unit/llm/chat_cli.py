#!/usr/bin/env python3
"""`poot chat` round trips on Vulkan (SKIP when absent) with the demo model,
whose chat template is `<|role|>\\ncontent<|end|>\\n` per message and whose
greedy chat answers are listed in models/README.md ("What does a cow say?" →
"A cow says moo!"; "Hello!" → "Hello! I am Poot. Would you like to hear a
story?"):

- usage: --help exits 0 and lists /reset; bad flags and values exit 2 naming them;
- -p: one turn, the reply on stdout, the end-of-turn token not printed;
- piped stdin: one turn a line; the second turn reuses the cache (--stats and
  --json report n_reused = the first turn's prompt and reply less the final
  end-of-turn id); /reset gives the first turn's prompt and reply again; /exit
  ends the session; --system enters the prompt and survives /reset;
- --template FILE (the demo's template) equals the model's own; a message the
  template refuses (raise_exception) is reported and not kept;
- a small --cap: the oldest exchanges are dropped with the notice and every
  turn is still answered; a message too long alone is refused with the notice
  and the session goes on;
- Ctrl-C (SIGINT) during a reply stops it, the partial reply stays in the
  history and the next turn is answered; Ctrl-C at the prompt exits 0;
- on a terminal: the banner on stderr, "> " before each turn, Ctrl-D exits 0;
- a seed repeats a sampled conversation."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

DEV = ["--device", "vulkan"]
COW, COW_REPLY = "What does a cow say?", "A cow says moo!"
HELLO, HELLO_REPLY = "Hello!", "Hello! I am Poot. Would you like to hear a story?"
TEMPLATE = ("{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + "
            "message['content'] + '<|end|>\\n' }}{% endfor %}{% if add_generation_prompt %}"
            "{{ '<|assistant|>\\n' }}{% endif %}")


def run(args, stdin=None, timeout=300):
    return subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout)


def fail(*msg):
    print("FAIL:", *msg)
    return 1


def turns(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def usage_checks(poot):
    r = run([poot, "chat", "--help"])
    if r.returncode != 0 or "usage: poot chat" not in r.stdout or "/reset" not in r.stdout:
        return fail("chat --help:", r.returncode, r.stdout)
    for flag in ("--system", "--temp", "--top-k", "--top-p", "--min-p", "--typical", "--seed",
                 "--repeat-penalty", "--repeat-last-n", "--presence-penalty",
                 "--frequency-penalty", "--logit-bias", "--grammar", "--grammar-file",
                 "--json-schema", "--stop", "--n-probs", "--cap", "--stats", "-p,"):
        if flag not in r.stdout:
            return fail("chat --help does not list", flag)
    for bad, what in ((["--bogus"], "--bogus"), (["--top-p", "0"], "top_p"),
                      (["--top-k", "-1"], "--top-k"), (["-n", "-2"], "-n"),
                      (["--cap", "0"], "--cap"), (["--temp", "nan"], "temperature")):
        r = run([poot, "chat", "-m", "/nonexistent"] + bad)
        if r.returncode != 2 or what not in r.stderr:
            return fail(bad, "should exit 2 naming", what, ":", r.returncode, r.stderr)
    return 0


def script_checks(poot, demo):
    """-p, piped turns, cache reuse, /reset, /exit, --system, --template."""
    base = [poot, "chat", "-m", demo, "--temp", "0", "-q"] + DEV
    r = run(base + ["-p", COW])
    if r.returncode != 0 or r.stdout != COW_REPLY + "\n":
        return fail("-p:", r.returncode, repr(r.stdout), r.stderr)
    r = run([x for x in base if x != "-q"] + ["--json", "--stats"], stdin=f"{HELLO}\n{COW}\n/reset\n{HELLO}\n/exit\n{COW}\n")
    t = turns(r.stdout) if r.returncode == 0 else []
    if len(t) != 3 or [x["reply"] for x in t] != [HELLO_REPLY, COW_REPLY, HELLO_REPLY]:
        return fail("three turns (the line after /exit unanswered) expected:", r.returncode,
                    r.stdout, r.stderr)
    if "<|" in r.stdout:
        return fail("special tokens printed:", r.stdout)
    # Turn 1 fed its prompt and its reply but the final <|end|>; turn 2's
    # conversation starts with all of that.
    cached = t[0]["n_prompt"] + t[0]["n_reply"] - 1
    if t[0]["n_reused"] != 0 or t[1]["n_reused"] != cached or t[0]["reason"] != "stop_id":
        return fail("turn 2 should reuse", cached, "cached tokens:", t)
    if t[2]["n_prompt"] != t[0]["n_prompt"] or not 0 < t[2]["n_reused"] < t[0]["n_prompt"]:
        return fail("after /reset the first prompt again, its start from the cache:", t)
    stats = re.findall(r"turn (\d+): prompt (\d+) tokens \((\d+) reused from the cache\)",
                       r.stderr)
    if [(int(a), int(b), int(c)) for a, b, c in stats] != [
            (i + 1, x["n_prompt"], x["n_reused"]) for i, x in enumerate(t)]:
        return fail("--stats lines do not match the turns:", r.stderr)
    if "the conversation is cleared" not in r.stderr:
        return fail("/reset should say so:", r.stderr)
    # Plain piped output: one reply a turn, each ended by a newline.
    r = run(base, stdin=f"{COW}\n\n{HELLO}\n")
    if r.returncode != 0 or r.stdout != f"{COW_REPLY}\n{HELLO_REPLY}\n":
        return fail("piped turns:", r.returncode, repr(r.stdout), r.stderr)
    # --system: in the prompt, and kept by /reset (the reset turn reuses it).
    r = run(base + ["--json", "--system", "You are Poot, a friendly storyteller."],
            stdin=f"{COW}\n/reset\n{COW}\n")
    s = turns(r.stdout) if r.returncode == 0 else []
    if len(s) != 2 or s[0]["n_prompt"] <= t[1]["n_prompt"] - t[0]["n_prompt"] - t[0]["n_reply"]:
        return fail("--system turns:", r.returncode, r.stdout, r.stderr)
    if s[1]["n_prompt"] != s[0]["n_prompt"] or s[1]["n_reused"] != s[0]["n_prompt"] - 1:
        return fail("after /reset the system prompt and the message come from the cache:", s)
    with tempfile.NamedTemporaryFile("w", suffix=".jinja", delete=False) as f:
        f.write(TEMPLATE)
    try:
        r = run(base + ["--template", f.name, "-p", COW])
    finally:
        os.unlink(f.name)
    if r.returncode != 0 or r.stdout != COW_REPLY + "\n":
        return fail("--template with the demo's template:", r.returncode, r.stdout, r.stderr)
    # A message the template refuses is reported, not kept, and the session goes on.
    with tempfile.NamedTemporaryFile("w", suffix=".jinja", delete=False) as f:
        f.write("{% if messages[-1]['content'] == 'boom' %}{{ raise_exception('no boom') }}"
                "{% endif %}" + TEMPLATE)
    try:
        r = run(base + ["--template", f.name, "--json"], stdin=f"boom\n{COW}\n")
    finally:
        os.unlink(f.name)
    t = turns(r.stdout) if r.returncode == 0 else []
    if [x["reply"] for x in t] != [COW_REPLY] or "no boom" not in r.stderr or \
            t[0]["n_prompt"] != 13:
        return fail("a message the template refuses:", r.returncode, r.stdout, r.stderr)
    return 0


def capacity_checks(poot, demo):
    """A small context: the oldest exchanges go; a message too long is refused."""
    base = [poot, "chat", "-m", demo, "--temp", "0", "--json", "--cap", "64"] + DEV
    r = run(base, stdin=f"{HELLO}\n{COW}\nWhat does a dog say?\n{COW}\n")
    t = turns(r.stdout) if r.returncode == 0 else []
    if len(t) != 4 or t[3]["reply"] != COW_REPLY:
        return fail("four turns in a context of 64:", r.returncode, r.stdout, r.stderr)
    notice = "no longer fits the context of 64 tokens; dropping the oldest exchange"
    if notice not in r.stderr or sum(x["dropped"] for x in t) < 2 or t[0]["dropped"] != 0:
        return fail("the oldest exchanges should be dropped with a notice:", t, r.stderr)
    for x in t:
        if x["n_prompt"] + 16 > 64:
            return fail("a prompt leaves room for a reply (a quarter of 64):", x)
    long = " ".join(["What does a cow say?"] * 12)
    r = run(base, stdin=f"{long}\n{COW}\n")
    t = turns(r.stdout) if r.returncode == 0 else []
    if [x["reply"] for x in t] != [COW_REPLY] or "/reset to start over" not in r.stderr:
        return fail("a message too long alone: refused, then the next answered:", r.returncode,
                    r.stdout, r.stderr)
    if t[0]["turn"] != 2 or t[0]["n_prompt"] != 13:
        return fail("the refused message is not in the history:", t)
    # The context fills during a reply: it ends there, with a notice.
    r = run(base + ["--ignore-eos", "-q"], stdin=f"{COW}\n")
    t = turns(r.stdout) if r.returncode == 0 else []
    if len(t) != 1 or t[0]["reason"] != "capacity" or "end of the context" not in r.stderr:
        return fail("a reply that fills the context:", r.returncode, r.stdout, r.stderr)
    return 0


def wait_for(stream, n):
    data = b""
    while len(data) < n:
        chunk = os.read(stream.fileno(), n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def sigint_checks(poot, demo):
    """Ctrl-C stops a reply but not the program; at the prompt it exits."""
    args = [poot, "chat", "-m", demo, "--temp", "0", "--ignore-eos", "-n", "200", "--stats",
            "-q"] + DEV
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        p.stdin.write(b"Tell me a story about a brave fox.\n")
        p.stdin.flush()
        first = wait_for(p.stdout, 20)  # the reply is streaming (200 tokens take > 3 s)
        p.send_signal(signal.SIGINT)
        time.sleep(0.5)
        out, err = p.communicate(input=f"{COW}\n".encode(), timeout=240)
    finally:
        if p.poll() is None:
            p.kill()
    stats = re.findall(r"turn \d+: prompt (\d+) tokens \((\d+) reused from the cache\).*?; "
                       r"reply (\d+) tokens in [0-9.]+ s \([0-9.]+ tok/s\), ([a-z_ A-Z-]+);",
                       err.decode())
    # The second turn answers (--ignore-eos: it goes on past the answer).
    if p.returncode != 0 or len(stats) != 2 or ("\n" + COW_REPLY) not in (first + out).decode():
        return fail("Ctrl-C, then a turn:", p.returncode, first + out, err)
    (p1, _, n1, why1), (p2, reused2, _, _) = [(int(a), int(b), int(c), d) for a, b, c, d in stats]
    if why1 != "stopped by Ctrl-C" or not 0 < n1 < 200:
        return fail("the first reply should stop early at Ctrl-C:", stats, err)
    if reused2 != p1 + n1 - 1:
        return fail("the partial reply stays in the history (cached):", stats)
    # At the prompt: exits 0 without answering.
    p = subprocess.Popen([poot, "chat", "-m", demo, "--temp", "0", "-q"] + DEV,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        p.stdin.write(f"{COW}\n".encode())
        p.stdin.flush()
        first = wait_for(p.stdout, len(COW_REPLY) + 1)
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    if first != (COW_REPLY + "\n").encode() or p.returncode != 0 or out:
        return fail("Ctrl-C at the prompt should exit 0:", first, p.returncode, out, err)
    return 0


def tty_checks(poot, demo):
    """On a terminal: the banner, a "> " prompt before each turn, Ctrl-D ends."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([poot, "chat", "-m", demo, "--temp", "0"] + DEV, stdin=slave,
                         stdout=slave, stderr=subprocess.PIPE, close_fds=True)
    os.close(slave)
    seen = b""
    try:
        def read_until(marker, limit=120):
            nonlocal seen
            end = time.time() + limit
            while marker not in seen and time.time() < end:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    break
            return marker in seen
        ok = read_until(b"> ")
        os.write(master, f"{COW}\n".encode())
        ok = ok and read_until((COW_REPLY + "\r\n> ").encode())
        os.write(master, b"\x04")  # Ctrl-D: end of input
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
        os.close(master)
    if not ok or p.returncode != 0 or b"/reset clears the history" not in err:
        return fail("on a terminal:", ok, p.returncode, seen, err)
    return 0


def seed_checks(poot, demo):
    """A seed repeats a sampled two-turn conversation; the seed is printed."""
    stdin = f"{HELLO}\nTell me a story.\n"
    a = run([poot, "chat", "-m", demo, "--json", "-n", "40"] + DEV, stdin=stdin)
    m = re.search(r"seed (\d+) \(--seed \1 repeats this run\)", a.stderr)
    if a.returncode != 0 or not m:
        return fail("a sampled chat should print its seed:", a.returncode, a.stderr)
    b = run([poot, "chat", "-m", demo, "--json", "-n", "40", "-q", "--seed", m.group(1)] + DEV,
            stdin=stdin)
    ra = [x["reply"] for x in turns(a.stdout)]
    rb = [x["reply"] for x in turns(b.stdout)] if b.returncode == 0 else []
    if len(ra) != 2 or ra != rb:
        return fail("--seed", m.group(1), "should repeat the conversation:", ra, rb)
    return 0


def main():
    poot = os.environ.get("POOT")
    if not poot or not os.path.exists(poot):
        print("SKIP: the poot binary is not built")
        return 77
    if usage_checks(poot):
        return 1
    devs = json.loads(run([poot, "devices", "--json"]).stdout)
    vk = [b for b in devs["backends"] if b["name"] == "vulkan"]
    if not vk or not vk[0]["present"]:
        print("SKIP: no Vulkan device:", vk[0]["reason"] if vk else "not built")
        return 77
    src = os.environ.get("POOT_SOURCE_DIR") or os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    demo = os.path.join(src, "models", "poot-demo.gguf")
    if not os.path.exists(demo):
        print("SKIP: the demo model is absent:", demo)
        return 77
    data = os.environ.get("POOT_DATA_DIR", "")
    stories = os.path.join(data, "models", "stories260K")
    if os.path.exists(os.path.join(stories, "stories260K.bin")):
        r = run([poot, "chat", "-m", os.path.join(stories, "stories260K.bin"), "-z",
                 os.path.join(stories, "tok512.bin"), "-p", "hi", "-q"] + DEV)
        if r.returncode != 1 or "no chat template; give --template" not in r.stderr:
            return fail("a model without a chat template:", r.returncode, r.stderr)
    for check in (script_checks, capacity_checks, sigint_checks, tty_checks, seed_checks):
        if check(poot, demo):
            return 1
        print("ok", check.__name__)
    print("poot chat on Vulkan: -p, piped turns, cache reuse, /reset, /exit, --system, "
          "--template, context limits, Ctrl-C, seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
