package judge

import (
	"fmt"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

// wakeReads spaces n appends 300 ms apart, each read delay after it.
func wakeReads(n int, delay func(i int) time.Duration) []WakeRead {
	var out []WakeRead
	for i := range n {
		at := int64(1_000_000 + 300*i)
		out = append(out, WakeRead{ID: fmt.Sprintf("%d-0", at), AppendedMs: at, ReadUs: at*1000 + delay(i).Microseconds()})
	}
	return out
}

func TestMarconiArchiverWakes(t *testing.T) {
	poll := 200 * time.Millisecond
	woken := wakeReads(20, func(int) time.Duration { return 2 * time.Millisecond })
	if r := archiverWakes(woken, poll, 10); r.Status != check.Pass {
		t.Fatalf("woken reads: %s %s", r.Status, r.Message)
	}
	// A poller reads each entry somewhere in its poll interval.
	polled := wakeReads(20, func(i int) time.Duration { return time.Duration(i*37%200) * time.Millisecond })
	if r := archiverWakes(polled, poll, 10); r.Status != check.Fail {
		t.Fatalf("polled reads: %s %s", r.Status, r.Message)
	}
	// Premise: a read before its append means the clocks differ.
	skewed := wakeReads(20, func(int) time.Duration { return 2 * time.Millisecond })
	skewed[3].ReadUs -= 50_000
	if r := archiverWakes(skewed, poll, 10); r.Status != check.Unknown {
		t.Fatalf("skewed clocks: %s %s", r.Status, r.Message)
	}
	// Premise: a backlog (each read after the next append) leaves no
	// idle-stream entry to judge.
	backlog := wakeReads(20, func(int) time.Duration { return 350 * time.Millisecond })
	if r := archiverWakes(backlog, poll, 10); r.Status != check.Unknown {
		t.Fatalf("backlog: %s %s", r.Status, r.Message)
	}
}
