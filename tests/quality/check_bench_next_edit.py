#!/usr/bin/env python3
"""The next-edit bench's pure parts (bench/next_edit): a task rebuilt from two source archives
in a cache folder, an archive whose file differs from the task list's SHA-256 refused, the
diff's hunks grouped (a rename in three places), and the scoring of an exact, a wrong, an
elsewhere and a false edit. No model, no daemon, no network.

  check_bench_next_edit.py
"""
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.environ.get("HEARTH_BENCH_NEXT_EDIT_DIR") or os.path.join(HERE, "..", "..", "bench", "next_edit")
sys.path.insert(0, BENCH)
import make_tasks  # noqa: E402
import run_next_edit  # noqa: E402
import sdists  # noqa: E402

BEFORE = b"""def total(items):
    n = 0
    for item in items:
        n += item.price
    return n


def report(items):
    print(total(items))
    return total(items)


def unrelated():
    return 42
"""
AFTER = BEFORE.replace(b"total(", b"sum_prices(")

failures = []


def check(what, ok):
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failures.append(what)


def write_sdist(cache, package, version, files):
    folder = os.path.join(cache, f"{package}-{version}")
    os.makedirs(folder)
    with tarfile.open(os.path.join(folder, f"{package}-{version}.tar.gz"), "w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{package}-{version}/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))


def end_to_end(hearth, fixtures, edit_task, quiet_task):
    keys = ("id", "kind", "group", "package", "before", "after", "path", "sha256_before", "sha256_after", "edits")
    tasks = [{k: edit_task[k] for k in keys} | {"target": edit_task["target"]},
             {k: edit_task[k] for k in keys} | {"id": "t-quiet", "kind": "no_edit", "group": "none",
                                                "edits": edit_task["edits"][:1], "cursor": BEFORE.index(b"return 42")}]
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        write_sdist(cache, "demo", "1.0", {"src/demo.py": BEFORE})
        write_sdist(cache, "demo", "1.1", {"src/demo.py": AFTER})
        with open(os.path.join(tmp, "tasks.jsonl"), "w") as f:
            f.write(json.dumps({"version": 0, "seed": 0, "tasks": len(tasks)}) + "\n")
            f.writelines(json.dumps(t) + "\n" for t in tasks)
        out = os.path.join(tmp, "out.json")
        r = subprocess.run([sys.executable, os.path.join(BENCH, "run_next_edit.py"), "--hearth", hearth,
                            "--model", os.path.join(fixtures, "models", "stories260K-F32.gguf"),
                            "--setting", "next_edit.enabled=false",
                            "--tasks", os.path.join(tmp, "tasks.jsonl"), "--cache", cache, "--json", out,
                            "--type-pause", "0", "--edit-pause", "0", "--request-timeout", "60"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
        check("the bench runs to the end", r.returncode == 0)
        if r.returncode != 0:
            print(r.stdout[-3000:])
            return
        doc = json.load(open(out))
    check("both sides are summed up", set(doc["summary"]) == {"hearth", "none"})
    h = doc["summary"]["hearth"]
    check("every task was answered", h["errors"] == 0 and h["edit_tasks"] == 1 and h["no_edit_tasks"] == 1)
    check("every answer was timed and scored",
          all(t["hearth"]["ms"] > 0 and t["hearth"]["verdict"] in ("exact", "near", "elsewhere", "none", "false_edit")
              for t in doc["tasks"]))
    check("no edit came back, scored none", [t["hearth"]["verdict"] for t in doc["tasks"]] == ["none", "none"])
    check("the daemon's status is kept", isinstance(doc["hearth_status"], dict) and "nextEditsServed" in doc["hearth_status"])


def main():
    edits = sdists.edits_between(BEFORE, AFTER)
    check("the diff has three hunks, each the renamed word", len(edits) == 3 and
          all(BEFORE[e[0]:e[1]] == b"total" and AFTER[e[2]:e[3]] == b"sum_prices" for e in edits))
    groups = make_tasks.groups_of(BEFORE, AFTER, edits)
    check("they are one rename group", [(k, len(g)) for k, g in groups if k == "same_change"] == [("same_change", 3)])
    sig_after = BEFORE.replace(b"def total(items)", b"def total(items, tax)").replace(b"total(items))", b"total(items, 0))")
    sig_after = sig_after.replace(b"return total(items)", b"return total(items, 0)")
    sig_edits = sdists.edits_between(BEFORE, sig_after)
    groups = make_tasks.groups_of(BEFORE, sig_after, sig_edits)
    check("a def and its calls are a signature group, the def first",
          [(k, [BEFORE[e[0]:e[0] + 1] for e in g]) for k, g in groups if k == "signature"] == [("signature", [b")", b")", b")"])]
          and [g[0] for k, g in groups if k == "signature"] == [sig_edits[0]])
    check("the calls changed alike are a group of their own", [len(g) for k, g in groups if k == "same_change"] == [2])

    task = {"id": "t-edit", "kind": "edit", "group": "same_change", "package": "demo", "before": "1.0", "after": "1.1",
            "path": "src/demo.py", "sha256_before": sdists.sha256(BEFORE), "sha256_after": sdists.sha256(AFTER),
            "edits": edits[:2], "target": edits[2]}
    with tempfile.TemporaryDirectory() as cache:
        write_sdist(cache, "demo", "1.0", {"src/demo.py": BEFORE})
        write_sdist(cache, "demo", "1.1", {"src/demo.py": AFTER})
        before, after = sdists.file_pair(cache, "python-not-needed", task)
        check("the task's files come from the cached archives", (before, after) == (BEFORE, AFTER))
        bad = dict(task, sha256_after="0" * 64)
        try:
            sdists.file_pair(cache, "python-not-needed", bad)
            check("a file whose SHA-256 differs is refused", False)
        except sdists.source_error as e:
            check("a file whose SHA-256 differs is refused", "SHA-256 differs" in str(e))

    run_next_edit.prepare(task, BEFORE, AFTER)
    doc = task["doc"]
    check("the replayed edits leave one `total(` to rename", doc.count(b"total(") == 1 and doc.count(b"sum_prices(") == 2)
    check("the first change is in the file before", task["changes"][0][0] == BEFORE)
    s, e = task["span"]
    check("the cursor is at the expected edit", doc[s:e] == b"total" and task["cursor"] == s)
    check("no edit scores none", run_next_edit.score(task, []) == "none")
    check("the expected edit scores exact", run_next_edit.score(task, [(s, e, b"sum_prices")]) == "exact")
    line_start = doc.rfind(b"\n", 0, s) + 1
    line_end = doc.find(b"\n", s)
    whole_line = doc[line_start:line_end].replace(b"total", b"sum_prices")
    check("the same edit as a rewritten line scores exact",
          run_next_edit.score(task, [(line_start, line_end, whole_line)]) == "exact")
    check("a wrong edit at that place scores near", run_next_edit.score(task, [(s, e, b"sum_price")]) == "near")
    far = doc.index(b"return 42")
    check("an edit on another line only scores elsewhere",
          run_next_edit.score(task, [(far + 7, far + 9, b"43")]) == "elsewhere")
    check("the right edit beside one elsewhere still scores exact",
          run_next_edit.score(task, [(s, e, b"sum_prices"), (far + 7, far + 9, b"43")]) == "exact")

    quiet = {"id": "t-quiet", "kind": "no_edit", "edits": edits[:1], "cursor": BEFORE.index(b"return 42")}
    run_next_edit.prepare(quiet, BEFORE, AFTER)
    check("a no-edit task's cursor moves with the edit before it",
          quiet["doc"][quiet["cursor"]:].startswith(b"return 42"))
    check("any edit on a no-edit task is a false edit",
          run_next_edit.score(quiet, [(quiet["cursor"], quiet["cursor"], b"x")]) == "false_edit")
    check("no edit on a no-edit task is right", run_next_edit.score(quiet, []) == "none")

    pos = run_next_edit.position("é\nab".encode(), 4)
    check("positions count UTF-8 bytes", pos == {"line": 1, "character": 1} and
          run_next_edit.offset_of("é\nab".encode(), pos) == 4)
    if len(sys.argv) == 3:
        end_to_end(sys.argv[1], sys.argv[2], task, quiet)
    if failures:
        print(f"{len(failures)} checks failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
