package preflight

import (
	"errors"
	"reflect"
	"testing"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/slot"
)

// The allowlist lets the checklist's reads through and nothing else.
func TestAllowedIsReadOnly(t *testing.T) {
	ok := []client.Cmd{
		{Prefix: []string{"PING"}},
		{Prefix: []string{"INFO", "cpu"}},
		{Prefix: []string{"SCAN", "0", "MATCH", "x*", "COUNT", "10"}},
		{Prefix: []string{"cluster", "shards"}},
		{Prefix: []string{"CLUSTER", "KEYSLOT"}, Args: []string{"k"}},
		{Prefix: []string{"MEMORY", "USAGE"}, Keys: []string{"k"}, Args: []string{"SAMPLES", "5"}},
		{Prefix: []string{"EVAL", probeScript, "2"}, Keys: probeKeys[:]},
		{Prefix: []string{"CONFIG", "GET", "min-replicas-to-write"}},
	}
	for _, c := range ok {
		if err := allowed(c); err != nil {
			t.Errorf("%v refused: %v", c, err)
		}
	}
	bad := []client.Cmd{
		{Prefix: []string{"SET"}, Keys: []string{"k"}, Args: []string{"v"}},
		{Prefix: []string{"DEL"}, Keys: []string{"k"}},
		{Prefix: []string{"FLUSHALL"}},
		{Prefix: []string{"CLUSTER", "SETSLOT"}, Args: []string{"1", "STABLE"}},
		{Prefix: []string{"CLUSTER", "RESET"}},
		{Prefix: []string{"MEMORY", "PURGE"}},
		{Prefix: []string{"CONFIG", "SET"}, Args: []string{"maxmemory", "1"}},
		{Prefix: []string{"CONFIG", "GET", "requirepass"}},
		{Prefix: []string{"CONFIG", "GET", "*"}},
		{Prefix: []string{"CONFIG", "GET", "save", "requirepass"}},
		{Prefix: []string{"EVAL", "return redis.call('DEL', KEYS[1])", "1"}, Keys: []string{"k"}},
		{Prefix: []string{"EVALSHA", "abc", "0"}},
		{},
	}
	for _, c := range bad {
		if err := allowed(c); !errors.Is(err, ErrNotReadOnly) {
			t.Errorf("%v allowed (err %v)", c, err)
		}
	}
}

// The probe's pair must span two slots, or the probe proves nothing.
func TestProbeKeysSpanSlots(t *testing.T) {
	if slot.Of(probeKeys[0]) == slot.Of(probeKeys[1]) {
		t.Fatalf("probe keys share slot %d", slot.Of(probeKeys[0]))
	}
	if slot.HashTag(probeKeys[0]) != probeKeys[0] || slot.HashTag(probeKeys[1]) != probeKeys[1] {
		t.Fatal("probe keys must be un-tagged")
	}
}

func TestOldLeasePatternFromKeyRule(t *testing.T) {
	if oldLeasePattern != "buzz:*:tunnel:*:lease" {
		t.Fatalf("pattern %q", oldLeasePattern)
	}
	if newKeyPrefix != "buzz:tunnel:" || leaseSuffix != ":lease" || generationSuffix != ":generation" {
		t.Fatalf("new key shape %q %q %q", newKeyPrefix, leaseSuffix, generationSuffix)
	}
}

func TestPairerFindsMisTaggedPairs(t *testing.T) {
	good := fencing.NewKeys(fencing.Session{Community: "c", ID: "s1"})
	bad := fencing.MisTaggedKeys(fencing.Session{Community: "c", ID: "s2"})
	lonely := fencing.NewKeys(fencing.Session{Community: "c", ID: "s3"})
	var p pairer
	p.add(good.Lease, bad.Generation, "buzz:tunnel:{c:s1}:other", "unrelated", lonely.Lease)
	if p.complete != 0 {
		t.Fatalf("complete %d before any pair closed", p.complete)
	}
	p.add(good.Generation, bad.Lease, good.Generation)
	want := [][2]string{{good.Lease, good.Generation}, {bad.Lease, bad.Generation}}
	if got := p.pairs(); !reflect.DeepEqual(got, want) || p.complete != 2 {
		t.Fatalf("pairs %v (complete %d), want %v", got, p.complete, want)
	}
}

func TestParseShards(t *testing.T) {
	// RESP2 shape: flat key/value arrays, as Valkey 8 answers over HELLO 2.
	resp2 := []any{
		[]any{"slots", []any{int64(0), int64(5460)}, "nodes", []any{
			[]any{"id", "aaa", "port", int64(7001), "ip", "10.0.0.1", "endpoint", "10.0.0.1", "role", "master", "replication-offset", int64(9), "health", "online"},
			[]any{"id", "bbb", "port", int64(7004), "ip", "10.0.0.4", "endpoint", "10.0.0.4", "role", "replica", "replication-offset", int64(9), "health", "online"},
		}},
		[]any{"slots", []any{int64(5461), int64(10922), int64(16000), int64(16383)}, "nodes", []any{
			[]any{"id", "ccc", "port", int64(7002), "tls-port", int64(8002), "ip", "10.0.0.2", "endpoint", "?", "role", "master", "health", "loading"},
		}},
	}
	got, err := parseShards(resp2, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []shardNode{
		{id: "aaa", addr: "10.0.0.1:7001", health: "online", primary: true, slots: 5461},
		{id: "ccc", addr: "10.0.0.2:7002", health: "loading", primary: true, slots: 5462 + 384},
		{id: "bbb", addr: "10.0.0.4:7004", health: "online"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	tls, err := parseShards(resp2, true)
	if err != nil || tls[1].addr != "10.0.0.2:8002" {
		t.Fatalf("tls-port not preferred: %+v %v", tls, err)
	}
	// RESP3 shape: maps.
	resp3 := []any{map[string]any{"slots": []any{int64(0), int64(16383)}, "nodes": []any{
		map[string]any{"id": "x", "port": int64(6379), "endpoint": "cache.example", "role": "master", "health": "online"},
	}}}
	if got, err := parseShards(resp3, false); err != nil || len(got) != 1 || got[0].addr != "cache.example:6379" || got[0].slots != 16384 {
		t.Fatalf("resp3: %+v %v", got, err)
	}
	if _, err := parseShards("nope", false); err == nil {
		t.Fatal("a string parsed as CLUSTER SHARDS")
	}
	noAddr := []any{[]any{"slots", []any{}, "nodes", []any{[]any{"id", "z", "role", "master"}}}}
	if _, err := parseShards(noAddr, false); err == nil {
		t.Fatal("a node without an address parsed")
	}
}

func TestEngineCPU(t *testing.T) {
	v, src, err := engineCPU(map[string]string{"used_cpu_sys": "9", "used_cpu_user": "9", "used_cpu_sys_main_thread": "1.5", "used_cpu_user_main_thread": "2.25"})
	if err != nil || v != 3.75 || src != "main thread" {
		t.Fatalf("main thread: %v %q %v", v, src, err)
	}
	v, src, err = engineCPU(map[string]string{"used_cpu_sys": "1", "used_cpu_user": "2"})
	if err != nil || v != 3 || src != "process" {
		t.Fatalf("process: %v %q %v", v, src, err)
	}
	if _, _, err := engineCPU(map[string]string{}); err == nil {
		t.Fatal("empty INFO cpu read")
	}
}

func TestTopKeysKeepsEveryBigKey(t *testing.T) {
	top := &topKeys{k: 2, threshold: 100}
	for i, b := range []int64{5, 500, 50, 101, 7, 300, 60} {
		top.add(checkKeySize(i, b))
	}
	var sizes []int64
	for _, k := range top.keys {
		sizes = append(sizes, k.Bytes)
	}
	if want := []int64{500, 300, 101, 60, 50}; !reflect.DeepEqual(sizes, want) {
		t.Fatalf("kept %v, want %v", sizes, want)
	}
}

func checkKeySize(i int, b int64) history.KeySize {
	return history.KeySize{Node: "n", Key: "k" + string(rune('a'+i)), Bytes: b}
}
