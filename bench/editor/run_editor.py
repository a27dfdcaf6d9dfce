#!/usr/bin/env python3
"""`hearth bench editor`: what a user meets when opening a file and starting to type, through the
daemon's real LSP path as VS Code drives it, beside llama.cpp's server as llama.vim drives it.

Per file (pick_files.py: the Python standard library and the Boost headers, seeded), the
document is opened with its target line reduced to its indentation and the next line gone:
  0 ms     didOpen, the cursor at the end of the target line's indentation
  250 ms   the cursor rests: hearth/cursorRest (an editor plugin sends it after a 250 ms debounce;
           a daemon that does not know it ignores it) / llama.vim's ring warm-up (n_predict 0)
  1000 ms  burst 1: the truth's first 3 characters, 120 ms apart, each a didChange and an
           inlineCompletion (Automatic); a keystroke first cancels the request still unanswered
           ($/cancelRequest, as VS Code does). The answer to the last keystroke is measured.
  +500 ms  burst 2: 3 more characters on the same line
           the rest of the line in one change (an accept), then a newline and the next line's
           indentation in another (no request for either, on both sides)
  +250 ms  the cursor rests on the new line: hearth/cursorRest / llama.vim's ring warm-up
  +300 ms  burst 3: the next line's first 3 characters
  didClose
Measured per burst: the time from the last keystroke to its suggestion, the suggestion's first
line (non-empty? the rest of the line exactly?), and the tokens the model evaluated from just
before the burst to its answer (hearth/status cacheTokensEvaluated; the slot's own count).

The sides alternate file by file (hearth first on even files, llama.cpp first on odd ones), so a
change in the machine's load lands on both; each side waits for the other to go idle. Both keep
their state from file to file: one daemon and one editor connection (initialize once, a didClose
per file), one llama.cpp slot and one llama.vim.
"""
import argparse
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
from hearth_bench import (add_side_by_side_arguments, bench_error, busy_neighbour, hearth_daemon,  # noqa: E402
                          lsp_connection, sides_of)
import llama_vim  # noqa: E402
import pick_files  # noqa: E402

REST_S, FIRST_KEY_S, KEY_GAP_S, PAUSE_2_S, PAUSE_3_S = 0.250, 1.000, 0.120, 0.500, 0.300
KEYS_PER_BURST = 3


def say(msg):
    print(f"bench editor: {msg}", file=sys.stderr, flush=True)


def utf16_len(s):
    return len(s.encode("utf-16-le")) // 2


def utf16_to_index(line, col16):
    n = 0
    for i, c in enumerate(line):
        if n >= col16:
            return i
        n += 2 if ord(c) > 0xFFFF else 1
    return len(line)


# --- hearth through its LSP socket, as VS Code --------------------------------------------------

class hearth_editor:
    """One VS Code window on the daemon: one connection for the whole run."""

    def __init__(self, daemon, timeout_s):
        self.daemon = daemon
        self.conn = lsp_connection(daemon.socket, timeout_s)
        self.records = {}
        self.latest = None
        init = self.call("initialize", {"processId": os.getpid(), "clientInfo": {"name": "hearth-bench-editor"},
                                        "capabilities": {"general": {"positionEncodings": ["utf-16"]}}})
        if "error" in init:
            raise bench_error(f"initialize: {init['error']['message']}")
        self.conn.send("initialized", {}, request=False)

    def call(self, method, params):
        rid = self.conn.send(method, params)
        while True:
            m = self.conn.read_message()
            if m.get("id") == rid and "method" not in m:
                return m
            self.on_message(m)

    def on_message(self, m):
        if "method" in m:
            if "id" in m:   # a request of the server's (progress, configuration): a plain answer
                self.conn.reply(m["id"], None)
            return
        r = self.records.get(m.get("id"))
        if r is not None and "answered" not in r:
            r["answered"] = time.monotonic()
            r["reply"] = m

    def pump(self, deadline, until=None):
        while not (until and until()):
            left = deadline - time.monotonic()
            if left <= 0:
                return
            m = self.conn.poll(left)
            if m is not None:
                self.on_message(m)

    def open(self, f):
        self.f, self.lines = f, pick_files.opened_lines(f)
        self.y, self.x = f["line"] - 1, len(f["indent"])
        self.uri, self.version = "file://" + f["path"], 1
        self.conn.send("textDocument/didOpen", {"textDocument": {"uri": self.uri, "languageId": f["lang"], "version": 1,
                                                                 "text": "\n".join(self.lines)}}, request=False)

    def position(self):
        return {"line": self.y, "character": utf16_len(self.lines[self.y][:self.x])}

    def cursor_rest(self):
        self.conn.send("hearth/cursorRest", {"textDocument": {"uri": self.uri}, "position": self.position()}, request=False)

    def type(self, text, request=True, burst=None):
        if self.latest is not None and "answered" not in self.records[self.latest]:
            self.conn.send("$/cancelRequest", {"id": self.latest}, request=False)
            self.records[self.latest]["cancel_sent"] = time.monotonic()
        start = self.position()
        head, tail = self.lines[self.y][:self.x], self.lines[self.y][self.x:]
        parts = (head + text).split("\n")
        self.lines[self.y:self.y + 1] = parts[:-1] + [parts[-1] + tail]
        self.y, self.x = self.y + len(parts) - 1, len(parts[-1])
        self.version += 1
        self.conn.send("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": self.version},
                                                  "contentChanges": [{"range": {"start": start, "end": start},
                                                                      "text": text}]}, request=False)
        if not request:
            return None
        rid = self.conn.send("textDocument/inlineCompletion",
                             {"textDocument": {"uri": self.uri}, "position": self.position(),
                              "context": {"triggerKind": 2, "selectedCompletionInfo": None}})
        self.records[rid] = {"id": rid, "burst": burst, "sent": time.monotonic(), "line": self.y, "col": self.x,
                             "line_text": self.lines[self.y]}
        self.latest = rid
        return rid

    def answer(self, rid, timeout_s):
        r = self.records[rid]
        self.pump(time.monotonic() + timeout_s, until=lambda: "answered" in r)
        if "answered" not in r:
            return {"error": f"no answer within {timeout_s:.0f} s", "ms": None, "shown": ""}
        reply = r["reply"]
        ms = (r["answered"] - r["sent"]) * 1000
        if "error" in reply:
            return {"error": reply["error"].get("message", str(reply["error"])), "ms": ms, "shown": ""}
        result = reply.get("result")
        items = result.get("items", []) if isinstance(result, dict) else (result or [])
        if not items:
            return {"ms": ms, "shown": "", "line": r["line_text"]}
        item = items[0]
        text = item["insertText"] if isinstance(item["insertText"], str) else item["insertText"]["value"]
        line = r["line_text"]
        a = b = r["col"]
        if item.get("range"):
            rng = item["range"]
            if rng["start"]["line"] == r["line"]:
                a = utf16_to_index(line, rng["start"]["character"])
            if rng["end"]["line"] == r["line"]:
                b = utf16_to_index(line, rng["end"]["character"])
        new_line = (line[:a] + text + line[b:]).split("\n", 1)[0]
        return {"ms": ms, "shown": text.split("\n", 1)[0], "insert_text": text, "line": new_line}

    def tokens_evaluated(self):
        return (self.call("hearth/status", {}).get("result") or {}).get("cacheTokensEvaluated")

    def status(self):
        return self.call("hearth/status", {}).get("result")

    def close(self):
        self.conn.send("textDocument/didClose", {"textDocument": {"uri": self.uri}}, request=False)

    def settle(self, timeout_s=10):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            s = self.status() or {}
            if not s.get("jobsRunning") and not s.get("queueDepth") and not s.get("requestsInFlight"):
                return
            self.pump(time.monotonic() + 0.05)

    def requests_of_file(self):
        out = []
        for r in self.records.values():
            reply = r.get("reply", {})
            out.append({"id": r["id"], "burst": r["burst"], "line": r["line"], "col": r["col"],
                        "ms": (r["answered"] - r["sent"]) * 1000 if "answered" in r else None,
                        "cancelled_by_client": "cancel_sent" in r,
                        "error": (reply.get("error") or {}).get("message"),
                        "items": len((reply.get("result") or {}).get("items", [])) if isinstance(reply.get("result"), dict)
                        else len(reply.get("result") or [])})
        self.records = {}
        self.latest = None
        return out

    def shutdown(self):
        self.conn.close()


# --- llama.cpp: llama_slot.py driven by llama_vim.py ----------------------------------------------

class llama_editor:
    """Vim with llama.vim on one llama-server slot."""

    def __init__(self, args, workdir):
        spec = os.path.join(workdir, "llama-slot.json")
        json.dump({"model": args.model, "threads": args.threads or len(os.sched_getaffinity(0))}, open(spec, "w"))
        self.proc = subprocess.Popen([args.llama_python, os.path.join(HERE, "llama_slot.py"), spec],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.vim = llama_vim.llama_vim(self.proc, args.seed)
        deadline = time.monotonic() + 120
        while True:
            msgs = self.vim.read_ready(deadline - time.monotonic())
            if any(m.get("ready") for m in msgs):
                break
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise bench_error("the llama.cpp slot did not start (see above)")

    def pump(self, deadline, until=None):
        v = self.vim
        while not (until and until()):
            step = min(deadline, time.monotonic() + 0.02) if until else deadline
            v.pump(step)
            if time.monotonic() >= deadline:
                return

    def open(self, f):
        self.f = f
        self.vim.open(pick_files.opened_lines(f), f["line"] - 1, len(f["indent"]), os.path.basename(f["path"]))
        self.n_requests = len(self.vim.requests)
        self.n_shown = len(self.vim.shown)

    def cursor_rest(self):
        self.vim.cursor_rest()

    def type(self, text, request=True, burst=None):
        t = time.monotonic()
        self.vim.type(text, request)
        return {"t": t, "line": self.vim.y, "col": self.vim.x, "line_text": self.vim.lines[self.vim.y], "burst": burst}

    def answer(self, key, timeout_s):
        def shown():
            return next((s for s in self.vim.shown[self.n_shown:]
                         if s["t"] >= key["t"] and (s["line"], s["col"]) == (key["line"], key["col"])), None)
        self.pump(time.monotonic() + timeout_s, until=lambda: shown() is not None)
        s = shown()
        if s is None:
            return {"error": f"nothing shown within {timeout_s:.0f} s", "ms": None, "shown": ""}
        return {"ms": (s["t"] - key["t"]) * 1000, "shown": s["first_line"], "insert_text": s["text"],
                "line": key["line_text"][:key["col"]] + s["first_line"]}

    def tokens_evaluated(self):
        return self.vim.evaluated

    def close(self):
        pass

    def settle(self, timeout_s=30):
        self.pump(time.monotonic() + timeout_s, until=self.vim.idle)

    def requests_of_file(self):
        t0 = self.vim.requests[self.n_requests]["sent"] if len(self.vim.requests) > self.n_requests else 0
        out = [{"kind": r["kind"], "speculative": r["speculative"], "line": r["line"], "col": r["col"], "sent_ms": (r["sent"] - t0) * 1000,
                "ms": (r["answered"] - r["sent"]) * 1000 if "answered" in r else None,
                **{k: r.get(k) for k in ("prompt_n", "cached", "predicted_n", "prompt_ms", "predicted_ms")},
                "first_line": r.get("content", "").split("\n", 1)[0] if "content" in r else None}
               for r in self.vim.requests[self.n_requests:]]
        return out

    def shutdown(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# --- the scenario ---------------------------------------------------------------------------------

def run_file(side, f, timeout_s):
    """One file on one side, on the timeline of the module's docstring; the three bursts' answers."""
    t0 = time.monotonic()
    side.open(f)
    side.pump(t0 + REST_S)
    side.cursor_rest()
    side.pump(t0 + FIRST_KEY_S)
    truth, truth_next = f["truth"], f["truth_next"]
    bursts = []

    def burst(n, chars, full_line):
        before = side.tokens_evaluated()
        key = None
        for k, ch in enumerate(chars):
            if k:
                side.pump(key_t + KEY_GAP_S)
            key_t = time.monotonic()
            key = side.type(ch, burst=n)
        a = side.answer(key, timeout_s)
        a["tokens"] = (side.tokens_evaluated() - before) if before is not None else None
        a["burst"] = n
        a["expected"] = full_line
        a["non_empty"] = bool(a.get("shown", "").strip())
        a["exact"] = "error" not in a and a["non_empty"] and a.get("line", "").rstrip() == full_line.rstrip()
        bursts.append(a)

    k = KEYS_PER_BURST
    burst(1, truth[:k], f["indent"] + truth)
    side.pump(time.monotonic() + PAUSE_2_S)
    burst(2, truth[k:2 * k], f["indent"] + truth)
    side.type(truth[2 * k:], request=False)
    side.type("\n" + f["indent_next"], request=False)
    # On a new line the cursor rests again: the plugins report it after their debounce.
    moved = time.monotonic()
    side.pump(moved + REST_S)
    side.cursor_rest()
    side.pump(moved + PAUSE_3_S)
    burst(3, truth_next[:k], f["indent_next"] + truth_next)
    side.close()
    wall = time.monotonic() - t0
    side.settle()
    return {"bursts": bursts, "requests": side.requests_of_file(), "wall_s": wall}


def percentile(xs, q):
    xs = sorted(x for x in xs if x is not None)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(per_file):
    answers = [b for r in per_file for b in r["bursts"]]
    first = [b["ms"] for b in answers if b["burst"] == 1]
    typing = [b["ms"] for b in answers if b["burst"] > 1]
    out = {"n_files": len(per_file), "n_answers": len(answers),
           "first_ms_median": median(first), "first_ms_p90": percentile(first, 0.9),
           "typing_ms_median": median(typing), "typing_ms_p90": percentile(typing, 0.9),
           "tokens_median": median([b["tokens"] for b in answers]),
           "non_empty": sum(b["non_empty"] for b in answers) / len(answers) if answers else None,
           "exact": sum(b["exact"] for b in answers) / len(answers) if answers else None,
           "errors": sum("error" in b for b in answers), "bursts": {}}
    for n in (1, 2, 3):
        g = [b for b in answers if b["burst"] == n]
        if g:
            out["bursts"][n] = {"ms_median": median([b["ms"] for b in g]), "ms_p90": percentile([b["ms"] for b in g], 0.9),
                                "tokens_median": median([b["tokens"] for b in g]),
                                "non_empty": sum(b["non_empty"] for b in g) / len(g), "exact": sum(b["exact"] for b in g) / len(g)}
    return out


def fmt(x, spec=".0f"):
    return "-" if x is None else format(x, spec)


def print_report(summaries, machine):
    print(f"machine: {machine['cpu']}, {machine['cpus']} CPUs; load average {machine['load_start']} at start, "
          f"{machine['load_end']} at end" + ("; busy neighbour on one core" if machine["busy"] else ""))
    print(f"model: {machine['model']}; settings: {', '.join(machine['settings']) or 'all defaults'}")
    print(f"{'side':<10} {'files':>5} {'first p50':>9} {'first p90':>9} {'typing p50':>10} {'typing p90':>10} "
          f"{'tok/answer':>10} {'non-empty':>9} {'exact':>6} {'errors':>6}")
    for side, s in summaries.items():
        print(f"{side:<10} {s['n_files']:>5} {fmt(s['first_ms_median']):>9} {fmt(s['first_ms_p90']):>9} "
              f"{fmt(s['typing_ms_median']):>10} {fmt(s['typing_ms_p90']):>10} {fmt(s['tokens_median']):>10} "
              f"{fmt(s['non_empty'] and 100 * s['non_empty'], '.0f'):>8}% {fmt(s['exact'] and 100 * s['exact'], '.0f'):>5}% "
              f"{s['errors']:>6}")
    print("per burst (1: first suggestion after open; 2: typing on, same line; 3: the next line), ms p50/p90, "
          "tokens p50, non-empty, exact:")
    for side, s in summaries.items():
        print(f"  {side:<10} " + "; ".join(f"{n}: {fmt(b['ms_median'])}/{fmt(b['ms_p90'])} ms, {fmt(b['tokens_median'])} tok, "
                                         f"{100 * b['non_empty']:.0f}%, {100 * b['exact']:.0f}%"
                                         for n, b in s["bursts"].items()))
    if "hearth" in summaries and "llama.cpp" in summaries:
        h, l = summaries["hearth"]["first_ms_median"], summaries["llama.cpp"]["first_ms_median"]
        if h and l:
            print(f"first suggestion after open, median, hearth / llama.cpp: {h / l:.2f}")
        h, l = summaries["hearth"]["typing_ms_median"], summaries["llama.cpp"]["typing_ms_median"]
        if h and l:
            print(f"typing on, median, hearth / llama.cpp: {h / l:.2f}")


def machine_cpu():
    try:
        out = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True, env=dict(os.environ, LC_ALL="C")).stdout
        return next(l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name"))
    except (OSError, StopIteration):
        return "unknown CPU"


def run(args, files, sides, workdir):
    editors = {}
    daemon = None
    per_side = {s: [] for s in sides}
    hearth_status = None
    try:
        if "hearth" in sides:
            daemon = hearth_daemon(args.hearth, args.model, workdir, args.daemon_arg, "debug" if args.daemon_log else "warn",
                                   args.setting)
            editors["hearth"] = hearth_editor(daemon, args.request_timeout)
        if "llama.cpp" in sides:
            editors["llama.cpp"] = llama_editor(args, workdir)
        for i, f in enumerate(files):
            order = sides if i % 2 == 0 else list(reversed(sides))
            for side in order:
                try:
                    r = run_file(editors[side], f, args.request_timeout)
                except (OSError, bench_error) as e:
                    if daemon and daemon.proc.poll() is not None:
                        raise bench_error(f"hearth daemon died on {f['path']}: {daemon.log_tail()}")
                    raise bench_error(f"{side} on {f['path']}: {e}")
                per_side[side].append(r)
                b = r["bursts"]
                say(f"{i + 1}/{len(files)} {side}: {os.path.basename(f['path'])}:{f['line']} "
                    + ", ".join(f"{x['ms']:.0f} ms" if x["ms"] is not None else "none" for x in b)
                    + (" " + " ".join("exact" if x["exact"] else ("shown" if x["non_empty"] else "empty") for x in b)))
                if args.verbose:
                    for x in b:
                        print(f"    burst {x['burst']} {side:<10} {(x.get('line') or '').strip()!r}  "
                              f"expected {x['expected'].strip()!r}" + (f"  ({x['error']})" if "error" in x else ""))
        if "hearth" in editors:
            hearth_status = editors["hearth"].status()
    finally:
        for e in editors.values():
            try:
                e.shutdown()
            except (OSError, bench_error, ValueError):
                pass
        if daemon:
            daemon.stop()
            if args.daemon_log:
                with open(args.daemon_log, "w") as out:
                    out.write(open(daemon.log.name).read())
    return per_side, hearth_status


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth", required=True, help="the hearth executable")
    ap.add_argument("--model", required=True, help="GGUF model file (both sides)")
    ap.add_argument("--files", type=int, default=20, help="how many files, half Python, half C++ (default 20; "
                    "with --file-list: the list's first N, 0: all)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the choice of files and lines (default 1)")
    ap.add_argument("--file-list", help="the files to open instead of the system's: PATH [LINE [SHA256]] per line")
    add_side_by_side_arguments(ap, ROOT, request_timeout_s=60)
    args = ap.parse_args()
    sides = sides_of(args)
    try:
        files = (pick_files.pick_listed_files(args.file_list, args.files, args.seed) if args.file_list
                 else pick_files.pick_system_files(args.files, args.seed))
    except pick_files.pick_error as e:
        raise bench_error(str(e))
    machine = {"cpu": machine_cpu(), "cpus": len(os.sched_getaffinity(0)),
               "load_start": " ".join(f"{x:.2f}" for x in os.getloadavg()), "busy": args.busy, "model": args.model,
               "settings": args.setting}
    say(f"{len(files)} files (seed {args.seed}); sides {', '.join(sides)}; model {args.model}"
        + ("; busy neighbour" if args.busy else "") + "".join(f"; {s}" for s in args.setting))
    wall0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hearth-bench-editor-") as workdir:
        if args.busy:
            with busy_neighbour():
                per_side, hearth_status = run(args, files, sides, workdir)
        else:
            per_side, hearth_status = run(args, files, sides, workdir)
    machine["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    machine["wall_s"] = time.monotonic() - wall0
    summaries = {side: summarize(per_side[side]) for side in sides}
    print_report(summaries, machine)
    say(f"done in {machine['wall_s']:.0f} s")
    if args.json:
        doc = {"machine": machine, "seed": args.seed, "sides": sides, "summary": summaries, "hearth_status": hearth_status,
               "timeline_ms": {"cursor_rest": REST_S * 1000, "first_key": FIRST_KEY_S * 1000, "key_gap": KEY_GAP_S * 1000,
                               "pause_burst_2": PAUSE_2_S * 1000, "pause_burst_3": PAUSE_3_S * 1000},
               "files": [{"path": f["path"], "line": f["line"], "sha256": f["sha256"], "lang": f["lang"],
                          "truth": f["truth"], "truth_next": f["truth_next"],
                          **{side: per_side[side][i] for side in sides}} for i, f in enumerate(files)]}
        with open(args.json, "w") as out:
            json.dump(doc, out, indent=1)


if __name__ == "__main__":
    try:
        main()
    except bench_error as e:
        say(f"error: {e}")
        sys.exit(1)
