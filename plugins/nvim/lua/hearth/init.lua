-- hearth for Neovim: require('hearth').setup{...} starts `hearth lsp` through vim.lsp for
-- the enabled filetypes and adds inline completion (ghost text), the selection commands
-- :HearthExplain / :HearthFix / :HearthAsk (answers stream into a scratch split),
-- :HearthCancel and :HearthStatus, tells the daemon where the cursor comes to rest
-- (hearth/cursorRest), and shows next-edit suggestions (hearth/nextEdit, next_edit.lua).
-- Works on Neovim 0.7 and 0.10+ (see compat.lua).
local chat = require('hearth.chat')
local compat = require('hearth.compat')
local completion = require('hearth.completion')
local config = require('hearth.config')
local cursor_rest = require('hearth.cursor_rest')
local ghost = require('hearth.ghost')
local next_edit = require('hearth.next_edit')

local M = {}

local opts
local warned_missing = false

local function log_hint()
  local where = opts.log_file and ('the daemon log ' .. opts.log_file .. ' and ') or ''
  return 'see ' .. where .. require('vim.lsp.log').get_filename()
end

local function progress_handler(err, result, ctx, cfg)
  if chat.on_progress(result) then return end
  local default = vim.lsp.handlers['$/progress']
  if default then return default(err, result, ctx, cfg) end
end

local function client_config(bufnr)
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.textDocument.inlineCompletion = { dynamicRegistration = false }
  local cmd = vim.list_extend(vim.deepcopy(opts.cmd), opts.args)
  local root = vim.fn.getcwd()
  return {
    name = 'hearth',
    cmd = cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = capabilities,
    init_options = opts.init_options,
    handlers = { ['$/progress'] = progress_handler },
    flags = { debounce_text_changes = 50 },
    -- The buffer open while the server started counts as just entered: a rest before
    -- the server could hear of it was not reported.
    on_init = function()
      vim.schedule(function() cursor_rest.entered(vim.api.nvim_get_current_buf()) end)
    end,
    on_exit = function(code, signal)
      if code ~= 0 or (signal and signal ~= 0) then
        vim.schedule(function()
          vim.notify(string.format('hearth: `%s` exited with code %d (signal %d); %s',
            table.concat(cmd, ' '), code, signal or 0, log_hint()), vim.log.levels.ERROR)
        end)
      end
    end,
  }
end

local function attach(bufnr)
  if vim.bo[bufnr].buftype ~= '' or not config.filetype_enabled(opts, vim.bo[bufnr].filetype) then return end
  if vim.fn.executable(opts.cmd[1]) ~= 1 then
    if not warned_missing then
      warned_missing = true
      vim.notify(string.format("hearth: cannot find '%s' (not executable or not on PATH); "
        .. "install hearth or pass setup{ cmd = { '/path/to/hearth', 'lsp' } }", opts.cmd[1]), vim.log.levels.ERROR)
    end
    return
  end
  if not compat.start(client_config(bufnr), bufnr) then
    vim.notify('hearth: the language client failed to start; ' .. log_hint(), vim.log.levels.ERROR)
    return
  end
  local group = vim.api.nvim_create_augroup('hearth_buf_' .. bufnr, { clear = true })
  local au = function(event, fn) vim.api.nvim_create_autocmd(event, { group = group, buffer = bufnr, callback = fn }) end
  au('TextChangedI', function() completion.on_text_changed(bufnr) end)
  au('TextChangedP', function() completion.on_text_changed(bufnr) end)
  au('CursorMovedI', function() completion.on_cursor_moved(bufnr) end)
  au({ 'InsertLeave', 'BufLeave' }, function() completion.on_insert_leave() end)
  au({ 'CursorMoved', 'CursorMovedI' }, function() cursor_rest.moved(bufnr) end)
  au({ 'TextChanged', 'TextChangedI', 'TextChangedP' }, function() next_edit.on_text_changed(bufnr) end)
  au({ 'CursorMoved', 'CursorMovedI' }, function() next_edit.on_cursor_moved(bufnr) end)
  au('BufLeave', function() next_edit.on_buf_leave(bufnr) end)
  au('BufEnter', function() cursor_rest.entered(bufnr) end)
  -- Attached after its BufEnter (attaching waits for FileType).
  if bufnr == vim.api.nvim_get_current_buf() then cursor_rest.entered(bufnr) end
end

-- Maps `key` in insert mode to `action` while a suggestion shows; otherwise the key does
-- what it did before (an earlier mapping of it, or its built-in meaning).
local function map_when_visible(key, action)
  if not key then return end
  local before = vim.fn.maparg(key, 'i', false, true)
  local function fallback()
    if before and before.callback then
      local keys = before.callback()
      if before.expr == 1 and type(keys) == 'string' then
        vim.api.nvim_feedkeys(before.replace_keycodes == 1 and vim.api.nvim_replace_termcodes(keys, true, false, true) or keys, 'n', false)
      end
      return
    end
    if before and before.rhs and before.rhs ~= '' then
      local rhs = before.rhs
      if before.expr == 1 then rhs = vim.api.nvim_eval(rhs) end
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(rhs, true, false, true), before.noremap == 1 and 'n' or 'm', false)
      return
    end
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), 'n', false)
  end
  vim.keymap.set('i', key, function()
    if completion.visible() and action() then return end
    fallback()
  end, { desc = 'hearth: ' .. key })
end

function M.setup(user_opts)
  opts = config.merge(user_opts)
  completion.init(opts)
  cursor_rest.init(opts)
  next_edit.init(opts)
  local group = vim.api.nvim_create_augroup('hearth', { clear = true })
  -- Scheduled: FileType can fire while the buffer is still being read (`syntax on` in an
  -- init file), when a client cannot attach to it yet.
  local function attach_later(buf)
    vim.schedule(function()
      if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype ~= '' then
        attach(buf)
      end
    end)
  end
  vim.api.nvim_create_autocmd('FileType', { group = group, callback = function(a) attach_later(a.buf) end })
  -- Buffers that got their filetype before setup ran (lazy loading, or setup after
  -- `syntax on` in an init file).
  for _, b in ipairs(vim.api.nvim_list_bufs()) do attach_later(b) end
  map_when_visible(opts.keys.accept, completion.accept)
  map_when_visible(opts.keys.accept_word, completion.accept_word)
  map_when_visible(opts.keys.accept_line, completion.accept_line)
  map_when_visible(opts.keys.dismiss, function() completion.dismiss() return true end)
  map_when_visible(opts.keys.next, function() return completion.cycle(1) end)
  map_when_visible(opts.keys.prev, function() return completion.cycle(-1) end)
  if opts.keys.trigger then
    vim.keymap.set('i', opts.keys.trigger, function() completion.request(1) end, { desc = 'hearth: suggest' })
  end
  local cmd = vim.api.nvim_create_user_command
  cmd('HearthExplain', function(a) chat.run('explain', a.line1, a.line2) end, { range = true, desc = 'hearth: explain the selected lines' })
  cmd('HearthFix', function(a) chat.run('fix', a.line1, a.line2) end, { range = true, desc = 'hearth: fix the selected lines' })
  cmd('HearthAsk', function(a) chat.run('ask', a.line1, a.line2, a.args) end, { range = true, nargs = '*', desc = 'hearth: ask about the selected lines' })
  cmd('HearthCancel', function() chat.cancel_all() end, { desc = 'hearth: stop the answers being written' })
  cmd('HearthStatus', function() M.status() end, { desc = 'hearth: show the daemon status' })
  return opts
end

-- Flattens a status reply into lines "key: value" (nested keys indented).
function M.format_status(v, indent, out)
  indent, out = indent or '', out or {}
  local keys = vim.tbl_keys(v)
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    local x = v[k]
    if type(x) == 'table' then
      out[#out + 1] = indent .. tostring(k) .. ':'
      M.format_status(x, indent .. '  ', out)
    else
      out[#out + 1] = indent .. tostring(k) .. ': ' .. tostring(x)
    end
  end
  return out
end

-- Asks hearth/status; `on_done(lines)` gets the report (default: shown with vim.notify).
function M.status(on_done)
  local client = compat.clients_of(vim.api.nvim_get_current_buf(), 'hearth')[1]
  on_done = on_done or function(lines) vim.notify(table.concat(lines, '\n'), vim.log.levels.INFO) end
  if not client then
    on_done({ 'hearth: not attached to this buffer' })
    return
  end
  compat.request(client, 'hearth/status', {}, function(err, result)
    local lines
    if err then lines = { 'hearth/status failed: ' .. (err.message or vim.inspect(err)) }
    else lines = M.format_status(type(result) == 'table' and result or { result = result }) end
    if completion.last_error then lines[#lines + 1] = 'last completion error: ' .. completion.last_error end
    on_done(lines)
  end, vim.api.nvim_get_current_buf())
end

M._options = function() return opts end   -- for :checkhealth

M.accept = completion.accept
M.accept_word = completion.accept_word
M.accept_line = completion.accept_line
M.dismiss = completion.dismiss
M.suggest = function() return completion.request(1) end
M.next = function() return completion.cycle(1) end
M.prev = function() return completion.cycle(-1) end
M.visible = completion.visible
M.next_edit = next_edit.current
M.dismiss_next_edit = next_edit.dismiss
M.ghost_text = function(bufnr) return ghost.text(bufnr or vim.api.nvim_get_current_buf()) end

return M
