"""llama.vim's inline completion client (ggml-org/llama.vim, autoload/llama.vim), replayed against
one llama-server slot (llama_slot.py): the llama.cpp side of `hearth bench editor`.

What it keeps of llama.vim, with its default settings (n_prefix 256 and n_suffix 64 lines,
n_predict 128, t_max_predict_ms 250 for a first request and 1000 for a speculative one,
max_line_suffix 8, ring_n_chunks 16, ring_chunk_size 64, max_cache_keys 250):
- s:fim_ctx_local(): the prefix lines, the current line up to the cursor as `prompt`, the rest of
  it and the lines after as the suffix; n_indent, the cursor line's indentation;
- llama#fim() on every keystroke (CursorMovedI): no request while one is in flight — a timer
  tries again 100 ms later (so a keystroke never cancels a request: the jobstop after that
  check is only reached when no job runs); no request when the answer for this context is in
  its cache; a request with `cache_prompt: true` otherwise;
- s:fim_try_hint() on every keystroke and answer: the cached answer for this context, or one
  cached up to 128 characters back whose text the user has typed since (typed-ahead answers);
  after showing one, the speculative request for the text after it;
- s:fim_render(): the first line of the answer, its leading whitespace trimmed on a blank line;
- the ring of extra chunks: a chunk of the lines around the cursor when the buffer is entered
  (BufEnter), chunks further out when the cursor jumps 32 lines, chunks similar to the cursor's
  surroundings evicted before each request, and the warm-up request that sends the ring with
  n_predict 0 (s:ring_update). llama.vim sends it every second while the user is in normal mode;
  here once, when the cursor rests (at the moment hearth gets hearth/cursorRest), with every
  chunk queued so far, as a user reading the file in normal mode would see.
What it cannot keep: Vim's own timing (autocommands, a curl process per request); a suggestion
is "shown" the moment its answer is read.
"""
import collections
import json
import os
import random
import re
import select
import time

N_PREFIX, N_SUFFIX, N_PREDICT = 256, 64, 128
T_MAX_PREDICT_MS, T_MAX_PREDICT_FIRST_MS = 1000, 250
MAX_LINE_SUFFIX, MAX_CACHE_KEYS = 8, 250
RING_N_CHUNKS, RING_CHUNK_SIZE, RING_SCOPE = 16, 64, 1024
RETRY_S = 0.100


def chunk_sim(c0, c1):
    """s:chunk_sim: the share of words of one chunk found in the other."""
    t0 = [w for w in re.split(r"\W+", "\n".join(c0)) if w]
    t1 = [w for w in re.split(r"\W+", "\n".join(c1)) if w]
    if not t0 and not t1:
        return 1.0
    s0 = set(t0)
    return 2.0 * sum(w in s0 for w in t1) / (len(t0) + len(t1))


class llama_vim:
    """One Vim with llama.vim, editing one buffer at a time; `slot` is the llama_slot.py process."""

    def __init__(self, slot_proc, seed):
        self.proc = slot_proc
        self.rng = random.Random(seed)
        self.buf = b""
        self.cache = collections.OrderedDict()     # context -> answer text (s:cache_data, LRU)
        self.ring_chunks, self.ring_queued = [], []
        self.next_id = 1
        self.job = None              # the FIM request in flight (s:current_job_fim)
        self.job_hashes = {}
        self.timer = None            # (when, prev) of the pending llama#fim retry
        self.bufenter_at = None
        self.evaluated = 0           # tokens the slot evaluated since start (its last report)
        self.pos_y_pick = -1000
        self.indent_last = 0
        self.hint_shown = False
        self.shown = []              # (time, line, col, first line of the answer, whole answer)
        self.requests = []           # every request sent: kind, time, tokens, answer
        self.lines, self.y, self.x, self.filename = [], 0, 0, ""

    # --- the slot process -------------------------------------------------------------------

    def send(self, body):
        body = dict(body, id=self.next_id)
        self.next_id += 1
        self.proc.stdin.write(json.dumps(body) + "\n")
        self.proc.stdin.flush()
        self.requests.append({"id": body["id"], "kind": body["kind"], "speculative": bool(body.get("speculative")),
                              "sent": time.monotonic(), "line": self.y, "col": self.x})
        return body["id"]

    def read_ready(self, timeout_s):
        fd = self.proc.stdout.fileno()
        if b"\n" not in self.buf:
            if not select.select([fd], [], [], max(0.0, timeout_s))[0]:
                return []
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError("the llama.cpp slot process exited")
            self.buf += chunk
        *lines, self.buf = self.buf.split(b"\n")
        return [json.loads(l) for l in lines if l.strip()]

    def pump(self, deadline):
        """Handles answers and timers until `deadline` (time.monotonic())."""
        while True:
            now = time.monotonic()
            if self.bufenter_at is not None and now >= self.bufenter_at:
                self.bufenter_at = None
                self.pick_chunk(self.around_cursor(), do_evict=True)
            if self.timer and now >= self.timer[0]:
                prev = self.timer[1]
                self.timer = None
                self.fim(prev)
            wake = min([deadline] + [t for t in (self.bufenter_at, self.timer and self.timer[0]) if t is not None])
            if now >= deadline:
                return
            for msg in self.read_ready(wake - now):
                self.on_message(msg)

    def on_message(self, msg):
        if "evaluated" in msg:
            self.evaluated = msg["evaluated"]
        if "id" not in msg:
            return
        r = next(r for r in self.requests if r["id"] == msg["id"])
        r.update(answered=time.monotonic(), content=msg["content"],
                 **{k: msg[k] for k in ("prompt_n", "cached", "predicted_n", "ms", "prompt_ms", "predicted_ms")})
        if r["kind"] != "fim":
            return
        # s:fim_on_response, then s:fim_on_exit: the answer is cached and shown before the job
        # counts as done, so the speculative request it starts waits for the retry timer.
        for h in self.job_hashes.pop(msg["id"]):
            self.cache_insert(h, msg["content"])
        if not self.hint_shown:
            self.try_hint()
        if self.job == msg["id"]:
            self.job = None

    def idle(self):
        return self.job is None and self.timer is None and all("answered" in r for r in self.requests)

    # --- the buffer ---------------------------------------------------------------------------

    def open(self, lines, y, x, filename):
        """BufEnter: the buffer and the cursor; a chunk around it is picked 100 ms later."""
        self.lines, self.y, self.x, self.filename = list(lines), y, x, filename
        self.hint_shown = False
        self.timer = None
        self.bufenter_at = time.monotonic() + 0.100

    def around_cursor(self):
        half = RING_CHUNK_SIZE // 2
        return self.lines[max(0, self.y - half):min(len(self.lines), self.y + half + 1)]

    def cursor_rest(self):
        """s:ring_update with every queued chunk moved into the ring: the warm-up request."""
        if not self.ring_queued:
            return
        while self.ring_queued:
            if len(self.ring_chunks) == RING_N_CHUNKS:
                self.ring_chunks.pop(0)
            self.ring_chunks.append(self.ring_queued.pop(0))
        self.send({"kind": "warmup", "input_prefix": "", "input_suffix": "", "input_extra": self.extra(), "prompt": "",
                   "n_predict": 0, "cache_prompt": True, "t_max_prompt_ms": 1, "t_max_predict_ms": 1})

    def type(self, text, request=True):
        """Text typed at the cursor (a newline moves it to the next line). With `request`, what
        CursorMovedI does: s:on_move, then llama#fim."""
        head, tail = self.lines[self.y][:self.x], self.lines[self.y][self.x:]
        parts = (head + text).split("\n")
        self.lines[self.y:self.y + 1] = parts[:-1] + [parts[-1] + tail]
        self.y += len(parts) - 1
        self.x = len(parts[-1])
        self.hint_shown = False
        if request:
            self.try_hint()
            self.fim(None)
        else:
            self.timer = None

    # --- llama.vim ------------------------------------------------------------------------------

    def ctx_local(self, prev):
        lines, y, x = self.lines, self.y, self.x
        if not prev:
            line_cur = lines[y]
            prefix_lines = lines[max(0, y - N_PREFIX):y]
            if not line_cur.strip():
                indent, cur_prefix, cur_suffix = 0, "", ""
            else:
                indent = len(line_cur) - len(line_cur.lstrip(" \t"))
                cur_prefix, cur_suffix = line_cur[:x], line_cur[x:]
        else:
            line_cur = lines[y] + prev[0] if len(prev) == 1 else prev[-1]
            cur_prefix, cur_suffix = line_cur, ""
            prefix_lines = lines[max(0, y - N_PREFIX + len(prev) - 1):y]
            if len(prev) > 1:
                prefix_lines = prefix_lines + [lines[y] + prev[0]] + prev[1:-1]
            indent = self.indent_last
        suffix_lines = lines[y + 1:y + 1 + N_SUFFIX]
        return {"prefix": "\n".join(prefix_lines) + "\n", "middle": cur_prefix,
                "suffix": cur_suffix + "\n" + "\n".join(suffix_lines) + "\n", "indent": indent,
                "line_cur_suffix": cur_suffix}

    def fim(self, prev):
        """llama#fim(-1, -1, v:true, prev, v:true)."""
        if self.job is not None:
            self.timer = (time.monotonic() + RETRY_S, prev)
            return
        c = self.ctx_local(prev)
        if len(c["line_cur_suffix"]) > MAX_LINE_SUFFIX:
            return
        hashes = [c["prefix"] + c["middle"] + "Î" + c["suffix"]]
        trimmed = c["prefix"]
        for _ in range(3):
            trimmed = trimmed.split("\n", 1)[1] if "\n" in trimmed else ""
            if not trimmed:
                break
            hashes.append(trimmed + c["middle"] + "Î" + c["suffix"])
        if any(h in self.cache for h in hashes):
            return
        self.indent_last = c["indent"]
        text = self.around_cursor()
        half = RING_CHUNK_SIZE // 2
        l0 = self.rng.randint(0, max(0, len(text) - half))
        chunk = text[l0:min(l0 + half, len(text)) + 1]
        for i in range(len(self.ring_chunks) - 1, 0, -1):     # as llama.vim: never the first chunk
            if chunk_sim(self.ring_chunks[i]["data"], chunk) > 0.5:
                self.ring_chunks.pop(i)
        rid = self.send({"kind": "fim", "input_prefix": c["prefix"], "input_suffix": c["suffix"], "input_extra": self.extra(),
                         "prompt": c["middle"], "n_predict": N_PREDICT, "n_indent": c["indent"], "cache_prompt": True,
                         "t_max_predict_ms": T_MAX_PREDICT_MS if prev else T_MAX_PREDICT_FIRST_MS,
                         "speculative": prev is not None})
        self.job = rid
        self.job_hashes[rid] = hashes
        if abs(self.y - self.pos_y_pick) > 32:
            n = len(self.lines)
            self.pick_chunk(self.lines[max(0, self.y - RING_SCOPE):max(1, self.y - N_PREFIX)], do_evict=False)
            self.pick_chunk(self.lines[min(n, self.y + N_SUFFIX):min(n, self.y + N_SUFFIX + RING_CHUNK_SIZE)], do_evict=False)
            self.pos_y_pick = self.y

    def try_hint(self):
        """s:fim_try_hint at the cursor: an answer from the cache is shown, then the speculative request."""
        c = self.ctx_local(None)
        raw = self.cache_get(c["prefix"] + c["middle"] + "Î" + c["suffix"])
        if raw is None:
            pm, best = c["prefix"] + c["middle"], 0
            for i in range(min(128, len(pm) - 1)):
                removed = pm[-(1 + i):]
                cached = self.cache_get(pm[:-(1 + i)] + "Î" + c["suffix"])
                if not cached or cached[:i + 1] != removed:
                    continue
                rest = cached[i + 1:]
                if rest and (raw is None or len(rest) > best):
                    if raw is not None:
                        best = len(rest)
                    raw = rest
        if raw is None:
            return
        content = self.render(raw)
        self.hint_shown = True
        self.shown.append({"t": time.monotonic(), "line": self.y, "col": self.x, "first_line": content[0],
                           "text": "\n".join(content)})
        self.fim(content)

    def render(self, raw):
        """s:fim_render: the answer's lines as shown."""
        content = raw.split("\n")
        while content and content[-1] == "":
            content.pop()
        if not content:
            content = [""]
        line_cur = self.lines[self.y]
        if not line_cur.strip():
            lead = min(len(content[0]) - len(content[0].lstrip()), len(line_cur))
            content[0] = content[0][lead:]
        if len(content) == 1 and content[0] == "":
            content = [""]
        if len(content) > 1 and content[0] == "" and content[1:] == self.lines[self.y + 1:self.y + len(content)]:
            content = [""]
        return content

    def extra(self):
        return [{"text": c["str"], "filename": c["filename"]} for c in self.ring_chunks]

    def pick_chunk(self, text, do_evict):
        if len(text) < 3:
            return
        if len(text) + 1 < RING_CHUNK_SIZE:
            chunk = text
        else:
            l0 = self.rng.randint(0, max(0, len(text) - RING_CHUNK_SIZE // 2))
            chunk = text[l0:min(l0 + RING_CHUNK_SIZE // 2, len(text)) + 1]
        if any(c["data"] == chunk for c in self.ring_chunks + self.ring_queued):
            return
        for ring in (self.ring_queued, self.ring_chunks):
            for i in range(len(ring) - 1, 0, -1):
                if chunk_sim(ring[i]["data"], chunk) > 0.9 and do_evict:
                    ring.pop(i)
        if len(self.ring_queued) == 16:
            self.ring_queued.pop(0)
        self.ring_queued.append({"data": chunk, "str": "\n".join(chunk) + "\n", "filename": self.filename})

    def cache_insert(self, key, value):
        if key not in self.cache and len(self.cache) > MAX_CACHE_KEYS - 1:
            self.cache.popitem(last=False)
        self.cache[key] = value
        self.cache.move_to_end(key)

    def cache_get(self, key):
        if key not in self.cache:
            return None
        self.cache.move_to_end(key)
        return self.cache[key]
