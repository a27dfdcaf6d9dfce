import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Feedback } from '../src/feedback';

function recorder() {
    const sent: Array<[string, unknown]> = [];
    return { sent, fb: new Feedback({ notify: (m, p) => sent.push([m, p]) }) };
}
const item = (t: string) => ({ insertText: t, range: { start: { line: 1, character: 2 }, end: { line: 1, character: 2 } } });

test('shown then accepted: didShowCompletion, then hearth/didAccept with the full length', () => {
    const { sent, fb } = recorder();
    fb.shown('file:///a.c', item('return 0;'));
    fb.accepted('file:///a.c');
    fb.accepted('file:///a.c'); // once only
    assert.deepEqual(sent, [
        ['textDocument/didShowCompletion', { item: item('return 0;') }],
        ['hearth/didAccept', { uri: 'file:///a.c', item: item('return 0;'), acceptedLength: 9 }],
    ]);
});

test('a suggestion replaced or dismissed without being taken is rejected once', () => {
    const { sent, fb } = recorder();
    fb.shown('file:///a.c', item('x'));
    fb.shown('file:///a.c', item('y'));
    fb.dismissed();
    fb.dismissed();
    assert.deepEqual(sent.map((s) => s[0]), ['textDocument/didShowCompletion', 'hearth/didReject',
        'textDocument/didShowCompletion', 'hearth/didReject']);
    assert.deepEqual(sent[1][1], { uri: 'file:///a.c', item: item('x') });
});

test('partial accepts add up, are not rejected later, and the last piece completes the accept', () => {
    const { sent, fb } = recorder();
    fb.shown('file:///a.c', item('int x = 1;'));
    fb.partiallyAccepted('file:///a.c', 4);
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
    fb.accepted('file:///b.c');
    assert.equal(sent.length, 1);
    assert.equal(fb.current?.uri, 'file:///a.c');
});
