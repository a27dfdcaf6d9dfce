#!/usr/bin/env python3
"""llama.cpp's fill-in-the-middle prompts for each FIM family, as token ids.

For every vocabulary below and every case (prefix, suffix), this writes the ids of the
prompt llama.cpp's server builds for /infill without extra context (format_prompt_infill in
tools/server): [BOS if the model adds one] FIM_PRE tokens(prefix) FIM_SUF tokens(suffix)
FIM_MID, each part tokenized on its own with add_special=false, parse_special=false; the FIM
ids are llama.cpp's own (llama_vocab_fim_pre/suf/mid). It also records which of each family's
end tokens llama.cpp counts as end of generation. tests/inference/test_fim_families.cpp
compares hearth's prompts against these.

Vocabularies: the StarCoder2 and DeepSeek-Coder fixtures; CodeLlama-style and
CodeGemma-style vocabularies derived from the llama-spm fixture by derive_vocab() (the same
recipe the C++ test applies in memory: tokens appended, keys set); and the default model
(Qwen2.5-Coder) when HEARTH_DEFAULT_MODEL points at it.

Usage: .venv-llamacpp/bin/python tests/golden/gen_fim_golden.py   (needs the `gguf` package too)
"""
import json
import os
import sys
import tempfile

import llama_cpp
import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "tokenizer")
OUT = os.path.join(HERE, "fim", "llamacpp_fim_prompts.json")

SP = "\u2581"
CONTROL = int(gguf.TokenType.CONTROL)

# Appended to the 32000-token llama-spm vocabulary. CodeLlama's added ids are 32000..32015
# with its four FIM tokens at 32007..32010 (the converter names them by key); the other
# twelve stand in for the rest of its added range. CodeGemma-style: the four tokens CodeGemma
# adds, found by their texts (no keys), with Gemma's add_space_prefix = false.
DERIVED = {
    "codellama": {
        "tokens": [f"<added_{i}>" for i in range(7)] + [SP + "<PRE>", SP + "<SUF>", SP + "<MID>", SP + "<EOT>"]
        + [f"<added_{i}>" for i in range(11, 16)],
        "keys": {"tokenizer.ggml.fim_pre_token_id": 32007, "tokenizer.ggml.fim_suf_token_id": 32008,
                 "tokenizer.ggml.fim_mid_token_id": 32009, "tokenizer.ggml.eot_token_id": 32010},
        "bools": {},
    },
    "codegemma": {
        "tokens": ["<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|file_separator|>"],
        "keys": {},
        "bools": {"tokenizer.ggml.add_space_prefix": False},
    },
}

CASES = [
    ("function body", "def add(a, b):\n    ", "\n\nprint(add(1, 2))\n"),
    ("mid line", "int main() {\n    int x = ", ";\n    return x;\n}\n"),
    ("suffix starts with spaces", "for i in range(10):", "    print(i)\n"),
    ("empty suffix", "// sum of a slice\nfn sum(xs: &[i32]) -> i32 {\n", ""),
    ("empty prefix", "", "\nclass Empty:\n    pass\n"),
    ("control text stays text", "s = '<fim_suffix><|fim_middle|>'\n", "t = '<｜fim▁hole｜> <SUF>'\n"),
    ("non-ascii", "# grüße\nname = \"", "\"  # café ☕\n"),
]

FAMILY_ENDS = {
    "qwen": ["<|endoftext|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"],
    "starcoder": ["<|endoftext|>", "<fim_pad>", "<file_sep>"],
    "codellama": [SP + "<EOT>", "</s>"],
    "deepseek": ["<｜end▁of▁sentence｜>", "<|EOT|>"],
    "codegemma": ["<|file_separator|>", "<eos>"],
}


def derive_vocab(src, dst, recipe):
    """Copies src's metadata with recipe's tokens appended and its keys set."""
    reader = gguf.GGUFReader(src)
    writer = gguf.GGUFWriter(dst, arch="llama")
    skip = {"general.architecture", "GGUF.version", "GGUF.tensor_count", "GGUF.kv_count"}
    for name, field in reader.fields.items():
        if name in skip or name in recipe["keys"] or name in recipe["bools"]:
            continue
        value = field.contents()
        if name == "tokenizer.ggml.tokens":
            value = value + recipe["tokens"]
        elif name == "tokenizer.ggml.scores":
            value = value + [0.0] * len(recipe["tokens"])
        elif name == "tokenizer.ggml.token_type":
            value = value + [CONTROL] * len(recipe["tokens"])
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, value, vtype, sub_type=sub)
    for k, v in recipe["keys"].items():
        writer.add_uint32(k, v)
    for k, v in recipe["bools"].items():
        writer.add_bool(k, v)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def token_texts(path):
    r = gguf.GGUFReader(path)
    return r.fields["tokenizer.ggml.tokens"].contents()


def prompts_for(path, family):
    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    fim = {
        "pre": llama_cpp.llama_vocab_fim_pre(vocab),
        "suf": llama_cpp.llama_vocab_fim_suf(vocab),
        "mid": llama_cpp.llama_vocab_fim_mid(vocab),
    }
    add_bos = bool(llama_cpp.llama_vocab_get_add_bos(vocab))
    bos = llm.token_bos()

    def tok(text):
        return llm.tokenize(text.encode("utf-8"), add_bos=False, special=False) if text else []

    cases = []
    for name, prefix, suffix in CASES:
        ids = ([bos] if add_bos else []) + [fim["pre"]] + tok(prefix) + [fim["suf"]] + tok(suffix) + [fim["mid"]]
        cases.append({"name": name, "prefix": prefix, "suffix": suffix, "prompt_tokens": ids})
    texts = token_texts(path)
    index = {t: i for i, t in reversed(list(enumerate(texts)))}
    ends = []
    for t in FAMILY_ENDS[family]:
        if t in index:
            ends.append({"text": t, "id": index[t], "llamacpp_is_eog": bool(llama_cpp.llama_vocab_is_eog(vocab, index[t]))})
    return {"family": family, "add_bos": add_bos, "fim": fim, "family_end_tokens": ends, "cases": cases}


def main():
    out = {
        "llama_cpp_python": llama_cpp.__version__,
        "layout": "[BOS if add_bos] FIM_PRE tok(prefix) FIM_SUF tok(suffix) FIM_MID; tok = tokenize(text, add_special=False, parse_special=False)",
        "vocabs": {},
    }
    spm = os.path.join(FIXTURES, "ggml-vocab-llama-spm.gguf")
    with tempfile.TemporaryDirectory() as tmp:
        sources = {
            "starcoder": (os.path.join(FIXTURES, "ggml-vocab-starcoder.gguf"), "starcoder"),
            "deepseek-coder": (os.path.join(FIXTURES, "ggml-vocab-deepseek-coder.gguf"), "deepseek"),
        }
        for fam, recipe in DERIVED.items():
            dst = os.path.join(tmp, f"{fam}-derived.gguf")
            derive_vocab(spm, dst, recipe)
            sources[f"llama-spm+{fam}"] = (dst, fam)
        model = os.environ.get("HEARTH_DEFAULT_MODEL", "")
        if model and os.path.exists(model):
            sources["default-model"] = (model, "qwen")
        else:
            print("HEARTH_DEFAULT_MODEL not set: no Qwen cases", file=sys.stderr)
        for name, (path, fam) in sources.items():
            out["vocabs"][name] = prompts_for(path, fam)
            print(f"{name}: {len(out['vocabs'][name]['cases'])} cases", file=sys.stderr)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
