package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// Spec 000 §Conformance, Failure drills: "Replica connection repair under
// load (the #2120 path)". A relay that reads from replicas loses one: its
// shard's reads must keep being served (by the primary, or by the replica
// once repaired) and its writes must not notice; the restarted replica
// must resync.

// ReplicaReadStats is what ReplicaReadsKept measured for one kind of
// operation on the drilled shard, from the kill to the end.
type ReplicaReadStats struct {
	Ops, Failed int
	LongestGap  time.Duration
	FailedKinds map[string]int
}

// ReplicaStats measures the drilled shard's reads and writes from the kill
// to the end of the drill.
func ReplicaStats(ops []ReplicaOp, d ReplicaDrill) (reads, writes ReplicaReadStats) {
	var readOK, writeOK []time.Duration
	reads.FailedKinds, writes.FailedKinds = map[string]int{}, map[string]int{}
	for _, o := range ops {
		if o.Shard != d.Shard || o.Call < d.Kill || o.Return > d.End {
			continue
		}
		st, ok := &writes, &writeOK
		if o.Read {
			st, ok = &reads, &readOK
		}
		st.Ops++
		if o.ErrKind == "" {
			*ok = append(*ok, o.Return)
			continue
		}
		st.Failed++
		st.FailedKinds[o.ErrKind]++
	}
	reads.LongestGap = longestGap(d.Kill, readOK, d.End)
	writes.LongestGap = longestGap(d.Kill, writeOK, d.End)
	return reads, writes
}

// replicaReadsKept is the errors checker of replica repair: from the
// replica's kill to the end of the drill (restart and resync included),
// the drilled shard's reads and writes go at most maxGap without a success
// and at most maxFailPct percent of them fail. minOps guards against a
// drill without traffic on the shard.
func replicaReadsKept(ops []ReplicaOp, d ReplicaDrill, maxGap time.Duration, maxFailPct float64, minOps int) check.Result {
	const name = "replica-reads-kept"
	reads, writes := ReplicaStats(ops, d)
	if reads.Ops < minOps || writes.Ops < minOps {
		return check.Unknownf(name, "only %d reads and %d writes on shard %d during the drill, need %d each", reads.Ops, writes.Ops, d.Shard, minOps)
	}
	var bad []string
	for _, k := range []struct {
		what string
		st   ReplicaReadStats
	}{{"reads", reads}, {"writes", writes}} {
		if k.st.LongestGap > maxGap {
			bad = append(bad, fmt.Sprintf("%s of shard %d went %v without a success (allowed %v)", k.what, d.Shard, k.st.LongestGap.Round(time.Millisecond), maxGap))
		}
		if float64(k.st.Failed)*100 > maxFailPct*float64(k.st.Ops) {
			bad = append(bad, fmt.Sprintf("%d of %d %s of shard %d failed (%s; allowed %.1f%%)", k.st.Failed, k.st.Ops, k.what, d.Shard, check.CountKinds(k.st.FailedKinds), maxFailPct))
		}
	}
	seen := fmt.Sprintf("replica of shard %d killed @%v, answering again @%v: %d reads (%d failed, longest gap %v), %d writes (%d failed, longest gap %v)",
		d.Shard, d.Kill.Round(time.Millisecond), d.Restarted.Round(time.Millisecond), reads.Ops, reads.Failed, reads.LongestGap.Round(time.Millisecond), writes.Ops, writes.Failed, writes.LongestGap.Round(time.Millisecond))
	if len(bad) > 0 {
		return check.Failf(name, seen, "%s", strings.Join(bad, "; "))
	}
	return check.Passf(name, "%s — within %v and %.1f%%", seen, maxGap, maxFailPct)
}

// replicaResynced is the resync half of replica repair: the restarted
// replica's link to its primary is up, it has applied the primary's whole
// replication stream (equal offsets) and holds as many keys.
//
// Premise: the reading names a replica and the primary had something to
// resync (a replication offset and keys): against an empty primary, or a
// primary whose offset was not read, equal readings prove nothing, so the
// result is unknown.
func replicaResynced(s ReplicaSync) check.Result {
	const name = "replica-resynced"
	seen := fmt.Sprintf("%s: link up %v, offset %d of the primary's %d, %d keys of %d", s.Replica, s.LinkUp, s.ReplicaOffset, s.PrimaryOffset, s.ReplicaKeys, s.PrimaryKeys)
	if s.Replica == "" || s.PrimaryOffset <= 0 || s.PrimaryKeys <= 0 {
		return check.Unknownf(name, "premise: a named replica of a primary with a replication stream and keys to resync; read %s", seen)
	}
	if !s.LinkUp || s.ReplicaOffset != s.PrimaryOffset || s.ReplicaKeys != s.PrimaryKeys {
		return check.Failf(name, seen, "replica not resynced: %s", seen)
	}
	return check.Passf(name, "resynced: %s", seen)
}

// PlantReplicaHalt is a known-bad history for ReplicaReadsKept's control:
// every read of the drilled shard issued while the replica was dead fails
// without a reply, as from a client that keeps its reads on a dead replica
// until it comes back (no replica connection repair). It reports false when
// no read fell in that window.
func PlantReplicaHalt(ops []ReplicaOp, d ReplicaDrill) ([]ReplicaOp, bool) {
	out := append([]ReplicaOp(nil), ops...)
	planted := false
	for i, o := range out {
		if o.Read && o.Shard == d.Shard && o.Call >= d.Kill && o.Call < d.Restarted {
			o.ErrKind, o.Err = "network", "planted: read sent to the dead replica"
			out[i] = o
			planted = true
		}
	}
	return out, planted
}
