package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
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
		want  check.Status
	}{
		{"busy with full batches", []AuditWriterPace{busy, busy}, check.Inconclusive},
		{"busy, short batches from a queue shallow till late", []AuditWriterPace{busy, shallow}, check.Inconclusive},
		{"a writer that stopped", []AuditWriterPace{busy, stopped}, check.Fail},
		{"a writer idle between appends", []AuditWriterPace{idle}, check.Fail},
		{"nothing behind", nil, check.Unknown},
	} {
		r := writersOutpaced(c.paces, 64, 0.5)
		if r.Status != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, r.Status, r.Message, c.want)
		}
	}
}

// A writer is judged over the stall only: the marks move with every
// progress, so one that worked for 40 s after the heal and then hung for
// the 30 s stall fails, though over the whole wait it appended plenty and
// was inside appends 38 s of 70 (busy enough to pass for outpaced). One
// busy through the stall is still the runner's.
func TestAuditPaceMarksJudgeTheStall(t *testing.T) {
	heal := time.Unix(1_000_000, 0)
	at := func(s int, appended float64, calls int, in time.Duration) AuditWriterCount {
		return AuditWriterCount{At: heal.Add(time.Duration(s) * time.Second), Appended: appended, Calls: calls, InCalls: in}
	}
	const hung, steady = "main/t-hung", "main/t-steady"
	var m AuditPaceMarks
	m.Progress(map[string]AuditWriterCount{hung: at(0, 0, 0, 0), steady: at(0, 0, 0, 0)})
	// Progress while both work: new lows every poll until 40 s.
	for s := 1; s <= 40; s++ {
		m.Progress(map[string]AuditWriterCount{
			hung:   at(s, float64(400*s), 6*s, time.Duration(s)*950*time.Millisecond),
			steady: at(s, float64(400*s), 6*s, time.Duration(s)*950*time.Millisecond),
		})
	}
	// Then 30 s without a new low: the hung writer did nothing, the
	// steady one kept appending (outpaced).
	stall := map[string]AuditWriterCount{
		hung:   at(70, 400*40, 6*40, 40*950*time.Millisecond),
		steady: at(70, 400*70, 6*70, 70*950*time.Millisecond),
	}
	for _, c := range []struct {
		name   string
		depths map[string]int
		want   check.Status
	}{
		{"busy 40 s then 0 for 30 s", map[string]int{hung: 9000}, check.Fail},
		{"busy through the stall", map[string]int{steady: 9000}, check.Inconclusive},
		{"one hung among the busy", map[string]int{hung: 9000, steady: 9000}, check.Fail},
	} {
		paces := m.Paces(c.depths, stall)
		if r := writersOutpaced(paces, 64, 0.5); r.Status != c.want {
			t.Errorf("%s: %s (%s) over %+v, want %s", c.name, r.Status, r.Message, paces, c.want)
		}
	}
	if p := (&AuditPaceMarks{}).Paces(map[string]int{hung: 9000}, stall); writersOutpaced(p, 64, 0.5).Status != check.Fail {
		t.Errorf("a writer never marked must not pass for outpaced: %+v", p)
	}
}
