package check

import (
	"testing"
	"time"
)

// A stall is the runner's only when every writer behind did all a writer
// can: each way a writer holds itself back fails, and the premise is named
// only for writers busy appending. Breaking the rule either way
// (always the runner's, never) fails a case here.
func TestAuditWritersOutpaced(t *testing.T) {
	busy := AuditWriterPace{Name: "main/t-1", Depth: 9000, Appended: 12_000, Calls: 190, InCalls: 29 * time.Second, Window: 30 * time.Second}
	stopped, idle, shallow := busy, busy, busy
	stopped.Appended, stopped.Calls, stopped.InCalls = 0, 0, 0
	idle.InCalls = 3 * time.Second
	shallow.Appended = 1700 // short batches: its queue was shallow most of the window
	for _, c := range []struct {
		name  string
		paces []AuditWriterPace
		want  Status
	}{
		{"busy with full batches", []AuditWriterPace{busy, busy}, Inconclusive},
		{"busy, short batches from a queue shallow till late", []AuditWriterPace{busy, shallow}, Inconclusive},
		{"a writer that stopped", []AuditWriterPace{busy, stopped}, Fail},
		{"a writer idle between appends", []AuditWriterPace{idle}, Fail},
		{"nothing behind", nil, Unknown},
	} {
		r := AuditWritersOutpaced(c.paces, 64, 0.5)
		if r.Status != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, r.Status, r.Message, c.want)
		}
	}
}
