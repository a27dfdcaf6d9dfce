#!/usr/bin/env python3
"""Checks the golden logits against an exact float64 forward pass in numpy.

An independent second opinion on tests/golden/<model>/completions.json: the
weights are dequantized with the `gguf` package (its own numpy dequantizers,
not llama.cpp's), the qwen2 forward pass is written out below in float64 with
no activation quantization and no f16 KV cache, and the logits after each
prompt are compared with llama.cpp's top-10 lists. The gap it prints is how far
llama.cpp's own rounding (Q8 activations, f16 KV, its accumulation order) puts
it from the exact result, which is the scale of tolerance a test of our engine
against llama.cpp needs.

    .venv/bin/python tests/golden/numpy_reference.py [--model FILE] [--golden FILE]

Exits non-zero when a prompt's argmax differs or a top-10 logit is further
than --tolerance from the exact value.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


class Qwen2:
    def __init__(self, path):
        r = GGUFReader(path)
        self.kv = {k: f.contents() for k, f in r.fields.items() if not k.startswith("tokenizer.")}
        self.t = {t.name: t for t in r.tensors}
        a = self.kv["general.architecture"]
        if a != "qwen2":
            raise SystemExit(f"{path}: architecture {a!r}, this reference knows only qwen2")
        self.n_layer = self.kv["qwen2.block_count"]
        self.n_head = self.kv["qwen2.attention.head_count"]
        self.n_head_kv = self.kv["qwen2.attention.head_count_kv"]
        self.n_embd = self.kv["qwen2.embedding_length"]
        self.head_dim = self.n_embd // self.n_head
        self.eps = self.kv["qwen2.attention.layer_norm_rms_epsilon"]
        self.rope_base = self.kv["qwen2.rope.freq_base"]

    def w(self, name):
        """The tensor as float64, numpy shape (rows, cols) = (ne1, ne0)."""
        t = self.t[name]
        return dequantize(t.data, t.tensor_type).astype(np.float64).reshape(
            [int(x) for x in reversed(t.shape)])

    def rms_norm(self, x, name):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + self.eps) * self.w(name)

    def rope(self, x, pos):
        # NEOX layout (every qwen2 model): dimension i pairs with i + head_dim/2.
        half = self.head_dim // 2
        freq = self.rope_base ** (-np.arange(half, dtype=np.float64) * 2 / self.head_dim)
        ang = pos[:, None] * freq[None, :]
        cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        a, b = x[..., :half], x[..., half:]
        return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)

    def forward(self, tokens):
        """Logits (float64) of the last position after evaluating `tokens`."""
        emb = self.t["token_embd.weight"]
        rows = dequantize(emb.data[tokens], emb.tensor_type)  # only the rows we need
        x = rows.astype(np.float64).reshape(len(tokens), self.n_embd)
        n = len(tokens)
        pos = np.arange(n, dtype=np.float64)
        mask = np.triu(np.full((n, n), -np.inf), 1)
        group = self.n_head // self.n_head_kv
        for il in range(self.n_layer):
            p = f"blk.{il}."
            h = self.rms_norm(x, p + "attn_norm.weight")
            q = h @ self.w(p + "attn_q.weight").T + self.w(p + "attn_q.bias")
            k = h @ self.w(p + "attn_k.weight").T + self.w(p + "attn_k.bias")
            v = h @ self.w(p + "attn_v.weight").T + self.w(p + "attn_v.bias")
            q = self.rope(q.reshape(n, self.n_head, self.head_dim), pos)
            k = self.rope(k.reshape(n, self.n_head_kv, self.head_dim), pos)
            v = v.reshape(n, self.n_head_kv, self.head_dim)
            out = np.empty((n, self.n_head, self.head_dim))
            for hd in range(self.n_head):
                kv = hd // group
                s = q[:, hd, :] @ k[:, kv, :].T / np.sqrt(self.head_dim) + mask
                s = np.exp(s - s.max(-1, keepdims=True))
                out[:, hd, :] = (s / s.sum(-1, keepdims=True)) @ v[:, kv, :]
            x = x + out.reshape(n, self.n_embd) @ self.w(p + "attn_output.weight").T
            h = self.rms_norm(x, p + "ffn_norm.weight")
            g = h @ self.w(p + "ffn_gate.weight").T
            u = h @ self.w(p + "ffn_up.weight").T
            x = x + (g / (1 + np.exp(-g)) * u) @ self.w(p + "ffn_down.weight").T
        h = self.rms_norm(x[-1:], "output_norm.weight")
        out = "output.weight" if "output.weight" in self.t else "token_embd.weight"
        return (h @ self.w(out).T)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="GGUF file (default: scripts/fetch-model --print-path)")
    ap.add_argument("--golden", help="completions.json (default: tests/golden/<model stem>/completions.json)")
    ap.add_argument("--tolerance", type=float, default=1.0,
                    help="largest allowed |llama.cpp - exact| over the top-10 logits (default 1.0)")
    ap.add_argument("--only", help="check only the prompt of this name")
    args = ap.parse_args()
    model = args.model or subprocess.run([str(REPO / "scripts" / "fetch-model"), "--print-path"],
                                         check=True, capture_output=True, text=True).stdout.strip()
    golden = Path(args.golden) if args.golden else HERE / Path(model).stem / "completions.json"
    data = json.loads(golden.read_text())
    m = Qwen2(model)

    ok = True
    worst_all = 0.0
    for r in data["results"]:
        if args.only and r["name"] != args.only:
            continue
        exact = m.forward(r["prompt_tokens"])
        top = r["steps"][0]["top"]
        diffs = [abs(logit - exact[i]) for i, logit in top]
        worst = max(diffs)
        worst_all = max(worst_all, worst)
        exact_top = [int(i) for i in np.argsort(-exact, kind="stable")[:len(top)]]
        same_argmax = exact_top[0] == top[0][0]
        same_set = len(set(exact_top) & {i for i, _ in top})
        print(f"{r['name']:26s} {len(r['prompt_tokens']):4d} tokens: max |dlogit| over llama.cpp's top-10 "
              f"{worst:.4f}, mean {np.mean(diffs):.4f}; argmax {'same' if same_argmax else 'DIFFERENT'}; "
              f"top-10 sets share {same_set}/10; exact top two {exact_top[0]} {exact[exact_top[0]]:.4f}, "
              f"{exact_top[1]} {exact[exact_top[1]]:.4f}")
        ok &= same_argmax and worst <= args.tolerance
    print(f"worst |dlogit| {worst_all:.4f} (tolerance {args.tolerance})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
