// The inline completion middleware with the vscode module mocked.
import './vscode_mock';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Position, Range, InlineCompletionTriggerKind } from './vscode_mock';
import { inlineCompletionMiddleware, acceptedCommand } from '../src/completion';
import { defaults, Settings } from '../src/config';
import { Feedback } from '../src/feedback';

const never = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };

function setup(over: Partial<Settings> = {}) {
    const sent: Array<[string, unknown]> = [];
    const busy: number[] = [];
    const feedback = new Feedback({ notify: (m, p) => sent.push([m, p]) });
    const mw = inlineCompletionMiddleware({
        settings: () => ({ ...defaults, debounceMs: 0, ...over }),
        feedback,
        toRange: (r: any) => ({ start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } }),
        busy: (d) => busy.push(d),
    });
    return { sent, busy, feedback, provide: mw.provideInlineCompletionItems! as any };
}

const doc = (languageId: string) => ({ languageId, uri: { toString: () => 'file:///w/a.py' } });

test('disabled languages never reach the daemon', async () => {
    const { provide } = setup({ enable: { '*': true, python: false } });
    let called = 0;
    const r = await provide(doc('python'), new Position(0, 0), { triggerKind: InlineCompletionTriggerKind.Automatic }, never, () => { called++; return []; });
    assert.equal(r, undefined);
    assert.equal(called, 0);
});

test('an automatic request cancelled during the debounce is never sent; an invoked one is not delayed', async () => {
    const { provide } = setup({ debounceMs: 5000 });
    let called = 0;
    let cancel!: () => void;
    const tok = { isCancellationRequested: false, onCancellationRequested: (l: () => void) => { cancel = () => { tok.isCancellationRequested = true; l(); }; return { dispose() {} }; } };
    const p = provide(doc('c'), new Position(0, 0), { triggerKind: InlineCompletionTriggerKind.Automatic }, tok, () => { called++; return []; });
    cancel();
    assert.equal(await p, undefined);
    assert.equal(called, 0);
    const t0 = Date.now();
    await provide(doc('c'), new Position(0, 0), { triggerKind: InlineCompletionTriggerKind.Invoke }, never, () => { called++; return []; });
    assert.equal(called, 1);
    assert.ok(Date.now() - t0 < 1000);
});

test('items are trimmed to maxLines, carry the accept command, and the first is reported shown', async () => {
    const { provide, sent, busy, feedback } = setup({ maxLines: 2 });
    const pos = new Position(4, 8);
    const serverCommand = { command: 'server.cmd', title: '' };
    const items = [
        { insertText: 'a\nb\nc', range: new Range(new Position(4, 0), pos), command: serverCommand },
        { insertText: 'second' },
    ];
    const r = await provide(doc('c'), pos, { triggerKind: InlineCompletionTriggerKind.Automatic }, never, async () => ({ items }));
    assert.equal(r.length, 2);
    assert.equal(r[0].insertText, 'a\nb');
    assert.deepEqual(r[0].command, { command: acceptedCommand, title: 'hearth: accepted', arguments: ['file:///w/a.py', serverCommand] });
    assert.deepEqual(r[1].command.arguments, ['file:///w/a.py', undefined]);
    assert.deepEqual(busy, [1, -1]);
    assert.deepEqual(sent, [['textDocument/didShowCompletion', {
        item: { insertText: 'a\nb', range: { start: { line: 4, character: 0 }, end: { line: 4, character: 8 } },
                command: { title: '', command: 'server.cmd', arguments: undefined } } }]]);
    assert.equal(feedback.current?.uri, 'file:///w/a.py');
    assert.equal(feedback.current?.typedLength, 8, 'the range starts 8 characters before the cursor');
    // An item without a range is reported at the cursor.
    await provide(doc('c'), pos, { triggerKind: InlineCompletionTriggerKind.Invoke }, never, async () => [{ insertText: 'z' }]);
    assert.deepEqual(sent.map((s) => s[0]).slice(1), ['hearth/didReject', 'textDocument/didShowCompletion']);
    assert.deepEqual((sent[2][1] as any).item.range, { start: { line: 4, character: 8 }, end: { line: 4, character: 8 } });
});

test('a failing request still ends the busy state', async () => {
    const { provide, busy } = setup();
    await assert.rejects(provide(doc('c'), new Position(0, 0), { triggerKind: 0 }, never, async () => { throw new Error('gone'); }), /gone/);
    assert.deepEqual(busy, [1, -1]);
});
