import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { defaults, helpFlags, initializationOptions, isLanguageEnabled, lspArgs, readSettings, resolveDaemon } from '../src/config';

const from = (o: Record<string, unknown>) => readSettings((k) => o[k]);

test('missing settings take the defaults', () => {
    assert.deepEqual(from({}), defaults);
    assert.deepEqual(lspArgs(from({})), { args: ['lsp'], dropped: [] });
});

test("the settings' declared defaults are the ones the extension uses, and the cache type is the daemon's own", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8'));
    const declared = pkg.contributes.configuration.properties;
    for (const key of ['debounceMs', 'cursorRestMs', 'maxLines', 'daemonPath', 'modelPath', 'cacheType', 'kvBudgetMiB', 'logLevel', 'logFile'] as const)
        assert.deepEqual(declared[`hearth.${key}`].default, defaults[key], `hearth.${key}`);
    // Left at its default, no --cache-type is passed: the daemon then runs its own default, f16.
    assert.equal(defaults.cacheType, 'f16');
    for (const t of declared['hearth.cacheType'].enum) assert.equal(from({ cacheType: t }).cacheType, t, `${t} is read back`);
    assert.ok(declared['hearth.cacheType'].enum.includes('f16/q8_0'), 'a K/V pair is offered');
});

test('wrongly typed settings fall back to the defaults, one by one', () => {
    const s = from({ debounceMs: 'fast', cursorRestMs: -1, maxLines: 0, cacheType: 'q5_k', logLevel: 'loud', daemonPath: '', extraArgs: [1], kvBudgetMiB: -3 });
    assert.deepEqual(s, defaults);
    assert.equal(from({ debounceMs: 20 }).debounceMs, 20);
});

test('per-language enable: listed languages, then "*"', () => {
    const s = from({ enable: { python: false, markdown: true } });
    assert.equal(isLanguageEnabled(s, 'python'), false);
    assert.equal(isLanguageEnabled(s, 'markdown'), true);
    assert.equal(isLanguageEnabled(s, 'plaintext'), false); // default list still applies
    assert.equal(isLanguageEnabled(s, 'cpp'), true);
    assert.equal(isLanguageEnabled(from({ enable: { '*': false, rust: true } }), 'cpp'), false);
    assert.equal(isLanguageEnabled(from({ enable: { '*': false, rust: true } }), 'rust'), true);
});

test('settings reach hearth lsp as arguments and initializationOptions', () => {
    const s = from({ modelPath: '/m/x.gguf', cacheType: 'q4_0', kvBudgetMiB: 512.7, logLevel: 'debug', logFile: '/tmp/h.log', extraArgs: ['--threads', '2'] });
    assert.deepEqual(lspArgs(s).args, ['lsp', '--model', '/m/x.gguf', '--cache-type', 'q4_0', '--kv-budget', '512MiB',
        '--log-level', 'debug', '--log-file', '/tmp/h.log', '--threads', '2']);
    assert.deepEqual(initializationOptions(s), { maxLines: 8, cacheType: 'q4_0', logLevel: 'debug', model: '/m/x.gguf', kvBudgetMiB: 512.7 });
});

test('flags the installed hearth lsp lacks are dropped and named', () => {
    const help = `Language server on stdio for editors
Usage: hearth lsp [OPTIONS]

Options:
  -h,--help                   Print this help message and exit
  --model TEXT                GGUF model for a daemon this command starts
  --log-file TEXT             Log file of a daemon this command starts
  --log-level TEXT            Log level
  --start-timeout-ms INT:INT in [100 - 600000]
  --no-start                  Only connect`;
    const known = helpFlags(help);
    assert.ok(known.has('--model') && known.has('--no-start') && known.has('--start-timeout-ms') && known.has('--help'));
    assert.ok(!known.has('--cache-type'));
    const s = from({ modelPath: '/m.gguf', cacheType: 'q8_0', kvBudgetMiB: 64 });
    const r = lspArgs(s, known);
    assert.deepEqual(r.args, ['lsp', '--model', '/m.gguf']);
    assert.equal(r.dropped.length, 2);
    assert.match(r.dropped[0], /hearth\.cacheType .*no --cache-type/);
    assert.match(r.dropped[1], /hearth\.kvBudgetMiB .*no --kv-budget/);
});

test('the daemon is found on PATH, in order, and only if executable', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-path-'));
    const a = path.join(dir, 'a'), b = path.join(dir, 'b');
    fs.mkdirSync(a); fs.mkdirSync(b);
    fs.writeFileSync(path.join(a, 'hearth'), 'not executable', { mode: 0o644 });
    fs.writeFileSync(path.join(b, 'hearth'), '#!/bin/sh\n', { mode: 0o755 });
    assert.deepEqual(resolveDaemon('hearth', `${a}:${b}`), { path: path.join(b, 'hearth') });
    const missing = resolveDaemon('hearth', a);
    assert.equal(missing.path, undefined);
    assert.match(missing.error!, /not found on PATH \(1 folders searched\).*hearth\.daemonPath/);
    assert.deepEqual(resolveDaemon(path.join(b, 'hearth'), ''), { path: path.join(b, 'hearth') });
    assert.match(resolveDaemon(path.join(a, 'hearth'), '').error!, /does not exist or is not executable/);
    assert.match(resolveDaemon('hearth', undefined).error!, /0 folders/);
    fs.rmSync(dir, { recursive: true });
});
