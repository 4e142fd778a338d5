package locality

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
)

// On a real standalone node (cluster mode disabled) the server runs a cross-slot MGET and a
// cross-slot script without complaint; the twin records both, at this file's lines, and
// nothing for single-slot calls — for each client backend.
func TestTwinOnStandalone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topo, err := fixtures.Run(ctx, fixtures.StandaloneSpec())
	t.Cleanup(func() { _ = topo.Close() })
	if err != nil {
		t.Fatal(err)
	}
	script := client.NewScript("touch2", "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('SET', KEYS[2], ARGV[1])")
	for _, b := range client.Backends {
		t.Run(string(b), func(t *testing.T) {
			inner, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeSingle, Addrs: topo.Addrs()})
			if err != nil {
				t.Fatal(err)
			}
			defer inner.Close()
			p := Wrap(inner)
			mustDo := func(cmd client.Cmd) {
				t.Helper()
				if _, err := p.Do(ctx, cmd); err != nil {
					t.Fatalf("%v: %v", cmd, err)
				}
			}
			mustDo(client.NewCmd("MGET", []string{"{u}:a", "{u}:b"}))
			mustDo(client.NewCmd("SET", []string{"k"}, "v", "PX", "1000"))
			mustDo(client.NewCmd("PUBLISH", []string{"ch"}, "m"))
			mustDo(client.Cmd{Prefix: []string{"SCAN", "0"}})
			if _, _, err := client.RunScript(ctx, p, script, []string{"{s}:lease", "{s}:gen"}, "1"); err != nil {
				t.Fatal(err)
			}
			if h := p.History(); h.ViolationCount != 0 || h.MultiKey != 2 || h.Scripts != 1 {
				t.Fatalf("single-slot calls: %+v", h)
			}
			mustDo(client.NewCmd("MGET", []string{"presence:alice", "presence:bob"})) // cross-slot
			if _, _, err := client.RunScript(ctx, p, script, []string{"lease:s", "generation:s"}, "1"); err != nil {
				t.Fatal(err) // cross-slot script: standalone runs it
			}
			mustDo(client.Cmd{Prefix: []string{"DEL", "hidden"}}) // a key not declared
			h := p.History()
			if h.ViolationCount != 3 || h.TotalErrors() != 0 {
				t.Fatalf("want 3 violations and no error, got %+v", h)
			}
			for i, want := range []Violation{ViolationCrossSlot, ViolationCrossSlot, ViolationUndeclaredKey} {
				v := h.Violations[i]
				if v.Violation != want || !strings.HasPrefix(v.Site, "validate/locality/twin_test.go:") {
					t.Errorf("violation %d: %s", i, v)
				}
			}
			if h.Violations[1].Command != "EVALSHA" && h.Violations[1].Command != "EVAL" {
				t.Errorf("script violation recorded as %s", h.Violations[1].Command)
			}
		})
	}
}
