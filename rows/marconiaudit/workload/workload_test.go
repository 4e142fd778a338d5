package workload

import (
	"sync"
	"testing"
	"time"

	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/traffic"
)

// readEntries counts XREADGROUP entries in both protocol shapes.
func TestReadEntries(t *testing.T) {
	entry := []any{"1-0", []any{"f", "v"}}
	resp2 := []any{
		[]any{"s1", []any{entry, entry}},
		[]any{"s2", []any{entry}},
	}
	resp3 := map[string]any{"s1": []any{entry, entry, entry}, "s2": []any{}}
	if n := readEntries(resp2); n != 3 {
		t.Errorf("RESP2 reply: %d entries, want 3", n)
	}
	if n := readEntries(resp3); n != 3 {
		t.Errorf("RESP3 reply: %d entries, want 3", n)
	}
	if n := readEntries(nil); n != 0 {
		t.Errorf("nil reply: %d entries", n)
	}
}

// AuditErrors places an error on the scenario clock at its own time and
// counts by stage and tenant.
func TestAuditErrors(t *testing.T) {
	clock := traffic.NewClock()
	time.Sleep(30 * time.Millisecond) // a duration: the error below happens after the clock's start
	r := &AuditErrors{Clock: clock}
	happened := time.Now().Add(-20 * time.Millisecond)
	r.Record(audit.PipelineError{At: happened, Stage: "sink", Tenant: "acme", Op: "append", Reason: "full"})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			tenant := "acme"
			if i%2 == 1 {
				tenant = "globex"
			}
			r.Record(audit.PipelineError{At: time.Now(), Stage: "archiver", Tenant: tenant, Op: "write"})
		})
	}
	wg.Wait()
	errs := r.Errors()
	if len(errs) != 9 {
		t.Fatalf("recorded %d errors, want 9", len(errs))
	}
	if at, want := errs[0].At, clock.Offset(happened); at < want-5*time.Millisecond || at > want+5*time.Millisecond {
		t.Errorf("error at %v on the clock, happened at %v", at, want)
	}
	for _, c := range []struct {
		stage  audit.Stage
		tenant string
		want   int
	}{{"archiver", "", 8}, {"archiver", "acme", 4}, {"archiver", "globex", 4}, {"sink", "", 1}, {"sink", "globex", 0}} {
		if got := r.Count(c.stage, c.tenant); got != c.want {
			t.Errorf("Count(%s, %q) = %d, want %d", c.stage, c.tenant, got, c.want)
		}
	}
}
