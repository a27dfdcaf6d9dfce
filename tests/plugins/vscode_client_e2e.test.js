// The VS Code extension's client code against the real daemon (started by run_e2e.sh),
// through `hearth lsp` as the extension spawns it. Beside the real-editor test
// (plugins_vscode_real), this drives the daemon with vscode-jsonrpc, the library under
// vscode-languageclient, and with the extension's own compiled modules: the arguments it
// builds (config), the requests and feedback it sends (protocol, feedback), the answer
// view's transcript and the status bar line.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const cp = require('child_process');
const path = require('path');
const fs = require('fs');
const os = require('os');
const { createRequire } = require('module');

const ext = path.resolve(__dirname, '../../plugins/vscode');
// The extension's own copy of vscode-jsonrpc (the one vscode-languageclient runs on).
const rpc = createRequire(path.join(ext, 'package.json'))('vscode-jsonrpc/node');
const protocol = require(path.join(ext, 'out/src/protocol.js'));
const { Feedback } = require(path.join(ext, 'out/src/feedback.js'));
const { helpFlags, initializationOptions, lspArgs, readSettings } = require(path.join(ext, 'out/src/config.js'));
const { statusBarText } = require(path.join(ext, 'out/src/status_format.js'));
const { ChatTranscript } = require(path.join(ext, 'out/src/chat_transcript.js'));

const bin = process.env.HEARTH_E2E_CMD;
const runtime = process.env.HEARTH_E2E_RUNTIME;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-vscode-'));
const uri = 'file://' + path.join(dir, 'arith.py');
const text = 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return ';
const cursor = { line: 5, character: 11 };   // after "return "
const selection = { start: { line: 0, character: 0 }, end: { line: 1, character: 16 } };   // def add

let proc, conn, settings;
const progress = [];   // every $/progress, in order

// Records the progress of `token` (vscode-jsonrpc hands each token's $/progress to the
// handler registered for it, as vscode-languageclient's onProgress does); `also` sees each
// value too.
function watch(token, also) {
    return conn.onProgress(new rpc.ProgressType(), token, (value) => {
        progress.push({ token, value });
        if (also) also(value);
    });
}

function status() { return conn.sendRequest(protocol.method.status, {}); }
function itemsOf(r) { return r === null ? [] : Array.isArray(r) ? r : r.items; }

before(async () => {
    // As the extension starts it: settings -> `hearth lsp` arguments, filtered by --help.
    settings = readSettings((k) => ({ logLevel: 'debug', extraArgs: ['--runtime-dir', runtime, '--no-start'] })[k]);
    const known = helpFlags(cp.execFileSync(bin, ['lsp', '--help'], { encoding: 'utf8' }));
    const { args, dropped } = lspArgs(settings, known);
    assert.deepEqual(dropped, []);
    proc = cp.spawn(bin, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
    conn.onUnhandledProgress((p) => progress.push(p));
    conn.listen();
});

after(async () => {
    if (conn) {
        await conn.sendRequest('shutdown').catch(() => undefined);
        conn.sendNotification('exit');
        conn.dispose();
    }
    if (proc) await new Promise((r) => { proc.once('exit', r); setTimeout(r, 3000); });
    fs.rmSync(dir, { recursive: true, force: true });
});

test('initialize: capabilities the extension relies on', async () => {
    const r = await conn.sendRequest('initialize', {
        processId: process.pid, clientInfo: { name: 'Visual Studio Code', version: '1.91.0' }, rootUri: 'file://' + dir,
        capabilities: { general: { positionEncodings: ['utf-16'] }, window: { workDoneProgress: true },
                        textDocument: { inlineCompletion: { dynamicRegistration: true } } },
        initializationOptions: initializationOptions(settings),
    });
    assert.equal(r.capabilities.positionEncoding, 'utf-16');
    assert.ok(r.capabilities.inlineCompletionProvider);
    for (const c of ['hearth.explain', 'hearth.fix', 'hearth.ask', protocol.acceptCompletionCommand]) {
        assert.ok(r.capabilities.executeCommandProvider.commands.includes(c), c);
    }
    conn.sendNotification('initialized', {});
    conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
});

test('invoked completion, shown and accepted through the item command', async () => {
    const fb = new Feedback({ notify: (m, p) => conn.sendNotification(m, p) });
    const t0 = Date.now();
    // Invoked: the daemon answers with its ranked candidates (an automatic request may
    // rightly answer none at a given point).
    const items = itemsOf(await conn.sendRequest(protocol.method.inlineCompletion,
        protocol.inlineCompletionParams(uri, cursor, protocol.triggerKind.invoked)));
    const ms = Date.now() - t0;
    assert.ok(items.length >= 1, 'at least one item');
    const item = items[0];
    assert.ok(protocol.insertTextOf(item).length > 0, 'non-empty insertText');
    assert.ok(item.range, 'a range');
    assert.ok(item.range.start.line <= cursor.line && item.range.end.line === cursor.line, JSON.stringify(item.range));
    console.log(`invoked completion in ${ms} ms: ${items.length} item(s), first ${JSON.stringify(protocol.insertTextOf(item))}`);
    const typed = item.range.start.line === cursor.line ? cursor.character - item.range.start.character : 0;
    const before = await status();
    fb.shown(uri, item, typed);
    // What VS Code does on Tab: apply the edit, then run the item's command.
    assert.equal(item.command.command, protocol.acceptCompletionCommand);
    assert.equal(await conn.sendRequest('workspace/executeCommand', { command: item.command.command, arguments: item.command.arguments }), null);
    fb.accepted(uri, true);
    const after = await status();
    assert.equal(after.completionsShown, before.completionsShown + 1);
    assert.equal(after.completionsAccepted, before.completionsAccepted + 1);
});

test('automatic completion, then a reject and a partial accept are counted', async () => {
    const fb = new Feedback({ notify: (m, p) => conn.sendNotification(m, p) });
    const items = itemsOf(await conn.sendRequest(protocol.method.inlineCompletion,
        protocol.inlineCompletionParams(uri, cursor, protocol.triggerKind.automatic)));
    assert.ok(items.length <= 1, 'an automatic request gets at most one item');
    const item = items[0] ?? { insertText: 'a * b', range: { start: cursor, end: cursor } };   // the feedback needs one
    const before = await status();
    fb.shown(uri, item);
    fb.dismissed();
    fb.shown(uri, item);
    fb.partiallyAccepted(uri, 1);
    fb.dismissed();   // after a partial accept: no reject
    const after = await status();
    assert.equal(after.completionsRejected, before.completionsRejected + 1);
    assert.equal(after.completionsShown, before.completionsShown + 2);
    assert.equal(after.completionsAccepted, before.completionsAccepted + 1, 'a partial accept counts as accepted');
});

test('hearth.explain streams work-done reports; the reply is their concatenation', async () => {
    const token = 'vscode-e2e-explain';
    const tr = new ChatTranscript('explain', '', 'arith.py', 0, 1);
    const sub = watch(token, (v) => tr.append(protocol.progressDelta(v)));
    const mark = progress.length;
    const r = await conn.sendRequest('workspace/executeCommand', protocol.chatCommandParams('explain', uri, selection, '', token));
    sub.dispose();
    const mine = progress.slice(mark).filter((p) => p.token === token).map((p) => p.value);
    assert.equal(mine[0].kind, 'begin');
    assert.equal(mine[mine.length - 1].kind, 'end');
    assert.ok(mine.length >= 3, 'begin, at least one report, end');
    const streamed = mine.map(protocol.progressDelta).join('');
    assert.equal(r.text, streamed);
    tr.finish(r.text);
    assert.equal(tr.text, r.text);
    assert.ok(r.text.length > 0);
    console.log(`explain: ${mine.length - 2} pieces: ${JSON.stringify(r.text.slice(0, 100))}`);
});

test('hearth/chat streams partial results; a cancelled answer stops with -32800', async () => {
    const mark = progress.length;
    const sub1 = watch('p1');
    const r = await conn.sendRequest(protocol.method.chat, protocol.chatParams(uri, selection, 'What does add return?', 'p1'));
    sub1.dispose();
    const pieces = progress.slice(mark).filter((p) => p.token === 'p1').map((p) => protocol.progressDelta(p.value));
    assert.ok(pieces.length >= 1, 'streamed');
    assert.equal(r.text, pieces.join(''));

    const cts = new rpc.CancellationTokenSource();
    let streamed = 0;
    const sub = watch('p2', () => { streamed++; cts.cancel(); });   // cancel at the first piece
    await assert.rejects(conn.sendRequest(protocol.method.chat,
        protocol.chatParams(uri, selection, 'Write ten more functions like this one, each with a docstring.', 'p2'), cts.token),
        (e) => e.code === -32800);
    sub.dispose();
    assert.ok(streamed >= 1 && streamed <= 4, `pieces before the cancel took effect: ${streamed}`);
});

test('status: the status bar line names the model and the last completion', async () => {
    const s = await status();
    const line = statusBarText(s, false);
    assert.ok(s.model.length > 0 && line.includes(s.model), line);
    assert.match(line, /\d+ ms/);
    console.log(`status bar: ${line}`);
});
