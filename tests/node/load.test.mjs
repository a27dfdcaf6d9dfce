// Load: 4 clients x 200 inline completions against the real daemon on the tiny model, with
// edits between requests, bursts that supersede each other and random $/cancelRequest.
// Every request must be answered exactly once, with a result or -32800 and nothing else.
// The daemon's RSS at start and end is reported. Fixed seed; bounded in time.
// Then cancel latency on the default model: completions cancelled while their prompt or
// their decode runs, each with the next keystroke's request right behind the cancel.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { frame, rawClient, rawInitialize, startDaemon } from './harness.mjs';

// $HEARTH_DEFAULT_MODEL (scripts/test sets it), else where hearth finds the default model.
const DEFAULT_MODEL = [process.env.HEARTH_DEFAULT_MODEL,
  join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'hearth', 'models', 'default.gguf')]
  .find((p) => p && existsSync(p));

const N_CLIENTS = 4;
const N_REQUESTS = 200;

function rng(seed) {   // mulberry32: a fixed, portable sequence
  return () => {
    seed |= 0; seed = (seed + 0x6D2B79F5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function runClient(d, k, stats) {
  const rand = rng(1234 + k);
  const c = await rawClient(d);
  await rawInitialize(c);
  const uri = `file:///load/client${k}.py`;
  let text = `# client ${k}\ndef f${k}(x):\n    return x\n\ndef g${k}(y):\n    `;
  let version = 1;
  c.send({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'python', version, text } } });
  const counts = new Map();
  c.sock.on('data', () => {});
  const seen = () => {
    for (const m of c.messages.splice(0)) {
      if (!('id' in m) || 'method' in m || m.id <= 1000 * (k + 1)) continue;   // only the completions (not initialize)
      counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
      if (m.error) {
        if (m.error.code === -32800) stats.cancelled++;
        else stats.otherErrors.push(m.error);
      } else {
        stats.ok++;
        if (m.result.items.length) stats.nonEmpty++;
      }
    }
  };
  const position = () => {
    const lines = text.split('\n');
    return { line: lines.length - 1, character: lines[lines.length - 1].length };
  };
  let id = 1000 * (k + 1);
  const pending = [];
  for (let i = 0; i < N_REQUESTS; ++i) {
    if (rand() < 0.3) {   // the user typed: an incremental edit at the end
      const p = position();
      const ch = 'abcdefgh ()\n'[Math.floor(rand() * 12)];
      text += ch;
      c.send({ jsonrpc: '2.0', method: 'textDocument/didChange', params: {
        textDocument: { uri, version: ++version }, contentChanges: [{ range: { start: p, end: p }, text: ch }] } });
    }
    const myId = ++id;
    pending.push(myId);
    c.write(frame({ jsonrpc: '2.0', id: myId, method: 'textDocument/inlineCompletion', params: {
      textDocument: { uri }, position: position(), context: { triggerKind: rand() < 0.8 ? 2 : 1 } } }));
    const r = rand();
    if (r < 0.2) {   // cancel it after a moment
      await sleep(Math.floor(rand() * 5));
      c.send({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: myId } });
    }
    if (r < 0.6 || i % 10 === 9) {
      // wait for everything sent so far (other times the next request supersedes this one)
      const waitFor = pending.splice(0);
      await Promise.all(waitFor.map((x) => c.reply(x, 60000)));
    }
    seen();
  }
  await Promise.all(pending.map((x) => c.reply(x, 60000)));
  await sleep(300);   // a late duplicate reply would arrive here
  seen();
  c.sock.destroy();
  return counts;
}

test(`load: ${N_CLIENTS} clients x ${N_REQUESTS} completions with cancellations`, { timeout: 240000 }, async () => {
  const d = await startDaemon();
  try {
    const rssStart = d.rssKiB();
    // stories260K has no FIM tokens: each request that runs continues the text before the
    // cursor (the engine's prefix-only prompt), so every one is a real completion.
    const stats = { ok: 0, cancelled: 0, nonEmpty: 0, otherErrors: [] };
    const t0 = Date.now();
    const all = await Promise.all(Array.from({ length: N_CLIENTS }, (_, k) => runClient(d, k, stats)));
    const seconds = (Date.now() - t0) / 1000;
    const rssEnd = d.rssKiB();
    for (const [k, counts] of all.entries()) {
      assert.equal(counts.size, N_REQUESTS, `client ${k}: ${counts.size} of ${N_REQUESTS} requests answered`);
      for (const [rid, n] of counts) assert.equal(n, 1, `request ${rid} answered ${n} times`);
    }
    assert.deepEqual(stats.otherErrors, []);
    assert.ok(stats.nonEmpty > 0 && stats.cancelled > 0, JSON.stringify(stats));
    // Flat: four documents' KV slots on the tiny model are a few hundred KiB; a leak per
    // request (800 of them) would show as tens of MiB.
    assert.ok(rssEnd - rssStart < 16 * 1024, `daemon RSS grew from ${rssStart} to ${rssEnd} KiB`);
    console.log(`load: ${N_CLIENTS * N_REQUESTS} requests in ${seconds.toFixed(1)} s: ${stats.ok} answered ` +
                `(${stats.nonEmpty} with items), ${stats.cancelled} cancelled; daemon RSS ${rssStart} KiB at start, ${rssEnd} KiB at end`);
  } finally {
    const r = await d.stop();
    assert.equal(r.code, 0, d.stderr());
  }
});

// Cancel-to-answer: from writing $/cancelRequest to reading the -32800 (the client's clock).
// Cancel-to-next-job-start: the next request, written right after the cancel with no debounce,
// waits in the queue until the worker is free: hearth/status's lastQueueWaitMs for it.
const N_CANCELS = 16;   // per phase: in the prompt, in the decode
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const line = (name, xs) => `${name} median ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms`;

test('cancel latency on the default model: median under 50 ms', {
  timeout: 300000, skip: DEFAULT_MODEL ? false : 'no default model (scripts/fetch-model downloads it)',
}, async () => {
  // No chunk reuse: an edit of the first line makes the whole prompt evaluated again.
  const config = '[completion]\ndebounce-ms = 0\nprefetch = false\ntyped-ahead = false\nmax-tokens = 64\nchunk-reuse-min = 0\n' +
                 'time-budget-ms = 60000\n';
  const d = await startDaemon([], config, { model: DEFAULT_MODEL });
  const rand = rng(99);
  try {
    const c = await rawClient(d);
    await rawInitialize(c);
    const uri = 'file:///load/cancel.py';
    const lines = Array.from({ length: 20 }, (_, i) =>
      `def helper_${i}(values, scale=${i}):\n    return [v * scale + ${i} for v in values if v > ${i % 7}]\n`);
    let header = 0;
    const text = () => `# revision ${header}\n${lines.join('')}\ndef total(values):\n    `;
    let version = 1;
    c.send({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'python', version, text: text() } } });
    const end = () => { const l = text().split('\n'); return { line: l.length - 1, character: l[l.length - 1].length }; };
    let id = 100;
    const request = () => ({ jsonrpc: '2.0', id: ++id, method: 'textDocument/inlineCompletion',
                             params: { textDocument: { uri }, position: end(), context: { triggerKind: 2 } } });
    let statusId = 1000000;
    const status = async () => { const sid = ++statusId; c.send({ jsonrpc: '2.0', id: sid, method: 'hearth/status' }); return (await c.reply(sid, 60000)).result; };
    // Resolves once `n` jobs have started, with the last one's wait in the queue.
    const started = async (n) => {
      for (const t0 = performance.now(); ;) {
        const st = await status();
        if (st.jobsStarted >= n) return st;
        assert.ok(performance.now() - t0 < 20000, `job ${n} did not start in 20 s: ${JSON.stringify(st)}`);
        await sleep(2);
      }
    };

    // Warm: the whole prompt evaluated once (not measured).
    const warm = request();
    c.send(warm);
    await c.reply(warm.id, 240000);

    const results = {};
    for (const phase of ['decode', 'prompt']) {
      const answer = [], nextStart = [];
      let finishedFirst = 0;
      // The prompt phase edits the first line before each request: the whole prompt is evaluated again.
      const edit = () => {
        if (phase !== 'prompt') return;
        ++header;
        c.send({ jsonrpc: '2.0', method: 'textDocument/didChange', params: { textDocument: { uri, version: ++version },
                 contentChanges: [{ text: text() }] } });
      };
      edit();
      let running = request();
      const before = (await status()).jobsStarted;
      c.send(running);
      let jobs = (await started(before + 1)).jobsStarted;
      for (let i = 0; i < N_CANCELS; ++i) {
        // Into the decode (a prompt reused whole starts decoding at once) or the prompt evaluation.
        await sleep(phase === 'decode' ? 20 + Math.floor(rand() * 80) : 40 + Math.floor(rand() * 200));
        const next = request();
        const t0 = performance.now();
        c.write(frame({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: running.id } }));
        edit();
        c.send(next);
        const r = await c.reply(running.id, 60000);
        const ms = performance.now() - t0;
        const st = await started(jobs + 1);
        jobs = st.jobsStarted;
        if (r.error?.code === -32800) {
          answer.push(ms);
          nextStart.push(st.lastQueueWaitMs);
        } else {
          assert.ok(r.result, JSON.stringify(r));
          ++finishedFirst;   // it had finished before the cancel arrived
        }
        running = next;
      }
      c.write(frame({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: running.id } }));
      await c.reply(running.id, 60000);
      assert.ok(answer.length >= N_CANCELS / 2, `${phase}: only ${answer.length} of ${N_CANCELS} were still running at the cancel`);
      results[phase] = { answer, nextStart, finishedFirst };
      console.log(`cancel in the ${phase} (${answer.length} cancelled, ${finishedFirst} finished first): ` +
                  `${line('cancel-to-answer', answer)}; ${line('cancel-to-next-job-start', nextStart)}`);
    }
    const all = (k) => [...results.decode[k], ...results.prompt[k]];
    console.log(`cancel, all: ${line('cancel-to-answer', all('answer'))}; ${line('cancel-to-next-job-start', all('nextStart'))}`);
    // The target is 50 ms for both. On a shared machine the tail is the OS scheduler's (a
    // thread woken among many runnable ones), so the p99 bound here is looser; a cancel that
    // waits for its prompt to finish takes seconds and fails both.
    for (const k of ['answer', 'nextStart']) {
      assert.ok(percentile(all(k), 50) < 50, line(k, all(k)));
      assert.ok(percentile(all(k), 99) < 250, line(k, all(k)));
    }
    c.sock.destroy();
  } finally {
    const r = await d.stop();
    assert.equal(r.code, 0, d.stderr());
  }
});
