// The decisions of next-edit suggestions that do not need the editor: which answer is
// usable, how an edit is shown (ghost text at the cursor, or marked where it is), what Tab
// does, and the feedback: each edit shown ends exactly once, accepted (hearth/didAccept)
// or rejected (hearth/didReject). Single-threaded; no vscode import (unit-tested in Node).
import { NextEdit, Position, method, nextEditFeedbackParams } from './protocol';
import type { Notifier } from './feedback';

function before(a: Position, b: Position): boolean {
    return a.line < b.line || (a.line === b.line && a.character < b.character);
}

function same(a: Position, b: Position): boolean {
    return a.line === b.line && a.character === b.character;
}

// A daemon that predates hearth/nextEdit does not list it among its methods
// (initialize result: capabilities.experimental.hearth.methods): it is not asked.
export function advertisesNextEdit(capabilities: unknown): boolean {
    const methods = (capabilities as { experimental?: { hearth?: { methods?: unknown } } } | undefined)?.experimental?.hearth?.methods;
    return Array.isArray(methods) && methods.includes(method.nextEdit);
}

// The first edit made for this document version whose range is well formed; an answer
// for an older version describes text that is gone.
export function usableEdit(edits: readonly NextEdit[] | undefined, uri: string, version: number): NextEdit | undefined {
    return (edits ?? []).find((e) => e.textDocument.uri === uri && e.textDocument.version === version &&
        !before(e.range.end, e.range.start) && typeof e.newText === 'string');
}

// 'inline': a pure insertion of one line's text on the cursor's line at or after the
// cursor, read as ghost text; 'away': anything else, marked where it is.
export type Placement = 'inline' | 'away';

export function placement(edit: NextEdit, cursor: Position): Placement {
    const { start, end } = edit.range;
    const insertion = same(start, end) && !edit.newText.includes('\n');
    return insertion && start.line === cursor.line && !before(start, cursor) ? 'inline' : 'away';
}

// The cursor is on the edit when it is on one of the lines the edit replaces or on the line
// where it is shown: there Tab applies it; anywhere else Tab jumps to it.
export function onEdit(edit: NextEdit, cursor: Position): boolean {
    return (cursor.line >= edit.range.start.line && cursor.line <= edit.range.end.line) ||
        cursor.line === edit.showAt.start.line;
}

export type TabAction = 'jump' | 'apply';

export function tabAction(edit: NextEdit, cursor: Position): TabAction {
    return onEdit(edit, cursor) ? 'apply' : 'jump';
}

// The new text as one line of a decoration: line breaks shown as ⏎, cut at `max` characters.
export function previewText(newText: string, max = 80): string {
    const one = newText.replace(/\r?\n/g, ' ⏎ ');
    return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

// The pause after an edit before asking: the cursor-rest moment, not the completion debounce,
// so that the completion asked for at the same pause reaches the daemon first (both run at
// the same priority there, in order) and its ghost text is not held up by a model call.
export function editPauseMs(debounceMs: number, cursorRestMs: number): number {
    return Math.max(debounceMs, cursorRestMs);
}

// After a pause in editing the editor asks; at a cursor rest it asks again only when the
// document changed since it last asked and nothing is shown (a rest costs no model call).
export function askAtRest(lastAskedVersion: number | undefined, version: number, shown: boolean): boolean {
    return !shown && lastAskedVersion !== version;
}

// The edit on screen and its feedback.
export class NextEditFeedback {
    private current_: NextEdit | undefined;

    constructor(private readonly out_: Notifier) {}

    get current(): NextEdit | undefined { return this.current_; }

    // A new edit replaces (and so rejects) the one on screen.
    shown(edit: NextEdit): void {
        this.rejected();
        this.current_ = edit;
    }

    accepted(): void { this.settle_(method.didAccept); }

    // Escape, typing elsewhere, another document, the setting turned off.
    rejected(): void { this.settle_(method.didReject); }

    private settle_(m: string): void {
        const e = this.current_;
        this.current_ = undefined;
        if (e) this.out_.notify(m, nextEditFeedbackParams(e));
    }
}
