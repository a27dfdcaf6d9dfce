#!/usr/bin/env python3
"""Checks `hearth model info --json` against the `gguf` package's GGUFReader.

usage: check_model_info.py HEARTH_BINARY FIXTURES_DIR

For every fixture GGUF (and a downloaded model, if $HEARTH_MODEL or the models folder has
one) the facts hearth prints must equal what GGUFReader reads: parameter and tensor counts,
the per-type table, mapped weight bytes, hparams, vocabulary, chat template, and the KV
cache cost derived from them (the estimate with the default f16 cache). Also checks the exit
codes for a bad file (1), no model at all (2) and an unknown --cache-type (2). Exits non-zero
with a list of mismatches.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from gguf import GGUFReader


def field(r, key):
    f = r.fields.get(key)
    if f is None:
        return None
    v = f.contents()
    return max(v) if isinstance(v, list) and v and isinstance(v[0], int) else v


def expected(path: Path) -> dict:
    r = GGUFReader(str(path))
    arch = field(r, "general.architecture")
    types = {}
    for t in r.tensors:
        e = types.setdefault(t.tensor_type.name.lower(), {"tensors": 0, "elements": 0, "bytes": 0})
        e["tensors"] += 1
        e["elements"] += int(t.n_elements)
        e["bytes"] += int(t.n_bytes)
    n_head = field(r, f"{arch}.attention.head_count") or 0
    n_embd = field(r, f"{arch}.embedding_length") or 0
    n_head_kv = field(r, f"{arch}.attention.head_count_kv") or n_head
    hd_k = field(r, f"{arch}.attention.key_length") or (n_embd // n_head if n_head else 0)
    hd_v = field(r, f"{arch}.attention.value_length") or hd_k
    n_layer = field(r, f"{arch}.block_count") or 0
    tokens = r.fields.get("tokenizer.ggml.tokens")
    return {
        "architecture": arch,
        "parameters": sum(int(t.n_elements) for t in r.tensors),
        "tensors": len(r.tensors),
        "weights_bytes": sum(int(t.n_bytes) for t in r.tensors),
        "context_length": field(r, f"{arch}.context_length") or 0,
        "layers": n_layer,
        "heads": n_head,
        "kv_heads": n_head_kv,
        "head_size_k": hd_k,
        "vocabulary": len(tokens.data) if tokens else 0,
        "chat_template": "tokenizer.chat_template" in r.fields,
        "types": types,
        "kv_f16_per_token": n_layer * n_head_kv * (hd_k + hd_v) * 2 if hd_k else None,
    }


def check(hearth: str, path: Path, errors: list):
    out = subprocess.run([hearth, "model", "info", "--json", str(path)], capture_output=True, text=True)
    if out.returncode != 0:
        errors.append(f"{path.name}: exit {out.returncode}: {out.stderr.strip()}")
        return
    got = json.loads(out.stdout)
    want = expected(path)

    def same(what, g, w):
        if g != w:
            errors.append(f"{path.name}: {what}: hearth says {g!r}, GGUFReader gives {w!r}")

    for key in ("architecture", "parameters", "tensors", "weights_bytes", "context_length", "layers",
                "heads", "kv_heads", "head_size_k", "vocabulary"):
        same(key, got[key], want[key])
    same("chat template", got["chat_template"]["present"], want["chat_template"])
    same("tensor types", {t["type"].lower(): {"tensors": t["tensors"], "elements": t["elements"], "bytes": t["bytes"]}
                          for t in got["tensor_types"]}, want["types"])
    f16 = next(k for k in got["kv_cache"] if k["type"] == "f16")
    same("f16 KV bytes per token", f16["bytes_per_token"], want["kv_f16_per_token"])
    peak = got["peak_ram"]
    same("peak total", peak["total_bytes"], peak["weights_bytes"] + peak["kv_bytes"] + peak["compute_bytes"])
    # By default the estimate assumes the daemon's default cache, f16.
    same("estimate's cache type", peak["kv_type"], "f16")
    if want["kv_f16_per_token"] is not None:
        same("estimate's KV bytes", peak["kv_bytes"], peak["files"] * peak["context"] * want["kv_f16_per_token"])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    hearth, fixtures = sys.argv[1], Path(sys.argv[2])
    files = sorted((fixtures / "models").glob("*.gguf")) + sorted((fixtures / "tokenizer").glob("*.gguf"))
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hearth" / "models"
    if os.environ.get("HEARTH_MODEL"):
        files.append(Path(os.environ["HEARTH_MODEL"]))
    elif cache.is_dir():
        files += sorted(cache.glob("*.gguf"))
    files = list(dict.fromkeys(f.resolve() for f in files))  # default.gguf is a link to a named model
    errors = []
    for f in files:
        check(hearth, f, errors)

    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "bad.gguf"
        bad.write_bytes(b"GGUF" + (1).to_bytes(4, "little") + bytes(16))
        out = subprocess.run([hearth, "model", "info", str(bad)], capture_output=True, text=True)
        if out.returncode != 1 or "version 1 is not supported" not in out.stderr:
            errors.append(f"bad file: exit {out.returncode}, stderr {out.stderr!r}")
        env = {k: v for k, v in os.environ.items() if k not in ("HEARTH_MODEL", "HEARTH_DEFAULT_MODEL")}
        env.update(HOME=tmp, XDG_CACHE_HOME=tmp)
        out = subprocess.run([hearth, "model", "info"], capture_output=True, text=True, env=env)
        if out.returncode != 2 or "no model: pass --model PATH" not in out.stderr:
            errors.append(f"no model: exit {out.returncode}, stderr {out.stderr!r}")
        # The same lookup as every other command: the config's `model` is the model.
        model = fixtures / "models" / "stories260K-Q8_0.gguf"
        (Path(tmp) / "hearth").mkdir()
        (Path(tmp) / "hearth" / "config.toml").write_text(f'model = "{model}"\n')
        out = subprocess.run([hearth, "model", "info"], capture_output=True, text=True, env=dict(env, XDG_CONFIG_HOME=tmp))
        if out.returncode != 0 or str(model) not in out.stdout:
            errors.append(f"model from the config: exit {out.returncode}, stderr {out.stderr!r}")
    if files:
        out = subprocess.run([hearth, "model", "info", "--cache-type", "q5_1", str(files[0])], capture_output=True, text=True)
        if out.returncode != 2 or "cache type 'q5_1' is not one of" not in out.stderr:
            errors.append(f"bad --cache-type: exit {out.returncode}, stderr {out.stderr!r}")

    for e in errors:
        print(e)
    print(f"checked {len(files)} files: {'FAILED' if errors else 'ok'}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
