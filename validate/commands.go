package validate

import "strings"

// keySpec says which arguments of a command are keys, counted from 1 after the command
// name, in the shape of Valkey's COMMAND key specs: first, last (-1 = through the last
// argument) and step.
type keySpec struct {
	first, last, step int
}

// keyless commands touch no key; a script may call them freely.
var keyless = map[string]bool{
	"PING": true, "TIME": true, "ECHO": true, "PUBLISH": true, "DBSIZE": true, "INFO": true,
}

// keyCommands is the key-position table for the commands our scripts (and their likely
// neighbours) use. A command in neither table is reported as unverifiable: the validator
// fails closed rather than guess where its keys are.
var keyCommands = map[string]keySpec{}

func init() {
	one := keySpec{1, 1, 1}
	for _, c := range strings.Fields(`GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX APPEND STRLEN
		INCR INCRBY INCRBYFLOAT DECR DECRBY SETRANGE GETRANGE SETBIT GETBIT BITCOUNT
		EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL PERSIST TYPE
		HGET HSET HSETNX HDEL HMGET HMSET HGETALL HEXISTS HINCRBY HINCRBYFLOAT HKEYS HVALS HLEN
		ZADD ZREM ZSCORE ZCARD ZCOUNT ZINCRBY ZRANK ZREVRANK ZRANGE ZREVRANGE ZRANGEBYSCORE
		ZREVRANGEBYSCORE ZRANGEBYLEX ZREMRANGEBYSCORE ZREMRANGEBYRANK ZPOPMIN ZPOPMAX
		SADD SREM SMEMBERS SISMEMBER SCARD SPOP SRANDMEMBER
		LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LRANGE LLEN LREM LTRIM LINDEX LSET
		XADD XLEN XRANGE XREVRANGE XTRIM XDEL PFADD SPUBLISH`) {
		keyCommands[c] = one
	}
	all := keySpec{1, -1, 1}
	for _, c := range strings.Fields(`DEL UNLINK EXISTS MGET TOUCH SINTER SUNION SDIFF
		SINTERSTORE SUNIONSTORE SDIFFSTORE PFCOUNT PFMERGE`) {
		keyCommands[c] = all
	}
	for _, c := range strings.Fields(`RENAME RENAMENX SMOVE RPOPLPUSH LMOVE COPY`) {
		keyCommands[c] = keySpec{1, 2, 1}
	}
	keyCommands["MSET"] = keySpec{1, -1, 2}
	keyCommands["MSETNX"] = keySpec{1, -1, 2}
}

// isKeyPos reports whether argument n (1-based, after the command name) of a call with
// nargs such arguments is a key under spec.
func (s keySpec) isKeyPos(n, nargs int) bool {
	last := s.last
	if last < 0 {
		last = nargs
	}
	return n >= s.first && n <= last && (n-s.first)%s.step == 0
}
