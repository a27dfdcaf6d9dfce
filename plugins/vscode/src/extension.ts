// Entry point of the VS Code extension: starts `hearth lsp` (which connects to the
// daemon or starts it) through vscode-languageclient, and registers inline completion,
// the selection commands, the status bar and the partial-accept keys, tells the daemon
// where the cursor comes to rest (hearth/cursorRest), and shows next-edit suggestions
// (hearth/nextEdit, next_edit.ts). It never loads a model itself.
import { execFile } from 'child_process';
import * as vscode from 'vscode';
import { CloseAction, ErrorAction, ErrorHandler, LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { AnswerView, answerScheme } from './chat_view';
import { acceptPartially, acceptedCommand, inlineCompletionMiddleware } from './completion';
import { CursorRest } from './cursor_rest';
import { Settings, helpFlags, initializationOptions, lspArgs, readSettings, resolveDaemon } from './config';
import { Feedback } from './feedback';
import { NextEditController, nextEditDismissCommand, nextEditTabCommand } from './next_edit';
import { method } from './protocol';
import { ServerProcess, startFailureMessage } from './server_process';
import { StatusBar, showStatusCommand } from './status_bar';

let client: LanguageClient | undefined;
let feedback: Feedback | undefined;

// The documents the client syncs to the daemon (its document selector).
const syncedSchemes = ['file', 'untitled'];

function settings(): Settings {
    const c = vscode.workspace.getConfiguration('hearth');
    return readSettings((key) => c.get(key));
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const output = vscode.window.createOutputChannel('hearth', { log: true });
    const status = new StatusBar(() => client);
    const shown = new Feedback({ notify: (m, p) => void client?.sendNotification(m, p) });
    feedback = shown;
    const answers = new AnswerView(() => client, (d) => status.busy(d));
    const rest = new CursorRest({
        settings,
        synced: (d) => syncedSchemes.includes(d.uri.scheme),
        send: (d, p) => {
            if (!client?.isRunning()) return false;
            client.sendNotification(method.cursorRest, client.code2ProtocolConverter.asTextDocumentPositionParams(d, p))
                .catch(() => undefined);
            return true;
        },
    });
    const nextEdit = new NextEditController({
        settings,
        client: () => client,
        synced: (d) => syncedSchemes.includes(d.uri.scheme),
    });
    context.subscriptions.push(output, status, rest, nextEdit,
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
            shown.accepted(uri, next !== undefined);
            if (next) await vscode.commands.executeCommand(next.command, ...(next.arguments ?? []));
        }),
        vscode.commands.registerCommand('hearth.acceptNextWord',
            () => acceptPartially(shown, 'editor.action.inlineSuggest.acceptNextWord')),
        vscode.commands.registerCommand('hearth.acceptNextLine',
            () => acceptPartially(shown, 'editor.action.inlineSuggest.acceptNextLine')),
        // Escape (package.json binds it while a suggestion shows): the rejection is reported
        // now, not when the user next switches editors.
        vscode.commands.registerCommand('hearth.dismissSuggestion', async () => {
            shown.dismissed();
            await vscode.commands.executeCommand('editor.action.inlineSuggest.hide');
        }),
        // Tab and Escape while a next edit shows (package.json binds them on its context key).
        vscode.commands.registerCommand(nextEditTabCommand, () => nextEdit.tab()),
        vscode.commands.registerCommand(nextEditDismissCommand, () => nextEdit.dismiss()),
        vscode.workspace.onDidChangeTextDocument((e) => nextEdit.changed(e)),
        vscode.window.onDidChangeActiveTextEditor(() => shown.dismissed()),
        vscode.window.onDidChangeActiveTextEditor(() => nextEdit.activeEditorChanged()),
        vscode.window.onDidChangeActiveTextEditor((e) => rest.activated(e)),
        // The user's cursor only: not a selection moved in an editor that has no focus.
        vscode.window.onDidChangeTextEditorSelection((e) => {
            if (e.textEditor !== vscode.window.activeTextEditor) return;
            rest.moved(e.textEditor);
            nextEdit.moved(e.textEditor);
        }),
        vscode.workspace.onDidCloseTextDocument((d) => { rest.closed(d); nextEdit.closed(d); }),
        vscode.workspace.onDidChangeConfiguration((e) => {
            if (e.affectsConfiguration('hearth')) nextEdit.settingsChanged();
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
        const commandLine = `${found.path} ${args.join(' ')}`;
        output.appendLine(`starting: ${commandLine}`);
        // Spawned here, not by the client: the client would append --stdio (TransportKind.stdio),
        // and a failed start is explained from this process's stderr.
        let launched: ServerProcess | undefined;
        const server: ServerOptions = async () => {
            launched = new ServerProcess(found.path!, args);
            return launched.process;
        };
        // A start that fails is not retried (hearth lsp says why and exits; a retry would
        // fail alike) and is reported once, below. Once running, the client's own handler
        // restarts a server that goes away.
        let running = false;
        let afterStart: ErrorHandler | undefined;
        const errorHandler: ErrorHandler = {
            error: (e, m, count) => running ? afterStart!.error(e, m, count) : { action: ErrorAction.Continue, handled: true },
            closed: () => running ? afterStart!.closed() : { action: CloseAction.DoNotRestart, handled: true },
        };
        const options: LanguageClientOptions = {
            documentSelector: syncedSchemes.map((scheme) => ({ scheme })),
            initializationOptions: initializationOptions(s),
            outputChannel: output,
            errorHandler,
            initializationFailedHandler: () => false,
            middleware: inlineCompletionMiddleware({
                settings,
                feedback: shown,
                toRange: (r) => client!.code2ProtocolConverter.asRange(r),
                busy: (d) => status.busy(d),
            }),
        };
        client = new LanguageClient('hearth', 'hearth', server, options);
        afterStart = client.createDefaultErrorHandler();
        try {
            await client.start();
            running = true;
            void status.refresh();
            // The file open when the server came up counts as just opened.
            rest.reset();
            rest.activated(vscode.window.activeTextEditor);
        } catch (e) {
            const why = e instanceof Error ? e.message : String(e);
            // hearth lsp writes its reason, then exits: wait (briefly) for all of its stderr.
            const code = launched ? await Promise.race([launched.closed, delay(3000)]) : undefined;
            const msg = startFailureMessage(commandLine, launched?.stderr ?? '', code ?? undefined,
                                            launched?.spawnError || why);
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

function delay(ms: number): Promise<undefined> {
    return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
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
    feedback?.dismissed();   // a suggestion on screen when the window closes ends rejected
    feedback = undefined;
    if (client) await client.stop();
    client = undefined;
}
