-- Next edits from the real daemon (started by run_e2e.sh): a variable renamed where it is
-- set, the daemon proposes an edit; it is drawn, Tab jumps to it (when the cursor is not on
-- it), Tab applies exactly it, and hearth/didAccept names it. Skipped (77, with the
-- reason) when the daemon has no hearth/nextEdit or the model proposes no edit: a pass
-- means an edit went through the whole path. Whether it renames the next use is printed.
local H = dofile(vim.env.HEARTH_TEST_DIR .. '/harness.lua')
local hearth = require('hearth')
local compat = require('hearth.compat')
local next_edit = require('hearth.next_edit')

-- A fixed path: the file's name is part of the model's prompt, and a fresh temporary name
-- each run would make its answer vary from run to run.
local dir = '/tmp/hearth-e2e-next-edit'
vim.fn.mkdir(dir, 'p')
vim.cmd('cd ' .. dir)
hearth.setup({
  cmd = { vim.env.HEARTH_E2E_CMD, 'lsp' },
  args = { '--runtime-dir', vim.env.HEARTH_E2E_RUNTIME, '--no-start' },
  debounce_ms = 50,
})

local function skip(why)
  io.stdout:write('SKIP: ' .. why .. '\n')
  io.stdout:flush()
  vim.cmd('cquit 77')
end

local buf, client
-- The notifications the plugin sends, recorded on their way to the daemon (which keeps no
-- count of next-edit feedback to read back).
local sent = {}
local notify = compat.notify
compat.notify = function(c, method, params)
  sent[#sent + 1] = { method = method, params = params }
  return notify(c, method, params)
end
local function lines() return vim.api.nvim_buf_get_lines(buf, 0, -1, false) end

H.test('the daemon lists hearth/nextEdit', function()
  vim.fn.writefile({ 'def tally(items):', '    count = 0', '    for item in items:', '        count += 1', '    return count' },
    dir .. '/tally.py')
  vim.cmd('edit ' .. dir .. '/tally.py')
  buf = vim.api.nvim_get_current_buf()
  vim.bo.filetype = 'python'
  client = H.wait_for(function()
    local c = compat.clients_of(buf, 'hearth')[1]
    return c and c.server_capabilities and c
  end, 15000, 'the hearth client to initialize')
  local caps = client.server_capabilities.experimental
  local methods = caps and caps.hearth and caps.hearth.methods or {}
  if not vim.tbl_contains(methods, 'hearth/nextEdit') then skip('this daemon has no hearth/nextEdit') end
end)

H.test('a rename: the proposed edit is drawn, Tab jumps to it, Tab applies exactly it', function()
  H.sleep(300)
  -- The rename as one change (one didChange), as a rename command or a paste makes it.
  vim.api.nvim_win_set_cursor(0, { 2, 4 })
  vim.api.nvim_buf_set_text(buf, 1, 4, 1, 9, { 'total' })
  vim.api.nvim_win_set_cursor(0, { 2, 8 })
  local t0 = vim.loop.hrtime()
  local cur
  for _ = 1, 900 do
    cur = next_edit.current()
    if cur then break end
    H.sleep(100)
  end
  if not cur then skip('the model proposed no next edit within 90 s of the rename') end
  io.stdout:write(string.format('next edit after %.0f ms: %s\n', (vim.loop.hrtime() - t0) / 1e6,
    vim.inspect({ range = cur.edit.range, newText = cur.edit.newText })))
  H.ok(vim.api.nvim_buf_get_extmarks(buf, require('hearth.next_edit_view').ns, 0, -1, {})[1], 'drawn')
  -- The buffer as it must be once the edit is in: computed here from the edit's byte range.
  local want = lines()
  local before_text = table.concat(want, '\n')
  local function offset(p) local o = 0 for r = 1, p[1] do o = o + #want[r] + 1 end return o + p[2] end
  local expect = before_text:sub(1, offset(cur.start)) .. cur.edit.newText .. before_text:sub(offset(cur.finish) + 1)
  if not next_edit.on_edit(cur, vim.api.nvim_win_get_cursor(0)[1] - 1) then
    H.type('<Tab>', 100)
    H.eq(cur.show_row + 1, vim.api.nvim_win_get_cursor(0)[1], 'the first Tab jumps to the edit')
    H.eq(before_text, table.concat(lines(), '\n'), 'nothing applied by the jump')
  end
  H.type('<Tab>', 100)
  H.eq(expect, table.concat(lines(), '\n'), 'the edit applied exactly')
  local now = next_edit.current()
  H.ok(not (now and now.edit.id == cur.edit.id), 'the applied edit is gone')
  local accepted = vim.tbl_filter(function(n) return n.method == 'hearth/didAccept' end, sent)
  H.eq(1, #accepted, 'one hearth/didAccept')
  H.eq({ uri = cur.edit.textDocument.uri, id = cur.edit.id, insertText = cur.edit.newText, range = cur.edit.range },
    accepted[1].params, 'hearth/didAccept names the edit')
  io.stdout:write('buffer after the edit:\n' .. table.concat(lines(), '\n') .. '\n')
end)

H.run('hearth.nvim next edits against the daemon')
