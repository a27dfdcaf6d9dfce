-- :HearthExplain / :HearthFix / :HearthAsk: the daemon's hearth.explain / hearth.fix /
-- hearth.ask commands (workspace/executeCommand) on the selected lines; the answer streams
-- into a scratch split as work-done $/progress reports arrive, and the reply has it whole.
-- `q` or <C-c> in the split, :HearthCancel, or wiping the buffer cancels the request.
local compat = require('hearth.compat')
local text = require('hearth.text')

local M = {}

local streams = {}   -- token -> { buf, header_lines, text, client, id, state }
local seq = 0

local function render(s)
  if not vim.api.nvim_buf_is_valid(s.buf) then return end
  local lines = text.split_lines(s.text)
  if s.state == 'cancelled' then table.insert(lines, '') table.insert(lines, '(cancelled)') end
  if s.state == 'failed' then table.insert(lines, '') table.insert(lines, '(failed: ' .. s.error .. ')') end
  vim.bo[s.buf].modifiable = true
  vim.api.nvim_buf_set_lines(s.buf, s.header_lines, -1, false, lines)
  vim.bo[s.buf].modifiable = false
end

-- A progress value carries a text delta: {kind = "report", text = ...} for work-done
-- progress, {text = ...} for partial results; begin / end carry none.
-- Returns true when the token was one of ours (the caller hands others to the default).
function M.on_progress(result)
  local s = result and streams[result.token]
  if not s then return false end
  local v = result.value
  if type(v) == 'table' and (v.kind == nil or v.kind == 'report') and type(v.text) == 'string' and s.state == 'streaming' then
    s.text = s.text .. v.text
    render(s)
  end
  return true
end

local function cancel(token)
  local s = streams[token]
  if not s or s.state ~= 'streaming' then return end
  s.state = 'cancelled'
  pcall(compat.cancel_request, s.client, s.id)
  render(s)
end

function M.cancel_all()
  for token in pairs(streams) do cancel(token) end
end

-- Opens the scratch split below and returns its buffer; focus stays in the code.
local function scratch(title)
  local code_win = vim.api.nvim_get_current_win()
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  seq = seq + 1
  pcall(vim.api.nvim_buf_set_name, buf, string.format('hearth://answer/%d', seq))
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '# hearth: ' .. title, '' })
  vim.api.nvim_set_current_win(code_win)
  return buf
end

-- action: 'explain' | 'fix' | 'ask'; line1/line2: 1-based inclusive lines of the selection.
function M.run(action, line1, line2, question)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = compat.clients_of(bufnr, 'hearth')[1]
  if not client then
    vim.notify('hearth: no hearth client in this buffer (is its filetype enabled in setup?)', vim.log.levels.ERROR)
    return nil
  end
  local prompt = question
  if action == 'ask' and (prompt == nil or prompt == '') then
    prompt = vim.fn.input('Ask hearth: ')
    if prompt == '' then return nil end
  end
  local enc = compat.offset_encoding(client)
  local last = vim.api.nvim_buf_get_lines(bufnr, line2 - 1, line2, false)[1] or ''
  local range = { start = { line = line1 - 1, character = 0 }, ['end'] = { line = line2 - 1, character = text.units(last, #last, enc) } }
  local title = action == 'ask' and ('Ask: ' .. prompt) or (action == 'fix' and 'Fix' or 'Explain')
  local buf = scratch(string.format('%s (%s:%d-%d)', title, vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t'), line1, line2))
  seq = seq + 1
  local token = string.format('hearth-chat-%d-%d', vim.fn.getpid(), seq)
  local s = { buf = buf, header_lines = 2, text = '', client = client, state = 'streaming' }
  streams[token] = s
  for _, key in ipairs({ 'q', '<C-c>' }) do
    vim.api.nvim_buf_set_keymap(buf, 'n', key, '', { noremap = true, nowait = true, callback = function() cancel(token) end })
  end
  vim.api.nvim_create_autocmd('BufWipeout', { buffer = buf, once = true, callback = function()
    cancel(token)
    streams[token] = nil
  end })
  local params = {
    command = 'hearth.' .. action,
    arguments = { { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, range = range,
                    prompt = action == 'ask' and prompt or nil } },
    workDoneToken = token,
  }
  local ok, id = compat.request(client, 'workspace/executeCommand', params, function(err, result)
    if s.state ~= 'streaming' then return end
    if err then
      s.state, s.error = 'failed', err.message or vim.inspect(err)
    else
      -- The reply's full text wins over the deltas (a lost notification costs nothing).
      if type(result) == 'table' and type(result.text) == 'string' and #result.text >= #s.text then s.text = result.text end
      s.state = 'done'
    end
    render(s)
  end, bufnr)
  if not ok then
    s.state, s.error = 'failed', 'the client is not running'
    render(s)
  end
  s.id = id
  return token, buf
end

function M.any_streaming()
  for _, s in pairs(streams) do
    if s.state == 'streaming' then return true end
  end
  return false
end

function M.state(token)
  local s = streams[token]
  return s and s.state, s and s.text
end

return M
