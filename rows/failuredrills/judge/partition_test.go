package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// partitionRun is a plausible partition of shard 0's primary on a 2-shard
// history, every 100 ms one write to key a (shard 0) and one to key b
// (shard 1): the isolated primary acknowledges a's writes until it goes
// down at 3 s (those from 1.1 s on exist only on its copy: the ledger),
// refuses them CLUSTERDOWN until the client reaches the new primary at
// 4 s; healed at 4.5 s, rejoined at 6 s, the workload stops at 7 s.
func partitionRun() PartitionRun {
	r := PartitionRun{
		Timeline:      PartitionTimeline{Shard: 0, Start: ms(1000), MinorityDown: ms(3000), Promoted: ms(3800), Heal: ms(4500), Rejoined: ms(6000)},
		Until:         ms(7000),
		MinorityWrite: "CLUSTERDOWN",
		LedgerRead:    true,
		Survivors:     map[string][]int64{},
	}
	for i := range 70 {
		t := ms(i * 100)
		seq := int64(i + 1)
		a := DrillOp{Key: "a", Shard: 0, Seq: seq, Call: t, Return: t + ms(2)}
		switch {
		case t > ms(1000) && t < ms(3000):
			r.Ledger = append(r.Ledger, LedgerEntry{Key: "a", Seq: seq})
		case t >= ms(3000) && t < ms(4000):
			a.ErrKind, a.Err = "CLUSTERDOWN", "CLUSTERDOWN The cluster is down"
		default:
			r.Survivors["a"] = append(r.Survivors["a"], seq)
		}
		b := DrillOp{Key: "b", Shard: 1, Seq: seq, Call: t, Return: t + ms(2)}
		r.Survivors["b"] = append(r.Survivors["b"], seq)
		r.Writes = append(r.Writes, a, b)
	}
	return r
}

func runs(r PartitionRun) []PartitionRun { return []PartitionRun{r} }

// partitionDispatchOf and partitionAccountedOf judge through the defined
// checkers, in the old checkers' argument order.
func partitionDispatchOf(runs []PartitionRun, maxGap time.Duration, maxFailPct float64) check.Result {
	return PartitionDispatch.Judge(PartitionDispatchInput{Runs: runs, MaxGap: maxGap, MaxFailPct: maxFailPct})
}

func partitionAccountedOf(runs []PartitionRun, minOps int) check.Result {
	return PartitionAccounted.Judge(PartitionAccountedInput{Runs: runs, MinOps: minOps})
}

func TestPartitionCheckersPassPlausibleHistory(t *testing.T) {
	r := partitionRun()
	for _, res := range []check.Result{
		partitionDispatchOf(runs(r), 2*time.Second, 1),
		partitionAccountedOf(runs(r), 10),
	} {
		if res.Status != check.Pass {
			t.Errorf("%s: %s %s\n%s", res.Checker, res.Status, res.Message, res.Counterexample)
		}
	}
	h := PartitionHalts(r)
	if !h.Recovered || h.Recovery != ms(4002) || h.RecoveredWhileHeld != true || h.Halt != ms(1100) {
		t.Errorf("halt %+v: want recovered at 4.002 s while held, halt 1.1 s (last minority ack 2.902 s)", h)
	}
	if got := len(PartitionLosses(r)); got != 19 {
		t.Errorf("%d losses, want the 19 ledgered writes", got)
	}
}

// Every known-bad variant fails its checker: the negative controls the
// failure-drills partition scenarios run.
func TestPartitionCheckersFailBadHistories(t *testing.T) {
	withoutAcks := func(r PartitionRun, keep func(DrillOp) bool) PartitionRun {
		var w []DrillOp
		for _, o := range r.Writes {
			if keep(o) {
				w = append(w, o)
			}
		}
		r.Writes = w
		return r
	}
	postHeal, ok := DropPostHeal(partitionRun())
	if !ok {
		t.Fatal("DropPostHeal found no write after the heal")
	}
	hidden, ok := HideLedger(partitionRun())
	if !ok {
		t.Fatal("HideLedger found no ledgered loss")
	}
	early := partitionRun()
	early.Timeline.Start = ms(2000) // the ledger now excuses writes acked before the partition
	lying := partitionRun()
	lying.Ledger = append(lying.Ledger, LedgerEntry{Key: "b", Seq: 5})
	lateOnMinority := partitionRun()
	lateOnMinority.Ledger = append(lateOnMinority.Ledger, LedgerEntry{Key: "a", Seq: 32}) // sent at 3.1 s, refused
	lateOnMinority.Writes[62].ErrKind = ""                                                // ... acknowledged after all

	plantedLate, ok := LedgerAfterMinorityDown(partitionRun())
	if !ok {
		t.Fatal("LedgerAfterMinorityDown found no write sent after MinorityDown")
	}
	// The first ledgered write is acknowledged at 1.102 s: with the
	// partition requested at 1.252 s it is 150 ms early, beyond the
	// replication allowance.
	tooEarly := partitionRun()
	tooEarly.Timeline.Start = ms(1252)

	cases := []struct {
		name, want string
		res        check.Result
	}{
		{"post-heal write dropped", "not in the loss ledger", partitionAccountedOf(runs(postHeal), 10)},
		{"ledger hides losses", "not in the loss ledger", partitionAccountedOf(runs(hidden), 10)},
		{"ledger excuses a write acked before the partition", "outside the partition window", partitionAccountedOf(runs(early), 10)},
		{"ledger lists a survivor", "the ledger is wrong", partitionAccountedOf(runs(lying), 10)},
		{"minority accepts a direct write", "split brain", partitionDispatchOf(runs(AcceptedByMinority(partitionRun())), 2*time.Second, 1)},
		{"minority applied a write sent after it went down", "is on its copy", partitionDispatchOf(runs(lateOnMinority), 2*time.Second, 1)},
		{"planted: ledger holds a write sent after the minority went down", "is on its copy", partitionDispatchOf(runs(plantedLate), 2*time.Second, 1)},
		{"ledger excuses a write acked beyond the replication allowance", "outside the partition window", partitionAccountedOf(runs(tooEarly), 10)},
		{"minority never went down", "never reported cluster_state:fail", partitionDispatchOf(runs(func() PartitionRun {
			r := partitionRun()
			r.Timeline.MinorityDown = 0
			return r
		}()), 2*time.Second, 1)},
		{"client never reached the new primary", "did not move onto the new primary", partitionDispatchOf(runs(withoutAcks(partitionRun(), func(o DrillOp) bool {
			return o.Shard != 0 || o.Call < ms(3000)
		})), 2*time.Second, 1)},
		{"healthy shards halted", "without a server answer", partitionDispatchOf(runs(withoutAcks(partitionRun(), func(o DrillOp) bool {
			return o.Shard != 1 || o.Call < ms(2000) || o.Call > ms(4500)
		})), 2*time.Second, 1)},
		{"healthy shards failing", "failed client-side", partitionDispatchOf(runs(func() PartitionRun {
			r := partitionRun()
			for i := range r.Writes {
				if r.Writes[i].Shard == 1 && i%10 == 1 {
					r.Writes[i].ErrKind = "network"
				}
			}
			return r
		}()), 2*time.Second, 1)},
	}
	for _, c := range cases {
		if c.res.Status != check.Fail || !strings.Contains(c.res.Message, c.want) {
			t.Errorf("%s: %s %q, want fail with %q", c.name, c.res.Status, c.res.Message, c.want)
		}
	}
}

// Without what the checkers rely on, they say unknown, never pass.
func TestPartitionCheckersUnknown(t *testing.T) {
	noLedger := partitionRun()
	noLedger.LedgerRead = false
	notRead := partitionRun()
	delete(notRead.Survivors, "b")
	odd := partitionRun()
	odd.MinorityWrite = "network"
	for name, res := range map[string]check.Result{
		"no ledger":         partitionAccountedOf(runs(noLedger), 10),
		"key not read back": partitionAccountedOf(runs(notRead), 10),
		"too few writes":    partitionAccountedOf(runs(partitionRun()), 1000),
		"probe unanswered":  partitionDispatchOf(runs(odd), 2*time.Second, 1),
		"nothing recorded":  partitionDispatchOf(nil, 2*time.Second, 1),
	} {
		if res.Status != check.Unknown {
			t.Errorf("%s: %s %q, want unknown", name, res.Status, res.Message)
		}
	}
}

// A write acknowledged just before the disconnect was requested may not
// have replicated (asynchronous replication): its loss is excused within
// PartitionReplicationAllowance of Start, not beyond (see the bad-history
// case "ledger excuses a write acked beyond the replication allowance").
func TestPartitionAccountedReplicationAllowance(t *testing.T) {
	r := partitionRun()
	// The first ledgered write is acknowledged at 1.102 s, 50 ms before.
	r.Timeline.Start = ms(1152)
	if res := partitionAccountedOf(runs(r), 10); res.Status != check.Pass {
		t.Errorf("loss acked 50 ms before the partition: %s %q, want pass", res.Status, res.Message)
	}
	r.Timeline.Start = ms(1102) + PartitionReplicationAllowance
	if res := partitionAccountedOf(runs(r), 10); res.Status != check.Pass {
		t.Errorf("loss acked exactly the allowance before the partition: %s %q, want pass", res.Status, res.Message)
	}
	r.Timeline.Start = ms(1103) + PartitionReplicationAllowance
	if res := partitionAccountedOf(runs(r), 10); res.Status != check.Fail {
		t.Errorf("loss acked 1 ms beyond the allowance: %s %q, want fail", res.Status, res.Message)
	}
}

func TestLedgerAfterMinorityDownNeedsAMinorityDown(t *testing.T) {
	r := partitionRun()
	r.Timeline.MinorityDown = 0
	if _, ok := LedgerAfterMinorityDown(r); ok {
		t.Error("planted a ledger entry without a MinorityDown to plant it after")
	}
}
