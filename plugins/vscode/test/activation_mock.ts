// A fuller stand-in for the `vscode` module and for vscode-languageclient/node, enough to
// run the extension's activate() in Node and see what it registers, starts and says.
// Installed for this process only; records everything in `calls`.
import Module = require('module');
import { Position, Range, InlineCompletionTriggerKind } from './vscode_mock';

export const calls = {
    commands: [] as string[],
    errors: [] as string[],
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
export const clientBehaviour = { startError: undefined as Error | undefined };

class EventEmitter<T> {
    private ls: Array<(e: T) => void> = [];
    event = (l: (e: T) => void) => { this.ls.push(l); return { dispose() {} }; };
    fire(e: T) { for (const l of this.ls) l(e); }
}

const vscode = {
    Position, Range, InlineCompletionTriggerKind, EventEmitter,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ProgressLocation: { Notification: 15 },
    ViewColumn: { Beside: -2 },
    CancellationTokenSource: class {
        private ls: Array<() => void> = [];
        token = { isCancellationRequested: false, onCancellationRequested: (l: () => void) => { this.ls.push(l); return { dispose() {} }; } };
        cancel() { if (!this.token.isCancellationRequested) { this.token.isCancellationRequested = true; for (const l of this.ls) l(); } }
        dispose() {}
    },
    Uri: { from: (o: any) => ({ ...o, toString: () => `${o.scheme}:${o.path}` }) },
    window: {
        createOutputChannel: () => ({ appendLine: (l: string) => calls.output.push(l), show() {}, dispose() {} }),
        createStatusBarItem: () => {
            const item: any = { show() {}, dispose() {} };
            Object.defineProperty(item, 'text', { set(v: string) { calls.statusText.push(v); }, get() { return calls.statusText[calls.statusText.length - 1]; } });
            return item;
        },
        showErrorMessage: (m: string) => { calls.errors.push(m); return Promise.resolve(undefined); },
        showWarningMessage: (m: string) => { calls.errors.push(m); return Promise.resolve(undefined); },
        showInformationMessage: () => Promise.resolve(undefined),
        showInputBox: () => Promise.resolve(editorState.question),
        showTextDocument: (doc: any) => { calls.shownDocuments.push(doc.uri.toString()); return Promise.resolve(undefined); },
        withProgress: (_o: any, task: (p: any, t: any) => Promise<unknown>) => task({}, editorState.progressToken),
        onDidChangeActiveTextEditor: () => ({ dispose() {} }),
        activeTextEditor: undefined as any,
    },
    languages: { setTextDocumentLanguage: () => Promise.resolve(undefined) },
    workspace: {
        getConfiguration: () => ({ get: (k: string) => config[k] }),
        registerTextDocumentContentProvider: () => ({ dispose() {} }),
        onDidChangeConfiguration: () => ({ dispose() {} }),
        onDidChangeTextDocument: () => ({ dispose() {} }),
        openTextDocument: (uri: any) => Promise.resolve({ uri }),
        asRelativePath: (uri: any) => String(uri.path ?? uri).split('/').pop(),
    },
    commands: {
        registerCommand: (id: string) => { calls.commands.push(id); return { dispose() {} }; },
        executeCommand: () => Promise.resolve(undefined),
    },
};

class LanguageClient {
    running = false;
    constructor(_id: string, _name: string, server: any, options: any) { calls.clients.push({ server, options }); }
    async start() { if (clientBehaviour.startError) throw clientBehaviour.startError; this.running = true; }
    async stop() { this.running = false; }
    isRunning() { return this.running; }
    async sendRequest() { return { model: 'stories260K', lastCompletionMs: 12, decodeTokensPerSecond: 100 }; }
    async sendNotification() {}
}
const languageclient = { LanguageClient, TransportKind: { stdio: 0 }, ProgressType: class {} };

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
