package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/check/checktest"
	"github.com/slotgate/slotgate/history"
)

func want(t *testing.T, what string, r check.Result, s check.Status) {
	t.Helper()
	if r.Status != s {
		t.Errorf("%s: %s (%s), want %s", what, r.Status, r.Message, s)
	}
}

var (
	cluster = history.PreflightTopology{Cluster: true, State: "ok", SlotsAssigned: check.TotalSlots, SlotsOK: check.TotalSlots,
		Nodes: []history.PreflightNode{{Addr: "a:1", Primary: true, Slots: check.TotalSlots, Health: "online"}}}
	standalone = history.PreflightTopology{Nodes: []history.PreflightNode{{Addr: "s:1", Primary: true}}}
)

func TestCrossSlotProbe(t *testing.T) {
	keys, slots := [2]string{"a", "b"}, [2]int{1, 2}
	refused := &history.CrossSlotProbe{Node: "a:1", Cluster: true, Keys: keys, Slots: slots, ErrKind: "CROSSSLOT", Err: "CROSSSLOT Keys in request don't hash to the same slot"}
	want(t, "refused", crossSlotProbe(ProbeRun{Endpoint: "a:1", Topology: cluster, Probe: refused}), check.Pass)
	ran := &history.CrossSlotProbe{Node: "s:1", Keys: keys, Slots: slots, Ran: true}
	want(t, "ran on the disabled G3 endpoint", crossSlotProbe(ProbeRun{Endpoint: "s:1", Topology: standalone, Probe: ran}), check.Fail)
	ranOnCluster := *ran
	ranOnCluster.Cluster = true
	want(t, "ran on a cluster", crossSlotProbe(ProbeRun{Endpoint: "a:1", Topology: cluster, Probe: &ranOnCluster}), check.Fail)
	// Premises: a node reached, the probe sent, a cross-slot pair.
	unreached := history.PreflightTopology{Cluster: true, Nodes: []history.PreflightNode{{Addr: "a:1", Err: "i/o timeout"}}}
	want(t, "no node reached", crossSlotProbe(ProbeRun{Endpoint: "a:1", Topology: unreached, Probe: refused}), check.Unknown)
	want(t, "no topology", crossSlotProbe(ProbeRun{Endpoint: "a:1", Topology: history.PreflightTopology{Err: "NOPERM"}, Probe: refused}), check.Unknown)
	want(t, "probe not sent", crossSlotProbe(ProbeRun{Endpoint: "a:1", Topology: cluster}), check.Unknown)
	oneSlot := *ran
	oneSlot.Slots = [2]int{3, 3}
	want(t, "probe keys in one slot", crossSlotProbe(ProbeRun{Endpoint: "s:1", Topology: standalone, Probe: &oneSlot}), check.Unknown)
	timedOut := &history.CrossSlotProbe{Node: "a:1", Cluster: true, Keys: keys, Slots: slots, Err: "i/o timeout"}
	want(t, "probe failed otherwise", crossSlotProbe(ProbeRun{Endpoint: "a:1", Topology: cluster, Probe: timedOut}), check.Unknown)
}

func rulePairs(n int, by string, split bool) []history.SlotPair {
	out := make([]history.SlotPair, n)
	for i := range out {
		out[i] = history.SlotPair{Source: "key rule (fencing.NewKeys)", A: "{x}a", B: "{x}b", SlotA: 7, SlotB: 7, By: by}
		if split {
			out[i].SlotB = 8
		}
	}
	return out
}

func TestKeyslotEquality(t *testing.T) {
	want(t, "equal", keyslotEquality(PairsRun{Pairs: rulePairs(16, byServer, false), MinRulePairs: 16}), check.Pass)
	want(t, "split", keyslotEquality(PairsRun{Pairs: rulePairs(16, byServer, true), MinRulePairs: 16}), check.Fail)
	want(t, "split, few pairs", keyslotEquality(PairsRun{Pairs: rulePairs(1, byServer, true), MinRulePairs: 16}), check.Fail)
	// Premises: enough of the rule's pairs, placed by the server.
	want(t, "too few pairs", keyslotEquality(PairsRun{Pairs: rulePairs(15, byServer, false), MinRulePairs: 16}), check.Unknown)
	want(t, "placed by local CRC16", keyslotEquality(PairsRun{Pairs: rulePairs(16, "CRC16", false), MinRulePairs: 16}), check.Unknown)
	want(t, "no minimum", keyslotEquality(PairsRun{Pairs: rulePairs(16, byServer, false)}), check.Unknown)
	operator := rulePairs(16, byServer, false)
	for i := range operator {
		operator[i].Source = "--pair"
	}
	want(t, "no key-rule pair", keyslotEquality(PairsRun{Pairs: operator, MinRulePairs: 16}), check.Unknown)
}

func scans(keys ...int) []history.NodeScan {
	out := make([]history.NodeScan, len(keys))
	for i, k := range keys {
		out[i] = history.NodeScan{Node: "n", Slots: check.TotalSlots / len(keys), Complete: true, Keys: k}
	}
	out[0].Slots += check.TotalSlots % len(keys)
	return out
}

func TestKeySizes(t *testing.T) {
	pass := func(s []history.NodeScan, big ...history.KeySize) *history.KeySizePass {
		return &history.KeySizePass{Cluster: true, Threshold: 1000, Scans: s, Largest: big}
	}
	want(t, "clean", keySizes(KeySizeRun{Pass: pass(scans(10, 10, 10)), Seeded: 30, Primaries: 3}), check.Pass)
	want(t, "big key", keySizes(KeySizeRun{Pass: pass(scans(10, 10, 11), history.KeySize{Key: "big", Bytes: 2000}), Seeded: 31, Primaries: 3}), check.Fail)
	want(t, "big key, too few keys seen", keySizes(KeySizeRun{Pass: pass(scans(1, 1, 1), history.KeySize{Key: "big", Bytes: 2000}), Seeded: 31, Primaries: 3}), check.Fail)
	// Premises: the pass ran, something was seeded, every primary scanned,
	// every seeded key returned.
	want(t, "no pass", keySizes(KeySizeRun{Seeded: 30, Primaries: 3}), check.Unknown)
	want(t, "nothing seeded", keySizes(KeySizeRun{Pass: pass(scans(0, 0, 0)), Primaries: 3}), check.Unknown)
	want(t, "fewer keys than seeded", keySizes(KeySizeRun{Pass: pass(scans(10, 10, 9)), Seeded: 30, Primaries: 3}), check.Unknown)
	want(t, "a primary not scanned", keySizes(KeySizeRun{Pass: &history.KeySizePass{Threshold: 1000, Scans: scans(30)}, Seeded: 30, Primaries: 3}), check.Unknown)
}

func TestCPUHeadroom(t *testing.T) {
	s := func(node string, util float64, every time.Duration) history.CPUSample {
		return history.CPUSample{Node: node, Interval: every, CPUSeconds: util * every.Seconds(), Source: "main thread"}
	}
	idle := []history.CPUSample{s("a", 0.02, time.Second), s("b", 0.01, time.Second)}
	want(t, "idle", cpuHeadroom(CPURun{Samples: idle, Limit: 0.8, Nodes: 2, MinInterval: time.Second / 2}), check.Pass)
	hot := []history.CPUSample{s("a", 0.95, time.Second), s("b", 0.01, time.Second)}
	want(t, "hot node", cpuHeadroom(CPURun{Samples: hot, Limit: 0.8, Nodes: 2, MinInterval: time.Second / 2}), check.Fail)
	want(t, "hot node, another missing", cpuHeadroom(CPURun{Samples: hot[:1], Limit: 0.8, Nodes: 2, MinInterval: time.Second / 2}), check.Fail)
	// Premises: every node measured, over a long enough interval, against a
	// limit that is a fraction.
	want(t, "a node not measured", cpuHeadroom(CPURun{Samples: idle[:1], Limit: 0.8, Nodes: 2, MinInterval: time.Second / 2}), check.Unknown)
	short := []history.CPUSample{s("a", 0.02, time.Millisecond), s("b", 0.01, time.Second)}
	want(t, "interval too short", cpuHeadroom(CPURun{Samples: short, Limit: 0.8, Nodes: 2, MinInterval: time.Second / 2}), check.Unknown)
	want(t, "limit in percent", cpuHeadroom(CPURun{Samples: idle, Limit: 80, Nodes: 2, MinInterval: time.Second / 2}), check.Unknown)
	want(t, "no node", cpuHeadroom(CPURun{Limit: 0.8, MinInterval: time.Second / 2}), check.Unknown)
}

// A judged call replays by its stable name, as `slotgate check --from`
// runs it.
func TestPreflightCheckersReplay(t *testing.T) {
	r := KeyslotEquality.Judge(PairsRun{Pairs: rulePairs(16, byServer, true), MinRulePairs: 16})
	if r.Status != check.Fail || !r.Replayable() || r.Call.Checker != "preflight/keyslot-equality" {
		t.Fatalf("Judge = %+v", r)
	}
	c := CPUHeadroom.Judge(CPURun{Samples: []history.CPUSample{{Node: "a", Interval: time.Second, CPUSeconds: 0.9}}, Limit: 0.8, Nodes: 1, MinInterval: time.Second / 2})
	if c.Status != check.Fail {
		t.Fatalf("CPUHeadroom.Judge = %+v", c)
	}
	checktest.Replays(t, r, c)
}
