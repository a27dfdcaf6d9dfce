// Inline completion in the editor: a vscode-languageclient middleware around the client's
// own textDocument/inlineCompletion provider. It skips disabled languages, debounces
// automatic requests (typing) but not invoked ones (the user asked), trims suggestions
// to hearth.maxLines, and wires every item to the feedback tracker: the item's command
// reports a full accept, the partial-accept commands report accepted lengths.
import * as vscode from 'vscode';
import type { Middleware } from 'vscode-languageclient';

type InlineCompletionMiddleware = Pick<Middleware, 'provideInlineCompletionItems'>;
import { debounce, insertedLength, limitLines } from './completion_logic';
import { Settings, isLanguageEnabled } from './config';
import { Feedback } from './feedback';
import { InlineCompletionItem, Range } from './protocol';

export const acceptedCommand = 'hearth._accepted';

export interface CompletionDeps {
    settings(): Settings;
    feedback: Feedback;
    toRange(r: vscode.Range): Range;
    busy(delta: 1 | -1): void;
}

export function inlineCompletionMiddleware(deps: CompletionDeps): InlineCompletionMiddleware {
    return {
        provideInlineCompletionItems: async (document, position, context, token, next) => {
            const s = deps.settings();
            if (!isLanguageEnabled(s, document.languageId)) return undefined;
            if (context.triggerKind === vscode.InlineCompletionTriggerKind.Automatic && !(await debounce(s.debounceMs, token))) {
                return undefined;
            }
            deps.busy(1);
            let result: vscode.InlineCompletionItem[] | vscode.InlineCompletionList | null | undefined;
            try {
                result = await next(document, position, context, token);
            } finally {
                deps.busy(-1);
            }
            if (!result || token.isCancellationRequested) return undefined;
            const items = Array.isArray(result) ? result : result.items;
            const uri = document.uri.toString();
            for (const item of items) {
                if (typeof item.insertText === 'string') item.insertText = limitLines(item.insertText, s.maxLines);
                // Runs after the editor inserted the whole item (Tab); a server command, if
                // any, still runs after ours.
                item.command = { command: acceptedCommand, title: 'hearth: accepted', arguments: [uri, item.command] };
            }
            const shown = items.find((i) => typeof i.insertText === 'string' && i.insertText.length > 0);
            if (shown) {
                const lsp = toLspItem(shown, position, deps.toRange);
                // The part of insertText between the range start and the cursor is already typed.
                const typed = shown.range && shown.range.start.line === position.line
                    ? Math.max(0, position.character - shown.range.start.character) : 0;
                deps.feedback.shown(uri, lsp, typed);
            }
            return items;
        },
    };
}

// The item as the daemon sent it (its own command, not our wrapper, which holds it).
function toLspItem(item: vscode.InlineCompletionItem, position: vscode.Position,
                   toRange: (r: vscode.Range) => Range): InlineCompletionItem {
    const range = item.range ?? new vscode.Range(position, position);
    const lsp: InlineCompletionItem = { insertText: item.insertText as string, range: toRange(range) };
    const server = item.command?.arguments?.[1] as vscode.Command | undefined;
    if (server) lsp.command = { title: server.title, command: server.command, arguments: server.arguments };
    return lsp;
}

// Accept the next word or line of the suggestion with the editor's own command, and report
// how much text that inserted.
export async function acceptPartially(feedback: Feedback, editorCommand: string): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return;
    const doc = editor.document;
    let length = 0;
    const sub = vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document === doc) length += insertedLength(e.contentChanges);
    });
    try {
        await vscode.commands.executeCommand(editorCommand);
        // The document change event may trail the command's completion by one turn.
        await new Promise((r) => setTimeout(r, 0));
    } finally {
        sub.dispose();
    }
    feedback.partiallyAccepted(doc.uri.toString(), length);
}
