package judge

import (
	"testing"
	"time"
)

func tms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// topologyRun is a passing run on one key: writes 1 and 2 acknowledged,
// each read back, and a final read-back of 2.
func topologyRun() OlderTopologyRun {
	return OlderTopologyRun{Server: "redis 7.0.15", Moves: 2, Wanted: 2, SlotsCalls: 3, ClusterAware: true, MinOps: 4, Ops: []TopologyOp{
		{Key: "k", Write: true, Seq: 1, Call: tms(1), Return: tms(2)},
		{Key: "k", Seq: 1, Call: tms(3), Return: tms(4)},
		{Key: "k", Write: true, Seq: 2, Call: tms(5), Return: tms(6)},
		{Key: "k", Seq: 2, Call: tms(7), Return: tms(8)},
		{Key: "k", Seq: 2, Final: true, Call: tms(20), Return: tms(21)},
	}}
}

func TestOlderTopologyPasses(t *testing.T) {
	r := topologyRun()
	for _, v := range []Verdict{olderTopologyErrors(r), olderTopologyAcknowledged(r)} {
		if v.Status != Pass {
			t.Errorf("%s: %s %s", v.Checker, v.Status, v.Message)
		}
	}
}

// A MOVED handed to the caller fails the errors column; the write it
// refused did not run, so the silently-wrong column does not expect it.
func TestOlderTopologyCatchesRedirect(t *testing.T) {
	r := topologyRun()
	r.Ops = append(r.Ops, TopologyOp{Key: "k", Write: true, Seq: 3, ErrKind: "MOVED", Err: "MOVED 12 127.0.0.1:7001", Call: tms(9), Return: tms(10)})
	if v := olderTopologyErrors(r); v.Status != Fail {
		t.Errorf("errors: %s %s", v.Status, v.Message)
	}
	if v := olderTopologyAcknowledged(r); v.Status != Pass {
		t.Errorf("acknowledged: %s %s", v.Status, v.Message)
	}
}

// A write acknowledged but not read back (a MOVED taken for success) and a
// read older than an acknowledged write both fail the silently-wrong
// column.
func TestOlderTopologyCatchesLossAndStaleRead(t *testing.T) {
	lost := topologyRun()
	lost.Ops[4].Seq = 1
	if v := olderTopologyAcknowledged(lost); v.Status != Fail {
		t.Errorf("lost write: %s %s", v.Status, v.Message)
	}
	stale := topologyRun()
	stale.Ops[3].Seq = 1
	if v := olderTopologyAcknowledged(stale); v.Status != Fail {
		t.Errorf("stale read: %s %s", v.Status, v.Message)
	}
	// A later write whose outcome is unknown may be what is read back.
	unknown := topologyRun()
	unknown.Ops = append(unknown.Ops, TopologyOp{Key: "k", Write: true, Seq: 3, ErrKind: "TIMEOUT", Call: tms(9), Return: tms(19)})
	unknown.Ops[4].Seq = 3
	if v := olderTopologyAcknowledged(unknown); v.Status != Pass {
		t.Errorf("unknown outcome read back: %s %s", v.Status, v.Message)
	}
}

// A run that breaks a premise is unknown, never a verdict, even on a
// history that would fail.
func TestOlderTopologyPremises(t *testing.T) {
	for name, edit := range map[string]func(*OlderTopologyRun){
		"valkey server":     func(r *OlderTopologyRun) { r.Server = "valkey 8.0.1" },
		"redis 6":           func(r *OlderTopologyRun) { r.Server = "redis 6.2.0" },
		"migrations short":  func(r *OlderTopologyRun) { r.Moves = 1 },
		"no topology reply": func(r *OlderTopologyRun) { r.SlotsCalls = 0 },
		"too few ops":       func(r *OlderTopologyRun) { r.MinOps = 10 },
		"not read back":     func(r *OlderTopologyRun) { r.Ops = r.Ops[:4] },
	} {
		r := topologyRun()
		r.Ops = append(r.Ops, TopologyOp{Key: "k", Write: true, Seq: 3, ErrKind: "MOVED", Call: tms(9), Return: tms(10)})
		r.Ops[3].Seq = 1
		edit(&r)
		for _, v := range []Verdict{olderTopologyErrors(r), olderTopologyAcknowledged(r)} {
			if v.Status != Unknown {
				t.Errorf("%s: %s %s %s, want unknown", name, v.Checker, v.Status, v.Message)
			}
		}
	}
}

// A single-node client reads no topology reply and is judged all the same.
func TestOlderTopologySingleNode(t *testing.T) {
	r := topologyRun()
	r.ClusterAware, r.SlotsCalls = false, 0
	r.Ops = append(r.Ops, TopologyOp{Key: "k", Write: true, Seq: 3, ErrKind: "MOVED", Call: tms(9), Return: tms(10)})
	if v := olderTopologyErrors(r); v.Status != Fail {
		t.Errorf("single-node client handed a MOVED: %s %s", v.Status, v.Message)
	}
}

func TestTopologyReply(t *testing.T) {
	for _, tc := range []struct {
		slots, shards int64
		want          string
	}{{1, 0, "CLUSTER SLOTS"}, {0, 2, "CLUSTER SHARDS"}, {1, 1, "CLUSTER SLOTS and CLUSTER SHARDS"}, {0, 0, ""}} {
		if got := (OlderTopologyRun{SlotsCalls: tc.slots, ShardsCalls: tc.shards}).TopologyReply(); got != tc.want {
			t.Errorf("%d/%d: %q, want %q", tc.slots, tc.shards, got, tc.want)
		}
	}
}
