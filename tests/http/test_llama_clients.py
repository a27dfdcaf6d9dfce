"""llama.vim's and llama.vscode's requests, body for body as the plugins send them (their field
names and values read from autoload/llama.vim and src/llama-server.ts, src/completion.ts), against
`hearth daemon --http` on the default model; and the fields that size something, with the values
llama-server answers without failing.
  - llama.vim: its ring warm-up (n_predict 0, t_max_prompt_ms 1, response_fields [""]) then its
    FIM request: the ring's rows are in the slot, the FIM evaluates only what is near the cursor,
    and response_fields gives the flat "timings/..." keys its info line reads; its instruct
    warm-up (n_predict 0 on /v1/chat/completions) answers without generating.
  - llama.vscode: a file's first request carrying a full ring (16 chunks) answers as fast as one
    without; n_cmpl 3 answers an array of candidates, each with generation_settings; its warm-up.
  - n_predict -1 and max_tokens past the context stop at the context (the tiny model, 2048
    positions); 10,000 input_extra entries are dropped oldest first and the request answered;
    a 3 MiB single-line prefix is cut to the text nearest the cursor; n_probs, logprobs and
    top_logprobs are refused naming the field; seed 1.5 gets one answer on every endpoint.
Usage: test_llama_clients.py HEARTH_BINARY   (the model: $HEARTH_DEFAULT_MODEL, else the cache's default)
"""
import glob
import json
import os
import sys
import time
import unittest
import urllib.error

from test_http_api import MODEL, daemon, post

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = os.path.join(REPO, "tests", "fixtures", "models", "stories260K-F32.gguf")
VIM_FIELDS = ["content", "timings/prompt_n", "timings/prompt_ms", "timings/prompt_per_token_ms",
              "timings/prompt_per_second", "timings/predicted_n", "timings/predicted_ms",
              "timings/predicted_per_token_ms", "timings/predicted_per_second", "truncated", "tokens_cached"]


def ring(n, lines=32, vscode=False):
    """n chunks of `lines` lines of the repository's C++ sources, as the plugins' rings hold them:
    {text, time, filename}, oldest first (llama.vim's time is reltime()'s list, llama.vscode's a number)."""
    chunks = []
    for path in sorted(glob.glob(os.path.join(REPO, "inference", "**", "*.cpp"), recursive=True)):
        with open(path) as f:
            text = f.read().split("\n")
        for i in range(0, len(text) - lines, lines * 3):
            chunks.append({"text": "\n".join(text[i:i + lines]) + "\n",
                           "time": 1733400000000 + len(chunks) if vscode else [1733400000, len(chunks)],
                           "filename": os.path.join(REPO, path) if vscode else os.path.relpath(path, REPO)})
            if len(chunks) == n:
                return chunks
    raise RuntimeError("not enough source for the ring")


PREFIX = "import math\n\n\nclass Circle:\n    def __init__(self, r):\n        self.r = r\n\n    def area(self):\n"
SUFFIX = "\n\n    def perimeter(self):\n        return 2 * math.pi * self.r\n"


def vim_fim(extra, line="        return "):
    """llama.vim's llama#fim() body."""
    return {"id_slot": 0, "input_prefix": PREFIX, "input_suffix": SUFFIX, "input_extra": extra, "prompt": line,
            "n_predict": 128, "stop": [], "n_indent": 8, "top_k": 40, "top_p": 0.90,
            "samplers": ["top_k", "top_p", "infill"], "stream": False, "cache_prompt": True,
            "t_max_prompt_ms": 500, "t_max_predict_ms": 1000, "response_fields": VIM_FIELDS, "model": ""}


def vim_warm_up(extra):
    """llama.vim's s:ring_update() body."""
    return {"id_slot": 0, "input_prefix": "", "input_suffix": "", "input_extra": extra, "prompt": "",
            "n_predict": 0, "temperature": 0.0, "samplers": [], "stream": False, "cache_prompt": True,
            "t_max_prompt_ms": 1, "t_max_predict_ms": 1, "response_fields": [""], "model": ""}


def vscode_fim(extra, prefix=PREFIX, line="        return ", suffix=SUFFIX):
    """llama.vscode's createRequestPayload(false, ...) body."""
    return {"id_slot": 0, "input_prefix": prefix, "input_suffix": suffix, "input_extra": extra, "prompt": line,
            "n_predict": 128, "n_cmpl": 3, "top_k": 40, "top_p": 0.99, "stream": False,
            "samplers": ["top_k", "top_p", "infill"], "cache_prompt": True, "n_indent": 8,
            "t_max_prompt_ms": 500, "t_max_predict_ms": 500}


def vscode_warm_up(extra):
    """llama.vscode's createRequestPayload(true, "", "", chunks, "") body."""
    return {"id_slot": 0, "input_prefix": "", "input_suffix": "", "input_extra": extra, "prompt": "",
            "n_predict": 0, "samplers": [], "cache_prompt": True, "t_max_prompt_ms": 500, "t_max_predict_ms": 1}


def answer(d, path, body, timeout=300):
    status, _, text = post(d, path, body, timeout=timeout)
    assert status == 200, (status, text)
    return json.loads(text)


def refusal(d, path, body):
    try:
        post(d, path, body)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())["error"]["message"]
    raise AssertionError(f"{path} accepted {body}")


class daemon_case(unittest.TestCase):
    """A daemon of its own per class (the slots' state is part of what is checked)."""
    model = None

    @classmethod
    def setUpClass(cls):
        cls.d = daemon(model=cls.model)

    @classmethod
    def tearDownClass(cls):
        cls.d.stop()


class llama_vim_test(daemon_case):
    def test_warm_up_then_fim_reuses_the_ring(self):
        # The daemon has answered before (its prompt speed is known), as it has in use.
        answer(self.d, "/infill", dict(vim_fim([]), id_slot=5))
        extra = ring(4)
        n_extra = len(answer(self.d, "/tokenize", {"content": "".join(c["text"] for c in extra)})["tokens"])
        t0 = time.monotonic()
        self.assertEqual(answer(self.d, "/infill", vim_warm_up(extra)), {})   # response_fields [""]
        self.assertLess(time.monotonic() - t0, 2.0)   # answered at once; the ring is evaluated after
        r = answer(self.d, "/infill", vim_fim(extra))
        # The flat keys llama.vim's info line reads, and nothing else.
        self.assertEqual(set(r), set(VIM_FIELDS), r)
        self.assertTrue(r["content"].strip(), r)
        # The ring is in the prompt and came from the slot: only the window was evaluated.
        self.assertFalse(r["truncated"], r)
        self.assertGreaterEqual(r["tokens_cached"], n_extra, r)
        self.assertLess(r["timings/prompt_n"], 120, r)

    def test_instruct_warm_up_generates_nothing(self):
        body = {"id_slot": 3, "messages": [{"role": "system", "content": "You are a code-editing assistant.\n--- CONTEXT ---\n"},
                                           {"role": "user", "content": "INSTRUCTION: "}],
                "samplers": [], "n_predict": 0, "stream": False, "cache_prompt": True, "response_fields": [""], "model": ""}
        r = answer(self.d, "/v1/chat/completions", body)
        self.assertEqual(r["choices"][0]["message"]["content"], "")
        self.assertLessEqual(r["usage"]["completion_tokens"], 1)


class llama_vscode_test(daemon_case):
    def test_first_request_with_a_full_ring_answers_as_fast_as_without(self):
        # A fresh daemon; the first request of a file carries llama.vscode's full ring (16 chunks).
        t0 = time.monotonic()
        with_ring = answer(self.d, "/infill", dict(vscode_fim(ring(16, vscode=True)), n_cmpl=1, id_slot=1))
        t_ring = time.monotonic() - t0
        t0 = time.monotonic()
        answer(self.d, "/infill", dict(vscode_fim([], prefix="import os\n\n" + PREFIX), n_cmpl=1, id_slot=2))
        t_plain = time.monotonic() - t0
        self.assertTrue(with_ring["content"].strip(), with_ring)
        self.assertTrue(with_ring["truncated"], with_ring)   # chunks whose rows were not cached stayed out
        self.assertGreater(with_ring["timings"]["extra_dropped"], 0, with_ring)
        self.assertLess(t_ring, 2 * t_plain + 1.0, f"with the ring {t_ring:.2f} s, without {t_plain:.2f} s")

    def test_n_cmpl_answers_an_array(self):
        r = answer(self.d, "/infill", vscode_fim(ring(2, vscode=True)))
        self.assertIsInstance(r, list)
        self.assertGreaterEqual(len(r), 1)
        self.assertLessEqual(len(r), 3)
        for i, c in enumerate(r):
            self.assertEqual(c["index"], i)
            self.assertIsInstance(c["content"], str)
            self.assertIn("n_ctx", c["generation_settings"])   # llama.vscode's status line reads it
        self.assertTrue(r[0]["content"].strip(), r)
        one = answer(self.d, "/infill", dict(vscode_fim([]), n_cmpl=1))
        self.assertIsInstance(one, dict)
        code, why = refusal(self.d, "/infill", dict(vscode_fim([]), n_cmpl=9))
        self.assertEqual((code, why), (400, "n_cmpl: expected 1..8, got 9"))

    def test_warm_up(self):
        r = answer(self.d, "/infill", vscode_warm_up(ring(2, vscode=True)))
        self.assertEqual(r["content"], "")
        self.assertFalse(r["truncated"], r)


class fields_test(daemon_case):
    def test_extras_that_do_not_fit_are_dropped_oldest_first(self):
        extra = [{"text": f"int value_{i} = {i};\n", "filename": f"v{i}.c"} for i in range(10000)]
        r = answer(self.d, "/infill", {"input_prefix": "int main(void) {\n", "prompt": "    return ", "input_suffix": "\n}\n",
                                       "input_extra": extra, "n_predict": 8, "id_slot": 7})
        self.assertTrue(r["truncated"], r)
        self.assertGreater(r["timings"]["extra_dropped"], 9000, r)

    def test_a_long_line_is_cut_nearest_the_cursor(self):
        line = "x = [" + ", ".join(str(i % 97) for i in range(700000))   # about 3 MiB, one line
        r = answer(self.d, "/infill", {"input_prefix": "", "prompt": line + ", ", "input_suffix": "]\n", "n_predict": 4,
                                       "id_slot": 8})
        self.assertGreater(r["tokens_evaluated"], 1000, r)   # the line's end, not 4 tokens of nothing

    def test_per_token_probabilities_are_refused_by_name(self):
        fim = {"input_prefix": "def f():\n", "prompt": "    return ", "input_suffix": "\n", "n_predict": 4}
        self.assertEqual(refusal(self.d, "/infill", dict(fim, n_probs=5)),
                         (400, "n_probs: per-token probabilities are not supported"))
        self.assertEqual(refusal(self.d, "/v1/completions", {"prompt": "def f():", "max_tokens": 4, "logprobs": 2}),
                         (400, "logprobs: per-token probabilities are not supported"))
        chat = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
        self.assertEqual(refusal(self.d, "/v1/chat/completions", dict(chat, logprobs=True, top_logprobs=2))[0], 400)

    def test_one_value_one_answer_on_every_endpoint(self):
        bodies = {"/infill": {"input_prefix": "def f():\n", "prompt": "    return ", "input_suffix": "\n", "n_predict": 4},
                  "/completion": {"prompt": "def f():", "n_predict": 4},
                  "/v1/completions": {"prompt": "def f():", "max_tokens": 4},
                  "/v1/chat/completions": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}}
        for field, value, message in (("seed", 1.5, "seed: expected an integer"),
                                      ("top_k", "7", "top_k: expected an integer"),
                                      ("id_slot", -2, "id_slot: expected -1..1048576, got -2"),
                                      ("n_keep", -2, "n_keep: expected -1..2147483647, got -2")):
            for path, body in bodies.items():
                with self.subTest(field=field, path=path):
                    self.assertEqual(refusal(self.d, path, dict(body, **{field: value})), (400, message))


class context_test(daemon_case):
    """The tiny model (2048 positions): counts past the context stop there, as llama-server's do."""

    model = TINY

    def test_n_predict_past_the_context_stops_there(self):
        for path, body in (("/completion", {"prompt": "Once upon a time", "n_predict": -1}),
                           ("/completion", {"prompt": "Once upon a time", "n_predict": 100000}),
                           ("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 4096})):
            with self.subTest(path=path, body=body):
                r = answer(self.d, path, body)
                t = r["timings"]
                # The tiny model's context is 2048 positions; a story of 2043 tokens ends where it does.
                self.assertEqual(t["prompt_n"] + t["cache_n"] + t["predicted_n"], 2048, {k: v for k, v in r.items() if k != "content"})
                if path == "/completion":
                    self.assertEqual((r["stop_type"], r["truncated"]), ("limit", True))
                else:
                    self.assertEqual(r["choices"][0]["finish_reason"], "length")


if __name__ == "__main__":
    if not os.path.exists(MODEL):
        print(f"http_llama_clients: skipped: no model at {MODEL} (scripts/fetch-model; scripts/test sets HEARTH_DEFAULT_MODEL)")
        sys.exit(77)
    sys.argv = sys.argv[:1]
    unittest.main(verbosity=2)
