import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Feedback } from '../src/feedback';

function recorder() {
    const sent: Array<[string, unknown]> = [];
    return { sent, fb: new Feedback({ notify: (m, p) => sent.push([m, p]) }) };
}
const range = { start: { line: 1, character: 2 }, end: { line: 1, character: 2 } };
const item = (t: string) => ({ insertText: t, range });
// As the daemon sends them: with its accept command and an id.
const served = (t: string, id: string) => ({
    insertText: t, range,
    command: { title: 'hearth: accept completion', command: 'hearth.acceptCompletion', arguments: [{ uri: 'file:///a.c', id }] },
});

test('shown then accepted: didShowCompletion, then hearth/didAccept naming the item', () => {
    const { sent, fb } = recorder();
    fb.shown('file:///a.c', item('return 0;'));
    fb.accepted('file:///a.c', false);
    fb.accepted('file:///a.c', false); // once only
    assert.deepEqual(sent, [
        ['textDocument/didShowCompletion', { item: item('return 0;') }],
        ['hearth/didAccept', { uri: 'file:///a.c', insertText: 'return 0;', range, acceptedLength: 9 }],
    ]);
});

test("an accept through the daemon's own command sends no second accept", () => {
    const { sent, fb } = recorder();
    fb.shown('file:///a.c', served('x()', '7'));
    fb.accepted('file:///a.c', true);
    assert.deepEqual(sent.map((s) => s[0]), ['textDocument/didShowCompletion']);
    assert.equal(fb.current, undefined);
});

test('a suggestion replaced or dismissed without being taken is rejected once, by id', () => {
    const { sent, fb } = recorder();
    fb.shown('file:///a.c', served('x', '41'));
    fb.shown('file:///a.c', item('y'));
    fb.dismissed();
    fb.dismissed();
    assert.deepEqual(sent.map((s) => s[0]), ['textDocument/didShowCompletion', 'hearth/didReject',
        'textDocument/didShowCompletion', 'hearth/didReject']);
    assert.deepEqual(sent[1][1], { uri: 'file:///a.c', insertText: 'x', range, id: '41' });
    assert.deepEqual(sent[3][1], { uri: 'file:///a.c', insertText: 'y', range });
});

test('partial accepts count insertText from its start, are not rejected later, and the last piece completes', () => {
    const { sent, fb } = recorder();
    fb.shown('file:///a.c', item('int x = 1;'), 2); // "in" was typed already
    fb.partiallyAccepted('file:///a.c', 2);
    fb.partiallyAccepted('file:///b.c', 2); // another file: ignored
    fb.partiallyAccepted('file:///a.c', 0); // nothing inserted: ignored
    fb.dismissed();
    assert.deepEqual(sent.slice(1), [['textDocument/didPartiallyAcceptCompletion', { item: item('int x = 1;'), acceptedLength: 4 }]]);
    sent.length = 0;
    fb.shown('file:///a.c', item('ab'));
    fb.partiallyAccepted('file:///a.c', 1);
    fb.partiallyAccepted('file:///a.c', 5);
    assert.deepEqual(sent.slice(1).map((s) => s[0]), ['textDocument/didPartiallyAcceptCompletion',
        'textDocument/didPartiallyAcceptCompletion', 'hearth/didAccept']);
    assert.deepEqual(sent[2][1], { item: item('ab'), acceptedLength: 2 });
    assert.equal(fb.current, undefined);
});

test('an accept for another document does not settle the shown one', () => {
    const { sent, fb } = recorder();
    fb.shown('file:///a.c', item('z'));
    fb.accepted('file:///b.c', false);
    assert.equal(sent.length, 1);
    assert.equal(fb.current?.uri, 'file:///a.c');
});
