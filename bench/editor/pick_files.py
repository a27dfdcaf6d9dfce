"""The files of `hearth bench editor` and the line typed in each: real source that no one here
wrote, found on the machine — the Python standard library (/usr/lib/python3.*/*.py) and the
Boost headers (/usr/include/boost/**/*.hpp), 150 to 1500 lines each — chosen with a seeded RNG,
half of each language. In each file, one target line inside a body (indented, at least 8
non-space characters, not a comment, a string or a macro continuation) whose next line is such a
code line too (at least 4 non-space characters): the bench types the first, accepts it, and
starts the second.

A file list (--file-list) names the files instead: one per line, `PATH [LINE [SHA256]]` (LINE
1-based; without it the line is chosen as above), paths relative to the list; # starts a comment.
"""
import glob
import hashlib
import io
import os
import random
import tokenize

MIN_LINES, MAX_LINES = 150, 1500


class pick_error(Exception):
    pass


def lang_of(path):
    return "python" if path.endswith(".py") else "cpp"


def string_lines_python(text):
    """0-based lines that lie inside a multi-line string (docstrings), where typing is prose."""
    inside = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0] - 1, tok.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return inside


def comment_lines_cpp(lines):
    """0-based lines touched by a /* */ comment (a rough scan: string literals are not parsed)."""
    inside, open_ = set(), False
    for i, line in enumerate(lines):
        pos = 0
        while True:
            if open_:
                inside.add(i)
                end = line.find("*/", pos)
                if end < 0:
                    break
                open_, pos = False, end + 2
            else:
                start = line.find("/*", pos)
                if start < 0:
                    break
                inside.add(i)
                open_, pos = True, start + 2
    return inside


def is_code_line(line, lang, min_chars):
    body = line.strip()
    if not line[:1] in (" ", "\t") or sum(not c.isspace() for c in body) < min_chars:
        return False
    if lang == "python":
        return not body.startswith("#")
    return not (body.startswith(("//", "/*", "*", "#")) or body.endswith("\\"))


def target_lines(text, lang):
    """0-based lines L such that L is a code line of 8+ characters and L+1 one of 4+."""
    lines = text.split("\n")
    skip = string_lines_python(text) if lang == "python" else comment_lines_cpp(lines)
    if skip is None:
        return []
    return [i for i in range(1, len(lines) - 1)
            if i not in skip and i + 1 not in skip and is_code_line(lines[i], lang, 8) and is_code_line(lines[i + 1], lang, 4)]


def read_text(path):
    data = open(path, "rb").read()
    try:
        return data, data.decode()
    except UnicodeDecodeError:
        return data, None


def pick_system_files(n_files, seed):
    pools = {"python": sorted(glob.glob("/usr/lib/python3.*/*.py")),
             "cpp": sorted(glob.glob("/usr/include/boost/**/*.hpp", recursive=True))}
    want = {"python": n_files - n_files // 2, "cpp": n_files // 2}
    picked = {"python": [], "cpp": []}
    for lang in ("python", "cpp"):
        rng = random.Random(f"{seed}:{lang}")   # one per language: the files of a smaller run come first in a larger one
        pool = pools[lang]
        rng.shuffle(pool)
        got = 0
        for path in pool:
            if got == want[lang]:
                break
            data, text = read_text(path)
            if text is None or "\r" in text or not MIN_LINES <= text.count("\n") <= MAX_LINES:
                continue
            lines = target_lines(text, lang)
            if not lines:
                continue
            picked[lang].append(entry(path, data, text, lang, rng.choice(lines)))
            got += 1
        if got < want[lang]:
            raise pick_error(f"found {got} {lang} files of {MIN_LINES}-{MAX_LINES} lines, wanted {want[lang]}"
                             + (" (is python3 or libboost-dev installed?)" if not pool else ""))
    py, cpp = picked["python"], picked["cpp"]   # alternated, so that a change of load lands on both
    return [f for pair in zip(py, cpp) for f in pair] + py[len(cpp):]


def pick_listed_files(list_path, n_files, seed):
    rng = random.Random(seed)
    picked = []
    for raw in open(list_path):
        fields = raw.split("#", 1)[0].split()
        if not fields:
            continue
        path = fields[0] if os.path.isabs(fields[0]) else os.path.join(os.path.dirname(os.path.abspath(list_path)), fields[0])
        try:
            data, text = read_text(path)
        except OSError as e:
            raise pick_error(f"{list_path}: cannot read {path}: {e.strerror}")
        if text is None:
            raise pick_error(f"{path}: not UTF-8")
        if len(fields) > 2 and hashlib.sha256(data).hexdigest() != fields[2]:
            raise pick_error(f"{path}: not the file the list names (its SHA-256 differs)")
        lang = lang_of(path)
        lines = target_lines(text, lang)
        if len(fields) > 1:
            line = int(fields[1]) - 1
            if line not in lines:
                raise pick_error(f"{path}:{line + 1}: not a code line followed by one (indented, 8 and 4 characters)")
        elif not lines:
            raise pick_error(f"{path}: no indented code line followed by another")
        else:
            line = rng.choice(lines)
        picked.append(entry(path, data, text, lang, line))
    return picked[:n_files] if n_files else picked


def entry(path, data, text, lang, line):
    lines = text.split("\n")
    target, after = lines[line], lines[line + 1]
    indent = target[:len(target) - len(target.lstrip(" \t"))]
    indent_next = after[:len(after) - len(after.lstrip(" \t"))]
    return {"path": os.path.abspath(path), "line": line + 1, "sha256": hashlib.sha256(data).hexdigest(), "lang": lang,
            "lines": lines, "indent": indent, "truth": target[len(indent):].rstrip(),
            "indent_next": indent_next, "truth_next": after[len(indent_next):].rstrip()}


def opened_lines(f):
    """The document as opened: the target line reduced to its indentation, the next line gone."""
    i = f["line"] - 1
    return f["lines"][:i] + [f["indent"]] + f["lines"][i + 2:]
