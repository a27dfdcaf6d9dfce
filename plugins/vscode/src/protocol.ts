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
    // TextDocumentPositionParams: the cursor came to rest there (see cursor_rest.ts).
    cursorRest: 'hearth/cursorRest',
    // An edit the user is likely to make next, anywhere in the document (see next_edit.ts).
    nextEdit: 'hearth/nextEdit',
} as const;

export interface Position { line: number; character: number; }
export interface Range { start: Position; end: Position; }

// LSP InlineCompletionTriggerKind: Invoked asks for several candidates, Automatic for one.
export const triggerKind = { invoked: 1, automatic: 2 } as const;

export interface Command { title: string; command: string; arguments?: unknown[]; }

export interface InlineCompletionItem {
    insertText: string | { kind: 'snippet'; value: string };
    filterText?: string;
    range?: Range;
    command?: Command;
}

// The daemon puts this command on every item; running it on accept (the editor does, the
// client sends workspace/executeCommand) is the daemon's accept feedback, so a client that
// runs it sends no hearth/didAccept for that item.
export const acceptCompletionCommand = 'hearth.acceptCompletion';

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

// hearth/chat with a free prompt; its pieces come as partial results on `token`.
export function chatParams(uri: string, range: Range, prompt: string, token: string): ChatParams {
    return { textDocument: { uri }, range, prompt, partialResultToken: token };
}

// The selection commands are the daemon's commands hearth.explain / hearth.fix / hearth.ask
// (the daemon picks the instruction for explain and fix); their pieces come as work-done
// progress reports on `token`, and the reply is the whole answer ({text}).
export type ChatAction = 'explain' | 'fix' | 'ask';

export interface ExecuteCommandParams { command: string; arguments: unknown[]; workDoneToken?: string; }

export function chatCommandParams(action: ChatAction, uri: string, range: Range, prompt: string | undefined,
                                  token: string): ExecuteCommandParams {
    const arg: Record<string, unknown> = { textDocument: { uri }, range };
    if (prompt) arg.prompt = prompt;
    return { command: `hearth.${action}`, arguments: [arg], workDoneToken: token };
}

// hearth/didAccept and hearth/didReject name the item by the id the daemon gave it (in
// its command's argument) and by its text and range.
export function feedbackParams(uri: string, item: InlineCompletionItem, acceptedLength?: number): Record<string, unknown> {
    const p: Record<string, unknown> = { uri, insertText: insertTextOf(item) };
    if (item.range) p.range = item.range;
    const arg = item.command?.arguments?.[0] as { id?: unknown } | undefined;
    if (arg && typeof arg.id === 'string') p.id = arg.id;
    if (acceptedLength !== undefined) p.acceptedLength = acceptedLength;
    return p;
}

// A $/progress value of a streamed answer: a text delta. Partial results carry {text};
// work-done reports carry {kind: "report", text}; "begin"/"end" carry no delta.
export function progressDelta(value: unknown): string {
    if (typeof value !== 'object' || value === null) return '';
    const v = value as { kind?: unknown; text?: unknown };
    if (v.kind !== undefined && v.kind !== 'report') return '';
    return typeof v.text === 'string' ? v.text : '';
}

export function insertTextOf(item: InlineCompletionItem): string {
    return typeof item.insertText === 'string' ? item.insertText : item.insertText.value;
}

// hearth/nextEdit: asked at the cursor; the answer holds no edit (the usual answer) or
// edits computed against the document version they name.
export interface VersionedDocument { uri: string; version: number; }

export interface NextEditParams { textDocument: VersionedDocument; position: Position; }

export interface NextEdit {
    id: string;                        // for hearth/didAccept and hearth/didReject
    textDocument: VersionedDocument;   // the version the edit was computed against
    range: Range;                      // what to replace
    newText: string;
    showAt: Range;                     // where to show it; Tab jumps to its start
}

export interface NextEditResult { edits: NextEdit[]; }

export function nextEditParams(uri: string, version: number, position: Position): NextEditParams {
    return { textDocument: { uri, version }, position };
}

// The feedback of a next edit: the same notifications as completions, naming the edit's id.
export function nextEditFeedbackParams(edit: NextEdit): Record<string, unknown> {
    return { uri: edit.textDocument.uri, id: edit.id, insertText: edit.newText, range: edit.range };
}

// hearth/status (docs/protocol.md); the daemon may add fields.
export interface StatusResult {
    version?: string;
    model?: string;
    modelPath?: string;
    mappedBytes?: number;
    kvBudgetBytes?: number;
    kvUsedBytes?: number;
    cacheSlots?: number;
    cacheSlotsUsed?: number;
    queueDepth?: number;
    requestsInFlight?: number;
    lastCompletionMs?: number;
    promptTokensPerSecond?: number;
    decodeTokensPerSecond?: number;
    [k: string]: unknown;
}
