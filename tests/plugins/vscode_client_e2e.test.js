// The VS Code extension's client code against the real daemon (started by run_e2e.sh),
// through `hearth lsp` as the extension spawns it. VS Code itself cannot run here (see
// docs/editors.md), so this drives the daemon with vscode-jsonrpc, the library under
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

const ext = path.resolve(__dirname, '../../plugins/vscode');
const rpc = require(path.join(ext, 'node_modules/vscode-jsonrpc/node'));
const protocol = require(path.join(ext, 'out/src/protocol.js'));
const { Feedback } = require(path.join(ext, 'out/src/feedback.js'));
const { helpFlags, initializationOptions, lspArgs, readSettings } = require(path.join(ext, 'out/src/config.js'));
const { statusBarText } = require(path.join(ext, 'out/src/status_format.js'));
const { ChatTranscript } = require(path.join(ext, 'out/src/chat_transcript.js'));

const bin = process.env.HEARTH_E2E_CMD;
const runtime = process.env.HEARTH_E2E_RUNTIME;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-vscode-'));
const uri = 'file://' + path.join(dir, 'story.py');
const text = 'Once upon a time, there was a little girl named Lily.\nShe liked to';

let proc, conn, settings;
const progress = [];   // every $/progress, in order

function status() { return conn.sendRequest(protocol.method.status, {}); }

before(async () => {
    // As the extension starts it: settings -> `hearth lsp` arguments, filtered by --help.
    settings = readSettings((k) => ({ logLevel: 'debug', extraArgs: ['--runtime-dir', runtime, '--no-start'] })[k]);
    const known = helpFlags(cp.execFileSync(bin, ['lsp', '--help'], { encoding: 'utf8' }));
    const { args, dropped } = lspArgs(settings, known);
    assert.deepEqual(dropped, []);
    proc = cp.spawn(bin, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
    conn.onNotification('$/progress', (p) => progress.push(p));
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

test('inline completion, shown and accepted through the item command', async () => {
    const fb = new Feedback({ notify: (m, p) => conn.sendNotification(m, p) });
    const pos = { line: 1, character: 12 };
    const t0 = Date.now();
    const r = await conn.sendRequest(protocol.method.inlineCompletion, protocol.inlineCompletionParams(uri, pos, protocol.triggerKind.automatic));
    const ms = Date.now() - t0;
    const items = Array.isArray(r) ? r : r.items;
    assert.ok(items.length >= 1, 'at least one item');
    const item = items[0];
    assert.ok(protocol.insertTextOf(item).length > 0, 'non-empty insertText');
    assert.ok(item.range, 'a range');
    assert.ok(item.range.start.line <= pos.line && item.range.end.line === pos.line);
    console.log(`automatic completion in ${ms} ms: ${JSON.stringify(protocol.insertTextOf(item))}`);
    const typed = item.range.start.line === pos.line ? pos.character - item.range.start.character : 0;
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

test('invoked completion, then a reject and a partial accept are counted', async () => {
    const fb = new Feedback({ notify: (m, p) => conn.sendNotification(m, p) });
    const r = await conn.sendRequest(protocol.method.inlineCompletion,
        protocol.inlineCompletionParams(uri, { line: 1, character: 12 }, protocol.triggerKind.invoked));
    const items = Array.isArray(r) ? r : r.items;
    assert.ok(items.length >= 1);
    const before = await status();
    fb.shown(uri, items[0]);
    fb.dismissed();
    fb.shown(uri, items[items.length - 1]);
    fb.partiallyAccepted(uri, 1);
    fb.dismissed();   // after a partial accept: no reject
    const after = await status();
    assert.equal(after.completionsRejected, before.completionsRejected + 1);
    assert.equal(after.completionsShown, before.completionsShown + 2);
    assert.equal(after.completionsAccepted, before.completionsAccepted + 1, 'a partial accept counts as accepted');
});

test('hearth.explain streams work-done reports; the reply is their concatenation', async () => {
    const token = 'vscode-e2e-explain';
    const range = { start: { line: 0, character: 0 }, end: { line: 1, character: 12 } };
    const tr = new ChatTranscript('explain', '', 'story.py', 0, 1);
    const sub = conn.onProgress(new rpc.ProgressType(), token, (v) => tr.append(protocol.progressDelta(v)));
    const mark = progress.length;
    const r = await conn.sendRequest('workspace/executeCommand', protocol.chatCommandParams('explain', uri, range, '', token));
    sub.dispose();
    const mine = progress.slice(mark).filter((p) => p.token === token).map((p) => p.value);
    assert.equal(mine[0].kind, 'begin');
    assert.equal(mine[mine.length - 1].kind, 'end');
    const streamed = mine.map(protocol.progressDelta).join('');
    assert.ok(mine.length >= 3, 'begin, at least one report, end');
    assert.equal(r.text, streamed);
    tr.finish(r.text);
    assert.equal(tr.text, r.text);
    assert.ok(r.text.length > 0);
    console.log(`explain: ${mine.length - 2} pieces: ${JSON.stringify(r.text.slice(0, 100))}`);
});

test('hearth/chat streams partial results; a cancelled answer stops with -32800', async () => {
    const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 4 } };
    const mark = progress.length;
    const r = await conn.sendRequest(protocol.method.chat, protocol.chatParams(uri, range, 'Who is Lily?', 'p1'));
    const pieces = progress.slice(mark).filter((p) => p.token === 'p1').map((p) => protocol.progressDelta(p.value));
    assert.equal(r.text, pieces.join(''));

    const cts = new rpc.CancellationTokenSource();
    const sub = conn.onProgress(new rpc.ProgressType(), 'p2', () => cts.cancel());   // cancel at the first piece
    await assert.rejects(conn.sendRequest(protocol.method.chat, protocol.chatParams(uri, range, 'Tell a long story.', 'p2'), cts.token),
        (e) => e.code === -32800);
    sub.dispose();
});

test('status: the status bar line names the model and the last completion', async () => {
    const s = await status();
    const line = statusBarText(s, false);
    assert.match(line, /stories260K/);
    assert.match(line, / ms/);
    console.log(`status bar: ${line}`);
});
