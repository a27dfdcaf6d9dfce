// Completion feedback: which suggestion is on screen and what became of it. Each shown
// item ends exactly once: accepted (hearth/didAccept), partly accepted (already reported
// by textDocument/didPartiallyAcceptCompletion as it happened), or rejected
// (hearth/didReject) when it is dismissed or replaced by another suggestion.
// Single-threaded (the extension host's event loop); no vscode import.
import { InlineCompletionItem, acceptCompletionCommand, feedbackParams, insertTextOf, method } from './protocol';

export interface Notifier {
    notify(method: string, params: unknown): void;
}

interface Shown {
    uri: string;
    item: InlineCompletionItem;
    typedLength: number;      // of insertText, already in the document when shown (range start to cursor)
    acceptedLength: number;   // inserted by partial accepts since
}

export class Feedback {
    private current_: Shown | undefined;

    constructor(private readonly out_: Notifier) {}

    get current(): Readonly<Shown> | undefined { return this.current_; }

    // A new suggestion replaces whatever was on screen. `typedLength`: how much of its
    // insertText the document already held (the item's range starts before the cursor).
    shown(uri: string, item: InlineCompletionItem, typedLength = 0): void {
        this.settle_();
        this.current_ = { uri, item, typedLength, acceptedLength: 0 };
        this.out_.notify(method.didShowCompletion, { item });
    }

    // The user took `length` more UTF-16 code units of it (accept word / accept line).
    // acceptedLength on the wire counts insertText from its start (LSP 3.18).
    partiallyAccepted(uri: string, length: number): void {
        const c = this.current_;
        if (!c || c.uri !== uri || length <= 0) return;
        const total = insertTextOf(c.item).length;
        c.acceptedLength = Math.min(c.acceptedLength + length, total - c.typedLength);
        this.out_.notify(method.didPartiallyAcceptCompletion, { item: c.item, acceptedLength: c.typedLength + c.acceptedLength });
        if (c.typedLength + c.acceptedLength >= total) this.accepted(uri, false);
    }

    // The whole item went in. When the editor ran the daemon's own accept command for it,
    // that already told the daemon; otherwise hearth/didAccept does.
    accepted(uri: string, byServerCommand: boolean): void {
        const c = this.current_;
        if (!c || c.uri !== uri) return;
        this.current_ = undefined;
        if (byServerCommand && c.item.command?.command === acceptCompletionCommand) return;
        this.out_.notify(method.didAccept, feedbackParams(uri, c.item, insertTextOf(c.item).length));
    }

    // The suggestion went away without being taken (escape, cursor moved, edit elsewhere).
    dismissed(): void { this.settle_(); }

    private settle_(): void {
        const c = this.current_;
        this.current_ = undefined;
        if (c && c.acceptedLength === 0) this.out_.notify(method.didReject, feedbackParams(c.uri, c.item));
    }
}
