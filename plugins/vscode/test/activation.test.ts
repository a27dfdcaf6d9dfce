// activate() with the editor and the language client replaced by recorders: the daemon
// lookup and its error messages, the arguments `hearth lsp` gets, the commands registered.
import { calls, clientBehaviour, config, vscode } from './activation_mock';
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const extension = require('../src/extension');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-activate-'));
// A stand-in `hearth`: `lsp --help` lists some of the real flags; `lsp ...` records its
// arguments, then runs as FAKE_HEARTH says: "serve" writes to stdout and stays up,
// "refuse" fails as `hearth lsp` does on a runtime dir others can enter. Like CLI11, it
// refuses an argument it does not know.
const fakeHearth = path.join(dir, 'hearth');
const argsFile = path.join(dir, 'args');
fs.writeFileSync(fakeHearth, `#!/bin/sh
if [ "$2" = "--help" ]; then
  echo "Options:\n  --model TEXT  GGUF model\n  --log-level TEXT\n  --log-file TEXT\n  --runtime-dir TEXT"; exit 0
fi
printf '%s\n' "$@" > '${argsFile}'
for a in "$@"; do
  if [ "$a" = "--stdio" ]; then echo "The following argument was not expected: --stdio" >&2; echo "Run with --help for more information." >&2; exit 109; fi
done
if [ "$FAKE_HEARTH" = refuse ]; then
  echo "2026-12-01T10:00:00.000 error [42] runtime dir /tmp/rt mode 755 lets other users in; expected 700 (chmod 700 /tmp/rt)" >&2
  exit 1
fi
echo up
exec sleep 60
`, { mode: 0o755 });
const recordedArgs = () => fs.readFileSync(argsFile, 'utf8').trimEnd().split('\n');
// What VS Code does on deactivation: dispose the subscriptions (the status bar's timer too).
const contexts: Array<{ subscriptions: Array<{ dispose(): void }> }> = [];
const context = () => { const c = { subscriptions: [] as Array<{ dispose(): void }> }; contexts.push(c); return c; };
afterEach(async () => {
    await extension.deactivate();
    for (const c of contexts.splice(0)) for (const d of c.subscriptions) d.dispose();
});

beforeEach(() => {
    calls.commands.length = 0; calls.errors.length = 0; calls.errorButtons.length = 0; calls.clients.length = 0;
    calls.output.length = 0; calls.executed.length = 0; calls.notifications.length = 0; calls.outputShown = 0;
    calls.handlers.clear();
    for (const k of Object.keys(config)) delete config[k];
    clientBehaviour.pick = undefined;
    clientBehaviour.command = undefined;
    process.env.FAKE_HEARTH = 'serve';
    fs.rmSync(argsFile, { force: true });
});

test('a daemon that is not on PATH: a clear error, no client', async () => {
    config.daemonPath = 'hearth-that-does-not-exist';
    await extension.activate(context());
    assert.equal(calls.clients.length, 0);
    assert.equal(calls.errors.length, 1);
    assert.match(calls.errors[0], /"hearth-that-does-not-exist" was not found on PATH .*hearth\.daemonPath/);
    for (const id of ['hearth.explainSelection', 'hearth.fixSelection', 'hearth.askSelection', 'hearth.stopAnswer',
        'hearth.showStatus', 'hearth.acceptNextWord', 'hearth.acceptNextLine', 'hearth._accepted',
        'hearth.nextEditTab', 'hearth.nextEditDismiss']) {
        assert.ok(calls.commands.includes(id), id);
    }
    // The daemon's own command ids stay free for the language client to register.
    for (const id of ['hearth.explain', 'hearth.fix', 'hearth.ask', 'hearth.acceptCompletion']) assert.ok(!calls.commands.includes(id), id);
});

test('settings become hearth lsp arguments, minus flags this hearth lacks, and nothing appended', async () => {
    Object.assign(config, { daemonPath: fakeHearth, modelPath: '/m/model.gguf', cacheType: 'q4_0', logLevel: 'debug', extraArgs: ['--runtime-dir', '/tmp/rt'] });
    await extension.activate(context());
    assert.equal(calls.errors.length, 0, calls.errors.join('\n'));
    assert.equal(calls.clients.length, 1);
    // What the process got: vscode-languageclient appends --stdio for TransportKind.stdio,
    // which `hearth lsp` does not need.
    assert.deepEqual(recordedArgs(), ['lsp', '--model', '/m/model.gguf', '--log-level', 'debug', '--runtime-dir', '/tmp/rt']);
    assert.ok(calls.output.some((l) => /setting not passed on: hearth\.cacheType/.test(l)), calls.output.join('\n'));
    const { options } = calls.clients[0];
    assert.deepEqual(options.documentSelector, [{ scheme: 'file' }, { scheme: 'untitled' }]);
    assert.equal(options.initializationOptions.cacheType, 'q4_0');
    assert.equal(typeof options.middleware.provideInlineCompletionItems, 'function');
});

test("a failed start: the notification gives hearth lsp's own reason and opens the output", async () => {
    Object.assign(config, { daemonPath: fakeHearth, logFile: '/tmp/hearth-log-that-was-never-written.log' });
    process.env.FAKE_HEARTH = 'refuse';
    clientBehaviour.pick = 'Show Output';
    await extension.activate(context());
    assert.equal(calls.errors.length, 1, calls.errors.join('\n'));
    const msg = calls.errors[0];
    assert.match(msg, /hearth lsp.* failed to start: runtime dir \/tmp\/rt mode 755 lets other users in; expected 700 \(chmod 700 \/tmp\/rt\)/);
    assert.doesNotMatch(msg, /2026-12-01T|\[42\]/, 'without the log line prefix');
    assert.doesNotMatch(msg, /connection got disposed|log: |log is/, 'no pointer to a log file: ' + msg);
    assert.deepEqual(calls.errorButtons[0], ['Show Output']);
    await new Promise((r) => setImmediate(r));
    assert.equal(calls.outputShown, 1, 'the button opens the output channel');
    assert.equal(calls.statusText[calls.statusText.length - 1], '$(error) hearth');
    // Not retried, and not reported a second time by the client itself.
    const { options } = calls.clients[0];
    assert.deepEqual(options.errorHandler.closed(), { action: 1, handled: true });
    assert.deepEqual(options.errorHandler.error(new Error('write EPIPE'), undefined, 1), { action: 1, handled: true });
    assert.equal(options.initializationFailedHandler(new Error('x')), false);
});

// A document and an editor with a selection, as the middleware and the answer view see them.
const doc = {
    languageId: 'python',
    uri: { toString: () => 'file:///w/a.py', path: '/w/a.py' },
    lineAt: (l: number) => ({ range: new vscode.Range(new vscode.Position(l, 0), new vscode.Position(l, 9)) }),
};
const never = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };

test('Escape on a suggestion hides it and reports the rejection at once', async () => {
    Object.assign(config, { daemonPath: fakeHearth });
    await extension.activate(context());
    const here = new vscode.Position(1, 4);
    await calls.clients[0].options.middleware.provideInlineCompletionItems(doc, here, { triggerKind: vscode.InlineCompletionTriggerKind.Invoke },
        never, () => [{ insertText: 'return 0', range: new vscode.Range(here, here) }]);
    assert.deepEqual(calls.notifications.map((n) => n[0]), ['textDocument/didShowCompletion']);
    await calls.handlers.get('hearth.dismissSuggestion')!();
    assert.deepEqual(calls.executed, ['editor.action.inlineSuggest.hide']);
    assert.deepEqual(calls.notifications.map((n) => n[0]), ['textDocument/didShowCompletion', 'hearth/didReject']);
    assert.equal(calls.notifications[1][1].insertText, 'return 0');
    // Bound to Escape while a suggestion shows, as the editor's own hide is.
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8'));
    assert.ok(pkg.contributes.keybindings.some((k: any) => k.key === 'escape' && k.command === 'hearth.dismissSuggestion' &&
        /inlineSuggestionVisible/.test(k.when)), 'an Escape key binding');
});

test('the status bar says working while an answer streams', async () => {
    Object.assign(config, { daemonPath: fakeHearth });
    await extension.activate(context());
    await new Promise((r) => setTimeout(r, 20));   // the first status refresh
    assert.match(calls.statusText[calls.statusText.length - 1], /idle/);
    let answer!: (v: unknown) => void;
    clientBehaviour.command = new Promise((r) => { answer = r; });
    vscode.window.activeTextEditor = {
        document: doc,
        selection: Object.assign(new vscode.Range(new vscode.Position(0, 0), new vscode.Position(1, 4)), { isEmpty: false, active: new vscode.Position(1, 4) }),
    };
    const done = calls.handlers.get('hearth.explainSelection')!();
    await new Promise((r) => setTimeout(r, 20));
    assert.match(calls.statusText[calls.statusText.length - 1], /working/);
    answer({ text: 'It adds.' });
    await done;
    await new Promise((r) => setTimeout(r, 20));
    assert.match(calls.statusText[calls.statusText.length - 1], /idle/);
});
