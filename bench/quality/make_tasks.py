#!/usr/bin/env python3
"""Cuts fill-in-the-middle tasks out of real code on this machine, at a fixed seed.

Python tasks come from the standard library (/usr/lib/python3.X), C++ tasks from the Boost
headers (/usr/include/boost). A task is one span [start, end) of a source file: the editor
holds the file with that span removed and the cursor where it was; the span is the answer.
Five kinds:

  line_start   a whole line, newline included, removed; the cursor at the start of the
               (non-empty) line that follows it
  mid_line     the rest of a line after a typed prefix that ends at a token boundary
  empty_line   a line's text removed, its newline kept: the cursor on an empty line
  block        the body of an if/for/while/with (Python) or of a braced control statement
               (C++), the cursor at the end of its header line (after `:` or `{`)
  function     a function's body (after its docstring), the cursor on the empty line left

The task list records only paths, offsets and the file's SHA-256, never the code itself; the
bench reads the files and refuses one whose hash differs. A C++ file is used only when
`clang++ -fsyntax-only` accepts it as it is, so a filled file that fails is the answer's fault.

  make_tasks.py --out bench/quality/tasks-v1.jsonl            (the committed list)
  make_tasks.py --python-root DIR --cpp-root DIR --per-kind N --seed S --out FILE
"""
import argparse
import ast
import hashlib
import io
import json
import os
import random
import re
import subprocess
import sys
import tokenize

VERSION = 1
KINDS = ("line_start", "mid_line", "empty_line", "block", "function")
SKIP_DIRS = {"test", "tests", "idlelib", "lib2to3", "site-packages", "dist-packages", "__pycache__",
             "turtledemo", "ensurepip", "__phello__", "encodings", "pydoc_data"}


def default_python_root():
    return f"/usr/lib/python3.{sys.version_info.minor}"


def source_files(root, suffix):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("config-"))
        out += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(suffix)]
    return sorted(out)


class source:
    """A file's text with the byte offsets of its lines (offsets count UTF-8 bytes)."""

    def __init__(self, path):
        self.path = path
        self.data = open(path, "rb").read()
        self.text = self.data.decode("utf-8")
        self.lines = self.text.split("\n")          # without their newlines
        self.line_offset = []                        # byte offset where each line starts
        pos = 0
        for line in self.lines:
            self.line_offset.append(pos)
            pos += len(line.encode()) + 1
        self.sha256 = hashlib.sha256(self.data).hexdigest()

    def line_end(self, i):
        """Byte offset of line i's newline (0-based)."""
        return self.line_offset[i] + len(self.lines[i].encode())


def indent_of(line):
    return len(line) - len(line.lstrip(" \t"))


# --- Python ---------------------------------------------------------------------------------

COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
            ast.With, ast.AsyncWith, ast.Try, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def is_docstring(node):
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def python_candidates(src):
    """{kind: [(start, end), ...]} for one Python file (lines are 1-based in ast)."""
    try:
        tree = ast.parse(src.text)
    except SyntaxError:
        return {}
    cands = {k: [] for k in KINDS}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, COMPOUND) and not is_docstring(node):
            i = node.lineno - 1
            line = src.lines[i]
            body = line.strip()
            # One statement alone on its line, starting it.
            if node.end_lineno != node.lineno or node.col_offset != indent_of(line) or not 6 <= len(body) <= 100:
                continue
            if ast.get_source_segment(src.text, node) != body:
                continue
            if i + 1 < len(src.lines) and src.lines[i + 1].strip():
                cands["line_start"].append((src.line_offset[i], src.line_offset[i + 1]))
            cands["empty_line"].append((src.line_offset[i], src.line_end(i)))
            for cut in python_token_cuts(body):
                head = line[:indent_of(line)] + body[:cut]
                cands["mid_line"].append((src.line_offset[i] + len(head.encode()), src.line_end(i)))
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With)) and node.body:
            h = node.lineno - 1
            first, last = node.body[0].lineno - 1, node.body[-1].end_lineno - 1
            if first == h + 1 and src.lines[h].rstrip().endswith(":") and 2 <= last - h <= 6:
                cands["block"].append((src.line_end(h), src.line_end(last)))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body[1:] if is_docstring(node.body[0]) else node.body
            if not body:
                continue
            first, last = body[0].lineno - 1, node.end_lineno - 1
            if body[0].col_offset == indent_of(src.lines[first]) and 2 <= last - first + 1 <= 8:
                cands["function"].append((src.line_offset[first], src.line_end(last)))
    return cands


def python_token_cuts(stmt):
    """Character offsets in `stmt` after a token, leaving at least 4 characters to write."""
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(stmt).readline)
                if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    return [t.end[1] for t in toks[:-1] if len(stmt[t.end[1]:].strip()) >= 4]


# --- C++ ------------------------------------------------------------------------------------

def mask_cpp(text):
    """`text` with comments, string and character literals and preprocessor lines blanked
    (newlines kept), so braces and semicolons can be counted on code alone."""
    out = list(text)
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            while i < n and text[i] != "\n":             # a directive, with its continuations
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out[i] = " "
                    i += 2
                    continue
                out[i] = " "
                i += 1
            continue
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c not in " \t":
            at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if text[k] != "\n":
                    out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


CONTROL = re.compile(r"^(if|for|while|switch|else|do|try|catch)\b")
NOT_FUNCTION = re.compile(r"\b(if|for|while|switch|catch|namespace|class|struct|union|enum|return)\b|=")
CPP_TOKEN = re.compile(r"\w+|::|->|[^\s\w]")


def matching_close(masked_lines, i):
    """Line index of the `}` closing the `{` that ends line i, or None."""
    depth = 0
    for j in range(i, len(masked_lines)):
        for ch in masked_lines[j]:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return j
    return None


def cpp_candidates(src):
    masked = mask_cpp(src.text).split("\n")
    cands = {k: [] for k in KINDS}
    for i, (line, m) in enumerate(zip(src.lines, masked)):
        code = m.strip()
        body = line.strip()
        prev = next((masked[j].strip() for j in range(i - 1, -1, -1) if masked[j].strip()), "")
        statement_start = prev == "" or prev[-1] in ";{}:"
        if (code.endswith(";") and code == body and statement_start and 6 <= len(body) <= 100
                and not any(ch in code for ch in "{}") and code.count("(") == code.count(")")):
            if i + 1 < len(src.lines) and src.lines[i + 1].strip():
                cands["line_start"].append((src.line_offset[i], src.line_offset[i + 1]))
            cands["empty_line"].append((src.line_offset[i], src.line_end(i)))
            toks = list(CPP_TOKEN.finditer(body))
            for t in toks[:-1]:
                if len(body[t.end():].strip()) >= 4:
                    head = line[:indent_of(line)] + body[:t.end()]
                    cands["mid_line"].append((src.line_offset[i] + len(head.encode()), src.line_end(i)))
        if not code.endswith("{") or code.count("{") != 1:
            continue
        close = matching_close(masked, i)
        if close is None or masked[close].strip() not in ("}", "};") or src.lines[close].strip() != masked[close].strip():
            continue
        n_body = close - i - 1
        # A control statement's body, its brace at the end of the header line or alone on the
        # next (Boost's usual layout); the cursor goes at the end of the brace's line.
        if (CONTROL.match(code) or code == "{" and CONTROL.match(prev)) and code == body and 2 <= n_body <= 6:
            cands["block"].append((src.line_end(i), src.line_end(close - 1)))
        header = prev if code == "{" else code[:-1].strip()
        if (header.endswith(")") or header.endswith("const") or header.endswith("noexcept")) and \
                not NOT_FUNCTION.search(header) and 2 <= n_body <= 8 and src.lines[i + 1].strip():
            cands["function"].append((src.line_offset[i + 1], src.line_end(close - 1)))
    return cands


def clang_accepts(text, directory, timeout=60):
    """Whether clang++ -fsyntax-only accepts `text` as a C++17 file in `directory`."""
    try:
        r = subprocess.run(["clang++", "-fsyntax-only", "-std=c++17", "-w", "-x", "c++", "-iquote", directory, "-"],
                           input=text.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return r.returncode == 0


# --- selection ------------------------------------------------------------------------------

def pick_tasks(lang, files, per_kind, rng, max_files, file_ok):
    """Up to `per_kind` tasks of each kind, each from a different file where the files allow,
    drawn from the files in a seeded order."""
    order = files[:]
    rng.shuffle(order)
    pool = []                                        # (src, candidates) of accepted files
    for path in order:
        if len(pool) >= max_files:
            break
        size = os.path.getsize(path)
        if not 1500 <= size <= 120_000:
            continue
        try:
            src = source(path)
        except (UnicodeDecodeError, OSError):
            continue
        cands = python_candidates(src) if lang == "python" else cpp_candidates(src)
        if sum(len(v) > 0 for v in cands.values()) < 3 or not file_ok(src):
            continue
        pool.append((src, cands))
    tasks = []
    for kind in KINDS:
        have = [(src, c[kind]) for src, c in pool if c[kind]]
        for n in range(per_kind):
            if not have:
                break
            src, spans = have[n % len(have)]
            start, end = rng.choice(spans)
            tasks.append({"lang": lang, "kind": kind, "path": src.path, "sha256": src.sha256,
                          "start": start, "end": end})
    return tasks


def interleave(tasks, rounds):
    """The tasks in `rounds` rounds, each holding the same share of every language and kind, so
    the first k rounds (a run with --limit) are a smaller task set of the same make-up."""
    groups = {}
    for t in tasks:
        groups.setdefault((t["lang"], t["kind"]), []).append(t)
    out = []
    for r in range(rounds):
        for key in sorted(groups):
            g = groups[key]
            step = -(-len(g) // rounds)
            out += g[r * step:(r + 1) * step]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python-root", default=default_python_root())
    ap.add_argument("--cpp-root", default="/usr/include/boost")
    ap.add_argument("--python-per-kind", type=int, default=24, help="Python tasks of each kind")
    ap.add_argument("--cpp-per-kind", type=int, default=8, help="C++ tasks of each kind")
    ap.add_argument("--python-files", type=int, default=40, help="Python files to draw from")
    ap.add_argument("--cpp-files", type=int, default=12, help="C++ files to draw from")
    ap.add_argument("--rounds", type=int, default=8, help="rounds of equal make-up the list is ordered in")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    args.python_root, args.cpp_root = os.path.abspath(args.python_root), os.path.abspath(args.cpp_root)

    rng = random.Random(args.seed)
    tasks = []
    if args.python_per_kind > 0:
        tasks += pick_tasks("python", source_files(args.python_root, ".py"), args.python_per_kind, rng,
                            args.python_files, lambda src: True)
    if args.cpp_per_kind > 0:
        tasks += pick_tasks("cpp", source_files(args.cpp_root, ".hpp"), args.cpp_per_kind, rng, args.cpp_files,
                            lambda src: clang_accepts(src.text, os.path.dirname(src.path)))
    tasks = interleave(tasks, args.rounds)
    header = {"version": VERSION, "seed": args.seed, "python_root": args.python_root, "cpp_root": args.cpp_root,
              "python_per_kind": args.python_per_kind, "cpp_per_kind": args.cpp_per_kind, "rounds": args.rounds,
              "tasks": len(tasks)}
    with open(args.out, "w") as f:
        f.write(json.dumps(header) + "\n")
        for i, t in enumerate(tasks):
            f.write(json.dumps({"id": f"v{VERSION}-{i:03d}", **t}) + "\n")
    counts = {}
    for t in tasks:
        counts[(t["lang"], t["kind"])] = counts.get((t["lang"], t["kind"]), 0) + 1
    print(f"make_tasks: {len(tasks)} tasks -> {args.out}: " +
          ", ".join(f"{l}/{k} {n}" for (l, k), n in sorted(counts.items())), file=sys.stderr)


if __name__ == "__main__":
    main()
