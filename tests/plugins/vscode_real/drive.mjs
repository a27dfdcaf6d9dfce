// Drives VS Code (code-server, started by run_vscode_real.sh) in Debian's headless Chromium
// with playwright-core, as a user would: keys and clicks only. The daemon's side of each
// step is read with `hearth status --json` (the daemon the extension's `hearth lsp` started).
// Cases: activation with hearth.daemonPath unset (status item shows the model), ghost text
// while typing and its latency, Tab inserts exactly the suggestion (saved file), accept next
// word counts a partial accept, Escape counts a rejection at once, Explain streams into the
// side document while the status bar says working and counts a chat, and two starts that
// cannot work (a wrong daemon path, a runtime dir of mode 755) whose notifications name
// the cause.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const url = process.env.HEARTH_VSCODE_URL;
const tree = process.env.HEARTH_VSCODE_TREE;
const modelPath = process.env.HEARTH_VSCODE_MODEL_PATH;
const bursts = Number(process.env.HEARTH_VSCODE_BURSTS ?? 3);
const outDir = process.env.HEARTH_VSCODE_OUT;   // screenshot and timings, when set
const work = path.join(tree, 'work');
const file = path.join(work, 'shapes.py');
const settingsFile = path.join(tree, 'user', 'User', 'settings.json');
// Ends inside a function body, on an indented empty line.
const initial = 'def area(w, h):\n    """The area of a w by h rectangle."""\n    return w * h\n\n\n' +
    'def perimeter(w, h):\n    """The perimeter of a w by h rectangle."""\n    ';
const mod = process.platform === 'darwin' ? 'Meta' : 'Control';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let browser, page;

function daemonStatus() {
    return JSON.parse(execFileSync('hearth', ['status', '--json'], { encoding: 'utf8', timeout: 10000, stdio: ['ignore', 'pipe', 'pipe'] }));
}

async function waitFor(what, fn, timeoutMs, everyMs = 50) {
    const end = Date.now() + timeoutMs;
    for (;;) {
        const v = await fn();
        if (v) return v;
        if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await sleep(everyMs);
    }
}

const statusItem = () => page.locator('.statusbar-item[id^="hearth."]').first();
const statusText = async () => (await statusItem().innerText().catch(() => '')).trim();
// The ghost text as the editor shows it: the inline part on the cursor's line, then the
// lines of the view zone below it. Non-breaking spaces are how the DOM renders spaces.
async function ghostText() {
    return page.evaluate(() => {
        const editor = document.querySelector('.editor-group-container.active .monaco-editor') ?? document.querySelector('.monaco-editor');
        if (!editor) return '';
        const inline = [...editor.querySelectorAll('.ghost-text-decoration')].map((e) => e.textContent).join('');
        const below = [...editor.querySelectorAll('.ghost-text .view-line')].map((e) => e.textContent);
        return [inline, ...below].join('\n').replace(/\u00a0/g, ' ');
    });
}
const ghostVisible = () => page.locator('.ghost-text-decoration, .ghost-text').first().isVisible().catch(() => false);

async function command(title) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill(`>${title}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 10000 });
    await page.keyboard.press('Enter');
}

async function save() {
    await page.keyboard.press(`${mod}+S`);
    await sleep(300);
    return fs.readFileSync(file, 'utf8');
}

// Types `keys` at the end of the file (the test's settings turn auto-indent off), then waits
// for ghost text. Returns the suggestion and the time from the last keystroke to the ghost
// text on screen, both taken in the page (keydown to the mutation that showed it).
async function burst(keys, more = 'urn ') {
    await page.keyboard.press(`${mod}+End`);
    await page.evaluate(() => {
        window.__hearth = { lastKey: 0, shown: 0 };
        if (window.__hearthWatching) return;
        window.__hearthWatching = true;
        document.addEventListener('keydown', () => { window.__hearth.lastKey = performance.now(); window.__hearth.shown = 0; }, { capture: true });
        new MutationObserver(() => {
            if (!window.__hearth.shown && document.querySelector('.ghost-text-decoration, .ghost-text')) window.__hearth.shown = performance.now();
        }).observe(document.body, { subtree: true, childList: true });
    });
    // The model may rightly suggest nothing at a point: then type on, a key at a time.
    let typed = keys;
    for (let i = 0; ; i++) {
        const before = daemonStatus();
        await page.keyboard.type(i === 0 ? keys : more[i - 1], { delay: 40 });
        if (i > 0) typed += more[i - 1];
        const shown = await waitFor(`ghost text or an answer after typing ${JSON.stringify(typed)}`, async () =>
            (await ghostVisible()) || daemonStatus().completionsServed > before.completionsServed, 120000, 100);
        if (shown === true && (await ghostVisible())) break;
        await sleep(500);
        if (await ghostVisible()) break;
        if (i >= more.length) throw new Error(`no suggestion after typing ${JSON.stringify(typed)}`);
    }
    const t = await page.evaluate(() => window.__hearth);
    const text = await ghostText();
    return { text, ms: t.shown - t.lastKey };
}

// Puts `text` at the end of the file in one edit (a paste), then waits until the daemon is
// idle and no suggestion shows, so that the keys typed next are what the next suggestion
// answers (a suggestion for the pasted text arriving mid-typing would be shown stale).
async function prepare(text) {
    const before = daemonStatus();
    await page.keyboard.press(`${mod}+End`);
    await page.keyboard.insertText(text);
    await counted('the completion for the pasted text', 'completionsServed', before, 120000);
    await sleep(300);
    if (await ghostVisible()) {
        await page.keyboard.press('Escape');
        await waitFor('the ghost text to go', async () => !(await ghostVisible()), 5000);
    }
}

function percentile(xs, p) {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

before(async () => {
    fs.writeFileSync(file, initial);
    browser = await chromium.launch({
        executablePath: process.env.HEARTH_VSCODE_CHROMIUM, headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    // code-server may still be starting: retry the page until it answers.
    await waitFor('code-server to answer', async () => {
        try { await page.goto(`${url}?folder=${encodeURIComponent(work)}`, { timeout: 10000 }); return true; } catch { return false; }
    }, 120000, 500);
    await page.locator('.monaco-workbench').waitFor({ timeout: 120000 });
});

// A failed test leaves a picture of the page in HEARTH_VSCODE_OUT.
afterEach(async (t) => {
    if (page && outDir) await page.screenshot({ path: path.join(outDir, `after-${t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}.png`) }).catch(() => undefined);
});

after(async () => {
    if (page && outDir) await page.screenshot({ path: path.join(outDir, 'vscode-last.png') }).catch(() => undefined);
    if (browser) await browser.close();
});

test('the extension activates with hearth.daemonPath unset and the status item shows the model', async () => {
    const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
    assert.equal(settings['hearth.daemonPath'], undefined);
    assert.equal(settings['hearth.modelPath'], undefined);
    await statusItem().waitFor({ timeout: 120000 });
    const s = await waitFor('the daemon to answer hearth status', () => { try { return daemonStatus(); } catch { return undefined; } }, 120000, 500);
    assert.equal(s.modelPath, modelPath, 'the daemon found the default model by itself');
    assert.equal(s.threads, 2);
    const shown = await waitFor(`the model name in the status bar (${s.model})`,
        async () => { const t = await statusText(); return t.includes(s.model) && t; }, 60000);
    console.log(`status bar: ${shown}`);
});

async function openFile() {
    await page.keyboard.press(`${mod}+P`);
    await page.locator('.quick-input-widget input').fill('shapes.py');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'shapes.py' }).first().waitFor({ timeout: 10000 });
    await page.keyboard.press('Enter');
    await page.locator('.monaco-editor .view-lines').first().waitFor({ timeout: 30000 });
    await page.locator('.monaco-editor .view-lines').first().click();
}

// Counters of the daemon, once it has moved past `before` in `key`.
function counted(what, key, before, timeoutMs = 5000) {
    return waitFor(what, () => { const s = daemonStatus(); return s[key] > before[key] && s; }, timeoutMs, 100);
}

test('typing in a function body shows ghost text; Tab inserts exactly the suggestion', async () => {
    await openFile();
    const before = daemonStatus();
    const first = await burst('ret');
    console.log(`ghost text ${first.ms.toFixed(0)} ms after the last key: ${JSON.stringify(first.text)}`);
    assert.ok(first.text.trim().length > 0, 'a non-empty suggestion');
    if (outDir) await page.screenshot({ path: path.join(outDir, 'vscode-ghost.png') });
    await page.keyboard.press('Tab');
    await waitFor('the ghost text to go', async () => !(await ghostVisible()), 5000);
    assert.equal(await save(), initial + 'ret' + first.text, 'the file holds exactly what was typed and the suggestion');
    const after = await counted('the daemon to count the accept', 'completionsAccepted', before);
    assert.ok(after.completionsShown > before.completionsShown);
});

test('accept next word inserts one word and the daemon counts a partial accept', async () => {
    await prepare('\n\ndef diagonal(w, h):\n    ');
    const before = daemonStatus();
    const shown = await burst('ret');
    const fileBefore = await save();
    assert.ok(await ghostVisible(), 'saving keeps the suggestion');
    await page.keyboard.press(`${mod}+ArrowRight`);
    const fileAfter = await waitFor('a word inserted', async () => { const t = await save(); return t !== fileBefore && t; }, 5000, 200);
    assert.ok(fileAfter.startsWith(fileBefore), 'inserted at the cursor, the end of the file');
    const word = fileAfter.slice(fileBefore.length);
    console.log(`next word ${JSON.stringify(word)} of ${JSON.stringify(shown.text)}`);
    assert.ok(word.length > 0 && shown.text.startsWith(word), 'a prefix of the suggestion');
    assert.ok(!/\S\s+\S/.test(word), `one word: ${JSON.stringify(word)}`);
    const after = await counted('the daemon to count the partial accept', 'completionsPartiallyAccepted', before);
    assert.equal(after.completionsPartiallyAccepted, before.completionsPartiallyAccepted + 1);
    assert.equal(after.completionsRejected, before.completionsRejected, 'a partly accepted suggestion is not rejected');
    await page.keyboard.press('Escape');
});

test('Escape dismisses the suggestion and the daemon counts a rejection at once', async () => {
    await prepare('\n\ndef is_square(w, h):\n    ');
    await burst('ret');
    const before = daemonStatus();
    await page.keyboard.press('Escape');
    await waitFor('the ghost text to go', async () => !(await ghostVisible()), 5000);
    const t0 = Date.now();
    const after = await counted('the daemon to count the rejection', 'completionsRejected', before);
    console.log(`rejection counted ${Date.now() - t0} ms after Escape`);
    assert.equal(after.completionsRejected, before.completionsRejected + 1);
});

test(`keystroke to ghost text over ${bursts} typing bursts`, async () => {
    const names = ['scale', 'rotate', 'shift', 'mirror', 'grow', 'shrink', 'flip', 'stretch', 'crop', 'tile', 'pad', 'fit',
        'snap', 'align', 'center', 'wrap'];
    const ms = [];
    let none = 0;   // bursts the model answered with nothing at every key
    for (let i = 0; i < bursts; i++) {
        await prepare(`\n\ndef ${names[i % names.length]}(w, h, k):\n    `);
        const b = await burst('ret').catch((e) => { if (/no suggestion/.test(e.message)) return undefined; throw e; });
        if (!b) { none++; continue; }
        ms.push(b.ms);
        await page.keyboard.press('Escape');
        await waitFor('the ghost text to go', async () => !(await ghostVisible()), 5000);
    }
    const median = percentile(ms, 50), p90 = percentile(ms, 90);
    assert.ok(ms.length > 0, 'at least one burst showed ghost text');
    console.log(`keystroke to ghost text, ${ms.length} bursts (${none} without a suggestion): median ${median.toFixed(0)} ms, p90 ${p90.toFixed(0)} ms ` +
        `(${ms.map((x) => x.toFixed(0)).join(', ')})`);
    if (outDir) fs.writeFileSync(path.join(outDir, 'vscode-latency.json'), JSON.stringify({ ms, none, median, p90 }, null, 2));
    assert.ok(ms.every((x) => x > 0));
    // Bounds a user would notice: the median 1 s, every burst 1.5 s. Idle, this machine measures
    // a 153 ms median and 473 ms p90 (docs/editors.md); the bounds leave room for the ctest job
    // that runs beside this one. Most bursts are answered from the typed-ahead memory, so the
    // slowest one is where a slow model call shows: a daemon whose completions each took 1.2 s
    // longer measured 143, 1835 and 143 ms here.
    assert.ok(median <= 1000, `median keystroke to ghost text ${median.toFixed(0)} ms is over 1000 ms`);
    assert.ok(Math.max(...ms) <= 1500, `a burst took ${Math.max(...ms).toFixed(0)} ms to show ghost text, over 1500 ms`);
});

test('Explain streams into the side document while the status bar says working; the daemon counts a chat', async () => {
    const before = daemonStatus();
    await page.keyboard.press(`${mod}+Home`);
    for (let i = 0; i < 3; i++) await page.keyboard.press('Shift+ArrowDown');
    // Record every status bar text and every state of the answer document as the page shows them.
    await page.evaluate(() => {
        window.__seen = { status: [], answer: [] };
        window.__timer = setInterval(() => {
            const seen = window.__seen;
            const s = document.querySelector('.statusbar-item[id^="hearth."]')?.innerText ?? '';
            if (seen.status[seen.status.length - 1] !== s) seen.status.push(s);
            for (const e of document.querySelectorAll('.monaco-editor .view-lines')) {
                const t = e.innerText.replace(/\u00a0/g, ' ');
                if (t.startsWith('# hearth: Explain') && seen.answer[seen.answer.length - 1] !== t) seen.answer.push(t);
            }
        }, 25);
    });
    await command('hearth: Explain');
    const seen = await waitFor('the answer to finish', async () => {
        const v = await page.evaluate(() => window.__seen);
        const last = v.answer[v.answer.length - 1];
        return last && !last.includes('hearth is writing') && /[A-Za-z]/.test(last.split('\n').slice(4).join('\n')) && v;
    }, 240000, 200);
    await page.evaluate(() => clearInterval(window.__timer));
    const streaming = seen.answer.filter((t) => t.includes('hearth is writing'));
    console.log(`answer: ${seen.answer.length} states on screen, ${streaming.length} while streaming; final ` +
        JSON.stringify(seen.answer[seen.answer.length - 1].slice(0, 160)));
    assert.ok(streaming.length >= 2, 'the document filled in more than one step while streaming');
    assert.ok(seen.status.some((t) => /working/.test(t)), `the status bar said working: ${JSON.stringify(seen.status)}`);
    await counted('the daemon to count the chat', 'chatsServed', before);
    await waitFor('the status bar to say idle again', async () => /idle/.test(await statusText()), 10000);
});

async function toast(what, pattern) {
    const t = page.locator('.notifications-toasts .notification-toast', { hasText: pattern }).first();
    await t.waitFor({ timeout: 60000 }).catch(async () => {
        await command('Notifications: Show Notifications').catch(() => undefined);
        await sleep(500);
        const all = await page.locator('.notifications-center').innerText().catch(() => '');
        throw new Error(`no notification ${what} (${pattern}); the notification center holds: ${JSON.stringify(all)}`);
    });
    return t;
}

// Changes user settings on disk, then reloads the window: VS Code starts with them, as
// it does for a user who set them before opening it.
async function restartWithSettings(change) {
    const next = { ...JSON.parse(fs.readFileSync(settingsFile, 'utf8')), ...change };
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete next[k];
    fs.writeFileSync(settingsFile, JSON.stringify(next, null, 2));
    await command('Developer: Reload Window');
    await page.waitForLoadState('domcontentloaded');
    await page.locator('.monaco-workbench').waitFor({ timeout: 120000 });
}

test('a wrong hearth.daemonPath: the notification names the path and the setting', async () => {
    await restartWithSettings({ 'hearth.daemonPath': '/nonexistent/hearth' });
    const t = await toast('for the wrong path', /\/nonexistent\/hearth.*hearth\.daemonPath/);
    console.log(`notification: ${(await t.innerText()).replace(/\s+/g, ' ')}`);
    await waitFor('the status item to show the error', async () => /hearth/.test(await statusText()) && !/idle|working/.test(await statusText()), 10000);
});

test('a runtime dir of mode 755: the notification gives the cause, Show Output opens the output', async () => {
    const open = path.join(tree, 'open-run');
    await restartWithSettings({ 'hearth.daemonPath': undefined, 'hearth.extraArgs': ['--runtime-dir', open] });
    const t = await toast('for the open runtime dir', /mode 755 lets other users in/);
    const text = (await t.innerText()).replace(/\s+/g, ' ');
    console.log(`notification: ${text}`);
    assert.ok(text.includes(`chmod 700 ${open}`), text);
    assert.doesNotMatch(text, /connection got disposed|EPIPE/);
    await t.hover();
    await t.getByRole('button', { name: 'Show Output' }).click();
    await waitFor('the output channel with hearth lsp\'s stderr', async () => {
        const panel = await page.locator('.part.panel').innerText().catch(() => '');
        return /lets other users in/.test(panel.replace(/[\s\u00a0]+/g, ' '));   // lines wrap in the panel
    }, 10000);
});
