"""The daemon's HTTP API (docs/http.md) with real clients, on the default model:
  - the `openai` package against /v1/completions (with suffix: FIM) and /v1/chat/completions,
    streaming and not, and /v1/models;
  - /infill requests shaped as llama.vscode and llama.vim document them (input_prefix,
    input_suffix, input_extra, prompt, n_predict, t_max_predict_ms, cache_prompt, samplers...);
  - /tokenize, /detokenize, /health, /props, /slots, /metrics;
  - curl for each refusal: no token, wrong token, wrong Host, Origin, preflight, oversize body
    and header; raw sockets for the unauthenticated-connection limits.
Usage: test_http_api.py HEARTH_BINARY [-k NAME...]   (the model: $HEARTH_DEFAULT_MODEL, else the cache's default)
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

import openai

HEARTH = sys.argv[1] if len(sys.argv) > 1 else "hearth"
MODEL = os.environ.get("HEARTH_DEFAULT_MODEL") or os.path.expanduser("~/.cache/hearth/models/default.gguf")


class daemon:
    """A `hearth daemon --http 0` in a private runtime directory, stopped on exit."""

    def __init__(self, *extra, model=None):
        self.dir = tempfile.mkdtemp(prefix="hearth-http-")
        os.chmod(self.dir, 0o700)
        self.proc = subprocess.Popen(
            [HEARTH, "daemon", "--model", model or MODEL, "--runtime-dir", self.dir, "--socket", "none", "--http", "0",
             "--log-file", "none", "--slot-dir", "none", "--log-level", "warn", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port_file = os.path.join(self.dir, "hearth.http-port")
        deadline = time.time() + 60
        while not os.path.exists(port_file):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("the daemon did not start: " + (self.proc.stderr.read() if self.proc.poll() is not None else "timeout"))
            time.sleep(0.05)
        with open(port_file) as f:
            self.port = int(f.read())
        token_file = os.path.join(self.dir, "hearth.token")
        self.token = None
        if os.path.exists(token_file):
            with open(token_file) as f:
                self.token = f.read().strip()
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.proc.stderr.close()


def post(d, path, body, token=True, timeout=120):
    req = urllib.request.Request(d.url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    if token:
        req.add_header("Authorization", f"Bearer {d.token}")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.headers, r.read().decode()


def get(d, path):
    req = urllib.request.Request(d.url + path, headers={"Authorization": f"Bearer {d.token}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.status, r.headers, r.read().decode()


def sse_events(body):
    return [line[len("data: "):] for line in body.split("\n") if line.startswith("data: ")]


def curl(d, *args):
    """The status and headers curl saw."""
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-D", "-", "-w", "%{http_code}", *args],
                         capture_output=True, text=True, timeout=60).stdout
    return int(out[-3:]), out[:-3].lower()


# llama.vscode's /infill request (its documented fields): the lines before the cursor line,
# the cursor line up to the cursor as `prompt`, the rest, and chunks of other files.
VSCODE_BODY = {
    "input_prefix": "import math\n\ndef circle_area(r):\n",
    "prompt": "    return ",
    "input_suffix": "\n\nprint(circle_area(2.0))\n",
    "input_extra": [{"text": "def square_area(s):\n    return s * s\n", "time": 1700000000, "filename": "shapes.py"}],
    "n_predict": 24, "n_indent": 4, "top_k": 40, "top_p": 0.99, "samplers": ["top_k", "top_p", "infill"],
    "stream": False, "cache_prompt": True, "t_max_prompt_ms": 2000, "t_max_predict_ms": 3000,
}
# llama.vim's: the same fields, id_slot chosen by the plugin, a stop list; and its ring-buffer
# warm-up request (n_predict 0, only the extra context, to fill the cache).
VIM_BODY = {
    "input_prefix": "#include <stdio.h>\n\nint main(void) {\n",
    "prompt": "    printf(",
    "input_suffix": ");\n    return 0;\n}\n",
    "input_extra": [{"text": "static int twice(int x) { return 2 * x; }\n", "filename": "util.c"}],
    "n_predict": 16, "stop": [], "n_indent": 4, "top_k": 40, "top_p": 0.99, "samplers": ["top_k", "top_p", "infill"],
    "stream": False, "cache_prompt": True, "t_max_prompt_ms": 2000, "t_max_predict_ms": 3000, "id_slot": 1,
}


class http_api_test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = daemon()
        cls.client = openai.OpenAI(base_url=cls.d.url + "/v1", api_key=cls.d.token, max_retries=0, timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.d.stop()

    # --- the openai package ---------------------------------------------------------------
    def test_openai_models(self):
        models = self.client.models.list().data
        self.assertEqual(len(models), 1)
        self.assertTrue(models[0].id)

    def test_openai_completion_fim_and_stream(self):
        args = dict(model="default", prompt="def add(a, b):\n    return", suffix="\n\nprint(add(1, 2))\n", max_tokens=12)
        r = self.client.completions.create(**args)
        text = r.choices[0].text
        self.assertIn("a", text)
        self.assertIn("b", text)
        self.assertIn(r.choices[0].finish_reason, ("stop", "length"))
        self.assertGreater(r.usage.prompt_tokens, 5)
        pieces = list(self.client.completions.create(**args, stream=True))
        self.assertEqual("".join(p.choices[0].text for p in pieces), text)
        self.assertIn(pieces[-1].choices[0].finish_reason, ("stop", "length"))

    def test_openai_completion_stop_words(self):
        r = self.client.completions.create(model="default", prompt="for i in range(10):\n", max_tokens=32, stop=["\n"])
        self.assertNotIn("\n", r.choices[0].text)

    def test_openai_chat_and_stream(self):
        args = dict(model="default", max_tokens=16,
                    messages=[{"role": "system", "content": "Answer with a number only."},
                              {"role": "user", "content": "What is 2 + 3?"}])
        r = self.client.chat.completions.create(**args)
        answer = r.choices[0].message.content
        self.assertTrue(answer.strip())
        self.assertEqual(r.choices[0].message.role, "assistant")
        self.assertIn("5", answer)
        chunks = list(self.client.chat.completions.create(**args, stream=True))
        self.assertEqual("".join(c.choices[0].delta.content or "" for c in chunks), answer)
        self.assertIsNotNone(chunks[-1].choices[0].finish_reason)

    def test_openai_bad_request(self):
        with self.assertRaises(openai.BadRequestError) as e:
            self.client.chat.completions.create(model="default", messages=[{"role": "robot", "content": "x"}])
        self.assertIn("messages[0].role", str(e.exception))
        with self.assertRaises(openai.AuthenticationError):
            openai.OpenAI(base_url=self.d.url + "/v1", api_key="0" * 64, max_retries=0).models.list()

    # --- editor-shaped /infill ------------------------------------------------------------
    def test_llama_vscode_infill(self):
        status, _, body = post(self.d, "/infill", VSCODE_BODY)
        self.assertEqual(status, 200)
        r = json.loads(body)
        self.assertIn("r", r["content"])   # r * r, math.pi * r ** 2 ...
        for k in ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "predicted_per_second"):
            self.assertIn(k, r["timings"])
        self.assertGreater(r["timings"]["prompt_n"] + r["tokens_cached"], 10)
        # The next keystroke, in the same file: its slot already holds the prompt's start.
        typed = dict(VSCODE_BODY, prompt=VSCODE_BODY["prompt"] + "m")
        r2 = json.loads(post(self.d, "/infill", typed)[2])
        self.assertTrue(r2.get("from_memory") or r2["tokens_cached"] > 0, r2)

    def test_llama_vim_infill_and_warmup(self):
        warm = dict(VIM_BODY, input_prefix="", prompt="", input_suffix="", n_predict=0, t_max_prompt_ms=1, t_max_predict_ms=1)
        status, _, body = post(self.d, "/infill", warm)
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["content"], "")
        status, _, body = post(self.d, "/infill", VIM_BODY)
        r = json.loads(body)
        self.assertTrue(r["content"].strip(), r)
        self.assertLessEqual(r["tokens_predicted"], 16)
        slots = json.loads(get(self.d, "/slots")[2])
        self.assertIn("slot-1", [s["filename"] for s in slots])

    def test_infill_stream(self):
        status, headers, body = post(self.d, "/infill", dict(VSCODE_BODY, stream=True, filename="area.py"))
        self.assertEqual(headers["Content-Type"], "text/event-stream")
        events = [json.loads(e) for e in sse_events(body)]
        self.assertTrue(events[-1]["stop"])
        self.assertIn("timings", events[-1])
        self.assertTrue("".join(e["content"] for e in events).strip())

    def test_newer_infill_for_the_same_file_wins(self):
        # Two keystrokes' requests for one file: the older one is answered 409 (superseded),
        # the newer one completes; another file's request is untouched.
        import threading
        results = {}

        def send(name, body):
            try:
                results[name] = post(self.d, "/infill", body)[0]
            except urllib.error.HTTPError as e:
                results[name] = e.code

        long_body = dict(VSCODE_BODY, filename="race.py", n_predict=200, t_max_predict_ms=20000,
                         input_suffix="", prompt="    # a long comment about circles: ")
        first = threading.Thread(target=send, args=("old", long_body))
        first.start()
        time.sleep(0.5)
        send("new", dict(long_body, prompt=long_body["prompt"] + "t", n_predict=4))
        first.join()
        self.assertEqual(results, {"old": 409, "new": 200})

    def test_infill_bad_field(self):
        with self.assertRaises(urllib.error.HTTPError) as e:
            post(self.d, "/infill", dict(VSCODE_BODY, n_predict="many"))
        self.assertEqual(e.exception.code, 400)
        self.assertIn("n_predict: expected an integer", e.exception.read().decode())
        with self.assertRaises(urllib.error.HTTPError) as e:
            post(self.d, "/no/such/endpoint", {})
        self.assertEqual(e.exception.code, 404)

    # --- llama-server's other endpoints ---------------------------------------------------
    def test_tokenize_round_trip(self):
        text = "def main():\n    print('héllo')\n"
        tokens = json.loads(post(self.d, "/tokenize", {"content": text})[2])["tokens"]
        self.assertGreater(len(tokens), 5)
        self.assertEqual(json.loads(post(self.d, "/detokenize", {"tokens": tokens})[2])["content"], text)
        with self.assertRaises(urllib.error.HTTPError) as e:
            post(self.d, "/detokenize", {"tokens": [10 ** 9]})
        self.assertEqual(e.exception.code, 400)

    def test_health_props_metrics(self):
        self.assertEqual(json.loads(get(self.d, "/health")[2])["status"], "ok")
        props = json.loads(get(self.d, "/props")[2])
        self.assertGreater(props["default_generation_settings"]["n_ctx"], 0)
        post(self.d, "/infill", dict(VSCODE_BODY, filename="metrics.py"))
        status, headers, text = get(self.d, "/metrics")
        self.assertTrue(headers["Content-Type"].startswith("text/plain"))
        values = {l.split()[0]: float(l.split()[1]) for l in text.splitlines() if l and not l.startswith("#")}
        self.assertGreater(values["hearth_http_requests_total"], 0)
        self.assertGreater(values["hearth_kv_cache_usage_ratio"], 0)
        self.assertGreater(values["hearth_kv_slots"], 0)

    # --- security, with curl --------------------------------------------------------------
    def test_refusals(self):
        u = self.d.url + "/v1/models"
        auth = ["-H", f"Authorization: Bearer {self.d.token}"]
        self.assertEqual(curl(self.d, u, *auth)[0], 200)
        status, headers = curl(self.d, u)
        self.assertEqual(status, 401)
        self.assertIn("www-authenticate: bearer", headers)
        self.assertEqual(curl(self.d, u, "-H", "Authorization: Bearer " + "f" * 64)[0], 401)
        self.assertEqual(curl(self.d, u, "-H", "Authorization: Basic dXNlcjpwYXNz")[0], 401)
        self.assertEqual(curl(self.d, u, *auth, "-H", "Host: evil.example")[0], 403)
        self.assertEqual(curl(self.d, u, *auth, "-H", f"Host: rebound.example:{self.d.port}")[0], 403)
        self.assertEqual(curl(self.d, u, *auth, "-H", f"Host: [::1]:{self.d.port}")[0], 200)
        status, headers = curl(self.d, u, *auth, "-H", "Origin: http://localhost:3000")
        self.assertEqual(status, 403)
        status, headers = curl(self.d, "-X", "OPTIONS", self.d.url + "/infill", "-H", "Origin: https://evil.example",
                               "-H", "Access-Control-Request-Method: POST")
        self.assertEqual(status, 403)
        self.assertNotIn("access-control-allow", headers)
        with tempfile.NamedTemporaryFile() as big:
            big.write(b"{" + b" " * (5 << 20) + b"}")
            big.flush()
            self.assertEqual(curl(self.d, self.d.url + "/infill", *auth, "--data-binary", "@" + big.name)[0], 413)
        self.assertEqual(curl(self.d, u, *auth, "-H", "X-Padding: " + "a" * 20000)[0], 431)
        # A refusal that names what it refused stays JSON when that is not UTF-8.
        for head in ["GET /health HTTP/1.1\r\nHost: \xffevil\r\n\r\n",
                     f"GET /\xff HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {self.d.token}\r\n\r\n"]:
            data, _ = self.raw_request(head.encode("latin-1"))
            self.assertIn(json.loads(data.split(b"\r\n\r\n", 1)[1])["error"]["code"], (403, 404))

    def raw_request(self, head, body=b"", wait_s=10):
        """Sends a request's header (and body, if given) on a fresh socket; returns what the
        server wrote until it closed or went quiet for wait_s seconds, and how long that took."""
        t0 = time.time()
        with socket.create_connection(("127.0.0.1", self.d.port)) as s:
            s.settimeout(wait_s)
            s.sendall((head if isinstance(head, bytes) else head.encode()) + body)
            data = b""
            try:
                while chunk := s.recv(65536):
                    data += chunk
            except socket.timeout:
                pass
        return data, time.time() - t0

    def test_refused_before_the_body(self):
        # The header decides: a refusal comes straight after it, and the body is never read.
        # These clients send only the header and a Content-Length, and wait.
        auth = f"Authorization: Bearer {self.d.token}\r\n"
        for head, want in [
            ("POST /infill HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3145728\r\n\r\n", b"HTTP/1.1 401"),
            ("POST /infill HTTP/1.1\r\nHost: evil.example\r\n" + auth + "Content-Length: 3145728\r\n\r\n", b"HTTP/1.1 403"),
            ("POST /infill HTTP/1.1\r\nHost: localhost\r\n" + auth + "Content-Length: 5242880\r\n\r\n", b"HTTP/1.1 413"),
            ("POST /no/such HTTP/1.1\r\nHost: localhost\r\n" + auth + "Content-Length: 1000\r\n\r\n", b"HTTP/1.1 404"),
            ("POST /health HTTP/1.1\r\nHost: localhost\r\n" + auth + "Content-Length: 1000\r\n\r\n", b"HTTP/1.1 405"),
            # No token and over the limit: the token is checked first.
            ("POST /infill HTTP/1.1\r\nHost: localhost\r\nContent-Length: 99999999999\r\n\r\n", b"HTTP/1.1 401"),
            ("POST /tokenize HTTP/1.1\r\nHost: localhost\r\n" + auth + "Expect: a-pony\r\nContent-Length: 10\r\n\r\n",
             b"HTTP/1.1 417"),
        ]:
            with self.subTest(head=head):
                data, took = self.raw_request(head)
                self.assertTrue(data.startswith(want), data[:200])
                self.assertLess(took, 1.5)   # well inside auth-timeout-ms (2 s): answered, not timed out

    def test_expect_100_continue(self):
        # A client that waits for `100 Continue` gets it once the header passes, then sends the body.
        body = json.dumps({"content": "x = 1\n" * 400}).encode()
        head = (f"POST /tokenize HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {self.d.token}\r\n"
                f"Expect: 100-continue\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
        with socket.create_connection(("127.0.0.1", self.d.port)) as s:
            s.settimeout(5)
            s.sendall(head.encode())
            self.assertEqual(s.recv(4096), b"HTTP/1.1 100 Continue\r\n\r\n")
            s.sendall(body)
            data = b""
            while chunk := s.recv(65536):   # Connection: close: the answer ends at the close
                data += chunk
        self.assertTrue(data.startswith(b"HTTP/1.1 200"), data[:200])
        self.assertGreater(len(json.loads(data.split(b"\r\n\r\n", 1)[1])["tokens"]), 100)
        # A refused one gets its refusal instead, and never a 100.
        data, _ = self.raw_request(head.replace(f"Authorization: Bearer {self.d.token}\r\n", ""))
        self.assertTrue(data.startswith(b"HTTP/1.1 401"), data[:200])

    def test_curl_expect_100_continue(self):
        # curl sends `Expect: 100-continue` for a body over 1 KiB and, without a 100, waits
        # --expect100-timeout (1 s by default; 10 here, so a missing 100 cannot pass) to send it.
        body = json.dumps({"content": "x = 1\n" * 400}).encode()
        auth = ["-H", f"Authorization: Bearer {self.d.token}", "--expect100-timeout", "10"]
        with tempfile.NamedTemporaryFile() as big:
            big.write(body)
            big.flush()
            t0 = time.time()
            status, headers = curl(self.d, self.d.url + "/tokenize", *auth, "-H", "Expect: 100-continue",
                                   "--data-binary", "@" + big.name)
            self.assertEqual(status, 200)
            self.assertIn("100 continue", headers)
            self.assertLess(time.time() - t0, 5)
        with tempfile.NamedTemporaryFile() as big:
            big.write(b"{" + b" " * (3 << 20) + b"}")
            big.flush()
            t0 = time.time()
            status, headers = curl(self.d, self.d.url + "/infill", "--expect100-timeout", "10", "--data-binary", "@" + big.name)
            self.assertEqual((status, "100 continue" in headers), (401, False))
            self.assertLess(time.time() - t0, 5)
            # Without Expect curl sends the body at once: the 401 still arrives whole (the
            # server stops reading, but drains what comes before it closes, so no reset).
            status, _ = curl(self.d, self.d.url + "/infill", "-H", "Expect:", "--data-binary", "@" + big.name)
            self.assertEqual(status, 401)

    def test_loopback_only(self):
        addrs = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
        others = [a for a in addrs if not a.startswith("127.") and ":" not in a]
        for a in others:
            with self.assertRaises(OSError):
                socket.create_connection((a, self.d.port), timeout=2).close()

    def test_unauthenticated_limits(self):
        # A connection that sends nothing is closed after auth-timeout-ms (2 s).
        t0 = time.time()
        with socket.create_connection(("127.0.0.1", self.d.port)) as s:
            s.settimeout(10)
            data = b""
            while chunk := s.recv(4096):
                data += chunk
        self.assertEqual(data, b"")
        self.assertGreater(time.time() - t0, 1.5)
        self.assertLess(time.time() - t0, 5)
        # Nine waiting connections: the oldest is dropped for the ninth (max-unauthenticated 8).
        waiting = [socket.create_connection(("127.0.0.1", self.d.port)) for _ in range(9)]
        waiting[0].settimeout(1.5)
        self.assertEqual(waiting[0].recv(100), b"")
        for w in waiting:
            w.close()
        self.assertEqual(curl(self.d, self.d.url + "/health", "-H", f"Authorization: Bearer {self.d.token}")[0], 200)

    def test_hang_up_cancels(self):
        # A client that goes away mid-answer frees the worker at once: the next request is
        # not held behind a 2000-token chat. Streaming, the next write fails; otherwise the
        # transport sees the hang-up while the answer is computed.
        for stream in (False, True):
            s = socket.create_connection(("127.0.0.1", self.d.port))
            body = json.dumps({"messages": [{"role": "user", "content": "Write a very long story."}], "max_tokens": 2000,
                               "stream": stream}).encode()
            s.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {self.d.token}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            s.settimeout(60)
            if stream:
                self.assertIn(b"200", s.recv(4096))
            else:
                time.sleep(1)
            s.close()
            t0 = time.time()
            r = self.client.chat.completions.create(model="default", max_tokens=4, messages=[{"role": "user", "content": "hi"}])
            self.assertTrue(r.choices)
            self.assertLess(time.time() - t0, 30, f"stream={stream}")


class no_token_test(unittest.TestCase):
    def test_opt_out(self):
        d = daemon("--http-no-token")
        try:
            self.assertIsNone(d.token)
            self.assertEqual(curl(d, d.url + "/health")[0], 200)
            self.assertEqual(curl(d, d.url + "/health", "-H", "Host: evil.example")[0], 403)
            self.assertEqual(curl(d, d.url + "/health", "-H", "Origin: http://evil.example")[0], 403)
        finally:
            d.stop()

    def test_token_file(self):
        with tempfile.TemporaryDirectory() as t:
            path = os.path.join(t, "http.token")
            token = "ab" * 32
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
            os.write(fd, (token + "\n").encode())
            os.close(fd)
            d = daemon("--http-token-file", path)
            try:
                self.assertEqual(curl(d, d.url + "/health", "-H", f"Authorization: Bearer {token}")[0], 200)
                self.assertEqual(curl(d, d.url + "/health", "-H", f"Authorization: Bearer {d.token}")[0], 401)
            finally:
                d.stop()


if __name__ == "__main__":
    if not os.path.exists(MODEL):
        print(f"http_api: skipped: no model at {MODEL} (scripts/fetch-model; scripts/test sets HEARTH_DEFAULT_MODEL)")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1] + sys.argv[2:], verbosity=2)   # after the binary: unittest's own (-k NAME)
