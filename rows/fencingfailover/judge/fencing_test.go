package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func at(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// acquired is an acknowledged acquire of session s by owner at gen, [call, call+1ms].
func acquired(client int, s, owner string, gen int64, call int) history.FencingOp {
	return history.FencingOp{Client: client, Session: s, Kind: history.OpAcquire, Owner: owner, Gen: gen, OK: true, Call: at(call), Return: at(call + 1)}
}

func released(client int, s, owner string, gen int64, call int) history.FencingOp {
	return history.FencingOp{Client: client, Session: s, Kind: history.OpRelease, Owner: owner, Gen: gen, OK: true, Call: at(call), Return: at(call + 1)}
}

var failoverPremise = FailoverPremise{LeaseTTL: time.Minute, MinCalledInside: 1}

func TestFencingAcrossFailoverPasses(t *testing.T) {
	ops := []history.FencingOp{
		acquired(0, "s", "pod-0", 1, 0), released(0, "s", "pod-0", 1, 10),
		// The acquire during the failover came back unknown and was lost.
		{Client: 1, Session: "s", Kind: history.OpAcquire, Owner: "pod-1", Unknown: true, Call: at(20), Return: at(400)},
		{Client: 3, Session: "s", Kind: history.OpValidate, Owner: "pod-0", Gen: 1, Verdict: -1, Call: at(300), Return: at(301)},
		acquired(2, "s", "pod-2", 2, 500), released(2, "s", "pod-2", 2, 510),
		{Client: 2, Session: "s", Kind: history.OpRelease, Owner: "pod-2", Gen: 2, OK: false, Call: at(520), Return: at(521)},
	}
	windows := []history.FaultWindow{{Fault: "node/failover-kill", Target: "p0→p0r0", Start: at(15), End: at(450)}}
	r := fencingAcrossFailover(ops, windows, failoverPremise)
	if r.Status != check.Pass {
		t.Fatalf("want pass, got %s: %s\n%s", r.Status, r.Message, r.Counterexample)
	}
}

// A lost acquire re-issued: the history a failover produces with the spec's
// scripts as written (durability off).
func TestFencingAcrossFailoverCountsAFork(t *testing.T) {
	ops := []history.FencingOp{
		acquired(0, "s", "pod-0", 1, 0),
		// failover at 5 ms: the replica never had gen 1
		acquired(1, "s", "pod-1", 1, 50),
		{Client: 0, Session: "s", Kind: history.OpRenew, Owner: "pod-0", Gen: 1, OK: false, Call: at(60), Return: at(61)},
		{Client: 2, Session: "s", Kind: history.OpValidate, Owner: "pod-0", Gen: 1, Verdict: 1, Call: at(2), Return: at(3)},
	}
	windows := []history.FaultWindow{{Fault: "node/failover-kill", Target: "p0→p0r0", Start: at(5), End: at(55)}}
	r := judged(t, FencingAcrossFailover, FailoverRun{Ops: ops, Windows: windows, Premise: failoverPremise})
	if r.Status != check.Fail {
		t.Fatalf("want fail, got %s: %s", r.Status, r.Message)
	}
	got := strings.Join(r.Observed, "\n")
	for _, want := range []string{"node/failover-kill p0→p0r0: 0 acknowledged acquires lost, 1 generations issued twice, 1 acquisitions of a held session, 1 acknowledged leases lost, 1 stale frames accepted"} {
		if !strings.Contains(got, want) {
			t.Errorf("observed lacks %q:\n%s", want, got)
		}
	}
}

// Each broken premise is unknown, naming it, never a verdict.
func TestFencingAcrossFailoverPremises(t *testing.T) {
	ops := []history.FencingOp{acquired(0, "s", "pod-0", 1, 0), released(0, "s", "pod-0", 1, 10), acquired(0, "s", "pod-0", 2, 30)}
	w := history.FaultWindow{Fault: "node/pause", Target: "p0", Start: at(20), End: at(25)}
	cases := map[string]struct {
		windows []history.FaultWindow
		premise FailoverPremise
		want    string
	}{
		"no fault":        {nil, failoverPremise, "no fault window"},
		"unhealthy fault": {[]history.FaultWindow{{Fault: "node/pause", Target: "p0", Start: at(20), Unhealthy: "p0 not answering"}}, failoverPremise, "left the topology unhealthy"},
		"not exercised":   {[]history.FaultWindow{w}, FailoverPremise{LeaseTTL: time.Minute, MinCalledInside: 2}, "the fault was not exercised"},
		"ttl":             {[]history.FaultWindow{w}, FailoverPremise{LeaseTTL: at(20), MinCalledInside: 1}, "not shorter than the lease TTL"},
	}
	for name, c := range cases {
		r := fencingAcrossFailover(ops, c.windows, c.premise)
		if r.Status != check.Unknown || !strings.Contains(r.Message, c.want) {
			t.Errorf("%s: want unknown naming %q, got %s: %s", name, c.want, r.Status, r.Message)
		}
	}
}

func TestDirectoryResumes(t *testing.T) {
	w := []history.FaultWindow{{Fault: "node/sentinel-failover-cut", Target: "p0→p0r0", Start: at(100), End: at(3000)}}
	answer := func(ret int) history.FencingOp {
		return history.FencingOp{Session: "s", Kind: history.OpAcquire, Owner: "pod-0", Gen: 1, OK: true, Call: at(ret - 1), Return: at(ret)}
	}
	stuck := history.FencingOp{Session: "s", Kind: history.OpAcquire, Owner: "pod-0", Unknown: true, Call: at(200), Return: at(9000)}
	steady := []history.FencingOp{stuck, answer(2000), answer(5000), answer(8000), answer(9000)}
	if r := directoryResumes(steady, w, 5*time.Second); r.Status != check.Pass {
		t.Fatalf("want pass, got %s: %s", r.Status, r.Message)
	}
	if r := judged(t, DirectoryResumes, ResumeRun{Ops: steady, Windows: w, Budget: time.Second}); r.Status != check.Fail {
		t.Fatalf("gaps of 3 s over a 1 s budget: want fail, got %s: %s", r.Status, r.Message)
	}
	// Answered early, then silent for 8.8 s: the early answer does not end the halt.
	if r := directoryResumes([]history.FencingOp{answer(200), stuck}, w, 5*time.Second); r.Status != check.Fail {
		t.Fatalf("answered at 0.2 s then silent: want fail, got %s: %s", r.Status, r.Message)
	}
	// An answer that came after the next fault began is not this fault's.
	two := append(w, history.FaultWindow{Fault: "node/sentinel-failover-pause", Target: "p0r0→p0", Start: at(7000), End: at(9000)})
	if r := directoryResumes([]history.FencingOp{stuck, answer(7500), answer(8500), answer(9000)}, two, 5*time.Second); r.Status != check.Fail {
		t.Fatalf("silent from the cut until the pause: want fail, got %s: %s", r.Status, r.Message)
	}
	short := stuck
	short.Return = at(1000)
	if r := directoryResumes([]history.FencingOp{short}, w, 5*time.Second); r.Status != check.Unknown {
		t.Fatalf("the history ends before the budget: want unknown, got %s: %s", r.Status, r.Message)
	}
	if r := directoryResumes([]history.FencingOp{answer(9000)}, nil, time.Second); r.Status != check.Unknown {
		t.Fatalf("no fault: want unknown, got %s", r.Status)
	}
}
