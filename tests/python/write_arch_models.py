#!/usr/bin/env python3
"""Writes small models of each architecture with the `gguf` package, for the forward-pass tests
against llama.cpp (tests/golden/arch/).

usage: write_arch_models.py OUT_DIR [--print-sums]

For each architecture ARCH below it writes OUT_DIR/ARCH-F32.gguf and OUT_DIR/ARCH-F16.gguf:
random weights (fixed seeds, so a rerun writes the same bytes) in the tensor names, shapes and
types llama.cpp's GGUF conversion writes, with the real hyperparameter keys, a few layers, and
the 512-token vocabulary of the stories260K fixture (the tests feed token ids, so any
vocabulary llama.cpp loads will do). Matrices are F32 or F16 by the file's name; norms stay F32,
as the converter keeps them. With --print-sums it prints "sha256  name" per file, so a caller
can check that the files are the ones the goldens were made from.

The shapes exercise what each architecture adds: a Q width other than n_embd (qwen3), grouped
KV heads, tied output, LayerNorm and biases everywhere with an untied output (starcoder2), and
for gemma3 a sliding window of 4 positions on every other layer
(attention.sliding_window_pattern = 2) with its own RoPE base, so prompts of a dozen tokens
cross it. phi3 has Q, K and V fused in attn_qkv and gate and up in ffn_up, as its converter
writes them (with a sliding_window key llama.cpp ignores for phi3); phi3-longrope adds the
128k models' long and short RoPE factors, their attn_factor and a partial rotation (48 of 64
dims). granite has its four multipliers. qwen3moe is qwen3 with 8 SwiGLU experts of width
128, 2 picked per token by a router (ffn_gate_inp, kept F32 as the converter keeps it). The llama family as users meet it: mistral (a
llama.attention.sliding_window of 4, which llama.cpp does not apply to arch llama), codellama
(RoPE base 1e6), llama3 (rope_freqs.weight frequency factors, base 500000) and deepseek-coder
(v1: the deepseek-coder vocabulary of tests/fixtures/tokenizer, whose pre-tokenizer is
deepseek-coder, and its linear RoPE scaling by 4). Rows are 256 wide so llama.cpp's quantizer
can make K-quants of the same model (deepseek-coder's are 64: its 32,256-token vocabulary
would make 256 too big to write at test time).

It also writes OUT_DIR/deepseek-r1-chat.gguf, a one-layer qwen2 model whose vocabulary has the
DeepSeek-R1 distills' turn tokens and whose chat template has their markers, for the chat
format tests.
"""
import hashlib
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT

HERE = Path(__file__).resolve().parent
VOCAB_FROM = HERE.parent / "fixtures" / "models" / "stories260K-F32.gguf"
DEEPSEEK_CODER_VOCAB = HERE.parent / "fixtures" / "tokenizer" / "ggml-vocab-deepseek-coder.gguf"

ARCHS = {
    "qwen3": dict(n_layer=2, n_embd=256, n_head=4, n_head_kv=2, head_dim=128, n_ff=512,
                  rope_base=1e6, eps=1e-6, tied=True, seed=3),
    "starcoder2": dict(n_layer=2, n_embd=256, n_head=4, n_head_kv=2, head_dim=64, n_ff=512,
                       rope_base=1e5, eps=1e-5, tied=False, seed=7, layer_norm=True),
    "gemma3": dict(n_layer=3, n_embd=256, n_head=4, n_head_kv=1, head_dim=64, n_ff=512,
                   rope_base=1e6, rope_base_swa=20000.0, eps=1e-6, tied=True, seed=5,
                   sliding_window=4, sliding_window_pattern=2),
    "phi3": dict(n_layer=2, n_embd=256, n_head=4, n_head_kv=2, head_dim=64, n_ff=512,
                 rope_base=1e4, eps=1e-5, tied=False, seed=13, fused=True, phi3_window=2047),
    "phi3-longrope": dict(arch="phi3", n_layer=2, n_embd=256, n_head=4, n_head_kv=4, head_dim=64, n_ff=512,
                          rope_base=1e4, eps=1e-5, tied=False, seed=41, fused=True, phi3_window=0,
                          rope_dims=48, orig_ctx=128, longrope=True),
    "granite": dict(n_layer=2, n_embd=256, n_head=4, n_head_kv=2, head_dim=64, n_ff=512,
                    rope_base=1e4, eps=1e-5, tied=True, seed=19,
                    granite=dict(embedding_scale=12.0, residual_scale=0.22, attention_scale=0.1, logit_scale=2.0)),
    "qwen3moe": dict(n_layer=2, n_embd=256, n_head=4, n_head_kv=2, head_dim=64, n_ff=512,
                     rope_base=1e6, eps=1e-6, tied=True, seed=43, n_expert=8, n_expert_used=2, n_ff_exp=128),
    "mistral": dict(arch="llama", n_layer=2, n_embd=256, n_head=4, n_head_kv=1, head_dim=64, n_ff=512,
                    rope_base=1e6, eps=1e-5, tied=False, seed=23, llama_window=4),
    "codellama": dict(arch="llama", n_layer=2, n_embd=256, n_head=4, n_head_kv=4, head_dim=64, n_ff=512,
                      rope_base=1e6, eps=1e-5, tied=False, seed=29),
    "llama3": dict(arch="llama", n_layer=2, n_embd=256, n_head=4, n_head_kv=2, head_dim=64, n_ff=512,
                   rope_base=5e5, eps=1e-5, tied=True, seed=31, rope_freqs=True),
    "deepseek-coder": dict(arch="llama", n_layer=2, n_embd=64, n_head=4, n_head_kv=4, head_dim=16, n_ff=128,
                           rope_base=1e5, eps=1e-6, tied=True, seed=37, vocab=DEEPSEEK_CODER_VOCAB,
                           rope_linear=4.0),
}


def copy_tokenizer(w: gguf.GGUFWriter, path: Path):
    """Every tokenizer.* key of the GGUF file at `path`, as it is there; returns the vocabulary size."""
    r = gguf.GGUFReader(str(path))
    for key, f in r.fields.items():
        if key.startswith("tokenizer."):
            vtype = f.types[0]
            w.add_key_value(key, f.contents(), vtype, f.types[1] if vtype == gguf.GGUFValueType.ARRAY else None)
    return len(r.fields["tokenizer.ggml.tokens"].data)


def copy_vocab(w: gguf.GGUFWriter, extra_control=(), bos=None, eos=None):
    """The stories260K vocabulary, with `extra_control` appended as control tokens; bos/eos
    name one of them to replace the vocabulary's own."""
    r = gguf.GGUFReader(str(VOCAB_FROM))
    f = r.fields
    tokens = [str(bytes(f["tokenizer.ggml.tokens"].parts[i]), "utf-8") for i in f["tokenizer.ggml.tokens"].data]
    scores = [float(f["tokenizer.ggml.scores"].parts[i][0]) for i in f["tokenizer.ggml.scores"].data]
    types = [int(f["tokenizer.ggml.token_type"].parts[i][0]) for i in f["tokenizer.ggml.token_type"].data]
    tokens += list(extra_control)
    scores += [0.0] * len(extra_control)
    types += [int(gguf.TokenType.CONTROL)] * len(extra_control)
    w.add_tokenizer_model(str(bytes(f["tokenizer.ggml.model"].parts[-1]), "utf-8"))
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(int(f["tokenizer.ggml.unknown_token_id"].parts[-1][0]))
    w.add_bos_token_id(tokens.index(bos) if bos else int(f["tokenizer.ggml.bos_token_id"].parts[-1][0]))
    w.add_eos_token_id(tokens.index(eos) if eos else int(f["tokenizer.ggml.eos_token_id"].parts[-1][0]))
    return len(tokens)


# A DeepSeek-R1-distill-style chat model: the R1 distills' turn tokens (fullwidth bars, U+2581)
# as control tokens, and a chat template with their markers (written here, not copied: the
# engine only recognises markers, it never runs a template).
R1_TOKENS = ["<\uff5cbegin\u2581of\u2581sentence\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>",
             "<\uff5cUser\uff5c>", "<\uff5cAssistant\uff5c>", "<think>", "</think>"]
R1_TEMPLATE = ("{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}{{ '<\uff5cUser\uff5c>' + m['content'] }}"
               "{% elif m['role'] == 'assistant' %}{{ '<\uff5cAssistant\uff5c>' + m['content'].split('</think>')[-1]"
               " + '<\uff5cend\u2581of\u2581sentence\uff5c>' }}{% endif %}{% endfor %}"
               "{% if add_generation_prompt %}{{ '<\uff5cAssistant\uff5c><think>\\n' }}{% endif %}")


def write_r1_chat_model(path: Path):
    rng = np.random.default_rng(11)
    w = gguf.GGUFWriter(str(path), "qwen2")
    w.add_name("tiny deepseek-r1-style chat model")
    n_vocab = copy_vocab(w, R1_TOKENS, bos=R1_TOKENS[0], eos=R1_TOKENS[1])
    w.add_add_bos_token(True)
    w.add_chat_template(R1_TEMPLATE)
    E, H, F = 64, 4, 128
    for add, v in ((w.add_context_length, 256), (w.add_embedding_length, E), (w.add_block_count, 1),
                   (w.add_feed_forward_length, F), (w.add_head_count, H), (w.add_head_count_kv, H)):
        add(v)
    w.add_rope_freq_base(1e6)
    w.add_layer_norm_rms_eps(1e-6)

    def t(name, *shape):
        w.add_tensor(name, (rng.standard_normal(shape) * (0.25 if len(shape) == 2 else 0.1)).astype(np.float32))

    t("token_embd.weight", n_vocab, E)
    w.add_tensor("output_norm.weight", np.ones(E, dtype=np.float32))
    p = "blk.0."
    w.add_tensor(p + "attn_norm.weight", np.ones(E, dtype=np.float32))
    w.add_tensor(p + "ffn_norm.weight", np.ones(E, dtype=np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        t(p + name + ".weight", E, E)
    for name in ("attn_q", "attn_k", "attn_v"):
        t(p + name + ".bias", E)
    t(p + "ffn_gate.weight", F, E)
    t(p + "ffn_up.weight", F, E)
    t(p + "ffn_down.weight", E, F)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_model(path: Path, arch: str, cfg: dict, matrix_type: QT):
    rng = np.random.default_rng(cfg["seed"])
    name, arch = arch, cfg.get("arch", arch)
    w = gguf.GGUFWriter(str(path), arch)
    # llama.cpp gives the vocabulary of a model named phi3 or phi-3 Phi-3's token attributes,
    # which need tokens the stories260K vocabulary lacks: these names avoid that.
    w.add_name(f"tiny {name}" if arch != "phi3" else f"tiny {name.replace('phi3', 'fused-projection')}")
    n_vocab = copy_tokenizer(w, cfg["vocab"]) if "vocab" in cfg else copy_vocab(w)
    E, H, KV, D, F = cfg["n_embd"], cfg["n_head"], cfg["n_head_kv"], cfg["head_dim"], cfg["n_ff"]
    w.add_context_length(256)
    w.add_embedding_length(E)
    w.add_block_count(cfg["n_layer"])
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    if arch == "phi3":   # its converter writes the RoPE dims, the original context and a window, no head dims
        w.add_rope_dimension_count(cfg.get("rope_dims", D))
        w.add_rope_scaling_orig_ctx_len(cfg.get("orig_ctx", 256))
        w.add_sliding_window(cfg["phi3_window"])
    else:
        w.add_key_length(D)
        w.add_value_length(D)
    if "n_expert" in cfg:
        w.add_expert_count(cfg["n_expert"])
        w.add_expert_used_count(cfg["n_expert_used"])
        w.add_expert_feed_forward_length(cfg["n_ff_exp"])
    if "llama_window" in cfg:   # as Mistral's converted files carry it
        w.add_sliding_window(cfg["llama_window"])
    if "rope_linear" in cfg:
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(cfg["rope_linear"])
    if "granite" in cfg:
        g = cfg["granite"]
        w.add_embedding_scale(g["embedding_scale"])
        w.add_residual_scale(g["residual_scale"])
        w.add_attention_scale(g["attention_scale"])
        w.add_logit_scale(g["logit_scale"])
    w.add_rope_freq_base(cfg["rope_base"])
    if cfg.get("layer_norm"):
        w.add_layer_norm_eps(cfg["eps"])
    else:
        w.add_layer_norm_rms_eps(cfg["eps"])
    if "sliding_window" in cfg:
        w.add_sliding_window(cfg["sliding_window"])
        w.add_uint32(f"{arch}.attention.sliding_window_pattern", cfg["sliding_window_pattern"])
        w.add_float32(f"{arch}.rope.freq_base_swa", cfg["rope_base_swa"])
    w.add_file_type(gguf.LlamaFileType.ALL_F32 if matrix_type == QT.F32 else gguf.LlamaFileType.MOSTLY_F16)

    np_type = np.float32 if matrix_type == QT.F32 else np.float16

    def matrix(name, n_out, n_in, scale=None):
        # numpy shape (rows, cols) = GGUF ne (cols, rows): n_out rows of n_in inputs
        s = scale if scale is not None else 1.0 / np.sqrt(n_in)
        w.add_tensor(name, (rng.standard_normal((n_out, n_in)) * s).astype(np.float32).astype(np_type))

    def norm(name, n):
        # gemma's converter stores 1 + w; either way the values sit near 1. LayerNorm has a bias too.
        w.add_tensor(name, (1.0 + 0.2 * rng.standard_normal(n)).astype(np.float32))
        if cfg.get("layer_norm"):
            bias(name.replace(".weight", ".bias"), n)

    def bias(name, n):
        w.add_tensor(name, (0.1 * rng.standard_normal(n)).astype(np.float32))

    # Embeddings of std 0.25: the tied output's logits then spread over several units, so
    # greedy choices are not near-ties.
    def factors(name, n, lo, hi):
        # RoPE frequency factors, one per rotated pair, rising like the real ones (1 .. tens)
        w.add_tensor(name, np.geomspace(lo, hi, n).astype(np.float32))

    matrix("token_embd.weight", n_vocab, E, scale=0.25)
    norm("output_norm.weight", E)
    if not cfg["tied"]:
        matrix("output.weight", n_vocab, E, scale=0.25)
    if cfg.get("rope_freqs"):
        factors("rope_freqs.weight", D // 2, 1.0, 32.0)
    if cfg.get("longrope"):
        n_pairs = cfg["rope_dims"] // 2
        factors("rope_factors_long.weight", n_pairs, 1.0, 40.0)
        factors("rope_factors_short.weight", n_pairs, 1.0, 1.5)
        # the converter's longrope attn_factor: sqrt(1 + log(scale) / log(orig_ctx))
        w.add_rope_scaling_attn_factors(float(np.sqrt(1 + np.log(256 / cfg["orig_ctx"]) / np.log(cfg["orig_ctx"]))))
    for il in range(cfg["n_layer"]):
        p = f"blk.{il}."
        norm(p + "attn_norm.weight", E)
        if cfg.get("fused"):   # rows: Q, then K, then V
            matrix(p + "attn_qkv.weight", (H + 2 * KV) * D, E)
        else:
            matrix(p + "attn_q.weight", H * D, E)
            matrix(p + "attn_k.weight", KV * D, E)
            matrix(p + "attn_v.weight", KV * D, E)
        matrix(p + "attn_output.weight", E, H * D)
        if arch == "starcoder2":
            for name, n in (("attn_q", H * D), ("attn_k", KV * D), ("attn_v", KV * D), ("attn_output", E)):
                bias(p + name + ".bias", n)
        elif arch in ("qwen3", "gemma3", "qwen3moe"):
            norm(p + "attn_q_norm.weight", D)
            norm(p + "attn_k_norm.weight", D)
        if arch == "gemma3":
            norm(p + "post_attention_norm.weight", E)
            norm(p + "post_ffw_norm.weight", E)
        norm(p + "ffn_norm.weight", E)
        if arch == "starcoder2":   # a GELU MLP without a gate, with biases
            matrix(p + "ffn_up.weight", F, E)
            bias(p + "ffn_up.bias", F)
            matrix(p + "ffn_down.weight", E, F)
            bias(p + "ffn_down.bias", E)
        elif "n_expert" in cfg:   # the router, then each expert's gate, up and down stacked
            X, FX = cfg["n_expert"], cfg["n_ff_exp"]
            w.add_tensor(p + "ffn_gate_inp.weight", (rng.standard_normal((X, E)) / np.sqrt(E)).astype(np.float32))
            for name, rows, cols in (("ffn_gate_exps", FX, E), ("ffn_up_exps", FX, E), ("ffn_down_exps", E, FX)):
                w.add_tensor(p + name + ".weight", (rng.standard_normal((X, rows, cols)) / np.sqrt(cols))
                             .astype(np.float32).astype(np_type))
        elif cfg.get("fused"):   # gate rows, then up rows
            matrix(p + "ffn_up.weight", 2 * F, E)
            matrix(p + "ffn_down.weight", E, F)
        else:
            matrix(p + "ffn_gate.weight", F, E)
            matrix(p + "ffn_up.weight", F, E)
            matrix(p + "ffn_down.weight", E, F)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_r1_chat_model(out / "deepseek-r1-chat.gguf")
    for arch, cfg in ARCHS.items():
        for tname, qt in (("F32", QT.F32), ("F16", QT.F16)):
            path = out / f"{arch}-{tname}.gguf"
            write_model(path, arch, cfg, qt)
            if "--print-sums" in sys.argv[2:]:
                print(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}")


if __name__ == "__main__":
    main()
