#!/usr/bin/env python3
"""Dumps llama.cpp's intermediate tensors for one golden prompt, to compare layer by layer.

    .venv-llamacpp/bin/python tests/golden/dump_llamacpp.py OUT_DIR [--case fim_go_goroutine]
        [--model FILE] [--golden COMPLETIONS_JSON] [--names attn_norm-0,Qcur-0,...] [--steps N]

Evaluates the case's prompt exactly as gen_golden.py does (same settings, the whole prompt
in one llama_decode call) with llama.cpp's graph-evaluation callback installed, and writes
each f32 tensor the graph computes as OUT_DIR/<name>.npy, shaped [ne3][ne2][ne1][ne0]
(numpy order: the last axis is ggml's ne0). A name seen twice gets a #2, #3... suffix.
Prints every tensor name with its type and shape. With --steps N, then decodes the case's
first N generated tokens one at a time, as gen_golden.py does, each step's tensors going to
OUT_DIR/step1, step2, ... The hidden test hearth_test_inference "[dump]"
(tests/inference/test_dump_activations.cpp) writes the same names for our engine, and
compare_dumps.py compares the two directories. The model defaults to the user's cached
default model (~/.cache/hearth/models/default.gguf), the prompts to its completions.json
(--golden names another, e.g. tests/golden/gemma-3-270m-q4_k_m/completions.json).
"""

import argparse
import ctypes
import json
import sys
from pathlib import Path

import numpy as np

import llama_cpp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_golden  # noqa: E402  (the settings of the golden run)

GGML_MAX_DIMS = 4
GGML_MAX_OP_PARAMS = 64
GGML_MAX_SRC = 10
GGML_MAX_NAME = 64
GGML_TYPE_F32 = 0
GGML_TYPE_F16 = 1


class ggml_tensor(ctypes.Structure):
    """struct ggml_tensor of the vendored ggml.h (llama-cpp-python 0.3.36)."""
    _fields_ = [
        ("type", ctypes.c_int),
        ("buffer", ctypes.c_void_p),
        ("ne", ctypes.c_int64 * GGML_MAX_DIMS),
        ("nb", ctypes.c_size_t * GGML_MAX_DIMS),
        ("op", ctypes.c_int),
        ("op_params", ctypes.c_int32 * (GGML_MAX_OP_PARAMS // 4)),
        ("flags", ctypes.c_int32),
        ("src", ctypes.c_void_p * GGML_MAX_SRC),
        ("view_src", ctypes.c_void_p),
        ("view_offs", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("name", ctypes.c_char * GGML_MAX_NAME),
        ("extra", ctypes.c_void_p),
        ("padding", ctypes.c_char * 8),
    ]


def tensor_array(t):
    """The tensor's elements as a numpy array [ne3][ne2][ne1][ne0], following its strides."""
    dtype = {GGML_TYPE_F32: np.float32, GGML_TYPE_F16: np.float16}[t.type]
    ne = [t.ne[i] for i in range(GGML_MAX_DIMS)]
    nb = [t.nb[i] for i in range(GGML_MAX_DIMS)]
    span = sum((n - 1) * s for n, s in zip(ne, nb)) + np.dtype(dtype).itemsize
    raw = np.frombuffer((ctypes.c_char * span).from_address(t.data), dtype=np.uint8)
    view = np.lib.stride_tricks.as_strided(raw.view(dtype) if nb[0] == np.dtype(dtype).itemsize else raw,
                                           shape=ne[::-1], strides=nb[::-1])
    return np.array(view, dtype=np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--case", default="fim_go_goroutine")
    ap.add_argument("--model", default=None)
    ap.add_argument("--names", default=None, help="comma-separated tensor names to keep (default: all)")
    ap.add_argument("--steps", type=int, default=0, help="also dump this many single-token decode steps")
    ap.add_argument("--golden", default=str(HERE / "qwen2.5-coder-0.5b-instruct-q4_k_m" / "completions.json"))
    args = ap.parse_args()

    golden = json.loads(Path(args.golden).read_text())
    case = next(r for r in golden["results"] if r["name"] == args.case)
    tokens = case["prompt_tokens"]
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    keep = set(args.names.split(",")) if args.names else None
    seen = {}
    out = out_dir

    def on_eval(tp, ask, _user):
        t = ggml_tensor.from_address(tp)
        name = t.name.decode()
        wanted = t.type in (GGML_TYPE_F32, GGML_TYPE_F16) and (keep is None or name in keep)
        if ask:
            return wanted
        if wanted:
            seen[name] = seen.get(name, 0) + 1
            file = name if seen[name] == 1 else f"{name}#{seen[name]}"
            a = tensor_array(t)
            np.save(out / f"{file}.npy", a)  # out: the directory of the current step
            print(f"{file:24s} type {t.type} op {t.op:3d} ne {list(t.ne)}", flush=True)
        return True

    callback = llama_cpp.ggml_backend_sched_eval_callback(on_eval)
    default_params = llama_cpp.llama_cpp.llama_context_default_params

    def params_with_callback():
        p = default_params()
        p.cb_eval = callback
        return p

    # Llama() builds its context parameters from this function; installing the callback there
    # keeps every other setting exactly as gen_golden.py has them.
    llama_cpp.llama_cpp.llama_context_default_params = params_with_callback
    model = args.model or str(Path.home() / ".cache/hearth/models/default.gguf")
    llm = llama_cpp.Llama(model_path=model, verbose=False, **gen_golden.SETTINGS)
    llm.eval(tokens)
    logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
    np.save(out / "logits_last.npy", logits)
    print("argmax", int(np.argmax(logits)), "top-2", sorted(logits)[-2:], file=sys.stderr)
    for step, tok in enumerate(case["generated_tokens"][:args.steps], start=1):
        out = out_dir / f"step{step}"
        out.mkdir(exist_ok=True)
        seen.clear()
        llm.eval([tok])
        np.save(out / "logits_last.npy", np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32))


if __name__ == "__main__":
    main()
