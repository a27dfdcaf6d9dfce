-- Ghost text: the suggestion drawn at the cursor with extmarks in one namespace. The
-- first line goes inline at the cursor where Neovim supports inline virtual text (0.10+);
-- older versions overlay it at the cursor followed by the rest of the real line, so the
-- line reads as it will after accepting. Further lines are virtual lines below.
local compat = require('hearth.compat')

local M = {}

M.ns = vim.api.nvim_create_namespace('hearth_ghost')

vim.cmd('highlight default link HearthGhost Comment')

function M.clear(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
end

-- Draws `lines` (the suggestion split at newlines) at (row, col), 0-based bytes.
function M.show(bufnr, row, col, lines)
  M.clear(bufnr)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  local opts = { hl_mode = 'combine' }
  if lines[1] ~= '' then
    if compat.inline_virt_text then
      opts.virt_text = { { lines[1], 'HearthGhost' } }
      opts.virt_text_pos = 'inline'
    else
      local rest = line:sub(col + 1)
      opts.virt_text = { { lines[1], 'HearthGhost' } }
      if rest ~= '' then table.insert(opts.virt_text, { rest, 'Normal' }) end
      opts.virt_text_pos = 'overlay'
    end
  end
  if #lines > 1 then
    local virt_lines = {}
    for i = 2, #lines do virt_lines[#virt_lines + 1] = { { lines[i], 'HearthGhost' } } end
    opts.virt_lines = virt_lines
  end
  vim.api.nvim_buf_set_extmark(bufnr, M.ns, row, col, opts)
end

-- The suggestion as drawn, read back from the extmarks (for tests and statuslines).
function M.text(bufnr)
  local marks = vim.api.nvim_buf_get_extmarks(bufnr, M.ns, 0, -1, { details = true })
  if #marks == 0 then return nil end
  local d = marks[1][4]
  local parts = { d.virt_text and d.virt_text[1][1] or '' }
  for _, vl in ipairs(d.virt_lines or {}) do parts[#parts + 1] = vl[1][1] end
  return table.concat(parts, '\n'), { marks[1][2], marks[1][3] }
end

return M
