-- want: lua/key-unbound
-- One undeclared entry in the iterated table makes the loop variable unproven.
for _, k in ipairs({KEYS[1], 'other'}) do
  redis.call('DEL', k)
end
return 0
