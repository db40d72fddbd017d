#!/usr/bin/env python3
"""Reference data for the GGUF block codecs (tests/unit/eval/test_quant.c).

Usage: quant_ref.py OUT_DIR
       quant_ref.py --dequantize FMT IN.bin OUT.f32

For every packed format writes, as raw little-endian files in OUT_DIR:
  FMT.in.f32    random f32 rows (with edge-case blocks) to quantize
  FMT.q.bin     the gguf package's quantization of FMT.in.f32 (formats it can quantize)
  FMT.qd.f32    the gguf package's dequantization of FMT.q.bin
  FMT.rq.bin    random but valid blocks (random bytes, finite scales)
  FMT.rqd.f32   the gguf package's dequantization of FMT.rq.bin
--dequantize decodes blocks that poot wrote (its own k-quant quantizers,
which the gguf package lacks) with the gguf package's dequantizer.
The gguf package has no q8_k codec; for q8_k the quantizer and dequantizer
below are a numpy port of ggml's quantize_row_q8_K_ref / dequantize_row_q8_K
(not an independent reference: it documents the layout, docs/eval.md).
Exits 77 (skip) when numpy or gguf is missing.
"""
import os
import sys

try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as T
    from gguf import quants
except ImportError as e:  # pragma: no cover
    print(f"SKIP: python package missing: {e}")
    sys.exit(77)

QK_K = 256
FORMATS = {
    # name: (ggml type, block elems, block bytes, offsets of f16 scales)
    "q8_0": (T.Q8_0, 32, 34, [0]),
    "q4_0": (T.Q4_0, 32, 18, [0]),
    "q4_1": (T.Q4_1, 32, 20, [0, 2]),
    "q5_0": (T.Q5_0, 32, 22, [0]),
    "q5_1": (T.Q5_1, 32, 24, [0, 2]),
    "q2_k": (T.Q2_K, 256, 84, [80, 82]),
    "q3_k": (T.Q3_K, 256, 110, [108]),
    "q4_k": (T.Q4_K, 256, 144, [0, 2]),
    "q5_k": (T.Q5_K, 256, 176, [0, 2]),
    "q6_k": (T.Q6_K, 256, 210, [208]),
    "q8_k": (T.Q8_K, 256, 292, []),
}
QUANTIZABLE = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q8_k"}


def q8k_quantize(x):
    """numpy port of ggml's quantize_row_q8_K_ref."""
    x = x.astype(np.float32).reshape(-1, QK_K)
    out = np.zeros((x.shape[0], 292), dtype=np.uint8)
    for i, row in enumerate(x):
        a = np.abs(row)
        # ggml keeps the first strictly larger magnitude, starting from 0.
        amax = np.float32(0)
        mx = np.float32(0)
        for j in range(QK_K):
            if a[j] > amax:
                amax, mx = a[j], row[j]
        if amax == 0:
            continue
        iscale = np.float32(-127.0) / mx
        v = iscale * row
        # nearest_int: round half to even
        q = np.minimum(np.rint(v), 127).astype(np.int8)
        bs = q.reshape(16, 16).astype(np.int32).sum(axis=1).astype(np.int16)
        d = np.float32(1.0) / iscale
        out[i, 0:4] = np.frombuffer(np.float32(d).tobytes(), dtype=np.uint8)
        out[i, 4:260] = q.view(np.uint8)
        out[i, 260:292] = bs.view(np.uint8)
    return out.reshape(-1)


def q8k_dequantize(b):
    b = b.reshape(-1, 292)
    d = b[:, 0:4].copy().view(np.float32)
    q = b[:, 4:260].view(np.int8).astype(np.float32)
    return (d * q).reshape(-1)


def make_input(rng, block):
    """Random rows plus blocks that exercise the edge cases of the quantizers."""
    blocks = []
    n_random = 48 if block == 32 else 12
    for k in range(n_random):
        scale = np.float32(10.0) ** rng.integers(-6, 5)
        blocks.append((rng.standard_normal(block) * scale).astype(np.float32))
    blocks.append(np.zeros(block, np.float32))                      # all zero
    blocks.append(np.full(block, -0.0, np.float32))                  # negative zeros
    blocks.append(np.full(block, 3.25, np.float32))                  # constant
    blocks.append(np.full(block, -7.5, np.float32))                  # negative constant
    b = np.zeros(block, np.float32); b[block // 2] = -1.0            # one spike
    blocks.append(b)
    b = rng.standard_normal(block).astype(np.float32); b[3] = 100.0; b[9] = -100.0  # tie of |max|
    blocks.append(b)
    blocks.append((rng.standard_normal(block) * 1e-30).astype(np.float32))  # f16 underflow
    blocks.append(np.linspace(-1, 1, block, dtype=np.float32))       # exact halves
    blocks.append((rng.integers(-20, 20, block) * 0.5).astype(np.float32))
    return np.concatenate(blocks).astype(np.float32)


def random_blocks(rng, name, n):
    _, block, nbytes, f16_offsets = FORMATS[name]
    raw = rng.integers(0, 256, size=(n, nbytes), dtype=np.uint8)
    for off in f16_offsets:
        scales = (rng.standard_normal(n) * (10.0 ** rng.integers(-4, 2, n))).astype(np.float16)
        scales[0] = np.float16(0.0)
        if n > 1:
            scales[1] = np.float16(-0.0)
        if n > 2:
            scales[2] = np.float16(6.0e-8)  # subnormal f16
        raw[:, off:off + 2] = scales.view(np.uint8).reshape(n, 2)
    if name == "q8_k":
        d = (rng.standard_normal(n) * 1e-2).astype(np.float32)
        raw[:, 0:4] = d.view(np.uint8).reshape(n, 4)
    return raw.reshape(-1)


def dequantize_file(name, src, dst):
    qt, _, nbytes, _ = FORMATS[name]
    raw = np.fromfile(src, dtype=np.uint8)
    quants.dequantize(raw.reshape(-1, nbytes), qt).reshape(-1).astype(np.float32).tofile(dst)
    return 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--dequantize":
        return dequantize_file(sys.argv[2], sys.argv[3], sys.argv[4])
    if len(sys.argv) != 2:
        print("usage: quant_ref.py OUT_DIR", file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261129)
    for name, (qt, block, nbytes, _) in FORMATS.items():
        x = make_input(rng, block)
        x.tofile(os.path.join(out, f"{name}.in.f32"))
        if name in QUANTIZABLE:
            if name == "q8_k":
                q = q8k_quantize(x)
                qd = q8k_dequantize(q)
            else:
                q = quants.quantize(x.reshape(-1, block), qt).reshape(-1)
                qd = quants.dequantize(q.reshape(-1, nbytes), qt).reshape(-1)
            assert q.size == x.size // block * nbytes
            q.astype(np.uint8).tofile(os.path.join(out, f"{name}.q.bin"))
            qd.astype(np.float32).tofile(os.path.join(out, f"{name}.qd.f32"))
        rq = random_blocks(rng, name, 64)
        if name == "q8_k":
            rqd = q8k_dequantize(rq)
        else:
            rqd = quants.dequantize(rq.reshape(-1, nbytes), qt).reshape(-1)
        rq.tofile(os.path.join(out, f"{name}.rq.bin"))
        rqd.astype(np.float32).tofile(os.path.join(out, f"{name}.rqd.f32"))
    print(f"quant_ref: wrote {len(FORMATS)} formats to {out} (gguf {getattr(gguf, '__version__', '?')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
