// Load: 4 clients x 200 inline completions against the real daemon on the tiny model, with
// edits between requests, bursts that supersede each other and random $/cancelRequest.
// Every request must be answered exactly once, with a result or -32800 and nothing else.
// The daemon's RSS at start and end is reported. Fixed seed; bounded in time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { frame, rawClient, rawInitialize, startDaemon } from './harness.mjs';

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
