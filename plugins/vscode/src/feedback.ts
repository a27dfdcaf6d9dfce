// Completion feedback: which suggestion is on screen and what became of it. Each shown
// item ends exactly once: accepted (hearth/didAccept), partly accepted (already reported
// by textDocument/didPartiallyAcceptCompletion as it happened), or rejected
// (hearth/didReject) when it is dismissed or replaced by another suggestion.
// Single-threaded (the extension host's event loop); no vscode import.
import { InlineCompletionItem, insertTextOf, method } from './protocol';

export interface Notifier {
    notify(method: string, params: unknown): void;
}

interface Shown {
    uri: string;
    item: InlineCompletionItem;
    acceptedLength: number;
}

export class Feedback {
    private current_: Shown | undefined;

    constructor(private readonly out_: Notifier) {}

    get current(): Readonly<Shown> | undefined { return this.current_; }

    // A new suggestion replaces whatever was on screen.
    shown(uri: string, item: InlineCompletionItem): void {
        this.settle_();
        this.current_ = { uri, item, acceptedLength: 0 };
        this.out_.notify(method.didShowCompletion, { item });
    }

    // The user took `length` more UTF-16 code units of it (accept word / accept line).
    partiallyAccepted(uri: string, length: number): void {
        const c = this.current_;
        if (!c || c.uri !== uri || length <= 0) return;
        c.acceptedLength = Math.min(c.acceptedLength + length, insertTextOf(c.item).length);
        this.out_.notify(method.didPartiallyAcceptCompletion, { item: c.item, acceptedLength: c.acceptedLength });
        if (c.acceptedLength >= insertTextOf(c.item).length) this.accepted(uri);
    }

    accepted(uri: string): void {
        const c = this.current_;
        if (!c || c.uri !== uri) return;
        this.current_ = undefined;
        this.out_.notify(method.didAccept, { uri, item: c.item, acceptedLength: insertTextOf(c.item).length });
    }

    // The suggestion went away without being taken (escape, cursor moved, edit elsewhere).
    dismissed(): void { this.settle_(); }

    private settle_(): void {
        const c = this.current_;
        this.current_ = undefined;
        if (c && c.acceptedLength === 0) this.out_.notify(method.didReject, { uri: c.uri, item: c.item });
    }
}
