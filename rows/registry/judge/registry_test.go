package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/check/checktest"
)

const ms = time.Millisecond

// regHistory: rt-a heartbeats every 100 ms from 0 to 1 s; rt-b joins at 0,
// crashes at 300 ms (last heartbeat returned at 201 ms); rt-c deregisters
// at 500 ms. TTL 300 ms, interval 100 ms.
func regHistory(found func(at time.Duration) []RegistryEntry) RegistryHistory {
	h := RegistryHistory{Population: map[string]string{"rt-a": "a:1", "rt-b": "b:1", "rt-c": "c:1"}}
	for t := time.Duration(0); t <= time.Second; t += 100 * ms {
		h.Ops = append(h.Ops, RegistryOp{Kind: RegHeartbeat, Runtime: "rt-a", Call: t, Return: t + ms})
		if t <= 200*ms {
			h.Ops = append(h.Ops, RegistryOp{Kind: RegHeartbeat, Runtime: "rt-b", Call: t, Return: t + ms})
		}
		if t < 500*ms {
			h.Ops = append(h.Ops, RegistryOp{Kind: RegHeartbeat, Runtime: "rt-c", Call: t, Return: t + ms})
		}
	}
	h.Ops = append(h.Ops,
		RegistryOp{Kind: RegCrash, Runtime: "rt-b", Call: 300 * ms, Return: 300 * ms},
		RegistryOp{Kind: RegDeregister, Runtime: "rt-c", Call: 500 * ms, Return: 502 * ms})
	for t := 150 * ms; t < time.Second; t += 50 * ms {
		h.Ops = append(h.Ops, RegistryOp{Kind: RegDiscover, Runtime: "obs", Call: t, Return: t + 5*ms, Found: found(t)})
	}
	return h
}

var regBounds = RegistryBounds{Interval: 100 * ms, TTL: 300 * ms, Grace: 100 * ms, MinDiscoveries: 5, MinRequired: 5}

// correct is what a correct registry may answer at t.
func correct(t time.Duration) []RegistryEntry {
	out := []RegistryEntry{{ID: "rt-a", Addr: "a:1"}}
	if t < 500*ms { // crashed at 300, last record expires by 501
		out = append(out, RegistryEntry{ID: "rt-b", Addr: "b:1"})
	}
	if t < 500*ms {
		out = append(out, RegistryEntry{ID: "rt-c", Addr: "c:1"})
	}
	return out
}

func TestRegistryBounded(t *testing.T) {
	if r := bounded(regHistory(correct), regBounds); r.Status != check.Pass {
		t.Fatalf("correct history: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	partial := func(t time.Duration) []RegistryEntry { return correct(t)[1:] } // never returns rt-a
	if r := complete(regHistory(partial), regBounds); r.Status != check.Fail {
		t.Fatalf("partial discovery not caught: %s %s", r.Status, r.Message)
	}
	stale := func(t time.Duration) []RegistryEntry {
		return append(correct(t), RegistryEntry{ID: "rt-b", Addr: "b:1"})
	}
	if r := noStale(regHistory(stale), regBounds); r.Status != check.Fail {
		t.Fatalf("crashed runtime returned forever not caught: %s %s", r.Status, r.Message)
	}
	forged := func(t time.Duration) []RegistryEntry {
		return append(correct(t), RegistryEntry{ID: "evil", Addr: "6.6.6.6:1"})
	}
	if r := attested(regHistory(forged)); r.Status != check.Fail {
		t.Fatalf("forged record not caught: %s %s", r.Status, r.Message)
	}
	wrongAddr := func(t time.Duration) []RegistryEntry {
		return []RegistryEntry{{ID: "rt-a", Addr: "6.6.6.6:1"}}
	}
	if r := attested(regHistory(wrongAddr)); r.Status != check.Fail {
		t.Fatalf("tampered address not caught: %s %s", r.Status, r.Message)
	}
	if r := complete(RegistryHistory{}, regBounds); r.Status != check.Unknown {
		t.Fatalf("empty history: %s, want unknown", r.Status)
	}
}

func TestRegistryErrorsOutside(t *testing.T) {
	h := RegistryHistory{Ops: []RegistryOp{
		{Kind: RegHeartbeat, Runtime: "a", Call: 0, Return: ms},
		{Kind: RegHeartbeat, Runtime: "a", Call: 100 * ms, Return: 110 * ms, ErrKind: "network", Err: "reset"},
	}}
	if r := errorsOutside(h, []check.Span{{Start: 90 * ms, End: 95 * ms}}, 10*ms, 1); r.Status != check.Pass {
		t.Fatalf("error inside window+settle: %s %s", r.Status, r.Message)
	}
	if r := errorsOutside(h, nil, 0, 1); r.Status != check.Fail {
		t.Fatalf("error outside windows not caught: %s", r.Status)
	}
}

func TestRegistrySkipsClassified(t *testing.T) {
	if r := checktest.Judged(t, SkipsClassified, Skips{Discoveries: 10, Unattested: 60, Undecodable: 90, ForgedUnattested: 6, ForgedUndecodable: 9}); r.Status != check.Pass {
		t.Fatalf("every discovery saw every forgery: %s %s", r.Status, r.Message)
	}
	if r := skipsClassified(10, 61, 80, 6, 9); r.Status != check.Fail {
		t.Fatalf("a torn record counted unattested: %s, want fail", r.Status)
	}
	if r := skipsClassified(10, 0, 91, 6, 9); r.Status != check.Fail {
		t.Fatalf("too many undecodable: %s, want fail", r.Status)
	}
}

func TestScanSubset(t *testing.T) {
	complete := regHistory(correct)
	subset := regHistory(func(at time.Duration) []RegistryEntry { return correct(at)[:1] })
	if bounded(subset, regBounds).Status != check.Fail || bounded(complete, regBounds).Status != check.Pass {
		t.Fatal("premise: the subset history fails RegistryBounded, the complete one passes")
	}
	r := checktest.Judged(t, ScanSubset, ScanRuns{OnCluster: subset, Single: complete, Bounds: regBounds, ClusterSpec: "cluster:3x1"})
	if r.Status != check.Fail || !strings.HasPrefix(r.Message, "on cluster:3x1: ") || !strings.Contains(r.Message, " | on standalone: ") {
		t.Fatalf("a silent subset on the cluster: %s %q", r.Status, r.Message)
	}
	// Incomplete on the standalone node too: not about the cluster.
	if r := scanSubset(subset, subset, regBounds, "cluster:3x1"); r.Status != check.Unknown {
		t.Fatalf("incomplete everywhere: %s", r.Status)
	}
	// A scan that errors on the cluster is loud, not the silent subset.
	loud := regHistory(func(at time.Duration) []RegistryEntry { return correct(at)[:1] })
	for i := range loud.Ops {
		if loud.Ops[i].Kind == RegDiscover {
			loud.Ops[i].ErrKind, loud.Ops[i].Err = "network", "i/o timeout"
			break
		}
	}
	if r := scanSubset(loud, complete, regBounds, "cluster:3x1"); r.Status != check.Unknown {
		t.Fatalf("an erroring scan: %s", r.Status)
	}
}
