#!/usr/bin/env python3
"""Dumps a GGUF file as read by the `gguf` package's GGUFReader (an independent reader),
in the manifest format of write_gguf_samples.py, for the C++ reader tests to compare with.

usage: dump_gguf.py OUT_DIR FILE.gguf...   (writes OUT_DIR/<file name>.expect for each)

    kv <key-hex> <type> <value>               as in write_gguf_samples.py
    arr <key-hex> <elem-type> <count> <v>...
    tinfo <name-hex> <ggml-type-id> <n_dims> <ne0> .. <ne[n-1]> <absolute-data-offset> <n_bytes>

Strings are dumped as their raw bytes (vocabularies hold byte tokens that are not UTF-8).
"""
import struct
import sys
from pathlib import Path

from gguf import GGUFReader
from gguf import GGUFValueType as VT

VT_NAME = {
    VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16", VT.UINT32: "u32",
    VT.INT32: "i32", VT.UINT64: "u64", VT.INT64: "i64", VT.FLOAT32: "f32", VT.FLOAT64: "f64",
    VT.BOOL: "bool", VT.STRING: "string",
}


def enc(vtype, part) -> str:
    if vtype == VT.STRING:
        b = part.tobytes()
        return b.hex() if b else "-"
    v = part.tolist()[0]
    if vtype == VT.FLOAT32:
        return struct.pack("<f", v).hex()
    if vtype == VT.FLOAT64:
        return struct.pack("<d", v).hex()
    if vtype == VT.BOOL:
        return "1" if v else "0"
    return str(int(v))


def dump(path: str) -> str:
    r = GGUFReader(path)
    out = []
    for name, f in r.fields.items():
        if name.startswith("GGUF."):  # the reader's pseudo-fields for the header
            continue
        key = name.encode("utf-8").hex()
        if f.types[0] == VT.ARRAY:
            sub = f.types[-1]
            vals = " ".join(enc(sub, f.parts[i]) for i in f.data)
            out.append(f"arr {key} {VT_NAME[sub]} {len(f.data)} {vals}".rstrip())
        else:
            out.append(f"kv {key} {VT_NAME[f.types[0]]} {enc(f.types[0], f.parts[-1])}")
    for t in r.tensors:
        ne = [int(x) for x in t.shape]
        dims = " ".join(str(x) for x in ne)
        out.append(f"tinfo {t.name.encode('utf-8').hex()} {int(t.tensor_type)} {len(ne)} {dims} "
                   f"{t.data_offset} {t.n_bytes}")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in sys.argv[2:]:
        (out_dir / (Path(path).name + ".expect")).write_text(dump(path))


if __name__ == "__main__":
    main()
