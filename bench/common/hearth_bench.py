"""What the benches share: a private `hearth daemon` with its own socket and config
(hearth_daemon, config_toml), an LSP client on its socket (lsp_connection), the daemon's
hearth/status (daemon_status) and a same-priority busy process (busy_neighbour).

Used by bench/quality/run_quality.py and bench/editor/run_editor.py, which find this folder
beside their own (the same layout in the source tree and under share/hearth/bench/). Plain
standard library: run_quality.py's llama.cpp worker imports it too, inside .venv-llamacpp.
"""
import json
import os
import select
import socket
import subprocess
import sys
import time


class bench_error(Exception):
    pass


class lsp_connection:
    def __init__(self, path, timeout_s):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        self.sock.connect(path)
        self.buf = b""
        self.next_id = 1

    def send(self, method, params, request=True):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if request:
            msg["id"] = self.next_id
            self.next_id += 1
        body = json.dumps(msg).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return msg.get("id")

    def reply(self, rid, result):
        """Answers a request of the server's."""
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def read_message(self):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, rest = self.buf.split(b"\r\n\r\n", 1)
        length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length"))
        while len(rest) < length:
            self.buf = rest
            self._fill()
            rest = self.buf
        self.buf = rest[length:]
        return json.loads(rest[:length])

    def poll(self, timeout_s):
        """The next message if one arrives within timeout_s (0: only what is already here), else None."""
        if b"\r\n\r\n" not in self.buf or not self._complete():
            if not select.select([self.sock], [], [], max(0.0, timeout_s))[0]:
                return None
            self._fill()
            if not self._complete():
                return None
        return self.read_message()

    def _complete(self):
        head, sep, rest = self.buf.partition(b"\r\n\r\n")
        if not sep:
            return False
        length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length"))
        return len(rest) >= length

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise bench_error("the daemon closed the connection")
        self.buf += chunk

    def request(self, method, params):
        rid = self.send(method, params)
        while True:
            m = self.read_message()
            if m.get("id") == rid and "method" not in m:
                return m

    def close(self):
        try:
            self.request("shutdown", None)
            self.send("exit", None, request=False)
        except (OSError, bench_error):
            pass
        self.sock.close()


class hearth_daemon:
    """A private `hearth daemon` on its own socket, every setting at its default."""

    def __init__(self, hearth, model, workdir, extra_args, log_level, settings):
        self.dir = workdir
        self.socket = os.path.join(workdir, "hearth.sock")
        config = os.path.join(workdir, "config.toml")
        with open(config, "w") as f:
            f.write(config_toml(settings))
        os.makedirs(os.path.join(workdir, "run"), mode=0o700, exist_ok=True)
        cmd = [hearth, "daemon", "--model", model, "--socket", self.socket, "--runtime-dir", os.path.join(workdir, "run"),
               "--slot-dir", os.path.join(workdir, "slots"), "--config", config, "--log-file", "none",
               "--log-level", log_level] + extra_args
        self.log = open(os.path.join(workdir, "daemon.log"), "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise bench_error(f"hearth daemon exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                lsp_connection(self.socket, 5).sock.close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise bench_error("hearth daemon did not open its socket within 120 s")
                time.sleep(0.05)

    def log_tail(self):
        self.log.flush()
        return open(self.log.name).read()[-2000:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def config_toml(settings):
    """The daemon's config file from SECTION.KEY=VALUE settings (none: every default)."""
    sections = {}
    for item in settings:
        key, eq, value = item.partition("=")
        section, dot, name = key.rpartition(".")
        if not eq or not name:
            raise bench_error(f"--setting {item!r}: expected SECTION.KEY=VALUE, e.g. completion.time-budget-ms=60000")
        if not (value in ("true", "false") or value.lstrip("-").replace(".", "", 1).isdigit()):
            value = json.dumps(value)
        sections.setdefault(section, []).append(f"{name} = {value}")
    out = "".join(f"{line}\n" for line in sections.pop("", []))
    return out + "".join(f"[{sec}]\n" + "".join(f"{line}\n" for line in lines) for sec, lines in sections.items())


def daemon_status(daemon, timeout_s):
    """hearth/status after the run: its counters say why answers came back empty or cut."""
    conn = lsp_connection(daemon.socket, timeout_s)
    try:
        conn.request("initialize", {"processId": os.getpid(), "capabilities": {}})
        conn.send("initialized", {}, request=False)
        return conn.request("hearth/status", {}).get("result")
    finally:
        conn.close()


def run_on_daemon(args, tasks, workdir, ask, say):
    """Each task through one real `hearth daemon` (args.hearth, args.model, args.daemon_arg,
    args.setting): ask(daemon, task) gives its result; a request that failed is {"error": ...},
    a daemon that died ends the run. hearth/status after the last task is kept under "status",
    and the daemon's log (at debug level) copied to args.daemon_log when one is named."""
    daemon = hearth_daemon(args.hearth, args.model, workdir, args.daemon_arg, "debug" if args.daemon_log else "warn",
                           args.setting)
    out = {}
    try:
        for i, t in enumerate(tasks):
            try:
                out[t["id"]] = ask(daemon, t)
            except (OSError, bench_error) as e:
                if daemon.proc.poll() is not None:
                    raise bench_error(f"hearth daemon died on task {t['id']}: {daemon.log_tail()}")
                out[t["id"]] = {"error": str(e)}
            if (i + 1) % 10 == 0 or i + 1 == len(tasks):
                say(f"hearth: {i + 1}/{len(tasks)} tasks")
        out["status"] = daemon_status(daemon, args.request_timeout)
    finally:
        daemon.stop()
        if args.daemon_log:
            with open(args.daemon_log, "w") as f:
                f.write(open(daemon.log.name).read())
    return out


class busy_neighbour:
    """A same-priority busy process (not niced: a niced one would hide what we measure)."""

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def add_side_by_side_arguments(ap, root, request_timeout_s):
    """The options every hearth-beside-llama.cpp bench takes (`hearth bench quality`, `editor`)."""
    ap.add_argument("--sides", default="hearth,llama.cpp", help="comma-separated: hearth, llama.cpp")
    ap.add_argument("--busy", action="store_true", help="run with a same-priority busy process on one core")
    ap.add_argument("--threads", type=int, default=0, help="llama.cpp's threads (0: every CPU this process may use)")
    ap.add_argument("--llama-python", default=os.path.join(root, ".venv-llamacpp", "bin", "python"),
                    help="python of .venv-llamacpp")
    ap.add_argument("--daemon-arg", action="append", default=[], help="extra argument for hearth daemon; repeatable")
    ap.add_argument("--setting", action="append", default=[],
                    help="a daemon setting SECTION.KEY=VALUE in its config file (default: none, all defaults); repeatable")
    ap.add_argument("--daemon-log", help="keep the daemon's log (at debug level) in this file")
    ap.add_argument("--request-timeout", type=float, default=request_timeout_s, help="seconds to wait for one answer")
    ap.add_argument("--json", help="write every answer and the summary to this file")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every answer next to the expected one")


def sides_of(args):
    """The --sides list, checked, with llama-cpp-python present where llama.cpp is measured."""
    sides = [s for s in args.sides.split(",") if s]
    if not sides or not set(sides) <= {"hearth", "llama.cpp"}:
        raise bench_error("--sides takes hearth and/or llama.cpp")
    if "llama.cpp" in sides and not os.path.exists(args.llama_python):
        raise bench_error(f"no llama-cpp-python at {args.llama_python}: run scripts/llamacpp-env (about 25 minutes "
                          "the first time), or pass --sides hearth")
    return sides
