-- What differs between Neovim 0.7 and 0.10+ in the APIs the plugin uses, in one place:
-- method-call style of the LSP client object (0.11 wants client:request), starting a
-- client, finding clients, and whether extmarks can hold inline virtual text.
local M = {}

local has = function(v) return vim.fn.has(v) == 1 end

M.inline_virt_text = has('nvim-0.10')
local colon_methods = has('nvim-0.11')

function M.request(client, method, params, handler, bufnr)
  if colon_methods then return client:request(method, params, handler, bufnr) end
  return client.request(method, params, handler, bufnr)
end

function M.notify(client, method, params)
  if colon_methods then return client:notify(method, params) end
  return client.notify(method, params)
end

function M.cancel_request(client, id)
  if colon_methods then return client:cancel_request(id) end
  return client.cancel_request(id)
end

function M.get_client(id)
  return vim.lsp.get_client_by_id(id)
end

function M.clients_of(bufnr, name)
  local all = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr, name = name })
    or vim.lsp.buf_get_clients(bufnr)
  local out = {}
  for _, c in pairs(all) do
    if c.name == name then out[#out + 1] = c end
  end
  return out
end

-- Starts (or reuses) the client for `bufnr` and attaches it. 0.8+ has vim.lsp.start,
-- which reuses a running client of the same name and root; 0.7 needs start_client once
-- and buf_attach_client for every buffer.
local started_id
function M.start(config, bufnr)
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  if not started_id or not vim.lsp.get_client_by_id(started_id) then
    started_id = vim.lsp.start_client(config)
    if not started_id then return nil end
  end
  vim.lsp.buf_attach_client(bufnr, started_id)
  return started_id
end

function M.offset_encoding(client)
  return (client and client.offset_encoding) or 'utf-16'
end

return M
