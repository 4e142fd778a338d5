package validate

import "testing"

// A COMMAND reply as impl/client normalises it: name, arity, flags, first, last, step, ….
func commandReply() []any {
	row := func(name string, first, last, step int64, flags ...string) []any {
		fs := make([]any, len(flags))
		for i, f := range flags {
			fs[i] = f
		}
		return []any{name, int64(-2), fs, first, last, step, []any{}}
	}
	return []any{
		row("mget", 1, -1, 1, "readonly"),
		row("mset", 1, -1, 2, "write"),
		row("get", 1, 1, 1, "readonly"),
		row("ssubscribe", 1, -1, 1, "pubsub"),
		row("eval", 0, 0, 0, "noscript", "movablekeys"),
		row("zunionstore", 1, 1, 1, "write", "movablekeys"),
		row("ping", 0, 0, 0, "fast"),
		nil, // COMMAND INFO of an unknown name
	}
}

func TestTableFromCommand(t *testing.T) {
	tb, err := TableFromCommand("test", commandReply())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		wire  []string
		keys  int
		known bool
	}{
		{[]string{"MGET", "a", "b", "c"}, 3, true},
		{[]string{"MSET", "a", "1", "b", "2"}, 2, true},
		{[]string{"PING"}, 0, true},
		{[]string{"EVAL", "return 1", "2", "a", "b", "x"}, 2, true}, // numkeys form, though movable
		{[]string{"ZUNIONSTORE", "d", "2", "a", "b"}, 0, false},     // movable: fail closed
		{[]string{"HGET", "h", "f"}, 0, false},                      // not in this table
	} {
		keys, known := tb.CommandKeys(tc.wire)
		if known != tc.known || len(keys) != tc.keys {
			t.Errorf("%v: keys %v known %v, want %d keys known %v", tc.wire, keys, known, tc.keys, tc.known)
		}
	}
	if all, _ := tb.multiKeyShape("SSUBSCRIBE"); !all {
		t.Error("SSUBSCRIBE should be a multi-key shape from the server's key specs")
	}
	if !tb.CanGroup("mget") || !tb.CanGroup("EVAL") || tb.CanGroup("GET") {
		t.Error("CanGroup")
	}
	if got := CheckLua("x.lua", "return redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], KEYS[3])", 1); len(got) != 1 || got[0].Rule != RuleUnknownCommand {
		t.Errorf("hand table on a movable command: %v", got)
	}
	if got := tb.CheckLua("x.lua", "return redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], KEYS[3])", 1); len(got) != 1 || got[0].Rule != RuleUnknownCommand {
		t.Errorf("server table on a movable command: %v", got)
	}
	for _, bad := range []any{nil, "x", []any{}, []any{[]any{"get", int64(2)}}, []any{[]any{"get", int64(2), []any{}, "1", int64(1), int64(1)}}} {
		if _, err := TableFromCommand("bad", bad); err == nil {
			t.Errorf("TableFromCommand(%v): no error", bad)
		}
	}
}

// Agree names every hand entry the server places differently, and nothing else.
func TestTableAgree(t *testing.T) {
	tb, err := TableFromCommand("test", commandReply())
	if err != nil {
		t.Fatal(err)
	}
	hand := &Table{keys: map[string]keySpec{"MGET": {1, -1, 1}, "MSET": {1, -1, 2}}, keylessCmds: map[string]bool{"PING": true}}
	if d := tb.Agree(hand); len(d) != 0 {
		t.Fatalf("agreeing tables: %v", d)
	}
	if d := tb.Agree(hand.With("MSET", 1, -1, 1)); len(d) != 1 || d[0].Command != "MSET" {
		t.Fatalf("drifted MSET: %v", d)
	}
	hand.keylessCmds["GET"] = true
	if d := tb.Agree(hand); len(d) != 1 || d[0].Command != "GET" {
		t.Fatalf("GET listed keyless: %v", d)
	}
}
