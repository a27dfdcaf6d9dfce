-- How a next edit looks, with extmarks in one namespace: the text it replaces highlighted
-- (HearthNextEditDelete), its new text after it (HearthNextEditInsert; an insertion at the
-- cursor as ghost text, HearthGhost), and a hint at the end of its line saying what Tab
-- does there. Neovim 0.10+ puts the new text inline; 0.7 at the end of the line. Further
-- lines of the new text are virtual lines below.
local compat = require('hearth.compat')
local text = require('hearth.text')

local M = {}

M.ns = vim.api.nvim_create_namespace('hearth_next_edit')

vim.cmd('highlight default link HearthNextEditDelete DiffDelete')
vim.cmd('highlight default link HearthNextEditInsert DiffAdd')
vim.cmd('highlight default link HearthNextEditHint Comment')
vim.cmd('highlight default link HearthGhost Comment')

function M.clear(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
end

-- e: { start = {row, col}, finish = {row, col} (0-based, bytes), new_text, show_row,
-- inline (an insertion at the cursor), tab ('jump' or 'apply') }.
function M.show(bufnr, e)
  M.clear(bufnr)
  local set = vim.api.nvim_buf_set_extmark
  local s, f = e.start, e.finish
  if s[1] ~= f[1] or s[2] ~= f[2] then
    set(bufnr, M.ns, s[1], s[2], { end_row = f[1], end_col = f[2], hl_group = 'HearthNextEditDelete' })
  end
  local lines = text.split_lines(e.new_text)
  local hl = e.inline and 'HearthGhost' or 'HearthNextEditInsert'
  local mark = { hl_mode = 'combine' }
  if lines[1] ~= '' then
    if compat.inline_virt_text then
      mark.virt_text, mark.virt_text_pos = { { lines[1], hl } }, 'inline'
    else
      mark.virt_text, mark.virt_text_pos = { { ' → ', 'HearthNextEditHint' }, { lines[1], hl } }, 'eol'
    end
  end
  if #lines > 1 then
    mark.virt_lines = {}
    for i = 2, #lines do mark.virt_lines[#mark.virt_lines + 1] = { { lines[i], hl } } end
  end
  if mark.virt_text or mark.virt_lines then set(bufnr, M.ns, f[1], f[2], mark) end
  local hint = e.tab == 'jump' and '  ⇥ Tab: jump to the edit' or '  ⇥ Tab: apply'
  set(bufnr, M.ns, e.show_row, 0, { virt_text = { { hint, 'HearthNextEditHint' } }, virt_text_pos = 'eol' })
end

-- What is drawn, read back (for tests and statuslines): the new text's first line and the hint.
function M.drawn(bufnr)
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, M.ns, 0, -1, { details = true })) do
    for _, chunk in ipairs(m[4].virt_text or {}) do out[#out + 1] = chunk[1] end
  end
  return #out > 0 and table.concat(out) or nil
end

return M
