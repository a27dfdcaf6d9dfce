// Answers about a selection: the daemon's hearth.explain / hearth.fix / hearth.ask commands,
// each answer a read-only virtual document (scheme hearth-answer) that fills as the
// $/progress reports arrive, beside the code it is about.
// Cancellable from the progress notification or with "hearth: Stop answer".
import * as vscode from 'vscode';
import { ProgressType, type LanguageClient } from 'vscode-languageclient/node';
import { ChatTranscript } from './chat_transcript';
import { ChatAction, ChatResult, chatCommandParams, progressDelta } from './protocol';

export const answerScheme = 'hearth-answer';

export class AnswerView implements vscode.TextDocumentContentProvider {
    private readonly changed_ = new vscode.EventEmitter<vscode.Uri>();
    private readonly transcripts_ = new Map<string, ChatTranscript>();
    private readonly running_ = new Set<vscode.CancellationTokenSource>();
    private readonly pending_ = new Set<string>();
    private seq_ = 0;

    readonly onDidChange = this.changed_.event;

    // busy: +1 when an answer starts streaming, -1 when it ends (the status bar shows it).
    constructor(private readonly client_: () => LanguageClient | undefined,
                private readonly busy_: (delta: 1 | -1) => void = () => undefined) {}

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.transcripts_.get(uri.toString())?.render() ?? '';
    }

    stopAll(): void {
        for (const c of this.running_) c.cancel();
    }

    async run(action: ChatAction): Promise<void> {
        const client = this.client_();
        const editor = vscode.window.activeTextEditor;
        if (!client || !client.isRunning()) {
            void vscode.window.showErrorMessage('hearth: the daemon is not running (see the "hearth" output).');
            return;
        }
        if (!editor) {
            void vscode.window.showWarningMessage('hearth: open a file and select the code first.');
            return;
        }
        let prompt = '';
        if (action === 'ask') {
            const q = await vscode.window.showInputBox({ prompt: 'Ask hearth about the selection', placeHolder: 'What does this do?' });
            if (!q) return;
            prompt = q;
        }
        const doc = editor.document;
        // No selection: the current line.
        const sel = editor.selection.isEmpty ? doc.lineAt(editor.selection.active.line).range : editor.selection;
        const seq = ++this.seq_;
        const token = `hearth-chat-${process.pid}-${seq}`;
        const file = vscode.workspace.asRelativePath(doc.uri);
        const transcript = new ChatTranscript(action, prompt, file, sel.start.line, sel.end.line);
        const uri = vscode.Uri.from({ scheme: answerScheme, path: `/answer-${seq}.md` });
        this.transcripts_.set(uri.toString(), transcript);
        const answerDoc = await vscode.workspace.openTextDocument(uri);
        await vscode.languages.setTextDocumentLanguage(answerDoc, 'markdown');
        await vscode.window.showTextDocument(answerDoc, { viewColumn: vscode.ViewColumn.Beside, preview: false, preserveFocus: true });

        const cts = new vscode.CancellationTokenSource();
        this.running_.add(cts);
        const progress = client.onProgress(new ProgressType<unknown>(), token, (value) => {
            if (transcript.append(progressDelta(value))) this.changed_later_(uri);
        });
        const params = chatCommandParams(action, doc.uri.toString(), client.code2ProtocolConverter.asRange(sel), prompt, token);
        await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: 'hearth: answering…', cancellable: true },
            async (_p, notificationToken) => {
                const sub = notificationToken.onCancellationRequested(() => cts.cancel());
                this.busy_(1);
                try {
                    const result = await client.sendRequest<ChatResult>('workspace/executeCommand', params, cts.token);
                    if (cts.token.isCancellationRequested) transcript.cancel();
                    else transcript.finish(result?.text);
                } catch (e) {
                    if (cts.token.isCancellationRequested) transcript.cancel();
                    else transcript.fail(e instanceof Error ? e.message : String(e));
                } finally {
                    this.busy_(-1);
                    sub.dispose();
                    progress.dispose();
                    this.running_.delete(cts);
                    cts.dispose();
                    this.changed_.fire(uri);
                }
            });
    }

    // Coalesce a burst of deltas into one refresh per 50 ms: each refresh re-renders the
    // whole document in the editor.
    private changed_later_(uri: vscode.Uri): void {
        const key = uri.toString();
        if (this.pending_.has(key)) return;
        this.pending_.add(key);
        setTimeout(() => {
            this.pending_.delete(key);
            this.changed_.fire(uri);
        }, 50);
    }
}
