package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/internal/wait"
)

// preflightOut is the --json output, as a reader of it sees it.
type preflightOut struct {
	Endpoint, Server, Topology string
	Cleared                    bool
	Items                      []preflightItem
}

func runPreflight(t *testing.T, args ...string) (int, preflightOut, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"preflight"}, args...), &stdout, &stderr)
	var out preflightOut
	if strings.Contains(strings.Join(args, " "), "--json") && code != exitUsage {
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("preflight --json printed no JSON (%v):\n%s\n%s", err, stdout.String(), stderr.String())
		}
	}
	return code, out, stdout.String() + stderr.String()
}

func item(out preflightOut, id string) preflightItem {
	for _, it := range out.Items {
		if string(it.ID) == id {
			return it
		}
	}
	return preflightItem{}
}

// Bad input and an unreachable endpoint exit 2 with a message saying what
// to fix, before anything is read.
func TestPreflightBadInputExitsTwo(t *testing.T) {
	t.Setenv(fixtures.EnvEndpoint, "")
	closed := closedPort(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no endpoint", nil, "no endpoint"},
		{"not host:port", []string{"--endpoint", "localhost"}, `"localhost" is not host:port`},
		{"unreachable", []string{"--endpoint", closed}, "no endpoint answered"},
		{"bad size", []string{"--endpoint", closed, "--key-size-threshold", "lots"}, `bad size "lots"`},
		{"unknown item", []string{"--endpoint", closed, "--checks", "key-size,vibes"}, `unknown checklist item "vibes"`},
		{"interval too short", []string{"--endpoint", closed, "--cpu-interval", "1ms"}, "too short"},
		{"cpu limit", []string{"--endpoint", closed, "--cpu-limit", "120"}, "--cpu-limit"},
		{"odd pair", []string{"--endpoint", closed, "--pair", "a"}, "--pair takes two keys"},
		{"cert without key", []string{"--endpoint", closed, "--tls", "--cert", "c.pem"}, "both --cert and --key"},
		{"tls file without --tls", []string{"--endpoint", closed, "--cacert", "ca.pem"}, "without --tls"},
		{"missing CA file", []string{"--endpoint", closed, "--tls", "--cacert", "/nonexistent/ca.pem"}, "read CA certificate"},
		{"stray argument", []string{"--endpoint", closed, "extra"}, "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, msg := runPreflight(t, c.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, exitUsage, msg)
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("message %q does not contain %q", msg, c.want)
			}
		})
	}
	t.Run("env endpoint", func(t *testing.T) {
		t.Setenv(fixtures.EnvEndpoint, closed)
		if code, _, msg := runPreflight(t); code != exitUsage || !strings.Contains(msg, closed) {
			t.Fatalf("exit %d (%s): SLOTGATE_ENDPOINT not used", code, msg)
		}
	})
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"256MB": 256 << 20, "256 MiB": 256 << 20, "100kb": 100 << 10, "1G": 1 << 30, "4096": 4096, "12B": 12} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1MB", "0", "1.5GB", "ten"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

// preflight against a real 3×1 cluster: it passes on a clean keyspace and
// visits every primary (the keyless-SCAN trap would see a third of the
// keys), never writes, and fails on each seeded problem: a key above a
// lowered threshold, a live old-keyspace lease, a mis-tagged pair. The
// cross-slot probe is UNKNOWN on a standalone node (disabled mode cannot
// decide it).
func TestPreflightAgainstRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cluster, err := fixtures.Run(ctx, fixtures.ClusterSpec(3, 1))
	t.Cleanup(func() { _ = cluster.Close() })
	if errors.Is(err, fixtures.ErrMissingBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	pool, err := client.NewPool(ctx, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeCluster, Addrs: cluster.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close() })
	set := func(key, val string) {
		t.Helper()
		if _, err := pool.Do(ctx, client.NewCmd("SET", []string{key}, val)); err != nil {
			t.Fatalf("set %s: %v", key, err)
		}
	}
	// 300 plain keys over every shard, 40 sessions' new-keyspace pairs (the
	// live pairs keyslot-equality samples), one 200 KiB value.
	const plain, sessions = 300, 40
	for i := range plain {
		set(fmt.Sprintf("user:%d", i), "v")
	}
	for i := range sessions {
		k := fencing.NewKeys(fencing.Session{Community: "c", ID: fmt.Sprint(i)})
		set(k.Lease, "owner")
		set(k.Generation, "1")
	}
	set("blob", strings.Repeat("x", 200<<10))
	totalKeys := plain + 2*sessions + 1
	before := settledDirtyCounts(ctx, t, cluster)
	endpoint := cluster.Addrs()[1]

	began := time.Now()
	code, out, msg := runPreflight(t, "--endpoint", endpoint, "--cpu-interval", "300ms", "--json")
	t.Logf("clean cluster: exit %d in %v", code, time.Since(began).Round(time.Millisecond))
	if code != exitPass || !out.Cleared {
		t.Fatalf("clean cluster: exit %d, want 0\n%s", code, msg)
	}
	for _, it := range out.Items {
		if it.Status != "PASS" {
			t.Errorf("%s: %s — %s", it.ID, it.Status, it.Message)
		}
	}
	if ks := item(out, "key-size").Message; !strings.Contains(ks, fmt.Sprintf("%d keys over 3 node(s)", totalKeys)) {
		t.Errorf("key-size did not visit every primary's keys (%d): %s", totalKeys, ks)
	}
	if ev := strings.Join(item(out, "keyslot-equality").Evidence, "; "); !strings.Contains(ev, fmt.Sprintf("%d pairs from live keyspace", sessions)) {
		t.Errorf("live pairs not sampled: %s", ev)
	}
	if after := dirtyCounts(ctx, t, cluster); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("preflight wrote: rdb_changes_since_last_save %v → %v", before, after)
	}

	if ev := strings.Join(item(out, "durability").Evidence, "; "); !strings.Contains(ev, "1 of 1 replicas online") || !strings.Contains(ev, "min-replicas-to-write 0") {
		t.Errorf("durability did not read each primary's replica and min-replicas-to-write: %s", ev)
	}
	// Seeded failure 0: two replicas asked of primaries that have one.
	code, out, msg = runPreflight(t, "--endpoint", endpoint, "--checks", "durability", "--min-replicas", "2", "--json")
	if d := item(out, "durability"); code != exitGateFail || d.Status != "FAIL" || !strings.Contains(d.Counterexample, "need 2") {
		t.Errorf("too few replicas: exit %d, %+v\n%s", code, d, msg)
	}
	// Seeded failure 1: the 200 KiB value against a 100 KiB threshold.
	code, out, msg = runPreflight(t, "--endpoint", endpoint, "--checks", "key-size", "--key-size-threshold", "100KB", "--json")
	if ks := item(out, "key-size"); code != exitGateFail || ks.Status != "FAIL" || !strings.Contains(ks.Counterexample, "blob") {
		t.Errorf("big key: exit %d, %+v\n%s", code, ks, msg)
	}
	// Seeded failure 2: a live old-keyspace lease, on whichever shard.
	old := fencing.OldKeys(fencing.Session{Community: "c", ID: "legacy"})
	set(old.Lease, "owner")
	code, out, msg = runPreflight(t, "--endpoint", endpoint, "--checks", "old-keyspace-leases", "--json")
	if ol := item(out, "old-keyspace-leases"); code != exitGateFail || ol.Status != "FAIL" || !strings.Contains(ol.Counterexample, old.Lease) {
		t.Errorf("live old lease: exit %d, %+v\n%s", code, ol, msg)
	}
	// Seeded failure 3: a mis-tagged pair in the live keyspace.
	bad := fencing.MisTaggedKeys(fencing.Session{Community: "c", ID: "mistagged"})
	set(bad.Lease, "owner")
	set(bad.Generation, "1")
	code, out, msg = runPreflight(t, "--endpoint", endpoint, "--checks", "keyslot-equality", "--keyspace-pairs", "1000", "--json")
	if kq := item(out, "keyslot-equality"); code != exitGateFail || kq.Status != "FAIL" || !strings.Contains(kq.Counterexample, bad.Generation) {
		t.Errorf("mis-tagged pair: exit %d, %+v\n%s", code, kq, msg)
	}
	// The text checklist names the failure and what to do.
	code, _, msg = runPreflight(t, "--endpoint", endpoint, "--checks", "keyslot-equality", "--keyspace-pairs", "1000")
	t.Logf("text checklist with a mis-tagged pair:\n%s", msg)
	if code != exitGateFail || !strings.Contains(msg, "FAIL     keyslot-equality") || !strings.Contains(msg, "→ do:") || !strings.Contains(msg, "NOT CLEARED") {
		t.Errorf("text checklist: exit %d\n%s", code, msg)
	}

	standalone, err := fixtures.Run(ctx, fixtures.StandaloneSpec())
	t.Cleanup(func() { _ = standalone.Close() })
	if err != nil {
		t.Fatal(err)
	}
	code, out, msg = runPreflight(t, "--endpoint", standalone.Addrs()[0], "--cpu-interval", "200ms", "--json")
	if p := item(out, "crossslot-probe"); code != exitGateFail || p.Status != "UNKNOWN" {
		t.Errorf("standalone probe: exit %d, %+v\n%s", code, p, msg)
	}
	if k := item(out, "keyslot-equality"); k.Status != "PASS" || !strings.Contains(k.Message, "CRC16") {
		t.Errorf("standalone keyslot: %+v", k)
	}
	if d := item(out, "durability"); d.Status != "FAIL" || !strings.Contains(d.Counterexample, "0 replicas online") {
		t.Errorf("standalone without a replica: %+v", d)
	}
	code, _, msg = runPreflight(t, "--endpoint", standalone.Addrs()[0], "--cpu-interval", "200ms",
		"--checks", "topology,keyslot-equality,key-size,cpu-headroom,old-keyspace-leases")
	if code != exitPass {
		t.Errorf("standalone without the probe: exit %d\n%s", code, msg)
	}
}

// dirtyCounts is every node's rdb_changes_since_last_save: any write moves it.
func dirtyCounts(ctx context.Context, t *testing.T, topo *fixtures.Topology) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range topo.Nodes() {
		inf, err := n.Info(ctx, "persistence")
		if err != nil {
			t.Fatal(err)
		}
		out[n.Name()] = inf["rdb_changes_since_last_save"]
	}
	return out
}

// settledDirtyCounts waits until the replicas have applied the seeding
// writes (each replica's slave_repl_offset, read after its primary's
// master_repl_offset, has reached it), so a later change is preflight's.
func settledDirtyCounts(ctx context.Context, t *testing.T, topo *fixtures.Topology) map[string]string {
	t.Helper()
	err := wait.Within(ctx, 10*time.Second, 20*time.Millisecond, topo.ReplicasCaughtUp)
	if err != nil {
		t.Fatalf("replicas caught up with the seeding writes: %v", err)
	}
	return dirtyCounts(ctx, t, topo)
}

// closedPort returns a local address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
