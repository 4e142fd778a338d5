package marconi_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/impl/marconi"
)

// TestFlagRules: each forbidden combination of spec 002 §8 is refused
// with its rule named; the stages' allowed combinations are accepted.
func TestFlagRules(t *testing.T) {
	forbidden := marconi.ForbiddenExamples()
	if len(forbidden) != len(marconi.FlagRules) {
		t.Fatalf("%d rules, %d tested", len(marconi.FlagRules), len(forbidden))
	}
	for rule, f := range forbidden {
		err := f.Validate()
		var fe *marconi.FlagError
		if !errors.As(err, &fe) || !errors.Is(err, marconi.ErrBadFlags) || fe.Rule.Name != rule || !strings.Contains(err.Error(), rule) {
			t.Errorf("%s: %v", rule, err)
		}
	}
	verb := marconi.Flags{Verbs: map[string]bool{"SIGNAL": true}}
	if err := verb.Validate(); err == nil {
		t.Error("a per-verb Stage 5 flag without the archiver primary accepted")
	}
	for i, f := range marconi.StageWalk() {
		if err := f.Flags.Validate(); err != nil {
			t.Errorf("stage walk step %d (%s): %v", i, f.Name, err)
		}
	}
	if (marconi.Flags{Expiry: marconi.ExpiryOff}).Validate() != nil {
		t.Error("Stage 1 (all off, no expiry hook) refused")
	}
}

// TestSessionStoreFallback: with the table-read flags off (spec 002 §8
// defaults) a send resolves its recipient from the SessionStore — it sees a
// registration written to the store by another writer (no hook of this
// process ran), and pays Redis reads for it; with the flags on it reads the
// table and does no I/O. MutantStaleFallback reads the table either way.
func TestSessionStoreFallback(t *testing.T) {
	for _, mutant := range []marconi.Mutant{marconi.MutantNone, marconi.MutantStaleFallback} {
		t.Run("mutant="+string(mutant), func(t *testing.T) {
			e := newEnv(t, "t-fallback-"+string(mutant), marconi.Options{Mutant: mutant})
			e.register(t, "s1", "alice")
			if err := e.mesh.SetFlags(marconi.Flags{}); err != nil {
				t.Fatalf("all off at run time: %v", err)
			}
			if e.mesh.Flags().RoutingTableReads {
				t.Fatal("flags not applied")
			}
			// Another writer of the SessionStore registers a newer alice.
			other := marconi.Session{SessionID: "s2", Tenant: "acme", Project: "p1", Identity: "alice",
				RegisteredAt: time.Now().Add(time.Second), LastHeartbeat: time.Now()}
			if err := e.mesh.Store().Register(t.Context(), other); err != nil {
				t.Fatal(err)
			}
			before := e.pool.Counts().HotPath
			res := e.send(t, "alice")
			reads := e.pool.Counts().HotPath - before
			want := "s2"
			if mutant == marconi.MutantStaleFallback {
				want = "s1"
			}
			if res.SessionID != want {
				t.Errorf("fallback routed alice to %q, want %q", res.SessionID, want)
			}
			if mutant == marconi.MutantNone && reads == 0 {
				t.Error("the SessionStore fallback did no Redis read on the send path")
			}
			// s2 released in the store: the fallback goes back to s1.
			if _, err := e.mesh.Store().Release(t.Context(), "acme", "s2"); err != nil {
				t.Fatal(err)
			}
			if res := e.send(t, "alice"); res.SessionID != "s1" {
				t.Errorf("after s2's release: routed to %q, want s1", res.SessionID)
			}
			if err := e.mesh.SetFlags(marconi.ShippedFlags()); err != nil {
				t.Fatal(err)
			}
			before = e.pool.Counts().HotPath
			if res := e.send(t, "alice"); res.SessionID != "s1" {
				t.Errorf("table reads: routed to %q, want s1", res.SessionID)
			}
			if n := e.pool.Counts().HotPath - before; n != 0 {
				t.Errorf("table reads did %d commands on the send path", n)
			}
		})
	}
}

// TestSetFlagsRefuses: a forbidden flip is refused by rule and changes
// nothing; MutantAcceptForbidden takes it.
func TestSetFlagsRefuses(t *testing.T) {
	e := newEnv(t, "t-setflags", marconi.Options{})
	bad := marconi.ShippedFlags()
	bad.PGArchiverPrimary = false
	err := e.mesh.SetFlags(bad)
	var fe *marconi.FlagError
	if !errors.As(err, &fe) || fe.Rule.Name != marconi.RuleStage5NeedsArchiverPrimary {
		t.Fatalf("forbidden flip: %v", err)
	}
	if !e.mesh.Flags().PGArchiverPrimary {
		t.Fatal("a refused flip changed the flags")
	}
	m := newEnv(t, "t-setflags-mutant", marconi.Options{Mutant: marconi.MutantAcceptForbidden})
	if err := m.mesh.SetFlags(bad); err != nil {
		t.Fatalf("the accept-forbidden mutant refused: %v", err)
	}
	if _, err := marconi.New(marconi.Options{Pool: e.pool, Flags: bad}); !errors.Is(err, marconi.ErrBadFlags) {
		t.Fatalf("New with forbidden flags: %v", err)
	}
}

// TestExpirySweeper: the default on_session_expired source removes a
// session whose record lapsed, with no subscriber and no CONFIG SET (the
// spec 002 Stage 2 "no pubsub subscriber anywhere" resolution).
func TestExpirySweeper(t *testing.T) {
	e := newEnv(t, "t-sweeper", marconi.Options{Store: marconi.StoreOptions{TTL: 300 * time.Millisecond}, SweepEvery: 50 * time.Millisecond})
	if e.mesh.Expiry() != marconi.ExpirySweeper {
		t.Fatalf("default expiry %q, want sweeper", e.mesh.Expiry())
	}
	e.register(t, "s1", "alice")
	waitFor(t, "alice's route gone", func() bool { return route(e, "alice") == "" })
	if n := e.mesh.MetricSum("marconi_invalidator_calls_total", map[string]string{"hook": string(marconi.HookSessionExpired)}); n != 1 {
		t.Errorf("on_session_expired calls %v, want 1", n)
	}
	if c := e.pool.Counts().ByCommand; c["SUBSCRIBE"]+c["CONFIG"] != 0 {
		t.Errorf("the sweeper subscribed or configured: %v", c)
	}
}
