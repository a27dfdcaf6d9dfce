#!/usr/bin/env node
// A scripted language server for the plugin tests: it speaks the same protocol as the
// hearth daemon (docs/protocol.md) but answers by fixed rules, so the tests can check
// exact ghost text, accepted text and the feedback notifications the plugins send.
// The real daemon is exercised by the e2e tests; this one makes plugin logic testable
// without a model.
//
// Rules: inline completion returns `<word>_suggestion(1, 2)\nnext_line()` replacing the
// identifier before the cursor (range from its start to the cursor); with no identifier
// there, `fallback()` at the cursor; a line containing "slow" is answered after 1500 ms.
// An invoked request (triggerKind 1) also gets `<word>_alternative()`. Items carry the
// daemon's accept command (hearth.acceptCompletion {uri, id}).
// Answers (hearth/chat, or workspace/executeCommand hearth.explain / .fix / .ask) stream
// "Hello", " from", " the fake" 40 ms apart (400 ms when the prompt contains "slow"):
// as partial results {text} for hearth/chat's partialResultToken, as work-done progress
// (begin, report {message, text}, end) for a workDoneToken; then the reply has the whole
// text. hearth/nextEdit finds a rename: the first line that differs from the text the
// document was opened with by one identifier (old -> new); the edit renames the next
// whole-word use of old, shown at the start of its line (no rename left: no edit). A line
// that is exactly "todo" gets " done" inserted at its end instead.
// Every message received is logged; the request fake/log returns the log, and with
// FAKE_LOG_FILE set each one is also appended there as a JSON line (for tests that drive
// an editor and cannot send fake/log themselves).
'use strict';

const fs = require('fs');

const delayMs = Number(process.env.FAKE_DELAY_MS || 0);
const logFile = process.env.FAKE_LOG_FILE;
const docs = new Map();
const opened = new Map();   // uri -> the text of didOpen
const versions = new Map();
const log = [];
const running = new Map(); // request id -> { cancelled }

function send(msg) {
    const body = Buffer.from(JSON.stringify(msg), 'utf8');
    process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
    process.stdout.write(body);
}

// JS strings are UTF-16, as LSP positions are.
function offsetAt(text, pos) {
    let off = 0;
    for (let l = 0; l < pos.line; l++) {
        const nl = text.indexOf('\n', off);
        if (nl < 0) return text.length;
        off = nl + 1;
    }
    return Math.min(off + pos.character, text.length);
}

function applyChange(uri, change) {
    if (!change.range) { docs.set(uri, change.text); return; }
    const t = docs.get(uri) ?? '';
    docs.set(uri, t.slice(0, offsetAt(t, change.range.start)) + change.text + t.slice(offsetAt(t, change.range.end)));
}

function complete(params) {
    const text = docs.get(params.textDocument.uri) ?? '';
    const lines = text.split('\n');
    const line = lines[params.position.line] ?? '';
    const before = line.slice(0, params.position.character);
    const word = /[A-Za-z_][A-Za-z0-9_]*$/.exec(before);
    const command = { title: 'hearth: accept completion', command: 'hearth.acceptCompletion',
                      arguments: [{ uri: params.textDocument.uri, id: String(++itemId) }] };
    if (!word) return { items: [{ insertText: 'fallback()', command }] };
    const start = { line: params.position.line, character: params.position.character - word[0].length };
    const items = [{ insertText: `${word[0]}_suggestion(1, 2)\nnext_line()`, range: { start, end: params.position }, command }];
    // Invoked: a second candidate.
    if (params.context.triggerKind === 1) {
        items.push({ insertText: `${word[0]}_alternative()`, range: { start, end: params.position },
                     command: { ...command, arguments: [{ uri: params.textDocument.uri, id: String(++itemId) }] } });
    }
    return { items };
}
let itemId = 0;

const identifiers = (line) => line.match(/[A-Za-z_][A-Za-z0-9_]*|[^\sA-Za-z_]/g) ?? [];

// The rename old -> new between the opened text and the current one, if a line shows one.
function renameOf(before, now) {
    const a = before.split('\n'), b = now.split('\n');
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
        if (a[i] === b[i]) continue;
        const x = identifiers(a[i]), y = identifiers(b[i]);
        if (x.length !== y.length) continue;
        const diff = x.map((t, k) => [t, y[k]]).filter(([t, u]) => t !== u);
        if (diff.length === 1 && /^[A-Za-z_]/.test(diff[0][0]) && /^[A-Za-z_]/.test(diff[0][1])) return diff[0];
    }
    return undefined;
}

let editId = 0;
function nextEdit(params) {
    const uri = params.textDocument.uri;
    const text = docs.get(uri) ?? '';
    const version = versions.get(uri);
    const todo = text.split('\n').indexOf('todo');
    if (todo >= 0) {
        const at = { line: todo, character: 4 };
        return { edits: [{ id: `ne-${++editId}`, textDocument: { uri, version }, range: { start: at, end: at }, newText: ' done',
                           showAt: { start: { line: todo, character: 0 }, end: { line: todo, character: 0 } } }] };
    }
    const rename = renameOf(opened.get(uri) ?? '', text);
    if (!rename) return { edits: [] };
    const [from, to] = rename;
    const lines = text.split('\n');
    for (let line = 0; line < lines.length; line++) {
        const m = new RegExp(`\\b${from}\\b`).exec(lines[line]);
        if (!m) continue;
        const range = { start: { line, character: m.index }, end: { line, character: m.index + from.length } };
        return { edits: [{ id: `ne-${++editId}`, textDocument: { uri, version }, range, newText: to,
                           showAt: { start: { line, character: 0 }, end: { line, character: 0 } } }] };
    }
    return { edits: [] };
}

// Streams the answer; `partial`: as partial results, else as work-done reports.
async function answer(msg, prompt, token, partial) {
    const state = { cancelled: false };
    running.set(msg.id, state);
    const progress = (value) => send({ jsonrpc: '2.0', method: '$/progress', params: { token, value } });
    if (!partial && token !== undefined) progress({ kind: 'begin', title: 'hearth', cancellable: true });
    let text = '';
    for (const piece of ['Hello', ' from', ' the fake']) {
        await sleep(prompt.includes('slow') ? 400 : 40);
        if (state.cancelled) break;
        text += piece;
        if (token !== undefined) progress(partial ? { text: piece } : { kind: 'report', message: piece, text: piece });
    }
    if (!partial && token !== undefined) progress({ kind: 'end' });
    running.delete(msg.id);
    if (state.cancelled) return send({ jsonrpc: '2.0', id: msg.id, error: { code: -32800, message: 'cancelled' } });
    send({ jsonrpc: '2.0', id: msg.id, result: { text } });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function handle(msg) {
    log.push({ method: msg.method, params: msg.params });
    if (logFile) fs.appendFileSync(logFile, JSON.stringify({ method: msg.method, params: msg.params }) + '\n');
    const reply = (result) => send({ jsonrpc: '2.0', id: msg.id, result });
    const fail = (code, message) => send({ jsonrpc: '2.0', id: msg.id, error: { code, message } });
    switch (msg.method) {
    case 'initialize':
        return reply({
            capabilities: {
                positionEncoding: 'utf-16',
                textDocumentSync: { openClose: true, change: 2 },
                inlineCompletionProvider: true,
                executeCommandProvider: { commands: ['hearth.explain', 'hearth.fix', 'hearth.ask', 'hearth.acceptCompletion'] },
                experimental: { hearth: { methods: ['hearth/nextEdit'] } },
            },
            serverInfo: { name: 'fake-hearth', version: '0' },
        });
    case 'shutdown': return reply(null);
    case 'exit': process.exit(0); return;
    case 'textDocument/didOpen': {
        const d = msg.params.textDocument;
        docs.set(d.uri, d.text);
        opened.set(d.uri, d.text);
        versions.set(d.uri, d.version);
        return;
    }
    case 'textDocument/didChange':
        for (const c of msg.params.contentChanges) applyChange(msg.params.textDocument.uri, c);
        versions.set(msg.params.textDocument.uri, msg.params.textDocument.version);
        return;
    case '$/cancelRequest': { const r = running.get(msg.params.id); if (r) r.cancelled = true; return; }
    case 'textDocument/inlineCompletion': {
        const state = { cancelled: false };
        running.set(msg.id, state);
        // A line containing "slow" is answered after 1500 ms, so tests can cancel it.
        const t = docs.get(msg.params.textDocument.uri) ?? '';
        const slow = (t.split('\n')[msg.params.position.line] ?? '').includes('slow');
        if (delayMs || slow) await sleep(slow ? 1500 : delayMs);
        running.delete(msg.id);
        if (state.cancelled) return fail(-32800, 'cancelled');
        return reply(complete(msg.params));
    }
    case 'hearth/nextEdit': {
        const state = { cancelled: false };
        running.set(msg.id, state);
        if (delayMs) await sleep(delayMs);
        running.delete(msg.id);
        if (state.cancelled) return fail(-32800, 'cancelled');
        return reply(nextEdit(msg.params));
    }
    case 'hearth/chat': return answer(msg, msg.params.prompt, msg.params.partialResultToken, true);
    case 'workspace/executeCommand': {
        const p = msg.params;
        if (p.command === 'hearth.acceptCompletion') return reply(null);
        if (['hearth.explain', 'hearth.fix', 'hearth.ask'].includes(p.command)) {
            return answer(msg, (p.arguments[0] && p.arguments[0].prompt) || '', p.workDoneToken, false);
        }
        return fail(-32602, `unknown command ${p.command}`);
    }
    case 'hearth/status':
        return reply({ model: { name: 'fake-model' }, queue: { pending: 0 }, lastCompletion: { totalMs: 12 } });
    case 'fake/log': return reply(log.filter((e) => e.method !== 'fake/log'));
    case 'fake/document': return reply(docs.get(msg.params.uri) ?? null);
    default:
        if (msg.id !== undefined) fail(-32601, `unknown method ${msg.method}`);
    }
}

let buf = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const m = /Content-Length: *(\d+)/i.exec(buf.slice(0, end).toString('ascii'));
        if (!m) { process.stderr.write('fake server: bad header\n'); process.exit(2); }
        const len = Number(m[1]);
        if (buf.length < end + 4 + len) return;
        const body = buf.slice(end + 4, end + 4 + len).toString('utf8');
        buf = buf.slice(end + 4 + len);
        void handle(JSON.parse(body));
    }
});
process.stdin.on('end', () => process.exit(0));
