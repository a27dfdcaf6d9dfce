#!/usr/bin/env python3
"""How stable are llama.cpp's own greedy continuations of the golden prompts?

Runs llama.cpp (llama-cpp-python, the same build as gen_golden.py) on every prompt
of completions.json under settings that change only how it schedules the same
arithmetic (threads, batch split) and reports, per prompt, whether its greedy
continuation still equals the golden one, where it first differs, and the
smallest top-2 logit gap it met while generating:

    .venv-llamacpp/bin/python tests/golden/stability.py [--model FILE]

A prompt whose continuation changes with llama.cpp's own batch size is decided
by rounding, not by the model; see README.md ("Near-ties").
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

import llama_cpp
from llama_cpp import Llama

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_golden as G  # noqa: E402  (its SETTINGS are the golden settings)

VARIANTS = {
    "golden settings": dict(G.SETTINGS),
    "1 thread": dict(G.SETTINGS, n_threads=1, n_threads_batch=1),
    "batch 64": dict(G.SETTINGS, n_batch=64, n_ubatch=64),
    "batch 8": dict(G.SETTINGS, n_batch=8, n_ubatch=8),
}


def continuation(llm, prompt_tokens, n):
    llm.reset()
    llm.eval(prompt_tokens)
    out, gaps = [], []
    for _ in range(n):
        logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        order = np.argsort(-logits, kind="stable")
        gaps.append(float(logits[order[0]] - logits[order[1]]))
        tok = int(order[0])
        out.append(tok)
        if llama_cpp.llama_vocab_is_eog(llm._model.vocab, tok):
            break
        llm.eval([tok])
    return out, gaps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model")
    args = ap.parse_args()
    model = args.model or subprocess.run([str(HERE.parent.parent / "scripts" / "fetch-model"), "--print-path"],
                                         check=True, capture_output=True, text=True).stdout.strip()
    golden = json.loads((HERE / "qwen2.5-coder-0.5b-instruct-q4_k_m" / "completions.json").read_text())
    for name, settings in VARIANTS.items():
        llm = Llama(model_path=model, verbose=False, **settings)
        same = 0
        for r in golden["results"]:
            want = r["generated_tokens"]
            got, gaps = continuation(llm, r["prompt_tokens"], len(want))
            k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), None)
            same += got == want
            where = "identical" if got == want else f"differs at token {k}"
            print(f"{name:16s} {r['name']:26s} {where:20s} smallest top-2 gap {min(gaps):.3f}", flush=True)
        print(f"{name}: {same}/{len(golden['results'])} continuations equal the golden ones", flush=True)


if __name__ == "__main__":
    main()
