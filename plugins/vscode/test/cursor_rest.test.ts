// hearth/cursorRest from the activated extension: the editor's cursor events fired by hand,
// the clock mocked, the notifications read from the recording language client.
import { calls, config, events, vscode } from './activation_mock';
import { test, beforeEach, afterEach, mock } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const extension = require('../src/extension');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-rest-'));
// A stand-in `hearth lsp` that knows no flags and stays up.
const fakeHearth = path.join(dir, 'hearth');
fs.writeFileSync(fakeHearth, '#!/bin/sh\n[ "$2" = "--help" ] && exit 0\necho up\nexec sleep 60\n', { mode: 0o755 });

const subscriptions: Array<{ dispose(): void }> = [];
async function activate(mockClock = true): Promise<void> {
    config.daemonPath = fakeHearth;
    await extension.activate({ subscriptions });
    assert.equal(calls.errors.length, 0, calls.errors.join('\n'));
    // After the start, which waits on real timers and the stand-in's output.
    if (mockClock) mock.timers.enable({ apis: ['setTimeout'] });
}

beforeEach(() => {
    calls.notifications.length = 0; calls.errors.length = 0; calls.clients.length = 0;
    for (const k of Object.keys(config)) delete config[k];
    vscode.window.activeTextEditor = undefined;
});
afterEach(async () => {
    mock.timers.reset();
    await extension.deactivate();
    for (const d of subscriptions.splice(0)) d.dispose();
});

function document(name: string, languageId = 'python', scheme = 'file') {
    return { languageId, uri: { scheme, toString: () => `${scheme}:///w/${name}` } };
}
const a = document('a.py');
const b = document('b.py');
function editor(doc: object, line: number, character: number, isEmpty = true) {
    return { document: doc, selection: { isEmpty, active: new vscode.Position(line, character) } };
}
// The user moves the cursor in the active editor, or opens / switches to one.
function move(doc: object, line: number, character: number, isEmpty = true): void {
    const e = editor(doc, line, character, isEmpty);
    vscode.window.activeTextEditor = e;
    events.selection.fire({ textEditor: e, selections: [e.selection] });
}
function open(doc: object, line: number, character: number): void {
    vscode.window.activeTextEditor = editor(doc, line, character);
    events.activeEditor.fire(vscode.window.activeTextEditor);
}
const rests = () => calls.notifications.filter((n) => n[0] === 'hearth/cursorRest').map((n) => n[1]);
const at = (uri: string, line: number, character: number) => ({ textDocument: { uri }, position: { line, character } });

test('a file opened and left at rest: one hearth/cursorRest after the debounce', async () => {
    await activate();
    open(a, 0, 0);
    mock.timers.tick(249);
    assert.deepEqual(rests(), [], 'not before 250 ms');
    mock.timers.tick(1);
    assert.deepEqual(rests(), [at('file:///w/a.py', 0, 0)]);
    mock.timers.tick(10000);
    assert.equal(rests().length, 1, 'once');
});

test('a move within the debounce restarts it: only the resting place is sent', async () => {
    await activate();
    move(a, 1, 4);
    mock.timers.tick(200);
    move(a, 7, 2);
    mock.timers.tick(200);
    assert.deepEqual(rests(), [], 'still moving');
    mock.timers.tick(50);
    assert.deepEqual(rests(), [at('file:///w/a.py', 7, 2)]);
});

test('not re-sent on the same line; sent again on another line or after switching back', async () => {
    config.cursorRestMs = 100;
    await activate();
    move(a, 3, 2);
    mock.timers.tick(100);
    move(a, 3, 9);   // typing on the line
    mock.timers.tick(100);
    assert.deepEqual(rests(), [at('file:///w/a.py', 3, 2)]);
    move(a, 4, 0);
    mock.timers.tick(100);
    move(a, 3, 9);
    mock.timers.tick(100);
    assert.deepEqual(rests().slice(1), [at('file:///w/a.py', 4, 0), at('file:///w/a.py', 3, 9)]);
    open(b, 3, 9);
    mock.timers.tick(100);
    open(a, 3, 9);   // the line last sent for a.py, but a.py is just back
    mock.timers.tick(100);
    assert.deepEqual(rests().slice(3), [at('file:///w/b.py', 3, 9), at('file:///w/a.py', 3, 9)]);
});

test('nothing for a selection, a language without completion, an unsynced document, or hearth.cursorRestMs 0', async () => {
    await activate();
    move(a, 2, 0, false);
    move(document('notes.md', 'markdown'), 1, 0);
    move(document('log', 'python', 'output'), 1, 0);
    mock.timers.tick(1000);
    config.cursorRestMs = 0;
    open(b, 5, 0);
    move(b, 6, 0);
    mock.timers.tick(10000);
    assert.deepEqual(rests(), []);
});

test('nothing once the client is stopped', async () => {
    await activate();
    move(a, 2, 0);
    await extension.deactivate();
    mock.timers.tick(1000);
    assert.deepEqual(rests(), []);
});

test('the file open when the server comes up counts as opened', async () => {
    vscode.window.activeTextEditor = editor(a, 12, 3);
    config.cursorRestMs = 5;
    await activate(false);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(rests(), [at('file:///w/a.py', 12, 3)]);
});
