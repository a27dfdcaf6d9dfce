#!/usr/bin/env python3
"""The editor bench's driver on a tiny model: opens the two files of tests/fixtures/quality through a
real daemon (bench/editor/run_editor.py --sides hearth, a file list instead of the system's
files), and checks that every burst was answered and measured and the JSON is well formed.
Also checks, without a model, llama.vim's client as the llama.cpp side replays it: a keystroke
while a request is in flight sends nothing (it retries 100 ms later), an answer is shown, a
keystroke that types the answer's first character is served from the cache, and the
speculative request after a shown answer.

  check_bench_editor.py HEARTH FIXTURES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench", "editor")
sys.path.insert(0, BENCH)
import llama_vim  # noqa: E402
import pick_files  # noqa: E402

# A slot that answers every request 200 ms late with the same text (the rest of "total += x").
FAKE_SLOT = r"""
import json, sys, time
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    time.sleep(0.2)
    print(json.dumps({"evaluated": 10}), flush=True)
    print(json.dumps({"id": req["id"], "content": "otal += x\n" if req["n_predict"] else "", "prompt_n": 10,
                      "cached": 0, "predicted_n": 3, "ms": 200.0, "prompt_ms": 150.0, "predicted_ms": 50.0}), flush=True)
"""


def fail(msg):
    print(f"check_bench_editor: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check_llama_vim():
    proc = subprocess.Popen([sys.executable, "-c", FAKE_SLOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        vim = llama_vim.llama_vim(proc, seed=1)
        vim.read_ready(10)
        lines = ["def f(xs):", "    total = 0", "    for x in xs:", "        ", "    return total"]
        vim.open(lines, 3, 8, "f.py")
        vim.pump(time.monotonic() + 0.3)
        vim.cursor_rest()
        if [r["kind"] for r in vim.requests] != ["warmup"]:
            fail(f"the cursor's rest should send one warm-up with the ring's chunk: {vim.requests}")
        vim.type("t")
        vim.type("o")
        if [r["kind"] for r in vim.requests] != ["warmup", "fim"] or vim.timer is None:
            fail(f"a keystroke during a request must wait for it (llama.vim's 100 ms retry): {vim.requests}")
        fim = vim.requests[1]
        vim.pump(time.monotonic() + 1.0)
        if not vim.shown or vim.shown[0]["first_line"] != "tal += x" or "answered" not in fim:
            fail(f"the answer to 't' should be shown after 'o' as its typed-ahead rest 'tal += x': {vim.shown}")
        if [(r["kind"], r["speculative"]) for r in vim.requests[1:]] != [("fim", False), ("fim", True)]:
            fail(f"after the shown answer, one speculative request (it replaces the retry of 'o'): {vim.requests}")
        vim.pump(time.monotonic() + 1.0)
        n_shown = len(vim.shown)
        vim.type("t")
        if len(vim.shown) != n_shown + 1 or vim.shown[-1]["first_line"] != "al += x":
            fail(f"typing the answer's next character must show its rest from the cache: {vim.shown[n_shown:]}")
    finally:
        proc.stdin.close()
        proc.wait()


def main():
    hearth, fixtures = sys.argv[1], sys.argv[2]
    check_llama_vim()
    model = os.path.join(fixtures, "models", "stories260K-Q8_0.gguf")
    source = os.path.abspath(os.path.join(fixtures, "quality"))
    with tempfile.TemporaryDirectory() as tmp:
        file_list = os.path.join(tmp, "files.txt")
        with open(file_list, "w") as f:
            f.write(f"{os.path.join(source, 'inventory.py')}\n{os.path.join(source, 'ring_buffer.hpp')}\n")
        files = pick_files.pick_listed_files(file_list, 2, 1)
        if [f["lang"] for f in files] != ["python", "cpp"] or not all(len(f["truth"].replace(" ", "")) >= 8 for f in files):
            fail(f"the fixtures gave other files or lines: {[(f['path'], f['line']) for f in files]}")
        out = os.path.join(tmp, "result.json")
        r = subprocess.run([sys.executable, os.path.join(BENCH, "run_editor.py"), "--hearth", hearth, "--model", model,
                            "--file-list", file_list, "--files", "2", "--sides", "hearth", "--json", out],
                           stdout=subprocess.PIPE, text=True, timeout=240)
        print(r.stdout)
        if r.returncode != 0:
            fail(f"run_editor.py exited with {r.returncode}")
        doc = json.load(open(out))
        if [(f["path"], f["line"], f["sha256"]) for f in doc["files"]] != [(f["path"], f["line"], f["sha256"]) for f in files]:
            fail("the JSON does not name the files and lines that were opened")
        for f in doc["files"]:
            h = f["hearth"]
            if [b["burst"] for b in h["bursts"]] != [1, 2, 3]:
                fail(f"{f['path']}: bursts {h['bursts']}")
            for b in h["bursts"]:
                if "error" in b:
                    fail(f"{f['path']} burst {b['burst']}: {b['error']}")
                if not (b["ms"] >= 0 and isinstance(b["tokens"], int) and b["tokens"] >= 0
                        and isinstance(b["exact"], bool) and isinstance(b["non_empty"], bool)):
                    fail(f"{f['path']}: malformed answer {b}")
            if sum(q["burst"] is not None for q in h["requests"]) != 9:
                fail(f"{f['path']}: expected 9 inline completion requests (3 bursts of 3 keys): {h['requests']}")
        s = doc["summary"]["hearth"]
        if s["n_files"] != 2 or s["n_answers"] != 6 or s["errors"] or not 0 <= s["exact"] <= s["non_empty"] <= 1:
            fail(f"summary out of range: {s}")
        if not s["first_ms_median"] > 0 or not isinstance(doc["hearth_status"].get("completionsServed"), int):
            fail(f"no first-suggestion latency or no final status: {s}, {doc['hearth_status']}")
        if "first p50" not in r.stdout or "load average" not in r.stdout:
            fail("the printed table is missing")
    print("check_bench_editor: ok")


if __name__ == "__main__":
    main()
