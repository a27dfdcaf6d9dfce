// Memory limits: the real daemon on the tiny model, started under a small RLIMIT_AS and (where
// this test may make one: root, a writable memory cgroup) inside a cgroup with a small memory
// limit, serves completions in many documents. It must find the limit, report it in
// hearth/status, keep its KV slots under a budget below it (evicting), and never be killed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { HEARTH_BIN, connectClient, initialize, startDaemon } from './harness.mjs';

const MiB = 1024 * 1024;
const N_DOCS = 300;
// About 300 prompt tokens each on the tiny model: 300 documents want some 40 MiB of KV slots.
const body = (k) => Array.from({ length: 12 }, (_, i) => `line ${i} of document ${k}: once upon a time`).join('\n') + '\n';
const config = 'cache-type = "f16"\nchat-template = "llama2"\n[limits]\nmax-documents = 1000\n' +
               '[completion]\ndebounce-ms = 0\nprefetch = false\n';

// Each document opened and completed once: N_DOCS slots wanted, far more than the limit holds.
async function completeInManyDocuments(d) {
  const { conn, sock } = await connectClient(d);
  await initialize(conn);
  // A killed daemon fails the test at once, with how it died.
  const died = d.exited.then((r) => { throw new Error(`the daemon died: ${JSON.stringify(r)}\n${d.stderr()}`); });
  const ask = (method, params) => Promise.race([conn.sendRequest(method, params), died]);
  let items = 0;
  for (let k = 0; k < N_DOCS; ++k) {
    const uri = `file:///mem/doc${k}.txt`;
    const text = body(k);
    await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'plaintext', version: 1, text } });
    const lines = text.split('\n');
    const r = await ask('textDocument/inlineCompletion', {
      textDocument: { uri }, position: { line: lines.length - 1, character: 0 }, context: { triggerKind: 2 } });
    items += r.items.length;
  }
  const st = await ask('hearth/status');
  sock.destroy();
  return { st, items };
}

function checkServedUnderLimit(d, st, items, limit, source) {
  assert.equal(d.child.exitCode, null, `the daemon exited:\n${d.stderr()}`);
  assert.equal(d.child.signalCode, null, `the daemon was killed:\n${d.stderr()}`);
  assert.equal(st.memoryLimitBytes, limit, JSON.stringify(st));
  assert.match(st.memoryLimitSource, source);
  assert.ok(st.kvBudgetBytes > 0 && st.kvBudgetBytes < limit / 2, `budget ${st.kvBudgetBytes} under a limit of ${limit}`);
  assert.ok(st.kvUsedBytes <= st.kvBudgetBytes, JSON.stringify(st));
  assert.ok(st.cacheEvictions > 0, `no slot was evicted: ${JSON.stringify(st)}`);
  assert.ok(items > 0, 'no completion had items');
  // What `hearth status` prints for it.
  const out = execFileSync(HEARTH_BIN, ['status', '--socket', d.socketPath], { encoding: 'utf8' });
  const shown = /^memory limit\s+([0-9.]+) MiB \((.*)\)$/m.exec(out);
  assert.ok(shown, out);
  assert.equal(Number(shown[1]), Number((limit / MiB).toFixed(1)));
  assert.equal(shown[2], st.memoryLimitSource);
  console.log(`memory: limit ${(limit / MiB).toFixed(0)} MiB (${st.memoryLimitSource}), KV budget ` +
              `${(st.kvBudgetBytes / MiB).toFixed(1)} MiB, ${(st.kvUsedBytes / MiB).toFixed(1)} MiB used, ` +
              `${st.cacheEvictions} evictions, RSS ${(d.rssKiB() / 1024).toFixed(1)} MiB, ` +
              `address space ${(d.vmKiB() / 1024).toFixed(1)} MiB`);
}

test('under RLIMIT_AS: the limit is found and reported, slots are evicted, the daemon lives', { timeout: 240000 }, async () => {
  const limit = 300 * MiB;
  const d = await startDaemon([], config, { wrap: `ulimit -v ${limit / 1024} && exec "$0" "$@"` });
  try {
    const { st, items } = await completeInManyDocuments(d);
    checkServedUnderLimit(d, st, items, limit, /^RLIMIT_AS$/);
  } finally {
    const r = await d.stop();
    assert.equal(r.code, 0, d.stderr());
  }
});

// A fresh memory cgroup below this process's own, v2 (memory.max) or v1
// (memory.limit_in_bytes), or the reason none can be made here.
function makeMemoryCgroup(limit) {
  if (process.getuid?.() !== 0) return { skip: 'not root: no cgroup can be made' };
  const own = fs.readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n').map((l) => l.split(':'));
  const tried = [];
  for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').trim().split('\n')) {
    const [pre, post] = line.split(' - ');
    const [, , , mountRoot, mountPoint] = pre.split(' ');
    const [fstype, , superOpts] = post.split(' ');
    let cgPath, file;
    if (fstype === 'cgroup2') {
      const controllers = fs.existsSync(`${mountPoint}/cgroup.controllers`) ? fs.readFileSync(`${mountPoint}/cgroup.controllers`, 'utf8') : '';
      if (!controllers.split(/\s+/).includes('memory')) continue;
      cgPath = own.find((f) => f[0] === '0')?.slice(2).join(':');
      file = 'memory.max';
    } else if (fstype === 'cgroup' && superOpts.split(',').includes('memory')) {
      cgPath = own.find((f) => f[1].split(',').includes('memory'))?.slice(2).join(':');
      file = 'memory.limit_in_bytes';
    } else {
      continue;
    }
    if (cgPath === undefined) continue;
    const rel = mountRoot !== '/' && cgPath.startsWith(mountRoot) ? cgPath.slice(mountRoot.length) : cgPath;
    const dir = path.join(mountPoint, rel, `hearth-test-${process.pid}`);
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, file), String(limit));
      return { dir, file: path.join(dir, file), v2: fstype === 'cgroup2' };
    } catch (e) {
      tried.push(`${dir}: ${e.message}`);
      try { fs.rmdirSync(dir); } catch {}
    }
  }
  return { skip: `no memory cgroup can be made here (${tried.join('; ') || 'no memory controller mounted'})` };
}

// The kernel may still hold the cgroup for a moment after its last process exited.
async function removeCgroup(dir) {
  for (let i = 0; ; ++i) {
    try { fs.rmdirSync(dir); return; } catch (e) {
      if (e.code === 'ENOENT') return;
      if (i >= 100) throw new Error(`cannot remove the test cgroup ${dir}: ${e.message}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

const cgroupLimit = 64 * MiB;
const cg = makeMemoryCgroup(cgroupLimit);
process.on('exit', () => { if (cg.dir) try { fs.rmdirSync(cg.dir); } catch {} });
test('in a cgroup with a small memory limit: found, reported, slots evicted, never OOM-killed',
     { timeout: 240000, skip: cg.skip ?? false }, async () => {
  const d = await startDaemon([], config, { wrap: `echo $$ > ${cg.dir}/cgroup.procs && exec "$0" "$@"` });
  try {
    const { st, items } = await completeInManyDocuments(d);
    checkServedUnderLimit(d, st, items, cgroupLimit, cg.v2 ? /^cgroup v2 memory\.max \(/ : /^cgroup v1 memory\.limit_in_bytes \(/);
    assert.ok(st.memoryLimitSource.includes(cg.file), st.memoryLimitSource);
  } finally {
    const r = await d.stop();
    await removeCgroup(cg.dir);
    assert.equal(r.code, 0, `${JSON.stringify(r)}\n${d.stderr()}`);
  }
});
