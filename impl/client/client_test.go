package client_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/internal/wait"
)

// deliveryTimeout bounds every wait for a pub/sub delivery or notice.
const deliveryTimeout = 5 * time.Second

// config is one row of the backend × protocol × mode table.
type config struct {
	backend  client.Backend
	protocol client.Protocol
	mode     client.Mode
}

func (c config) String() string {
	return fmt.Sprintf("%s/resp%d/%s", c.backend, c.protocol, c.mode)
}

func (c config) options(ts *testServers, name string) client.Options {
	o := client.Options{
		Backend:     c.backend,
		Mode:        c.mode,
		Protocol:    c.protocol,
		ClientName:  name,
		DialTimeout: 2 * time.Second,
		ReadTimeout: 3 * time.Second,
	}
	o.Addrs = c.topo(ts).Addrs()
	return o
}

// topo is the topology the config's clients talk to.
func (c config) topo(ts *testServers) *fixtures.Topology {
	if c.mode == client.ModeCluster {
		return ts.cluster
	}
	return ts.standalone
}

// nodes is every server the config's clients talk to.
func (c config) nodes(ts *testServers) []*fixtures.Node { return c.topo(ts).Nodes() }

func configs() []config {
	var out []config
	for _, b := range client.Backends {
		for _, p := range []client.Protocol{client.RESP2, client.RESP3} {
			for _, m := range []client.Mode{client.ModeSingle, client.ModeCluster} {
				out = append(out, config{backend: b, protocol: p, mode: m})
			}
		}
	}
	return out
}

// TestClient runs every behaviour against real servers for every config.
func TestClient(t *testing.T) {
	ts := startTestServers(t)
	for _, cfg := range configs() {
		t.Run(cfg.String(), func(t *testing.T) {
			before := len(goroutines())
			// Nested so that the clients' t.Cleanup runs before the count.
			t.Run("pool", func(t *testing.T) { testPool(t, ts, cfg) })
			t.Run("subscriber", func(t *testing.T) { testSubscriber(t, ts, cfg) })
			checkNoLeak(t, before)
		})
	}
}

// keyName makes a key or channel name unique to cfg.
func keyName(cfg config, parts ...string) string {
	return strings.ReplaceAll(cfg.String(), "/", ".") + ":" + strings.Join(parts, ":")
}

// nameInSlots returns a name derived from base whose slot lies in [lo, hi].
func nameInSlots(base string, lo, hi int) string {
	for i := 0; ; i++ {
		n := base + ":" + strconv.Itoa(i)
		if s := slot.Of(n); s >= lo && s <= hi {
			return n
		}
	}
}

// poolName is the CLIENT SETNAME of cfg's pools.
func poolName(cfg config) string {
	return "sg-pool-" + strings.ReplaceAll(cfg.String(), "/", ".")
}

// movedCount sums errorstat_MOVED over nodes.
func movedCount(t *testing.T, nodes []*fixtures.Node) int {
	t.Helper()
	total := 0
	for _, n := range nodes {
		info, err := n.Info(t.Context(), "errorstats")
		if err != nil {
			t.Fatalf("info errorstats: %v", err)
		}
		if v, ok := strings.CutPrefix(info["errorstat_MOVED"], "count="); ok {
			c, _ := strconv.Atoi(v)
			total += c
		}
	}
	return total
}

func newPool(t *testing.T, ts *testServers, cfg config) client.Pool {
	t.Helper()
	p, err := client.NewPool(t.Context(), cfg.options(ts, poolName(cfg)))
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func do(t *testing.T, p client.Pool, cmd client.Cmd) any {
	t.Helper()
	v, err := p.Do(t.Context(), cmd)
	if err != nil {
		t.Fatalf("%v: %v", cmd.Prefix, err)
	}
	return v
}

func testPool(t *testing.T, ts *testServers, cfg config) {
	p := newPool(t, ts, cfg)
	ctx := t.Context()

	t.Run("version", func(t *testing.T) {
		if p.Backend() != cfg.backend {
			t.Errorf("Backend() = %q, want %q", p.Backend(), cfg.backend)
		}
		// The version itself is what the build recorded (TestVersionFromTheBuild).
		if !strings.HasPrefix(p.Version(), string(cfg.backend)+" ") {
			t.Errorf("Version() = %q, want it to name %s", p.Version(), cfg.backend)
		}
	})

	t.Run("set-get", func(t *testing.T) {
		k := keyName(cfg, "k")
		if v := do(t, p, client.NewCmd("SET", []string{k}, "v1")); v != "OK" {
			t.Errorf("SET = %#v, want OK", v)
		}
		got, err := client.AsString(do(t, p, client.NewCmd("GET", []string{k})))
		if err != nil || got != "v1" {
			t.Errorf("GET = %q, %v; want v1", got, err)
		}
		n, err := client.AsInt64(do(t, p, client.NewCmd("INCR", []string{keyName(cfg, "n")})))
		if err != nil || n < 1 {
			t.Errorf("INCR = %d, %v", n, err)
		}
	})

	t.Run("nil-get", func(t *testing.T) {
		v, err := p.Do(ctx, client.NewCmd("GET", []string{keyName(cfg, "missing")}))
		if err != nil || !client.IsNil(v) {
			t.Errorf("GET missing = %#v, %v; want nil, nil", v, err)
		}
	})

	t.Run("reply-shapes", func(t *testing.T) {
		tag := "{" + keyName(cfg, "shape") + "}"
		do(t, p, client.NewCmd("SET", []string{tag + "a"}, "1"))
		vals, isNil, err := client.AsStrings(do(t, p, client.NewCmd("MGET", []string{tag + "a", tag + "missing"})))
		if err != nil || !slices.Equal(vals, []string{"1", ""}) || !slices.Equal(isNil, []bool{false, true}) {
			t.Errorf("MGET = %q %v, %v", vals, isNil, err)
		}
		v := do(t, p, client.Cmd{Prefix: []string{"EVAL", "return {1, 'a', {2}, redis.error_reply('ERR nested')}", "1"}, Keys: []string{tag + "a"}})
		arr, ok := v.([]any)
		if !ok || len(arr) != 4 || arr[0] != int64(1) || arr[1] != "a" {
			t.Fatalf("EVAL table = %#v", v)
		}
		if inner, ok := arr[2].([]any); !ok || len(inner) != 1 || inner[0] != int64(2) {
			t.Errorf("nested array = %#v", arr[2])
		}
		if se, ok := arr[3].(*client.ServerError); !ok || se.Kind != client.KindScript || se.Msg != "ERR nested" {
			t.Errorf("nested error = %#v, want *ServerError ERR nested", arr[3])
		}
		_, err = p.Do(ctx, client.Cmd{Prefix: []string{"EVAL", "return redis.error_reply('BUSY top')", "1"}, Keys: []string{tag + "a"}})
		if client.KindOf(err) != client.KindBusy || client.IsRefused(err) {
			t.Errorf("EVAL error_reply: %v (kind %q), want server BUSY", err, client.KindOf(err))
		}
		// "ERR" errors keep their code on both backends (valkey-go strips
		// it in Error(); the pool restores the server's text).
		_, err = p.Do(ctx, client.Cmd{Prefix: []string{"EVAL", "return redis.call('NOPE')", "1"}, Keys: []string{tag + "a"}})
		var se *client.ServerError
		if !errors.As(err, &se) || se.Kind != client.KindScript || !strings.HasPrefix(se.Msg, "ERR ") {
			t.Errorf("EVAL calling an unknown command: %#v, want *ServerError with ERR code", err)
		}
		do(t, p, client.NewCmd("HSET", []string{tag + "h"}, "f", "v"))
		h := do(t, p, client.NewCmd("HGETALL", []string{tag + "h"}))
		switch cfg.protocol {
		case client.RESP3:
			if m, ok := h.(map[string]any); !ok || m["f"] != "v" {
				t.Errorf("RESP3 HGETALL = %#v, want map[f:v]", h)
			}
		case client.RESP2:
			if a, ok := h.([]any); !ok || !slices.Equal(a, []any{"f", "v"}) {
				t.Errorf("RESP2 HGETALL = %#v, want [f v]", h)
			}
		}
		do(t, p, client.NewCmd("ZADD", []string{tag + "z"}, "1.5", "m"))
		z := do(t, p, client.NewCmd("ZSCORE", []string{tag + "z"}, "m"))
		if (cfg.protocol == client.RESP3 && z != 1.5) || (cfg.protocol == client.RESP2 && z != "1.5") {
			t.Errorf("ZSCORE = %#v under RESP%d", z, cfg.protocol)
		}
	})

	t.Run("eval-tagged", func(t *testing.T) {
		tag := "{" + keyName(cfg, "tag") + "}"
		keys := []string{tag + "a", tag + "b"}
		src := "redis.call('SET', KEYS[1], ARGV[1]); redis.call('SET', KEYS[2], ARGV[2]); return redis.call('MGET', KEYS[1], KEYS[2])"
		v := do(t, p, client.Cmd{Prefix: []string{"EVAL", src, "2"}, Keys: keys, Args: []string{"x", "y"}})
		vals, _, err := client.AsStrings(v)
		if err != nil || !slices.Equal(vals, []string{"x", "y"}) {
			t.Errorf("EVAL = %#v (%v), want [x y]", v, err)
		}
	})

	t.Run("cross-slot", func(t *testing.T) {
		a := nameInSlots(keyName(cfg, "xa"), 0, 1000)
		b := nameInSlots(keyName(cfg, "xb"), 15000, 16383)
		src := "return redis.call('EXISTS', KEYS[1], KEYS[2])"
		_, err := p.Do(ctx, client.Cmd{Prefix: []string{"EVAL", src, "2"}, Keys: []string{a, b}})
		if cfg.mode == client.ModeSingle {
			// A standalone server has no slots: nobody refuses.
			if err != nil {
				t.Fatalf("EVAL on standalone: %v", err)
			}
			return
		}
		if !client.IsCrossSlot(err) {
			t.Fatalf("EVAL across slots: err = %v, want CROSSSLOT", err)
		}
		// go-redis sends it and the server refuses; valkey-go's builder
		// refuses before sending.
		wantRefused := cfg.backend == client.BackendValkeyGo
		if client.IsRefused(err) != wantRefused {
			t.Errorf("EVAL across slots: IsRefused = %v, want %v (err %v)", client.IsRefused(err), wantRefused, err)
		}
		t.Logf("EVAL across slots: %T %v", err, err)

		// MGET across slots: go-redis does not split core commands by
		// default (its policy table covers module commands only), so the
		// server refuses; valkey-go refuses it client-side.
		v, err := p.Do(ctx, client.NewCmd("MGET", []string{a, b}))
		if !client.IsCrossSlot(err) || client.IsRefused(err) != wantRefused {
			t.Errorf("MGET across slots = %#v, %v; want CROSSSLOT with IsRefused %v", v, err, wantRefused)
		}
		t.Logf("MGET across slots: %T %v", err, err)
	})

	t.Run("script-fallback", func(t *testing.T) {
		s := client.NewScript("test/echo", "return {KEYS[1], ARGV[1]}")
		k := keyName(cfg, "script")
		owner := ownerOf(t, cfg.topo(ts), slot.Of(k))
		nodeDo(t, owner, "SCRIPT", "FLUSH")
		wantFellBack := []bool{true, false}
		for i, want := range wantFellBack {
			v, fellBack, err := client.RunScript(ctx, p, s, []string{k}, strconv.Itoa(i))
			if err != nil {
				t.Fatalf("RunScript #%d: %v", i, err)
			}
			vals, _, _ := client.AsStrings(v)
			if !slices.Equal(vals, []string{k, strconv.Itoa(i)}) {
				t.Errorf("RunScript #%d = %#v", i, v)
			}
			if fellBack != want {
				t.Errorf("RunScript #%d fellBack = %v, want %v", i, fellBack, want)
			}
		}
		nodeDo(t, owner, "SCRIPT", "FLUSH")
		if _, fellBack, err := client.RunScript(ctx, p, s, []string{k}, "after-flush"); err != nil || !fellBack {
			t.Errorf("RunScript after SCRIPT FLUSH: fellBack = %v, err = %v; want true, nil", fellBack, err)
		}
		if got := s.Stats.EvalSHA.Load(); got != 3 {
			t.Errorf("Stats.EvalSHA = %d, want 3", got)
		}
		if got := s.Stats.NoScriptFallbacks.Load(); got != 2 {
			t.Errorf("Stats.NoScriptFallbacks = %d, want 2", got)
		}
	})

	t.Run("protocol", func(t *testing.T) {
		// Every pool connection speaks the configured RESP version.
		want := fmt.Sprintf("resp=%d", cfg.protocol)
		seen := 0
		for _, a := range cfg.nodes(ts) {
			for _, line := range strings.Split(nodeString(t, a, "CLIENT", "LIST"), "\n") {
				if !strings.Contains(line, " name="+poolName(cfg)+" ") {
					continue
				}
				seen++
				if !strings.Contains(line, " "+want+" ") {
					t.Errorf("pool connection on %s is not %s: %s", a, want, line)
				}
			}
		}
		if seen == 0 {
			t.Errorf("no connection named %s", poolName(cfg))
		}
	})

	if cfg.mode == client.ModeCluster {
		t.Run("routes-by-first-key", func(t *testing.T) {
			// Each command goes straight to its first key's owner: no node
			// answers MOVED (INFO errorstats) while keys of every shard
			// are written, read, scripted and published to.
			before := movedCount(t, ts.cluster.Nodes())
			s := client.NewScript("test/get", "return redis.call('GET', KEYS[1])")
			for i := range 30 {
				k := keyName(cfg, "route", strconv.Itoa(i))
				do(t, p, client.NewCmd("SET", []string{k}, "v"))
				do(t, p, client.NewCmd("GET", []string{k}))
				do(t, p, client.Cmd{Prefix: []string{"EVAL", s.Source, "1"}, Keys: []string{k}})
				if _, _, err := client.RunScript(ctx, p, s, []string{k}); err != nil {
					t.Fatalf("RunScript: %v", err)
				}
				do(t, p, client.NewCmd("SPUBLISH", []string{k}, "x"))
			}
			if after := movedCount(t, ts.cluster.Nodes()); after != before {
				t.Errorf("nodes answered MOVED %d times; commands were not routed by their first key", after-before)
			}
		})
	}

	t.Run("subscribe-command-refused", func(t *testing.T) {
		if _, err := p.Do(ctx, client.NewCmd("SSUBSCRIBE", []string{"x"})); err == nil {
			t.Error("Do(SSUBSCRIBE) succeeded, want ErrBadCommand")
		}
	})
}

func newSubscriber(t *testing.T, ts *testServers, cfg config, name string) client.Subscriber {
	t.Helper()
	s, err := client.NewSubscriber(t.Context(), cfg.options(ts, name))
	if err != nil {
		t.Fatalf("NewSubscriber: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// waitFor reads messages until one satisfies match, failing after
// deliveryTimeout. Messages skipped on the way are returned too.
func waitFor(t *testing.T, s client.Subscriber, what string, match func(client.Message) bool) (client.Message, []client.Message) {
	t.Helper()
	var skipped []client.Message
	timer := time.NewTimer(deliveryTimeout)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-s.Messages():
			if !ok {
				t.Fatalf("waiting for %s: Messages closed (skipped %v)", what, skipped)
			}
			if match(m) {
				return m, skipped
			}
			skipped = append(skipped, m)
		case <-timer.C:
			t.Fatalf("waiting for %s: timed out (skipped %v)", what, skipped)
		}
	}
}

func isMsg(kind client.MessageKind, channel, payload string) func(client.Message) bool {
	return func(m client.Message) bool {
		return m.Kind == kind && m.Channel == channel && m.Payload == payload
	}
}

// numSub sums PUBSUB NUMSUB / SHARDNUMSUB for channel over nodes.
func numSub(t *testing.T, nodes []*fixtures.Node, sub, channel string) int {
	t.Helper()
	total := 0
	for _, n := range nodes {
		v := nodeDo(t, n, "PUBSUB", sub, channel)
		if arr, ok := v.([]any); ok && len(arr) == 2 {
			c, _ := arr[1].(int64)
			total += int(c)
		}
	}
	return total
}

func testSubscriber(t *testing.T, ts *testServers, cfg config) {
	p := newPool(t, ts, cfg)
	subName := "sg-sub-" + strings.ReplaceAll(cfg.String(), "/", ".")
	s := newSubscriber(t, ts, cfg, subName)
	ctx := t.Context()

	// One shard channel per primary.
	var schans []string
	for _, n := range cfg.topo(ts).Primaries() {
		schans = append(schans, nameOwnedBy(t, cfg.topo(ts), keyName(cfg, "sch"), n))
	}
	channel := keyName(cfg, "ch")
	pattern := keyName(cfg, "pat") + ":*"
	patChannel := keyName(cfg, "pat") + ":x"

	t.Run("ssubscribe-3-shards", func(t *testing.T) {
		start := time.Now()
		if err := s.SSubscribe(ctx, schans...); err != nil {
			t.Fatalf("SSubscribe: %v", err)
		}
		t.Logf("SSubscribe of 3 shard channels confirmed in %v", time.Since(start))
		for _, ch := range schans {
			// Confirmed means subscribed: SPUBLISH must count us at once.
			n, err := client.AsInt64(do(t, p, client.NewCmd("SPUBLISH", []string{ch}, "hello")))
			if err != nil || n != 1 {
				t.Errorf("SPUBLISH %s = %d, %v; want 1 receiver", ch, n, err)
			}
			waitFor(t, s, "smessage on "+ch, isMsg(client.MsgSMessage, ch, "hello"))
		}
	})

	t.Run("ssubscribe-protocol", func(t *testing.T) {
		// The shard subscriptions live on connections of the configured
		// RESP version (RESP2 SSUBSCRIBE works on both backends).
		want := fmt.Sprintf(" resp=%d ", cfg.protocol)
		seen := 0
		for _, a := range cfg.nodes(ts) {
			for _, line := range strings.Split(nodeString(t, a, "CLIENT", "LIST"), "\n") {
				if !strings.Contains(line, " name="+subName+" ") || strings.Contains(line, " ssub=0 ") {
					continue
				}
				seen++
				if !strings.Contains(line, want) {
					t.Errorf("shard subscription connection on %s lacks%s: %s", a, want, line)
				}
			}
		}
		wantConns := 1
		if cfg.mode == client.ModeCluster {
			wantConns = 3
		}
		if seen != wantConns {
			t.Errorf("%d connections hold shard subscriptions, want %d", seen, wantConns)
		}
	})

	t.Run("subscribe", func(t *testing.T) {
		if err := s.Subscribe(ctx, channel); err != nil {
			t.Fatalf("Subscribe: %v", err)
		}
		if n := numSub(t, cfg.nodes(ts), "NUMSUB", channel); n != 1 {
			t.Errorf("PUBSUB NUMSUB after confirmed Subscribe = %d, want 1", n)
		}
		do(t, p, client.Cmd{Prefix: []string{"PUBLISH", channel, "hi"}})
		waitFor(t, s, "message", isMsg(client.MsgMessage, channel, "hi"))
	})

	t.Run("psubscribe", func(t *testing.T) {
		if err := s.PSubscribe(ctx, pattern); err != nil {
			t.Fatalf("PSubscribe: %v", err)
		}
		do(t, p, client.Cmd{Prefix: []string{"PUBLISH", patChannel, "pp"}})
		m, _ := waitFor(t, s, "pmessage", isMsg(client.MsgPMessage, patChannel, "pp"))
		if m.Pattern != pattern {
			t.Errorf("pmessage Pattern = %q, want %q", m.Pattern, pattern)
		}
	})

	t.Run("reconnect-resubscribes", func(t *testing.T) {
		killed := killClients(t, cfg.nodes(ts), subName)
		if killed == 0 {
			t.Fatalf("no connection named %s found", subName)
		}
		want := map[string]bool{channel: true, pattern: true}
		for _, ch := range schans {
			want[ch] = true
		}
		for len(want) > 0 {
			m, _ := waitFor(t, s, "MsgResubscribed", func(m client.Message) bool { return m.Kind == client.MsgResubscribed })
			delete(want, m.Channel+m.Pattern)
		}
		for _, ch := range schans {
			do(t, p, client.NewCmd("SPUBLISH", []string{ch}, "again"))
			waitFor(t, s, "smessage after reconnect", isMsg(client.MsgSMessage, ch, "again"))
		}
		t.Logf("killed %d connections; every subscription was re-sent by the library", killed)
	})

	if cfg.mode == client.ModeCluster {
		t.Run("server-sunsubscribe", func(t *testing.T) {
			testServerSUnsubscribe(t, ts, cfg, p, s)
		})
	}

	t.Run("unsubscribe", func(t *testing.T) {
		if err := s.SUnsubscribe(ctx, schans...); err != nil {
			t.Fatalf("SUnsubscribe: %v", err)
		}
		for _, ch := range schans {
			n, err := client.AsInt64(do(t, p, client.NewCmd("SPUBLISH", []string{ch}, "gone")))
			if err != nil || n != 0 {
				t.Errorf("SPUBLISH %s after SUnsubscribe = %d, %v; want 0 receivers", ch, n, err)
			}
		}
		if err := s.Unsubscribe(ctx); err != nil {
			t.Fatalf("Unsubscribe(): %v", err)
		}
		if err := s.PUnsubscribe(ctx, pattern); err != nil {
			t.Fatalf("PUnsubscribe: %v", err)
		}
		if n := numSub(t, cfg.nodes(ts), "NUMSUB", channel); n != 0 {
			t.Errorf("PUBSUB NUMSUB after Unsubscribe = %d, want 0", n)
		}
		for _, a := range cfg.nodes(ts) {
			if n := nodeDo(t, a, "PUBSUB", "NUMPAT"); n != int64(0) {
				t.Errorf("PUBSUB NUMPAT on %s after PUnsubscribe = %s, want 0", a, n)
			}
		}
	})

	t.Run("close", func(t *testing.T) {
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		timer := time.NewTimer(deliveryTimeout)
		defer timer.Stop()
		for {
			select {
			case _, ok := <-s.Messages():
				if !ok {
					if err := s.Subscribe(ctx, channel); err == nil {
						t.Error("Subscribe after Close succeeded")
					}
					return
				}
			case <-timer.C:
				t.Fatal("Messages not closed by Close")
			}
		}
	})
}

// testServerSUnsubscribe migrates an empty slot holding a subscribed shard
// channel to another primary: the old owner sends sunsubscribe, which both
// backends must surface as MsgDropped, not resubscribe by themselves.
func testServerSUnsubscribe(t *testing.T, ts *testServers, cfg config, p client.Pool, s client.Subscriber) {
	ctx := t.Context()
	primaries := ts.cluster.Primaries()
	src, dst := primaries[0], primaries[1]
	ch := nameOwnedBy(t, ts.cluster, keyName(cfg, "mig"), src)
	sl := strconv.Itoa(slot.Of(ch))
	if err := s.SSubscribe(ctx, ch); err != nil {
		t.Fatalf("SSubscribe: %v", err)
	}
	srcID, dstID := nodeString(t, src, "CLUSTER", "MYID"), nodeString(t, dst, "CLUSTER", "MYID")
	nodeDo(t, dst, "CLUSTER", "SETSLOT", sl, "IMPORTING", srcID)
	nodeDo(t, src, "CLUSTER", "SETSLOT", sl, "MIGRATING", dstID)
	nodeDo(t, dst, "CLUSTER", "SETSLOT", sl, "NODE", dstID)
	nodeDo(t, src, "CLUSTER", "SETSLOT", sl, "NODE", dstID)

	m, skipped := waitFor(t, s, "MsgDropped", func(m client.Message) bool { return m.Kind == client.MsgDropped })
	if m.Channel != ch || m.Payload != "sunsubscribe" {
		t.Errorf("MsgDropped = %+v, want channel %s payload sunsubscribe", m, ch)
	}
	if len(skipped) > 0 {
		t.Logf("skipped before MsgDropped: %v", skipped)
	}
	// No resubscription by the library: the new owner counts nobody. A
	// duration, not a wait: an event that must not happen has no signal.
	time.Sleep(200 * time.Millisecond)
	if n := numSub(t, ts.cluster.Nodes(), "SHARDNUMSUB", ch); n != 0 {
		t.Errorf("after the drop, %d shard subscribers exist; the library resubscribed on its own", n)
	}

	// The caller resubscribes; the subscriber's slot map may be stale, so a
	// MOVED is possible the first time (go-redis reloads on it).
	if err := wait.Within(ctx, deliveryTimeout, 100*time.Millisecond, func(ctx context.Context) error {
		err := s.SSubscribe(ctx, ch)
		if err != nil {
			t.Logf("resubscribe after migration: %v", err)
		}
		return err
	}); err != nil {
		t.Fatalf("resubscribe after migration: %v", err)
	}
	if n, err := client.AsInt64(do(t, p, client.NewCmd("SPUBLISH", []string{ch}, "moved"))); err != nil || n != 1 {
		t.Errorf("SPUBLISH after resubscribe = %d, %v; want 1", n, err)
	}
	waitFor(t, s, "smessage from new owner", isMsg(client.MsgSMessage, ch, "moved"))
	if err := s.SUnsubscribe(ctx, ch); err != nil {
		t.Errorf("SUnsubscribe: %v", err)
	}
}

// detachedByLibrary are goroutines a client library starts without tying
// them to Close; they end by themselves. valkey-go's cluster.go _refresh
// closes connections it replaced after a 5 s sleep in a detached goroutine
// (so does redirectOrNew), which outlives Client.Close by up to 5 s.
var detachedByLibrary = []string{
	"valkey-go.(*clusterClient)._refresh.func",
	"valkey-go.(*clusterClient).redirectOrNew.func",
}

// goroutines returns the stacks of all goroutines except the library's
// detached ones.
func goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
next:
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, d := range detachedByLibrary {
			if strings.Contains(g, d) {
				continue next
			}
		}
		out = append(out, g)
	}
	return out
}

// checkNoLeak waits for the goroutine count to fall back to before once
// every client of the subtest is closed. goleak is not in the module cache,
// so this counts stacks instead.
func checkNoLeak(t *testing.T, before int) {
	t.Helper()
	var gs []string
	if err := wait.Within(t.Context(), 3*time.Second, 20*time.Millisecond, func(context.Context) error {
		if gs = goroutines(); len(gs) > before {
			return fmt.Errorf("%d goroutines, %d before", len(gs), before)
		}
		return nil
	}); err != nil {
		t.Errorf("goroutines: %d before, %d after Close\n%s", before, len(gs), strings.Join(gs, "\n\n"))
	}
}

// TestOptionsRejected covers the validation that needs no server.
func TestOptionsRejected(t *testing.T) {
	ctx := context.Background()
	for _, o := range []client.Options{
		{Backend: "nope", Mode: client.ModeSingle, Addrs: []string{"127.0.0.1:1"}},
		{Backend: client.BackendGoRedis, Mode: "nope", Addrs: []string{"127.0.0.1:1"}},
		{Backend: client.BackendGoRedis, Mode: client.ModeSingle, Protocol: 4, Addrs: []string{"127.0.0.1:1"}},
		{Backend: client.BackendValkeyGo, Mode: client.ModeSingle},
	} {
		if _, err := client.NewPool(ctx, o); err == nil {
			t.Errorf("NewPool(%+v) succeeded", o)
		}
	}
}

// TestErrorsAndReplies covers the helpers that need no server.
func TestErrorsAndReplies(t *testing.T) {
	for msg, want := range map[string]client.ErrorKind{
		"CROSSSLOT Keys in request don't hash to the same slot": client.KindCrossSlot,
		"NOSCRIPT No matching script.":                          client.KindNoScript,
		"MOVED 3999 127.0.0.1:6381":                             client.KindMoved,
		"ERR unknown command":                                   client.KindScript,
		"WRONGTYPE Operation against a key":                     client.KindOther,
	} {
		if got := client.ParseServerError(msg).Kind; got != want {
			t.Errorf("ParseServerError(%q).Kind = %q, want %q", msg, got, want)
		}
	}
	refused := fmt.Errorf("do: %w", &client.RefusedError{Kind: client.KindCrossSlot, Msg: "x"})
	if !client.IsCrossSlot(refused) || !client.IsRefused(refused) {
		t.Errorf("wrapped RefusedError: IsCrossSlot %v, IsRefused %v", client.IsCrossSlot(refused), client.IsRefused(refused))
	}
	server := fmt.Errorf("do: %w", client.ParseServerError("CROSSSLOT x"))
	if !client.IsCrossSlot(server) || client.IsRefused(server) {
		t.Errorf("wrapped ServerError: IsCrossSlot %v, IsRefused %v", client.IsCrossSlot(server), client.IsRefused(server))
	}
	if client.KindOf(context.DeadlineExceeded) != "" {
		t.Error("KindOf(timeout) is not empty")
	}
	if n, err := client.AsInt64("42"); err != nil || n != 42 {
		t.Errorf("AsInt64(\"42\") = %d, %v", n, err)
	}
	if _, err := client.AsInt64([]any{}); !errors.Is(err, client.ErrUnexpectedReply) {
		t.Errorf("AsInt64([]any) err = %v, want ErrUnexpectedReply", err)
	}
	if _, err := client.AsString(nil); !errors.Is(err, client.ErrUnexpectedReply) {
		t.Errorf("AsString(nil) err = %v, want ErrUnexpectedReply", err)
	}
	if s := client.NewScript("n", "return 1"); s.SHA1 != "e0e1f9fabfc9d4800c877a703b823ac0578ff8db" {
		t.Errorf("NewScript SHA1 = %s", s.SHA1)
	}
}
