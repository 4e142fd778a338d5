package validate

import (
	"strconv"
	"strings"
)

// keySpec says which arguments of a command are keys, counted from 1 after the command
// name, in the shape of Valkey's COMMAND key specs: first, last (-1 = through the last
// argument) and step.
type keySpec struct {
	first, last, step int
}

// keyless commands touch no key; a script may call them freely.
var keyless = map[string]bool{
	"PING": true, "TIME": true, "ECHO": true, "PUBLISH": true, "DBSIZE": true, "INFO": true,
	// XINFO is a container command: the server's COMMAND reply gives its
	// top level no key specs (first = 0), as for every container, and the
	// hand table agrees with the server. Its subcommands' key (XINFO
	// GROUPS key) is not judged by the locality rule — a known gap, shared
	// with the server-table analysis.
	"XINFO": true,
}

// keyCommands is the HAND key-position table for the commands our scripts (and their
// likely neighbours) use: the fallback when no server is reachable (see Table; the
// authoritative table is the server's COMMAND reply, TableFromCommand). A command in
// neither table is reported as unverifiable: the validator fails closed rather than guess
// where its keys are. rows/locality proves every entry agrees with the server's key specs.
var keyCommands = handKeys()

func handKeys() map[string]keySpec {
	keyCommands := map[string]keySpec{}
	one := keySpec{1, 1, 1}
	for _, c := range strings.Fields(`GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX APPEND STRLEN
		INCR INCRBY INCRBYFLOAT DECR DECRBY SETRANGE GETRANGE SETBIT GETBIT BITCOUNT
		EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL PERSIST TYPE
		HGET HSET HSETNX HDEL HMGET HMSET HGETALL HEXISTS HINCRBY HINCRBYFLOAT HKEYS HVALS HLEN
		ZADD ZREM ZSCORE ZCARD ZCOUNT ZINCRBY ZRANK ZREVRANK ZRANGE ZREVRANGE ZRANGEBYSCORE
		ZREVRANGEBYSCORE ZRANGEBYLEX ZREMRANGEBYSCORE ZREMRANGEBYRANK ZPOPMIN ZPOPMAX
		SADD SREM SMEMBERS SISMEMBER SCARD SPOP SRANDMEMBER
		LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LRANGE LLEN LREM LTRIM LINDEX LSET
		XADD XLEN XRANGE XREVRANGE XTRIM XDEL XPENDING PFADD SPUBLISH`) {
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
	return keyCommands
}

// defaultTable is the hand table, for the package-level functions (no server).
var defaultTable = Hand("")

// isKeyPos reports whether argument n (1-based, after the command name) of a call with
// nargs such arguments is a key under spec.
func (s keySpec) isKeyPos(n, nargs int) bool {
	last := s.last
	if last < 0 {
		last = nargs
	}
	return n >= s.first && n <= last && (n-s.first)%s.step == 0
}

// scriptCommands carry their keys as numkeys followed by that many keys, right after the
// script (or function) argument: EVAL script numkeys key... arg....
var scriptCommands = map[string]bool{
	"EVAL": true, "EVALSHA": true, "EVAL_RO": true, "EVALSHA_RO": true, "FCALL": true, "FCALL_RO": true,
}

// IsScriptCommand reports whether name (any case) runs a script or function, whose keys are
// the declared KEYS of spec 000 §Axioms A2.
func IsScriptCommand(name string) bool { return scriptCommands[strings.ToUpper(name)] }

// CommandKeys returns the key arguments of one command in wire form (name first), from the
// same key-position table the Lua rule uses, plus EVAL/EVALSHA/FCALL's numkeys form. known
// is false for a command the table does not cover (the caller falls back to what the
// command declared). A keyless command is known with no keys. The runtime twin
// (validate/locality) shares this table, so static and runtime agree on what a key is.
func CommandKeys(wire []string) (keys []string, known bool) { return defaultTable.CommandKeys(wire) }

// CommandKeys is CommandKeys with t's command table.
func (t *Table) CommandKeys(wire []string) (keys []string, known bool) {
	if len(wire) == 0 {
		return nil, false
	}
	name := strings.ToUpper(wire[0])
	if scriptCommands[name] {
		if len(wire) < 3 {
			return nil, false
		}
		n, err := strconv.Atoi(wire[2])
		if err != nil || n < 0 || 3+n > len(wire) {
			return nil, false
		}
		return wire[3 : 3+n], true
	}
	spec, keyless, ok := t.spec(name)
	if keyless {
		return nil, true
	}
	if !ok {
		return nil, false
	}
	rest := wire[1:]
	for i, a := range rest {
		if spec.isKeyPos(i+1, len(rest)) {
			keys = append(keys, a)
		}
	}
	return keys, true
}
