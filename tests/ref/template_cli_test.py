#!/usr/bin/env python3
"""`poot template` command-line behaviour: exit codes, flags overriding the
variables file, stdin, exact output, raise_exception, a model folder with
tokenizer_config.json. Exit 0 pass, 1 fail, 77 skipped."""
import json
import os
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print(f"FAIL {what}")


def run(poot, *args, stdin=None):
    p = subprocess.run([poot, "template", *args], input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def main():
    poot = os.environ.get("POOT")
    if not poot or not os.path.exists(poot):
        print("SKIP: the poot binary was not given (POOT)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, text):
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            return path

        tpl = write("t.jinja", "{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]"
                               "{% endfor %}{% if add_generation_prompt %}<gen>{% endif %}"
                               "{{ eos_token }}{{ extra | default('') }}\n")
        msgs = write("m.json", json.dumps([{"role": "user", "content": "héllo"}]))
        obj = write("o.json", json.dumps({"messages": [{"role": "user", "content": "x"}],
                                          "add_generation_prompt": True, "bos_token": "B",
                                          "extra": "E"}))
        raiser = write("r.jinja", "{{ raise_exception('roles must alternate') }}")

        rc, out, err = run(poot, "--help")
        check(rc == 0 and b"--messages" in out, "--help exits 0 and prints usage")
        rc, out, err = run(poot)
        check(rc == 2, "no -m/--template is a usage error (2)")
        rc, out, err = run(poot, "--template", tpl, "--bogus")
        check(rc == 2, "an unknown flag is a usage error (2)")
        rc, out, err = run(poot, "--template", tpl, "--now", "x")
        check(rc == 2, "a bad --now is a usage error (2)")
        rc, out, err = run(poot, "--template", tpl, "--messages", msgs, "--bos", "<s>",
                           "--eos", "</s>")
        check(rc == 0 and out == "<s>[user:héllo]</s>".encode(),
              f"list of messages renders exactly, no newline added: {out!r}")
        rc, out, err = run(poot, "--template", tpl, "--messages", msgs, "--add-generation-prompt")
        check(rc == 0 and out == "[user:héllo]<gen>".encode(), f"--add-generation-prompt: {out!r}")
        rc, out, err = run(poot, "--template", tpl, "--messages", obj)
        check(rc == 0 and out == b"B[user:x]<gen>E", f"object of variables: {out!r}")
        rc, out, err = run(poot, "--template", tpl, "--messages", obj, "--no-generation-prompt",
                           "--bos", "F")
        check(rc == 0 and out == b"F[user:x]E", f"flags override the file: {out!r}")
        rc, out, err = run(poot, "--template", tpl, "--messages", "-",
                           stdin=json.dumps([{"role": "a", "content": "b"}]).encode())
        check(rc == 0 and out == b"[a:b]", f"--messages - reads stdin: {out!r}")
        rc, out, err = run(poot, "--template", raiser, "--messages", msgs)
        check(rc == 1 and "roles must alternate" in err and "\n" == err[-1:] and
              err.count("\n") == 1, f"raise_exception exits 1 with its message: {err!r}")
        rc, out, err = run(poot, "--template", os.path.join(tmp, "absent.jinja"))
        check(rc == 1 and err.count("\n") == 1, f"a missing template exits 1: {err!r}")
        bad = write("bad.jinja", "ok\n{% if x %}\nnever closed")
        rc, out, err = run(poot, "--template", bad, "--messages", msgs)
        check(rc == 1 and "line 3" in err, f"a syntax error names the line: {err!r}")
        unsup = write("inc.jinja", "{% include 'x.jinja' %}")
        rc, out, err = run(poot, "--template", unsup, "--messages", msgs)
        check(rc == 1 and "include" in err and "line 1" in err,
              f"an unsupported construct names itself and the line: {err!r}")
        badjson = write("bad.json", "[{")
        rc, out, err = run(poot, "--template", tpl, "--messages", badjson)
        check(rc == 1, f"malformed JSON exits 1: {err!r}")
        # A model folder with tokenizer_config.json.
        model = os.path.join(tmp, "model")
        os.mkdir(model)
        with open(os.path.join(model, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({"chat_template": [{"name": "tool_use", "template": "T"},
                                         {"name": "default",
                                          "template": "{{ bos_token }}{{ messages[0].content }}"
                                                      "{{ eos_token }}"}],
                       "bos_token": {"content": "<|b|>"}, "eos_token": "<|e|>"}, f)
        rc, out, err = run(poot, "-m", model, "--messages", msgs)
        check(rc == 0 and out == "<|b|>héllo<|e|>".encode(),
              f"-m FOLDER uses tokenizer_config.json: {out!r} {err!r}")
        with open(os.path.join(model, "chat_template.jinja"), "w", encoding="utf-8") as f:
            f.write("J:{{ bos_token }}{{ messages | length }}")
        rc, out, err = run(poot, "-m", model, "--messages", msgs)
        check(rc == 0 and out == b"J:<|b|>1", f"-m FOLDER prefers chat_template.jinja: {out!r} {err!r}")
        rc, out, err = run(poot, "-m", os.path.join(tmp, "nothing-here"), "--messages", msgs)
        check(rc == 1 and err.count("\n") == 1, f"-m of a missing model exits 1: {err!r}")
    print("template CLI:", "all checks pass" if not FAILS else f"{len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
