-- The editor state the completion and next-edit modules both read: the current window's cursor
-- and a buffer's line, 0-based as LSP counts them (text.lua holds what needs no editor state).
local M = {}

-- The current window's cursor: row and byte column, both 0-based.
function M.cursor()
  local c = vim.api.nvim_win_get_cursor(0)
  return c[1] - 1, c[2]
end

-- Line `row` (0-based) of the buffer, '' past its end.
function M.line_at(bufnr, row)
  return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
end

return M
