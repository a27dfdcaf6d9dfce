#!/usr/bin/env python3
"""`hearth bench next-edit`: how often hearth/nextEdit predicts the edit that really came next,
and how often it predicts one where none came, on tasks cut from the diff between two
consecutive releases of popular Python packages (bench/next_edit/make_tasks.py).

hearth: a real `hearth daemon` on a private Unix socket with an empty config (every setting at
its default). Each task is one editor connection: initialize, textDocument/didOpen of the file
as the older release has it, the group's first edits as textDocument/didChange (one change
each, `--type-pause` apart, as a person makes them), hearth/cursorRest at the next location,
then after `--edit-pause` (the editor plugins' pause) hearth/nextEdit there; the returned edits
are applied to the text as an editor applies them.

none: the baseline that never predicts (what an editor without next edits shows).

Scores. Edit tasks: exact (the returned edits that touch the expected edit's lines, applied,
give the text with the expected edit: the file as the newer release has it there), near (an
edit on those lines, not the right one), elsewhere (edits only on other lines), none.
No-edit tasks: false edit (any edit returned). Latency of each hearth/nextEdit, from the
request to its answer, median and 90th percentile.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "common"))   # bench/common, also when installed
import sdists  # noqa: E402
from hearth_bench import (add_side_by_side_arguments, bench_error, busy_neighbour,  # noqa: E402
                          lsp_connection, run_on_daemon)
DEFAULT_TASKS = os.path.join(HERE, "tasks-v1.jsonl")
SIDES = ("hearth", "none")


def say(msg):
    print(f"bench next-edit: {msg}", file=sys.stderr, flush=True)


# --- tasks ----------------------------------------------------------------------------------

def load_tasks(path, limit, kinds, cache, python):
    try:
        with open(path) as f:
            lines = [json.loads(l) for l in f if l.strip()]
    except OSError as e:
        raise bench_error(f"cannot read the task list {path}: {e.strerror}")
    if not lines or "version" not in lines[0]:
        raise bench_error(f"{path}: the first line must be the task list's header with its version")
    header, tasks = lines[0], [t for t in lines[1:] if not kinds or t["kind"] in kinds]
    if limit:
        tasks = tasks[:limit]
    for t in tasks:
        try:
            before, after = sdists.file_pair(cache, python, t)
        except sdists.source_error as e:
            raise bench_error(str(e))
        prepare(t, before, after)
    return header, tasks


def prepare(t, before, after):
    """The task's texts: each didChange (range in the text so far, new text), the document
    once they are applied, the cursor and, for an edit task, the text with the expected edit."""
    applied, changes = [], []
    for bs, be, as_, ae in t["edits"]:
        new = after[as_:ae]
        doc = sdists.apply_edits(before, applied)
        changes.append((doc, sdists.shift(bs, applied), sdists.shift(be, applied), new))
        applied.append((bs, be, new))
    t["before_text"] = before
    t["changes"] = changes
    t["doc"] = sdists.apply_edits(before, applied)
    if t["kind"] == "edit":
        bs, be, as_, ae = t["target"]
        s, e = sdists.shift(bs, applied), sdists.shift(be, applied)
        t["cursor"] = s
        t["span"] = (s, e)
        t["expected"] = t["doc"][:s] + after[as_:ae] + t["doc"][e:]
        t["expected_old"], t["expected_new"] = t["doc"][s:e], after[as_:ae]
    else:
        t["cursor"] = sdists.shift(t["cursor"], applied)


def position(data, offset):
    """LSP position (utf-8 encoding) of byte `offset` in `data`."""
    line = data.count(b"\n", 0, offset)
    return {"line": line, "character": offset - (data.rfind(b"\n", 0, offset) + 1)}


def offset_of(data, pos):
    """Byte offset of an LSP position (utf-8 encoding); past the end of a line: its end."""
    off = 0
    for _ in range(pos["line"]):
        nl = data.find(b"\n", off)
        if nl < 0:
            return len(data)
        off = nl + 1
    end = data.find(b"\n", off)
    end = len(data) if end < 0 else end
    return min(off + pos["character"], end)


# --- scoring (pure) -------------------------------------------------------------------------

def line_span(data, s, e):
    return data.count(b"\n", 0, s), data.count(b"\n", 0, e)


def score(task, edits):
    """The verdict on the returned edits [(start, end, new_bytes)] (offsets in task['doc']):
    edit tasks: exact, near, elsewhere or none; no-edit tasks: false_edit or none."""
    if not edits:
        return "none"
    if task["kind"] != "edit":
        return "false_edit"
    doc = task["doc"]
    t0, t1 = line_span(doc, *task["span"])
    touching = [e for e in edits if not (line_span(doc, e[0], e[1])[1] < t0 or line_span(doc, e[0], e[1])[0] > t1)]
    if not touching:
        return "elsewhere"
    if sdists.apply_edits(doc, touching) == task["expected"] or sdists.apply_edits(doc, edits) == task["expected"]:
        return "exact"
    return "near"


# --- hearth through its LSP socket ----------------------------------------------------------

def ask_hearth(daemon, task, args, workdir):
    """One editor session on the task: the returned edits, the latency and any error."""
    conn = lsp_connection(daemon.socket, args.request_timeout)
    try:
        init = conn.request("initialize", {"processId": os.getpid(), "clientInfo": {"name": "hearth-bench-next-edit"},
                                           "capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
        if "error" in init:
            return {"error": f"initialize: {init['error']['message']}"}
        conn.send("initialized", {}, request=False)
        # A path of its own per task: no task finds another's document or slot.
        uri = "file://" + os.path.join(workdir, "src", task["id"], task["path"])
        conn.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": task["before_text"].decode()}}, request=False)
        version = 1
        for doc, s, e, new in task["changes"]:
            time.sleep(args.type_pause)
            version += 1
            conn.send("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": position(doc, s), "end": position(doc, e)}, "text": new.decode()}]},
                request=False)
        pos = position(task["doc"], task["cursor"])
        conn.send("hearth/cursorRest", {"textDocument": {"uri": uri}, "position": pos}, request=False)
        time.sleep(args.edit_pause)
        t0 = time.perf_counter()
        reply = conn.request("hearth/nextEdit", {"textDocument": {"uri": uri, "version": version}, "position": pos})
        ms = (time.perf_counter() - t0) * 1000
        if "error" in reply:
            return {"error": reply["error"]["message"], "ms": ms}
        edits = []
        for ed in (reply.get("result") or {}).get("edits", []):
            r = ed["range"]
            edits.append((offset_of(task["doc"], r["start"]), offset_of(task["doc"], r["end"]), ed["newText"].encode()))
        return {"edits": edits, "ms": ms}
    finally:
        conn.close()


def run_hearth(args, tasks, workdir):
    return run_on_daemon(args, tasks, workdir, lambda daemon, t: ask_hearth(daemon, t, args, workdir), say)


# --- summary --------------------------------------------------------------------------------

def percentile(v, q):
    if not v:
        return None
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def summarize(results, tasks):
    edit = [r for r, t in zip(results, tasks) if t["kind"] == "edit"]
    quiet = [r for r, t in zip(results, tasks) if t["kind"] != "edit"]
    ms = [r["ms"] for r in results if "ms" in r]

    def share(rows, verdict):
        return sum(r["verdict"] == verdict for r in rows) / len(rows) if rows else 0.0
    return {"edit_tasks": len(edit), "exact": share(edit, "exact"), "near": share(edit, "near"),
            "elsewhere": share(edit, "elsewhere"), "no_answer": share(edit, "none"),
            "no_edit_tasks": len(quiet), "false_edit": share(quiet, "false_edit"),
            "errors": sum("error" in r for r in results),
            "ms_p50": statistics.median(ms) if ms else None, "ms_p90": percentile(ms, 0.9)}


def print_table(summaries):
    print(f"{'side':<8} {'edit':>5} {'exact':>7} {'near':>7} {'elsewh.':>7} {'none':>7} {'no-edit':>8} "
          f"{'false':>7} {'p50 ms':>8} {'p90 ms':>8}")
    for side, s in summaries.items():
        p50 = "-" if s["ms_p50"] is None else f"{s['ms_p50']:.0f}"
        p90 = "-" if s["ms_p90"] is None else f"{s['ms_p90']:.0f}"
        print(f"{side:<8} {s['edit_tasks']:>5} {100 * s['exact']:>6.1f}% {100 * s['near']:>6.1f}% "
              f"{100 * s['elsewhere']:>6.1f}% {100 * s['no_answer']:>6.1f}% {s['no_edit_tasks']:>8} "
              f"{100 * s['false_edit']:>6.1f}% {p50:>8} {p90:>8}")
        if s["errors"]:
            print(f"{'':<8} {s['errors']} requests failed (see --json / -v)")


def shown(edits):
    return [{"start": s, "end": e, "newText": new.decode(errors="replace")} for s, e, new in edits]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth", required=True, help="the hearth executable")
    ap.add_argument("--model", required=True, help="GGUF model file")
    ap.add_argument("--tasks", default=DEFAULT_TASKS, help="task list (JSON lines; default: the committed v1 list)")
    ap.add_argument("--limit", type=int, default=0, help="first N tasks of the list (0: all)")
    ap.add_argument("--kind", action="append", default=[], help="only this kind (edit, no_edit); repeatable")
    ap.add_argument("--cache", default=sdists.DEFAULT_CACHE, help="where the source distributions are kept")
    ap.add_argument("--pip-python", default=sdists.pip_python(ROOT), help="the python whose pip fetches missing ones")
    ap.add_argument("--type-pause", type=float, default=0.3, help="seconds between the replayed edits")
    ap.add_argument("--edit-pause", type=float, default=0.25,
                    help="seconds from the cursor's rest to hearth/nextEdit (the plugins' pause)")
    add_side_by_side_arguments(ap, ROOT, request_timeout_s=60)
    ap.set_defaults(sides="hearth,none")
    args = ap.parse_args()
    sides = [s for s in args.sides.split(",") if s]
    # `hearth bench` passes the side-by-side benches' default; llama.cpp has no next edits.
    sides = [s for s in sides if s != "llama.cpp"] or ["hearth", "none"]
    if not set(sides) <= set(SIDES):
        raise bench_error("--sides takes hearth and/or none")
    header, tasks = load_tasks(args.tasks, args.limit, args.kind, args.cache, args.pip_python)
    if not tasks:
        raise bench_error("no task matches")
    say(f"{len(tasks)} tasks from {args.tasks} (version {header['version']}, seed {header['seed']}); model {args.model}"
        + ("; busy neighbour" if args.busy else "") + "".join(f"; {s}" for s in args.setting))
    results, summaries, hearth_status = {}, {}, None
    with tempfile.TemporaryDirectory(prefix="hearth-bench-next-edit-") as workdir:
        for side in sides:
            wall0 = time.monotonic()
            if side == "none":
                answers = {t["id"]: {"edits": []} for t in tasks}
            elif args.busy:
                with busy_neighbour():
                    answers = run_hearth(args, tasks, workdir)
            else:
                answers = run_hearth(args, tasks, workdir)
            if side == "hearth":
                hearth_status = answers.pop("status")
            results[side] = []
            for t in tasks:
                r = dict(answers[t["id"]])
                r["verdict"] = "error" if "error" in r else score(t, r["edits"])
                results[side].append(r)
            summaries[side] = summarize(results[side], tasks)
            say(f"{side}: done in {time.monotonic() - wall0:.0f} s")
    if args.verbose:
        for i, t in enumerate(tasks):
            where = position(t["doc"], t["cursor"])
            want = (f"{t['expected_old'].decode()!r} -> {t['expected_new'].decode()!r}" if t["kind"] == "edit"
                    else "no edit")
            print(f"--- {t['id']} {t['kind']}/{t['group']} {t['package']} {t['before']}->{t['after']} {t['path']}:"
                  f"{where['line'] + 1}  expected {want}")
            for side in sides:
                r = results[side][i]
                got = r.get("error") or "; ".join(f"{t['doc'][s:e].decode(errors='replace')!r} -> "
                                                 f"{new.decode(errors='replace')!r}" for s, e, new in r["edits"]) or "-"
                ms = f"{r['ms']:.0f} ms" if "ms" in r else ""
                print(f"    {side:<8} {r['verdict']:<10} {ms:>8}  {got}")
    print_table(summaries)
    if args.json:
        doc = {"task_list": {"path": args.tasks, **header}, "tasks_run": len(tasks), "model": args.model,
               "busy_neighbour": args.busy, "settings": args.setting, "summary": summaries,
               "hearth_status": hearth_status,
               "tasks": [{"id": t["id"], "kind": t["kind"], "group": t["group"], "package": t["package"],
                          "path": t["path"], "cursor": position(t["doc"], t["cursor"]),
                          **({"expected": {"old": t["expected_old"].decode(), "new": t["expected_new"].decode()}}
                             if t["kind"] == "edit" else {}),
                          **{side: {**{k: v for k, v in results[side][i].items() if k != "edits"},
                                    "edits": shown(results[side][i].get("edits", []))} for side in sides}}
                         for i, t in enumerate(tasks)]}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    try:
        main()
    except (bench_error, sdists.source_error) as e:
        say(f"error: {e}")
        sys.exit(1)
