// activate() with the editor and the language client replaced by recorders: the daemon
// lookup and its error messages, the arguments `hearth lsp` gets, the commands registered.
import { calls, clientBehaviour, config } from './activation_mock';
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const extension = require('../src/extension');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-activate-'));
// A stand-in `hearth` whose `lsp --help` lists some of the real flags.
const fakeHearth = path.join(dir, 'hearth');
fs.writeFileSync(fakeHearth, '#!/bin/sh\necho "Options:\n  --model TEXT  GGUF model\n  --log-level TEXT\n  --log-file TEXT\n  --runtime-dir TEXT"\n', { mode: 0o755 });
// What VS Code does on deactivation: dispose the subscriptions (the status bar's timer too).
const contexts: Array<{ subscriptions: Array<{ dispose(): void }> }> = [];
const context = () => { const c = { subscriptions: [] as Array<{ dispose(): void }> }; contexts.push(c); return c; };
afterEach(() => { for (const c of contexts.splice(0)) for (const d of c.subscriptions) d.dispose(); });

beforeEach(() => {
    calls.commands.length = 0; calls.errors.length = 0; calls.clients.length = 0; calls.output.length = 0;
    for (const k of Object.keys(config)) delete config[k];
    clientBehaviour.startError = undefined;
});

test('a daemon that is not on PATH: a clear error, no client', async () => {
    config.daemonPath = 'hearth-that-does-not-exist';
    await extension.activate(context());
    assert.equal(calls.clients.length, 0);
    assert.equal(calls.errors.length, 1);
    assert.match(calls.errors[0], /"hearth-that-does-not-exist" was not found on PATH .*hearth\.daemonPath/);
    for (const id of ['hearth.explainSelection', 'hearth.fixSelection', 'hearth.askSelection', 'hearth.stopAnswer',
        'hearth.showStatus', 'hearth.acceptNextWord', 'hearth.acceptNextLine', 'hearth._accepted']) {
        assert.ok(calls.commands.includes(id), id);
    }
    // The daemon's own command ids stay free for the language client to register.
    for (const id of ['hearth.explain', 'hearth.fix', 'hearth.ask', 'hearth.acceptCompletion']) assert.ok(!calls.commands.includes(id), id);
});

test('settings become hearth lsp arguments, minus flags this hearth lacks', async () => {
    Object.assign(config, { daemonPath: fakeHearth, modelPath: '/m/model.gguf', cacheType: 'q4_0', logLevel: 'debug', extraArgs: ['--runtime-dir', '/tmp/rt'] });
    await extension.activate(context());
    assert.equal(calls.errors.length, 0, calls.errors.join('\n'));
    assert.equal(calls.clients.length, 1);
    const { server, options } = calls.clients[0];
    assert.equal(server.command, fakeHearth);
    assert.deepEqual(server.args, ['lsp', '--model', '/m/model.gguf', '--log-level', 'debug', '--runtime-dir', '/tmp/rt']);
    assert.ok(calls.output.some((l) => /setting not passed on: hearth\.cacheType/.test(l)), calls.output.join('\n'));
    assert.deepEqual(options.documentSelector, [{ scheme: 'file' }, { scheme: 'untitled' }]);
    assert.equal(options.initializationOptions.cacheType, 'q4_0');
    assert.equal(typeof options.middleware.provideInlineCompletionItems, 'function');
    await extension.deactivate();
});

test('a daemon that fails to start: the error names the command and where the log is', async () => {
    Object.assign(config, { daemonPath: fakeHearth, logFile: '/tmp/hearth-daemon.log' });
    clientBehaviour.startError = new Error('Connection to server got closed');
    await extension.activate(context());
    assert.equal(calls.errors.length, 1);
    assert.match(calls.errors[0], /the daemon \(.*hearth lsp --log-file \/tmp\/hearth-daemon\.log\) failed to start: Connection to server got closed\. The daemon's log: \/tmp\/hearth-daemon\.log/);
    assert.equal(calls.statusText[calls.statusText.length - 1], '$(error) hearth');
});
