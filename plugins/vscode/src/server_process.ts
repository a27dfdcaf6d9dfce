// The `hearth lsp` process behind the language client. The extension spawns it itself
// (vscode-languageclient's own launch would append --stdio for a stdio transport) and keeps
// the end of its stderr: when a start fails, `hearth lsp` has said why there, and that,
// not the client's "connection got disposed", is what the user needs to read.
// No vscode import; unit-tested in Node.
import * as cp from 'child_process';

const k_kept_bytes = 16 * 1024;

export class ServerProcess {
    readonly process: cp.ChildProcess;
    // Resolves with the exit code (null: killed by a signal, or it never started) once
    // the process has ended and all of its stderr has been read.
    readonly closed: Promise<number | null>;
    private stderr_ = '';
    private spawnError_ = '';

    constructor(command: string, args: string[]) {
        this.process = cp.spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
        this.process.stderr!.setEncoding('utf8');
        this.process.stderr!.on('data', (chunk: string) => {
            this.stderr_ = (this.stderr_ + chunk).slice(-k_kept_bytes);
        });
        this.closed = new Promise((resolve) => {
            this.process.once('error', (e) => { this.spawnError_ = e.message; resolve(null); });
            this.process.once('close', (code) => resolve(code));
        });
    }

    get stderr(): string { return this.stderr_; }
    get spawnError(): string { return this.spawnError_; }
}

// hearth's log lines: "2026-12-01T10:00:00.000 error [1234] message" (logging.cpp).
const logLine = /^\d{4}-\d\d-\d\dT[\d:.]+ (\w+) \[\d+\] (.*)$/;

// The reason a start failed, from what `hearth lsp` wrote to stderr: its last error (or
// critical) log line, else its last non-empty line (a command-line error), else the exit.
export function failureCause(stderr: string, exitCode: number | null | undefined): string | undefined {
    const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
    for (let i = lines.length - 1; i >= 0; i--) {
        const m = logLine.exec(lines[i]);
        if (m && (m[1] === 'error' || m[1] === 'critical')) return m[2];
    }
    const plain = lines.filter((l) => !logLine.test(l) && !/^Run with --help/.test(l));
    if (plain.length > 0) return plain[plain.length - 1];
    if (typeof exitCode === 'number') return `it exited with code ${exitCode} and wrote nothing to stderr`;
    return undefined;
}

// The notification text for a failed start. `clientError`: what vscode-languageclient
// said, used only when hearth lsp gave no reason of its own.
export function startFailureMessage(commandLine: string, stderr: string, exitCode: number | null | undefined,
                                    clientError: string): string {
    const cause = failureCause(stderr, exitCode) ?? clientError;
    return `hearth: \`${commandLine}\` failed to start: ${cause.replace(/\.$/, '')}.`;
}
