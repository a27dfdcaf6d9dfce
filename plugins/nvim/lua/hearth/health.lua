-- :checkhealth hearth — is the binary there, does `hearth lsp` know its flags, is a client
-- attached to this buffer, and what this Neovim can draw. Uses vim.health (0.10+) or the
-- older `health` module (0.7).
local M = {}

local h = vim.health or require('health')
local start = h.start or h.report_start
local ok = h.ok or h.report_ok
local warn = h.warn or h.report_warn
local err = h.error or h.report_error
local info = h.info or h.report_info

function M.check()
  start('hearth')
  local opts = require('hearth')._options()
  if not opts then
    err('require("hearth").setup{} has not been called')
    return
  end
  local bin = opts.cmd[1]
  if vim.fn.executable(bin) ~= 1 then
    err(string.format("'%s' is not executable or not on PATH", bin),
      { "install hearth, or pass setup{ cmd = { '/path/to/hearth', 'lsp' } }" })
  else
    ok(string.format("'%s' found: %s", bin, vim.fn.exepath(bin)))
    local cmd = vim.list_extend(vim.deepcopy(opts.cmd), { '--help' })
    local help = vim.fn.system(cmd)
    if vim.v.shell_error ~= 0 then
      err(string.format("'%s' failed: %s", table.concat(cmd, ' '), vim.trim(help)))
    else
      ok(string.format("'%s' works", table.concat(cmd, ' ')))
    end
  end
  if vim.fn.has('nvim-0.10') == 1 then
    ok('ghost text: inline virtual text')
  else
    info('ghost text: overlay at the cursor (Neovim 0.10+ draws it inline)')
  end
  -- :checkhealth runs in a buffer of its own: look at every client named hearth.
  local all = vim.lsp.get_clients and vim.lsp.get_clients({ name = 'hearth' }) or vim.lsp.get_active_clients()
  local found = false
  for _, c in pairs(all) do
    if c.name == 'hearth' then
      found = true
      local n = vim.tbl_count(c.attached_buffers or {})
      ok(string.format('client %d running, attached to %d buffer(s), position encoding %s', c.id, n, c.offset_encoding or 'utf-16'))
    end
  end
  if not found then warn('no hearth client running (open a file of an enabled filetype)') end
  if opts.next_edit.enabled then
    local asks = false
    for _, c in pairs(all) do
      local caps = c.name == 'hearth' and c.server_capabilities or {}
      local m = caps.experimental and caps.experimental.hearth and caps.experimental.hearth.methods
      if type(m) == 'table' and vim.tbl_contains(m, 'hearth/nextEdit') then asks = true end
    end
    if asks or not found then
      ok('next edit: on (Tab jumps to the edit shown, Tab again applies it, <Esc> dismisses)')
    else
      warn('next edit: on, but the running daemon has no hearth/nextEdit (update hearth)')
    end
  else
    info('next edit: off (setup{ next_edit = { enabled = true } } turns it on)')
  end
  local e = require('hearth.completion').last_error
  if e then warn('last completion error: ' .. e) end
end

return M
