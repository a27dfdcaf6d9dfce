import { test } from 'node:test';
import assert from 'node:assert/strict';
import { debounce, insertedLength, limitLines } from '../src/completion_logic';
import { ChatTranscript } from '../src/chat_transcript';
import { chatCommandParams, chatParams, feedbackParams, inlineCompletionParams, insertTextOf, progressDelta } from '../src/protocol';
import { isWorking, modelName, statusBarText, statusReport } from '../src/status_format';

class Token {
    isCancellationRequested = false;
    private listeners: Array<() => void> = [];
    onCancellationRequested(l: () => void) {
        this.listeners.push(l);
        return { dispose: () => { this.listeners = this.listeners.filter((x) => x !== l); } };
    }
    cancel() { this.isCancellationRequested = true; for (const l of [...this.listeners]) l(); }
    get subscribers() { return this.listeners.length; }
}

test('debounce waits, and a cancel ends the wait at once with false', async () => {
    const t0 = Date.now();
    const tok = new Token();
    assert.equal(await debounce(40, tok), true);
    assert.ok(Date.now() - t0 >= 35);
    assert.equal(tok.subscribers, 0);
    const tok2 = new Token();
    const p = debounce(10000, tok2);
    const t1 = Date.now();
    tok2.cancel();
    assert.equal(await p, false);
    assert.ok(Date.now() - t1 < 1000);
    assert.equal(tok2.subscribers, 0);
    assert.equal(await debounce(0, new Token()), true);
    const done = new Token(); done.cancel();
    assert.equal(await debounce(0, done), false);
});

test('limitLines keeps at most n lines and no dangling newline', () => {
    assert.equal(limitLines('a\nb\nc', 3), 'a\nb\nc');
    assert.equal(limitLines('a\nb\n  \nc', 3), 'a\nb');
    assert.equal(limitLines('one', 1), 'one');
    assert.equal(limitLines('x\ny', 1), 'x');
    assert.equal(limitLines('a\n', 1), 'a'); // the empty second line is cut, and with it the newline
});

test('insertedLength counts what an edit added', () => {
    assert.equal(insertedLength([{ text: 'abc', rangeLength: 0 }]), 3);
    assert.equal(insertedLength([{ text: 'abc', rangeLength: 1 }, { text: 'z', rangeLength: 0 }]), 3);
    assert.equal(insertedLength([{ text: '', rangeLength: 4 }]), 0);
});

test('protocol builders and progress deltas', () => {
    assert.deepEqual(inlineCompletionParams('file:///x', { line: 3, character: 1 }, 2),
        { textDocument: { uri: 'file:///x' }, position: { line: 3, character: 1 }, context: { triggerKind: 2 } });
    const r = { start: { line: 0, character: 0 }, end: { line: 2, character: 0 } };
    assert.deepEqual(chatParams('file:///x', r, 'why?', 't1'),
        { textDocument: { uri: 'file:///x' }, range: r, prompt: 'why?', partialResultToken: 't1' });
    assert.deepEqual(chatCommandParams('explain', 'file:///x', r, '', 't2'),
        { command: 'hearth.explain', arguments: [{ textDocument: { uri: 'file:///x' }, range: r }], workDoneToken: 't2' });
    assert.deepEqual(chatCommandParams('ask', 'file:///x', r, 'why?', 't3').arguments,
        [{ textDocument: { uri: 'file:///x' }, range: r, prompt: 'why?' }]);
    assert.deepEqual(feedbackParams('file:///x', { insertText: 'a', command: { title: '', command: 'c', arguments: [{ id: 9 }] } }),
        { uri: 'file:///x', insertText: 'a' }, 'a non-string id is not passed on');
    assert.equal(progressDelta({ kind: 'report', text: 'ab' }), 'ab');
    assert.equal(progressDelta({ text: 'cd' }), 'cd');
    assert.equal(progressDelta({ kind: 'begin', title: 'x' }), '');
    assert.equal(progressDelta({ kind: 'report', message: 'x' }), '');
    assert.equal(progressDelta(null), '');
    assert.equal(progressDelta('text'), '');
    assert.equal(insertTextOf({ insertText: { kind: 'snippet', value: 'a$0' } }), 'a$0');
});

test('a chat transcript streams, then takes the final text; cancel and failure are shown', () => {
    const t = new ChatTranscript('explain', 'Explain.', 'src/a.c', 4, 9);
    assert.ok(t.append('Hel'));
    assert.ok(t.append('lo'));
    assert.ok(!t.append(''));
    assert.match(t.render(), /^# hearth: Explain\n\nsrc\/a\.c:5-10\n\nHello\n\n_… \(hearth is writing/);
    t.finish('Hello world');
    assert.equal(t.state, 'done');
    assert.equal(t.render(), '# hearth: Explain\n\nsrc/a.c:5-10\n\nHello world\n');
    assert.ok(!t.append('late'));
    const c = new ChatTranscript('ask', 'why?', 'b.py', 0, 0);
    c.append('Because');
    c.cancel();
    c.finish('ignored');
    assert.equal(c.state, 'cancelled');
    assert.match(c.render(), /# hearth: Ask: why\?[\s\S]*Because\n\n_\(cancelled\)_/);
    const f = new ChatTranscript('fix', 'Fix.', 'c.rs', 1, 2);
    f.fail('daemon went away');
    assert.match(f.render(), /_\(failed: daemon went away\)_/);
    const short = new ChatTranscript('fix', 'Fix.', 'c.rs', 1, 2);
    short.append('longer streamed text');
    short.finish('short'); // a final text shorter than what streamed does not drop text
    assert.equal(short.text, 'longer streamed text');
});

test('status bar line and report from hearth/status', () => {
    const s = {
        version: '0.1.0', model: 'stories260K', modelPath: '/m/stories260K-Q8_0.gguf', mappedBytes: 379168,
        queueDepth: 0, requestsInFlight: 0, lastCompletionMs: 123.4, decodeTokensPerSecond: 45.678,
        extra: { slots: [1, 2] },
    };
    assert.equal(statusBarText(s, false), '$(flame) stories260K · idle · 123 ms · 45.7 tok/s');
    assert.equal(statusBarText(s, true), '$(sync~spin) stories260K · working · 123 ms · 45.7 tok/s');
    assert.equal(statusBarText({ ...s, requestsInFlight: 1 }, false), '$(sync~spin) stories260K · working · 123 ms · 45.7 tok/s');
    assert.equal(statusBarText({ model: 'm', lastCompletionMs: 0 }, false), '$(flame) m · idle');
    assert.equal(statusBarText({ model: 'm', engine: { kind: 'remote', serving: 'remote' } }, false), '$(flame) m · remote · idle');
    assert.equal(statusBarText({ model: 'm', engine: { kind: 'remote', serving: 'local' } }, false), '$(flame) m · local fallback · idle');
    assert.equal(statusBarText({ model: 'm', engine: { kind: 'local', serving: 'local' } }, false), '$(flame) m · idle');
    assert.equal(statusBarText(undefined, false), '$(flame) hearth');
    assert.ok(isWorking({ queueDepth: 2 }, false));
    assert.equal(modelName({ modelPath: '/a/b/c.gguf' }), 'c.gguf');
    assert.equal(modelName({ model: 'x' }), 'x');
    assert.equal(modelName({}), 'no model');
    const report = statusReport(s);
    assert.match(report, /mappedBytes: 370\.3 KiB \(379168\)/);
    assert.match(report, /extra:\n  slots:\n    \[0\]: 1/);
});
