"""The next-edit bench's source: two consecutive releases of a package, as their source
distributions from the package index (fetched through pip into a cache folder), the .py files
of each read straight from the archive, and the edits between two versions of one file.

Used by make_tasks.py (which cuts the tasks) and run_next_edit.py (which rebuilds each task's
text from the same archives and refuses a file whose SHA-256 differs from the list's).
Offsets are in bytes of the UTF-8 file. Plain standard library.
"""
import difflib
import glob
import hashlib
import os
import re
import subprocess
import sys
import tarfile
import zipfile

DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "hearth", "bench-next-edit")


class source_error(Exception):
    pass


def pip_python(root):
    """The python whose pip fetches the archives: the repo's .venv where there is one."""
    venv = os.path.join(root, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


def sdist(cache, package, version, python):
    """Path of package==version's source distribution in `cache`, fetched through pip when
    missing. Only the package itself is built from source (its build tools come as wheels:
    pip prepares an sdist's metadata before it keeps it)."""
    folder = os.path.join(cache, f"{package}-{version}")
    have = sorted(glob.glob(os.path.join(folder, "*.tar.gz")) + glob.glob(os.path.join(folder, "*.zip")))
    if have:
        return have[0]
    os.makedirs(folder, exist_ok=True)
    cmd = [python, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", package, "--dest", folder,
           f"{package}=={version}"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    have = sorted(glob.glob(os.path.join(folder, "*.tar.gz")) + glob.glob(os.path.join(folder, "*.zip")))
    if r.returncode != 0 or not have:
        raise source_error(f"pip could not fetch the source of {package}=={version} into {folder}: "
                           f"{r.stdout.strip()[-600:]}")
    return have[0]


def python_files(archive):
    """{path inside the release (its top folder dropped): bytes} of every .py file."""
    out = {}
    if archive.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                if name.endswith(".py") and "/" in name:
                    out[name.split("/", 1)[1]] = z.read(name)
    else:
        with tarfile.open(archive) as t:
            for m in t.getmembers():
                if m.isfile() and m.name.endswith(".py") and "/" in m.name:
                    out[m.name.split("/", 1)[1]] = t.extractfile(m).read()
    return out


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def file_pair(cache, python, task):
    """(before, after) bytes of the task's file, checked against the task list's SHA-256s."""
    pair = []
    for version, key in ((task["before"], "sha256_before"), (task["after"], "sha256_after")):
        files = python_files(sdist(cache, task["package"], version, python))
        data = files.get(task["path"])
        if data is None:
            raise source_error(f"task {task['id']}: {task['package']} {version} has no {task['path']}")
        if sha256(data) != task[key]:
            raise source_error(f"task {task['id']}: {task['path']} of {task['package']} {version} is not the file the "
                               "task list was cut from (SHA-256 differs); refusing it")
        pair.append(data)
    return tuple(pair)


# --- the edits between two versions ---------------------------------------------------------

TOKEN = re.compile(rb"\w+|\S")


def edits_between(before, after):
    """The diff's hunks as the smallest edits [b_start, b_end, a_start, a_end] (bytes): the
    hunk's lines with their common head and tail left out; a hunk replacing lines one for one
    is one edit per changed line."""
    a_lines, b_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    a_off, b_off = [0], [0]
    for line in a_lines:
        a_off.append(a_off[-1] + len(line))
    for line in b_lines:
        b_off.append(b_off[-1] + len(line))
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        # Lines replaced one for one are one edit each (a rename on two lines in a row is two).
        pairs = [(i, i + 1, j, j + 1) for i, j in zip(range(i1, i2), range(j1, j2)) if a_lines[i] != b_lines[j]] \
            if op == "replace" and i2 - i1 == j2 - j1 else [(i1, i2, j1, j2)]
        for p1, p2, q1, q2 in pairs:
            out.append(smallest(before, after, a_off[p1], a_off[p2], b_off[q1], b_off[q2]))
    return out


def smallest(before, after, bs, be, as_, ae):
    """[bs, be, as_, ae] without the head and tail the two sides share, on whole UTF-8 characters."""
    while bs < be and as_ < ae and before[bs] == after[as_]:
        bs, as_ = bs + 1, as_ + 1
    while be > bs and ae > as_ and before[be - 1] == after[ae - 1]:
        be, ae = be - 1, ae - 1
    while bs > 0 and bs < len(before) and before[bs] & 0xC0 == 0x80:
        bs, as_ = bs - 1, as_ - 1
    while be < len(before) and before[be] & 0xC0 == 0x80:
        be, ae = be + 1, ae + 1
    return [bs, be, as_, ae]


def token_change(old, new):
    """What an edit does to the tokens, as a hashable key: the set of (removed, added) token
    runs. Two edits with the same key made the same change (a rename: ((b'foo',), (b'bar',)))."""
    a, b = TOKEN.findall(old), TOKEN.findall(new)
    runs = set()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            runs.add((tuple(a[i1:i2]), tuple(b[j1:j2])))
    return frozenset(runs)


def apply_edits(text, edits):
    """`text` (bytes) with `edits` [(start, end, new_bytes), ...] applied (offsets in `text`,
    not overlapping)."""
    for s, e, new in sorted(edits, key=lambda x: x[0], reverse=True):
        text = text[:s] + new + text[e:]
    return text


def shift(offset, applied):
    """`offset` of the original text, in the text after the edits `applied` [(start, end, new)]
    that all lie before it or at it."""
    return offset + sum(len(new) - (e - s) for s, e, new in applied if e <= offset)
