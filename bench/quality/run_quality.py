#!/usr/bin/env python3
"""`hearth bench quality`: fill-in-the-middle quality of hearth and of llama.cpp on the same
model, side by side, on tasks cut from real code (bench/quality/make_tasks.py).

hearth: a real `hearth daemon` on a private Unix socket (its own runtime dir, slot dir and an
empty config, so every setting is at its default); each task is one editor connection:
initialize, textDocument/didOpen of the file with the hole, textDocument/inlineCompletion
(Automatic trigger) at the hole, and the first item's edit applied as an editor applies it.

llama.cpp (llama-cpp-python from scripts/llamacpp-env, in a child process): the plain FIM
prompt (<prefix>64 lines before the cursor<suffix>16 lines after<middle>), greedy, up to the
same number of tokens as hearth's completion.max-tokens (64); for single-line holes the
answer is its first line (what llama.vim shows), see llama_answer().

Scores, each on the text as it would be inserted: exact (the filled file equals the original),
parses (Python: ast.parse; C++: clang++ -fsyntax-only), edit similarity to the answer
(difflib ratio), empty; and the latency of each answer.
"""
import argparse
import ast
import difflib
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "common"))   # bench/common, also when installed
from hearth_bench import (add_side_by_side_arguments, bench_error, busy_neighbour,  # noqa: E402
                          lsp_connection, run_on_daemon, sides_of)
DEFAULT_TASKS = os.path.join(HERE, "tasks-v1.jsonl")
SINGLE_LINE = ("line_start", "mid_line", "empty_line")
PREFIX_LINES, SUFFIX_LINES, MAX_TOKENS = 64, 16, 64   # hearth's completion defaults


def say(msg):
    print(f"bench quality: {msg}", file=sys.stderr, flush=True)


# --- tasks ----------------------------------------------------------------------------------

def load_tasks(path, limit, langs, kinds, skip=0):
    with open(path) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    if not lines or "version" not in lines[0]:
        raise bench_error(f"{path}: the first line must be the task list's header with its version")
    header, tasks = lines[0], lines[1:]
    tasks = [t for t in tasks if (not langs or t["lang"] in langs) and (not kinds or t["kind"] in kinds)]
    tasks = tasks[skip:]
    if limit:
        tasks = tasks[:limit]
    files = {}
    for t in tasks:
        p = t["path"]
        if not os.path.isabs(p):
            p = os.path.join(os.path.dirname(os.path.abspath(path)), p)
        if p not in files:
            try:
                data = open(p, "rb").read()
            except OSError as e:
                raise bench_error(f"task {t['id']}: cannot read {p}: {e.strerror}")
            if hashlib.sha256(data).hexdigest() != t["sha256"]:
                raise bench_error(f"task {t['id']}: {p} is not the file the task list was cut from (SHA-256 differs); "
                                  "regenerate the list with bench/quality/make_tasks.py")
            files[p] = data
        data = files[p]
        t["abs_path"] = p
        t["original"] = data.decode()
        t["doc"] = (data[:t["start"]] + data[t["end"]:]).decode()
        t["truth"] = data[t["start"]:t["end"]].decode()
        t["cursor"] = len(data[:t["start"]].decode())          # in characters of doc
    return header, tasks


def line_col_utf8(text, index):
    """LSP position (utf-8 encoding) of character index `index` in `text`."""
    line = text.count("\n", 0, index)
    start = text.rfind("\n", 0, index) + 1
    return line, len(text[start:index].encode())


def index_of(text, line, col_utf8):
    """Character index of an LSP position (utf-8 encoding); past the end of a line: its end."""
    pos = 0
    for _ in range(line):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    head = text[pos:end].encode()[:col_utf8].decode(errors="ignore")
    return pos + len(head)


def fim_window(doc, cursor):
    """The plain window: PREFIX_LINES whole lines before the cursor line, SUFFIX_LINES after."""
    start = cursor
    for _ in range(PREFIX_LINES + 1):
        start = doc.rfind("\n", 0, start)
        if start < 0:
            break
    start = 0 if start < 0 else start + 1
    end = cursor
    for _ in range(SUFFIX_LINES + 1):
        nl = doc.find("\n", end)
        if nl < 0:
            end = len(doc)
            break
        end = nl + 1
    return doc[start:cursor], doc[cursor:end]


# --- hearth through its LSP socket ----------------------------------------------------------

LANGUAGE_ID = {"python": "python", "cpp": "cpp"}


def ask_hearth(daemon, task, timeout_s):
    """One editor session on the task: the inserted text, the latency and any error."""
    conn = lsp_connection(daemon.socket, timeout_s)
    try:
        init = conn.request("initialize", {"processId": os.getpid(), "clientInfo": {"name": "hearth-bench-quality"},
                                           "capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
        if "error" in init:
            return {"error": f"initialize: {init['error']['message']}"}
        conn.send("initialized", {}, request=False)
        uri = "file://" + task["abs_path"]
        conn.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": LANGUAGE_ID[task["lang"]],
                                                            "version": 1, "text": task["doc"]}}, request=False)
        line, col = line_col_utf8(task["doc"], task["cursor"])
        t0 = time.perf_counter()
        reply = conn.request("textDocument/inlineCompletion",
                             {"textDocument": {"uri": uri}, "position": {"line": line, "character": col},
                              "context": {"triggerKind": 2}})
        ms = (time.perf_counter() - t0) * 1000
        if "error" in reply:
            return {"error": reply["error"]["message"], "ms": ms}
        items = (reply.get("result") or {}).get("items", []) if isinstance(reply.get("result"), dict) else (reply.get("result") or [])
        if not items:
            return {"filled": None, "inserted": "", "ms": ms}
        item = items[0]
        text = item["insertText"] if isinstance(item["insertText"], str) else item["insertText"]["value"]
        a = b = task["cursor"]
        if item.get("range"):
            r = item["range"]
            a = index_of(task["doc"], r["start"]["line"], r["start"]["character"])
            b = index_of(task["doc"], r["end"]["line"], r["end"]["character"])
        filled = task["doc"][:a] + text + task["doc"][b:]
        # What the user gets at the hole: the inserted text, seen against the original span.
        return {"filled": filled, "inserted": text, "ms": ms}
    finally:
        conn.close()


def run_hearth(args, tasks, workdir):
    return run_on_daemon(args, tasks, workdir, lambda daemon, t: ask_hearth(daemon, t, args.request_timeout), say)


def progress(side, i, n, r):
    if (i + 1) % 10 == 0 or i + 1 == n:
        say(f"{side}: {i + 1}/{n} tasks")


# --- llama.cpp (runs inside .venv-llamacpp as `run_quality.py --llama-worker SPEC`) -----------

def llama_worker(spec_path):
    import ctypes
    import llama_cpp as L

    @L.llama_log_callback
    def quiet(level, text, user_data):
        pass

    spec = json.load(open(spec_path))
    L.llama_log_set(quiet, ctypes.c_void_p(0))
    L.llama_backend_init()
    mparams = L.llama_model_default_params()
    mparams.n_gpu_layers = 0
    # No extra weight buffers (AMX, repacked layouts): on a VM that reports AMX, this build's
    # AMX path crashes in the first llama_decode of a Q4_K model. The answers do not depend on
    # the layout; only llama.cpp's speed does.
    mparams.use_extra_bufts = False
    model = L.llama_model_load_from_file(spec["model"].encode(), mparams)
    if not model:
        raise SystemExit(f"llama.cpp could not load {spec['model']}")
    vocab = L.llama_model_get_vocab(model)
    fim = [L.llama_vocab_fim_pre(vocab), L.llama_vocab_fim_suf(vocab), L.llama_vocab_fim_mid(vocab)]
    if min(fim) < 0:
        raise SystemExit(f"{spec['model']} has no fill-in-the-middle tokens")
    cparams = L.llama_context_default_params()
    cparams.n_ctx = 4096
    cparams.n_batch = 512
    cparams.n_ubatch = 512
    cparams.n_threads = spec["threads"]
    cparams.n_threads_batch = spec["threads"]
    ctx = L.llama_init_from_model(model, cparams)
    mem = L.llama_get_memory(ctx)
    n_vocab = L.llama_vocab_n_tokens(vocab)

    def tokenize(text):
        raw = text.encode()
        buf = (L.llama_token * (len(raw) + 16))()
        n = L.llama_tokenize(vocab, raw, len(raw), buf, len(buf), False, False)   # document text: no specials
        return list(buf[:n])

    def piece(tok):
        buf = ctypes.create_string_buffer(256)
        n = L.llama_token_to_piece(vocab, tok, buf, len(buf), 0, False)
        return buf.raw[:max(n, 0)]

    def decode(tokens):
        for i in range(0, len(tokens), 512):
            part = tokens[i:i + 512]
            arr = (L.llama_token * len(part))(*part)
            if L.llama_decode(ctx, L.llama_batch_get_one(arr, len(part))) != 0:
                raise SystemExit("llama_decode failed")

    for task in spec["tasks"]:
        t0 = time.perf_counter()
        L.llama_memory_clear(mem, True)
        prompt = [fim[0]] + tokenize(task["prefix"]) + [fim[1]] + tokenize(task["suffix"]) + [fim[2]]
        decode(prompt)
        out = b""
        for _ in range(spec["max_tokens"]):
            logits = L.llama_get_logits_ith(ctx, -1)
            tok = int_argmax(logits, n_vocab)
            if L.llama_vocab_is_eog(vocab, tok) or L.llama_vocab_is_control(vocab, tok):
                break
            out += piece(tok)
            if task["single_line"] and b"\n" in out:
                break
            decode([tok])
        print(json.dumps({"id": task["id"], "raw": out.decode(errors="replace"), "ms": (time.perf_counter() - t0) * 1000}),
              flush=True)
    L.llama_free(ctx)
    L.llama_model_free(model)


def int_argmax(logits, n):
    import numpy as np
    return int(np.argmax(np.ctypeslib.as_array(logits, shape=(n,))))


def run_llama(args, tasks, workdir):
    spec = {"model": args.model, "threads": args.threads or len(os.sched_getaffinity(0)), "max_tokens": MAX_TOKENS,
            "tasks": []}
    for t in tasks:
        prefix, suffix = fim_window(t["doc"], t["cursor"])
        spec["tasks"].append({"id": t["id"], "prefix": prefix, "suffix": suffix, "single_line": t["kind"] in SINGLE_LINE})
    spec_path = os.path.join(workdir, "llama-spec.json")
    json.dump(spec, open(spec_path, "w"))
    proc = subprocess.Popen([args.llama_python, os.path.abspath(__file__), "--llama-worker", spec_path],
                            stdout=subprocess.PIPE, text=True)
    out = {}
    for line in proc.stdout:
        r = json.loads(line)
        out[r["id"]] = r
        progress("llama.cpp", len(out) - 1, len(tasks), r)
    if proc.wait() != 0:
        raise bench_error(f"the llama.cpp worker exited with {proc.returncode}")
    for t in tasks:
        r = out[t["id"]]
        d = t["doc"]
        r["inserted"] = llama_answer(r["raw"], d, t["cursor"], t["kind"] in SINGLE_LINE)
        r["filled"] = d[:t["cursor"]] + r["inserted"] + d[t["cursor"]:] if r["inserted"] else None
    return out


def llama_answer(raw, doc, cursor, single_line):
    """What an editor shows of llama.cpp's raw generation, as llama.vim does: for a single-line
    hole its first line, for a multi-line one the text without its trailing blank lines. The
    first line keeps its newline when there is text after the cursor on the cursor line (a
    whole line typed in front of existing text needs one: without it the two lines glue)."""
    if not single_line:
        return raw.rstrip()
    line, newline, _ = raw.partition("\n")
    line = line.rstrip()
    rest_of_line = doc[cursor:doc.find("\n", cursor) if "\n" in doc[cursor:] else len(doc)]
    return line + "\n" if line and newline and rest_of_line.strip() else line

# --- scoring --------------------------------------------------------------------------------

class syntax_checker:
    """Whether a filled file still parses; a file equal to the original is known to. (An empty
    answer scores as not parsing: the file with the hole left open often parses, but nothing
    was written.)"""

    def __init__(self):
        self.cache = {}

    def __call__(self, task, filled):
        if filled is None:
            filled = task["doc"]
        if filled == task["original"]:
            return True
        key = (task["lang"], task["abs_path"], hashlib.sha256(filled.encode()).hexdigest())
        if key not in self.cache:
            self.cache[key] = self.python(filled) if task["lang"] == "python" else self.cpp(filled, task["abs_path"])
        return self.cache[key]

    @staticmethod
    def python(text):
        try:
            ast.parse(text)
            return True
        except (SyntaxError, ValueError):
            return False

    @staticmethod
    def cpp(text, path):
        try:
            r = subprocess.run(["clang++", "-fsyntax-only", "-std=c++17", "-w", "-x", "c++", "-iquote",
                                os.path.dirname(path), "-"], input=text.encode(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=120)
        except subprocess.TimeoutExpired:
            return False
        return r.returncode == 0


def score(task, r, parses):
    if "error" in r:
        return {"id": task["id"], "error": r["error"], "exact": False, "diagnosis": "empty", "parses": False,
                "similarity": 0.0, "empty": True, "ms": r.get("ms")}
    inserted = r["inserted"]
    filled = r["filled"]
    exact = filled == task["original"]
    return {"id": task["id"], "inserted": inserted, "exact": exact, "diagnosis": diagnose(inserted, task["truth"], exact),
            "parses": inserted != "" and parses(task, filled), "similarity": difflib.SequenceMatcher(None, inserted, task["truth"]).ratio(),
            "empty": inserted == "", "ms": r["ms"]}


DIAGNOSES = ("exact", "empty", "newline", "short", "long", "other")


def diagnose(inserted, truth, exact):
    """How an answer relates to the expected text: exact; empty; newline (equal but for
    whitespace at its ends, e.g. a whole line without its newline); short (a strict prefix of
    the expected text: cut early); long (the expected text and more); other."""
    if exact:
        return "exact"
    if not inserted:
        return "empty"
    if inserted.strip() == truth.strip():
        return "newline"
    if truth.startswith(inserted) or truth.strip().startswith(inserted.strip()):
        return "short"
    if inserted.startswith(truth) or inserted.strip().startswith(truth.strip()):
        return "long"
    return "other"


def summarize(scores, tasks):
    by_id = {t["id"]: t for t in tasks}
    groups = {"all": list(scores), "single_line": [], "multi_line": []}
    for s in scores:
        t = by_id[s["id"]]
        groups["single_line" if t["kind"] in SINGLE_LINE else "multi_line"].append(s)
        groups.setdefault(t["lang"], []).append(s)
        groups.setdefault(t["kind"], []).append(s)
    out = {}
    for name, g in groups.items():
        if not g:
            continue
        ms = [s["ms"] for s in g if s.get("ms") is not None]
        out[name] = {"n": len(g), "exact": sum(s["exact"] for s in g) / len(g),
                     "parses": sum(s["parses"] for s in g) / len(g),
                     "similarity": sum(s["similarity"] for s in g) / len(g),
                     "non_empty": sum(not s["empty"] for s in g) / len(g),
                     "errors": sum("error" in s for s in g),
                     "diagnoses": {d: sum(s.get("diagnosis") == d for s in g) for d in DIAGNOSES},
                     "ms_median": statistics.median(ms) if ms else None,
                     "ms_p90": sorted(ms)[min(len(ms) - 1, int(0.9 * len(ms)))] if ms else None}
    return out


def print_diagnoses(summaries):
    print("answers that are not exact, by how they differ (single-line / multi-line):")
    for side, summ in summaries.items():
        parts = []
        for d in DIAGNOSES[1:]:
            parts.append(f"{d} {summ.get('single_line', {}).get('diagnoses', {}).get(d, 0)}/"
                         f"{summ.get('multi_line', {}).get('diagnoses', {}).get(d, 0)}")
        print(f"  {side:<10} " + ", ".join(parts))


def print_table(summaries):
    rows = ["all", "single_line", "multi_line", "python", "cpp", "line_start", "mid_line", "empty_line", "block", "function"]
    print(f"{'group':<12} {'side':<10} {'n':>4} {'exact':>7} {'parses':>7} {'sim':>6} {'non-empty':>9} {'ms p50':>8} {'ms p90':>8}")
    for row in rows:
        for side, summ in summaries.items():
            s = summ.get(row)
            if not s:
                continue
            p50 = f"{s['ms_median']:.0f}" if s["ms_median"] is not None else "-"
            p90 = f"{s['ms_p90']:.0f}" if s["ms_p90"] is not None else "-"
            print(f"{row:<12} {side:<10} {s['n']:>4} {100 * s['exact']:>6.1f}% {100 * s['parses']:>6.1f}% "
                  f"{s['similarity']:>6.3f} {100 * s['non_empty']:>8.1f}% {p50:>8} {p90:>8}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth", required=True, help="the hearth executable")
    ap.add_argument("--model", required=True, help="GGUF model file")
    ap.add_argument("--tasks", default=DEFAULT_TASKS, help="task list (JSON lines; default: the committed v1 list)")
    ap.add_argument("--limit", type=int, default=80, help="first N tasks of the list (0: all)")
    ap.add_argument("--skip", type=int, default=0, help="leave out the list's first N tasks (with --limit: a later slice)")
    ap.add_argument("--lang", action="append", default=[], help="only this language (python, cpp); repeatable")
    ap.add_argument("--kind", action="append", default=[], help="only this kind; repeatable")
    add_side_by_side_arguments(ap, ROOT, request_timeout_s=120)
    args = ap.parse_args()
    sides = sides_of(args)
    header, tasks = load_tasks(args.tasks, args.limit, args.lang, args.kind, args.skip)
    if not tasks:
        raise bench_error("no task matches")
    say(f"{len(tasks)} tasks from {args.tasks} (version {header['version']}, seed {header['seed']}); model {args.model}"
        + ("; busy neighbour" if args.busy else "") + "".join(f"; {s}" for s in args.setting))
    parses = syntax_checker()
    results, summaries, hearth_status = {}, {}, None
    with tempfile.TemporaryDirectory(prefix="hearth-bench-quality-") as workdir:
        for side in sides:
            wall0 = time.monotonic()
            if args.busy:
                with busy_neighbour():
                    answers = run_hearth(args, tasks, workdir) if side == "hearth" else run_llama(args, tasks, workdir)
            else:
                answers = run_hearth(args, tasks, workdir) if side == "hearth" else run_llama(args, tasks, workdir)
            if side == "hearth":
                hearth_status = answers.pop("status")
            results[side] = [score(t, answers[t["id"]], parses) for t in tasks]
            summaries[side] = summarize(results[side], tasks)
            say(f"{side}: done in {time.monotonic() - wall0:.0f} s")
    if args.verbose:
        for i, t in enumerate(tasks):
            print(f"--- {t['id']} {t['lang']}/{t['kind']} {t['abs_path']}  expected {t['truth']!r}")
            for side in sides:
                s = results[side][i]
                print(f"    {side:<10} {'exact ' if s['exact'] else 'parses' if s['parses'] else 'FAILS '} "
                      f"{s.get('inserted', s.get('error'))!r}")
    print_table(summaries)
    print_diagnoses(summaries)
    if args.json:
        doc = {"task_list": {"path": args.tasks, **header}, "tasks_run": len(tasks), "model": args.model,
               "busy_neighbour": args.busy, "settings": args.setting, "summary": summaries, "hearth_status": hearth_status,
               "tasks": [{"id": t["id"], "lang": t["lang"], "kind": t["kind"], "path": t["abs_path"],
                          "expected": t["truth"], **{side: results[side][i] for side in sides}}
                         for i, t in enumerate(tasks)]}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--llama-worker":
        llama_worker(sys.argv[2])
        sys.exit(0)
    try:
        main()
    except bench_error as e:
        say(f"error: {e}")
        sys.exit(1)
