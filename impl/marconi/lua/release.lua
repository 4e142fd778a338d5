-- Marconi SessionStore release (deregister_session): record and index entry
-- go together. KEYS[1] session record, KEYS[2] the tenant's session index
-- (same tag). ARGV[1] session id. Returns 1 if the record existed.
local n = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return n
