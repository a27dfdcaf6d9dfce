-- Unit tests of the plugin's pure parts: position encodings, ghost placement, word and
-- line splitting, option validation.
local H = dofile(vim.env.HEARTH_TEST_DIR .. '/harness.lua')
local text = require('hearth.text')
local config = require('hearth.config')

H.test('units and byte columns in utf-8, utf-16 and utf-32', function()
  local line = 'aé€😀b'   -- 1 + 2 + 3 + 4 + 1 bytes; UTF-16: 1 + 1 + 1 + 2 + 1
  H.eq(11, #line, 'bytes')
  H.eq(6, text.units(line, #line, 'utf-16'), 'utf-16 units of the line')
  H.eq(5, text.units(line, #line, 'utf-32'), 'utf-32 units of the line')
  H.eq(6, text.units(line, 6, 'utf-8'), 'utf-8 units')
  H.eq(3, text.units(line, 6, 'utf-16'), 'units before the emoji')
  H.eq(5, text.units(line, 10, 'utf-16'), 'units after the emoji')
  for _, enc in ipairs({ 'utf-8', 'utf-16', 'utf-32' }) do
    for _, b in ipairs({ 0, 1, 3, 6, 10, 11 }) do
      H.eq(b, text.byte_col(line, text.units(line, b, enc), enc), enc .. ' round trip at byte ' .. b)
    end
  end
  H.eq(11, text.byte_col(line, 99, 'utf-16'), 'clamped to the line end')
end)

H.test('ghost: what is left of the item after the text already typed', function()
  local lines = { 'local x = hel' }
  H.eq('lo()', text.ghost(lines, 0, 13, 'hello()', { 0, 10 }), 'range from the word start')
  H.eq('hello()', text.ghost(lines, 0, 13, 'hello()', { 0, 13 }), 'empty range at the cursor')
  H.eq(nil, text.ghost(lines, 0, 13, 'world()', { 0, 10 }), 'typed text is not a prefix')
  H.eq(nil, text.ghost(lines, 0, 13, 'hel', { 0, 10 }), 'nothing left')
  H.eq(nil, text.ghost(lines, 0, 5, 'x', { 0, 10 }), 'range starting after the cursor')
  H.eq('c\nd', text.ghost({ 'xa', 'b' }, 1, 1, 'a\nbc\nd', { 0, 1 }), 'a range over two lines')
end)

H.test('accept word and accept line pieces', function()
  H.eq('foo', text.next_word('foo(bar) baz'), 'word')
  H.eq('(', text.next_word('(bar)'):sub(1, 1), 'symbols')
  H.eq('(', text.next_word('(bar)'), 'one symbol run')
  H.eq('  baz', text.next_word('  baz qux'), 'blanks and a word')
  H.eq('\n    ', text.next_word('\n    return x'), 'a line break with the indentation')
  H.eq('x = 1', text.next_line('x = 1\ny = 2'), 'rest of the line')
  H.eq('\ny = 2', text.next_line('\ny = 2\nz'), 'at a break: the next line')
  H.eq({ 3, 3 }, text.end_of(1, 4, 'ab\ncde\nfgh'), 'end of a three-line insert at row 1')
  H.eq({ 1, 6 }, text.end_of(1, 4, 'ab'), 'end of a one-line insert')
  H.eq({ 'a', '', 'b' }, text.split_lines('a\n\nb'), 'split keeps empty lines')
end)

H.test('options: defaults, lists replace, wrong types are named', function()
  local o = config.merge({ cmd = { '/opt/hearth' }, args = { '--model', 'm.gguf' }, debounce_ms = 10 })
  H.eq({ '/opt/hearth' }, o.cmd, 'cmd replaced')
  H.eq(10, o.debounce_ms, 'debounce')
  H.eq(250, o.cursor_rest_ms, 'cursor rest default')
  H.eq('<Tab>', o.keys.accept, 'default key kept')
  H.ok(config.filetype_enabled(o, 'python'), 'python on by default')
  H.ok(not config.filetype_enabled(o, 'markdown'), 'markdown excluded')
  H.ok(not config.filetype_enabled(config.merge({ filetypes = { 'c' } }), 'python'), 'explicit list')
  local ok, err = pcall(config.merge, { debounce_ms = 'fast' })
  H.ok(not ok and err:match('debounce_ms must be a number, got string'), 'error names the option: ' .. tostring(err))
  ok, err = pcall(config.merge, { cursor_rest_ms = '1s' })
  H.ok(not ok and err:match('cursor_rest_ms must be a number'), 'cursor_rest_ms checked: ' .. tostring(err))
  ok, err = pcall(config.merge, { keys = { accept = 3 } })
  H.ok(not ok and err:match('keys.accept'), 'error names the key option: ' .. tostring(err))
  ok, err = pcall(config.merge, { cmd = {} })
  H.ok(not ok and err:match('cmd must name'), 'empty cmd refused')
end)

H.run('hearth.nvim unit tests')
