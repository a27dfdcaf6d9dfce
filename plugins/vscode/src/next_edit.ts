// Next-edit suggestions in the editor: after a pause in editing (editPauseMs),
// or when the cursor rests after an edit not yet asked about, the extension asks
// hearth/nextEdit at the cursor; a new keystroke cancels the request in flight. The edit
// answered is shown (next_edit_view.ts) until Tab applies it, Escape dismisses it, or the
// user types, switches editors or turns the setting off. Tab is ours only while the
// context key hearth.nextEditShown is set (package.json); with the cursor off the edit it
// jumps there, on it it applies. The decisions are in next_edit_logic.ts.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { Settings, isLanguageEnabled } from './config';
import { NextEditFeedback, advertisesNextEdit, askAtRest, editPauseMs, onEdit, placement, tabAction, usableEdit } from './next_edit_logic';
import { NextEditView } from './next_edit_view';
import { NextEdit, NextEditResult, Position, method, nextEditParams } from './protocol';

export const nextEditTabCommand = 'hearth.nextEditTab';
export const nextEditDismissCommand = 'hearth.nextEditDismiss';
const shownKey = 'hearth.nextEditShown';
const atCursorKey = 'hearth.nextEditAtCursor';

export interface NextEditDeps {
    settings(): Settings;
    client(): LanguageClient | undefined;
    synced(document: vscode.TextDocument): boolean;
}

const lsp = (p: vscode.Position): Position => ({ line: p.line, character: p.character });

export class NextEditController implements vscode.Disposable {
    private readonly view_ = new NextEditView();
    private readonly feedback_: NextEditFeedback;
    private editor_: vscode.TextEditor | undefined;       // where the edit is shown
    private pending_: vscode.CancellationTokenSource | undefined;
    private timer_: ReturnType<typeof setTimeout> | undefined;       // the edit pause
    private restTimer_: ReturnType<typeof setTimeout> | undefined;   // the cursor rest
    private applying_ = false;                            // our own edit is going in
    private readonly asked_ = new Map<string, number>();  // uri -> version last asked about

    constructor(private readonly deps_: NextEditDeps) {
        this.feedback_ = new NextEditFeedback({
            notify: (m, p) => void deps_.client()?.sendNotification(m, p).catch(() => undefined),
        });
    }

    // A document changed: the user typed (or an edit came from elsewhere).
    changed(e: vscode.TextDocumentChangeEvent): void {
        if (this.applying_ || e.contentChanges.length === 0) return;
        if (this.editor_?.document === e.document) this.dismiss();
        const editor = vscode.window.activeTextEditor;
        if (editor?.document !== e.document) return;
        this.cancel_();
        if (!this.enabled_(editor.document)) return;
        this.timer_ = setTimeout(() => { this.timer_ = undefined; this.ask_(editor); }, this.pauseMs_());
    }

    // The cursor of the active editor moved: update what Tab will do, and after a rest ask
    // if the document changed since it was last asked about.
    moved(editor: vscode.TextEditor): void {
        if (this.editor_ === editor && this.feedback_.current) this.render_();
        if (this.restTimer_ !== undefined) clearTimeout(this.restTimer_);
        this.restTimer_ = undefined;
        if (this.timer_ !== undefined || this.pending_ || !this.enabled_(editor.document)) return;
        const rest = this.deps_.settings().cursorRestMs;
        if (rest <= 0) return;
        this.restTimer_ = setTimeout(() => {
            this.restTimer_ = undefined;
            if (this.timer_ !== undefined || this.pending_) return;
            const shown = this.feedback_.current !== undefined;
            const doc = editor.document;
            if (vscode.window.activeTextEditor === editor && askAtRest(this.asked_.get(doc.uri.toString()), doc.version, shown)) {
                this.ask_(editor);
            }
        }, rest);
    }

    activeEditorChanged(): void {
        this.cancel_();
        this.dismiss();
    }

    closed(document: vscode.TextDocument): void {
        this.asked_.delete(document.uri.toString());
    }

    settingsChanged(): void {
        const doc = this.editor_?.document;
        if (doc && !this.enabled_(doc)) this.dismiss();
    }

    // Tab: jump to the edit, or apply it when the cursor is on it.
    async tab(): Promise<void> {
        const edit = this.feedback_.current;
        const editor = this.editor_;
        if (!edit || !editor || editor !== vscode.window.activeTextEditor) {
            this.dismiss();
            await vscode.commands.executeCommand('tab');   // the key's own job
            return;
        }
        if (tabAction(edit, lsp(editor.selection.active)) === 'jump') {
            const at = new vscode.Position(edit.showAt.start.line, edit.showAt.start.character);
            editor.selection = new vscode.Selection(at, at);
            editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
            this.render_();
            return;
        }
        await this.apply_(editor, edit);
    }

    // Escape, or the edit no longer fits what the user is doing.
    dismiss(): void {
        this.feedback_.rejected();
        this.clear_();
    }

    dispose(): void {
        this.cancel_();
        this.dismiss();
        this.view_.dispose();
    }

    private pauseMs_(): number {
        const s = this.deps_.settings();
        return editPauseMs(s.debounceMs, s.cursorRestMs);
    }

    private enabled_(document: vscode.TextDocument): boolean {
        const s = this.deps_.settings();
        return s.nextEditEnabled && this.deps_.synced(document) && isLanguageEnabled(s, document.languageId);
    }

    private ask_(editor: vscode.TextEditor): void {
        const client = this.deps_.client();
        if (!client?.isRunning() || vscode.window.activeTextEditor !== editor) return;
        if (!advertisesNextEdit(client.initializeResult?.capabilities)) return;
        this.cancel_();
        const doc = editor.document;
        const uri = doc.uri.toString();
        const version = doc.version;
        this.asked_.set(uri, version);
        const source = new vscode.CancellationTokenSource();
        this.pending_ = source;
        client.sendRequest<NextEditResult>(method.nextEdit, nextEditParams(uri, version, lsp(editor.selection.active)), source.token)
            .then((result) => {
                if (this.pending_ !== source) return;   // superseded
                this.pending_ = undefined;
                const edit = usableEdit(result?.edits, uri, doc.version);
                if (edit && vscode.window.activeTextEditor === editor && this.enabled_(doc)) this.show_(editor, edit);
            }, () => {
                if (this.pending_ === source) this.pending_ = undefined;   // cancelled or failed: nothing to show
            })
            .finally(() => source.dispose());
    }

    private show_(editor: vscode.TextEditor, edit: NextEdit): void {
        this.clear_();
        this.feedback_.shown(edit);
        this.editor_ = editor;
        this.render_();
    }

    private render_(): void {
        const edit = this.feedback_.current;
        const editor = this.editor_;
        if (!edit || !editor) return;
        const cursor = lsp(editor.selection.active);
        const r = edit.range;
        this.view_.show(editor, {
            range: new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character),
            newText: edit.newText,
            showAt: new vscode.Position(edit.showAt.start.line, edit.showAt.start.character),
            placement: placement(edit, cursor),
            tab: tabAction(edit, cursor),
        });
        void vscode.commands.executeCommand('setContext', shownKey, true);
        void vscode.commands.executeCommand('setContext', atCursorKey, onEdit(edit, cursor));
    }

    private async apply_(editor: vscode.TextEditor, edit: NextEdit): Promise<void> {
        if (editor.document.version !== edit.textDocument.version) {
            this.dismiss();   // the text it was made for is gone
            return;
        }
        const r = edit.range;
        const range = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
        this.applying_ = true;
        let applied = false;
        try {
            applied = await editor.edit((b) => b.replace(range, edit.newText));
        } finally {
            this.applying_ = false;
        }
        if (!applied) {
            this.dismiss();
            return;
        }
        this.feedback_.accepted();
        this.clear_();
        const end = endOf(range.start, edit.newText);
        editor.selection = new vscode.Selection(end, end);
        // An applied edit is an edit: the next one may follow from it.
        this.cancel_();
        this.timer_ = setTimeout(() => { this.timer_ = undefined; this.ask_(editor); }, this.pauseMs_());
    }

    private clear_(): void {
        this.view_.clear();
        this.editor_ = undefined;
        void vscode.commands.executeCommand('setContext', shownKey, false);
        void vscode.commands.executeCommand('setContext', atCursorKey, false);
    }

    private cancel_(): void {
        if (this.timer_ !== undefined) clearTimeout(this.timer_);
        if (this.restTimer_ !== undefined) clearTimeout(this.restTimer_);
        this.timer_ = this.restTimer_ = undefined;
        this.pending_?.cancel();
        this.pending_ = undefined;
    }
}

// Where the cursor goes after `text` is put at `start`.
function endOf(start: vscode.Position, text: string): vscode.Position {
    const lines = text.split('\n');
    if (lines.length === 1) return start.translate(0, text.length);
    return new vscode.Position(start.line + lines.length - 1, lines[lines.length - 1].length);
}
