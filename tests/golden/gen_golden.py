#!/usr/bin/env python3
"""Generates llama.cpp reference data for a real model (tests/golden/<model>/).

Runs llama.cpp through llama-cpp-python (scripts/llamacpp-env makes the venv):

    .venv-llamacpp/bin/python tests/golden/gen_golden.py [--model FILE]

and writes, for the model file FILE (default: scripts/fetch-model --print-path):

  completions.json   FIM and chat prompts: prompt ids, 32 greedy tokens, top-10
                     (id, logit) at each of the first 8 generation steps
  tokenize.json      ids of whole source files (tests/golden/sources/)
  vocab_qwen2.json   the shared qwen2 tokenizer cases run through this model's
                     tokenizer, with which ones match the expected ids

Every number comes from llama.cpp; nothing here computes logits itself. The
prompts are cut from the files in tests/golden/sources/ by the anchors below,
so the data can be regenerated and reviewed.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import llama_cpp
from llama_cpp import Llama

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SOURCES = HERE / "sources"
VOCAB_CASES = REPO / "tests" / "fixtures" / "tokenizer" / "ggml-vocab-qwen2.gguf"

N_GEN = 32        # greedy tokens per prompt (fewer when an end-of-generation token comes first)
N_TOP_STEPS = 8   # generation steps with a recorded top list
TOP_K = 10
SETTINGS = dict(n_ctx=2048, n_batch=512, n_ubatch=512, n_threads=2, n_threads_batch=2,
                logits_all=True, flash_attn=False, n_gpu_layers=0, use_mmap=True)

# FIM cases: the middle is the text from `cursor` (an anchor; the cursor sits
# `cursor_offset` characters after the anchor's start) up to the start of
# `suffix_from`. The prefix keeps at most `prefix_lines` lines before the cursor
# and the suffix at most `suffix_lines` lines, as an editor plugin would cut them.
FIM_CASES = [
    dict(name="fim_python_method_body", file="lru_cache.py",
         cursor="            entry = self._data.get(key)\n", suffix_from="    def put(",
         prefix_lines=40, suffix_lines=12),
    dict(name="fim_python_mid_line", file="lru_cache.py",
         cursor="        a, b = b, a + b", cursor_offset=len("        a, b = "),
         suffix_from="\n    return a\n", prefix_lines=30, suffix_lines=10),
    dict(name="fim_cpp_member_function", file="ring_buffer.cpp",
         cursor="        std::size_t tail = tail_.load", suffix_from="    std::size_t capacity() const",
         prefix_lines=40, suffix_lines=12),
    dict(name="fim_js_method", file="debounce.js",
         cursor="    this.list.replaceChildren(", suffix_from="  destroy() {",
         prefix_lines=40, suffix_lines=12),
    dict(name="fim_go_goroutine", file="worker_pool.go",
         cursor="\t\t\tfor i := range indices {\n", suffix_from="\t\t}()\n",
         prefix_lines=40, suffix_lines=12),
]

CHAT_SYSTEM = "You are a concise coding assistant. Answer in plain prose."
CHAT_QUESTION = "What does `unquote` do when a value starts with a quote but does not end with one?"
CHAT_CODE_ANCHOR = ("fn unquote(", "\n#[cfg(test)]")


def fim_prompt(case):
    text = (SOURCES / case["file"]).read_text()
    start = text.index(case["cursor"]) + case.get("cursor_offset", 0)
    end = text.index(case["suffix_from"], start)
    prefix = "".join(text[:start].splitlines(keepends=True)[-case["prefix_lines"]:])
    suffix = "".join(text[end:].splitlines(keepends=True)[:case["suffix_lines"]])
    prompt = f"<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>"
    return prompt, dict(prefix=prefix, suffix=suffix, original_middle=text[start:end])


def chat_prompt():
    text = (SOURCES / "config.rs").read_text()
    a, b = CHAT_CODE_ANCHOR
    code = text[text.index(a):text.index(b)].rstrip() + "\n"
    user = f"{CHAT_QUESTION}\n\n```rust\n{code}```"
    prompt = (f"<|im_start|>system\n{CHAT_SYSTEM}<|im_end|>\n"
              f"<|im_start|>user\n{user}<|im_end|>\n"
              f"<|im_start|>assistant\n")
    return prompt, dict(system=CHAT_SYSTEM, user=user)


def top_k(logits):
    """(id, logit) of the TOP_K largest logits; ties go to the lower id."""
    ids = np.arange(len(logits))
    order = np.lexsort((ids, -logits.astype(np.float64)))[:TOP_K]
    return [[int(i), float(logits[i])] for i in order]


def logsumexp(logits):
    x = logits.astype(np.float64)
    m = x.max()
    return float(m + np.log(np.exp(x - m).sum()))


def piece(llm, tok):
    return llm.detokenize([tok], special=True).decode("utf-8", errors="backslashreplace")


def run_prompt(llm, prompt):
    vocab = llm._model.vocab
    # add_bos=True asks llama.cpp to add a BOS only if the model wants one
    # (tokenizer.ggml.add_bos_token); special=True parses <|fim_prefix|> etc.
    tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
    if len(tokens) > SETTINGS["n_batch"]:
        raise SystemExit(f"prompt of {len(tokens)} tokens would need more than one decode call")
    llm.reset()
    llm.eval(tokens)  # the whole prompt in one llama_decode call
    generated, steps, stopped = [], [], False
    for step in range(N_GEN):
        logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        tok = int(np.argmax(logits))  # first maximum = lowest id on a tie
        if step < N_TOP_STEPS:
            steps.append(dict(step=step, n_past=llm.n_tokens, argmax=tok,
                              logsumexp=logsumexp(logits), top=top_k(logits)))
        generated.append(tok)
        if llama_cpp.llama_vocab_is_eog(vocab, tok):
            stopped = True
            break
        llm.eval([tok])
    text = llm.detokenize(generated, special=True).decode("utf-8", errors="backslashreplace")
    return dict(prompt=prompt, prompt_tokens=tokens, generated_tokens=generated,
                generated_pieces=[piece(llm, t) for t in generated], generated_text=text,
                stopped_on_eog=stopped, steps=steps)


def gen_completions(llm, header):
    results = []
    for case in FIM_CASES:
        prompt, parts = fim_prompt(case)
        r = run_prompt(llm, prompt)
        results.append(dict(name=case["name"], kind="fim", source=case["file"], **parts, **r))
        print(f"  {case['name']}: {len(r['prompt_tokens'])} prompt tokens -> {r['generated_text']!r}",
              file=sys.stderr)
    prompt, parts = chat_prompt()
    r = run_prompt(llm, prompt)
    results.append(dict(name="chat_explain_rust", kind="chat", source="config.rs", **parts, **r))
    print(f"  chat_explain_rust: {len(r['prompt_tokens'])} prompt tokens -> {r['generated_text']!r}",
          file=sys.stderr)
    return dict(header, n_gen=N_GEN, n_top_steps=N_TOP_STEPS, top_k=TOP_K, results=results)


def gen_tokenize(llm, header):
    files = []
    for path in sorted(SOURCES.iterdir()):
        text = path.read_text()
        ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        back = llm.detokenize(ids).decode("utf-8")
        if back != text:
            raise SystemExit(f"{path.name}: llama.cpp's detokenize does not give the text back")
        files.append(dict(file=path.name, text=text, ids=ids))
        print(f"  {path.name}: {len(text)} chars -> {len(ids)} tokens", file=sys.stderr)
    return dict(header, add_bos=False, parse_special=False, files=files)


def gen_vocab_cases(llm, header):
    marker = b"\n__ggml_vocab_test__\n"
    texts = Path(str(VOCAB_CASES) + ".inp").read_bytes().split(marker)[:-1]
    expected = Path(str(VOCAB_CASES) + ".out").read_text().split("\n")[:len(texts)]
    cases, n_match = [], 0
    for i, (raw, want_line) in enumerate(zip(texts, expected)):
        want = [int(x) for x in want_line.split()]
        got = llm.tokenize(raw, add_bos=False, special=False)
        match = got == want
        n_match += match
        cases.append(dict(index=i, text=raw.decode("utf-8"), expected=want, llama_cpp=got, match=match))
    print(f"  qwen2 vocab cases: {n_match}/{len(cases)} match", file=sys.stderr)
    return dict(header, cases_from=f"fixtures/tokenizer/{VOCAB_CASES.name}.inp/.out",
                add_bos=False, parse_special=False, n_cases=len(cases), n_match=n_match, cases=cases)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def to_json(v, indent=""):
    """Objects and lists of objects one member per line; everything else (id
    lists, top lists, strings) compact on its line, so diffs stay readable."""
    inner = indent + " "
    if isinstance(v, dict):
        items = [f"{inner}{json.dumps(k)}: {to_json(x, inner)}" for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        return "[\n" + ",\n".join(inner + to_json(x, inner) for x in v) + "\n" + indent + "]"
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def write_json(path, data):
    path.write_text(to_json(data) + "\n")
    print(f"wrote {path.relative_to(REPO)} ({path.stat().st_size} bytes)", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="GGUF file (default: scripts/fetch-model --print-path)")
    ap.add_argument("--out", help="output folder (default: tests/golden/<model file stem>)")
    args = ap.parse_args()
    model = args.model or subprocess.run([str(REPO / "scripts" / "fetch-model"), "--print-path"],
                                         check=True, capture_output=True, text=True).stdout.strip()
    out = Path(args.out) if args.out else HERE / Path(model).stem
    out.mkdir(parents=True, exist_ok=True)

    llm = Llama(model_path=model, verbose=False, **SETTINGS)
    header = dict(
        model=Path(model).name, model_sha256=sha256(model),
        llama_cpp_python=llama_cpp.__version__,
        system_info=llama_cpp.llama_print_system_info().decode().strip(),
        settings=dict(SETTINGS, type_k="f16", type_v="f16"),
        n_vocab=llm.n_vocab(), add_bos_token=llm._model.add_bos_token(),
    )
    write_json(out / "completions.json", gen_completions(llm, header))
    write_json(out / "tokenize.json", gen_tokenize(llm, header))
    write_json(out / "vocab_qwen2.json", gen_vocab_cases(llm, header))


if __name__ == "__main__":
    main()
