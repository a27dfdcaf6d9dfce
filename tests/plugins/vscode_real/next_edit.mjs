// Next-edit suggestions in a real VS Code (code-server, started by run_vscode_real.sh) in
// headless Chromium. Keys only, as a user would.
// With --fake, against the scripted server: it answers hearth/nextEdit with the next use of
// an identifier renamed in the document, so what the editor shows and does is checked
// exactly: rename in one place, the next use is marked with its new text and a Tab hint;
// Tab jumps there, Tab applies it (the saved file has the use renamed, the server got
// hearth/didAccept with the edit's id); the next use after that is shown in turn and Escape
// dismisses it (hearth/didReject).
// With --next-edit, against the real daemon and the default model: a rename, the edit the
// model proposes is drawn, Tab jumps, Tab applies it and the next use is renamed. No edit
// drawn within 90 s ends the run with 77 (skipped) and the reason.
import fs from 'node:fs';
import path from 'node:path';
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const url = process.env.HEARTH_VSCODE_URL;
const tree = process.env.HEARTH_VSCODE_TREE;
const outDir = process.env.HEARTH_VSCODE_OUT;
const serverLog = process.env.FAKE_LOG_FILE;
const fake = process.env.HEARTH_VSCODE_FAKE === '1';
const work = path.join(tree, 'work');
const file = path.join(work, fake ? 'rename.py' : 'tally.py');
const settingsFile = path.join(tree, 'user', 'User', 'settings.json');
const initial = fake ? 'count = 0\nprint(count)\nx = count + 1\n'
    : 'def tally(items):\n    count = 0\n    for item in items:\n        count += 1\n    return count\n';
const mod = process.platform === 'darwin' ? 'Meta' : 'Control';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let browser, page;

async function waitFor(what, fn, timeoutMs, everyMs = 50) {
    const end = Date.now() + timeoutMs;
    for (;;) {
        const v = await fn();
        if (v) return v;
        if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await sleep(everyMs);
    }
}

// What the scripted server received, in order.
function received() {
    if (!fs.existsSync(serverLog)) return [];
    return fs.readFileSync(serverLog, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
}
const lastOf = (m) => received().filter((e) => e.method === m).pop();

// The text that decorations add to the editor (CSS ::after content, as VS Code draws
// contentText), joined with '|'.
async function decorations() {
    return page.evaluate(() => {
        const out = [];
        const editor = document.querySelector('.editor-group-container.active .monaco-editor') ?? document.querySelector('.monaco-editor');
        for (const el of editor?.querySelectorAll('.view-lines span') ?? []) {
            const c = getComputedStyle(el, '::after').content;
            if (c && c !== 'none' && c !== 'normal') out.push(JSON.parse(c));
        }
        return out.join('|').replace(/\u00a0/g, ' ');
    });
}

async function cursorAt() {
    return (await page.locator('.statusbar-item[id="status.editor.selection"]').innerText()).trim();
}

async function save() {
    await page.keyboard.press(`${mod}+S`);
    await sleep(300);
    return fs.readFileSync(file, 'utf8');
}

before(async () => {
    fs.writeFileSync(file, initial);
    // The scripted server completes every word: with completions off no ghost text holds Tab.
    const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
    settings['editor.inlineSuggest.enabled'] = false;
    fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
    browser = await chromium.launch({
        executablePath: process.env.HEARTH_VSCODE_CHROMIUM, headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await waitFor('code-server to answer', async () => {
        try { await page.goto(`${url}?folder=${encodeURIComponent(work)}`, { timeout: 10000 }); return true; } catch { return false; }
    }, 120000, 500);
    await page.locator('.monaco-workbench').waitFor({ timeout: 120000 });
});

afterEach(async (t) => {
    if (page && outDir) await page.screenshot({ path: path.join(outDir, `next-edit-${t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}.png`) }).catch(() => undefined);
});

after(async () => {
    if (browser) await browser.close();
});

async function openFile() {
    const name = path.basename(file);
    await page.keyboard.press(`${mod}+P`);
    await page.locator('.quick-input-widget input').fill(name);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 10000 });
    await page.keyboard.press('Enter');
    await page.locator('.monaco-editor .view-lines').first().waitFor({ timeout: 30000 });
}

test('a rename shows the next use as a next edit; Tab jumps to it, Tab applies it', { skip: !fake }, async () => {
    await openFile();
    await waitFor('the scripted server to have the document open', () => received().some((e) => e.method === 'textDocument/didOpen'), 60000, 200);
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press(`${mod}+Home`);
    await page.keyboard.press(`${mod}+Shift+ArrowRight`);   // selects "count"
    await page.keyboard.type('total', { delay: 30 });
    const shown = await waitFor('the next edit drawn', async () => { const d = await decorations(); return /Tab to jump/.test(d) && d; }, 15000);
    console.log(`drawn: ${JSON.stringify(shown)}`);
    assert.match(shown, /total/, 'the new text is drawn');
    const asked = lastOf('hearth/nextEdit');
    assert.deepEqual(asked.params.position, { line: 0, character: 5 }, 'asked at the cursor');
    assert.equal(await cursorAt(), 'Ln 1, Col 6');
    await page.keyboard.press('Tab');
    await waitFor('the cursor on the edit', async () => (await cursorAt()) === 'Ln 2, Col 1', 5000);
    assert.equal(await save(), 'total = 0\nprint(count)\nx = count + 1\n', 'the jump changes nothing');
    await waitFor('the hint to say apply', async () => /Tab to apply/.test(await decorations()), 5000);
    await page.keyboard.press('Tab');
    const text = await waitFor('the edit applied', async () => { const t = await save(); return t.includes('print(total)') && t; }, 5000, 200);
    assert.equal(text, 'total = 0\nprint(total)\nx = count + 1\n', 'the use renamed, nothing else changed');
    const accepted = await waitFor('hearth/didAccept', () => lastOf('hearth/didAccept'), 5000);
    assert.match(accepted.params.id, /^ne-\d+$/, 'didAccept names the edit');
    assert.equal(accepted.params.insertText, 'total');
    assert.deepEqual(accepted.params.range, { start: { line: 1, character: 6 }, end: { line: 1, character: 11 } });
});

test('the next use after it is shown in turn; Escape dismisses it with hearth/didReject', { skip: !fake }, async () => {
    await waitFor('the following edit drawn', async () => /Tab to jump/.test(await decorations()), 15000);
    const before = received().filter((e) => e.method === 'hearth/didReject').length;
    await page.keyboard.press('Escape');
    await waitFor('the edit to go', async () => !/Tab to/.test(await decorations()), 5000);
    const rejected = await waitFor('hearth/didReject', () => received().filter((e) => e.method === 'hearth/didReject')[before], 5000);
    assert.deepEqual(rejected.params.range, { start: { line: 2, character: 4 }, end: { line: 2, character: 9 } });
    // The key's own job again: whitespace typed at the cursor (after the applied "total").
    await page.keyboard.press('Tab');
    const text = await waitFor('the tab typed', async () => { const t = await save(); return t !== 'total = 0\nprint(total)\nx = count + 1\n' && t; }, 5000, 200);
    assert.match(text, /^total = 0\nprint\(total[ \t]+\)\nx = count \+ 1\n$/, `Tab types whitespace again: ${JSON.stringify(text)}`);
});

test('the real daemon: a rename, the proposed edit drawn, Tab jumps, Tab applies it', { skip: fake }, async () => {
    await openFile();
    // The extension is up once the status item shows the model.
    await page.locator('.statusbar-item[id^="hearth."]').first().waitFor({ timeout: 120000 });
    await waitFor('the model in the status bar', async () =>
        /idle|working/.test(await page.locator('.statusbar-item[id^="hearth."]').first().innerText().catch(() => '')), 120000, 200);
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press(`${mod}+Home`);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    await page.keyboard.press(`${mod}+ArrowLeft`);   // before "0"
    await page.keyboard.press(`${mod}+ArrowLeft`);   // before "="
    await page.keyboard.press(`${mod}+ArrowLeft`);   // before "count"
    await page.keyboard.press(`${mod}+Shift+ArrowRight`);
    await page.keyboard.insertText('total');   // one change, as a paste makes it
    const t0 = Date.now();
    const shown = await waitFor('a next edit drawn', async () => { const d = await decorations(); return /Tab to (jump|apply)/.test(d) && d; }, 90000, 200)
        .catch(() => undefined);
    if (!shown) {
        console.log('SKIP: no next edit drawn within 90 s of the rename (a daemon without hearth/nextEdit, or the model proposed none)');
        process.exitCode = 77;
        return;
    }
    console.log(`next edit drawn ${Date.now() - t0} ms after the rename: ${JSON.stringify(shown)}`);
    const renamed = 'def tally(items):\n    total = 0\n    for item in items:\n        count += 1\n    return count\n';
    assert.equal(await save(), renamed);
    if (/Tab to jump/.test(shown)) {
        await page.keyboard.press('Tab');
        await waitFor('the hint to say apply', async () => /Tab to apply/.test(await decorations()), 5000);
        assert.equal(await save(), renamed, 'the jump changes nothing');
    }
    await page.keyboard.press('Tab');
    const text = await waitFor('the edit applied', async () => { const t = await save(); return t !== renamed && t; }, 5000, 200);
    console.log(`after Tab: ${JSON.stringify(text)}`);
    assert.equal(text, renamed.replace('count += 1', 'total += 1'), 'the next use renamed');
});
