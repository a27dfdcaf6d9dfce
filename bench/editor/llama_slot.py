#!/usr/bin/env python3
"""One llama-server slot answering /infill, over llama-cpp-python's low-level API: the llama.cpp
side of `hearth bench editor`. Runs inside .venv-llamacpp as a child of run_editor.py:

  llama_slot.py SPEC_JSON     (stdin: one /infill request body per line; stdout: JSON lines)

What it keeps of llama-server (tools/server, as configured by llama.vim's README for a CPU:
`-ub 1024 -b 1024 --ctx-size 0 --cache-reuse 256`):
- the prompt of format_prompt_infill(): [<|repo_name|>myproject\\n] [<|file_sep|>FILENAME\\n chunk]...
  <|file_sep|>filename\\n, then <|fim_prefix|> the last 3/4*n_batch tokens of input_prefix, the
  tokens of `prompt`, <|fim_suffix|> the first n_batch/4 - 2 - len(prompt) tokens of input_suffix,
  <|fim_middle|>; the extra chunks' last n_extra_take = n_ctx - n_batch - 2*n_predict tokens;
- one slot with `cache_prompt`: the longest common token prefix of the previous evaluation is
  kept, then `--cache-reuse 256` shifts later runs of at least 256 matching tokens into place
  (llama_memory_seq_rm/seq_add, as update_slots does); the rest is evaluated in batches of n_batch;
  a warm-up (n_predict 0) evaluates the prompt and generates nothing;
- the stop rules of process_token(): n_predict; n_indent (a new line indented less than the
  cursor's line is cut and ends the answer); t_max_predict_ms (past it, the next newline ends
  the answer); an end-of-generation token;
- requests served one at a time in arrival order, as one slot does.
What it cannot keep: the HTTP server (its parsing, the socket and curl's start cost a few ms
per request); llama.vim's sampler chain (top_k 40, top_p 0.9, the infill sampler): here greedy,
as hearth; the context size is the model's training context capped at 8192 (the prompt of this
scenario is far shorter, so nothing is cut that llama-server would keep); cancelling a task:
llama.vim never cancels a request in flight (a keystroke during one waits for it, see
llama_vim.py), so none is needed — llama-server would stop one between batches or tokens.

Each answer: {"id", "content", "prompt_n" (tokens evaluated), "cached" (tokens kept), "predicted_n",
"ms", "prompt_ms" (tokenizing and evaluating the prompt), "predicted_ms"};
while evaluating, {"evaluated": N} after each batch (the total since start), so the client can
count tokens evaluated per answer while a request is still running.
"""
import ctypes
import json
import sys
import time

N_BATCH = 1024
N_CACHE_REUSE = 256
MAX_CTX = 8192


def cpu_has_amx():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " amx" in line for line in f)
    except OSError:
        return False


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class slot:
    def __init__(self, spec):
        import llama_cpp as L
        self.L = L

        @L.llama_log_callback
        def quiet(level, text, user_data):
            pass
        self._quiet = quiet
        L.llama_log_set(quiet, ctypes.c_void_p(0))
        L.llama_backend_init()
        mparams = L.llama_model_default_params()
        mparams.n_gpu_layers = 0
        # The repacked weight layouts llama-server uses (CPU_REPACK: several times faster prompt
        # evaluation of Q4_K on AVX2), except where the CPU reports AMX: this build's AMX path
        # crashes in the first llama_decode of a Q4_K model (see bench/quality/run_quality.py).
        mparams.use_extra_bufts = not cpu_has_amx()
        self.model = L.llama_model_load_from_file(spec["model"].encode(), mparams)
        if not self.model:
            raise SystemExit(f"llama.cpp could not load {spec['model']}")
        self.vocab = L.llama_model_get_vocab(self.model)
        v = self.vocab
        self.fim_pre, self.fim_suf, self.fim_mid = L.llama_vocab_fim_pre(v), L.llama_vocab_fim_suf(v), L.llama_vocab_fim_mid(v)
        self.fim_rep, self.fim_sep = L.llama_vocab_fim_rep(v), L.llama_vocab_fim_sep(v)
        if min(self.fim_pre, self.fim_suf, self.fim_mid) < 0:
            raise SystemExit(f"{spec['model']} has no fill-in-the-middle tokens")
        self.n_ctx = min(MAX_CTX, L.llama_model_n_ctx_train(self.model))
        cparams = L.llama_context_default_params()
        cparams.n_ctx = self.n_ctx
        cparams.n_batch = N_BATCH
        cparams.n_ubatch = N_BATCH
        cparams.n_threads = spec["threads"]
        cparams.n_threads_batch = spec["threads"]
        self.ctx = L.llama_init_from_model(self.model, cparams)
        self.mem = L.llama_get_memory(self.ctx)
        self.n_vocab = L.llama_vocab_n_tokens(v)
        self.cache = []          # tokens whose K/V the context holds, position i at index i
        self.evaluated = 0       # tokens evaluated since start

    def tokenize(self, text, special=False):
        raw = text.encode()
        buf = (self.L.llama_token * (len(raw) + 16))()
        n = self.L.llama_tokenize(self.vocab, raw, len(raw), buf, len(buf), False, special)
        return list(buf[:n])

    def piece(self, tok):
        buf = ctypes.create_string_buffer(256)
        n = self.L.llama_token_to_piece(self.vocab, tok, buf, len(buf), 0, False)
        return buf.raw[:max(n, 0)]

    def infill_prompt(self, req):
        """format_prompt_infill() for a model with repo-level FIM tokens (Qwen2.5-Coder)."""
        n_predict = req.get("n_predict", -1)
        extra = []
        if self.fim_rep >= 0:
            extra += [self.fim_rep] + self.tokenize("myproject\n")
        for chunk in req.get("input_extra", []):
            if self.fim_sep >= 0:
                extra += [self.fim_sep] + self.tokenize(chunk.get("filename", "tmp") + "\n")
            else:
                extra += self.tokenize("\n\n--- snippet ---\n\n")
            extra += self.tokenize(chunk.get("text", ""))
        if self.fim_sep >= 0:
            extra += [self.fim_sep] + self.tokenize("filename\n")
        prefix = self.tokenize(req.get("input_prefix", ""))
        suffix = self.tokenize(req.get("input_suffix", ""))
        prompt = self.tokenize(req.get("prompt", ""), special=True)
        n_prefix_take = min(len(prefix), 3 * (N_BATCH // 4))
        n_suffix_take = min(len(suffix), max(0, N_BATCH // 4 - (2 + len(prompt))))
        n_extra_take = min(max(0, self.n_ctx - N_BATCH - 2 * n_predict), len(extra))
        out = extra[len(extra) - n_extra_take:]
        out += [self.fim_pre] + prefix[len(prefix) - n_prefix_take:] + prompt
        out += [self.fim_suf] + suffix[:n_suffix_take] + [self.fim_mid]
        return out

    def reuse_cache(self, prompt):
        """cache_prompt and --cache-reuse: how many leading tokens of `prompt` the context holds."""
        L = self.L
        n_past = 0
        while n_past < min(len(self.cache), len(prompt)) and self.cache[n_past] == prompt[n_past]:
            n_past += 1
        head_c = head_p = n_past
        while head_c < len(self.cache) and head_p < len(prompt):
            n = 0
            while head_c + n < len(self.cache) and head_p + n < len(prompt) and self.cache[head_c + n] == prompt[head_p + n]:
                n += 1
            if n >= N_CACHE_REUSE:
                L.llama_memory_seq_rm(self.mem, 0, head_p, head_c)
                L.llama_memory_seq_add(self.mem, 0, head_c, head_c + n, head_p - head_c)
                self.cache[head_p:head_p + n] = self.cache[head_c:head_c + n]
                n_past += n
                head_c += n
                head_p += n
            else:
                head_c += 1
        if n_past == len(prompt) and n_past > 0:
            n_past -= 1          # the last token is evaluated again: its logits start the answer
        L.llama_memory_seq_rm(self.mem, 0, n_past, -1)
        del self.cache[n_past:]
        return n_past

    def decode(self, tokens, progress):
        L = self.L
        for i in range(0, len(tokens), N_BATCH):
            part = tokens[i:i + N_BATCH]
            arr = (L.llama_token * len(part))(*part)
            if L.llama_decode(self.ctx, L.llama_batch_get_one(arr, len(part))) != 0:
                raise SystemExit("llama_decode failed")
            self.cache += part
            self.evaluated += len(part)
            if progress:
                emit({"evaluated": self.evaluated})

    def argmax(self):
        import numpy as np
        logits = self.L.llama_get_logits_ith(self.ctx, -1)
        return int(np.argmax(np.ctypeslib.as_array(logits, shape=(self.n_vocab,))))

    def serve(self, req):
        t0 = time.perf_counter()
        prompt = self.infill_prompt(req)
        n_keep = self.reuse_cache(prompt)
        self.decode(prompt[n_keep:], progress=True)
        t_prompt = time.perf_counter()
        n_predict = req.get("n_predict", -1)
        n_indent = req.get("n_indent", 0)
        t_max_predict_ms = req.get("t_max_predict_ms", 0)
        text, n_decoded, last_nl_pos, has_new_line = "", 0, 0, False
        t_gen = time.perf_counter()
        raw = b""
        while n_predict != 0:
            tok = self.argmax()
            if self.L.llama_vocab_is_eog(self.vocab, tok):
                break
            n_decoded += 1
            raw += self.piece(tok)
            new_text = raw.decode(errors="ignore")
            piece, text = new_text[len(text):], new_text
            stop = 0 < n_predict <= n_decoded
            if has_new_line and n_indent > 0 and last_nl_pos > 0:
                pos = last_nl_pos
                while pos < len(text) and text[pos] in " \t":
                    pos += 1
                if pos < len(text) and pos - last_nl_pos < n_indent:
                    text, stop = text[:pos], True    # the line that leaves the block is cut (its indentation stays)
            if has_new_line and n_indent > 0:
                nl = text.find("\n", last_nl_pos)
                if nl >= 0:
                    last_nl_pos = nl + 1
            if "\n" in piece:
                has_new_line = True
                if t_max_predict_ms > 0 and (time.perf_counter() - t_gen) * 1000 > t_max_predict_ms:
                    stop = True
            if stop:
                break
            self.decode([tok], progress=False)
        t1 = time.perf_counter()
        emit({"id": req["id"], "content": text, "prompt_n": len(prompt) - n_keep, "cached": n_keep,
              "evaluated": self.evaluated, "predicted_n": n_decoded, "ms": (t1 - t0) * 1000,
              "prompt_ms": (t_prompt - t0) * 1000, "predicted_ms": (t1 - t_prompt) * 1000})


def main():
    spec = json.load(open(sys.argv[1]))
    s = slot(spec)
    emit({"ready": True, "n_ctx": s.n_ctx})
    for line in sys.stdin:
        if line.strip():
            s.serve(json.loads(line))


if __name__ == "__main__":
    main()
