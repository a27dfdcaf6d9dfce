// One streamed answer about a selection, rendered as the text of a read-only document.
// Deltas arrive from $/progress; the final reply's text replaces them (the daemon's
// complete answer wins if a notification was lost). No vscode import.
import { ChatAction } from './protocol';

export type ChatState = 'streaming' | 'done' | 'cancelled' | 'failed';

export class ChatTranscript {
    private text_ = '';
    private state_: ChatState = 'streaming';
    private error_ = '';

    constructor(readonly action: ChatAction, readonly prompt: string, readonly file: string,
                readonly firstLine: number, readonly lastLine: number) {}

    get state(): ChatState { return this.state_; }
    get text(): string { return this.text_; }

    append(delta: string): boolean {
        if (this.state_ !== 'streaming' || delta.length === 0) return false;
        this.text_ += delta;
        return true;
    }

    finish(fullText: string | undefined): void {
        if (this.state_ !== 'streaming') return;
        if (typeof fullText === 'string' && fullText.length >= this.text_.length) this.text_ = fullText;
        this.state_ = 'done';
    }

    cancel(): void {
        if (this.state_ === 'streaming') this.state_ = 'cancelled';
    }

    fail(message: string): void {
        if (this.state_ !== 'streaming') return;
        this.state_ = 'failed';
        this.error_ = message;
    }

    render(): string {
        const title = this.action === 'ask' ? `Ask: ${this.prompt}` : this.action === 'fix' ? 'Fix' : 'Explain';
        const where = `${this.file}:${this.firstLine + 1}-${this.lastLine + 1}`;
        const footer = {
            streaming: '\n\n_… (hearth is writing; "hearth: Stop answer" cancels)_',
            done: '',
            cancelled: '\n\n_(cancelled)_',
            failed: `\n\n_(failed: ${this.error_})_`,
        }[this.state_];
        return `# hearth: ${title}\n\n${where}\n\n${this.text_}${footer}\n`;
    }
}
