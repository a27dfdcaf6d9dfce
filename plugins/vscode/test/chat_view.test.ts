// The answer view with the editor and the language client replaced by recorders: the
// request it sends for each selection command, the document filling as progress arrives,
// the final text, and cancellation.
import { calls, editorState, vscode } from './activation_mock';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AnswerView } from '../src/chat_view';

const doc = {
    uri: { toString: () => 'file:///w/a.py', path: '/w/a.py' },
    lineAt: (l: number) => ({ range: new vscode.Range(new vscode.Position(l, 0), new vscode.Position(l, 9)) }),
};

// A language client whose executeCommand the test answers by hand.
function fakeClient() {
    const progress = new Map<string, (v: unknown) => void>();
    const sent: Array<{ method: string; params: any; token: any }> = [];
    let answer!: (v: unknown) => void;
    let fail!: (e: unknown) => void;
    const client = {
        isRunning: () => true,
        onProgress: (_t: unknown, token: string, h: (v: unknown) => void) => { progress.set(token, h); return { dispose: () => progress.delete(token) }; },
        sendRequest: (method: string, params: any, token: any) => {
            sent.push({ method, params, token });
            return new Promise((res, rej) => { answer = res; fail = rej; });
        },
        code2ProtocolConverter: { asRange: (r: any) => ({ start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } }) },
    };
    return { client, progress, sent, answer: (v: unknown) => answer(v), fail: (e: unknown) => fail(e) };
}

function selectLines(a: number, b: number) {
    vscode.window.activeTextEditor = {
        document: doc,
        selection: Object.assign(new vscode.Range(new vscode.Position(a, 0), new vscode.Position(b, 4)), { isEmpty: false, active: new vscode.Position(b, 4) }),
    };
}

const tick = () => new Promise((r) => setTimeout(r, 80));   // past the view's 50 ms refresh

test('Explain: hearth.explain on the selection, the answer fills in as it streams', async () => {
    const f = fakeClient();
    const view = new AnswerView(() => f.client as any);
    const changed: string[] = [];
    view.onDidChange((u: any) => changed.push(u.toString()));
    selectLines(2, 4);
    const done = view.run('explain');
    await tick();
    assert.equal(f.sent.length, 1);
    const { method, params } = f.sent[0];
    assert.equal(method, 'workspace/executeCommand');
    assert.equal(params.command, 'hearth.explain');
    assert.deepEqual(params.arguments, [{ textDocument: { uri: 'file:///w/a.py' }, range: { start: { line: 2, character: 0 }, end: { line: 4, character: 4 } } }]);
    const uri = calls.shownDocuments[calls.shownDocuments.length - 1];
    const content = () => view.provideTextDocumentContent({ toString: () => uri } as any);
    assert.match(content(), /^# hearth: Explain\n\na\.py:3-5\n\n\n\n_… \(hearth is writing/);
    const report = f.progress.get(params.workDoneToken)!;
    report({ kind: 'begin', title: 'hearth' });
    report({ kind: 'report', message: 'It adds', text: 'It adds' });
    report({ kind: 'report', message: ' two numbers.', text: ' two numbers.' });
    await tick();
    assert.match(content(), /\n\nIt adds two numbers\.\n\n_…/);
    assert.ok(changed.includes(uri), 'the editor was told the document changed');
    f.answer({ text: 'It adds two numbers.' });
    await done;
    assert.equal(content(), '# hearth: Explain\n\na.py:3-5\n\nIt adds two numbers.\n');
    assert.equal(f.progress.size, 0, 'progress handler removed');
});

test('Ask: the question is the prompt; Stop answer cancels the request', async () => {
    const f = fakeClient();
    const view = new AnswerView(() => f.client as any);
    selectLines(0, 0);
    editorState.question = 'why?';
    const done = view.run('ask');
    await tick();
    const { params, token } = f.sent[0];
    assert.equal(params.command, 'hearth.ask');
    assert.equal(params.arguments[0].prompt, 'why?');
    f.progress.get(params.workDoneToken)!({ kind: 'report', text: 'Because' });
    view.stopAll();
    assert.equal(token.isCancellationRequested, true, 'the request token is cancelled (the client sends $/cancelRequest)');
    f.fail(Object.assign(new Error('request cancelled'), { code: -32800 }));
    await done;
    const uri = calls.shownDocuments[calls.shownDocuments.length - 1];
    assert.match(view.provideTextDocumentContent({ toString: () => uri } as any), /# hearth: Ask: why\?[\s\S]*Because\n\n_\(cancelled\)_/);
});

test('Ask with an empty question sends nothing; a failed request is shown as failed', async () => {
    const f = fakeClient();
    const view = new AnswerView(() => f.client as any);
    selectLines(0, 1);
    editorState.question = '';
    await view.run('ask');
    assert.equal(f.sent.length, 0);
    const done = view.run('fix');
    await tick();
    assert.equal(f.sent[0].params.command, 'hearth.fix');
    f.fail(new Error('chat failed: the model has no chat template'));
    await done;
    const uri = calls.shownDocuments[calls.shownDocuments.length - 1];
    assert.match(view.provideTextDocumentContent({ toString: () => uri } as any), /_\(failed: chat failed: the model has no chat template\)_/);
});
