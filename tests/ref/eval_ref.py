#!/usr/bin/env python3
"""Reference check of poot_eval results against numpy (and gguf).

Usage: eval_ref.py DIR

DIR holds cases.txt (lines "NAME KIND N_INPUTS") and, per case,
NAME.in0.npy [NAME.in1.npy] and NAME.out.npy written by
tests/unit/eval/test_eval_numpy.c. Each case is recomputed with numpy and
compared:
  * bit for bit where numpy computes the same correctly rounded operation in
    the same order (f32 + - * / fmod sqrt, 1/sqrt, floor ceil, rounding half
    away from zero, neg abs sign max min, compares, converts, f16/bf16
    arithmetic done in f32 and rounded to nearest even, sequential sums via
    np.cumsum, dequantization via gguf);
  * within ULP bounds for transcendental functions, whose float32
    implementations differ between libm and numpy (docs/eval.md derives the
    bounds: numpy's SIMD float32 routines are documented to at most 4 ULP,
    glibc's to at most 1-2 ULP);
  * within the standard error bound of recursive summation for np.matmul,
    whose order (BLAS) is not specified, and for softmax.
Exits 0 when every case matches, 1 otherwise, 77 when numpy/gguf is absent.
"""
import math
import os
import sys

try:
    import numpy as np
    from gguf import quants
    from gguf import GGMLQuantizationType as T
except ImportError as e:  # pragma: no cover
    print(f"SKIP: python package missing: {e}")
    sys.exit(77)

U = 2.0 ** -24  # unit roundoff of f32

# ULP bounds for the transcendental functions: numpy float32 error (<= 4 ULP
# for its SVML/AVX512 routines, < 4 for exp/log) plus glibc's (<= 1 ULP for
# expf exp2f logf log2f sinf cosf tanhf, <= 2 ULP for erff, whose reference
# here is math.erf rounded to f32, <= 0.5 ULP). sigmoid = 1/(1+exp(-x)) adds
# one rounding of the sum and one of the quotient: exp's error plus 2.
ULP = {"exp": 5, "exp2": 5, "log": 5, "log2": 5, "sin": 5, "cos": 5, "tanh": 5,
       "erf": 3, "pow": 5, "sigmoid": 7}

BF16_NAN = np.uint16(0x7FC0)


def to_bf16_bits(f32):
    """Round f32 to bf16 (nearest even), as poot_f32_to_bf16 / gguf do."""
    n = np.asarray(f32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = (n & 0x7FFFFFFF) > 0x7F800000
    r = ((n + (0x7FFF + ((n >> 16) & 1))) >> 16).astype(np.uint16)
    return np.where(nan, (n >> 16).astype(np.uint16) | np.uint16(0x40), r)


def bf16_to_f32(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def ulp_diff(a, b):
    """ULP distance between f32 arrays (NaN == NaN, +0 == -0)."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)

    def key(x):
        i = x.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    d = np.abs(key(a) - key(b))
    both_nan = np.isnan(a) & np.isnan(b)
    return np.where(both_nan, 0, d)


def round_half_away(x):
    t = np.trunc(x)
    frac = np.abs(x - t)  # exact
    return np.where(frac >= np.float32(0.5), t + np.sign(x), t).astype(np.float32)


def f32_binary(kind, a, b):
    with np.errstate(all="ignore"):
        if kind == "add": return a + b
        if kind == "sub": return a - b
        if kind == "mul": return a * b
        if kind == "div": return a / b
        if kind == "rem": return np.fmod(a, b)
        if kind == "max": return np.maximum(a, b)
        if kind == "min": return np.minimum(a, b)
        if kind == "pow": return np.power(a, b)
        if kind == "eq": return a == b
        if kind == "ne": return a != b
        if kind == "lt": return a < b
        if kind == "le": return a <= b
        if kind == "gt": return a > b
        if kind == "ge": return a >= b
    raise KeyError(kind)


def f32_unary(kind, x):
    with np.errstate(all="ignore"):
        if kind == "neg": return -x
        if kind == "abs": return np.abs(x)
        if kind == "sign": return np.where(np.isnan(x) | (x == 0), x, np.sign(x)).astype(np.float32)
        if kind == "exp": return np.exp(x)
        if kind == "exp2": return np.exp2(x)
        if kind == "log": return np.log(x)
        if kind == "log2": return np.log2(x)
        if kind == "sqrt": return np.sqrt(x)
        if kind == "rsqrt": return np.float32(1) / np.sqrt(x)
        if kind == "sin": return np.sin(x)
        if kind == "cos": return np.cos(x)
        if kind == "tanh": return np.tanh(x)
        if kind == "erf":
            return np.array([math.erf(float(v)) if not math.isnan(v) else math.nan
                             for v in x.ravel()], dtype=np.float64).astype(np.float32).reshape(x.shape)
        if kind == "floor": return np.floor(x)
        if kind == "ceil": return np.ceil(x)
        if kind == "round": return round_half_away(x)
        if kind == "sigmoid": return np.float32(1) / (np.float32(1) + np.exp(-x))
    raise KeyError(kind)


GGUF = {"q8_0": T.Q8_0, "q4_0": T.Q4_0, "q4_1": T.Q4_1, "q5_0": T.Q5_0, "q5_1": T.Q5_1,
        "q4_k": T.Q4_K, "q5_k": T.Q5_K, "q6_k": T.Q6_K, "q2_k": T.Q2_K, "q3_k": T.Q3_K}
SIZES = {"q8_0": 34, "q4_0": 18, "q4_1": 20, "q5_0": 22, "q5_1": 24, "q4_k": 144,
         "q5_k": 176, "q6_k": 210, "q2_k": 84, "q3_k": 110}


def check_case(d, name, kind, n_in):
    ins = [np.load(os.path.join(d, f"{name}.in{i}.npy")) for i in range(n_in)]
    got = np.load(os.path.join(d, f"{name}.out.npy"))
    tol_ulp = 0
    exact = True
    if name.startswith("f32_"):
        x = [v.astype(np.float32) for v in ins]
        want = f32_binary(kind, *x) if n_in == 2 else f32_unary(kind, x[0])
        tol_ulp = ULP.get(kind, 0)
    elif name.startswith("f16_"):
        x = [v.view(np.float16).astype(np.float32) for v in ins]
        w32 = f32_binary(kind, *x) if n_in == 2 else f32_unary(kind, x[0])
        with np.errstate(all="ignore"):
            want = w32.astype(np.float16)
        got = got.view(np.float16)
        tol_ulp = 1 if kind == "exp" else 0  # a last-place f32 difference can flip an f16 tie
    elif name.startswith("bf16_"):
        x = [bf16_to_f32(v.view(np.uint16)) for v in ins]
        w32 = f32_binary(kind, *x) if n_in == 2 else f32_unary(kind, x[0])
        want = bf16_to_f32(to_bf16_bits(w32))
        got = bf16_to_f32(got.view(np.uint16))
        tol_ulp = 1 << 16 if kind == "exp" else 0  # one bf16 ULP, in f32 ULPs
    elif name.startswith("convert_"):
        x = ins[0]
        dst = name.split("_")[-1]
        with np.errstate(all="ignore"):
            if dst == "f16":
                want, got = x.astype(np.float16), got.view(np.float16)
            elif dst == "bf16":
                want, got = to_bf16_bits(x), got.view(np.uint16)
            elif dst == "f32":
                want = x.astype(np.float32)
            elif dst in ("i32", "i8"):
                info = np.iinfo(np.int32 if dst == "i32" else np.int8)
                t = np.trunc(x.astype(np.float64))
                t = np.where(np.isnan(t), 0, np.clip(t, info.min, info.max))
                want = t.astype(np.int32 if dst == "i32" else np.int8)
            else:
                raise KeyError(dst)
    elif kind == "reduce_sum":
        x = ins[0].astype(np.float32)
        want = np.cumsum(x, axis=1, dtype=np.float32)[:, -1]  # sequential, index order
        # and the float64 sum within the recursive-summation bound
        exact64 = x.astype(np.float64).sum(axis=1)
        bound = (x.shape[1] - 1) * U * np.abs(x.astype(np.float64)).sum(axis=1) / (1 - x.shape[1] * U)
        if not np.all(np.abs(got.astype(np.float64) - exact64) <= bound):
            return f"{name}: outside the recursive summation bound"
    elif kind == "reduce_max":
        want = ins[0].max(axis=1)
    elif kind == "cumsum":
        want = np.cumsum(ins[0], axis=1, dtype=np.float32)
    elif kind == "matmul":
        a, b = ins[0].astype(np.float32), ins[1].astype(np.float32)
        # Sequential in k with every product rounded to f32: bit-exact.
        prods = a[:, :, None] * b[None, :, :]
        want = np.cumsum(prods, axis=1, dtype=np.float32)[:, -1, :]
        # And np.matmul (BLAS order) within gamma_k * |a||b| of each other.
        k = a.shape[1]
        blas = a @ b
        bound = 2 * k * U / (1 - 2 * k * U) * (np.abs(a) @ np.abs(b))
        if not np.all(np.abs(got.astype(np.float64) - blas) <= bound):
            return f"{name}: differs from np.matmul by more than 2*gamma_k*|a||b|"
    elif kind == "softmax":
        x = ins[0].astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        ref = e / e.sum(axis=1, keepdims=True)
        n = x.shape[1]
        spread = (x.max(axis=1, keepdims=True) - x.min(axis=1, keepdims=True))
        # x - max rounds (relative error u on an argument of size <= spread,
        # so exp's relative error <= spread*u), expf adds 1 ULP, the n-term
        # sequential sum (n-1)u, the quotient u (docs/eval.md).
        rel = (spread + n + 4) * U
        print(f"  {name}: max relative error {np.max(np.abs(got - ref) / np.maximum(ref, 1e-30)):.3g}"
              f" (bound {np.max(rel):.3g})")
        if not np.all(np.abs(got - ref) <= rel * ref + 1e-30):
            worst = np.max(np.abs(got - ref) / np.maximum(ref, 1e-30))
            return f"{name}: relative error {worst:.3g} above the bound"
        return None
    elif kind in GGUF:
        raw = ins[0].astype(np.uint8)
        want = quants.dequantize(raw.reshape(-1, SIZES[kind]), GGUF[kind]).reshape(got.shape)
    else:
        return f"{name}: unknown case kind {kind}"

    want = np.asarray(want)
    if want.shape != got.shape:
        return f"{name}: shape {got.shape}, numpy {want.shape}"
    if got.dtype == np.bool_ or want.dtype == np.bool_:
        bad = got.astype(bool) != want.astype(bool)
    elif np.issubdtype(got.dtype, np.integer) and np.issubdtype(want.dtype, np.integer):
        bad = got.astype(np.int64) != want.astype(np.int64)
    else:
        g32 = got.astype(np.float32)
        w32 = want.astype(np.float32)
        if tol_ulp == 0:
            same_bits = g32.view(np.uint32) == w32.view(np.uint32)
            bad = ~(same_bits | (np.isnan(g32) & np.isnan(w32)))
            if kind in ("max", "min", "sign"):
                # numpy's choice between +0 and -0 for equal operands is
                # unspecified; poot orders -0 < +0 (checked in the C tests).
                bad &= ~((g32 == 0) & (w32 == 0))
        else:
            diff = ulp_diff(g32, w32)
            bad = diff > tol_ulp
            print(f"  {name}: max {int(diff.max())} ULP from numpy (bound {tol_ulp})")
    if np.any(bad):
        i = int(np.flatnonzero(bad.ravel())[0])
        flat_in = [v.ravel() for v in ins]
        arg = ", ".join(str(v[i]) if v.size == bad.size else "…" for v in flat_in)
        return (f"{name}: {int(bad.sum())} of {bad.size} elements differ; first at {i}: "
                f"poot {got.ravel()[i]!r}, numpy {want.ravel()[i]!r} (inputs {arg}, "
                f"tolerance {tol_ulp} ULP)")
    return None


def main():
    if len(sys.argv) != 2:
        print("usage: eval_ref.py DIR", file=sys.stderr)
        return 2
    d = sys.argv[1]
    failures = []
    count = 0
    with open(os.path.join(d, "cases.txt")) as f:
        for line in f:
            if not line.strip():
                continue
            name, kind, n_in = line.split()
            count += 1
            err = check_case(d, name, kind, int(n_in))
            if err:
                failures.append(err)
    for e in failures:
        print("FAIL:", e)
    print(f"eval_ref: {count - len(failures)} of {count} cases match numpy/gguf")
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
