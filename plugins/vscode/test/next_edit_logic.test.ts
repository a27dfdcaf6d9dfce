// Next-edit decisions without the editor: usable answers, placement, Tab, feedback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NextEditFeedback, advertisesNextEdit, askAtRest, editPauseMs, onEdit, placement, previewText, tabAction, usableEdit } from '../src/next_edit_logic';
import { NextEdit, nextEditParams } from '../src/protocol';
import { defaults, readSettings } from '../src/config';

const uri = 'file:///w/a.py';
const pos = (line: number, character: number) => ({ line, character });
function edit(over: Partial<NextEdit> = {}): NextEdit {
    return {
        id: '7', textDocument: { uri, version: 3 },
        range: { start: pos(4, 4), end: pos(4, 9) }, newText: 'total',
        showAt: { start: pos(4, 0), end: pos(4, 0) }, ...over,
    };
}

test('hearth/nextEdit params name the document version and the cursor', () => {
    assert.deepEqual(nextEditParams(uri, 3, pos(1, 2)), { textDocument: { uri, version: 3 }, position: pos(1, 2) });
});

test('only a daemon that lists hearth/nextEdit among its methods is asked', () => {
    assert.equal(advertisesNextEdit({ experimental: { hearth: { methods: ['hearth/chat', 'hearth/nextEdit'] } } }), true);
    assert.equal(advertisesNextEdit({ experimental: { hearth: { methods: ['hearth/chat'] } } }), false);
    assert.equal(advertisesNextEdit({}), false);
    assert.equal(advertisesNextEdit(undefined), false);
});

test('only an edit for this document and version, with a well-formed range, is used', () => {
    assert.equal(usableEdit(undefined, uri, 3), undefined);
    assert.equal(usableEdit([], uri, 3), undefined, 'no edit: the usual answer');
    assert.equal(usableEdit([edit()], uri, 4), undefined, 'made for an older version');
    assert.equal(usableEdit([edit({ textDocument: { uri: 'file:///w/b.py', version: 3 } })], uri, 3), undefined);
    const backwards = edit({ range: { start: pos(4, 9), end: pos(4, 4) } });
    const good = edit({ id: '8' });
    assert.equal(usableEdit([backwards, good], uri, 3), good);
});

test('an insertion on the cursor line at or after the cursor is ghost text; everything else is marked away', () => {
    const insert = (line: number, ch: number, text = 'x') => edit({ range: { start: pos(line, ch), end: pos(line, ch) }, newText: text });
    assert.equal(placement(insert(4, 6), pos(4, 6)), 'inline', 'at the cursor');
    assert.equal(placement(insert(4, 8), pos(4, 6)), 'inline', 'after the cursor');
    assert.equal(placement(insert(4, 2), pos(4, 6)), 'away', 'before the cursor');
    assert.equal(placement(insert(5, 6), pos(4, 6)), 'away', 'another line');
    assert.equal(placement(insert(4, 6, 'a\nb'), pos(4, 6)), 'away', 'more than one line');
    assert.equal(placement(edit(), pos(4, 4)), 'away', 'a replacement');
});

test('Tab jumps from elsewhere and applies on the edit (its lines or its showAt line)', () => {
    assert.equal(tabAction(edit(), pos(1, 0)), 'jump');
    assert.equal(tabAction(edit(), pos(4, 20)), 'apply');
    const multi = edit({ range: { start: pos(4, 4), end: pos(6, 1) }, showAt: { start: pos(3, 0), end: pos(3, 0) } });
    assert.equal(onEdit(multi, pos(5, 0)), true);
    assert.equal(onEdit(multi, pos(3, 7)), true);
    assert.equal(onEdit(multi, pos(7, 0)), false);
});

test('the preview is one line, cut with an ellipsis', () => {
    assert.equal(previewText('total'), 'total');
    assert.equal(previewText('a\nb'), 'a ⏎ b');
    assert.equal(previewText('abcdefghij', 5), 'abcd…');
});

test('the edit pause is the cursor-rest moment, or the completion debounce if that is longer', () => {
    assert.equal(editPauseMs(75, 250), 250);
    assert.equal(editPauseMs(75, 0), 75);
    assert.equal(editPauseMs(400, 250), 400);
});

test('a cursor rest asks only after a change not yet asked about, with nothing shown', () => {
    assert.equal(askAtRest(undefined, 1, false), true);
    assert.equal(askAtRest(3, 3, false), false);
    assert.equal(askAtRest(3, 4, false), true);
    assert.equal(askAtRest(3, 4, true), false);
});

test('each edit shown ends once: accepted, or rejected when replaced or dismissed, by id', () => {
    const sent: Array<[string, unknown]> = [];
    const fb = new NextEditFeedback({ notify: (m, p) => sent.push([m, p]) });
    fb.shown(edit({ id: 'a' }));
    fb.shown(edit({ id: 'b' }));
    fb.accepted();
    fb.accepted();
    fb.rejected();
    fb.shown(edit({ id: 'c' }));
    fb.rejected();
    fb.rejected();
    const range = edit().range;
    assert.deepEqual(sent, [
        ['hearth/didReject', { uri, id: 'a', insertText: 'total', range }],
        ['hearth/didAccept', { uri, id: 'b', insertText: 'total', range }],
        ['hearth/didReject', { uri, id: 'c', insertText: 'total', range }],
    ]);
    assert.equal(fb.current, undefined);
});

test('hearth.nextEdit.enabled: on by default, a boolean turns it off, anything else is the default', () => {
    assert.equal(defaults.nextEditEnabled, true);
    assert.equal(readSettings((k) => ({ 'nextEdit.enabled': false } as Record<string, unknown>)[k]).nextEditEnabled, false);
    assert.equal(readSettings((k) => ({ 'nextEdit.enabled': 'no' } as Record<string, unknown>)[k]).nextEditEnabled, true);
});
