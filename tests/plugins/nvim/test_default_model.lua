-- README's Neovim setup, `cmd = { hearth, 'lsp' }`, with no model named and only the
-- default model downloaded (run_default_model.sh prepares the tree): the daemon that
-- `hearth lsp` starts has that model.
local H = dofile(vim.env.HEARTH_TEST_DIR .. '/harness.lua')
local hearth = require('hearth')
local compat = require('hearth.compat')

local default_model = vim.env.HEARTH_DEFAULT_MODEL_LINK
local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
vim.cmd('cd ' .. dir)
hearth.setup({ cmd = { 'hearth', 'lsp' } })

H.test('the daemon started through hearth lsp loads the default model', function()
  H.eq(nil, vim.env.HEARTH_MODEL, 'HEARTH_MODEL')
  vim.fn.writefile({ 'def add(a, b):', '    return a + b' }, dir .. '/arith.py')
  vim.cmd('edit ' .. dir .. '/arith.py')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo.filetype = 'python'   -- -u NONE: no filetype detection
  local client = H.wait_for(function()
    local c = compat.clients_of(buf, 'hearth')[1]
    return c and c.server_capabilities and c
  end, 30000, 'the hearth client to initialize')
  local err, s = H.request(client, 'hearth/status', {}, 10000)
  H.eq(nil, err, 'hearth/status error')
  H.eq(default_model, s.modelPath, 'the model the daemon loaded')
  H.ok(type(s.model) == 'string' and s.model ~= '', 'a model name: ' .. vim.inspect(s.model))
  io.stdout:write(string.format('daemon model: %s (%s)\n', s.model, s.modelPath))
end)

H.run('hearth.nvim with only the default model')
