package judge

import (
	"fmt"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func TestMarconiReadsOneAtATime(t *testing.T) {
	one := []string{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "BLOCK", "200", "STREAMS", "s", ">"}
	batch := []string{"XREADGROUP", "GROUP", "g", "c", "COUNT", "16", "BLOCK", "200", "STREAMS", "s", ">"}
	good := []ArchiverRead{{Cmd: one, Entries: 1}, {Cmd: one, Entries: 1}, {Cmd: one, Entries: 0}}
	if r := readsOneAtATime(good, WireReads{Known: true, Calls: 3, Entries: 2}, 2); r.Status != check.Pass {
		t.Fatalf("good: %+v", r)
	}
	if r := readsOneAtATime(good, WireReads{}, 3); r.Status != check.Unknown {
		t.Fatalf("too few: %+v", r)
	}
	if r := readsOneAtATime(append(good, ArchiverRead{Cmd: batch, Entries: 1}), WireReads{}, 2); r.Status != check.Fail {
		t.Fatalf("COUNT 16 with one entry: %+v", r)
	}
	if r := readsOneAtATime(append(good, ArchiverRead{Cmd: one, Entries: 2}), WireReads{}, 2); r.Status != check.Fail {
		t.Fatalf("two entries under COUNT 1: %+v", r)
	}
	if r := readsOneAtATime(good, WireReads{Known: true, Calls: 1, Entries: 2}, 2); r.Status != check.Fail {
		t.Fatalf("fewer server reads than entries: %+v", r)
	}
}

func streamOf(ids ...int) []history.StreamEntry {
	var out []history.StreamEntry
	for i, n := range ids {
		out = append(out, history.StreamEntry{ID: fmt.Sprintf("1-%d", i), SignalID: fmt.Sprintf("s%d", n), Offset: fmt.Sprintf("7:%d", n)})
	}
	return out
}

func TestMarconiStreamResume(t *testing.T) {
	var offers []history.AuditOffer
	for n := range 5 {
		offers = append(offers, history.AuditOffer{SignalID: fmt.Sprintf("s%d", n), Kept: true})
	}
	restarts := []WriterRestart{{Requeued: 2}}
	if r := streamResume(offers, streamOf(0, 1, 2, 3, 4), restarts, 1); r.Status != check.Pass {
		t.Fatalf("good: %+v", r)
	}
	if r := streamResume(offers, streamOf(0, 1, 2, 3, 4), []WriterRestart{{Requeued: 0}}, 1); r.Status != check.Unknown {
		t.Fatalf("no batch to resume past: %+v", r)
	}
	if r := streamResume(offers, streamOf(0, 1, 4), restarts, 1); r.Status != check.Fail {
		t.Fatalf("gap: %+v", r)
	}
	if r := streamResume(offers, streamOf(0, 1, 2, 1, 2, 3, 4), restarts, 1); r.Status != check.Fail {
		t.Fatalf("duplicate: %+v", r)
	}
	if r := streamResume(offers, streamOf(0, 2, 1, 3, 4), restarts, 1); r.Status != check.Fail {
		t.Fatalf("disorder: %+v", r)
	}
}

func TestMarconiTrimKeepsUnconsumed(t *testing.T) {
	offers := []history.AuditOffer{{SignalID: "a", Kept: true}, {SignalID: "b", Kept: true}}
	h := TrimHistory{Offers: offers, Rows: map[string]int{"a": 1, "b": 1}, Added: 2, Length: 1, Down: 3 * time.Second, Retention: time.Second}
	if r := trimKeepsUnconsumed(h); r.Status != check.Pass {
		t.Fatalf("good: %+v", r)
	}
	short := h
	short.Down = time.Second / 2
	if r := trimKeepsUnconsumed(short); r.Status != check.Unknown {
		t.Fatalf("short lag: %+v", r)
	}
	undrained := h
	undrained.End.Pending = 1
	if r := trimKeepsUnconsumed(undrained); r.Status != check.Unknown {
		t.Fatalf("read before the pipeline drained: %+v", r)
	}
	untrimmed := h
	untrimmed.Length = 2
	if r := trimKeepsUnconsumed(untrimmed); r.Status != check.Fail {
		t.Fatalf("never trimmed after a lag past the retention: %+v", r)
	}
	lost := h
	lost.Rows = map[string]int{"a": 1}
	if r := trimKeepsUnconsumed(lost); r.Status != check.Fail {
		t.Fatalf("trimmed unconsumed: %+v", r)
	}
	pendingTrimmed := h
	pendingTrimmed.TrimmedPending = 1
	if r := trimKeepsUnconsumed(pendingTrimmed); r.Status != check.Fail {
		t.Fatalf("pending trimmed: %+v", r)
	}
}

func lagSamples(pairs ...float64) []LagSample {
	var out []LagSample
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, LagSample{At: time.Duration(i/2) * 100 * time.Millisecond, Gauge: pairs[i], True: pairs[i+1]})
	}
	return out
}

func TestMarconiLagAlert(t *testing.T) {
	const grace = 250 * time.Millisecond
	// gauge, true: under, ramp, over; the gauge trails the drop by one
	// sample (within grace).
	good := lagSamples(0, 0, 0.4, 0.5, 2.9, 3, 3.1, 3.2, 3.2, 0, 0, 0, 0, 0)
	if r := lagAlert(good, 1, 0.3, grace); r.Status != check.Pass {
		t.Fatalf("good: %+v", r)
	}
	never := lagSamples(0, 0, 0.05, 3, 0.05, 3.1, 0.05, 3.2, 0.05, 3.3)
	if r := lagAlert(never, 1, 0.3, grace); r.Status != check.Fail {
		t.Fatalf("never fires: %+v", r)
	}
	early := lagSamples(1.5, 0.2, 1.5, 0.2, 1.5, 0.2, 1.5, 0.2, 3, 3)
	if r := lagAlert(early, 1, 0.3, grace); r.Status != check.Fail {
		t.Fatalf("fires early: %+v", r)
	}
	if r := lagAlert(lagSamples(0, 0, 0, 0), 1, 0.3, grace); r.Status != check.Unknown {
		t.Fatalf("never over: %+v", r)
	}
}

func TestMarconiKillPremise(t *testing.T) {
	if r := killPremise([]ArchiverKill{{Pending: 0}, {Pending: 1}}, 2); r.Status != check.Pass {
		t.Fatalf("good: %+v", r)
	}
	if r := killPremise([]ArchiverKill{{Pending: 0}, {Pending: 0}}, 2); r.Status != check.Unknown {
		t.Fatalf("nothing pending: %+v", r)
	}
	if r := killPremise([]ArchiverKill{{Pending: 1}}, 2); r.Status != check.Unknown {
		t.Fatalf("too few: %+v", r)
	}
}
