// Starts the real `hearth daemon` on the tiny fixture model in a private runtime
// directory and connects clients to it: vscode-jsonrpc message connections over the
// Unix socket or loopback TCP, and a raw framing client for malformed input and for
// counting replies by id.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createMessageConnection, SocketMessageReader, SocketMessageWriter } from 'vscode-jsonrpc/node.js';

export const HEARTH_BIN = process.env.HEARTH_BIN;
export const HEARTH_MODEL = process.env.HEARTH_MODEL;
if (!HEARTH_BIN || !HEARTH_MODEL) throw new Error('set HEARTH_BIN (the built hearth binary) and HEARTH_MODEL (a GGUF model)');

// Resolves when the daemon logs that it listens on TCP (it logs the Unix socket first).
// The tiny model's head size (8) is too small for a q8_0 KV cache: f16 it is; it has no
// chat template and no ChatML tokens: llama2's [INST] (its <s>, </s>) formats its conversations.
// `wrap`: a shell script that ends by exec'ing "$0" "$@" (the daemon and its arguments), to
// start it under a resource limit or in a cgroup.
export async function startDaemon(extraArgs = [], configText = 'cache-type = "f16"\nchat-template = "llama2"\n',
                                  { wrap = null, model = HEARTH_MODEL } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-node-'));
  const runtimeDir = path.join(dir, 'run');
  const args = ['daemon', '--model', model, '--runtime-dir', runtimeDir, '--tcp', '0',
                '--slot-dir', path.join(dir, 'slots'),
                '--log-file', 'none', '--log-level', 'info', '--threads', '2'];
  if (configText !== null) {
    const cfg = path.join(dir, 'config.toml');
    fs.writeFileSync(cfg, configText);
    args.push('--config', cfg);
  } else {
    args.push('--config', path.join(dir, 'no-such-config.toml'));
    fs.writeFileSync(path.join(dir, 'no-such-config.toml'), '');
  }
  const child = wrap
    ? spawn('sh', ['-c', wrap, HEARTH_BIN, ...args, ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(HEARTH_BIN, args.concat(extraArgs), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (d) => { stdout += d; });
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start in 30 s:\n${stderr}`)), 30000);
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /listening on tcp [0-9.]+:(\d+)/.exec(stderr);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`daemon exited ${code}:\n${stderr}`)); });
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child, dir, runtimeDir, port, exited,
    socketPath: path.join(runtimeDir, 'hearth.sock'),
    token: () => fs.readFileSync(path.join(runtimeDir, 'hearth.token'), 'utf8').trim(),
    stderr: () => stderr,
    stdout: () => stdout,
    rssKiB: () => statusKiB(child.pid, 'VmRSS'),
    vmKiB: () => statusKiB(child.pid, 'VmSize'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const r = await exited;
      fs.rmSync(dir, { recursive: true, force: true });
      return r;
    },
  };
}

function statusKiB(pid, field) {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

export function connectSocket(d, { tcp = false } = {}) {
  return new Promise((resolve, reject) => {
    const sock = tcp ? net.createConnection({ host: '127.0.0.1', port: d.port }) : net.createConnection(d.socketPath);
    sock.once('connect', () => resolve(sock));
    sock.once('error', reject);
  });
}

// A vscode-jsonrpc connection; over TCP it authenticates first with the token file.
export async function connectClient(d, { tcp = false } = {}) {
  const sock = await connectSocket(d, { tcp });
  const conn = createMessageConnection(new SocketMessageReader(sock), new SocketMessageWriter(sock));
  conn.listen();
  if (tcp) await conn.sendRequest('hearth/auth', { token: d.token() });
  const closed = new Promise((resolve) => sock.once('close', resolve));
  return { conn, sock, closed };
}

export async function initialize(conn, extra = {}) {
  const r = await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {}, ...extra });
  await conn.sendNotification('initialized', {});
  return r;
}

export function frame(body) {
  const b = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`, 'ascii'), b]);
}

// Raw client: writes bytes, parses framed replies into `messages`, resolves waits.
export class RawClient {
  constructor(sock) {
    this.sock = sock;
    this.buf = Buffer.alloc(0);
    this.messages = [];
    this.waiters = [];
    this.closed = new Promise((resolve) => sock.once('close', resolve));
    sock.on('data', (d) => { this.buf = Buffer.concat([this.buf, d]); this.parse(); });
    sock.on('error', () => {});
  }
  parse() {
    for (;;) {
      const he = this.buf.indexOf('\r\n\r\n');
      if (he < 0) return;
      const m = /Content-Length: (\d+)/i.exec(this.buf.subarray(0, he).toString('ascii'));
      const len = Number(m[1]);
      if (this.buf.length < he + 4 + len) return;
      const msg = JSON.parse(this.buf.subarray(he + 4, he + 4 + len).toString('utf8'));
      this.buf = this.buf.subarray(he + 4 + len);
      this.messages.push(msg);
      this.waiters = this.waiters.filter((w) => !w(msg));
    }
  }
  send(obj) { this.sock.write(frame(obj)); }
  write(bytes) { this.sock.write(bytes); }
  // Resolves with the first message (already received or future) that matches.
  waitFor(pred, ms = 10000) {
    const have = this.messages.find(pred);
    if (have) return Promise.resolve(have);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('timed out waiting for a message')), ms);
      this.waiters.push((msg) => { if (pred(msg)) { clearTimeout(t); resolve(msg); return true; } return false; });
    });
  }
  reply(id, ms) { return this.waitFor((m) => m.id === id && !('method' in m), ms); }
}

export async function rawClient(d, opts) {
  return new RawClient(await connectSocket(d, opts));
}

export async function rawInitialize(c) {
  c.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, capabilities: {} } });
  await c.reply(1);
  c.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
}
