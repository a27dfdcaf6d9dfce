"""One inline completion's latency through the editor's LSP path, six files in a row, three
ways: the local model, engine = remote against another hearth --http (llama-server API), and
against llama-cpp-python's server (openai API), all on the default model on this machine.
Run from the repository root after scripts/build and scripts/llamacpp-env:
  nice -n 19 .venv/bin/python bench/remote_latency.py
"""
import os, sys, time, statistics, tempfile
sys.argv = [sys.argv[0], "build/daemon/hearth", ".venv-llamacpp/bin/python"]
sys.path.insert(0, "tests/remote")
import test_remote_engine as t
from lsp_probe import send

def run(e, n=6):
    out = []
    for i in range(n):
        uri = f"file:///work/m{i}.py"
        text = f"import math\n\n\ndef circle_area_{i}(r):\n    \"\"\"The area of a circle of radius r.\"\"\"\n    return \n"
        send(e.proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})
        t0 = time.perf_counter()
        r = e.call("textDocument/inlineCompletion", {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 11},
                                                     "context": {"triggerKind": 2}})
        out.append((time.perf_counter() - t0) * 1000)
        items = r["result"]["items"] if isinstance(r["result"], dict) else r["result"]
    return out, items[0]["insertText"] if items else ""   # the last file's answer

res = {}
e = t.editor("")
res["local"] = run(e); e.stop()
rem = t.http_daemon()
e = t.editor(t.remote_config(rem.url, "llama-server", os.path.join(rem.dir, "hearth.token"), budget_ms=120000))
res["remote hearth --http (llama-server)"] = run(e); print(e.engine()); e.stop(); rem.stop()
srv = t.llamacpp_server("k", "--n_threads", "2")   # as many threads as hearth uses here
e = t.editor(t.remote_config(srv.url, "openai", t.write_key(tempfile.mkdtemp(), "k"), budget_ms=120000, model="default"))
res["remote llama-cpp-python (openai)"] = run(e); print(e.engine()); e.stop(); srv.stop()
for k, (ms, text) in res.items():
    print(f"{k:40s} first {ms[0]:7.1f} ms, median of the rest {statistics.median(ms[1:]):7.1f} ms, all {[round(x) for x in ms]} -> {text!r}")
