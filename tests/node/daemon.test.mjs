// The real daemon on the tiny model, driven by vscode-jsonrpc / vscode-languageserver-protocol
// clients as an editor drives it. Run: HEARTH_BIN=... HEARTH_MODEL=... node --test
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ResponseError } from 'vscode-jsonrpc/node.js';
import { InitializeRequest, DidOpenTextDocumentNotification, DidChangeTextDocumentNotification,
         InlineCompletionRequest } from 'vscode-languageserver-protocol';
import { connectClient, initialize, rawClient, rawInitialize, startDaemon, frame } from './harness.mjs';

// LSP 3.18 numbers the trigger kinds Invoked = 1, Automatic = 2; vscode-languageserver-protocol
// 3.17.5's proposed InlineCompletionTriggerKind still says 0 and 1, so the wire values are spelled out.
const INVOKED = 1;
const AUTOMATIC = 2;
const uri = 'file:///work/demo.py';
const text = 'def greet(name):\n    # héllo 🙂 wörld\n    print("hi", name)\n\ndef main():\n    ';

let d;
before(async () => { d = await startDaemon(); });
after(async () => {
  const r = await d.stop();
  assert.equal(r.code, 0, `daemon exit ${JSON.stringify(r)}\n${d.stderr()}`);
  assert.equal(d.stdout(), '', 'the daemon wrote to stdout');
});

describe('lifecycle', () => {
  test('initialize announces inline completion, chat and UTF-16; shutdown + exit close', async () => {
    const { conn, closed } = await connectClient(d);
    const r = await conn.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: null, capabilities: {} });
    assert.equal(r.capabilities.positionEncoding, 'utf-16');
    assert.ok(r.capabilities.inlineCompletionProvider);
    assert.deepEqual(r.capabilities.executeCommandProvider.commands.sort(),
                     ['hearth.acceptCompletion', 'hearth.ask', 'hearth.explain', 'hearth.fix']);
    await conn.sendNotification('initialized', {});
    await conn.sendRequest('shutdown');
    await assert.rejects(conn.sendRequest('hearth/status'), (e) => e.code === -32600);
    await conn.sendNotification('exit');
    await closed;
  });

  test('TCP: authenticated with the token file, then full LSP', async () => {
    const { conn, sock } = await connectClient(d, { tcp: true });
    await initialize(conn);
    const s = await conn.sendRequest('hearth/status');
    assert.equal(s.model.length > 0, true);
    sock.destroy();
  });

  test('TCP: without the token nothing is served', async () => {
    const c = await rawClient(d, { tcp: true });
    c.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {} } });
    await c.closed;
    assert.equal(c.messages.length, 0);
  });
});

describe('documents and completion', () => {
  test('incremental edits with non-ASCII text, then inline completion at the edited place', async () => {
    const { conn, sock } = await connectClient(d);
    await initialize(conn);
    await conn.sendNotification(DidOpenTextDocumentNotification.type,
      { textDocument: { uri, languageId: 'python', version: 1, text } });
    // Line 1 is '    # héllo 🙂 wörld': the emoji is 2 UTF-16 units at character 12..14.
    // Replace 'wörld' (characters 15..20) by 'мир', then insert after the emoji.
    await conn.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: 2 },
      contentChanges: [
        { range: { start: { line: 1, character: 15 }, end: { line: 1, character: 20 } }, text: 'мир' },
        { range: { start: { line: 1, character: 14 }, end: { line: 1, character: 14 } }, text: '!' },
      ],
    });
    // Cursor at the end of the edited line: '    # héllo 🙂! мир' is 4+2+5+1+2+1+1+3 = 19 units.
    // stories260K has no fill-in-the-middle tokens: the engine continues the text before the
    // cursor. Invoked: up to three distinct candidates, each inserted at the cursor.
    const r = await conn.sendRequest(InlineCompletionRequest.type, {
      textDocument: { uri }, position: { line: 1, character: 19 },
      context: { triggerKind: INVOKED },
    });
    assert.ok(Array.isArray(r.items) && r.items.length >= 1, JSON.stringify(r));
    assert.equal(new Set(r.items.map((i) => i.insertText)).size, r.items.length);
    for (const item of r.items) {
      assert.ok(item.insertText.length > 0);
      assert.deepEqual(item.range.start, { line: 1, character: 19 });
    }
    const st = await conn.sendRequest('hearth/status');
    await conn.sendNotification('hearth/didAccept', { uri, id: '1' });
    await conn.sendNotification('hearth/didReject', { uri, id: '2' });
    const st2 = await conn.sendRequest('hearth/status');
    assert.equal(st2.completionsAccepted, st.completionsAccepted + 1);
    assert.equal(st2.completionsRejected, st.completionsRejected + 1);
    sock.destroy();
  });

  // The text is computed where the position lands after clamping (past the end) or snapping
  // (inside a surrogate pair); the items' range must say that place, not echo the request.
  for (const [name, position, expected] of [
    ['a position far past the end', { line: 1000000, character: 1000000 }, { line: 5, character: 4 }],
    ['a character past the line end', { line: 0, character: 500 }, { line: 0, character: 16 }],
    ['a position inside a surrogate pair', { line: 1, character: 13 }, { line: 1, character: 12 }],
  ]) {
    test(`inline completion at ${name} answers with the position it was computed for`, async () => {
      const { conn, sock } = await connectClient(d);
      await initialize(conn);
      const doc = `file:///work/range-${position.line}-${position.character}.py`;
      await conn.sendNotification(DidOpenTextDocumentNotification.type,
        { textDocument: { uri: doc, languageId: 'python', version: 1, text } });
      const r = await conn.sendRequest(InlineCompletionRequest.type, {
        textDocument: { uri: doc }, position, context: { triggerKind: INVOKED },
      });
      assert.ok(Array.isArray(r.items) && r.items.length >= 1, JSON.stringify(r));
      for (const item of r.items) assert.deepEqual(item.range, { start: expected, end: expected });
      sock.destroy();
    });
  }
});

describe('chat', () => {
  test('hearth/chat streams $/progress pieces that add up to the final text', async () => {
    const { conn, sock } = await connectClient(d);
    await initialize(conn);
    await conn.sendNotification(DidOpenTextDocumentNotification.type,
      { textDocument: { uri, languageId: 'python', version: 1, text } });
    const pieces = [];
    conn.onNotification('$/progress', (p) => { if (p.token === 'chat-1') pieces.push(p.value.text); });
    const r = await conn.sendRequest('hearth/chat', {
      textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 2, character: 0 } },
      prompt: 'What does this do?', partialResultToken: 'chat-1',
    });
    assert.equal(typeof r.text, 'string');
    assert.ok(r.text.length > 0);
    assert.equal(pieces.join(''), r.text);
    sock.destroy();
  });

  test('$/cancelRequest stops a chat: answered -32800', async () => {
    const c = await rawClient(d);
    await rawInitialize(c);
    c.send({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'python', version: 1, text } } });
    // The request and its cancel in one write: the job is cancelled queued or at its first token.
    c.write(Buffer.concat([
      frame({ jsonrpc: '2.0', id: 7, method: 'hearth/chat', params: {
        textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 2, character: 0 } }, prompt: 'Tell a long story.' } }),
      frame({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 7 } }),
    ]));
    const r = await c.reply(7);
    assert.equal(r.error?.code, -32800, JSON.stringify(r));
    c.sock.destroy();
  });

  test('a newer completion for the same document cancels the older one', async () => {
    const c = await rawClient(d);
    await rawInitialize(c);
    c.send({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'python', version: 1, text } } });
    const req = (id) => frame({ jsonrpc: '2.0', id, method: 'textDocument/inlineCompletion', params: {
      textDocument: { uri }, position: { line: 5, character: 4 }, context: { triggerKind: 2 } } });
    c.write(Buffer.concat([req(20), req(21), req(22)]));
    const [a, b, last] = await Promise.all([c.reply(20), c.reply(21), c.reply(22)]);
    assert.equal(a.error?.code, -32800);
    assert.equal(b.error?.code, -32800);
    // The newest one ran and was answered with items.
    assert.ok(last.result && Array.isArray(last.result.items), JSON.stringify(last));
    c.sock.destroy();
  });
});

describe('several clients', () => {
  test('two clients at once: each has its own documents, both are served', async () => {
    const A = await connectClient(d);
    const B = await connectClient(d, { tcp: true });
    await Promise.all([initialize(A.conn), initialize(B.conn)]);
    await A.conn.sendNotification(DidOpenTextDocumentNotification.type,
      { textDocument: { uri: 'file:///a.py', languageId: 'python', version: 1, text: 'x = 1\n' } });
    await B.conn.sendNotification(DidOpenTextDocumentNotification.type,
      { textDocument: { uri: 'file:///b.py', languageId: 'python', version: 1, text: 'y = 2\n' } });
    const params = (u) => ({ textDocument: { uri: u }, position: { line: 1, character: 0 }, context: { triggerKind: 1 } });
    // Both are served (answered, not refused as unknown or busy).
    const served = (p) => p.then((r) => Array.isArray(r.items), () => false);
    const [ra, rb] = await Promise.all([
      served(A.conn.sendRequest(InlineCompletionRequest.type, params('file:///a.py'))),
      served(B.conn.sendRequest(InlineCompletionRequest.type, params('file:///b.py'))),
    ]);
    assert.ok(ra && rb);
    // B never opened a.py.
    await assert.rejects(B.conn.sendRequest(InlineCompletionRequest.type, params('file:///a.py')),
      (e) => e instanceof ResponseError && e.code === -32602 && /not open/.test(e.message));
    const st = await A.conn.sendRequest('hearth/status');
    assert.ok(st.connections >= 2);
    A.sock.destroy();
    B.sock.destroy();
  });

  test('a client vanishing mid-stream frees its work; the daemon keeps serving', async () => {
    const { conn, sock } = await connectClient(d);
    await initialize(conn);
    await conn.sendNotification(DidOpenTextDocumentNotification.type,
      { textDocument: { uri, languageId: 'python', version: 1, text } });
    const firstPiece = new Promise((resolve) => conn.onNotification('$/progress', resolve));
    conn.sendRequest('hearth/chat', {
      textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 2, character: 0 } },
      prompt: 'Tell a very long story about this code.', partialResultToken: 'gone',
    }).catch(() => {});
    await firstPiece;
    sock.destroy();
    const other = await connectClient(d);
    await initialize(other.conn);
    const t0 = Date.now();
    const st = await other.conn.sendRequest('hearth/status');
    assert.ok(Date.now() - t0 < 1000);
    assert.equal(typeof st.queueDepth, 'number');
    other.sock.destroy();
  });
});

describe('malformed input', () => {
  const cases = [
    ['invalid JSON', Buffer.from('Content-Length: 5\r\n\r\n{nope'), -32700],
    ['not a JSON-RPC message', frame({ hello: 'world' }), -32600],
    ['a batch', frame([{ jsonrpc: '2.0', id: 3, method: 'hearth/status' }]), -32600],
    ['unknown method', frame({ jsonrpc: '2.0', id: 4, method: 'hearth/nope', params: {} }), -32601],
    ['wrong-typed params', frame({ jsonrpc: '2.0', id: 5, method: 'textDocument/inlineCompletion', params: { textDocument: 3 } }), -32602],
    ['document not open', frame({ jsonrpc: '2.0', id: 6, method: 'textDocument/inlineCompletion', params: {
      textDocument: { uri: 'file:///nope' }, position: { line: 0, character: 0 }, context: { triggerKind: 1 } } }), -32602],
  ];
  for (const [name, bytes, code] of cases) {
    test(`${name}: error ${code}, connection stays usable`, async () => {
      const c = await rawClient(d);
      await rawInitialize(c);
      c.write(bytes);
      const err = await c.waitFor((m) => m.error && m.error.code === code);
      assert.equal(err.error.code, code);
      c.send({ jsonrpc: '2.0', id: 99, method: 'hearth/status' });
      assert.ok((await c.reply(99)).result);
      c.sock.destroy();
    });
  }
  test('request before initialize: -32002', async () => {
    const c = await rawClient(d);
    c.send({ jsonrpc: '2.0', id: 1, method: 'hearth/status' });
    assert.equal((await c.reply(1)).error.code, -32002);
    c.sock.destroy();
  });
  test('a body over the size limit is skipped and answered -32600', async () => {
    const c = await rawClient(d);
    await rawInitialize(c);
    const big = 'x'.repeat(5 * 1024 * 1024);
    c.write(frame({ jsonrpc: '2.0', id: 2, method: 'hearth/status', params: { pad: big } }));
    const err = await c.waitFor((m) => m.error && m.id === null);
    assert.equal(err.error.code, -32600);
    c.send({ jsonrpc: '2.0', id: 3, method: 'hearth/status' });
    assert.ok((await c.reply(3)).result);
    c.sock.destroy();
  });
  for (const [name, bytes] of [
    ['an HTTP request', Buffer.from('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')],
    ['an unknown header', Buffer.from('Content-Length: 2\r\nOrigin: http://evil\r\n\r\n{}')],
    ['a non-numeric Content-Length', Buffer.from('Content-Length: ten\r\n\r\n')],
  ]) {
    test(`${name}: the connection is closed, the daemon serves on`, async () => {
      const c = await rawClient(d);
      await rawInitialize(c);
      c.write(bytes);
      await c.closed;
      const ok = await connectClient(d);
      await initialize(ok.conn);
      assert.ok(await ok.conn.sendRequest('hearth/status'));
      ok.sock.destroy();
    });
  }
});
