-- The plugin against the real daemon (started by run_e2e.sh): ghost text appears while
-- typing, Tab inserts exactly what was shown, a dismissed one is counted as rejected, an
-- answer streams into the scratch split, :HearthStatus reports. The model's words are not
-- checked; what the plugin does with them is.
local H = dofile(vim.env.HEARTH_TEST_DIR .. '/harness.lua')
local hearth = require('hearth')
local compat = require('hearth.compat')
local chat = require('hearth.chat')

local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
vim.cmd('cd ' .. dir)
hearth.setup({
  cmd = { vim.env.HEARTH_E2E_CMD, 'lsp' },
  args = { '--runtime-dir', vim.env.HEARTH_E2E_RUNTIME, '--no-start' },
  debounce_ms = 50,
})

local buf, client

local function ghost() return (hearth.ghost_text(buf)) end
local function lines() return vim.api.nvim_buf_get_lines(buf, 0, -1, false) end
local function status()
  local err, r = H.request(client, 'hearth/status', {}, 10000)
  H.eq(nil, err, 'hearth/status error')
  return r
end

H.test('the client attaches to the daemon through hearth lsp', function()
  vim.fn.writefile({ 'def add(a, b):', '    return a + b', '', '' }, dir .. '/arith.py')
  vim.cmd('edit ' .. dir .. '/arith.py')
  buf = vim.api.nvim_get_current_buf()
  vim.bo.filetype = 'python'
  client = H.wait_for(function()
    local c = compat.clients_of(buf, 'hearth')[1]
    return c and c.server_capabilities and c
  end, 15000, 'the hearth client to initialize')
  H.ok(client.server_capabilities.inlineCompletionProvider, 'inline completion advertised')
  local want = vim.fn.has('nvim-0.10') == 1 and 'utf-8' or 'utf-16'
  H.eq(want, client.offset_encoding, 'negotiated position encoding')
end)

H.test('typing shows ghost text from the model; Tab inserts exactly it', function()
  H.type('Godef mul(a, b):<CR>return ', 0)
  local t0 = vim.loop.hrtime()
  local shown = H.wait_for(ghost, 60000, 'ghost text from the daemon')
  io.stdout:write(string.format('keys to ghost text (cold): %.0f ms: %s\n', (vim.loop.hrtime() - t0) / 1e6, vim.inspect(shown)))
  H.ok(#shown > 0, 'non-empty suggestion')
  local before = lines()
  local row = vim.api.nvim_win_get_cursor(0)[1]
  H.type('<Tab>', 100)
  local after = lines()
  local parts = vim.split(shown, '\n', { plain = true })
  H.eq(before[row] .. parts[1], after[row], 'first line of the suggestion inserted at the cursor')
  for i = 2, #parts do H.eq(parts[i], after[row + i - 1], 'suggestion line ' .. i) end
  H.eq(#before + #parts - 1, #after, 'line count')
  H.wait_for(function()
    local s = status()
    return s.completionsShown >= 1 and s.completionsAccepted >= 1
  end, 5000, 'the daemon to count the shown and accepted completion')
  H.type('<Esc>')
end)

H.test('a dismissed suggestion is counted as rejected', function()
  local rejected = status().completionsRejected
  H.type('o<CR>def sub(a, b):<CR>return ', 0)
  local t0 = vim.loop.hrtime()
  local shown = H.wait_for(ghost, 60000, 'ghost text')
  io.stdout:write(string.format('keys to ghost text (warm file): %.0f ms: %s\n', (vim.loop.hrtime() - t0) / 1e6, vim.inspect(shown)))
  H.type('<Esc>')
  H.eq(nil, ghost(), 'ghost cleared')
  H.wait_for(function() return status().completionsRejected > rejected end, 5000, 'the reject to be counted')
end)

-- HEARTH_NVIM_BURSTS=N (docs/editors.md): keystroke to ghost text over N typing bursts,
-- each a new function whose body starts `ret` (Neovim's Python indent puts the body under the
-- `def`, as in the tests above), dismissed with Esc.
local bursts = tonumber(vim.env.HEARTH_NVIM_BURSTS or '0') or 0
if bursts > 0 then
  H.test(string.format('keystroke to ghost text over %d typing bursts', bursts), function()
    local ms, none = {}, 0
    for i = 1, bursts do
      H.type(string.format('<Esc>Go<CR>def area_%d(w, h):<CR>ret', i), 0)
      local t0 = vim.loop.hrtime()
      local ok = pcall(H.wait_for, ghost, 8000, 'ghost text')   -- none within 8 s: the model suggested nothing
      if ok then ms[#ms + 1] = (vim.loop.hrtime() - t0) / 1e6 else none = none + 1 end
      H.type('<Esc>', 100)
    end
    H.ok(#ms > 0, 'at least one burst showed ghost text')
    table.sort(ms)
    local function pct(p) return ms[math.min(#ms, math.max(1, math.ceil(p / 100 * #ms)))] end
    io.stdout:write(string.format('keystroke to ghost text, %d bursts (%d without a suggestion): median %.0f ms, p90 %.0f ms\n',
      #ms, none, pct(50), pct(90)))
  end)
end

H.test(':HearthExplain streams the answer into the scratch split', function()
  local pieces = 0
  local on_progress = chat.on_progress
  chat.on_progress = function(result)
    local mine = on_progress(result)
    if mine and type(result.value) == 'table' and result.value.kind == 'report' then pieces = pieces + 1 end
    return mine
  end
  vim.cmd('1,2HearthExplain')
  local answer = -1
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):match('^hearth://answer/') then answer = b end
  end
  H.ok(answer > 0, 'scratch buffer')
  local token
  H.wait_for(function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do if b == answer then return true end end
  end, 1000, 'buffer listed')
  -- Done when the request has been answered: no "streaming" stream left.
  H.wait_for(function()
    local body = table.concat(vim.api.nvim_buf_get_lines(answer, 2, -1, false), '\n')
    return pieces > 0 and body ~= '' and not vim.bo[answer].modified and chat.any_streaming() == false
  end, 60000, 'the streamed answer to finish')
  chat.on_progress = on_progress
  local body = table.concat(vim.api.nvim_buf_get_lines(answer, 2, -1, false), '\n')
  H.ok(not body:match('%(failed'), 'answer failed: ' .. body)
  H.ok(#vim.trim(body) > 0, 'a non-empty answer')
  H.ok(pieces >= 1, 'pieces streamed: ' .. pieces)
  io.stdout:write(string.format('answer (%d streamed pieces): %s\n', pieces, body:sub(1, 120):gsub('\n', ' ')))
end)

H.test(':HearthStatus reports the model', function()
  local got
  hearth.status(function(l) got = l end)
  H.wait_for(function() return got end, 10000, 'status')
  local text = table.concat(got, '\n')
  H.ok(text:match('model: %S'), text)
  H.ok(text:match('completionsAccepted: %d'), text)
  io.stdout:write(text:gsub('\n', '; '):sub(1, 400) .. '\n')
end)

H.test(':checkhealth hearth finds the binary and the attached client', function()
  vim.cmd('checkhealth hearth')
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  H.ok(report:match("OK.-'" .. vim.pesc(vim.env.HEARTH_E2E_CMD) .. "' found"), report)
  H.ok(report:match("OK.-lsp %-%-help' works"), report)
  H.ok(report:match('OK.-client %d+ running, attached to 1 buffer'), report)
  H.ok(not report:match('ERROR'), report)
end)

H.run('hearth.nvim end to end with the daemon')
