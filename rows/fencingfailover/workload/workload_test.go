package workload

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/fixtures/fixturestest"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client/clienttest"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/traffic"
)

// One standalone valkey-server serves the tests (started on first use).
var server = &fixtures.Shared{Spec: fixtures.StandaloneSpec()}

func TestMain(m *testing.M) { os.Exit(server.RunTests(m)) }

func phaseO(t *testing.T) *fencing.Directory {
	t.Helper()
	pool := clienttest.Standalone(t, fixturestest.Get(t, server))
	return fencing.New(pool, fencing.Options{Scripts: fencing.Embedded().Phase(fencing.O), LeaseTTL: time.Minute})
}

// Each session is taken and released once by the pod "seed" in phase O,
// both calls timed on the clock; a call that errs is recorded unknown with
// its kind, and a session whose acquire did not succeed is not released.
func TestSeedSessions(t *testing.T) {
	dir := phaseO(t)
	community := "tt-seed-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	sessions := []fencing.Session{{Community: community, ID: "a"}, {Community: community, ID: "b"}}
	clock := traffic.NewClock()
	ops := SeedSessions(t.Context(), dir, clock, sessions)
	if len(ops) != 4 {
		t.Fatalf("%d calls, want an acquire and a release per session: %+v", len(ops), ops)
	}
	for i, op := range ops {
		want := history.OpAcquire
		if i%2 == 1 {
			want = history.OpRelease
		}
		if op.Kind != want || !op.OK || op.Unknown || op.Gen != 1 || op.Pod != "seed" || op.Owner != "seed" ||
			op.Phase != string(fencing.O) || op.Lane != "cold" || op.Session != sessions[i/2].String() || op.Return < op.Call {
			t.Errorf("call %d: %+v", i, op)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ops = SeedSessions(ctx, dir, clock, sessions[:1])
	if len(ops) != 1 || !ops[0].Unknown || ops[0].OK || ops[0].ErrKind == "" || ops[0].Err == "" {
		t.Fatalf("a failed acquire: want one unknown call with its error, got %+v", ops)
	}
}
