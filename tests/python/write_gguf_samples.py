#!/usr/bin/env python3
"""Writes GGUF files with the `gguf` package (an independent writer) for the C++ reader tests.

usage: write_gguf_samples.py OUT_DIR

For each sample NAME it writes OUT_DIR/NAME.gguf and OUT_DIR/NAME.expect, a line-based
manifest of what was written, so the C++ test can compare every value and tensor byte:

    kv <key-hex> <type> <value>               scalar; floats as the hex of their IEEE bits
    kv <key-hex> string <utf8-hex>
    arr <key-hex> <elem-type> <count> <v>...  same encodings per element
    tensor <name-hex> <ggml-type-id> <n_dims> <ne0> .. <ne[n-1]> <data-hex>
    alignment <n>

Types are the reader's names: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool string.
Values are deterministic (fixed seed), so a rerun writes the same files.
"""
import struct
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT
from gguf import GGUFValueType as VT

VT_NAME = {
    VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16", VT.UINT32: "u32",
    VT.INT32: "i32", VT.UINT64: "u64", VT.INT64: "i64", VT.FLOAT32: "f32", VT.FLOAT64: "f64",
    VT.BOOL: "bool", VT.STRING: "string",
}


def hx(s: str | bytes) -> str:
    b = s.encode("utf-8") if isinstance(s, str) else s
    return b.hex() if b else "-"


def enc(vtype: VT, v) -> str:
    if vtype == VT.FLOAT32:
        return struct.pack("<f", v).hex()
    if vtype == VT.FLOAT64:
        return struct.pack("<d", v).hex()
    if vtype == VT.BOOL:
        return "1" if v else "0"
    if vtype == VT.STRING:
        return hx(v)
    return str(int(v))


class sample:
    def __init__(self, out_dir: Path, name: str, arch: str = "llama"):
        self.path = out_dir / f"{name}.gguf"
        self.writer = gguf.GGUFWriter(str(self.path), arch)
        self.lines = [f"kv {hx('general.architecture')} string {hx(arch)}"]

    def kv(self, key: str, vtype: VT, v):
        self.writer.add_key_value(key, v, vtype)
        self.lines.append(f"kv {hx(key)} {VT_NAME[vtype]} {enc(vtype, v)}")

    def arr(self, key: str, elem: VT, values):
        self.writer.add_key_value(key, list(values), VT.ARRAY, sub_type=elem)
        body = " ".join(enc(elem, v) for v in values)
        self.lines.append(f"arr {hx(key)} {VT_NAME[elem]} {len(values)} {body}".rstrip())

    def alignment(self, n: int):
        self.writer.add_custom_alignment(n)
        self.lines.append(f"kv {hx('general.alignment')} u32 {n}")
        self.lines.append(f"alignment {n}")

    def tensor(self, name: str, qtype: QT, ne: list[int], raw: np.ndarray):
        """ne in ggml order (ne0 first); raw holds the bytes (or values) exactly as stored."""
        shape = list(reversed(ne))  # numpy order, outermost first
        if qtype in (QT.F32, QT.F16, QT.F64, QT.I8, QT.I16, QT.I32, QT.I64):
            self.writer.add_tensor(name, raw.reshape(shape))
        elif raw.dtype == np.uint8:  # quantized blocks: the writer derives ne from the byte shape
            self.writer.add_tensor(name, raw.reshape(shape[:-1] + [-1]), raw_dtype=qtype)
        else:
            self.writer.add_tensor(name, raw.reshape(shape), raw_shape=shape, raw_dtype=qtype)
        data = np.ascontiguousarray(raw).tobytes()
        dims = " ".join(str(n) for n in ne)
        self.lines.append(f"tensor {hx(name)} {int(qtype)} {len(ne)} {dims} {data.hex()}")

    def close(self):
        w = self.writer
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        self.path.with_suffix(".expect").write_text("\n".join(self.lines) + "\n")


def every_type(out: Path):
    rng = np.random.default_rng(42)
    s = sample(out, "every_type")
    s.kv("test.u8", VT.UINT8, 255)
    s.kv("test.i8", VT.INT8, -128)
    s.kv("test.u16", VT.UINT16, 65535)
    s.kv("test.i16", VT.INT16, -32768)
    s.kv("test.u32", VT.UINT32, 4294967295)
    s.kv("test.i32", VT.INT32, -2147483648)
    s.kv("test.u64", VT.UINT64, 18446744073709551615)
    s.kv("test.i64", VT.INT64, -9223372036854775808)
    s.kv("test.f32", VT.FLOAT32, -1.5e-7)
    s.kv("test.f64", VT.FLOAT64, 3.141592653589793)
    s.kv("test.bool_true", VT.BOOL, True)
    s.kv("test.bool_false", VT.BOOL, False)
    s.kv("test.string", VT.STRING, "héllo ▁wörld <|fim_prefix|>\n\ttab")
    s.kv("llama.context_length", VT.UINT32, 4096)
    s.arr("test.arr_u8", VT.UINT8, [0, 1, 254, 255])
    s.arr("test.arr_i8", VT.INT8, [-128, -1, 0, 127])
    s.arr("test.arr_u16", VT.UINT16, [0, 65535, 7])
    s.arr("test.arr_i16", VT.INT16, [-32768, 32767])
    s.arr("test.arr_u32", VT.UINT32, [4294967295, 0, 12345])
    s.arr("test.arr_i32", VT.INT32, [-2147483648, 2147483647, 5])
    s.arr("test.arr_u64", VT.UINT64, [18446744073709551615, 0])
    s.arr("test.arr_i64", VT.INT64, [-9223372036854775808, 9223372036854775807])
    s.arr("test.arr_f32", VT.FLOAT32, [float(np.float32(x)) for x in rng.standard_normal(5)])
    s.arr("test.arr_f64", VT.FLOAT64, [float(x) for x in rng.standard_normal(4)])
    s.arr("test.arr_bool", VT.BOOL, [True, False, True])
    s.arr("test.arr_string", VT.STRING, ["a", "", "▁the", "<0x0A>", "日本語"])
    s.arr("tokenizer.ggml.tokens", VT.STRING, ["<unk>", "<s>", "</s>", "a"])
    s.arr("tokenizer.ggml.scores", VT.FLOAT32, [0.0, -1.0, -2.0, -3.5])
    s.arr("tokenizer.ggml.token_type", VT.INT32, [2, 3, 3, 1])

    s.tensor("t.f32", QT.F32, [4, 3], rng.standard_normal(12).astype(np.float32))
    s.tensor("t.f16", QT.F16, [8, 2], rng.standard_normal(16).astype(np.float16))
    s.tensor("t.f64", QT.F64, [3], rng.standard_normal(3).astype(np.float64))
    s.tensor("t.i8", QT.I8, [5], rng.integers(-128, 128, 5).astype(np.int8))
    s.tensor("t.i16", QT.I16, [2, 2], rng.integers(-3000, 3000, 4).astype(np.int16))
    s.tensor("t.i32", QT.I32, [7], rng.integers(-100000, 100000, 7).astype(np.int32))
    s.tensor("t.i64", QT.I64, [2], rng.integers(-(2**40), 2**40, 2).astype(np.int64))
    q8 = gguf.quants.quantize(rng.standard_normal((3, 64)).astype(np.float32), QT.Q8_0)
    s.tensor("t.q8_0", QT.Q8_0, [64, 3], q8)
    q4 = gguf.quants.quantize(rng.standard_normal((2, 32)).astype(np.float32), QT.Q4_0)
    s.tensor("t.q4_0", QT.Q4_0, [32, 2], q4)
    bf = gguf.quants.quantize(rng.standard_normal((2, 4)).astype(np.float32), QT.BF16)
    s.tensor("t.bf16", QT.BF16, [4, 2], bf)
    # A K-quant block is written as raw bytes: the reader checks layout, not values.
    q4k = rng.integers(0, 256, (2, 144), dtype=np.uint8)
    s.tensor("blk.0.ffn_down.weight", QT.Q4_K, [256, 2], q4k)
    s.tensor("t.4d", QT.F32, [2, 3, 2, 2], rng.standard_normal(24).astype(np.float32))
    s.close()


def aligned(out: Path):
    rng = np.random.default_rng(7)
    s = sample(out, "aligned_256", arch="qwen2")
    s.alignment(256)
    s.kv("qwen2.block_count", VT.UINT32, 1)
    s.tensor("a", QT.F32, [3], rng.standard_normal(3).astype(np.float32))
    s.tensor("b", QT.F16, [5, 3], rng.standard_normal(15).astype(np.float16))
    s.tensor("c", QT.F32, [1], rng.standard_normal(1).astype(np.float32))
    s.close()


def metadata_only(out: Path):
    s = sample(out, "metadata_only", arch="gpt2")
    s.arr("tokenizer.ggml.tokens", VT.STRING, ["!", "\"", "Ġthe"])
    s.arr("tokenizer.ggml.merges", VT.STRING, ["Ġ t", "h e"])
    s.kv("tokenizer.ggml.model", VT.STRING, "gpt2")
    s.close()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    every_type(out)
    aligned(out)
    metadata_only(out)


if __name__ == "__main__":
    main()
