#!/usr/bin/env python3
"""CLI round trip of `poot eval` (the POOT environment variable names the
binary): .npy inputs in, results printed or written as .npy, read back with
numpy; a failed check exits 1 naming the node and trap; bad usage exits 2.
Exits 77 when numpy is absent."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"SKIP: python package missing: {e}")
    sys.exit(77)

POOT = os.environ.get("POOT", "poot")

STEP = """pgraph 1
%0 = param 0 "x" : f32[3]
%1 = const [2] : f32[]
%2 = broadcast %1 {dims=[]} : f32[3]
%3 = mul %0, %2 : f32[3]
%4 = state "count" : f32[3]
%5 = add %4, %3 : f32[3]
output %5
update %4 = %5
env "twice" = %3
"""

EMBED = """pgraph 1
%0 = weight token_embd : f32[4,2]
%1 = slot token : i32[2]
%2 = gather %0, %1 {axis=0, batch_dims=0} check token_out_of_range : f32[2,2]
output %2
"""


def run(*args, expect):
    p = subprocess.run([POOT, "eval", *args], capture_output=True, text=True)
    if p.returncode != expect:
        raise SystemExit(f"poot eval {' '.join(args)}: exit {p.returncode}, expected {expect}\n"
                         f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def main():
    with tempfile.TemporaryDirectory() as d:
        step = os.path.join(d, "step.pgraph")
        embed = os.path.join(d, "embed.pgraph")
        with open(step, "w") as f:
            f.write(STEP)
        with open(embed, "w") as f:
            f.write(EMBED)
        x = np.array([1.5, -2.0, 3.25], dtype=np.float32)
        count = np.array([10.0, 20.0, 30.0], dtype=np.float32)
        np.save(os.path.join(d, "x.npy"), x)
        np.save(os.path.join(d, "count.npy"), count)
        out = os.path.join(d, "out")
        run(step, "--input", f"x={d}/x.npy", "--input", f"count={d}/count.npy", "--out", out,
            expect=0)
        got = np.load(os.path.join(out, "output.npy"))
        state = np.load(os.path.join(out, "count.npy"))
        twice = np.load(os.path.join(out, "twice.npy"))
        assert got.dtype == np.float32 and got.shape == (3,), got
        assert np.array_equal(got, count + 2 * x), got
        assert np.array_equal(state, count + 2 * x), state
        assert np.array_equal(twice, 2 * x), twice

        # Printed form, with the state starting at zero.
        p = run(step, "--input", f"x={d}/x.npy", "--zero-states", expect=0)
        assert "output output : f32[3] = [3, -4, 6.5]" in p.stdout, p.stdout
        assert "state count : f32[3] = [3, -4, 6.5]" in p.stdout, p.stdout
        assert "env twice : f32[3] = [3, -4, 6.5]" in p.stdout, p.stdout

        # An embedding lookup; then a token id out of range is a typed fault.
        table = np.arange(8, dtype=np.float32).reshape(4, 2)
        np.save(os.path.join(d, "table.npy"), table)
        np.save(os.path.join(d, "tok.npy"), np.array([3, 1], dtype=np.int32))
        np.save(os.path.join(d, "bad.npy"), np.array([3, 4], dtype=np.int32))
        run(embed, "-i", f"token_embd={d}/table.npy", "-i", f"token={d}/tok.npy", "-o", out,
            expect=0)
        assert np.array_equal(np.load(os.path.join(out, "output.npy")), table[[3, 1]])
        p = run(embed, "-i", f"token_embd={d}/table.npy", "-i", f"token={d}/bad.npy", expect=1)
        assert "KERNEL_FAULT" in p.stderr or "check failed" in p.stderr, p.stderr
        assert "gather" in p.stderr and "token_out_of_range" in p.stderr, p.stderr

        # Bad inputs: missing binding, wrong dtype, unknown name → exit 1.
        p = run(step, "--input", f"x={d}/x.npy", expect=1)
        assert "count" in p.stderr, p.stderr
        np.save(os.path.join(d, "x64.npy"), x.astype(np.float64))
        run(step, "--input", f"x={d}/x64.npy", "--zero-states", expect=1)
        np.save(os.path.join(d, "xi.npy"), np.array([1, 2, 3], dtype=np.int32))
        p = run(step, "--input", f"x={d}/xi.npy", "--zero-states", expect=1)
        assert "i32[3]" in p.stderr, p.stderr
        p = run(step, "--input", f"nope={d}/x.npy", "--zero-states", expect=1)
        assert "nope" in p.stderr, p.stderr
        run(os.path.join(d, "missing.pgraph"), expect=1)
        # Usage errors → exit 2; --help → 0.
        run(expect=2)
        run(step, "--input", "noequals", expect=2)
        run(step, "--bogus", expect=2)
        p = run("--help", expect=0)
        assert "--input" in p.stdout
    print("eval_cli: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
