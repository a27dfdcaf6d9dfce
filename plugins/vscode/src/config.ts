// Settings of the extension and how they reach the daemon: as arguments of `hearth lsp`
// (which forwards them to the daemon it starts) and as LSP initializationOptions.
// Pure functions over a plain settings object; no vscode import (unit-tested in Node).
import * as fs from 'fs';
import * as path from 'path';

// The daemon's --cache-type: one type for K and V, or a K/V pair.
export const cacheTypes = ['f16', 'q8_0', 'q4_0', 'f16/q8_0', 'f16/q4_0'] as const;
export type CacheType = typeof cacheTypes[number];
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'off';

export interface Settings {
    // languageId -> enabled; "*" is the default for languages not listed.
    enable: Record<string, boolean>;
    debounceMs: number;
    cursorRestMs: number;  // 0: no hearth/cursorRest
    maxLines: number;
    daemonPath: string;
    modelPath: string;
    cacheType: CacheType;
    kvBudgetMiB: number;   // 0: the daemon's default
    logLevel: LogLevel;
    logFile: string;       // "": the daemon's default
    extraArgs: string[];
    nextEditEnabled: boolean;   // hearth.nextEdit.enabled: ask hearth/nextEdit after edits
}

export const defaults: Settings = {
    enable: { '*': true, plaintext: false, markdown: false, scminput: false },
    debounceMs: 75,
    cursorRestMs: 250,
    maxLines: 8,
    daemonPath: 'hearth',
    modelPath: '',
    cacheType: 'f16',   // the daemon's own default (left at it, nothing is passed)
    kvBudgetMiB: 0,
    logLevel: 'info',
    logFile: '',
    extraArgs: [],
    nextEditEnabled: true,
};

// `get` reads one setting by name (vscode's WorkspaceConfiguration.get has this shape);
// wrong types fall back to the default so a typo in settings.json cannot break startup.
export function readSettings(get: (key: string) => unknown): Settings {
    const pick = <K extends keyof Settings>(key: K, ok: (v: unknown) => boolean): Settings[K] => {
        const v = get(key);
        return (ok(v) ? v : defaults[key]) as Settings[K];
    };
    const isNum = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
    const isStr = (v: unknown) => typeof v === 'string';
    const enable = get('enable');
    return {
        enable: typeof enable === 'object' && enable !== null && !Array.isArray(enable)
            ? { ...defaults.enable, ...(enable as Record<string, boolean>) } : { ...defaults.enable },
        debounceMs: pick('debounceMs', isNum),
        cursorRestMs: pick('cursorRestMs', isNum),
        maxLines: pick('maxLines', (v) => isNum(v) && (v as number) >= 1),
        daemonPath: pick('daemonPath', (v) => isStr(v) && (v as string).length > 0),
        modelPath: pick('modelPath', isStr),
        cacheType: pick('cacheType', (v) => (cacheTypes as readonly unknown[]).includes(v)),
        kvBudgetMiB: pick('kvBudgetMiB', isNum),
        logLevel: pick('logLevel', (v) => ['trace', 'debug', 'info', 'warn', 'error', 'off'].includes(v as string)),
        logFile: pick('logFile', isStr),
        extraArgs: pick('extraArgs', (v) => Array.isArray(v) && v.every(isStr)),
        nextEditEnabled: typeof get('nextEdit.enabled') === 'boolean' ? get('nextEdit.enabled') as boolean : defaults.nextEditEnabled,
    };
}

export function isLanguageEnabled(s: Settings, languageId: string): boolean {
    if (Object.prototype.hasOwnProperty.call(s.enable, languageId)) return !!s.enable[languageId];
    return s.enable['*'] !== false;
}

// The options `hearth lsp --help` lists: the extension passes only flags the installed
// hearth knows (an unknown flag would make `hearth lsp` exit at once).
export function helpFlags(helpText: string): Set<string> {
    const flags = new Set<string>();
    for (const m of helpText.matchAll(/(?:^|[\s,])(--[a-z][a-z0-9-]*)/g)) flags.add(m[1]);
    return flags;
}

export interface LspArgs { args: string[]; dropped: string[]; }

// Arguments of `hearth lsp` (they reach a daemon that it starts). Only options the user
// set are passed, so the daemon's config file (~/.config/hearth/config.toml) still applies
// to the rest. With `known` (from helpFlags), flags it lacks are dropped and named.
export function lspArgs(s: Settings, known?: Set<string>): LspArgs {
    const wanted: Array<[string, string, string]> = [];   // flag, value, setting
    if (s.modelPath) wanted.push(['--model', s.modelPath, 'hearth.modelPath']);
    if (s.cacheType !== defaults.cacheType) wanted.push(['--cache-type', s.cacheType, 'hearth.cacheType']);
    if (s.kvBudgetMiB > 0) wanted.push(['--kv-budget', `${Math.floor(s.kvBudgetMiB)}MiB`, 'hearth.kvBudgetMiB']);
    if (s.logLevel !== defaults.logLevel) wanted.push(['--log-level', s.logLevel, 'hearth.logLevel']);
    if (s.logFile) wanted.push(['--log-file', s.logFile, 'hearth.logFile']);
    const args = ['lsp'];
    const dropped: string[] = [];
    for (const [flag, value, setting] of wanted) {
        if (known && !known.has(flag)) dropped.push(`${setting} (this hearth's \`lsp\` has no ${flag})`);
        else args.push(flag, value);
    }
    return { args: args.concat(s.extraArgs), dropped };
}

export function initializationOptions(s: Settings): Record<string, unknown> {
    const o: Record<string, unknown> = { maxLines: s.maxLines, cacheType: s.cacheType, logLevel: s.logLevel };
    if (s.modelPath) o.model = s.modelPath;
    if (s.kvBudgetMiB > 0) o.kvBudgetMiB = s.kvBudgetMiB;
    return o;
}

// Finds the daemon: a path with a slash is taken as is; a bare name is looked up on PATH.
// Returns the absolute path, or an error message saying where it looked.
export function resolveDaemon(daemonPath: string, envPath: string | undefined,
                              isExecutable: (p: string) => boolean = executable): { path?: string; error?: string } {
    if (daemonPath.includes('/') || daemonPath.includes(path.sep)) {
        return isExecutable(daemonPath) ? { path: daemonPath }
            : { error: `hearth: the daemon "${daemonPath}" (setting hearth.daemonPath) does not exist or is not executable.` };
    }
    const dirs = (envPath ?? '').split(path.delimiter).filter((d) => d.length > 0);
    for (const d of dirs) {
        const candidate = path.join(d, daemonPath);
        if (isExecutable(candidate)) return { path: candidate };
    }
    return {
        error: `hearth: "${daemonPath}" was not found on PATH (${dirs.length} folders searched). ` +
            'Install hearth or set hearth.daemonPath to the full path of the hearth binary.',
    };
}

function executable(p: string): boolean {
    try {
        fs.accessSync(p, fs.constants.X_OK);
        return fs.statSync(p).isFile();
    } catch {
        return false;
    }
}
