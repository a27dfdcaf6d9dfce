// The status bar item: model, idle/working, last completion latency and tokens/s from
// hearth/status. Refreshed after completions settle and every 15 s while the client runs;
// a click shows the whole status.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { StatusResult, method } from './protocol';
import { statusBarText, statusReport } from './status_format';

export const showStatusCommand = 'hearth.showStatus';

export class StatusBar implements vscode.Disposable {
    private readonly item_ = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
    private last_: StatusResult | undefined;
    private busy_ = 0;
    private refreshTimer_: NodeJS.Timeout | undefined;
    private readonly interval_: NodeJS.Timeout;

    constructor(private readonly client_: () => LanguageClient | undefined) {
        this.item_.command = showStatusCommand;
        this.item_.text = statusBarText(undefined, false);
        this.item_.tooltip = 'hearth: starting';
        this.item_.show();
        this.interval_ = setInterval(() => void this.refresh(), 15000);
    }

    busy(delta: 1 | -1): void {
        this.busy_ = Math.max(0, this.busy_ + delta);
        this.render_();
        if (this.busy_ === 0) this.refreshSoon();
    }

    error(message: string): void {
        this.item_.text = '$(error) hearth';
        this.item_.tooltip = message;
    }

    refreshSoon(): void {
        if (this.refreshTimer_) clearTimeout(this.refreshTimer_);
        this.refreshTimer_ = setTimeout(() => void this.refresh(), 300);
    }

    async refresh(): Promise<StatusResult | undefined> {
        const client = this.client_();
        if (!client || !client.isRunning()) return undefined;
        try {
            this.last_ = await client.sendRequest<StatusResult>(method.status, {});
            this.render_();
        } catch (e) {
            this.item_.tooltip = `hearth/status failed: ${e instanceof Error ? e.message : String(e)}`;
        }
        return this.last_;
    }

    async show(): Promise<void> {
        const s = await this.refresh();
        if (!s) {
            void vscode.window.showWarningMessage('hearth: the daemon is not running (see the "hearth" output).');
            return;
        }
        void vscode.window.showInformationMessage(`hearth: ${statusBarText(s, false).replace(/^\$\([^)]*\) /, '')}`,
                                                  { modal: true, detail: statusReport(s) });
    }

    private render_(): void {
        this.item_.text = statusBarText(this.last_, this.busy_ > 0);
        this.item_.tooltip = this.last_ ? `${statusReport(this.last_)}\n\nClick for the full status.` : 'hearth';
    }

    dispose(): void {
        clearInterval(this.interval_);
        if (this.refreshTimer_) clearTimeout(this.refreshTimer_);
        this.item_.dispose();
    }
}
