// The pieces of inline completion that do not need the editor: debouncing automatic
// requests and trimming suggestions to the configured number of lines.
// No vscode import; unit-tested in Node.

export interface Cancellable {
    isCancellationRequested: boolean;
    onCancellationRequested(listener: () => void): { dispose(): void };
}

// Resolves true after `ms` unless `token` is cancelled first (then false, at once), so a
// burst of keystrokes costs the daemon one request: the editor cancels each older one.
export function debounce(ms: number, token: Cancellable): Promise<boolean> {
    if (token.isCancellationRequested) return Promise.resolve(false);
    if (ms <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
        const sub = token.onCancellationRequested(() => {
            clearTimeout(timer);
            sub.dispose();
            resolve(false);
        });
        const timer = setTimeout(() => {
            sub.dispose();
            resolve(!token.isCancellationRequested);
        }, ms);
    });
}

// At most `maxLines` lines; a cut suggestion keeps no trailing newline so that accepting
// it never leaves an empty line behind.
export function limitLines(text: string, maxLines: number): string {
    if (maxLines < 1) return text;
    const lines = text.split('\n');
    if (lines.length <= maxLines) return text;
    return lines.slice(0, maxLines).join('\n').replace(/\s+$/, '');
}

// The length of what an edit added, for reporting partial accepts: the text inserted
// minus the text it replaced.
export function insertedLength(changes: ReadonlyArray<{ text: string; rangeLength: number }>): number {
    let n = 0;
    for (const c of changes) n += c.text.length - c.rangeLength;
    return Math.max(0, n);
}
