package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
)

// DurabilitySample is the record history keeps (traffic/preflight gathers it).
type DurabilitySample = history.DurabilitySample

// DurabilityWant is what the fencing directory needs of the store (spec
// 000 §Safety theorems on the production topology): MinReplicas online
// replicas per primary, and a failover short enough that a lease renewed
// every Renew with a TTL of LeaseTTL survives it (30 s / 10 s).
type DurabilityWant struct {
	MinReplicas     int
	LeaseTTL, Renew time.Duration
}

// DurabilityReady is the checklist's durability item: every primary has at
// least w.MinReplicas replicas online — without one a failover has nothing
// to promote and the directory's durability mode (barrier write + WAIT)
// never confirms a write — and, on a cluster, a cluster-node-timeout below
// w.LeaseTTL − w.Renew, the longest outage a renewed lease outlives (a
// dead primary's slots halt at least the node timeout). It says, in its
// evidence, what the settings mean for T1/T2: replication is asynchronous
// whatever min-replicas-to-write is (that setting only refuses writes when
// too few replicas are connected; it never waits for them), so the fencing
// scripts as written can lose an acknowledged lease or generation at a
// failover and only the durability mode keeps them (fencing-failover).
// A primary not read is Unknown.
func DurabilityReady(samples []DurabilitySample, w DurabilityWant) Result {
	const name = "durability"
	if len(samples) == 0 {
		return unknown(name, "no primary read")
	}
	var bad, short, observed []string
	for _, s := range samples {
		if s.Err != "" {
			bad = append(bad, s.Node+": "+s.Err)
			continue
		}
		line := fmt.Sprintf("%s: %d of %d replicas online (max lag %d s)", s.Node, s.ReplicasOnline, s.Replicas, s.MaxLag)
		switch {
		case s.MinReplicasToWrite < 0:
			line += ", min-replicas-to-write unreadable (" + s.ConfigErr + ")"
		case s.MinReplicasToWrite == 0:
			line += ", min-replicas-to-write 0 (a primary cut off its replicas keeps acknowledging writes until it is demoted)"
		default:
			line += fmt.Sprintf(", min-replicas-to-write %d with max lag %d s (a cut primary refuses writes after about %d s)", s.MinReplicasToWrite, s.MinReplicasMaxLag, s.MinReplicasMaxLag)
		}
		switch {
		case !s.Persistence:
			line += ", persistence unreadable"
		case !s.AOF && s.RDBSave == "":
			line += ", no persistence (a primary restarted before its failover comes back empty)"
		default:
			line += fmt.Sprintf(", persistence aof=%v save=%q", s.AOF, s.RDBSave)
		}
		if s.Cluster && s.NodeTimeout == 0 {
			bad = append(bad, s.Node+": cluster-node-timeout unreadable ("+s.ConfigErr+"): whether a failover outlasts a lease is undecided")
		}
		if !s.Cluster {
			line += ", failure detection by the Sentinels or the service (its down-after is not readable here; it must stay under TTL − renew too)"
		}
		if s.NodeTimeout > 0 {
			line += fmt.Sprintf(", cluster-node-timeout %v", s.NodeTimeout)
			if budget := w.LeaseTTL - w.Renew; w.LeaseTTL > 0 && s.NodeTimeout >= budget {
				short = append(short, fmt.Sprintf("%s: cluster-node-timeout %v ≥ %v (lease TTL %v − renew %v): a failover outlasts every lease of the shard", s.Node, s.NodeTimeout, budget, w.LeaseTTL, w.Renew))
			}
		}
		observed = append(observed, line)
		if s.ReplicasOnline < w.MinReplicas {
			short = append(short, fmt.Sprintf("%s: %d replicas online, need %d: a failover has nothing to promote and a WAIT for %d never confirms a write", s.Node, s.ReplicasOnline, w.MinReplicas, w.MinReplicas))
		}
	}
	observed = append(observed, "replication is asynchronous: a write is acknowledged before a replica has it, so T1/T2 across a failover hold only with the directory's durability mode (barrier write + WAIT; fencing-failover measures both)")
	var r Result
	switch {
	case len(short) > 0:
		r = fail(name, strings.Join(short, "\n"), "%d primary setting(s) break the fencing guarantees across a failover", len(short))
	case len(bad) > 0:
		r = unknown(name, "%d primary(ies) not read: %s", len(bad), strings.Join(bad, "; "))
	default:
		r = pass(name, "every primary has at least %d replica(s) online", w.MinReplicas)
		if samples[0].NodeTimeout > 0 {
			r.Message += fmt.Sprintf(" and a node timeout under %v (lease TTL − renew)", w.LeaseTTL-w.Renew)
		}
	}
	r.Observed = observed
	return r
}
