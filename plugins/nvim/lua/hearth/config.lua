-- Options of require('hearth').setup{...}: defaults, merge and validation. A wrong type
-- is an error naming the option, raised by setup() before anything starts.
local M = {}

M.defaults = {
  cmd = { 'hearth', 'lsp' },       -- the shim that connects to (or starts) the daemon
  args = {},                        -- more arguments for `hearth lsp` (--model, ...)
  filetypes = nil,                  -- nil: every filetype except those in `exclude`
  exclude = { 'help', 'markdown', 'text', 'gitcommit', 'TelescopePrompt', 'hearth' },
  debounce_ms = 75,
  cursor_rest_ms = 250,             -- report a cursor at rest on a new line after this long (0: never)
  max_lines = 8,                    -- show at most this many lines of a suggestion
  auto = true,                      -- ask while typing (else only on keys.trigger)
  init_options = {},                -- sent as initializationOptions
  log_file = nil,                   -- named in error messages when the daemon fails
  next_edit = {                     -- hearth/nextEdit: the edit you are likely to make next
    enabled = true,
    keys = { tab = '<Tab>', dismiss = '<Esc>' },   -- mapped only while an edit shows
  },
  keys = {
    accept = '<Tab>',               -- only while a suggestion shows; otherwise the key's own job
    accept_word = '<M-Right>',
    accept_line = '<M-Down>',
    dismiss = '<C-]>',
    trigger = '<M-\\>',              -- ask now: several candidates
    next = '<M-n>',                   -- cycle through them
    prev = '<M-p>',
  },
}

local function check(path, value, kind)
  if value ~= nil and type(value) ~= kind then
    error(string.format('hearth.setup: option %s must be a %s, got %s', path, kind, type(value)), 3)
  end
end

function M.merge(user)
  user = user or {}
  check('opts', user, 'table')
  check('cmd', user.cmd, 'table')
  check('args', user.args, 'table')
  check('filetypes', user.filetypes, 'table')
  check('exclude', user.exclude, 'table')
  check('debounce_ms', user.debounce_ms, 'number')
  check('cursor_rest_ms', user.cursor_rest_ms, 'number')
  check('max_lines', user.max_lines, 'number')
  check('auto', user.auto, 'boolean')
  check('init_options', user.init_options, 'table')
  check('log_file', user.log_file, 'string')
  check('keys', user.keys, 'table')
  check('next_edit', user.next_edit, 'table')
  if user.next_edit then
    check('next_edit.enabled', user.next_edit.enabled, 'boolean')
    check('next_edit.keys', user.next_edit.keys, 'table')
  end
  local o = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), user)
  -- Lists replace, they do not merge index by index.
  for _, k in ipairs({ 'cmd', 'args', 'filetypes', 'exclude' }) do
    if user[k] then o[k] = vim.deepcopy(user[k]) end
  end
  if #o.cmd == 0 then error('hearth.setup: option cmd must name the hearth binary', 2) end
  if o.max_lines < 1 then error('hearth.setup: option max_lines must be at least 1', 2) end
  for prefix, keys in pairs({ ['keys.'] = o.keys, ['next_edit.keys.'] = o.next_edit.keys }) do
    for name, key in pairs(keys) do
      if key ~= false and type(key) ~= 'string' then
        error(string.format('hearth.setup: option %s%s must be a key string or false', prefix, name), 2)
      end
    end
  end
  return o
end

function M.filetype_enabled(o, ft)
  if ft == nil or ft == '' then return false end
  if o.filetypes then return vim.tbl_contains(o.filetypes, ft) end
  return not vim.tbl_contains(o.exclude, ft)
end

return M
