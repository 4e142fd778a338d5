package failuredrills_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/failuredrills/judge"
	"github.com/slotgate/slotgate/rows/failuredrills/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Client admission for replica repair (report.RequirementReplicaRepair):
// the raw library's replica reads, judged by the scored checker during the
// same replica kill and restart.
//
// valkey-go: its own replica reads are the naive control already run
// (SendToReplicas alone), judged over the outage only: its failure refuses
// the library, its pass is not assessed (no return after the repair is
// watched for it). go-redis: no control runs its raw library (the
// pinned-replica control is a bad client, not go-redis's default), so a
// go-redis ReadOnly cluster pool with only the library's own topology
// handling (NaiveTopology: no periodic refresh, no reload on a failed node)
// reads and writes its own keys for the whole drill, and its return to the
// repaired replica is watched like the scored pool's.

// rawReplicaName is the raw go-redis replica-read pool's client name.
const rawReplicaName = "slotgate-raw-replica-reads"

// rawReplicaRun is the raw go-redis replica-read run; nil for valkey-go.
type rawReplicaRun struct {
	w     *repairWorkload
	stop  chan struct{}
	done  chan struct{}
	watch *returnWatch
}

func startRawReplicaReads(ctx context.Context, b client.Backend, clock *traffic.Clock, keys []workload.Key, s repairScale) *rawReplicaRun {
	GinkgoHelper()
	if b != client.BackendGoRedis {
		return nil
	}
	p, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: rawReplicaName, ReplicaReads: true, NaiveTopology: true})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(p.Close)
	return &rawReplicaRun{w: &repairWorkload{pool: p, clock: clock, keys: keys, pace: s.Pace, timeout: time.Second}, stop: make(chan struct{}), done: make(chan struct{})}
}

func (r *rawReplicaRun) start(ctx context.Context) {
	if r == nil {
		return
	}
	go func() { r.w.run(ctx, r.stop); close(r.done) }()
}

// watchFrom watches the replica for the raw pool's first read after the
// restart.
func (r *rawReplicaRun) watchFrom(ctx context.Context, replica *fixtures.Node, clock *traffic.Clock) {
	if r == nil {
		return
	}
	r.watch = watchReturns(ctx, replica, clock, rawReplicaName)
}

// halt stops the load and the watch once.
func (r *rawReplicaRun) halt() {
	if r == nil || r.stop == nil {
		return
	}
	close(r.stop)
	r.stop = nil
	<-r.done
	if r.watch != nil {
		r.watch.stop()
	}
}

// rawResult judges a raw run: its naive control's reads over the outage
// (valkey-go), or the raw go-redis pool's reads over the whole drill and
// its return to the repaired replica within budget.
func rawResult(b client.Backend, naive *naiveRun, raw *rawReplicaRun, d judge.ReplicaDrill, shard int, budget time.Duration) (check.Result, string) {
	if raw == nil {
		nd := judge.ReplicaDrill{Shard: shard, Kill: d.Kill, Restarted: naive.end, End: naive.end}
		res := judge.ReplicaReadsKept.Judge(judge.ReplicaReadsInput{Ops: naive.w.history(), Drill: nd, MaxGap: maxGap, MaxFailPct: maxFailPct, MinOps: 20})
		if res.Status == check.Pass {
			// Only the outage half was judged: the raw library's return to
			// the repaired replica was not watched, so its pass admits
			// nothing (a failure over the outage still refuses it).
			res = check.Result{Checker: res.Checker, Status: check.Unknown, Message: "reads kept over the outage (" + res.Message + "), but the return to the repaired replica was not watched for the raw library: the requirement's second half is not assessed"}
		}
		return res,
			"valkey-go's own replica reads (SendToReplicas alone: the naive-replica-reads control) on their own keys, from the kill until just before the restart"
	}
	var returns []judge.RoleHalt
	if raw.watch != nil {
		returns = raw.watch.halts(d, shard, rawReplicaName)
	}
	return check.All("replica-repair", judge.ReplicaReadsKept.Judge(judge.ReplicaReadsInput{Ops: raw.w.history(), Drill: d, MaxGap: maxGap, MaxFailPct: maxFailPct, MinOps: 20}), judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: returns, Budget: budget})),
		fmt.Sprintf("go-redis's own ReadOnly cluster pool with only the library's topology handling (%s, NaiveTopology) on its own keys for the whole drill, its reads back on the repaired replica watched like the scored pool's", rawReplicaName)
}

// judgedRaw folds a dispatch-halt or resubscribe-after-failover result over
// the first n drills with what those drills can vouch for: unknown unless
// one of them killed a primary (a graceful failover leaves no dead primary
// to halt on), and an unconfirmed fault folded as the scored column folds
// it (a failure before it stands, otherwise inconclusive).
func (r *drillRun) judgedRaw(name string, res check.Result, n int) check.Result {
	killed := slices.ContainsFunc(r.drills[:n], func(d judge.Drill) bool { return d.Mode == string(fault.FailoverKill) })
	if !killed {
		res = check.Result{Checker: res.Checker, Status: check.Unknown, Message: fmt.Sprintf("no killed-primary failover among the %d drills judged (%s)", n, res.Message)}
	}
	if inc, ok := harness.FaultResult(name, r.faultErr); ok {
		res = check.BeforeUnconfirmed(res, inc)
	}
	return res
}

// cutShort is what the admission evidence says of the drills when a fault
// of theirs was not confirmed: the history the raw verdicts judge ends
// there (judgedRaw), and a verdict must not read as the whole run's.
func (r *drillRun) cutShort() string {
	inc, ok := harness.FaultResult("drills", r.faultErr)
	if !ok {
		return ""
	}
	return " The drills were cut short (" + inc.Message + "): a failure before that fault stands, a pass is inconclusive."
}

// admitReplica records the admission entry of replica repair.
func admitReplica(b client.Backend, version string, scored check.Result, naive *naiveRun, raw *rawReplicaRun, d judge.ReplicaDrill, shard int, budget time.Duration) {
	GinkgoHelper()
	res, how := rawResult(b, naive, raw, d, shard, budget)
	wrapper := "impl/client replica reads (go-redis: periodic slot-map refresh and reload on a failed node, so a repaired replica gets reads back)"
	if b == client.BackendValkeyGo {
		wrapper = "impl/client replicaRouter (a failed replica read retried on the primary) and replicaRefresh (periodic topology refresh)"
	}
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementReplicaRepair, Client: version, Path: harness.LibraryPath(b, "ClusterOptions.ReadOnly, ClusterClient.Do (replica reads)", "ClientOption.SendToReplicas, Client.Do (replica reads)"), Raw: res, Wrapped: scored, Wrapper: wrapper,
		Evidence: fmt.Sprintf("The replica of shard %d killed under load and restarted once the cluster marked it FAIL: %s.", shard, how)})
}
