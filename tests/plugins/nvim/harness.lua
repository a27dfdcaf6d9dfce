-- A small test runner for headless Neovim: tests run one after another inside one
-- coroutine, so a test can wait (H.sleep, H.wait_for) while Neovim's main loop keeps
-- processing typed keys, timers and LSP messages. Prints one line per test and a
-- closing "N passed, N failed" line, then quits with status 1 if anything failed.
local H = {}

local tests = {}
local co

function H.test(name, fn) tests[#tests + 1] = { name = name, fn = fn } end

function H.sleep(ms)
  local me = coroutine.running()
  vim.defer_fn(function() assert(coroutine.resume(me)) end, ms)
  coroutine.yield()
end

function H.wait_for(pred, timeout_ms, what)
  local waited = 0
  while true do
    local v = pred()
    if v then return v end
    if waited >= timeout_ms then error('timed out after ' .. timeout_ms .. ' ms waiting for ' .. what, 2) end
    H.sleep(20)
    waited = waited + 20
  end
end

function H.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(string.format('%s: expected %s, got %s', what or 'value', vim.inspect(want), vim.inspect(got)), 2)
  end
end

function H.ok(cond, what)
  if not cond then error('check failed: ' .. (what or '?'), 2) end
  return cond
end

-- Sends a request on `client` and waits for its reply; returns err, result.
function H.request(client, method, params, timeout_ms)
  local compat = require('hearth.compat')
  local done, e, r = false, nil, nil
  compat.request(client, method, params, function(err, result) done, e, r = true, err, result end, 0)
  H.wait_for(function() return done end, timeout_ms or 5000, 'reply to ' .. method)
  return e, r
end

-- Types `keys` as a user would (mapped keys included), then lets the main loop run.
function H.type(keys, settle_ms)
  vim.api.nvim_input(keys)
  H.sleep(settle_ms or 30)
end

local function out(s) io.stdout:write(s .. '\n') io.stdout:flush() end

function H.run(label)
  vim.o.showmode = false   -- "-- INSERT --" would land in the test output
  co = coroutine.create(function()
    local passed, failed = 0, 0
    for _, t in ipairs(tests) do
      local t0 = vim.loop.hrtime()
      local ok, err = xpcall(t.fn, debug.traceback)
      local ms = (vim.loop.hrtime() - t0) / 1e6
      if ok then
        passed = passed + 1
        out(string.format('ok   %s (%.0f ms)', t.name, ms))
      else
        failed = failed + 1
        out(string.format('FAIL %s (%.0f ms)\n%s', t.name, ms, err))
      end
    end
    out(string.format('%s on %s', label or 'nvim tests', tostring(vim.version and vim.version() and
      (vim.version().major .. '.' .. vim.version().minor .. '.' .. vim.version().patch) or '?')))
    out(string.format('%d passed, %d failed', passed, failed))
    local clients = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
    for _, c in pairs(clients) do vim.lsp.stop_client(c.id, true) end
    vim.cmd(failed > 0 and 'cquit' or 'qall!')
  end)
  local ok, err = coroutine.resume(co)
  if not ok then out('harness error: ' .. tostring(err)) vim.cmd('cquit') end
end

return H
