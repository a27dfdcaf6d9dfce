-- Pure text helpers of the plugin: LSP position encodings, where ghost text goes for an
-- inline completion item, and how accept-word / accept-line split a suggestion. No
-- editor state; every function takes what it needs (unit-tested headless).
local M = {}

-- Number of `encoding` units ('utf-8', 'utf-16', 'utf-32') in the first `byte_col` bytes
-- of `line`. A byte_col inside a character counts that character.
function M.units(line, byte_col, encoding)
  if encoding == 'utf-8' then return math.min(byte_col, #line) end
  local n, i = 0, 1
  while i <= byte_col and i <= #line do
    local b = line:byte(i)
    local len = b < 0x80 and 1 or b < 0xE0 and 2 or b < 0xF0 and 3 or 4
    n = n + ((encoding == 'utf-16' and len == 4) and 2 or 1)
    i = i + len
  end
  return n
end

-- The byte column of `units` code units into `line` (clamped to the line's end).
function M.byte_col(line, units, encoding)
  if encoding == 'utf-8' then return math.min(units, #line) end
  local n, i = 0, 1
  while i <= #line and n < units do
    local b = line:byte(i)
    local len = b < 0x80 and 1 or b < 0xE0 and 2 or b < 0xF0 and 3 or 4
    n = n + ((encoding == 'utf-16' and len == 4) and 2 or 1)
    i = i + len
  end
  return i - 1
end

function M.split_lines(s)
  local out = {}
  for piece in (s .. '\n'):gmatch('(.-)\n') do out[#out + 1] = piece end
  return out
end

-- The text of `lines` (0-based rows) from (r1, c1) to (r2, c2), byte columns.
local function slice(lines, r1, c1, r2, c2)
  if r1 == r2 then return (lines[r1 + 1] or ''):sub(c1 + 1, c2) end
  local parts = { (lines[r1 + 1] or ''):sub(c1 + 1) }
  for r = r1 + 1, r2 - 1 do parts[#parts + 1] = lines[r + 1] or '' end
  parts[#parts + 1] = (lines[r2 + 1] or ''):sub(1, c2)
  return table.concat(parts, '\n')
end

-- Where and what to show for `item` with the cursor at (row, col) (0-based row, byte
-- col). `start` is the item's range start in bytes ({row, col}, the cursor when the item
-- has no range), `replace_bytes` how many bytes after the cursor the item replaces.
-- The text from `start` to the cursor must be a prefix of insertText (the user typed
-- it, or the range starts before the cursor); nil when it is not, or nothing is left.
function M.ghost(lines, row, col, item_text, start)
  if start[1] > row or (start[1] == row and start[2] > col) then return nil end
  local typed = slice(lines, start[1], start[2], row, col)
  if item_text:sub(1, #typed) ~= typed then return nil end
  local rest = item_text:sub(#typed + 1)
  if rest == '' then return nil end
  return rest
end

-- The next piece of `ghost` that accept-word takes: a newline with the next line's
-- indentation, or leading blanks plus a run of word characters or of other symbols.
function M.next_word(ghost)
  local nl = ghost:match('^\r?\n[ \t]*')
  if nl then return nl end
  return ghost:match('^[ \t]*[%w_]+') or ghost:match('^[ \t]*[^%w_%s]+') or ghost:match('^[ \t]+') or ghost:sub(1, 1)
end

-- The next piece that accept-line takes: the rest of the current line; at a line break,
-- the break and the whole next line.
function M.next_line(ghost)
  if ghost:sub(1, 1) == '\n' then return '\n' .. (ghost:sub(2):match('^[^\n]*')) end
  return ghost:match('^[^\n]*')
end

-- Where the cursor ends after inserting `text` at (row, col): {row, col}, 0-based bytes.
function M.end_of(row, col, text)
  local parts = M.split_lines(text)
  if #parts == 1 then return { row, col + #parts[1] } end
  return { row + #parts - 1, #parts[#parts] }
end

return M
