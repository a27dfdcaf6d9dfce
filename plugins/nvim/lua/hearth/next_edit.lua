-- Next-edit suggestions: after a pause in editing (M.pause_ms), or when the cursor rests
-- after an edit not yet asked about, ask hearth/nextEdit at the cursor (a new change
-- cancels the request in flight); show the edit answered (next_edit_view.lua) until Tab
-- applies it, <Esc> (normal mode) dismisses it, or the user edits or leaves the buffer.
-- Tab and <Esc> are mapped for the buffer only while an edit shows, so they keep their
-- own meaning otherwise; with the cursor off the edit Tab jumps there, on it Tab applies.
-- Each edit shown ends once: hearth/didAccept or hearth/didReject with its id. State is
-- touched only on the main loop.
local compat = require('hearth.compat')
local editor = require('hearth.editor')
local text = require('hearth.text')
local view = require('hearth.next_edit_view')

local M = {}

local opts
local timer, rest_timer
local debouncing = false     -- the edit-pause timer runs
local pending                -- { client, id } of the request in flight
local cur                    -- the edit on screen (see show)
local seen_tick = {}         -- bufnr -> changedtick last handled (our own edits included)
local asked = {}             -- bufnr -> changedtick last asked about
local saved_maps = {}        -- the buffer's own mappings of our keys, put back afterwards
M.sent = 0                   -- requests sent (for tests)

function M.init(o) opts = o end

local function enabled() return opts and opts.next_edit.enabled end

local function uv() return vim.uv or vim.loop end

-- Pure: is the cursor (row, byte col) on the edit, and is the edit an insertion at or after
-- the cursor on its line (drawn as ghost text)?
function M.on_edit(e, row)
  return (row >= e.start[1] and row <= e.finish[1]) or row == e.show_row
end

function M.inline(e, row, col)
  return e.start[1] == e.finish[1] and e.start[2] == e.finish[2] and not e.new_text:find('\n')
    and e.start[1] == row and e.start[2] >= col
end

local function version(bufnr)
  return vim.lsp.util.buf_versions[bufnr]
end

local function advertised(client)
  local caps = client.server_capabilities or {}
  local methods = caps.experimental and caps.experimental.hearth and caps.experimental.hearth.methods
  return type(methods) == 'table' and vim.tbl_contains(methods, 'hearth/nextEdit')
end

local function stop(t) if t then t:stop() end end

local function cancel_pending()
  stop(timer)
  debouncing = false
  stop(rest_timer)
  if pending then
    pcall(compat.cancel_request, pending.client, pending.id)
    pending = nil
  end
end

local function render()
  local row, col = editor.cursor()
  local e = { start = cur.start, finish = cur.finish, new_text = cur.edit.newText, show_row = cur.show_row }
  e.inline = M.inline(e, row, col)
  e.tab = M.on_edit(e, row) and 'apply' or 'jump'
  view.show(cur.bufnr, e)
end

local function unmap(bufnr)
  for _, m in ipairs(saved_maps) do
    pcall(vim.keymap.del, m.mode, m.key, { buffer = bufnr })
    if m.before and vim.fn.exists('*mapset') == 1 then vim.fn.mapset(m.mode, false, m.before) end
  end
  saved_maps = {}
end

-- Ends the edit on screen: accepted or rejected, once.
local function finish(accepted)
  if not cur then return end
  local c = cur
  cur = nil
  view.clear(c.bufnr)
  unmap(c.bufnr)
  local client = compat.get_client(c.client_id)
  if client then
    compat.notify(client, accepted and 'hearth/didAccept' or 'hearth/didReject',
      { uri = c.edit.textDocument.uri, id = c.edit.id, insertText = c.edit.newText, range = c.edit.range })
  end
end

function M.dismiss() finish(false) end

function M.visible()
  return cur ~= nil and cur.bufnr == vim.api.nvim_get_current_buf()
end

function M.current() return cur end

local function apply()
  local c = cur
  if version(c.bufnr) ~= c.edit.textDocument.version then return finish(false) end
  vim.api.nvim_buf_set_text(c.bufnr, c.start[1], c.start[2], c.finish[1], c.finish[2], text.split_lines(c.edit.newText))
  seen_tick[c.bufnr] = vim.api.nvim_buf_get_changedtick(c.bufnr)
  local e = text.end_of(c.start[1], c.start[2], c.edit.newText)
  vim.api.nvim_win_set_cursor(0, { e[1] + 1, e[2] })
  finish(true)
  M.schedule(c.bufnr)   -- an applied edit is an edit: the next one may follow from it
end

-- Tab: jump to the edit, or apply it with the cursor on it. False: no edit here.
function M.tab()
  if not M.visible() then return false end
  local row = editor.cursor()
  if M.on_edit(cur, row) then
    apply()
  else
    local l = editor.line_at(cur.bufnr, cur.show_row)
    vim.api.nvim_win_set_cursor(0, { cur.show_row + 1, math.min(cur.show_col, #l) })
    render()
  end
  return true
end

-- Maps `key` in `mode` for the buffer while the edit shows; the buffer's own mapping of it
-- comes back afterwards (0.10+: mapset), a global one was never covered.
local function map(bufnr, mode, key, fn)
  if not key then return end
  local before = vim.fn.maparg(key, mode, false, true)
  saved_maps[#saved_maps + 1] = { mode = mode, key = key, before = (before and before.buffer == 1) and before or nil }
  vim.keymap.set(mode, key, fn, { buffer = bufnr, desc = 'hearth: next edit' })
end

local function show(client, bufnr, edit)
  finish(false)
  local enc = compat.offset_encoding(client)
  local s, f = edit.range.start, edit.range['end']
  local a = edit.showAt and edit.showAt.start or s
  cur = {
    bufnr = bufnr, client_id = client.id, edit = edit,
    start = { s.line, text.byte_col(editor.line_at(bufnr, s.line), s.character, enc) },
    finish = { f.line, text.byte_col(editor.line_at(bufnr, f.line), f.character, enc) },
    show_row = a.line, show_col = text.byte_col(editor.line_at(bufnr, a.line), a.character, enc),
  }
  render()
  local keys = opts.next_edit.keys
  -- Insert mode: a completion's ghost text on screen keeps Tab (completion.lua).
  local completion = require('hearth.completion')
  map(bufnr, 'n', keys.tab, function() M.tab() end)
  map(bufnr, 'i', keys.tab, function()
    if completion.visible() then completion.accept() else M.tab() end
  end)
  map(bufnr, 'n', keys.dismiss, function() M.dismiss() end)
end

-- The first edit of `result` made for this buffer's current version.
local function usable(result, uri, v)
  for _, e in ipairs(type(result) == 'table' and result.edits or {}) do
    if type(e) == 'table' and e.textDocument and e.textDocument.uri == uri and e.textDocument.version == v
        and type(e.newText) == 'string' and type(e.range) == 'table' then
      return e
    end
  end
end

function M.request(bufnr)
  if not enabled() or not vim.api.nvim_buf_is_valid(bufnr) or vim.api.nvim_get_current_buf() ~= bufnr then return false end
  local client = compat.clients_of(bufnr, 'hearth')[1]
  if not client or not advertised(client) then return false end
  cancel_pending()
  local row, col = editor.cursor()
  local uri = vim.uri_from_bufnr(bufnr)
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  asked[bufnr] = tick
  local params = {
    textDocument = { uri = uri, version = version(bufnr) },
    position = { line = row, character = text.units(editor.line_at(bufnr, row), col, compat.offset_encoding(client)) },
  }
  local ok, id
  ok, id = compat.request(client, 'hearth/nextEdit', params, function(err, result)
    if pending and pending.id == id then pending = nil end
    if err or not vim.api.nvim_buf_is_valid(bufnr) or vim.api.nvim_get_current_buf() ~= bufnr
        or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick then
      return
    end
    local edit = usable(result, uri, version(bufnr))
    if edit then show(client, bufnr, edit) end
  end, bufnr)
  if ok then
    pending = { client = client, id = id }
    M.sent = M.sent + 1
  end
  return ok
end

-- The pause after an edit: the cursor-rest moment, not the completion debounce, so that the
-- completion asked for at the same pause reaches the daemon first (both run at the same
-- priority there, in order) and its ghost text is not held up by a model call.
function M.pause_ms(o) return math.max(o.debounce_ms, o.cursor_rest_ms) end

function M.schedule(bufnr)
  if not enabled() then return end
  cancel_pending()
  timer = timer or uv().new_timer()
  debouncing = true
  timer:start(M.pause_ms(opts), 0, vim.schedule_wrap(function()
    debouncing = false
    M.request(bufnr)
  end))
end

-- The buffer's text changed (either mode): an edit on screen no longer fits; ask again
-- after the pause. A change already handled (our own edit, or TextChanged after the
-- insert mode that made it) is not a new one.
function M.on_text_changed(bufnr)
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  if seen_tick[bufnr] == tick then return end
  seen_tick[bufnr] = tick
  if cur and cur.bufnr == bufnr then finish(false) end
  M.schedule(bufnr)
end

-- The cursor moved: the hint follows (jump or apply); at rest, ask when the buffer changed
-- since it was last asked about and nothing shows.
function M.on_cursor_moved(bufnr)
  if cur and cur.bufnr == bufnr then render() end
  stop(rest_timer)
  if not enabled() or cur or pending or debouncing or opts.cursor_rest_ms <= 0 then return end
  rest_timer = rest_timer or uv().new_timer()
  rest_timer:start(opts.cursor_rest_ms, 0, vim.schedule_wrap(function()
    if vim.api.nvim_buf_is_valid(bufnr) and not cur and not pending
        and asked[bufnr] ~= vim.api.nvim_buf_get_changedtick(bufnr) then
      M.request(bufnr)
    end
  end))
end

function M.on_buf_leave(bufnr)
  if cur and cur.bufnr == bufnr then finish(false) end
end

return M
