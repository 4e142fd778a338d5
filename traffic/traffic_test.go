package traffic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
)

func TestErrKind(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{fmt.Errorf("do: %w", client.ParseServerError("MOVED 12 127.0.0.1:7001")), "MOVED"},
		{fmt.Errorf("do: %w", &client.RefusedError{Kind: client.KindCrossSlot, Msg: "x"}), "CROSSSLOT"},
		{fmt.Errorf("admin: %w", fixtures.ReplyError("NOSCRIPT No matching script")), "NOSCRIPT"},
		{io.EOF, "network"},
		{context.DeadlineExceeded, "network"},
	} {
		if got := ErrKind(c.err); got != c.want {
			t.Errorf("ErrKind(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// Outcome: a reply (even an error reply) or a refusal before sending is a
// known outcome; anything after which the command may have run is unknown.
func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		err  error
		want history.Outcome
	}{
		{nil, history.OK},
		{client.ParseServerError("CROSSSLOT Keys in request don't hash to the same slot"), history.Failed},
		{&client.RefusedError{Kind: client.KindCrossSlot, Msg: "x"}, history.Failed},
		{fmt.Errorf("set: %w", context.DeadlineExceeded), history.Unknown},
		{fmt.Errorf("set: %w", io.ErrUnexpectedEOF), history.Unknown},
		{errors.New("read tcp: connection reset by peer"), history.Unknown},
	} {
		if got := Outcome(c.err); got != c.want {
			t.Errorf("Outcome(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	for kind, want := range map[string]history.Outcome{"": history.OK, "network": history.Unknown, "MOVED": history.Failed} {
		if got := outcomeOfKind(kind); got != want {
			t.Errorf("outcomeOfKind(%q) = %q, want %q", kind, got, want)
		}
	}
}

func TestRecorderConcurrent(t *testing.T) {
	var r Recorder
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				r.Fencing(history.FencingOp{Client: i, Kind: history.OpAcquire, Call: time.Duration(j)})
				var err error
				if j%10 == 0 {
					err = &client.RefusedError{Kind: client.KindCrossSlot, Msg: "keys in two slots"}
				}
				r.Outcome("acquire", err)
			}
		})
	}
	wg.Wait()
	if n := len(r.FencingHistory()); n != 400 {
		t.Fatalf("recorded %d fencing ops, want 400", n)
	}
	outs := r.Outcomes()
	refused := 0
	for _, o := range outs {
		if o.ErrKind == "CROSSSLOT" {
			refused++
			if o.Err == "" || o.Err[:len("refused by the client library")] != "refused by the client library" {
				t.Fatalf("a client-side refusal is not named as one: %q", o.Err)
			}
		}
	}
	if len(outs) != 400 || refused != 40 {
		t.Fatalf("outcomes %d, refused %d", len(outs), refused)
	}
	// The copies are the caller's.
	outs[0].Op = "edited"
	if r.Outcomes()[0].Op == "edited" {
		t.Fatal("Outcomes returned the recorder's own slice")
	}
}

func TestRecordOpIntoScenarioHistory(t *testing.T) {
	rec := history.NewRecorder("s", 1, nil)
	ctx := history.With(context.Background(), rec)
	if ClockOf(ctx) != rec.Clock() {
		t.Fatal("ClockOf is not the scenario's clock")
	}
	recordOp(ctx, opRecord{client: "worker-1", backend: "go-redis", kind: "set", slot: 42, start: time.Millisecond, end: 2 * time.Millisecond}, nil)
	recordOp(ctx, opRecord{client: "worker-2", kind: "get", start: 3 * time.Millisecond, end: 9 * time.Millisecond}, fmt.Errorf("get: %w", context.DeadlineExceeded))
	recordFencing(ctx, "pod-0", "acquire", 0, time.Millisecond, client.ParseServerError("NOSCRIPT No matching script"))
	recordOp(context.Background(), opRecord{kind: "dropped"}, nil) // no scenario: nothing recorded, no panic
	ops := rec.Snapshot().Ops
	if len(ops) != 3 {
		t.Fatalf("recorded %d ops, want 3", len(ops))
	}
	if o := ops[0]; o.Outcome != history.OK || o.Slot != 42 || o.Backend != "go-redis" || o.End != 2*time.Millisecond {
		t.Fatalf("ok op recorded as %+v", o)
	}
	if o := ops[1]; o.Outcome != history.Unknown || o.ErrKind != "network" || o.Err == "" {
		t.Fatalf("timed-out op recorded as %+v", o)
	}
	if o := ops[2]; o.Outcome != history.Failed || o.ErrKind != "NOSCRIPT" {
		t.Fatalf("refused op recorded as %+v", o)
	}
}
