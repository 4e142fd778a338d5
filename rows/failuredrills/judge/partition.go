package judge

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// Spec 000 §Conformance, Failure drills
// and §Client Architecture ("a dead primary halts dispatch"): a shard's
// primary is cut off the cluster bus (fault.Partition). The isolated
// primary keeps its clients but not its cluster: after the node timeout it
// must refuse writes (CLUSTERDOWN) while the majority promotes its replica,
// the other shards keep being served, and a client moves onto the new
// primary. Replication is asynchronous (no WAIT), so the writes the
// isolated primary acknowledged before it stepped down exist only on its
// copy and are discarded when it rejoins as a replica: those losses are
// counted and listed in a loss ledger, never hidden, and every other
// acknowledged write must survive.

// PartitionHalt is what one partition did to one client's dispatch.
type PartitionHalt struct {
	Timeline PartitionTimeline
	// Recovered: a write to the partitioned shard sent after the isolated
	// primary reported cluster_state:fail was acknowledged — by the new
	// primary, since the old one refuses from then on — at Recovery.
	Recovered bool
	Recovery  time.Duration
	// Halt is the partitioned shard's longest stretch without an
	// acknowledged write, from Start to Recovery (to Until when it did not
	// recover: a lower bound).
	Halt time.Duration
	// RecoveredWhileHeld: the client reached the new primary before the
	// heal, on its own (not by a MOVED from the rejoined node).
	RecoveredWhileHeld bool
	// Shard* count the partitioned shard's writes from Start to Recovery by
	// outcome: acknowledged (by the isolated primary, then the new one),
	// refused CLUSTERDOWN, failed otherwise (by error kind).
	ShardAcked, ShardClusterDown int
	ShardOther                   map[string]int
	// Healthy* are the other shards' writes from Start to Until: the
	// longest stretch without a server answer (an acknowledgement or a
	// CLUSTERDOWN refusal, which is the server's cluster_state:fail while
	// the majority elects, not a client halt), how many there were, how
	// many failed client-side, how many were refused CLUSTERDOWN.
	HealthyGap                                   time.Duration
	HealthyOps, HealthyFails, HealthyClusterDown int
}

// PartitionHalts measures r's partition for its client.
func PartitionHalts(r PartitionRun) PartitionHalt {
	tl := r.Timeline
	h := PartitionHalt{Timeline: tl, ShardOther: map[string]int{}}
	if tl.MinorityDown > 0 {
		for _, o := range r.Writes {
			if o.Shard == tl.Shard && o.Acked() && o.Call >= tl.MinorityDown && (!h.Recovered || o.Return < h.Recovery) {
				h.Recovered, h.Recovery = true, o.Return
			}
		}
	}
	end := r.Until
	if h.Recovered {
		end = h.Recovery
		h.RecoveredWhileHeld = h.Recovery <= tl.Heal
	}
	var shardOK, healthyOK []time.Duration
	for _, o := range r.Writes {
		if o.Final || o.Call < tl.Start {
			continue
		}
		if o.Shard == tl.Shard {
			if o.Return > end {
				continue
			}
			switch {
			case o.Acked():
				h.ShardAcked++
				shardOK = append(shardOK, o.Return)
			case o.ErrKind == "CLUSTERDOWN":
				h.ShardClusterDown++
			default:
				h.ShardOther[o.ErrKind]++
			}
			continue
		}
		if o.Return > r.Until {
			continue
		}
		h.HealthyOps++
		switch {
		case o.Acked():
			healthyOK = append(healthyOK, o.Return)
		case o.ErrKind == "CLUSTERDOWN":
			h.HealthyClusterDown++
			healthyOK = append(healthyOK, o.Return)
		default:
			h.HealthyFails++
		}
	}
	h.Halt = longestGap(tl.Start, shardOK, end)
	h.HealthyGap = longestGap(tl.Start, healthyOK, r.Until)
	return h
}

// writeIndex finds a run's write by key and seq.
func writeIndex(writes []DrillOp) map[LedgerEntry]DrillOp {
	out := make(map[LedgerEntry]DrillOp, len(writes))
	for _, o := range writes {
		if !o.Final {
			out[LedgerEntry{o.Key, o.Seq}] = o
		}
	}
	return out
}

// partitionDispatch is the errors checker of the partition drill, per run:
//   - the isolated primary refused writes after the node timeout: it
//     reported cluster_state:fail, a write sent to it directly then was
//     refused CLUSTERDOWN, and no write sent after that is on its copy;
//   - the healthy shards kept being served: no stretch without a server
//     answer longer than maxGap, at most maxFailPct percent of their
//     writes failed client-side (CLUSTERDOWN refusals are counted apart);
//   - the client recovered onto the new primary within the run. How long
//     its dispatch to the partitioned shard halted is measured, not bounded
//     (spec 000 accepts the halt as the residual failure mode).
//
// It is unknown when the client wrote nothing to the partitioned shard
// before the partition, or nothing to a healthy shard during it.
func partitionDispatch(runs []PartitionRun, maxGap time.Duration, maxFailPct float64) check.Result {
	const name = "partition-dispatch"
	if len(runs) == 0 {
		return check.Unknownf(name, "no partition recorded")
	}
	var bad, seen []string
	for i, r := range runs {
		tl := r.Timeline
		d := fmt.Sprintf("partition %d (shard %d)", i+1, tl.Shard)
		before := slices.ContainsFunc(r.Writes, func(o DrillOp) bool { return o.Shard == tl.Shard && o.Acked() && o.Return < tl.Start })
		if !before {
			return check.Unknownf(name, "%s: no write to the partitioned shard was acknowledged before the partition", d)
		}
		h := PartitionHalts(r)
		if h.HealthyOps == 0 {
			return check.Unknownf(name, "%s: no write to a healthy shard during the partition", d)
		}
		rec := fmt.Sprintf("recovered %v after the partition began (%s the heal), halt %v", (h.Recovery - tl.Start).Round(time.Millisecond), map[bool]string{true: "before", false: "after"}[h.RecoveredWhileHeld], h.Halt.Round(time.Millisecond))
		if !h.Recovered {
			rec = fmt.Sprintf("did not recover within the run (halt ≥ %v)", h.Halt.Round(time.Millisecond))
		}
		seen = append(seen, fmt.Sprintf("%s: minority down +%v, promoted +%v, healed +%v, rejoined +%v; client %s; partitioned shard %d acked / %d CLUSTERDOWN / other %v; healthy shards' longest gap %v, %d/%d failed client-side (+%d CLUSTERDOWN)",
			d, roundMS(tl.MinorityDown-tl.Start), roundMS(tl.Promoted-tl.Start), roundMS(tl.Heal-tl.Start), roundMS(tl.Rejoined-tl.Start), rec,
			h.ShardAcked, h.ShardClusterDown, h.ShardOther, h.HealthyGap.Round(time.Millisecond), h.HealthyFails, h.HealthyOps, h.HealthyClusterDown))

		if tl.MinorityDown <= 0 {
			bad = append(bad, d+": the isolated primary never reported cluster_state:fail: it kept serving its slots on the minority side")
		} else {
			switch r.MinorityWrite {
			case "CLUSTERDOWN":
			case "":
				bad = append(bad, fmt.Sprintf("%s: a write sent straight to the isolated primary after it reported cluster_state:fail was acknowledged (split brain)", d))
			default:
				return check.Unknownf(name, "%s: the write sent to the isolated primary got %s, not a server answer", d, r.MinorityWrite)
			}
			idx := writeIndex(r.Writes)
			for _, e := range r.Ledger {
				if o, ok := idx[e]; ok && o.Call >= tl.MinorityDown {
					bad = append(bad, fmt.Sprintf("%s: %s seq %d, sent +%v after the isolated primary reported cluster_state:fail (+%v), is on its copy", d, e.Key, e.Seq, roundMS(o.Call-tl.Start), roundMS(tl.MinorityDown-tl.Start)))
					break
				}
			}
		}
		switch {
		case h.HealthyGap > maxGap:
			bad = append(bad, fmt.Sprintf("%s: healthy shards went %v without a server answer (allowed %v)", d, h.HealthyGap.Round(time.Millisecond), maxGap))
		case float64(h.HealthyFails)*100 > maxFailPct*float64(h.HealthyOps):
			bad = append(bad, fmt.Sprintf("%s: %d of %d healthy-shard writes failed client-side (allowed %.1f%%)", d, h.HealthyFails, h.HealthyOps, maxFailPct))
		}
		if !h.Recovered {
			bad = append(bad, fmt.Sprintf("%s: the client never had a write to shard %d acknowledged after the isolated primary stepped down (the run went on to +%v, the old primary rejoined as a replica at +%v): it did not move onto the new primary", d, tl.Shard, roundMS(r.Until-tl.Start), roundMS(tl.Rejoined-tl.Start)))
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(seen, "\n"), "%s", strings.Join(bad, "; "))
	}
	r := check.Passf(name, "%d partitions: the isolated primary refused writes after the node timeout, healthy shards kept serving (longest gap ≤ %v, client-side failures ≤ %.1f%%), the client moved onto the new primary; %s", len(runs), maxGap, maxFailPct, strings.Join(seen, "; "))
	r.Observed = seen
	return r
}

// roundMS rounds d to the millisecond for messages.
func roundMS(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// PartitionLoss is one acknowledged write the read-back lacks.
type PartitionLoss struct {
	Op DrillOp
	// Ledgered: the loss ledger lists it.
	Ledgered bool
}

// PartitionLosses lists the acknowledged writes of r missing from the
// read-back, in ack order.
func PartitionLosses(r PartitionRun) []PartitionLoss {
	ledger := map[LedgerEntry]bool{}
	for _, e := range r.Ledger {
		ledger[e] = true
	}
	var out []PartitionLoss
	for _, o := range r.Writes {
		if o.Final || !o.Acked() {
			continue
		}
		if got, ok := r.Survivors[o.Key]; ok && !slices.Contains(got, o.Seq) {
			out = append(out, PartitionLoss{Op: o, Ledgered: ledger[LedgerEntry{o.Key, o.Seq}]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Op.Return < out[j].Op.Return })
	return out
}

// PartitionReplicationAllowance is how long before the disconnect was
// requested (PartitionTimeline.Start) an acknowledged write may still be
// lost to the partition: replication is asynchronous (no WAIT), so a write
// the primary acknowledged just before its links broke may never have
// reached the replica the majority promotes. On the fixtures' one-host
// networks the replica applies a write within a millisecond or two; 100 ms
// bounds that with room for a loaded CI host, and a loss acknowledged
// earlier than this still fails the check.
const PartitionReplicationAllowance = 100 * time.Millisecond

// partitionAccounted is the silently-wrong checker of the partition drill:
// every acknowledged write is either read back after the heal or listed in
// the loss ledger with its acknowledgement inside the partition window
// [Start − PartitionReplicationAllowance, Heal]. It fails when a write is lost and the ledger does not list
// it (lost for a reason the partition does not explain), when the ledger
// excuses a write acknowledged outside the window, or when the ledger lists
// a write that was read back (the ledger is wrong). The ledgered losses are
// the finding: counted and shown, never hidden.
//
// It is unknown with fewer than minOps acknowledged writes, without the
// ledger snapshot, or when a key was not read back.
func partitionAccounted(runs []PartitionRun, minOps int) check.Result {
	const name = "partition-accounted"
	if len(runs) == 0 {
		return check.Unknownf(name, "no partition recorded")
	}
	var bad, seen []string
	acked, keys, lost := 0, 0, 0
	for i, r := range runs {
		tl := r.Timeline
		d := fmt.Sprintf("partition %d (shard %d)", i+1, tl.Shard)
		if !r.LedgerRead {
			return check.Unknownf(name, "%s: the loss ledger was not read while the partition held", d)
		}
		written := map[string]bool{}
		for _, o := range r.Writes {
			if o.Final {
				continue
			}
			written[o.Key] = true
			if o.Acked() {
				acked++
			}
		}
		for _, k := range slices.Sorted(maps.Keys(written)) { // one key named, the same on every replay
			if _, ok := r.Survivors[k]; !ok {
				return check.Unknownf(name, "%s: %s was not read back after the heal", d, k)
			}
		}
		keys += len(written)
		idx := writeIndex(r.Writes)
		for _, e := range r.Ledger {
			if slices.Contains(r.Survivors[e.Key], e.Seq) {
				bad = append(bad, fmt.Sprintf("%s: the ledger lists %s seq %d, which was read back after the heal: the ledger is wrong", d, e.Key, e.Seq))
			}
		}
		inWindow := 0
		for _, l := range PartitionLosses(r) {
			o := l.Op
			at := fmt.Sprintf("%s (shard %d) seq %d acknowledged +%v (window -%v..+%v)", o.Key, o.Shard, o.Seq, roundMS(o.Return-tl.Start), PartitionReplicationAllowance, roundMS(tl.Heal-tl.Start))
			switch {
			case !l.Ledgered:
				bad = append(bad, fmt.Sprintf("%s: lost and not in the loss ledger: %s", d, at))
			case o.Return < tl.Start-PartitionReplicationAllowance || o.Return > tl.Heal:
				bad = append(bad, fmt.Sprintf("%s: the ledger excuses a write acknowledged outside the partition window: %s", d, at))
			default:
				inWindow++
			}
		}
		lost += inWindow
		unacked := 0
		for _, e := range r.Ledger {
			if o, ok := idx[e]; !ok || !o.Acked() {
				unacked++
			}
		}
		seen = append(seen, fmt.Sprintf("%s: %d acknowledged writes lost, all on the isolated primary's copy only and acknowledged inside the partition window (ledger: %d entries, %d of them never acknowledged to the client)", d, inWindow, len(r.Ledger), unacked))
	}
	if acked < minOps {
		return check.Unknownf(name, "only %d acknowledged writes, need %d", acked, minOps)
	}
	if len(bad) > 0 {
		more := ""
		if len(bad) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(bad)-1)
		}
		return check.Failf(name, strings.Join(firstN(bad, 6), "\n"), "%s%s; %d losses inside the window accounted by the ledger", bad[0], more, lost)
	}
	r := check.Passf(name, "%d acknowledged writes over %d keys: %d lost across %d partitions, every one acknowledged by the isolated primary inside the partition window and listed in the loss ledger (asynchronous replication, no WAIT); %s", acked, keys, lost, len(runs), strings.Join(seen, "; "))
	r.Observed = seen
	return r
}

func firstN(s []string, n int) []string { return s[:min(n, len(s))] }

// Known-bad variants of a recorded partition run, for the partition
// checkers' negative controls. Each returns false when r has nothing to
// plant it on.

// DropPostHeal removes from the read-back one write acknowledged after the
// heal (preferring the partitioned shard): an acknowledged write lost
// outside the partition window, which no ledger may excuse.
func DropPostHeal(r PartitionRun) (PartitionRun, bool) {
	pick := -1
	for i, o := range r.Writes {
		if o.Final || !o.Acked() || o.Call <= r.Timeline.Rejoined || !slices.Contains(r.Survivors[o.Key], o.Seq) {
			continue
		}
		if pick < 0 || (o.Shard == r.Timeline.Shard && r.Writes[pick].Shard != r.Timeline.Shard) {
			pick = i
		}
	}
	if pick < 0 {
		return r, false
	}
	o := r.Writes[pick]
	return withoutSurvivor(r, o.Key, o.Seq), true
}

// HideLedger empties the loss ledger: losses the partition caused,
// unaccounted. It returns false when the run lost nothing (an empty ledger
// hides nothing).
func HideLedger(r PartitionRun) (PartitionRun, bool) {
	for _, l := range PartitionLosses(r) {
		if l.Ledgered {
			r.Ledger = nil
			return r, true
		}
	}
	return r, false
}

// AcceptedByMinority records the direct write to the isolated primary as
// acknowledged: a primary that kept accepting writes after the node
// timeout (split brain), as the harness's own probe sees it.
func AcceptedByMinority(r PartitionRun) PartitionRun {
	r.MinorityWrite = ""
	return r
}

// LedgerAfterMinorityDown adds to the loss ledger the partitioned shard's
// first write sent after the isolated primary reported cluster_state:fail
// (and not already ledgered): the isolated primary's copy holding a
// client's write it took after it should have refused them (split brain,
// seen in the ledger rather than in the harness's probe). It returns false
// when no write to the shard was sent after MinorityDown.
func LedgerAfterMinorityDown(r PartitionRun) (PartitionRun, bool) {
	tl := r.Timeline
	if tl.MinorityDown <= 0 {
		return r, false
	}
	ledgered := map[LedgerEntry]bool{}
	for _, e := range r.Ledger {
		ledgered[e] = true
	}
	for _, o := range r.Writes {
		e := LedgerEntry{o.Key, o.Seq}
		if o.Final || o.Shard != tl.Shard || o.Call < tl.MinorityDown || ledgered[e] {
			continue
		}
		r.Ledger = append(slices.Clone(r.Ledger), e)
		return r, true
	}
	return r, false
}

func withoutSurvivor(r PartitionRun, key string, seq int64) PartitionRun {
	surv := make(map[string][]int64, len(r.Survivors))
	for k, v := range r.Survivors {
		surv[k] = v
	}
	surv[key] = slices.DeleteFunc(slices.Clone(surv[key]), func(s int64) bool { return s == seq })
	r.Survivors = surv
	return r
}
