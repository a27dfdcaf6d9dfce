#!/usr/bin/env python3
"""Speaks LSP to a command on stdio: initialize, then shutdown and exit; prints the server's
name and version. Usage: lsp_probe.py COMMAND [ARGS...]. Exit 1 with the reason on failure."""
import json
import subprocess
import sys


def send(proc, msg):
    body = json.dumps(msg).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def receive(proc):
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("lsp_probe: the server closed its output before answering")
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(proc.stdout.read(length))


def answer(proc, msg_id):
    while True:
        msg = receive(proc)
        if msg.get("id") == msg_id:
            return msg


def main():
    proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        init = answer(proc, 1)
        if "result" not in init:
            raise SystemExit(f"lsp_probe: initialize failed: {init}")
        info = init["result"].get("serverInfo", {})
        send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        answer(proc, 2)
        send(proc, {"jsonrpc": "2.0", "method": "exit"})
        proc.stdin.close()
        rc = proc.wait(timeout=30)
        print(f"server {info.get('name')} {info.get('version')}, shim exit {rc}")
        return 0
    finally:
        if proc.poll() is None:
            proc.kill()


if __name__ == "__main__":
    sys.exit(main())
