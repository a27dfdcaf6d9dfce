// The VS Code extension with every hearth.* setting unset (no daemon path, no model), in
// the tree run_default_model.sh prepares (only the default model downloaded, `hearth` on
// PATH): the extension's own modules find the binary and build the `hearth lsp` command
// line; the daemon that command starts must have loaded the default model.
'use strict';
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const cp = require('child_process');
const path = require('path');
const { createRequire } = require('module');

const ext = path.resolve(__dirname, '../../plugins/vscode');
const rpc = createRequire(path.join(ext, 'package.json'))('vscode-jsonrpc/node');
const protocol = require(path.join(ext, 'out/src/protocol.js'));
const { helpFlags, lspArgs, readSettings, resolveDaemon } = require(path.join(ext, 'out/src/config.js'));

let proc, conn;

after(async () => {
    if (conn) {
        await conn.sendRequest('shutdown').catch(() => undefined);
        conn.sendNotification('exit');
        conn.dispose();
    }
    if (proc) await new Promise((r) => { proc.once('exit', r); setTimeout(r, 3000); });
});

test('settings unset: hearth from PATH, `hearth lsp` alone, and the daemon has the default model', async () => {
    assert.equal(process.env.HEARTH_MODEL, undefined);
    const settings = readSettings(() => undefined);
    const found = resolveDaemon(settings.daemonPath, process.env.PATH);
    assert.ok(found.path, found.error);
    assert.equal(path.basename(found.path), 'hearth');
    const { args, dropped } = lspArgs(settings, helpFlags(cp.execFileSync(found.path, ['lsp', '--help'], { encoding: 'utf8' })));
    assert.deepEqual(args, ['lsp']);
    assert.deepEqual(dropped, []);
    proc = cp.spawn(found.path, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
    conn.listen();
    await conn.sendRequest('initialize', {
        processId: process.pid, clientInfo: { name: 'Visual Studio Code' }, rootUri: null, capabilities: {},
    });
    conn.sendNotification('initialized', {});
    const s = await conn.sendRequest(protocol.method.status, {});
    assert.equal(s.modelPath, process.env.HEARTH_DEFAULT_MODEL_LINK);
    assert.ok(typeof s.model === 'string' && s.model.length > 0, JSON.stringify(s.model));
    console.log(`daemon model: ${s.model} (${s.modelPath})`);
});

test('hearth lsp accepts --stdio (many LSP clients append it) and relays as without it', async () => {
    const p = cp.spawn('hearth', ['lsp', '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d) => { stderr += d; });
    const c = rpc.createMessageConnection(new rpc.StreamMessageReader(p.stdout), new rpc.StreamMessageWriter(p.stdin));
    c.listen();
    const exited = new Promise((r) => p.once('exit', (code) => r(code)));
    const reply = c.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
    const first = await Promise.race([reply, exited.then((code) => ({ exited: code }))]);
    assert.ok(!('exited' in first), `hearth lsp --stdio exited with ${first.exited}: ${stderr}`);
    assert.ok(first.capabilities.inlineCompletionProvider);
    await c.sendRequest('shutdown');
    c.sendNotification('exit');
    assert.equal(await exited, 0, stderr);
    c.dispose();
});
