"""engine = "remote" (docs/remote.md) end to end through the editor's LSP path: a `hearth daemon
--stdio` whose completions and chats go to a real OpenAI-compatible server started here on
127.0.0.1, with the local model as fallback.
  - llama-cpp-python's own server (remote-api = openai: raw FIM prompts on /v1/completions,
    /v1/chat/completions), with an API key; a wrong key gets a clear message and the local answer;
  - another hearth daemon with --http (remote-api = llama-server: /infill, chat), and a chat
    cancelled mid-stream;
  - faults: nothing listening at the URL (down at start), a stream that breaks off mid-answer,
    a remote slower than remote-budget-ms and a 200 that is no SSE stream: a small stub server
    here plays the last three.
Usage: test_remote_engine.py HEARTH_BINARY LLAMACPP_PYTHON
(the model: $HEARTH_DEFAULT_MODEL, else the cache's default; exit 77 without it).
"""
import http.server
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "install"))
sys.path.insert(0, os.path.join(HERE, "..", "http"))
from lsp_probe import receive, send  # noqa: E402  (the LSP framing the install test speaks)
from test_http_api import daemon as http_daemon  # noqa: E402  (a hearth daemon --http 0)

HEARTH = sys.argv[1] if len(sys.argv) > 1 else "hearth"
LLAMACPP_PYTHON = sys.argv[2] if len(sys.argv) > 2 else ""
MODEL = os.environ.get("HEARTH_DEFAULT_MODEL") or os.path.expanduser("~/.cache/hearth/models/default.gguf")

DOC_URI = "file:///work/area.py"
DOC = "import math\n\n\ndef circle_area(r):\n    return \n"
CURSOR = {"line": 4, "character": 11}


class editor:
    """A `hearth daemon --stdio` spoken to as an editor speaks to it; its log in a file."""

    def __init__(self, config_text):
        self.dir = tempfile.mkdtemp(prefix="hearth-remote-")
        os.chmod(self.dir, 0o700)
        cfg = os.path.join(self.dir, "config.toml")
        with open(cfg, "w") as f:
            f.write(config_text + "\n[completion]\ndebounce-ms = 0\nprefetch = false\n[chat]\nmax-tokens = 128\n")
        self.log_path = os.path.join(self.dir, "daemon.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [HEARTH, "daemon", "--stdio", "--config", cfg, "--model", MODEL, "--runtime-dir", self.dir,
             "--socket", "none", "--log-file", "none", "--slot-dir", "none", "--log-level", "info"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        self.next_id = 1
        self.progress = []
        self.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}}, timeout=120)
        send(self.proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send(self.proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": DOC_URI, "languageId": "python", "version": 1, "text": DOC}}})

    def start(self, method, params):
        i = self.next_id
        self.next_id += 1
        send(self.proc, {"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        return i

    def wait(self, i, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            msg = receive(self.proc)
            if msg.get("id") == i and "method" not in msg:
                return msg
            if msg.get("method") == "$/progress":
                self.progress.append(msg["params"]["value"])
        raise AssertionError(f"no answer to request {i} within {timeout} s")

    def call(self, method, params, timeout=120):
        return self.wait(self.start(method, params), timeout)

    def complete(self):
        r = self.call("textDocument/inlineCompletion", {"textDocument": {"uri": DOC_URI}, "position": CURSOR,
                                                        "context": {"triggerKind": 2}})
        assert "result" in r, r
        items = r["result"]["items"] if isinstance(r["result"], dict) else r["result"]
        return items[0]["insertText"] if items else ""

    def chat_params(self, prompt):
        return {"textDocument": {"uri": DOC_URI}, "range": {"start": {"line": 3, "character": 0}, "end": {"line": 4, "character": 11}},
                "prompt": prompt, "partialResultToken": "p1"}

    def engine(self):
        return self.call("hearth/status", {})["result"]["engine"]

    def log_text(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        try:
            self.call("shutdown", None, timeout=30)
            send(self.proc, {"jsonrpc": "2.0", "method": "exit"})
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.log.close()


def remote_config(url, api, key_file="", budget_ms=20000, model=""):
    lines = ['engine = "remote"', f'remote-url = "{url}"', f'remote-api = "{api}"', f"remote-budget-ms = {budget_ms}"]
    if key_file:
        lines.append(f'remote-key-file = "{key_file}"')
    if model:
        lines.append(f'remote-model = "{model}"')
    return "\n".join(lines)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_key(directory, key):
    path = os.path.join(directory, "remote.key")
    with open(path, "w") as f:
        f.write(key + "\n")
    return path


class llamacpp_server:
    """llama-cpp-python's server (python -m llama_cpp.server) on the default model, with an API key."""

    def __init__(self, key, *extra):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [LLAMACPP_PYTHON, os.path.join(HERE, "llamacpp_server.py"), "--model", MODEL, "--host", "127.0.0.1",
             "--port", str(self.port), "--n_ctx", "4096", "--api_key", key, "--model_alias", "default", *extra],
            stdout=subprocess.DEVNULL, stderr=self.log)   # a file: it prints the whole chat template
        deadline = time.time() + 120
        while True:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError("llama-cpp-python's server did not start: " + self.log.read()[-2000:])
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.time() > deadline:
                    self.stop()
                    raise RuntimeError("llama-cpp-python's server did not listen within 120 s")
                time.sleep(0.2)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


class fault_stub:
    """An HTTP server for the faults a real server does not make on demand: `drop` sends one
    SSE event and closes the connection; `slow` waits `delay` s before its first byte;
    `malformed` answers 200 with a page that is no SSE stream."""

    def __init__(self, mode, delay=0.0):
        outer = self
        self.closed_early = threading.Event()

        class handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if mode == "slow":
                    time.sleep(delay)
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    if mode == "malformed":   # an HTML error page where the stream should be
                        self.wfile.write(b"<html><body>502 Bad Gateway</body></html>\n\n")
                        return
                    event = {"choices": [{"text": "ra", "delta": {"content": "ra"}, "finish_reason": None}]}
                    self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
                    self.wfile.flush()
                except OSError:
                    outer.closed_early.set()
                self.close_connection = True   # `drop`: no [DONE], no finish_reason

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def has_llamacpp_server():
    if not LLAMACPP_PYTHON or not os.path.exists(LLAMACPP_PYTHON):
        return False
    return subprocess.run([LLAMACPP_PYTHON, "-c", "import llama_cpp.server.app, uvicorn"],
                          capture_output=True).returncode == 0


@unittest.skipUnless(has_llamacpp_server(), "llama-cpp-python's server is not installed (scripts/llamacpp-env)")
class llamacpp_remote_test(unittest.TestCase):
    """remote-api = openai against llama-cpp-python's server."""

    @classmethod
    def setUpClass(cls):
        cls.server = llamacpp_server("team-key-1")
        cls.keys = tempfile.mkdtemp(prefix="hearth-keys-")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_completion_and_chat_through_the_remote(self):
        # A budget for a loaded test machine: the happy path must not fall back on a slow moment.
        e = editor(remote_config(self.server.url, "openai", write_key(self.keys, "team-key-1"), budget_ms=120000,
                                 model="default"))
        try:
            text = e.complete()
            self.assertTrue(text.strip(), "an empty completion from the remote")
            self.assertNotIn("\n", text.rstrip("\n"), "a single-line completion kept more than one line")
            st = e.engine()
            self.assertEqual((st["kind"], st["serving"], st["remoteApi"]), ("remote", "remote", "openai"), st)
            self.assertGreaterEqual(st["remoteAnswers"], 1, st)
            self.assertEqual(st["fallbacks"], 0, st)
            r = e.call("hearth/chat", e.chat_params("What does this function compute? One sentence."))
            self.assertTrue(r["result"]["text"].strip(), r)
            self.assertEqual("".join(p["text"] for p in e.progress), r["result"]["text"])
            self.assertEqual(e.engine()["fallbacks"], 0)
        finally:
            e.stop()

    def test_wrong_api_key_says_so_and_falls_back(self):
        e = editor(remote_config(self.server.url, "openai", write_key(tempfile.mkdtemp(), "not-the-key")))
        try:
            text = e.complete()
            self.assertTrue(text.strip(), "the local fallback gave no completion")
            st = e.engine()
            self.assertEqual((st["serving"], st["lastFailure"]), ("local", "refused_key"), st)
            self.assertIn("refused the API key (HTTP 401", st["lastError"])
            self.assertIn("refused the API key (HTTP 401", e.log_text())
        finally:
            e.stop()


class hearth_remote_test(unittest.TestCase):
    """remote-api = llama-server against another hearth daemon's --http."""

    @classmethod
    def setUpClass(cls):
        cls.remote = http_daemon()
        cls.editor = editor(remote_config(cls.remote.url, "llama-server", os.path.join(cls.remote.dir, "hearth.token"),
                                          budget_ms=120000))

    @classmethod
    def tearDownClass(cls):
        cls.editor.stop()
        cls.remote.stop()

    def test_completion_and_chat_through_the_remote(self):
        e = self.editor
        text = e.complete()
        self.assertTrue(text.strip(), "an empty completion from the remote")
        st = e.engine()
        self.assertEqual((st["serving"], st["remoteApi"], st["lastFailure"]), ("remote", "llama-server", ""), st)
        e.progress.clear()
        r = e.call("hearth/chat", e.chat_params("Name this function's formula in three words."))
        self.assertTrue(r["result"]["text"].strip(), r)
        self.assertEqual("".join(p["text"] for p in e.progress), r["result"]["text"])
        self.assertEqual(e.engine()["fallbacks"], 0)

    def test_cancel_mid_stream(self):
        e = self.editor
        e.progress.clear()
        i = e.start("hearth/chat", e.chat_params("Explain every line of this file in detail, at length."))
        while not e.progress:   # the first piece has come from the remote
            msg = receive(e.proc)
            if msg.get("method") == "$/progress":
                e.progress.append(msg["params"]["value"])
            self.assertNotEqual(msg.get("id"), i, f"the chat ended before it could be cancelled: {msg}")
        t0 = time.time()
        send(e.proc, {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": i}})
        r = e.wait(i, timeout=30)
        self.assertEqual(r.get("error", {}).get("code"), -32800, r)
        self.assertLess(time.time() - t0, 5.0, "the cancel took longer than the remote's stream should")
        # The remote was released: the next request is answered by it at once.
        self.assertTrue(e.complete().strip())
        self.assertEqual(e.engine()["serving"], "remote")


class fault_test(unittest.TestCase):
    def test_bad_settings_are_refused_by_name(self):
        d = tempfile.mkdtemp(prefix="hearth-remote-")
        for text, expected in [('engine = "remot"', "engine 'remot': expected local or remote"),
                               ('engine = "remote"', "engine = remote needs remote-url"),
                               ('engine = "remote"\nremote-url = "http://127.0.0.1:1"\nremote-api = "vllm"',
                                "remote-api 'vllm': expected openai or llama-server"),
                               ('engine = "remote"\nremote-url = "http://127.0.0.1:1"\nremote-key-file = "/nonexistent/k"',
                                "remote-key-file '/nonexistent/k': cannot be read")]:
            cfg = os.path.join(d, "c.toml")
            with open(cfg, "w") as f:
                f.write(text + "\n")
            r = subprocess.run([HEARTH, "daemon", "--stdio", "--config", cfg, "--model", MODEL, "--runtime-dir", d,
                                "--socket", "none", "--log-file", "none", "--slot-dir", "none"],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
            self.assertNotEqual(r.returncode, 0, text)
            self.assertIn(expected, r.stderr, text)

    def test_remote_down_at_start(self):
        e = editor(remote_config(f"http://127.0.0.1:{free_port()}", "llama-server"))
        try:
            self.assertTrue(e.complete().strip(), "the local fallback gave no completion")
            st = e.engine()
            self.assertEqual((st["serving"], st["lastFailure"]), ("local", "unreachable"), st)
            self.assertIn("cannot reach http://127.0.0.1:", st["lastError"])
            self.assertIn("cannot reach", e.log_text())
            r = e.call("hearth/chat", e.chat_params("One word: what is r?"))
            self.assertTrue(r["result"]["text"].strip(), r)
            self.assertGreaterEqual(e.engine()["fallbacks"], 2)
        finally:
            e.stop()

    def test_remote_down_mid_request(self):
        stub = fault_stub("drop")
        e = editor(remote_config(stub.url, "openai"))
        try:
            self.assertTrue(e.complete().strip(), "the local fallback gave no completion")
            st = e.engine()
            self.assertEqual((st["serving"], st["lastFailure"]), ("local", "dropped"), st)
        finally:
            e.stop()
            stub.stop()

    def test_malformed_stream(self):
        stub = fault_stub("malformed")
        e = editor(remote_config(stub.url, "llama-server"))
        try:
            self.assertTrue(e.complete().strip(), "the local fallback gave no completion")
            st = e.engine()
            self.assertEqual((st["serving"], st["lastFailure"]), ("local", "malformed"), st)
            self.assertIn("is not the stream expected: a line that is no SSE field: '<html>", st["lastError"])
        finally:
            e.stop()
            stub.stop()

    def test_slow_remote_over_budget(self):
        stub = fault_stub("slow", delay=60.0)
        e = editor(remote_config(stub.url, "llama-server", budget_ms=400))
        try:
            t0 = time.time()
            self.assertTrue(e.complete().strip(), "the local fallback gave no completion")
            st = e.engine()
            self.assertEqual((st["serving"], st["lastFailure"]), ("local", "over_budget"), st)
            # The local answer (seconds on a loaded machine), not the remote's minute.
            self.assertLess(time.time() - t0, 45, "the completion waited for the slow remote")
        finally:
            e.stop()
            stub.stop()


if __name__ == "__main__":
    if not os.path.exists(MODEL):
        print(f"skipped: no default model at {MODEL}")
        sys.exit(77)
    result = unittest.main(argv=sys.argv[:1], exit=False, verbosity=2).result
    # A skipped case (llama-cpp-python's server absent) shows the whole entry as skipped (77).
    sys.exit(1 if not result.wasSuccessful() else 77 if result.skipped else 0)
