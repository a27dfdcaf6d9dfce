// Turns a hearth/status reply into the status bar's one line and the full report shown
// on click. Field names follow docs/protocol.md; unknown or missing fields are skipped,
// so an older or newer daemon still gets a readable line. No vscode import.
import { StatusResult } from './protocol';

function num(v: unknown): number | undefined {
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function obj(v: unknown): Record<string, unknown> {
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

// The first field present of several spellings (camelCase from the protocol, snake_case
// with units from the daemon's own structs).
function first(o: Record<string, unknown>, ...keys: string[]): number | undefined {
    for (const k of keys) {
        const v = num(o[k]);
        if (v !== undefined) return v;
    }
    return undefined;
}

export function modelName(s: StatusResult): string {
    if (typeof s.model === 'string') return s.model;
    const m = obj(s.model);
    if (typeof m.name === 'string' && m.name) return m.name;
    if (typeof m.path === 'string' && m.path) return m.path.split(/[\\/]/).pop() ?? m.path;
    return 'no model';
}

export interface Timing { latencyMs?: number; tokensPerSecond?: number; }

export function lastTiming(s: StatusResult): Timing {
    const last = obj(s.lastCompletion ?? s.last_completion ?? s.lastTimings);
    const latencyMs = first(last, 'totalMs', 'latencyMs', 'total_ms', 't_total_ms')
        ?? ((): number | undefined => { const us = first(last, 't_total_us', 'totalUs'); return us === undefined ? undefined : us / 1000; })();
    const tokensPerSecond = first(last, 'tokensPerSecond', 'tokens_per_second', 'decodeTokensPerSecond')
        ?? num(s.tokensPerSecond) ?? num((s as Record<string, unknown>).tokens_per_second);
    return { latencyMs, tokensPerSecond };
}

export function statusBarText(s: StatusResult | undefined, working: boolean): string {
    const icon = working ? '$(sync~spin)' : '$(flame)';
    if (!s) return `${icon} hearth`;
    const parts = [`${icon} ${modelName(s)}`];
    const t = lastTiming(s);
    if (t.latencyMs !== undefined) parts.push(`${Math.round(t.latencyMs)} ms`);
    if (t.tokensPerSecond !== undefined) parts.push(`${t.tokensPerSecond.toFixed(1)} tok/s`);
    return parts.join(' · ');
}

function bytes(n: number): string {
    const units = ['B', 'KiB', 'MiB', 'GiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

// A readable multi-line report: byte counts (keys ending in "bytes"/"Bytes") get units,
// nested objects are indented.
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
