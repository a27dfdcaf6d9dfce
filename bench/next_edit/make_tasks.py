#!/usr/bin/env python3
"""Cuts the tasks of `hearth bench next-edit` from real edit histories: the diff between two
consecutive releases of popular pure-Python packages (their source distributions, fetched
through pip; sdists.py).

In each .py file the two releases hold, the diff's hunks are grouped where they belong
together:

  same_change hunks making the same token change (one identifier renamed in several places,
              the same argument added to several calls): the same key of token_change()
  signature   a `def NAME(` line changed, and the hunks changing a call `NAME(` in the same file

An edit task is a group's first edits (one or two, as the editor sends them: didChange) and the
group's next hunk as the expected edit, the cursor at its start. A no-edit task is one edit of
a group, then the cursor on a line with no hunk of the file's diff within `--quiet-lines`
lines: any edit predicted there is a false edit.

The task list records the package, both versions, the file's path inside the release, the
SHA-256 of both versions of the file and byte offsets [before_start, before_end, after_start,
after_end] of each edit, never the code; the bench rebuilds the text from the archives and
refuses a file that differs.

  make_tasks.py --out bench/next_edit/tasks-v1.jsonl          (the committed list)
  make_tasks.py --edit-tasks N --no-edit-tasks M --seed S --cache DIR --out FILE
"""
import argparse
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import sdists  # noqa: E402

VERSION = 1
# Two consecutive releases each, pure Python, from the most downloaded packages.
PAIRS = [("attrs", "23.1.0", "23.2.0"), ("click", "8.1.6", "8.1.7"), ("packaging", "23.2", "24.0"),
         ("werkzeug", "3.0.0", "3.0.1"), ("rich", "13.6.0", "13.7.0"), ("requests", "2.31.0", "2.32.0"),
         ("jinja2", "3.1.2", "3.1.3"), ("httpx", "0.25.0", "0.25.1"), ("pluggy", "1.3.0", "1.4.0"),
         ("more-itertools", "10.1.0", "10.2.0"), ("flask", "2.3.3", "3.0.0"), ("urllib3", "2.0.7", "2.1.0"),
         ("idna", "3.6", "3.7"), ("tomlkit", "0.12.1", "0.12.2"), ("pyparsing", "3.1.1", "3.1.2")]
MAX_HUNK_BYTES = 200          # a group's hunks are small edits, not rewritten blocks:
MAX_HUNK_LINES = 2            # at most this many lines on either side
MAX_FILE_BYTES = 160_000
IDENT = re.compile(rb"^\w+$")


def line_of(data, offset):
    return data.count(b"\n", 0, offset)


def groups_of(before, after, edits):
    """[(kind, [edit, ...]), ...]: the hunks of one file that belong together, in file order
    (a signature group: the def first)."""
    small = [e for e in edits if 0 < max(e[1] - e[0], e[3] - e[2]) <= MAX_HUNK_BYTES
             and before.count(b"\n", e[0], e[1]) < MAX_HUNK_LINES and after.count(b"\n", e[2], e[3]) < MAX_HUNK_LINES]
    by_change = {}
    for e in small:
        key = sdists.token_change(before[e[0]:e[1]], after[e[2]:e[3]])
        if key and any(IDENT.match(t) for old, new in key for t in old + new):
            by_change.setdefault(key, []).append(e)
    out = [("same_change", g) for g in by_change.values() if len(g) >= 2]
    for e in small:
        head = before[before.rfind(b"\n", 0, e[0]) + 1:before.find(b"\n", e[0])]
        m = re.match(rb"\s*(?:async\s+)?def\s+(\w+)\s*\(", head)
        if not m:
            continue
        call = re.compile(rb"(?<![\w.])(?:\w+\.)?" + m.group(1) + rb"\s*\(")
        calls = [c for c in small if c is not e and call.search(
            before[before.rfind(b"\n", 0, c[0]) + 1:before.find(b"\n", c[1]) if before.find(b"\n", c[1]) >= 0 else len(before)])]
        if calls:
            group = [e] + calls
            if not any(g == group for _, g in out):
                out.append(("signature", group))
    return out


def quiet_lines(before, edits, applied, quiet):
    """Line numbers (0-based) of non-blank lines with no hunk within `quiet` lines, at least
    2 * `quiet` lines from the edit applied."""
    lines = before.split(b"\n")
    busy = set()
    for e in edits:
        for ln in range(line_of(before, e[0]) - quiet, line_of(before, e[1]) + quiet + 1):
            busy.add(ln)
    a0, a1 = line_of(before, applied[0]), line_of(before, applied[1])
    return [i for i, l in enumerate(lines) if l.strip() and i not in busy and not a0 - 2 * quiet <= i <= a1 + 2 * quiet]


def cut(cache, python, quiet):
    """Every candidate task of every pair: (edit candidates, no-edit candidates)."""
    edit_cands, quiet_cands = [], []
    for package, v0, v1 in PAIRS:
        try:
            f0 = sdists.python_files(sdists.sdist(cache, package, v0, python))
            f1 = sdists.python_files(sdists.sdist(cache, package, v1, python))
        except sdists.source_error as e:
            print(f"make_tasks: skipping {package}: {e}", file=sys.stderr)
            continue
        for path in sorted(set(f0) & set(f1)):
            before, after = f0[path], f1[path]
            if before == after or len(before) > MAX_FILE_BYTES or len(after) > MAX_FILE_BYTES:
                continue
            try:
                before.decode(), after.decode()
            except UnicodeDecodeError:
                continue
            edits = sdists.edits_between(before, after)
            base = {"package": package, "before": v0, "after": v1, "path": path,
                    "sha256_before": sdists.sha256(before), "sha256_after": sdists.sha256(after)}
            for kind, group in groups_of(before, after, edits):
                k = min(2, len(group) - 1)
                edit_cands.append({**base, "kind": "edit", "group": kind, "edits": group[:k], "target": group[k]})
                lines = quiet_lines(before, edits, group[0], quiet)
                if lines:
                    quiet_cands.append((base, group[0], lines))
    return edit_cands, quiet_cands


def line_start_offset(before, line):
    off = 0
    for _ in range(line):
        off = before.index(b"\n", off) + 1
    text = before[off:before.find(b"\n", off)]
    return off + len(text) - len(text.lstrip())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edit-tasks", type=int, default=30)
    ap.add_argument("--no-edit-tasks", type=int, default=20)
    ap.add_argument("--per-file", type=int, default=3, help="at most this many edit tasks from one file")
    ap.add_argument("--quiet-lines", type=int, default=12,
                    help="a no-edit cursor has no hunk within this many lines (the daemon's window is 10)")
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--cache", default=sdists.DEFAULT_CACHE, help="where the source distributions are kept")
    ap.add_argument("--python", default=sdists.pip_python(ROOT), help="the python whose pip fetches them")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    edit_cands, quiet_cands = cut(args.cache, args.python, args.quiet_lines)
    rng.shuffle(edit_cands)
    # Round-robin over the packages, so no one release fills the list.
    by_pkg, per_file, edit_tasks = {}, {}, []
    for t in edit_cands:
        by_pkg.setdefault(t["package"], []).append(t)
    while len(edit_tasks) < args.edit_tasks and any(by_pkg.values()):
        for pkg in sorted(by_pkg):
            if by_pkg[pkg] and len(edit_tasks) < args.edit_tasks:
                t = by_pkg[pkg].pop()
                key = (t["package"], t["path"])
                if per_file.get(key, 0) < args.per_file:
                    per_file[key] = per_file.get(key, 0) + 1
                    edit_tasks.append(t)
    rng.shuffle(quiet_cands)
    no_edit_tasks = []
    for base, applied, lines in quiet_cands[:args.no_edit_tasks]:
        f0 = sdists.python_files(sdists.sdist(args.cache, base["package"], base["before"], args.python))
        cursor = line_start_offset(f0[base["path"]], rng.choice(lines))
        no_edit_tasks.append({**base, "kind": "no_edit", "group": "none", "edits": [applied], "cursor": cursor})
    tasks = edit_tasks + no_edit_tasks
    rng.shuffle(tasks)
    header = {"version": VERSION, "seed": args.seed, "pairs": [list(p) for p in PAIRS], "quiet_lines": args.quiet_lines,
              "edit_tasks": len(edit_tasks), "no_edit_tasks": len(no_edit_tasks), "tasks": len(tasks)}
    with open(args.out, "w") as f:
        f.write(json.dumps(header) + "\n")
        for i, t in enumerate(tasks):
            f.write(json.dumps({"id": f"v{VERSION}-{i:03d}", **t}) + "\n")
    counts = {}
    for t in tasks:
        counts[t["package"]] = counts.get(t["package"], 0) + 1
    print(f"make_tasks: {len(edit_tasks)} edit and {len(no_edit_tasks)} no-edit tasks -> {args.out} "
          f"(of {len(edit_cands)} edit candidates): " + ", ".join(f"{p} {n}" for p, n in sorted(counts.items())),
          file=sys.stderr)


if __name__ == "__main__":
    main()
