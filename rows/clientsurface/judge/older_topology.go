package judge

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// TopologyOp is one operation of the older-topology workload: a SET of
// Seq on Key, or a GET of Key that read Seq (0: nil). One worker writes
// each key, with Seq 1, 2, 3, ... in order, and reads it back after each
// write.
type TopologyOp struct {
	Key   string `json:"key"`
	Write bool   `json:"write,omitempty"`
	Seq   int64  `json:"seq"`
	// Final marks the read-back after the run, by a fresh redirect-
	// absorbing pool.
	Final   bool          `json:"final,omitempty"`
	ErrKind string        `json:"err_kind,omitempty"`
	Err     string        `json:"err,omitempty"`
	Call    time.Duration `json:"call"`
	Return  time.Duration `json:"return"`
}

// Acked says the operation returned success.
func (o TopologyOp) Acked() bool { return o.ErrKind == "" }

// OlderTopologyRun is one client path's run on the older server: what it
// did and what the server was. Spec 000 §Client Architecture sets a version
// floor; the requirement is that a client routes correctly on the topology
// reply of a Redis 7 server, which a Valkey 8 run never shows (valkey-go
// reads CLUSTER SHARDS from Valkey 8, CLUSTER SLOTS from Redis 7).
type OlderTopologyRun struct {
	// Server is the older server's version as its nodes report it
	// ("redis 7.0.15").
	Server string `json:"server"`
	// Moves is how many slot migrations completed while the workload ran;
	// Wanted how many the scenario asked for.
	Moves  int `json:"moves"`
	Wanted int `json:"wanted"`
	// SlotsCalls and ShardsCalls count the CLUSTER SLOTS and CLUSTER SHARDS
	// the older server's nodes executed (INFO commandstats) while this
	// client library alone opened a pool and routed its first command:
	// which topology reply it reads.
	SlotsCalls  int64 `json:"slots_calls"`
	ShardsCalls int64 `json:"shards_calls"`
	// ClusterAware says the client routes by a slot map, so it must have
	// read a topology reply for the run to say anything about one; a
	// single-node client (a control) reads none.
	ClusterAware bool         `json:"cluster_aware"`
	Ops          []TopologyOp `json:"ops"`
	// MinOps is how many acknowledged operations the run needs.
	MinOps int `json:"min_ops"`
}

// TopologyReply names the topology command the counts show the client
// read, "" when it read none.
func (r OlderTopologyRun) TopologyReply() string {
	switch {
	case r.SlotsCalls > 0 && r.ShardsCalls > 0:
		return "CLUSTER SLOTS and CLUSTER SHARDS"
	case r.SlotsCalls > 0:
		return "CLUSTER SLOTS"
	case r.ShardsCalls > 0:
		return "CLUSTER SHARDS"
	}
	return ""
}

// premise checks what both checkers assume: a Redis 7 server, every
// migration asked for, a topology reply read (by a cluster-aware client),
// enough acknowledged
// operations, and every key read back at the end. Otherwise the run says
// nothing about routing on that reply.
func (r OlderTopologyRun) premise(name string) (Verdict, bool) {
	if major, ok := redisMajor(r.Server); !ok || major != 7 {
		return topologyUnknown(name, "the older server is %q, not Redis 7: the run says nothing of Redis 7's topology reply", r.Server), false
	}
	if r.Moves < r.Wanted {
		return topologyUnknown(name, "only %d of %d slot migrations ran on %s", r.Moves, r.Wanted, r.Server), false
	}
	if r.ClusterAware && r.TopologyReply() == "" {
		return topologyUnknown(name, "the client read no topology reply from %s (no CLUSTER SLOTS or CLUSTER SHARDS counted while it opened its pool)", r.Server), false
	}
	acked, keys, final := 0, map[string]bool{}, map[string]int{}
	for _, o := range r.Ops {
		keys[o.Key] = true
		switch {
		case o.Final && o.Acked():
			final[o.Key]++
		case !o.Final && o.Acked():
			acked++
		}
	}
	if acked < r.MinOps {
		return topologyUnknown(name, "only %d acknowledged operations, need %d", acked, r.MinOps), false
	}
	for k := range keys {
		if final[k] != 1 {
			return topologyUnknown(name, "key %s was read back %d times after the run, want once", k, final[k]), false
		}
	}
	return Verdict{}, true
}

// redisMajor is the major version of a "redis X.Y.Z" server string.
func redisMajor(server string) (int, bool) {
	v, ok := strings.CutPrefix(server, "redis ")
	if !ok {
		return 0, false
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return n, err == nil
}

// OlderTopologyErrors is the errors column's checker: on the Redis 7
// cluster, through slot migrations, no operation failed — in particular no
// MOVED, ASK or TRYAGAIN reached the caller (spec 000 §Conformance,
// Routing, on the older topology reply).
func olderTopologyErrors(r OlderTopologyRun) Verdict {
	const name = "older-topology-errors"
	if v, ok := r.premise(name); !ok {
		return v
	}
	kinds := map[string]int{}
	var first []string
	n := 0
	for _, o := range r.Ops {
		if o.Final {
			continue
		}
		n++
		if o.Acked() {
			continue
		}
		kinds[o.ErrKind]++
		if len(first) < 5 {
			first = append(first, fmt.Sprintf("%s %s @%v: %s", topologyOpName(o), o.Key, o.Call.Round(time.Millisecond), o.Err))
		}
	}
	if len(kinds) > 0 {
		redirects := kinds["MOVED"] + kinds["ASK"] + kinds["TRYAGAIN"]
		return topologyVerdict(name, Fail, fmt.Sprintf("%s in %d operations on %s (%d redirects reached the caller)", topologyKinds(kinds), n, r.Server, redirects), strings.Join(first, "\n"))
	}
	return topologyVerdict(name, Pass, fmt.Sprintf("%d operations on %s through %d slot migrations, no errors (topology from %s)", n, r.Server, r.Moves, r.TopologyReply()), "")
}

// OlderTopologyAcknowledged is the silently-wrong column's checker: on the
// Redis 7 cluster, through slot migrations, every key reads back its last
// acknowledged write (or a later write whose outcome is unknown), and no
// read returns a value older than a write acknowledged before it began.
// Only acknowledged writes count as expected data; a write refused with a
// redirect or CLUSTERDOWN did not run.
func olderTopologyAcknowledged(r OlderTopologyRun) Verdict {
	const name = "older-topology-acknowledged"
	if v, ok := r.premise(name); !ok {
		return v
	}
	byKey := map[string][]TopologyOp{}
	for _, o := range r.Ops {
		byKey[o.Key] = append(byKey[o.Key], o)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var bad []string
	lost, stale, writes := 0, 0, 0
	for _, k := range keys {
		ops := byKey[k]
		var acked []TopologyOp // acknowledged writes
		maybe := map[int64]bool{}
		var final TopologyOp
		for _, o := range ops {
			switch {
			case o.Final:
				final = o
			case o.Write && o.Acked():
				acked = append(acked, o)
				maybe[o.Seq] = true
			case o.Write && !topologyNotRun(o.ErrKind):
				maybe[o.Seq] = true // outcome unknown: it may have run
			}
		}
		writes += len(acked)
		// lastBefore is the highest write acknowledged before t.
		lastBefore := func(t time.Duration) int64 {
			var s int64
			for _, w := range acked {
				if w.Return < t && w.Seq > s {
					s = w.Seq
				}
			}
			return s
		}
		for _, o := range ops {
			if o.Write || o.Final || !o.Acked() {
				continue
			}
			if want := lastBefore(o.Call); o.Seq < want || (o.Seq != 0 && !maybe[o.Seq]) {
				stale++
				if len(bad) < 5 {
					bad = append(bad, fmt.Sprintf("%s: read %d @%v, after write %d was acknowledged", k, o.Seq, o.Call.Round(time.Millisecond), want))
				}
			}
		}
		if want := lastBefore(final.Call); final.Seq < want || (final.Seq != 0 && !maybe[final.Seq]) {
			lost++
			if len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("%s: read back %d, its last acknowledged write was %d", k, final.Seq, want))
			}
		}
	}
	if lost+stale > 0 {
		return topologyVerdict(name, Fail, fmt.Sprintf("%d of %d keys lost an acknowledged write and %d reads were stale on %s", lost, len(keys), stale, r.Server), strings.Join(bad, "\n"))
	}
	return topologyVerdict(name, Pass, fmt.Sprintf("%d acknowledged writes over %d keys on %s through %d slot migrations: every key read back its last acknowledged write, no stale read (topology from %s)", writes, len(keys), r.Server, r.Moves, r.TopologyReply()), "")
}

// topologyNotRun is an error reply that means the server did not run the
// command: it redirected or refused it.
func topologyNotRun(kind string) bool {
	switch kind {
	case "MOVED", "ASK", "TRYAGAIN", "CROSSSLOT", "CLUSTERDOWN":
		return true
	}
	return false
}

func topologyOpName(o TopologyOp) string {
	if o.Write {
		return "SET"
	}
	return "GET"
}

// topologyKinds is "3×MOVED, 1×ASK", most frequent first.
func topologyKinds(m map[string]int) string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if m[kinds[i]] != m[kinds[j]] {
			return m[kinds[i]] > m[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = fmt.Sprintf("%d×%s", m[k], k)
	}
	return strings.Join(out, ", ")
}

func topologyVerdict(name string, s Status, msg, cex string) Verdict {
	return Verdict{Checker: name, Status: s, Message: msg, Counterexample: cex}
}

func topologyUnknown(name, format string, args ...any) Verdict {
	return Verdict{Checker: name, Status: Unknown, Message: fmt.Sprintf(format, args...)}
}
