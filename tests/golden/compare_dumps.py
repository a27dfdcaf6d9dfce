#!/usr/bin/env python3
"""Compares our engine's intermediate activations with llama.cpp's, in graph order.

    .venv/bin/python tests/golden/compare_dumps.py LLAMACPP_DIR OURS_DIR [--layers 0-23]

LLAMACPP_DIR comes from dump_llamacpp.py, OURS_DIR from hearth_test_inference "[dump]".
For each tensor both wrote: max |diff|, max |diff| relative to the tensor's max |value|, how
many elements differ at all, and where the largest difference is (token, index).
"""

import argparse
from pathlib import Path

import numpy as np

STEPS = ["attn_norm", "Qcur", "Kcur", "Vcur", "Qcur#2", "Kcur#2", "Vcur#2", "Qcur#4", "Kcur#4", "kqv_out",
         "ffn_inp", "ffn_norm", "ffn_gate", "ffn_up", "ffn_swiglu", "ffn_out", "l_out"]


def names(n_layer):
    yield "embd"
    for il in range(n_layer):
        for s in STEPS:
            base, _, k = s.partition("#")
            yield f"{base}-{il}" + (f"#{k}" if k else "")
    yield "result_norm"
    yield "result_output"
    yield "logits_last"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("llamacpp_dir")
    ap.add_argument("ours_dir")
    ap.add_argument("--n-layer", type=int, default=24)
    args = ap.parse_args()
    for name in names(args.n_layer):
        a_path, b_path = Path(args.llamacpp_dir) / f"{name}.npy", Path(args.ours_dir) / f"{name}.npy"
        if not a_path.exists() or not b_path.exists():
            continue
        a = np.load(a_path).astype(np.float32)
        b = np.load(b_path).astype(np.float32)
        a = a.reshape(b.shape)
        d = np.abs(a.astype(np.float64) - b)
        scale = float(np.abs(a).max()) or 1.0
        t, i = np.unravel_index(int(np.argmax(d)), d.shape)
        print(f"{name:16s} max {d.max():10.3e} rel {d.max() / scale:9.2e} differ {np.count_nonzero(d):8d}/{d.size:<9d}"
              f" at [{t},{i}] ours {b[t, i]: .6g} llama.cpp {a[t, i]: .6g}")


if __name__ == "__main__":
    main()
