// A fuller stand-in for the `vscode` module and for vscode-languageclient/node, enough to
// run the extension's activate() in Node and see what it registers, starts and says.
// Installed for this process only; records everything in `calls`.
import Module = require('module');
import * as cp from 'child_process';
import { Position, Range, InlineCompletionTriggerKind } from './vscode_mock';

export const calls = {
    commands: [] as string[],
    handlers: new Map<string, (...args: any[]) => unknown>(),
    executed: [] as string[],
    notifications: [] as Array<[string, any]>,
    errors: [] as string[],
    errorButtons: [] as string[][],
    outputShown: 0,
    clients: [] as Array<{ server: any; options: any }>,
    statusText: [] as string[],
    output: [] as string[],
    shownDocuments: [] as string[],
};
// What the chat tests set: the question typed into the input box, and the notification's
// cancel token.
export const editorState = {
    question: undefined as string | undefined,
    progressToken: { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) } as any,
};
export { vscode };
export const config: Record<string, unknown> = {};
// pick: the button the user clicks on an error message. command: the reply to
// workspace/executeCommand, which the test settles when it likes.
export const clientBehaviour = {
    pick: undefined as string | undefined,
    command: undefined as Promise<unknown> | undefined,
};

class EventEmitter<T> {
    private ls: Array<(e: T) => void> = [];
    event = (l: (e: T) => void) => {
        this.ls.push(l);
        return { dispose: () => { this.ls = this.ls.filter((x) => x !== l); } };
    };
    fire(e: T) { for (const l of this.ls) l(e); }
}
// The editor's events, for the tests to fire.
export const events = {
    activeEditor: new EventEmitter<any>(),
    selection: new EventEmitter<{ textEditor: any; selections: any[] }>(),
    closed: new EventEmitter<any>(),
};

const vscode = {
    Position, Range, InlineCompletionTriggerKind, EventEmitter,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ProgressLocation: { Notification: 15 },
    ViewColumn: { Beside: -2 },
    ThemeColor: class { constructor(readonly id: string) {} },
    CancellationTokenSource: class {
        private ls: Array<() => void> = [];
        token = { isCancellationRequested: false, onCancellationRequested: (l: () => void) => { this.ls.push(l); return { dispose() {} }; } };
        cancel() { if (!this.token.isCancellationRequested) { this.token.isCancellationRequested = true; for (const l of this.ls) l(); } }
        dispose() {}
    },
    Uri: { from: (o: any) => ({ ...o, toString: () => `${o.scheme}:${o.path}` }) },
    window: {
        createOutputChannel: () => ({ appendLine: (l: string) => calls.output.push(l), show() { calls.outputShown++; }, dispose() {} }),
        createStatusBarItem: () => {
            const item: any = { show() {}, dispose() {} };
            Object.defineProperty(item, 'text', { set(v: string) { calls.statusText.push(v); }, get() { return calls.statusText[calls.statusText.length - 1]; } });
            return item;
        },
        showErrorMessage: (m: string, ...buttons: string[]) => {
            calls.errors.push(m);
            calls.errorButtons.push(buttons);
            return Promise.resolve(clientBehaviour.pick);
        },
        showWarningMessage: (m: string) => { calls.errors.push(m); return Promise.resolve(undefined); },
        showInformationMessage: () => Promise.resolve(undefined),
        showInputBox: () => Promise.resolve(editorState.question),
        showTextDocument: (doc: any) => { calls.shownDocuments.push(doc.uri.toString()); return Promise.resolve(undefined); },
        createTextEditorDecorationType: () => ({ dispose() {} }),
        withProgress: (_o: any, task: (p: any, t: any) => Promise<unknown>) => task({}, editorState.progressToken),
        onDidChangeActiveTextEditor: events.activeEditor.event,
        onDidChangeTextEditorSelection: events.selection.event,
        activeTextEditor: undefined as any,
    },
    languages: { setTextDocumentLanguage: () => Promise.resolve(undefined) },
    workspace: {
        getConfiguration: () => ({ get: (k: string) => config[k] }),
        registerTextDocumentContentProvider: () => ({ dispose() {} }),
        onDidChangeConfiguration: () => ({ dispose() {} }),
        onDidChangeTextDocument: () => ({ dispose() {} }),
        onDidCloseTextDocument: events.closed.event,
        openTextDocument: (uri: any) => Promise.resolve({ uri }),
        asRelativePath: (uri: any) => String(uri.path ?? uri).split('/').pop(),
    },
    commands: {
        registerCommand: (id: string, handler: (...args: any[]) => unknown) => {
            calls.commands.push(id);
            calls.handlers.set(id, handler);
            return { dispose() {} };
        },
        executeCommand: (id: string) => { calls.executed.push(id); return Promise.resolve(undefined); },
    },
};

const TransportKind = { stdio: 0, ipc: 1, pipe: 2, socket: 3 };

// Starts the server as vscode-languageclient/node 11 does: a function's ChildProcess, or
// the command, with "--stdio" appended for TransportKind.stdio. The start succeeds once the
// server writes to stdout; a server that exits first fails it with the library's message
// (its pending initialize request is rejected).
class LanguageClient {
    running = false;
    process: cp.ChildProcess | undefined;
    code2ProtocolConverter = {
        asRange: (r: any) => r,
        asTextDocumentPositionParams: (d: any, p: any) => ({ textDocument: { uri: d.uri.toString() }, position: { line: p.line, character: p.character } }),
    };
    constructor(_id: string, _name: string, private readonly server: any, options: any) { calls.clients.push({ server, options }); }
    async start() {
        if (typeof this.server === 'function') {
            this.process = await this.server();
        } else {
            const args = [...(this.server.args ?? [])];
            if (this.server.transport === TransportKind.stdio) args.push('--stdio');
            this.process = cp.spawn(this.server.command, args, this.server.options ?? {});
        }
        const p = this.process!;
        const up = await new Promise<boolean>((resolve) => {
            p.stdout!.once('data', () => resolve(true));
            p.once('exit', () => resolve(false));
        });
        if (!up) throw new Error('Pending response rejected since connection got disposed');
        this.running = true;
    }
    async stop() { this.running = false; this.process?.kill(); }
    isRunning() { return this.running; }
    onProgress() { return { dispose() {} }; }
    async sendRequest(method: string) {
        if (method === 'workspace/executeCommand' && clientBehaviour.command) return clientBehaviour.command;
        return { model: 'stories260K', lastCompletionMs: 12, decodeTokensPerSecond: 100 };
    }
    async sendNotification(method: string, params: unknown) { calls.notifications.push([method, params]); }
    createDefaultErrorHandler() { return { error: () => ({ action: 1 }), closed: () => ({ action: 2 }) }; }
}
const languageclient = { LanguageClient, TransportKind, ProgressType: class {}, CloseAction: { DoNotRestart: 1, Restart: 2 }, ErrorAction: { Continue: 1, Shutdown: 2 } };

type ResolveFn = (request: string, ...rest: unknown[]) => string;
const m = Module as unknown as { _resolveFilename: ResolveFn; _cache: Record<string, unknown> };
const original = m._resolveFilename;
const fakes: Record<string, unknown> = { vscode, 'vscode-languageclient/node': languageclient };
m._resolveFilename = function (request: string, ...rest: unknown[]) {
    if (request in fakes) return `hearth-fake:${request}`;
    return original.call(this, request, ...rest);
};
for (const [name, fake] of Object.entries(fakes)) {
    m._cache[`hearth-fake:${name}`] = { id: name, filename: name, loaded: true, exports: fake } as unknown;
}
