// The hearth protocol as the extension speaks it: method names and parameter shapes
// (LSP 3.18 inline completion plus hearth's own methods, see docs/protocol.md).
// Pure data and builders, no vscode import, so the end-to-end client test drives the
// daemon with exactly the messages the extension sends.

export const method = {
    inlineCompletion: 'textDocument/inlineCompletion',
    didShowCompletion: 'textDocument/didShowCompletion',
    didPartiallyAcceptCompletion: 'textDocument/didPartiallyAcceptCompletion',
    didAccept: 'hearth/didAccept',
    didReject: 'hearth/didReject',
    chat: 'hearth/chat',
    status: 'hearth/status',
} as const;

export interface Position { line: number; character: number; }
export interface Range { start: Position; end: Position; }

// LSP InlineCompletionTriggerKind: Invoked asks for several candidates, Automatic for one.
export const triggerKind = { invoked: 1, automatic: 2 } as const;

export interface InlineCompletionItem {
    insertText: string | { kind: 'snippet'; value: string };
    filterText?: string;
    range?: Range;
}

export interface InlineCompletionParams {
    textDocument: { uri: string };
    position: Position;
    context: { triggerKind: number; selectedCompletionInfo?: { range: Range; text: string } };
}

export function inlineCompletionParams(uri: string, position: Position, kind: number): InlineCompletionParams {
    return { textDocument: { uri }, position, context: { triggerKind: kind } };
}

export interface ChatParams {
    textDocument: { uri: string };
    range: Range;
    prompt: string;
    partialResultToken?: string;
    workDoneToken?: string;
}

export interface ChatResult { text: string; }

// What each selection command asks; the daemon wraps it in the model's chat template
// together with the selected code.
export type ChatAction = 'explain' | 'fix' | 'ask';
export const actionPrompt: Record<Exclude<ChatAction, 'ask'>, string> = {
    explain: 'Explain what this code does.',
    fix: 'Find the bugs in this code and show a fixed version.',
};

export function chatParams(uri: string, range: Range, prompt: string, token: string): ChatParams {
    return { textDocument: { uri }, range, prompt, partialResultToken: token, workDoneToken: token };
}

// A $/progress value of a streamed chat: a text delta. The kind is optional in what the
// daemon sends; "begin"/"end" without text carry no delta.
export function progressDelta(value: unknown): string {
    if (typeof value !== 'object' || value === null) return '';
    const v = value as { kind?: unknown; text?: unknown };
    if (v.kind !== undefined && v.kind !== 'report') return '';
    return typeof v.text === 'string' ? v.text : '';
}

export function insertTextOf(item: InlineCompletionItem): string {
    return typeof item.insertText === 'string' ? item.insertText : item.insertText.value;
}

export interface StatusResult {
    model?: { name?: string; path?: string; [k: string]: unknown } | string;
    memory?: Record<string, unknown>;
    slots?: unknown;
    queue?: unknown;
    lastCompletion?: Record<string, unknown>;
    tokensPerSecond?: number;
    [k: string]: unknown;
}
