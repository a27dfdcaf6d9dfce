#!/usr/bin/env python3
"""The quality bench's harness on a tiny model: cuts four tasks (Python and C++, a whole line
and a block) from tests/fixtures/quality, runs `hearth bench quality` on them through a real
daemon, and checks that every task was answered and scored and the JSON is well formed. Also
checks the scorer itself: the expected text scores exact, a broken one fails to parse.

  check_bench_quality.py HEARTH FIXTURES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench", "quality")
sys.path.insert(0, BENCH)
import run_quality  # noqa: E402


def fail(msg):
    print(f"check_bench_quality: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check_scorer(tasks):
    parses = run_quality.syntax_checker()
    for t in tasks:
        right = {"inserted": t["truth"], "filled": t["original"], "ms": 1.0}
        s = run_quality.score(t, right, parses)
        if not (s["exact"] and s["parses"] and s["similarity"] == 1.0 and not s["empty"]):
            fail(f"{t['id']}: the expected text does not score as exact: {s}")
        broken = "(" + t["truth"]
        wrong = {"inserted": broken, "filled": t["doc"][:t["cursor"]] + broken + t["doc"][t["cursor"]:], "ms": 1.0}
        s = run_quality.score(t, wrong, parses)
        if s["exact"] or s["parses"]:
            fail(f"{t['id']}: an unbalanced bracket scores exact or parses: {s}")


def main():
    hearth, fixtures = sys.argv[1], sys.argv[2]
    source = os.path.join(fixtures, "quality")
    model = os.path.join(fixtures, "models", "stories260K-Q8_0.gguf")
    with tempfile.TemporaryDirectory() as tmp:
        task_list = os.path.join(tmp, "tasks.jsonl")
        subprocess.run([sys.executable, os.path.join(BENCH, "make_tasks.py"), "--python-root", source, "--cpp-root", source,
                        "--python-per-kind", "1", "--cpp-per-kind", "1", "--rounds", "1", "--out", task_list], check=True)
        kinds = ["--kind", "line_start", "--kind", "block"]
        _, tasks = run_quality.load_tasks(task_list, 0, [], ["line_start", "block"])
        if sorted((t["lang"], t["kind"]) for t in tasks) != [("cpp", "block"), ("cpp", "line_start"),
                                                             ("python", "block"), ("python", "line_start")]:
            fail(f"the fixtures gave other tasks: {[(t['lang'], t['kind']) for t in tasks]}")
        check_scorer(tasks)
        out = os.path.join(tmp, "result.json")
        r = subprocess.run([hearth, "bench", "quality", "--model", model, "--tasks", task_list, "--sides", "hearth",
                            "--json", out] + kinds, stdout=subprocess.PIPE, text=True, timeout=240)
        print(r.stdout)
        if r.returncode != 0:
            fail(f"hearth bench quality exited with {r.returncode}")
        doc = json.load(open(out))
        if doc["task_list"]["version"] != 1 or doc["tasks_run"] != 4 or len(doc["tasks"]) != 4:
            fail(f"the JSON does not describe the four tasks: {doc['task_list']}, {doc['tasks_run']}")
        for t in doc["tasks"]:
            h = t["hearth"]
            if "error" in h:
                fail(f"{t['id']}: the daemon answered an error: {h['error']}")
            if not isinstance(h["inserted"], str) or not all(isinstance(h[k], bool) for k in ("exact", "parses", "empty")):
                fail(f"{t['id']}: malformed score {h}")
            if h["empty"] != (h["inserted"] == "") or not 0 <= h["similarity"] <= 1 or not h["ms"] > 0:
                fail(f"{t['id']}: inconsistent score {h}")
        for group in ("all", "single_line", "multi_line", "python", "cpp"):
            s = doc["summary"]["hearth"][group]
            if not all(0 <= s[k] <= 1 for k in ("exact", "parses", "similarity", "non_empty")) or s["n"] < 1:
                fail(f"summary {group} out of range: {s}")
        if doc["summary"]["hearth"]["all"]["n"] != 4 or "multi_line" not in r.stdout:
            fail("the summary or the printed table misses tasks")
    print("check_bench_quality: ok")


if __name__ == "__main__":
    main()
