// How a next edit looks: decorations in the editor, one edit at a time. An edit away from
// the cursor has the text it replaces struck through and its new text after it on a green
// ground; an insertion at the cursor reads as ghost text; the edit's line ends with a hint
// of what Tab does there.
import * as vscode from 'vscode';
import { Placement, TabAction, previewText } from './next_edit_logic';

export interface ShownEdit {
    range: vscode.Range;
    newText: string;
    showAt: vscode.Position;
    placement: Placement;
    tab: TabAction;
}

export class NextEditView implements vscode.Disposable {
    private readonly removed_ = vscode.window.createTextEditorDecorationType({
        backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
        textDecoration: 'line-through',
    });
    private readonly inserted_ = vscode.window.createTextEditorDecorationType({});
    private readonly hint_ = vscode.window.createTextEditorDecorationType({});
    private editor_: vscode.TextEditor | undefined;

    show(editor: vscode.TextEditor, edit: ShownEdit): void {
        if (this.editor_ && this.editor_ !== editor) this.clear();
        this.editor_ = editor;
        const ghost = edit.placement === 'inline';
        editor.setDecorations(this.removed_, edit.range.isEmpty ? [] : [edit.range]);
        editor.setDecorations(this.inserted_, [{
            range: new vscode.Range(edit.range.end, edit.range.end),
            renderOptions: {
                after: ghost
                    ? { contentText: previewText(edit.newText), color: new vscode.ThemeColor('editorGhostText.foreground') }
                    : { contentText: previewText(edit.newText), backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground') },
            },
        }]);
        const line = editor.document.lineAt(edit.showAt.line).range.end;
        editor.setDecorations(this.hint_, [{
            range: new vscode.Range(line, line),
            renderOptions: {
                after: {
                    contentText: edit.tab === 'jump' ? '  ⇥ Tab to jump to the edit' : '  ⇥ Tab to apply',
                    color: new vscode.ThemeColor('editorCodeLens.foreground'),
                    fontStyle: 'italic',
                },
            },
        }]);
    }

    clear(): void {
        const e = this.editor_;
        this.editor_ = undefined;
        if (!e) return;
        for (const d of [this.removed_, this.inserted_, this.hint_]) e.setDecorations(d, []);
    }

    dispose(): void {
        this.clear();
        this.removed_.dispose();
        this.inserted_.dispose();
        this.hint_.dispose();
    }
}
