-- Inline completion in insert mode: debounced textDocument/inlineCompletion requests
-- (Neovim's own LSP client has none before 0.12, so the plugin sends them), ghost text,
-- typing through a suggestion, accept / accept word / accept line / dismiss, and the
-- feedback notifications. One suggestion at a time (there is one cursor); state is
-- touched only on the main loop (timers re-enter it with vim.schedule_wrap).
local compat = require('hearth.compat')
local editor = require('hearth.editor')
local ghost = require('hearth.ghost')
local text = require('hearth.text')

local M = {}

local opts               -- merged setup options
local timer              -- debounce timer (one, restarted on each change)
local pending            -- { client, id, bufnr } of the request in flight
local cur                -- the suggestion on screen, see show_candidate
M.last_error = nil       -- the last failed request's message (for :HearthStatus)
M.sent = {}              -- count of requests sent, by trigger kind (for tests and status)

function M.init(o) opts = o end

local function hearth_client(bufnr)
  return compat.clients_of(bufnr, 'hearth')[1]
end

local function in_insert_mode()
  return vim.api.nvim_get_mode().mode:sub(1, 1) == 'i'
end

local function cancel_pending()
  if pending then
    pcall(compat.cancel_request, pending.client, pending.id)
    pending = nil
  end
end

local function stop_timer()
  if timer then timer:stop() end
end

local function render()
  ghost.show(cur.bufnr, cur.row, cur.col, text.split_lines(cur.ghost))
end

-- hearth/didAccept and hearth/didReject name the item by the id the daemon put in its
-- command's argument, and by its text and range.
local function feedback_params(c, accepted_length)
  local p = { uri = c.uri, insertText = c.text, range = c.item.range, acceptedLength = accepted_length }
  local cmd = c.item.command
  local arg = type(cmd) == 'table' and type(cmd.arguments) == 'table' and cmd.arguments[1]
  if type(arg) == 'table' and type(arg.id) == 'string' then p.id = arg.id end
  return p
end

local accept_command = 'hearth.acceptCompletion'

-- Ends the suggestion on screen. An accepted item runs the daemon's accept command when
-- it carries one (as VS Code does), else hearth/didAccept is sent; a suggestion of which
-- nothing was taken is reported with hearth/didReject.
local function finish(accepted)
  if not cur then return end
  local c = cur
  cur = nil
  ghost.clear(c.bufnr)
  local client = compat.get_client(c.client_id)
  if not client then return end
  if accepted then
    local cmd = c.item.command
    if type(cmd) == 'table' and cmd.command == accept_command then
      compat.request(client, 'workspace/executeCommand', { command = cmd.command, arguments = cmd.arguments },
        function() end, c.bufnr)
    else
      compat.notify(client, 'hearth/didAccept', feedback_params(c, text.units(c.text, #c.text, compat.offset_encoding(client))))
    end
  elseif c.accepted == 0 then
    compat.notify(client, 'hearth/didReject', feedback_params(c))
  end
end

function M.dismiss()
  stop_timer()
  cancel_pending()
  finish(false)
end

function M.visible()
  return cur ~= nil and cur.bufnr == vim.api.nvim_get_current_buf()
end

function M.current() return cur end

local function limit_lines(s, n)
  local lines = text.split_lines(s)
  if #lines <= n then return s end
  return (table.concat(vim.list_slice(lines, 1, n), '\n'):gsub('%s+$', ''))
end

-- The usable items of a reply for the cursor at (row, col): each with its text, range
-- start in bytes, the bytes it replaces after the cursor, and what is left to show.
local function candidates(client, bufnr, row, col, result)
  local items = result and (result.items or result) or {}
  local enc = compat.offset_encoding(client)
  local out = {}
  for _, item in ipairs(type(items) == 'table' and items or {}) do
    local insert = type(item.insertText) == 'table' and item.insertText.value or item.insertText
    if type(insert) == 'string' and insert ~= '' then
      local start, replace_bytes = { row, col }, 0
      if type(item.range) == 'table' then
        local s, e = item.range.start, item.range['end']
        start = { s.line, text.byte_col(editor.line_at(bufnr, s.line), s.character, enc) }
        if e.line == row then
          replace_bytes = math.max(0, text.byte_col(editor.line_at(bufnr, row), e.character, enc) - col)
        end
      end
      local lines = vim.api.nvim_buf_get_lines(bufnr, start[1], row + 1, false)
      local rest = text.ghost(lines, row - start[1], col, insert, { 0, start[2] })
      if rest then
        out[#out + 1] = { item = item, insert = insert, start = start, replace_bytes = replace_bytes, rest = rest }
      end
    end
  end
  return out
end

-- Puts candidate `index` of `list` on screen at (row, col).
local function show_candidate(client, bufnr, row, col, list, index)
  local c = list[index]
  local shown = limit_lines(c.rest, opts.max_lines)
  cur = {
    bufnr = bufnr, uri = vim.uri_from_bufnr(bufnr), client_id = client.id, item = c.item,
    text = c.insert, start = c.start, replace_bytes = c.replace_bytes,
    -- insertText as it can be taken: cut to max_lines. `ghost` is what is left of it
    -- after the cursor; accepted counts the bytes that accepts inserted.
    shown = c.insert:sub(1, #c.insert - #c.rest) .. shown,
    row = row, col = col, ghost = shown, accepted = 0,
    tick = vim.api.nvim_buf_get_changedtick(bufnr),
    candidates = list, index = index, origin = { row, col },
  }
  render()
  compat.notify(client, 'textDocument/didShowCompletion', { item = c.item })
end

-- Shows the next (delta 1) or previous (-1) candidate of an invoked request, without
-- reporting the one it replaces (the user is choosing). Only with the cursor where the
-- request was made: the candidates were made for that point.
function M.cycle(delta)
  if not M.visible() or #cur.candidates < 2 or cur.accepted > 0 then return false end
  local row, col = editor.cursor()
  if row ~= cur.origin[1] or col ~= cur.origin[2] then return false end
  local client = compat.get_client(cur.client_id)
  if not client then return false end
  local n = #cur.candidates
  show_candidate(client, cur.bufnr, row, col, cur.candidates, (cur.index - 1 + delta) % n + 1)
  return true
end

-- kind: 1 = invoked (the user asked), 2 = automatic (typing).
function M.request(kind)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = hearth_client(bufnr)
  if not client or not in_insert_mode() then return false end
  cancel_pending()
  local row, col = editor.cursor()
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local enc = compat.offset_encoding(client)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = row, character = text.units(editor.line_at(bufnr, row), col, enc) },
    context = { triggerKind = kind },
  }
  local ok, id
  ok, id = compat.request(client, 'textDocument/inlineCompletion', params, function(err, result)
    if pending and pending.id == id then pending = nil end
    if err then
      -- -32800: cancelled by us, -32801: the document changed; both are expected.
      if err.code ~= -32800 and err.code ~= -32801 then M.last_error = err.message or vim.inspect(err) end
      return
    end
    if not vim.api.nvim_buf_is_valid(bufnr) or vim.api.nvim_get_current_buf() ~= bufnr
        or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick or not in_insert_mode() then
      return
    end
    local r, c = editor.cursor()
    if r ~= row or c ~= col then return end
    finish(false)
    local list = candidates(client, bufnr, row, col, result)
    if #list > 0 then show_candidate(client, bufnr, row, col, list, 1) end
  end, bufnr)
  if ok then
    pending = { client = client, id = id, bufnr = bufnr }
    M.sent[kind] = (M.sent[kind] or 0) + 1
  end
  return ok
end

function M.schedule()
  if not opts.auto then return end
  stop_timer()
  timer = timer or (vim.uv or vim.loop).new_timer()
  timer:start(opts.debounce_ms, 0, vim.schedule_wrap(function() M.request(2) end))
end

-- Text changed in insert mode: keep the suggestion if the user typed what it shows,
-- else drop it and ask again after the debounce.
function M.on_text_changed(bufnr)
  if cur and cur.bufnr == bufnr then
    local row, col = editor.cursor()
    local lines = vim.api.nvim_buf_get_lines(bufnr, cur.start[1], row + 1, false)
    local typed = row >= cur.start[1] and text.ghost(lines, row - cur.start[1], col, cur.shown .. '\0', { 0, cur.start[2] })
    local rest = typed and typed:sub(1, -2)
    -- The user typed on along the suggestion (the cursor did not go back): keep it.
    if rest and #rest <= #cur.ghost then
      cur.row, cur.col, cur.ghost = row, col, rest
      cur.tick = vim.api.nvim_buf_get_changedtick(bufnr)
      if rest == '' then
        finish(true)   -- typed in full: as good as accepted
        M.schedule()
      else
        render()
      end
      return
    end
    finish(false)
  end
  M.schedule()
end

-- Cursor moved without a text change: the suggestion no longer belongs there.
function M.on_cursor_moved(bufnr)
  if not cur or cur.bufnr ~= bufnr then return end
  if vim.api.nvim_buf_get_changedtick(bufnr) ~= cur.tick then return end  -- TextChangedI decides
  local row, col = editor.cursor()
  if row ~= cur.row or col ~= cur.col then finish(false) end
end

function M.on_insert_leave()
  M.dismiss()
end

-- Inserts `piece` (a prefix of the ghost) at the cursor; the whole ghost also replaces
-- what the item's range covers after the cursor.
local function insert(piece, whole)
  local c = cur
  local last = whole and c.col + c.replace_bytes or c.col
  vim.api.nvim_buf_set_text(c.bufnr, c.row, c.col, c.row, last, text.split_lines(piece))
  local e = text.end_of(c.row, c.col, piece)
  vim.api.nvim_win_set_cursor(0, { e[1] + 1, e[2] })
  c.accepted = c.accepted + #piece
  return e
end

function M.accept()
  if not M.visible() then return false end
  insert(cur.ghost, true)
  finish(true)
  return true
end

local function accept_piece(next_piece)
  if not M.visible() then return false end
  local piece = next_piece(cur.ghost)
  if piece == '' or piece == cur.ghost then return M.accept() end
  local e = insert(piece, false)
  cur.row, cur.col, cur.ghost = e[1], e[2], cur.ghost:sub(#piece + 1)
  cur.tick = vim.api.nvim_buf_get_changedtick(cur.bufnr)
  render()
  local client = compat.get_client(cur.client_id)
  if client then
    -- acceptedLength: UTF-16 code units of insertText from its start (LSP 3.18).
    local taken = cur.shown:sub(1, #cur.shown - #cur.ghost)
    compat.notify(client, 'textDocument/didPartiallyAcceptCompletion',
      { item = cur.item, acceptedLength = text.units(taken, #taken, 'utf-16') })
  end
  return true
end

function M.accept_word() return accept_piece(text.next_word) end
function M.accept_line() return accept_piece(text.next_line) end

return M
