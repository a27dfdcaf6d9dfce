// Entry point of the VS Code extension: starts `hearth lsp` (which connects to the
// daemon or starts it) through vscode-languageclient, and registers inline completion,
// the selection commands, the status bar and the partial-accept keys. It never loads a
// model itself.
import { execFile } from 'child_process';
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from 'vscode-languageclient/node';
import { AnswerView, answerScheme } from './chat_view';
import { acceptPartially, acceptedCommand, inlineCompletionMiddleware } from './completion';
import { Settings, helpFlags, initializationOptions, lspArgs, readSettings, resolveDaemon } from './config';
import { Feedback } from './feedback';
import { StatusBar, showStatusCommand } from './status_bar';

let client: LanguageClient | undefined;

function settings(): Settings {
    const c = vscode.workspace.getConfiguration('hearth');
    return readSettings((key) => c.get(key));
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const output = vscode.window.createOutputChannel('hearth', { log: true });
    const status = new StatusBar(() => client);
    const feedback = new Feedback({ notify: (m, p) => void client?.sendNotification(m, p) });
    const answers = new AnswerView(() => client);
    context.subscriptions.push(output, status,
        vscode.workspace.registerTextDocumentContentProvider(answerScheme, answers),
        // Not hearth.explain & co.: the language client registers the daemon's commands
        // under those ids.
        vscode.commands.registerCommand('hearth.explainSelection', () => answers.run('explain')),
        vscode.commands.registerCommand('hearth.fixSelection', () => answers.run('fix')),
        vscode.commands.registerCommand('hearth.askSelection', () => answers.run('ask')),
        vscode.commands.registerCommand('hearth.stopAnswer', () => answers.stopAll()),
        vscode.commands.registerCommand(showStatusCommand, () => status.show()),
        vscode.commands.registerCommand('hearth.restart', () => restart()),
        vscode.commands.registerCommand(acceptedCommand, async (uri: string, next?: vscode.Command) => {
            feedback.accepted(uri, next !== undefined);
            if (next) await vscode.commands.executeCommand(next.command, ...(next.arguments ?? []));
        }),
        vscode.commands.registerCommand('hearth.acceptNextWord',
            () => acceptPartially(feedback, 'editor.action.inlineSuggest.acceptNextWord')),
        vscode.commands.registerCommand('hearth.acceptNextLine',
            () => acceptPartially(feedback, 'editor.action.inlineSuggest.acceptNextLine')),
        vscode.window.onDidChangeActiveTextEditor(() => feedback.dismissed()),
        vscode.workspace.onDidChangeConfiguration((e) => {
            if (e.affectsConfiguration('hearth.daemonPath') || e.affectsConfiguration('hearth.modelPath') ||
                e.affectsConfiguration('hearth.cacheType') || e.affectsConfiguration('hearth.kvBudgetMiB') ||
                e.affectsConfiguration('hearth.logLevel') || e.affectsConfiguration('hearth.logFile') ||
                e.affectsConfiguration('hearth.extraArgs')) {
                void restart();
            }
        }),
        { dispose: () => void client?.stop() });

    async function start(): Promise<void> {
        const s = settings();
        const found = resolveDaemon(s.daemonPath, process.env.PATH);
        if (!found.path) {
            status.error(found.error!);
            output.appendLine(found.error!);
            void vscode.window.showErrorMessage(found.error!, 'Open Settings').then((pick) => {
                if (pick) void vscode.commands.executeCommand('workbench.action.openSettings', 'hearth.daemonPath');
            });
            return;
        }
        const { args, dropped } = lspArgs(s, await knownFlags(found.path));
        for (const d of dropped) output.appendLine(`setting not passed on: ${d}`);
        output.appendLine(`starting: ${found.path} ${args.join(' ')}`);
        const server: ServerOptions = { command: found.path, args, transport: TransportKind.stdio };
        const options: LanguageClientOptions = {
            documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
            initializationOptions: initializationOptions(s),
            outputChannel: output,
            middleware: inlineCompletionMiddleware({
                settings,
                feedback,
                toRange: (r) => client!.code2ProtocolConverter.asRange(r),
                busy: (d) => status.busy(d),
            }),
        };
        client = new LanguageClient('hearth', 'hearth', server, options);
        try {
            await client.start();
            void status.refresh();
        } catch (e) {
            const why = e instanceof Error ? e.message : String(e);
            const log = s.logFile ? ` The daemon's log: ${s.logFile}.` : ' Its messages are in the "hearth" output.';
            const msg = `hearth: the daemon (${found.path} ${args.join(' ')}) failed to start: ${why}.${log}`;
            status.error(msg);
            output.appendLine(msg);
            void vscode.window.showErrorMessage(msg, 'Show Output').then((pick) => { if (pick) output.show(); });
        }
    }

    async function restart(): Promise<void> {
        const old = client;
        client = undefined;
        if (old) await old.stop().catch(() => undefined);
        await start();
    }

    await start();
}

// The flags of `hearth lsp` in this installation, from its --help (undefined if that
// fails: then every flag is passed and a wrong one shows up as a start failure).
function knownFlags(daemon: string): Promise<Set<string> | undefined> {
    return new Promise((resolve) => {
        execFile(daemon, ['lsp', '--help'], { timeout: 5000 }, (err, stdout) => {
            resolve(err ? undefined : helpFlags(stdout));
        });
    });
}

export async function deactivate(): Promise<void> {
    if (client) await client.stop();
}
