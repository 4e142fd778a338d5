package check

import (
	"strings"
	"testing"
	"time"
)

func wantStatus(t *testing.T, what string, r Result, want Status) {
	t.Helper()
	if r.Status != want {
		t.Errorf("%s: %s (%s), want %s\n%s", what, r.Status, r.Message, want, r.Counterexample)
	}
}

// threeShards is a healthy 3×1 cluster as CLUSTER SHARDS shows it.
func threeShards() PreflightTopology {
	return PreflightTopology{Cluster: true, State: "ok", SlotsAssigned: TotalSlots, SlotsOK: TotalSlots, Nodes: []PreflightNode{
		{Addr: "a:1", Primary: true, Slots: 5461, Health: "online"},
		{Addr: "b:1", Primary: true, Slots: 5462, Health: "online"},
		{Addr: "c:1", Primary: true, Slots: 5461, Health: "online"},
		{Addr: "a:2", Health: "online"},
	}}
}

func TestPreflightTopologyHealthy(t *testing.T) {
	wantStatus(t, "healthy cluster", PreflightTopologyHealthy(threeShards()), Pass)
	wantStatus(t, "standalone", PreflightTopologyHealthy(PreflightTopology{Nodes: []PreflightNode{{Addr: "s:1", Primary: true}}}), Pass)

	down := threeShards()
	down.State, down.SlotsOK = "fail", TotalSlots-5461
	wantStatus(t, "cluster_state:fail", PreflightTopologyHealthy(down), Fail)
	failed := threeShards()
	failed.Nodes[3].Health = "fail"
	wantStatus(t, "failed replica", PreflightTopologyHealthy(failed), Fail)
	loading := threeShards()
	loading.Nodes[3].Health = "loading"
	wantStatus(t, "replica at offset 0", PreflightTopologyHealthy(loading), Pass)
	unreachable := threeShards()
	unreachable.Nodes[1].Err = "dial tcp: connection refused"
	wantStatus(t, "unreachable primary", PreflightTopologyHealthy(unreachable), Unknown)
	wantStatus(t, "nothing read", PreflightTopologyHealthy(PreflightTopology{Err: "CLUSTER SHARDS: NOPERM"}), Unknown)
}

func TestKeyslotEquality(t *testing.T) {
	good := []SlotPair{
		{Source: "key rule", A: "buzz:tunnel:{c:s1}:lease", B: "buzz:tunnel:{c:s1}:generation", SlotA: 7, SlotB: 7, By: "CLUSTER KEYSLOT"},
		{Source: "keyspace", A: "buzz:tunnel:{c:s2}:lease", B: "buzz:tunnel:{c:s2}:generation", SlotA: 9000, SlotB: 9000, By: "CLUSTER KEYSLOT"},
	}
	r := KeyslotEquality(good)
	wantStatus(t, "tagged pairs", r, Pass)
	if len(r.Observed) != 2 {
		t.Errorf("sources not reported: %v", r.Observed)
	}
	// Negative control: fencing.MisTaggedKeys' shape, the generation key
	// tagged with the community only.
	misTagged := append(good, SlotPair{Source: "keyspace", A: "buzz:tunnel:{c:s3}:lease", B: "buzz:tunnel:{c}:s3:generation", SlotA: 1234, SlotB: 4321, By: "CLUSTER KEYSLOT"})
	r = KeyslotEquality(misTagged)
	wantStatus(t, "mis-tagged pair", r, Fail)
	if !strings.Contains(r.Counterexample, "{c}:s3:generation") {
		t.Errorf("counterexample does not name the split pair: %q", r.Counterexample)
	}
	// A split pair fails even when another could not be computed.
	withErr := append(misTagged, SlotPair{A: "x", B: "y", Err: "timeout"})
	wantStatus(t, "split pair next to an error", KeyslotEquality(withErr), Fail)
	wantStatus(t, "pair not computed", KeyslotEquality(append(good, SlotPair{A: "x", B: "y", Err: "timeout"})), Unknown)
	wantStatus(t, "no pairs", KeyslotEquality(nil), Unknown)
}

func TestCrossSlotRefused(t *testing.T) {
	probe := CrossSlotProbe{Node: "a:1", Cluster: true, Keys: [2]string{"k1", "k2"}, Slots: [2]int{1, 2}}
	refused := probe
	refused.ErrKind, refused.Err = "CROSSSLOT", "CROSSSLOT Keys in request don't hash to the same slot"
	wantStatus(t, "cluster refuses", CrossSlotRefused(refused), Pass)

	ran := probe
	ran.Ran = true
	wantStatus(t, "cluster-enabled endpoint runs the cross-slot script", CrossSlotRefused(ran), Fail)

	disabled := ran
	disabled.Cluster = false
	wantStatus(t, "disabled mode cannot decide", CrossSlotRefused(disabled), Unknown)

	other := probe
	other.ErrKind, other.Err = "NOPERM", "NOPERM this user has no permissions to run the 'eval' command"
	wantStatus(t, "other error", CrossSlotRefused(other), Unknown)

	sameSlot := refused
	sameSlot.Slots = [2]int{5, 5}
	wantStatus(t, "probe keys in one slot", CrossSlotRefused(sameSlot), Unknown)
}

func fullScans(keys ...int) []NodeScan {
	slots := []int{5461, 5462, 5461}
	out := make([]NodeScan, len(keys))
	for i, k := range keys {
		out[i] = NodeScan{Node: string(rune('a' + i)), Slots: slots[i], Complete: true, Keys: k}
	}
	return out
}

func TestKeySizesUnder(t *testing.T) {
	const mb = 1 << 20
	ok := KeySizePass{Cluster: true, Threshold: 256 * mb, Scans: fullScans(10, 12, 9),
		Largest: []KeySize{{Node: "a", Key: "big", Bytes: 200 * mb, Slot: 3}, {Node: "b", Key: "small", Bytes: 100}}}
	r := KeySizesUnder(ok)
	wantStatus(t, "all under", r, Pass)
	if len(r.Observed) != 1 || !strings.Contains(r.Observed[0], "200 MB") {
		t.Errorf("largest key not in evidence: %v", r.Observed)
	}

	over := ok
	over.Largest = append([]KeySize{{Node: "c", Key: "huge", Bytes: 300 * mb, Slot: 99}}, ok.Largest...)
	r = KeySizesUnder(over)
	wantStatus(t, "300 MB item", r, Fail)
	if !strings.Contains(r.Counterexample, "huge slot 99 on c: 300 MB") {
		t.Errorf("counterexample: %q", r.Counterexample)
	}
	// Exactly at the threshold is not above it.
	at := ok
	at.Largest = []KeySize{{Node: "a", Key: "edge", Bytes: 256 * mb}}
	wantStatus(t, "exactly 256 MB", KeySizesUnder(at), Pass)

	// The trap: a keyless SCAN through a cluster client visits one primary.
	oneNode := ok
	oneNode.Scans = fullScans(10)
	r = KeySizesUnder(oneNode)
	wantStatus(t, "one primary of three scanned", r, Unknown)
	if !strings.Contains(r.Message, "5461 of 16384 slots") {
		t.Errorf("message does not say the coverage: %q", r.Message)
	}
	partial := ok
	partial.Scans = fullScans(10, 12, 9)
	partial.Scans[2].Complete, partial.Scans[2].Err = false, "stopped after --max-keys 5"
	wantStatus(t, "scan stopped early", KeySizesUnder(partial), Unknown)
	// A big key fails even on an incomplete pass.
	overPartial := over
	overPartial.Scans = partial.Scans
	wantStatus(t, "big key on a partial pass", KeySizesUnder(overPartial), Fail)

	standalone := KeySizePass{Threshold: 256 * mb, Scans: []NodeScan{{Node: "s", Complete: true, Keys: 3}}}
	wantStatus(t, "standalone", KeySizesUnder(standalone), Pass)
	wantStatus(t, "no threshold", KeySizesUnder(KeySizePass{Scans: standalone.Scans}), Unknown)
}

func TestCPUHeadroom(t *testing.T) {
	s := func(node string, cpu float64) CPUSample {
		return CPUSample{Node: node, Primary: true, Interval: 2 * time.Second, CPUSeconds: cpu, Source: "main thread"}
	}
	r := CPUHeadroom([]CPUSample{s("a", 0.2), s("b", 1.5)}, 0.8)
	wantStatus(t, "10% and 75%", r, Pass)
	if !strings.Contains(r.Message, "75.0% on b") {
		t.Errorf("max not reported: %q", r.Message)
	}
	r = CPUHeadroom([]CPUSample{s("a", 0.2), s("b", 1.7)}, 0.8)
	wantStatus(t, "85% engine CPU", r, Fail)
	if !strings.Contains(r.Counterexample, "b 85.0%") {
		t.Errorf("counterexample: %q", r.Counterexample)
	}
	wantStatus(t, "exactly 80%", CPUHeadroom([]CPUSample{s("a", 1.6)}, 0.8), Fail)
	wantStatus(t, "restart between reads", CPUHeadroom([]CPUSample{s("a", 0.1), s("b", -3)}, 0.8), Unknown)
	wantStatus(t, "node not measured", CPUHeadroom([]CPUSample{s("a", 0.1), {Node: "b", Err: "timeout"}}, 0.8), Unknown)
	wantStatus(t, "nothing measured", CPUHeadroom(nil, 0.8), Unknown)
}

func TestOldLeasesDrained(t *testing.T) {
	pattern := "buzz:*:tunnel:*:lease"
	wantStatus(t, "drained", OldLeasesDrained(LeaseCount{Cluster: true, Pattern: pattern, Scans: fullScans(0, 0, 0)}), Pass)

	live := LeaseCount{Cluster: true, Pattern: pattern, Scans: fullScans(0, 2, 0), Sample: []string{"buzz:c:tunnel:s1:lease", "buzz:c:tunnel:s2:lease"}}
	r := OldLeasesDrained(live)
	wantStatus(t, "two live old leases", r, Fail)
	if !strings.Contains(r.Message, "2 live") || !strings.Contains(r.Counterexample, "s2:lease") {
		t.Errorf("message/counterexample: %q / %q", r.Message, r.Counterexample)
	}
	// Zero found on two of three primaries is not zero.
	wantStatus(t, "two primaries of three", OldLeasesDrained(LeaseCount{Cluster: true, Pattern: pattern, Scans: fullScans(0, 0)}), Unknown)
	broken := fullScans(0, 0, 0)
	broken[0].Complete, broken[0].Err = false, "i/o timeout"
	wantStatus(t, "scan failed", OldLeasesDrained(LeaseCount{Cluster: true, Pattern: pattern, Scans: broken}), Unknown)
	wantStatus(t, "standalone drained", OldLeasesDrained(LeaseCount{Pattern: pattern, Scans: []NodeScan{{Node: "s", Complete: true}}}), Pass)
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KB", 1536: "1.5 KB", 256 << 20: "256 MB", 3 << 30: "3 GB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
