// Turns a hearth/status reply into the status bar's one line and the full report shown
// on click. Field names follow docs/protocol.md (lsp/types.h status_result); missing
// fields are skipped, so an older or newer daemon still gets a readable line. No vscode
// import.
import { StatusResult } from './protocol';

function num(v: unknown): number | undefined {
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function modelName(s: StatusResult): string {
    if (typeof s.model === 'string' && s.model) return s.model;
    if (typeof s.modelPath === 'string' && s.modelPath) return s.modelPath.split(/[\\/]/).pop() ?? s.modelPath;
    return 'no model';
}

// Working when the daemon has requests in flight or queued, or the editor is waiting.
export function isWorking(s: StatusResult | undefined, waiting: boolean): boolean {
    return waiting || (num(s?.requestsInFlight) ?? 0) > 0 || (num(s?.queueDepth) ?? 0) > 0;
}

// A daemon with engine = remote: who answered the last request ("remote", or "local
// fallback" while the remote is down, slow or refuses the key). Nothing for a local engine.
export function engineText(s: StatusResult): string | undefined {
    const e = s.engine as { kind?: unknown; serving?: unknown } | undefined;
    if (typeof e !== 'object' || e === null || e.kind !== 'remote') return undefined;
    return e.serving === 'local' ? 'local fallback' : 'remote';
}

export function statusBarText(s: StatusResult | undefined, waiting: boolean): string {
    const working = isWorking(s, waiting);
    const icon = working ? '$(sync~spin)' : '$(flame)';
    if (!s) return `${icon} hearth`;
    const parts = [`${icon} ${modelName(s)}`];
    const where = engineText(s);
    if (where) parts.push(where);
    parts.push(working ? 'working' : 'idle');
    const ms = num(s.lastCompletionMs);
    if (ms !== undefined && ms > 0) parts.push(`${Math.round(ms)} ms`);
    const tps = num(s.decodeTokensPerSecond);
    if (tps !== undefined && tps > 0) parts.push(`${tps.toFixed(1)} tok/s`);
    return parts.join(' · ');
}

function bytes(n: number): string {
    const units = ['B', 'KiB', 'MiB', 'GiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

// A readable multi-line report: byte counts (keys ending in "Bytes") get units, nested
// objects are indented.
export function statusReport(s: StatusResult): string {
    const lines: string[] = [];
    const walk = (v: unknown, key: string, indent: string): void => {
        if (typeof v === 'object' && v !== null) {
            lines.push(`${indent}${key}:`);
            for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, Array.isArray(v) ? `[${k}]` : k, indent + '  ');
            return;
        }
        const n = num(v);
        const shown = n !== undefined && /bytes$/i.test(key) ? `${bytes(n)} (${n})` : String(v);
        lines.push(`${indent}${key}: ${shown}`);
    };
    for (const [k, v] of Object.entries(s)) walk(v, k, '');
    return lines.join('\n');
}
