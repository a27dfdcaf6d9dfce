import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServerProcess, failureCause, startFailureMessage } from '../src/server_process';

test("the cause is hearth's last error line, without its log prefix", () => {
    const stderr = '2026-12-01T10:00:00.000 warn [7] something odd\n' +
        '2026-12-01T10:00:00.001 error [7] runtime dir /run/user/1/hearth mode 755 lets other users in; expected 700\n' +
        '2026-12-01T10:00:00.002 info [7] bye\n';
    assert.equal(failureCause(stderr, 1), 'runtime dir /run/user/1/hearth mode 755 lets other users in; expected 700');
});

test('a command-line error is its last plain line; silence names the exit code', () => {
    assert.equal(failureCause('The following argument was not expected: --bogus\nRun with --help for more information.\n', 109),
        'The following argument was not expected: --bogus');
    assert.equal(failureCause('', 3), 'it exited with code 3 and wrote nothing to stderr');
    assert.equal(failureCause('', null), undefined);
    assert.equal(startFailureMessage('hearth lsp', '', null, 'write EPIPE'), 'hearth: `hearth lsp` failed to start: write EPIPE.');
});

test('ServerProcess keeps the stderr of the process and its exit code', async () => {
    const p = new ServerProcess('/bin/sh', ['-c', 'echo out; echo "2026-12-01T10:00:00.000 critical [1] cannot load the model" >&2; exit 4']);
    assert.equal(await p.closed, 4);
    assert.match(p.stderr, /critical \[1\] cannot load the model/);
    assert.equal(failureCause(p.stderr, 4), 'cannot load the model');
    const missing = new ServerProcess('/nonexistent/hearth', ['lsp']);
    assert.equal(await missing.closed, null);
    assert.match(missing.spawnError, /ENOENT/);
});
