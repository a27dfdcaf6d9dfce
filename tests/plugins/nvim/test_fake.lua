-- The plugin against the scripted server (tests/plugins/fake_server.js): exact ghost
-- text, typing through, accept / word / line / dismiss, debounce, cancellation, the
-- feedback notifications, hearth/cursorRest, next edits (a rename's next use: shown, Tab
-- jumps, Tab applies; <Esc> dismisses), streamed chat and its cancellation, status, and
-- the error when the binary is missing.
local H = dofile(vim.env.HEARTH_TEST_DIR .. '/harness.lua')
local hearth = require('hearth')
local compat = require('hearth.compat')
local completion = require('hearth.completion')

local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
vim.cmd('cd ' .. dir)
local node = vim.env.HEARTH_NODE or 'node'
-- Next edits off until their tests: the completion tests count requests and cancels.
local opts = hearth.setup({ cmd = { node, vim.env.HEARTH_FAKE_SERVER }, debounce_ms = 75, next_edit = { enabled = false } })

local buf, client

local function log()
  local _, r = H.request(client, 'fake/log', {})
  return r
end

local function count(entries, method)
  local n = 0
  for _, e in ipairs(entries) do if e.method == method then n = n + 1 end end
  return n
end

local function last_of(entries, method)
  for i = #entries, 1, -1 do if entries[i].method == method then return entries[i] end end
end

local function ghost() return (hearth.ghost_text(buf)) end

local function rests()
  local out = {}
  for _, e in ipairs(log()) do
    if e.method == 'hearth/cursorRest' then out[#out + 1] = e.params end
  end
  return out
end

-- The newest answer buffer.
local function answer_buffer()
  local newest = -1
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):match('^hearth://answer/') and b > newest then newest = b end
  end
  return newest
end
local function lines() return vim.api.nvim_buf_get_lines(buf, 0, -1, false) end

H.test('setup attaches the client to a buffer of an enabled filetype', function()
  vim.cmd('edit ' .. dir .. '/main.py')
  buf = vim.api.nvim_get_current_buf()
  vim.bo.filetype = 'python'
  client = H.wait_for(function()
    local c = compat.clients_of(buf, 'hearth')[1]
    return c and c.server_capabilities and c
  end, 5000, 'the hearth client to initialize')
  H.ok(client.server_capabilities.inlineCompletionProvider, 'server capabilities reached the client')
end)

H.test('the opened buffer at rest is reported once with hearth/cursorRest', function()
  local got = H.wait_for(function() return rests()[1] end, 3000, 'hearth/cursorRest')
  H.eq({ textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 0, character = 0 } }, got, 'params')
  H.sleep(400)
  H.eq(1, #rests(), 'once')
end)

H.test('typing shows the suggestion as ghost text at the cursor', function()
  H.type('ihel')
  H.eq('_suggestion(1, 2)\nnext_line()', H.wait_for(ghost, 3000, 'ghost text'), 'ghost text')
  local marks = vim.api.nvim_buf_get_extmarks(buf, require('hearth.ghost').ns, 0, -1, { details = true })
  H.eq(1, #marks, 'one extmark')
  H.eq({ 0, 3 }, { marks[1][2], marks[1][3] }, 'at the cursor')
  H.eq(vim.fn.has('nvim-0.10') == 1 and 'inline' or 'overlay', marks[1][4].virt_text_pos, 'virt_text_pos for this version')
  H.eq({ 'hel' }, lines(), 'buffer untouched')
  local l = log()
  local req = last_of(l, 'textDocument/inlineCompletion')
  H.eq({ line = 0, character = 3 }, req.params.position, 'request position')
  H.eq(2, req.params.context.triggerKind, 'automatic trigger')
  H.eq('hel_suggestion(1, 2)\nnext_line()', last_of(l, 'textDocument/didShowCompletion').params.item.insertText, 'didShowCompletion item')
end)

H.test('typing what the ghost shows keeps it without a new request', function()
  local before = count(log(), 'textDocument/inlineCompletion')
  H.type('_s', 200)
  H.eq('uggestion(1, 2)\nnext_line()', ghost(), 'ghost after typing through')
  H.eq(before, count(log(), 'textDocument/inlineCompletion'), 'no new request')
end)

H.test('accept word, accept line, then Tab accepts the rest', function()
  H.type('<M-Right>')
  H.eq({ 'hel_suggestion' }, lines(), 'after accept word')
  H.eq('(1, 2)\nnext_line()', ghost(), 'ghost after accept word')
  -- acceptedLength counts insertText from its start: "hel" typed before, "_s" typed through, "uggestion" taken.
  H.eq(14, last_of(log(), 'textDocument/didPartiallyAcceptCompletion').params.acceptedLength, 'acceptedLength after a word')
  H.type('<M-Down>')
  H.eq({ 'hel_suggestion(1, 2)' }, lines(), 'after accept line')
  H.eq(20, last_of(log(), 'textDocument/didPartiallyAcceptCompletion').params.acceptedLength, 'acceptedLength after a line')
  H.type('<Tab>')
  H.eq({ 'hel_suggestion(1, 2)', 'next_line()' }, lines(), 'after Tab')
  H.eq({ 2, 11 }, vim.api.nvim_win_get_cursor(0), 'cursor at the end of the accepted text')
  local l = log()
  local acc = last_of(l, 'workspace/executeCommand')
  H.ok(acc, "the item's accept command ran")
  H.eq('hearth.acceptCompletion', acc.params.command, 'accept command')
  H.eq({ { uri = vim.uri_from_bufnr(buf), id = '1' } }, acc.params.arguments, 'accept command arguments')
  H.eq(0, count(l, 'hearth/didAccept'), 'no second accept report')
  H.eq(0, count(l, 'hearth/didReject'), 'nothing rejected so far')
  local _, doc = H.request(client, 'fake/document', { uri = vim.uri_from_bufnr(buf) })
  H.eq('hel_suggestion(1, 2)\nnext_line()\n', doc, 'the server saw the accepted text')
end)

H.test('moving the cursor dismisses the suggestion and reports a reject', function()
  H.wait_for(ghost, 3000, 'a new suggestion after the accept')
  H.type('<Left>')
  H.eq(nil, ghost(), 'ghost cleared')
  local l = log()
  H.eq(1, count(l, 'hearth/didReject'), 'one reject')
  local rej = last_of(l, 'hearth/didReject').params
  H.eq(last_of(l, 'textDocument/didShowCompletion').params.item.command.arguments[1].id, rej.id, 'reject names the item id')
  H.eq(vim.uri_from_bufnr(buf), rej.uri, 'reject uri')
  H.eq('fallback()', rej.insertText, 'reject insertText')
end)

H.test('<Esc> dismisses and leaves insert mode', function()
  H.type('<End> word')
  H.wait_for(ghost, 3000, 'ghost')
  H.type('<Esc>')
  H.eq(nil, ghost(), 'ghost cleared')
  H.eq('n', vim.api.nvim_get_mode().mode, 'normal mode')
  H.eq(2, count(log(), 'hearth/didReject'), 'second reject')
end)

H.test('Tab without a suggestion inserts a tab; dismiss key clears', function()
  H.type('o')
  H.type('<Tab>', 10)
  H.eq('\t', lines()[3], 'a literal tab')
  H.wait_for(ghost, 3000, 'suggestion after the tab')
  H.type('<C-]>')
  H.eq(nil, ghost(), 'dismissed')
  H.eq({ 3, 1 }, vim.api.nvim_win_get_cursor(0), 'cursor unchanged by dismiss')
  H.type('<Esc>')
end)

H.test('a burst of keystrokes sends one request (debounce)', function()
  H.type('o', 300)
  -- A long debounce, so that a loaded machine cannot stretch a 15 ms gap past it.
  opts.debounce_ms = 500
  local before = count(log(), 'textDocument/inlineCompletion')
  for _, k in ipairs({ 'a', 'b', 'c', 'd' }) do H.type(k, 15) end
  H.wait_for(function() return ghost() == '_suggestion(1, 2)\nnext_line()' end, 5000, 'ghost')
  opts.debounce_ms = 75
  H.sleep(200)
  H.eq(1, count(log(), 'textDocument/inlineCompletion') - before, 'requests for four quick keys')
  H.eq('_suggestion(1, 2)\nnext_line()', ghost(), 'suggestion for the whole word')
  H.type('<Esc>')
end)

H.test('a newer keystroke cancels the request in flight', function()
  H.type('oslow', 10)
  H.wait_for(function()
    local req = last_of(log(), 'textDocument/inlineCompletion')
    return req and req.params.position.line == #lines() - 1 and req.params.position.character == #lines()[#lines()]
  end, 3000, 'the slow request')
  H.type('x', 10)
  H.wait_for(function() return count(log(), '$/cancelRequest') > 0 end, 3000, '$/cancelRequest')
  H.eq('_suggestion(1, 2)\nnext_line()', H.wait_for(ghost, 3000, 'ghost for slowx'), 'ghost for the newer text')
  H.eq('slowx', vim.trim(lines()[#lines()]), 'buffer')
  H.type('<Esc>')
end)

H.test('max_lines cuts the suggestion; typing through and Tab take the cut text', function()
  opts.max_lines = 1
  H.type('onum', 10)
  H.eq('_suggestion(1, 2)', H.wait_for(ghost, 3000, 'ghost'), 'one line')
  H.type('_sug')
  H.eq('gestion(1, 2)', ghost(), 'typed through a cut suggestion')
  H.type('<Tab>')
  H.eq('num_suggestion(1, 2)', vim.trim(lines()[#lines()]), 'accepted line')
  H.ok(not vim.trim(lines()[#lines()]):match('next_line'), 'no second line')
  H.type('<Esc>')
  opts.max_lines = 8
end)

H.test('positions count UTF-16 code units on a line with multi-byte characters', function()
  -- "é" is 2 bytes and 1 UTF-16 unit, "😀" 4 bytes and 2 UTF-16 units.
  H.type('o# é😀 naïve = val', 10)
  local shown = H.wait_for(ghost, 3000, 'ghost')
  local req = last_of(log(), 'textDocument/inlineCompletion').params
  local line = vim.api.nvim_get_current_line()
  H.eq(vim.fn.strchars(line) + 1, req.position.character, 'position in UTF-16 units (the emoji counts twice)')
  H.eq('_suggestion(1, 2)\nnext_line()', shown, 'ghost after multi-byte characters')
  H.type('<Tab>')
  H.eq('# é😀 naïve = val_suggestion(1, 2)', vim.trim(lines()[#lines() - 1]), 'accepted text after multi-byte characters')
  local _, doc = H.request(client, 'fake/document', { uri = vim.uri_from_bufnr(buf) })
  H.eq(table.concat(lines(), '\n') .. '\n', doc, 'the server holds the same text')
  H.type('<Esc>')
end)

H.test('the cursor at rest on another line is reported once per line, in UTF-16 units', function()
  opts.cursor_rest_ms = 300
  local row
  for i, l in ipairs(lines()) do if l:find('naïve', 1, true) then row = i end end
  H.type('gg')
  H.wait_for(function() local r = rests() return r[#r] and r[#r].position.line == 0 end, 3000, 'the rest on the first line')
  local n = #rests()
  -- Two moves well within the debounce: only the second place is reported.
  H.type('3G', 20)
  H.type(row .. 'G$', 20)
  H.eq(n, #rests(), 'nothing while moving')
  H.wait_for(function() return #rests() > n end, 3000, 'hearth/cursorRest')
  H.sleep(400)
  local r = rests()
  H.eq(n + 1, #r, 'one report for the two moves')
  -- On the last character: those before it, the emoji counting twice.
  local line = lines()[row]
  H.eq({ textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = row - 1, character = vim.fn.strchars(line) } },
    r[#r], 'params')
  H.type('0')
  H.sleep(500)
  H.eq(n + 1, #rests(), 'not again on the same line')
  H.type('k')
  H.eq(row - 2, H.wait_for(function() return #rests() > n + 1 and rests()[n + 2] end, 3000, 'the next line').position.line, 'new line')
  opts.cursor_rest_ms = 0
  H.type('j')
  H.sleep(500)
  H.eq(n + 2, #rests(), 'nothing with cursor_rest_ms = 0')
  opts.cursor_rest_ms = 250
  H.type('G')
end)

H.test('the trigger key asks for candidates; next and prev cycle through them', function()
  opts.auto = false
  H.type('owid', 200)
  H.eq(nil, ghost(), 'no automatic request with auto = false')
  H.type('<M-\\>')
  H.eq('_suggestion(1, 2)\nnext_line()', H.wait_for(ghost, 3000, 'ghost'), 'first candidate')
  H.eq(1, last_of(log(), 'textDocument/inlineCompletion').params.context.triggerKind, 'invoked')
  local shows = count(log(), 'textDocument/didShowCompletion')
  H.type('<M-n>')
  H.eq('_alternative()', ghost(), 'second candidate')
  H.type('<M-n>')
  H.eq('_suggestion(1, 2)\nnext_line()', ghost(), 'wraps around')
  H.type('<M-p>')
  H.eq('_alternative()', ghost(), 'previous')
  local l = log()
  H.eq(shows + 3, count(l, 'textDocument/didShowCompletion'), 'each shown candidate reported')
  local rejects = count(l, 'hearth/didReject')
  H.type('<Tab>')
  H.eq('wid_alternative()', vim.trim(lines()[#lines()]), 'the chosen candidate accepted')
  l = log()
  H.eq(rejects, count(l, 'hearth/didReject'), 'cycling rejects nothing')
  H.eq(last_of(l, 'textDocument/didShowCompletion').params.item.command.arguments, last_of(l, 'workspace/executeCommand').params.arguments,
    'the accept names the chosen item')
  H.type('<Esc>')
  opts.auto = true
end)

H.test(':HearthExplain streams the answer into a scratch split', function()
  local code_win = vim.api.nvim_get_current_win()
  vim.cmd('1,2HearthExplain')
  H.eq(code_win, vim.api.nvim_get_current_win(), 'focus stays in the code')
  local answer = answer_buffer()
  H.ok(answer > 0, 'scratch buffer exists')
  local seen = {}
  H.wait_for(function()
    local body = table.concat(vim.api.nvim_buf_get_lines(answer, 2, -1, false), '\n')
    if seen[#seen] ~= body then seen[#seen + 1] = body end
    return body == 'Hello from the fake'
  end, 3000, 'the full answer')
  H.ok(#seen >= 3, 'the answer grew in steps: ' .. vim.inspect(seen))
  H.eq('# hearth: Explain (main.py:1-2)', vim.api.nvim_buf_get_lines(answer, 0, 1, false)[1], 'header')
  H.eq('nofile', vim.bo[answer].buftype, 'scratch buffer')
  H.eq(false, vim.bo[answer].modifiable, 'read-only')
  local req = last_of(log(), 'workspace/executeCommand').params
  H.eq('hearth.explain', req.command, 'command')
  H.eq({ start = { line = 0, character = 0 }, ['end'] = { line = 1, character = #lines()[2] } }, req.arguments[1].range, 'range of lines 1-2')
  H.eq(vim.uri_from_bufnr(buf), req.arguments[1].textDocument.uri, 'document')
  H.eq(nil, req.arguments[1].prompt, 'explain needs no prompt')
  H.ok(type(req.workDoneToken) == 'string', 'a progress token')
  vim.cmd('bwipeout ' .. answer)
end)

H.test(':HearthAsk can be cancelled while it streams', function()
  local cancels = count(log(), '$/cancelRequest')
  vim.cmd('2HearthAsk why so slow')
  local answer = answer_buffer()
  H.wait_for(function() return vim.api.nvim_buf_get_lines(answer, 2, 3, false)[1] == 'Hello' end, 3000, 'first piece')
  vim.cmd('HearthCancel')
  H.wait_for(function() return count(log(), '$/cancelRequest') > cancels end, 3000, '$/cancelRequest for the chat')
  H.sleep(900)   -- the server's next piece would have come 400 ms after the first
  H.eq({ 'Hello', '', '(cancelled)' }, vim.api.nvim_buf_get_lines(answer, 2, -1, false), 'stopped after the first piece')
  local req = last_of(log(), 'workspace/executeCommand').params
  H.eq('hearth.ask', req.command, 'command')
  H.eq('why so slow', req.arguments[1].prompt, 'the question is the prompt')
  vim.cmd('bwipeout ' .. answer)
end)

H.test(':HearthStatus reports the daemon status', function()
  local got
  hearth.status(function(l) got = l end)
  H.wait_for(function() return got end, 3000, 'status')
  H.ok(vim.tbl_contains(got, '  name: fake-model'), vim.inspect(got))
  H.ok(vim.tbl_contains(got, '  totalMs: 12'), vim.inspect(got))
end)

local next_edit = require('hearth.next_edit')
local view = require('hearth.next_edit_view')

H.test('a rename shows the next use as a next edit; Tab jumps to it, Tab applies it, didAccept names its id', function()
  opts.next_edit.enabled = true
  local file = dir .. '/rename.py'
  vim.fn.writefile({ 'count = 0', 'print(count)', 'x = count + 1' }, file)
  vim.cmd('edit ' .. file)
  local rbuf = vim.api.nvim_get_current_buf()
  vim.bo.filetype = 'python'
  H.wait_for(function() return compat.clients_of(rbuf, 'hearth')[1] end, 5000, 'the client on rename.py')
  H.sleep(200)
  H.type('ggcwtotal<Esc>', 50)
  local shown = H.wait_for(function() local c = next_edit.current() return c and c.edit.newText == 'total' and c end, 5000, 'the next edit')
  H.eq({ start = { line = 1, character = 6 }, ['end'] = { line = 1, character = 11 } }, shown.edit.range, 'the next use')
  H.eq({ 1, 4 }, vim.api.nvim_win_get_cursor(0), 'the cursor stays at the rename')
  local drawn = view.drawn(rbuf)
  H.ok(drawn:match('total') and drawn:match('Tab: jump to the edit'), 'new text and hint drawn: ' .. drawn)
  local marks = vim.api.nvim_buf_get_extmarks(rbuf, view.ns, 0, -1, { details = true })
  local del = vim.tbl_filter(function(m) return m[4].hl_group == 'HearthNextEditDelete' end, marks)[1]
  H.eq({ 1, 6, 1, 11 }, { del[2], del[3], del[4].end_row, del[4].end_col }, 'the replaced text highlighted')
  H.eq(1, vim.fn.maparg('<Tab>', 'n', false, true).buffer, 'Tab mapped for the buffer while the edit shows')
  H.type('<Tab>')
  H.eq({ 2, 0 }, vim.api.nvim_win_get_cursor(0), 'the first Tab jumps to showAt')
  H.eq({ 'total = 0', 'print(count)', 'x = count + 1' }, vim.api.nvim_buf_get_lines(rbuf, 0, -1, false), 'nothing applied yet')
  H.ok(view.drawn(rbuf):match('Tab: apply'), 'the hint says apply')
  H.type('<Tab>')
  H.eq({ 'total = 0', 'print(total)', 'x = count + 1' }, vim.api.nvim_buf_get_lines(rbuf, 0, -1, false), 'the second Tab applies')
  H.eq({ 2, 11 }, vim.api.nvim_win_get_cursor(0), 'cursor after the new text')
  local acc = last_of(log(), 'hearth/didAccept')
  H.eq({ uri = vim.uri_from_bufnr(rbuf), id = shown.edit.id, insertText = 'total', range = shown.edit.range }, acc and acc.params, 'didAccept')
  local _, doc = H.request(client, 'fake/document', { uri = vim.uri_from_bufnr(rbuf) })
  H.eq('total = 0\nprint(total)\nx = count + 1\n', doc, 'the server saw the applied edit')
end)

H.test('the next use after an applied edit is shown; <Esc> dismisses it with didReject and Tab is the user\'s again', function()
  local rbuf = vim.api.nvim_get_current_buf()
  local shown = H.wait_for(function() local c = next_edit.current() return c and c.edit.range.start.line == 2 and c end, 5000, 'the following edit')
  H.type('<Esc>')
  H.eq(nil, next_edit.current(), 'dismissed')
  H.eq(nil, view.drawn(rbuf), 'nothing drawn')
  local rej = last_of(log(), 'hearth/didReject')
  H.eq(shown.edit.id, rej and rej.params.id, 'didReject names the edit')
  H.ok(vim.fn.maparg('<Tab>', 'n', false, true).buffer ~= 1, 'Tab no longer mapped for the buffer')
  H.eq({ 'total = 0', 'print(total)', 'x = count + 1' }, vim.api.nvim_buf_get_lines(rbuf, 0, -1, false), 'untouched')
end)

H.test('an insertion on the cursor line after the cursor is drawn as ghost text; Tab applies it at once', function()
  local rbuf = vim.api.nvim_get_current_buf()
  H.type('Gotodo<Esc>0', 50)
  local shown = H.wait_for(function() local c = next_edit.current() return c and c.edit.newText == ' done' and c end, 5000, 'the insertion')
  local marks = vim.api.nvim_buf_get_extmarks(rbuf, view.ns, 0, -1, { details = true })
  local ghost = vim.tbl_filter(function(m) return m[4].virt_text and m[4].virt_text[#m[4].virt_text][2] == 'HearthGhost' end, marks)[1]
  H.ok(ghost, 'the new text in the ghost text highlight: ' .. vim.inspect(marks))
  H.ok(view.drawn(rbuf):match('Tab: apply'), 'the cursor is on it: Tab applies')
  H.type('<Tab>')
  H.eq('todo done', vim.api.nvim_buf_get_lines(rbuf, 3, 4, false)[1], 'applied at the end of the line')
  H.eq(shown.edit.id, last_of(log(), 'hearth/didAccept').params.id, 'didAccept names it')
  H.type('dd', 50)   -- no todo line left: the renames come back
end)

H.test('typing elsewhere dismisses the edit shown; with next_edit off nothing is asked', function()
  local rbuf = vim.api.nvim_get_current_buf()
  H.type('ggA ', 50)
  H.type('<BS><Esc>', 50)
  H.wait_for(function() return next_edit.current() end, 5000, 'the edit asked again after typing')
  local rejects = count(log(), 'hearth/didReject')
  H.type('Go# note<Esc>', 50)
  H.ok(count(log(), 'hearth/didReject') > rejects, 'typing rejected the edit shown')
  opts.next_edit.enabled = false
  H.sleep(300)
  next_edit.dismiss()
  local asked = count(log(), 'hearth/nextEdit')
  H.type('ggcwsum<Esc>', 50)
  H.sleep(400)
  H.eq(asked, count(log(), 'hearth/nextEdit'), 'no request with next_edit off')
  H.eq(nil, next_edit.current(), 'nothing shown')
  vim.cmd('buffer ' .. buf)
  H.eq(nil, view.drawn(rbuf), 'nothing drawn')
end)

H.test('a missing binary gives one clear error', function()
  local messages = {}
  local notify = vim.notify
  vim.notify = function(msg, level) messages[#messages + 1] = { msg, level } end
  hearth.setup({ cmd = { '/nonexistent/hearth', 'lsp' } })
  vim.cmd('edit ' .. dir .. '/other.c')
  vim.bo.filetype = 'c'
  vim.cmd('edit ' .. dir .. '/third.c')
  vim.bo.filetype = 'c'
  H.sleep(100)   -- attaching is scheduled after FileType
  vim.notify = notify
  H.eq(1, #messages, 'one message: ' .. vim.inspect(messages))
  H.ok(messages[1][1]:match("cannot find '/nonexistent/hearth'"), messages[1][1])
  H.eq(vim.log.levels.ERROR, messages[1][2], 'error level')
  vim.cmd('checkhealth hearth')
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  H.ok(report:match("ERROR.-'/nonexistent/hearth' is not executable or not on PATH"), report)
end)

H.run('hearth.nvim with the scripted server')
