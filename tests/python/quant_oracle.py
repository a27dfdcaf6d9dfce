#!/usr/bin/env python3
"""Reference data for the quant-format tests, computed with the `gguf` package (numpy).

  quant_oracle.py random OUTDIR
      For every format: random blocks (with f16 scales that are zero, subnormal, huge, Inf, NaN)
      and the floats gguf.quants.dequantize gives for them; random float rows (with ties, zeros,
      huge and tiny values) and the bytes gguf.quants.quantize gives for the formats it can write
      (for Q8_0, the bytes of llama.cpp's CPU quantizer instead: see q8_0_ggml_cpu).
  quant_oracle.py model GGUF TOOL
      Dequantizes every tensor of a model with gguf.quants and with TOOL (a hearth_kernels
      program that reads jobs "<type> <n> <file offset>" on stdin and writes the floats of every
      job to stdout) and compares the results bit for bit. Exit status 0 when all match.
  quant_oracle.py model-env VAR TOOL
      As `model` for the file named by environment variable VAR, else for the default model in
      the model cache; exit status 77 (skipped) when neither is a file.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGMLQuantizationType as T
from gguf.quants import dequantize, quantize
from gguf.constants import GGML_QUANT_SIZES

# Byte offsets of the f16 scale fields inside one block of each type.
SCALE_FIELDS = {
    T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
    T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
    T.IQ4_NL: [0], T.IQ4_XS: [0],
}
# f16 bit patterns that stress the scale decoding: zeros, subnormals, max, Inf, quiet and signalling NaN.
SPECIAL_F16 = [0x0000, 0x8000, 0x0001, 0x03FF, 0x8200, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
               0x7E00, 0xFE01, 0x7C01, 0x7D55, 0x3C00, 0x1000]


def random_blocks(qtype, n_blocks, rng):
    block, size = GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(n_blocks, size), dtype=np.uint8)
    fields = SCALE_FIELDS.get(qtype, [])
    half = n_blocks // 2
    for off in fields:
        # First half: ordinary positive/negative scales; second half: random bits, then specials.
        normal = (rng.uniform(1e-4, 1.0, size=half) * rng.choice([-1, 1], size=half)).astype(np.float16)
        raw[:half, off:off + 2] = normal.view(np.uint8).reshape(half, 2)
        for k, bits in enumerate(SPECIAL_F16):
            row = half + (k * 7 + off) % (n_blocks - half)
            raw[row, off:off + 2] = np.array([bits], dtype=np.uint16).view(np.uint8)
    return raw


def quant_inputs(rng, block):
    """Rows of floats (a multiple of 256 long) that exercise the quantizers' edge cases."""
    parts = [
        rng.standard_normal(256 * 8).astype(np.float32),
        (rng.standard_normal(256 * 4) * 1e-3).astype(np.float32),
        (rng.standard_normal(256 * 2) * 3e4).astype(np.float32),
        np.zeros(256, dtype=np.float32),
        # Ties: amax 127 gives scale 1, so k + 0.5 sits exactly between two integers.
        np.concatenate([np.array([127.0], np.float32),
                        (rng.integers(-126, 126, size=255) + 0.5).astype(np.float32)]),
        # Tiny magnitudes (f16 subnormal scales), one huge element, a lone non-zero, negatives at the max.
        (rng.standard_normal(256) * 1e-6).astype(np.float32),
        np.concatenate([np.array([1e5], np.float32), rng.standard_normal(255).astype(np.float32)]),
        np.eye(1, 256, 77, dtype=np.float32).ravel() * -3.0,
        -np.abs(rng.standard_normal(256).astype(np.float32)),
    ]
    return np.concatenate(parts)


def q8_0_ggml_cpu(x):
    """Q8_0 blocks as llama.cpp's CPU backend quantizes activations and the KV cache
    (ggml-cpu's quantize_row_q8_0, x86): the multiplier is 127 / amax rather than the gguf
    package's 1 / d, and halves round to even, not away from zero. Same d; the quants differ at
    ties and where the two multipliers round apart. Every step here is one f32 operation."""
    blocks = x.reshape(-1, 32).astype(np.float32)
    amax = np.abs(blocks).max(axis=1, keepdims=True)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        mul = np.where(amax == 0, np.float32(0), np.float32(127) / amax).astype(np.float32)
    qs = np.rint((blocks * mul).astype(np.float32)).astype(np.int8)
    out = np.empty((blocks.shape[0], 34), dtype=np.uint8)
    out[:, 0:2] = d.astype(np.float16).view(np.uint8)
    out[:, 2:] = qs.view(np.uint8)
    return out


def write_random(outdir: Path):
    rng = np.random.default_rng(20261129)
    outdir.mkdir(parents=True, exist_ok=True)
    names = []
    for qtype in [T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.Q2_K, T.Q3_K,
                  T.Q4_K, T.Q5_K, T.Q6_K, T.IQ4_NL, T.IQ4_XS]:
        if qtype in (T.F16, T.BF16):   # every 16-bit pattern
            raw = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.uint8).reshape(1, -1)
        elif qtype == T.F32:
            raw = rng.integers(0, 256, size=(1, 4096 * 4), dtype=np.uint8)
        else:
            raw = random_blocks(qtype, 96, rng)
        with np.errstate(all="ignore"):   # NaN/Inf scales are the point here
            ref = np.ascontiguousarray(dequantize(raw.reshape(-1), qtype), dtype=np.float32)
        raw.tofile(outdir / f"deq_{qtype.name}.bin")
        ref.tofile(outdir / f"deq_{qtype.name}.f32")
        names.append(f"deq {qtype.name} {ref.size}")

    x = quant_inputs(rng, 256)
    specials = np.array([np.inf, -np.inf, np.nan, 65504.0, 65520.0, 65519.99, 6e-8, 3e-8, 2.98023224e-8,
                         1e-40, -0.0, 5.96e-8, 1e38], dtype=np.float32)
    nan_bits = np.array([0x7F800001, 0xFFA00000, 0x7FC00001, 0x7F802000], dtype=np.uint32).view(np.float32)
    plain = np.concatenate([x, specials, nan_bits, rng.standard_normal(256 - specials.size - nan_bits.size)
                            .astype(np.float32)])
    for qtype, data in [(T.F16, plain), (T.BF16, plain), (T.Q8_0, x), (T.Q4_0, x)]:
        with np.errstate(all="ignore"):
            q = np.ascontiguousarray(quantize(data.reshape(1, -1), qtype)).view(np.uint8)
        if qtype == T.Q8_0:
            gguf_q = q.reshape(-1, 34)
            q = q8_0_ggml_cpu(data)
            assert np.array_equal(q[:, :2], gguf_q[:, :2]), "Q8_0: the same d as the gguf package"
            diff = np.abs(q[:, 2:].view(np.int8).astype(int) - gguf_q[:, 2:].view(np.int8).astype(int))
            assert diff.max() <= 1, "Q8_0: quants within one step of the gguf package's"
        data.astype(np.float32).tofile(outdir / f"q_{qtype.name}.in")
        q.tofile(outdir / f"q_{qtype.name}.out")
        names.append(f"quant {qtype.name} {data.size}")
    (outdir / "index.txt").write_text("\n".join(names) + "\n")


def check_model(path: str, tool: str) -> int:
    reader = GGUFReader(path)
    proc = subprocess.Popen([tool, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    bad = 0
    checked = 0
    max_chunk = 1 << 22   # elements per job: bounds the memory of both sides
    jobs = []
    for t in reader.tensors:
        n_total = int(t.n_elements)
        block, size = GGML_QUANT_SIZES[t.tensor_type]
        raw = np.asarray(t.data).reshape(-1).view(np.uint8)
        step = max(block, (max_chunk // block) * block)
        for e0 in range(0, n_total, step):
            n = min(step, n_total - e0)
            b0 = e0 // block * size
            jobs.append((t, e0, n, raw[b0:b0 + n // block * size], int(t.data_offset) + b0))
    # Feed all jobs up front from a thread-free write: the tool answers in order.
    request = "".join(f"{int(t.tensor_type)} {n} {off}\n" for t, _, n, _, off in jobs).encode()
    import threading
    writer = threading.Thread(target=lambda: (proc.stdin.write(request), proc.stdin.close()))
    writer.start()
    for t, e0, n, raw, _ in jobs:
        got = np.frombuffer(proc.stdout.read(4 * n), dtype=np.uint32)
        with np.errstate(all="ignore"):
            want = np.ascontiguousarray(dequantize(raw, t.tensor_type), dtype=np.float32).reshape(-1).view(np.uint32)
        checked += n
        if got.size != n or not np.array_equal(got, want):
            bad += 1
            if got.size == n:
                i = int(np.flatnonzero(got != want)[0])
                print(f"MISMATCH {t.name} ({t.tensor_type.name}) element {e0 + i}: "
                      f"got 0x{got[i]:08x} want 0x{want[i]:08x}", file=sys.stderr)
            else:
                print(f"MISMATCH {t.name}: tool returned {got.size} of {n} floats", file=sys.stderr)
    writer.join()
    rc = proc.wait()
    types = sorted({t.tensor_type.name for t in reader.tensors})
    print(f"{path}: {len(reader.tensors)} tensors, {checked} elements, types {types}: "
          f"{'all bit-exact' if bad == 0 and rc == 0 else f'{bad} mismatching jobs, tool exit {rc}'}")
    return 0 if bad == 0 and rc == 0 else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "random":
        write_random(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "model":
        sys.exit(check_model(sys.argv[2], sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "model-env":
        # The variable (scripts/test sets it), else where hearth finds the default model.
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        path = os.environ.get(sys.argv[2]) or os.path.join(cache, "hearth", "models", "default.gguf")
        if not os.path.isfile(path):
            print(f"SKIPPED: no model at ${sys.argv[2]} or {path!r}")
            sys.exit(77)
        sys.exit(check_model(path, sys.argv[3]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
