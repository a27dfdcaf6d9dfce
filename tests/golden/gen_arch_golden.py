#!/usr/bin/env python3
"""Generates llama.cpp reference data for the architectures beyond the default model.

    .venv-llamacpp/bin/python tests/golden/gen_arch_golden.py [--gemma3 FILE] [--skip-tiny] [--only A,B]

1. Small models (tests/python/write_arch_models.py writes them, deterministic): for each
   ARCH-F32 and ARCH-F16 file, and for the architectures in QUANTIZED an ARCH-Q4_K_M file that
   llama.cpp's own quantizer makes from the F32 one (written to tests/fixtures/models/arch/,
   small enough to keep), it writes tests/golden/arch/ARCH-TYPE.json: the file's SHA-256, and
   for each prompt (token ids, fixed seed) 16 greedy tokens, the top-10 (id, logit) at every
   step and every logit at step 0. deepseek-coder's prompts are code, tokenized by llama.cpp
   with the model's deepseek-coder vocabulary (its text is kept beside the ids), and with
   32,256 logits a step only the top-10 are kept. --only regenerates the named ones.
2. The real gemma-3-270m (FILE, default: scripts/fetch-model --model gemma-3-270m-q4_k_m
   --print-path): tests/golden/gemma-3-270m-q4_k_m/completions.json in the format of
   gen_golden.py (its settings and helpers): code continuations cut from tests/golden/sources/
   and a chat turn in Gemma's format.

Every number comes from llama.cpp; nothing here computes logits itself. Where the CPU reports
AMX but llama.cpp's AMX kernels crash, run it with tests/golden/no_amx.c preloaded.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import llama_cpp
from llama_cpp import Llama

import gen_golden as g

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WRITER = REPO / "tests" / "python" / "write_arch_models.py"
FIXTURES = REPO / "tests" / "fixtures" / "models" / "arch"
ARCHS = ("qwen3", "starcoder2", "gemma3", "phi3", "phi3-longrope", "granite", "qwen3moe", "mistral", "codellama",
         "llama3", "deepseek-coder")
QUANTIZED = ("qwen3", "starcoder2", "gemma3", "phi3", "granite")
TEXT_PROMPTS = {"deepseek-coder": [
    "def fibonacci(n):\n    if n < 2:\n        return n\n",
    "// Sum the squares of 1..n\nint sum_squares(int n) {\n\tint s = 0;\n",
    "class LRUCache:\n    def __init__(self, capacity: int) -> None:\n        self.capacity = capacity  # max entries, \u00e9t\u00e9 2024\n",
]}

TINY_GEN = 16
TINY_PROMPTS = [(7, 5), (11, 13), (13, 40)]   # (seed, length): random ids of the 512-token vocabulary
TINY_SETTINGS = dict(g.SETTINGS, n_ctx=256)


def tiny_prompt(seed, length):
    rng = np.random.default_rng(seed)
    return [int(x) for x in rng.integers(3, 512, size=length)]   # 0-2 are unk, bos, eos


def run_ids(llm, tokens, all_logits=True):
    llm.reset()
    llm.eval(tokens)
    generated, steps = [], []
    for step in range(TINY_GEN):
        logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        tok = int(np.argmax(logits))
        entry = dict(step=step, n_past=llm.n_tokens, argmax=tok, top=g.top_k(logits))
        if step == 0 and all_logits:
            entry["logits"] = [float(x) for x in logits]
        steps.append(entry)
        generated.append(tok)
        llm.eval([tok])
    return dict(prompt_tokens=tokens, generated_tokens=generated, steps=steps)


def quantize(src, dst, ftype):
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), params)
    if rc != 0:
        raise SystemExit(f"llama_model_quantize {src} -> {dst} failed ({rc})")


def gen_tiny(only=None):
    out = HERE / "arch"
    out.mkdir(exist_ok=True)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # The writer needs the `gguf` package: the repo's .venv has it (scripts/setup).
        subprocess.run([str(REPO / ".venv" / "bin" / "python"), str(WRITER), tmp], check=True)
        for arch in ARCHS:
            if only and arch not in only:
                continue
            if arch in QUANTIZED:
                quantize(Path(tmp) / f"{arch}-F32.gguf", FIXTURES / f"{arch}-Q4_K_M.gguf",
                         llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_K_M)
            for tname in ("F32", "F16", "Q4_K_M") if arch in QUANTIZED else ("F32", "F16"):
                path = (FIXTURES if tname == "Q4_K_M" else Path(tmp)) / f"{arch}-{tname}.gguf"
                llm = Llama(model_path=str(path), verbose=False, **TINY_SETTINGS)
                header = dict(model=path.name, model_sha256=g.sha256(path),
                              model_source="tests/fixtures/models/arch" if tname == "Q4_K_M"
                              else "tests/python/write_arch_models.py",
                              llama_cpp_python=llama_cpp.__version__,
                              system_info=llama_cpp.llama_print_system_info().decode().strip(),
                              settings=dict(TINY_SETTINGS, type_k="f16", type_v="f16"),
                              n_vocab=llm.n_vocab(), n_gen=TINY_GEN, top_k=g.TOP_K)
                results = []
                if arch in TEXT_PROMPTS:
                    for i, text in enumerate(TEXT_PROMPTS[arch]):
                        ids = llm.tokenize(text.encode(), add_bos=True, special=True)
                        r = run_ids(llm, ids, all_logits=False)
                        results.append(dict(name=f"text_{i}", prompt=text, **r))
                        print(f"  {path.name} text_{i}: {ids} -> {r['generated_tokens']}", file=sys.stderr)
                for seed, length in TINY_PROMPTS if arch not in TEXT_PROMPTS else ():
                    r = run_ids(llm, tiny_prompt(seed, length))
                    results.append(dict(name=f"ids_{length}", **r))
                    print(f"  {path.name} ids_{length}: {r['generated_tokens']}", file=sys.stderr)
                g.write_json(out / f"{arch}-{tname}.json", dict(header, results=results))
                del llm


# Code continuations: the first lines of a source file (up to and including `upto`), as a
# base model sees a file being written. The chat turn is Gemma's template, written out.
GEMMA_CONTINUATIONS = [
    dict(name="continue_python_class", file="lru_cache.py", upto="            entry = self._data.get(key)\n"),
    dict(name="continue_go_pool", file="worker_pool.go", upto="\t\t\tfor i := range indices {\n"),
]
GEMMA_CHAT_USER = "Write a Python function that returns the largest of three numbers."


def gen_gemma3(model):
    llm = Llama(model_path=model, verbose=False, **g.SETTINGS)
    header = dict(model=Path(model).name, model_sha256=g.sha256(model), llama_cpp_python=llama_cpp.__version__,
                  system_info=llama_cpp.llama_print_system_info().decode().strip(),
                  settings=dict(g.SETTINGS, type_k="f16", type_v="f16"),
                  n_vocab=llm.n_vocab(), add_bos_token=llm._model.add_bos_token())
    results = []
    for case in GEMMA_CONTINUATIONS:
        text = (g.SOURCES / case["file"]).read_text()
        prompt = text[:text.index(case["upto"]) + len(case["upto"])]
        r = g.run_prompt(llm, prompt)
        results.append(dict(name=case["name"], kind="continuation", source=case["file"], **r))
        print(f"  {case['name']}: {len(r['prompt_tokens'])} tokens -> {r['generated_text']!r}", file=sys.stderr)
    # llama.cpp adds the <bos> the template starts with (tokenizer.ggml.add_bos_token).
    prompt = f"<start_of_turn>user\n{GEMMA_CHAT_USER}<end_of_turn>\n<start_of_turn>model\n"
    r = g.run_prompt(llm, prompt)
    results.append(dict(name="chat_max_of_three", kind="chat", user=GEMMA_CHAT_USER, **r))
    print(f"  chat_max_of_three: {len(r['prompt_tokens'])} tokens -> {r['generated_text']!r}", file=sys.stderr)
    out = HERE / Path(model).stem
    out.mkdir(exist_ok=True)
    g.write_json(out / "completions.json",
                 dict(header, n_gen=g.N_GEN, n_top_steps=g.N_TOP_STEPS, top_k=g.TOP_K, results=results))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gemma3", help="gemma-3-270m GGUF (default: scripts/fetch-model's path for it)")
    ap.add_argument("--skip-tiny", action="store_true")
    ap.add_argument("--skip-gemma3", action="store_true")
    ap.add_argument("--only", help="comma-separated small models to regenerate (default: all)")
    args = ap.parse_args()
    if not args.skip_tiny:
        gen_tiny(set(args.only.split(",")) if args.only else None)
    if not args.skip_gemma3:
        model = args.gemma3 or subprocess.run(
            [str(REPO / "scripts" / "fetch-model"), "--model", "gemma-3-270m-q4_k_m", "--print-path"],
            check=True, capture_output=True, text=True).stdout.strip()
        gen_gemma3(model)


if __name__ == "__main__":
    main()
