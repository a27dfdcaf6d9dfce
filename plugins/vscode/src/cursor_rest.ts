// hearth/cursorRest: where the cursor came to rest, so the daemon can prefill the
// fill-in-the-middle window there before the user types (the first suggestion after
// opening a file or jumping would otherwise pay for that prefill). One timer for the one
// cursor, restarted on every move; a rest is reported when it is on another line than the
// last one reported for that document, or the document has just become the active one.
// Same-line moves (typing) are the daemon's to handle.
import type { Position, TextDocument, TextEditor } from 'vscode';
import { Settings, isLanguageEnabled } from './config';

export interface CursorRestDeps {
    settings(): Settings;
    synced(document: TextDocument): boolean;   // the client's document selector holds it
    send(document: TextDocument, position: Position): boolean;   // false: no running client
}

export class CursorRest {
    private timer: ReturnType<typeof setTimeout> | undefined;
    private readonly sentLine = new Map<string, number>();   // uri -> line last reported

    constructor(private readonly deps: CursorRestDeps) {}

    // The primary selection of `editor` changed. A selection that is not empty is no
    // resting point: it only cancels the rest being waited for.
    moved(editor: TextEditor | undefined): void {
        this.cancel();
        const s = this.deps.settings();
        if (!editor || s.cursorRestMs <= 0 || !editor.selection.isEmpty) return;
        const { document } = editor;
        // Where completion is off, a prefill would be wasted.
        if (!this.deps.synced(document) || !isLanguageEnabled(s, document.languageId)) return;
        const position = editor.selection.active;
        this.timer = setTimeout(() => {
            this.timer = undefined;
            const uri = document.uri.toString();
            if (this.sentLine.get(uri) === position.line) return;
            if (this.deps.send(document, position)) this.sentLine.set(uri, position.line);
        }, s.cursorRestMs);
    }

    // A document opened or switched to: its first rest is reported even on the line last
    // reported for it (the daemon may have spent that window on another file since).
    activated(editor: TextEditor | undefined): void {
        if (editor) this.sentLine.delete(editor.document.uri.toString());
        this.moved(editor);
    }

    closed(document: TextDocument): void {
        this.sentLine.delete(document.uri.toString());
    }

    // A new server knows of no rest.
    reset(): void {
        this.sentLine.clear();
    }

    cancel(): void {
        if (this.timer !== undefined) clearTimeout(this.timer);
        this.timer = undefined;
    }

    dispose(): void {
        this.cancel();
    }
}
