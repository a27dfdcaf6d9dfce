-- hearth/cursorRest: where the cursor came to rest, so the daemon can prefill the
-- fill-in-the-middle window there before the user types (the first suggestion after
-- opening a file or jumping would otherwise pay for that prefill). One timer for the one
-- cursor, restarted on every move; a rest is reported when it is on another line than the
-- last one reported for that buffer, or the buffer was just entered. Same-line moves
-- (typing) are the daemon's to handle. State is touched only on the main loop.
local compat = require('hearth.compat')
local text = require('hearth.text')

local M = {}

local opts
local timer
local sent = {}   -- bufnr -> { client_id, line } last reported

function M.init(o) opts = o end

-- Visual and select mode: a selection is no resting point.
local function selecting()
  return vim.api.nvim_get_mode().mode:find('^[vVsS\22\19]') ~= nil
end

local function report(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.api.nvim_get_current_buf() ~= bufnr or selecting() then return end
  local client = compat.clients_of(bufnr, 'hearth')[1]
  -- server_capabilities is set once the server answered initialize: nothing may go before.
  if not client or not client.server_capabilities then return end
  local c = vim.api.nvim_win_get_cursor(0)
  local row, col = c[1] - 1, c[2]
  local last = sent[bufnr]
  if last and last.client_id == client.id and last.line == row then return end
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = row, character = text.units(line, col, compat.offset_encoding(client)) },
  }
  -- false: the client is stopping.
  if compat.notify(client, 'hearth/cursorRest', params) then
    sent[bufnr] = { client_id = client.id, line = row }
  end
end

-- The cursor moved in `bufnr` (an attached buffer).
function M.moved(bufnr)
  if timer then timer:stop() end
  if not opts or opts.cursor_rest_ms <= 0 then return end
  timer = timer or (vim.uv or vim.loop).new_timer()
  timer:start(opts.cursor_rest_ms, 0, vim.schedule_wrap(function() report(bufnr) end))
end

-- `bufnr` was opened or entered: its first rest is reported even on the line last reported
-- for it (the daemon may have spent that window on another file since).
function M.entered(bufnr)
  sent[bufnr] = nil
  M.moved(bufnr)
end

return M
