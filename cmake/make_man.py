#!/usr/bin/env python3
"""Writes hearth(1) from the built executable's own --help texts.

Walks the command tree as `hearth --help` lists it (its "Subcommands:" section, then each
subcommand's), so the page covers every subcommand and cannot drift from the options the
binary really takes. Usage: make_man.py HEARTH_BINARY VERSION OUT.1
"""
import subprocess
import sys


def help_text(binary, path):
    out = subprocess.run([binary, *path, "--help"], capture_output=True, text=True, check=True)
    return out.stdout.rstrip() + "\n"


def subcommands(text):
    """Names listed under "Subcommands:" in a CLI11 help text."""
    names, inside = [], False
    for line in text.splitlines():
        if line.strip() == "SUBCOMMANDS:" or line.strip() == "Subcommands:":
            inside = True
            continue
        if inside:
            if not line.startswith(" "):
                if line.strip():
                    inside = False
                continue
            name = line.split()[0] if line.split() else ""
            if name:
                names.append(name)
    return names


def walk(binary, path=()):
    text = help_text(binary, list(path))
    yield path, text
    for name in subcommands(text):
        yield from walk(binary, (*path, name))


def roff(text):
    lines = []
    for line in text.splitlines():
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def main():
    binary, version, out = sys.argv[1:4]
    pages = list(walk(binary))
    top = pages[0][1].splitlines()[0]
    parts = [
        f'.TH HEARTH 1 "" "hearth {version}" "User Commands"',
        ".SH NAME",
        "hearth \\- " + roff(top.split(":", 1)[-1].strip()),
        ".SH SYNOPSIS",
        ".B hearth",
        "\\fISUBCOMMAND\\fR [\\fIOPTIONS\\fR]",
        ".SH DESCRIPTION",
        "One background daemon that editors talk to over the Language Server Protocol, running "
        "quantized GGUF models on the CPU. The sections below are each subcommand's "
        "\\fB\\-\\-help\\fR.",
        ".SH COMMANDS",
    ]
    for path, text in pages:
        parts.append(".SS " + ("hearth " + " ".join(path)).strip())
        parts += [".nf", roff(text), ".fi"]
    parts += [
        ".SH FILES",
        ".TP", "\\fI${XDG_CACHE_HOME:\\-~/.cache}/hearth/models/\\fR",
        "The model cache (\\fBhearth pull\\fR, \\fBhearth models\\fR); \\fIdefault.gguf\\fR links to the default model.",
        ".TP", "\\fI${XDG_CONFIG_HOME:\\-~/.config}/hearth/config.toml\\fR",
        "The daemon's settings.",
        ".TP", "\\fI${XDG_RUNTIME_DIR}/hearth/\\fR",
        "The daemon's socket, lock and token (else \\fI/tmp/hearth\\-UID/\\fR).",
        ".TP", "\\fI${XDG_STATE_HOME:\\-~/.local/state}/hearth/\\fR",
        "The log file.",
        ".SH SEE ALSO",
        "The editor plugins are installed in \\fIshare/hearth/\\fR beside this page's prefix: "
        "\\fInvim/\\fR (add it to Neovim's runtimepath) and \\fIhearth.vsix\\fR "
        "(\\fBcode \\-\\-install\\-extension\\fR).",
    ]
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
