package failuredrills_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/failuredrills/judge"
	"github.com/slotgate/slotgate/rows/failuredrills/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Spec 000 §Conformance, Failure drills: "Replica connection repair under
// load (the #2120 path)"; §Client Architecture: replica reads lean on the
// replica-repair path. A command pool that reads from replicas
// (client.Options.ReplicaReads) writes and reads every key in turn while
// one shard's replica is killed and restarted.
//
// Both backends are scored through impl's pool, which fails a read over to
// the primary when its replica is gone (valkey-go does not do that itself;
// see impl/client replicaRouter). A real bad client runs on its own keys
// during the same kill as a negative control the same checker must fail:
// for valkey-go its naive default (client.Options.NaiveReplicaReads:
// SendToReplicas alone), which keeps reading from the dead replica until
// the cluster marks it FAIL and a topology refresh drops it; for go-redis,
// whose ReadOnly cluster client marks a failed node and reads elsewhere
// (no option turns that off), reads pinned to the replica's address.

var _ = Describe("failure-drills: replica repair", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "failure-drills/replica-repair/" + string(b), Row: row, Column: report.ColumnErrors,
			Spec: "a replica killed and restarted under load: its shard's reads (sent to replicas) and writes keep succeeding, and the replica resyncs (000 §Conformance, Failure drills: replica connection repair under load, the #2120 path)",
			Run:  func(ctx SpecContext) report.Check { return replicaRepair(ctx, b) },
		})
	}
})

type repairScale struct {
	KeysPerShard int
	Pace         time.Duration
	// Before, Down and After are the phases: load before the kill, the
	// replica dead, load after it answers again.
	Before, Down, After time.Duration
}

func repairScaleOf() repairScale {
	if cfg.Profile == harness.ProfileFull {
		return repairScale{KeysPerShard: 8, Pace: 2 * time.Millisecond, Before: time.Second, Down: 3 * maxGap, After: 3 * time.Second}
	}
	// NOTE: the replica stays dead twice maxGap (the 2 s node timeout):
	// long enough that a client which keeps its reads on the dead replica
	// shows a gap the checker cannot miss, and that the cluster marks the
	// replica FAIL while the load runs.
	return repairScale{KeysPerShard: 4, Pace: 5 * time.Millisecond, Before: 500 * time.Millisecond, Down: 2 * maxGap, After: 1500 * time.Millisecond}
}

// commandDoer is what the workload needs of a client: impl's Pool, or a
// negative control's bad client.
type commandDoer interface {
	Do(ctx context.Context, cmd client.Cmd) (any, error)
}

// repairWorkload runs one sequential writer-reader per key: SET key seq,
// then GET key, each with a timeout, recording both.
type repairWorkload struct {
	pool    commandDoer
	clock   *traffic.Clock
	keys    []workload.Key
	pace    time.Duration
	timeout time.Duration

	mu  sync.Mutex
	ops []judge.ReplicaOp
}

func (w *repairWorkload) run(ctx context.Context, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for _, k := range w.keys {
		wg.Go(func() {
			for seq := 1; ; seq++ {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				case <-time.After(w.pace):
				}
				w.do(ctx, k, false, client.NewCmd("SET", []string{k.Key}, strconv.Itoa(seq)))
				w.do(ctx, k, true, client.NewCmd("GET", []string{k.Key}))
			}
		})
	}
	wg.Wait()
}

func (w *repairWorkload) do(ctx context.Context, k workload.Key, read bool, cmd client.Cmd) {
	o := judge.ReplicaOp{Key: k.Key, Shard: k.Shard, Read: read, Call: w.clock.Now()}
	octx, cancel := context.WithTimeout(ctx, w.timeout)
	_, err := w.pool.Do(octx, cmd)
	cancel()
	o.Return = w.clock.Now()
	if err != nil {
		o.ErrKind, o.Err = traffic.ErrKind(err), err.Error()
	}
	w.mu.Lock()
	w.ops = append(w.ops, o)
	w.mu.Unlock()
}

func (w *repairWorkload) history() []judge.ReplicaOp {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]judge.ReplicaOp(nil), w.ops...)
}

// replicaControlDial and replicaControlRead are the valkey-go replica-read
// controls' dial and read timeouts (ReadTimeout is valkey-go's
// ConnWriteTimeout), set rather than inherited: valkey-go's own defaults
// (DefaultDialTimeout; ConnWriteTimeout ten keep-alive intervals), so a
// connection to the dead replica is given up no sooner than the library
// would. A shorter one tears it down and refreshes the slot map sooner,
// and the control would measure that timeout, not the library's replica
// routing.
const (
	replicaControlDial = 5 * time.Second
	replicaControlRead = 10 * time.Second
)

// replicaPool opens a command pool that reads from replicas; naive keeps
// the client library's own replica-read behaviour (negative control).
func replicaPool(ctx context.Context, b client.Backend, name string, naive bool) client.Pool {
	GinkgoHelper()
	o := client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: name, ReplicaReads: true, NaiveReplicaReads: naive}
	if naive {
		o.DialTimeout, o.ReadTimeout = replicaControlDial, replicaControlRead
	}
	p, err := client.NewPool(ctx, o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(p.Close)
	return p
}

// replicasListed reports the first node whose CLUSTER SLOTS shows a slot
// range without a replica.
func replicasListed(ctx context.Context) error {
	for _, n := range cluster.Nodes() {
		v, err := n.Do(ctx, "CLUSTER", "SLOTS")
		if err != nil {
			return err
		}
		for _, r := range v.([]any) {
			if e := r.([]any); len(e) < 4 {
				return fmt.Errorf("%s lists slots %v-%v without a replica", n.Name(), e[0], e[1])
			}
		}
	}
	return nil
}

// getCalls is a node's GET count (INFO commandstats), 0 when it has none.
func getCalls(ctx context.Context, n *fixtures.Node) float64 {
	GinkgoHelper()
	cs, err := n.Info(ctx, "commandstats")
	Expect(err).NotTo(HaveOccurred())
	for _, kv := range strings.Split(cs["cmdstat_get"], ",") {
		if v, ok := strings.CutPrefix(kv, "calls="); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// syncState reads the replica's replication state next to its primary's.
func syncState(ctx context.Context, replica, primary *fixtures.Node) judge.ReplicaSync {
	GinkgoHelper()
	s := judge.ReplicaSync{Replica: replica.Name()}
	pi, err := primary.Info(ctx, "replication")
	Expect(err).NotTo(HaveOccurred())
	s.PrimaryOffset, _ = strconv.ParseInt(pi["master_repl_offset"], 10, 64)
	pk, err := primary.Do(ctx, "DBSIZE")
	Expect(err).NotTo(HaveOccurred())
	s.PrimaryKeys = pk.(int64)
	if replica.State() != fixtures.NodeRunning {
		return s
	}
	ri, err := replica.Info(ctx, "replication")
	Expect(err).NotTo(HaveOccurred())
	s.LinkUp = ri["master_link_status"] == "up"
	s.ReplicaOffset, _ = strconv.ParseInt(ri["slave_repl_offset"], 10, 64)
	rk, err := replica.Do(ctx, "DBSIZE")
	Expect(err).NotTo(HaveOccurred())
	s.ReplicaKeys = rk.(int64)
	return s
}

func replicaRepair(ctx SpecContext, b client.Backend) report.Check {
	s := repairScaleOf()
	name := "failure-drills/replica-repair/" + string(b)
	rng := cfg.Rand(name)
	shard := rng.IntN(len(cluster.Primaries()))
	primary := cluster.Primaries()[shard]
	var replica *fixtures.Node
	for _, n := range cluster.Replicas() {
		if n.Shard() == shard {
			replica = n
			break
		}
	}
	Expect(replica).NotTo(BeNil(), "shard %d has no replica in %s", shard, cluster.Spec)
	keysFor := func(prefix string) []workload.Key {
		var out []workload.Key
		per := map[int]int{}
		for i := 0; len(out) < s.KeysPerShard*len(cluster.Primaries()); i++ {
			k := fmt.Sprintf("rr:%s:%x:%d", prefix, rng.Uint32(), i)
			n, err := cluster.NodeForSlot(ctx, slot.Of(k))
			Expect(err).NotTo(HaveOccurred())
			if per[n.Shard()] < s.KeysPerShard {
				per[n.Shard()]++
				out = append(out, workload.Key{Key: k, Shard: n.Shard()})
			}
		}
		return out
	}
	keys := keysFor("s")
	By("seeding every key on its primary; waiting until every node's CLUSTER SLOTS lists the replicas")
	for _, k := range keys {
		_, err := cluster.Primaries()[k.Shard].Do(ctx, "SET", k.Key, "0")
		Expect(err).NotTo(HaveOccurred())
	}
	// A replica whose replication offset is still 0 in the gossip is left
	// out of CLUSTER SLOTS (Valkey's isReplicaAvailable), and a client
	// never reads from a replica it was not shown.
	Eventually(func() error { return replicasListed(ctx) }).WithTimeout(15 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	clock := traffic.ClockOf(ctx)
	pool := replicaPool(ctx, b, scoredName, false)
	scored := &repairWorkload{pool: pool, clock: clock, keys: keys, pace: s.Pace, timeout: time.Second}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { scored.run(ctx, stop) })
	stopped := false
	halt := func() {
		if !stopped {
			stopped = true
			close(stop)
			wg.Wait()
		}
	}
	DeferCleanup(halt)
	naive := startNaive(ctx, b, replica, clock, keysFor("n"), s)
	DeferCleanup(naive.halt)
	rawGR := startRawReplicaReads(ctx, b, clock, keysFor("g"), s) // client admission (admission_test.go); nil for valkey-go
	DeferCleanup(rawGR.halt)
	// The replica-return control: valkey-go replica reads (impl's router)
	// with only the library's own topology refresh, on their own keys for
	// the whole drill. Both backends' cells use it: go-redis's own default
	// gets its reads back once its 15 s failing mark expires, which a long
	// enough outage hides, while valkey-go's never come back without a
	// refresh.
	stalePool := staleTopologyPool(ctx, replica)
	stale := &repairWorkload{pool: stalePool, clock: clock, keys: keysFor("t"), pace: s.Pace, timeout: time.Second}
	stopStale := make(chan struct{})
	var staleWG sync.WaitGroup
	staleWG.Go(func() { stale.run(ctx, stopStale) })
	haltStale := sync.OnceFunc(func() { close(stopStale); staleWG.Wait() })
	DeferCleanup(haltStale)

	time.Sleep(s.Before) // a duration: traffic before the kill
	// Counted before the naive control starts reading: these GETs are the
	// scored pool's.
	readsBefore := getCalls(ctx, replica)
	naive.start(ctx)
	rawGR.start(ctx)
	By(fmt.Sprintf("kill %s (replica of shard %d) under load; it stays dead %v", replica.Name(), shard, s.Down))
	replicaID, err := replica.ID(ctx)
	Expect(err).NotTo(HaveOccurred())
	// The stale-topology premise compares the control's slot map with the
	// address the cluster announces; it means something only if the map
	// held that address before the kill (a provider announcing another
	// address than the client parsed would make "dropped" always true).
	announced, err := announcedAddr(ctx, primary, replicaID)
	Expect(err).NotTo(HaveOccurred())
	staleHeld := inSlotMap(stalePool, announced)
	d := judge.ReplicaDrill{Shard: shard, Kill: clock.Now()}
	began := time.Now()
	killed := fault.HoldSince(ctx, "node/kill-replica", replica.Name(), began)
	Expect(replica.Kill()).To(Succeed())
	time.Sleep(s.Down) // a duration: how long the replica stays dead is the fault
	// NOTE: restarted only once the cluster has marked it FAIL (as a
	// replica dead for longer than cluster-node-timeout is): then every
	// client's slot map may have dropped it, and its return needs a
	// refresh — the case impl's replica-read refresh exists for.
	Eventually(func() error { return markedFail(ctx, primary, replica, replicaID) }).WithTimeout(15 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	// NOTE: and at least two seconds more, until the stale-topology
	// control's own slot map has dropped the replica (bounded): a client
	// refreshing on errors (valkey-go) retries the dead replica once its 1 s
	// cool-down ends, and only a refresh after the FAIL drops it from the
	// slot map; restarted before that, the replica would never have left and
	// the control models nothing (under load the refresh came late once, and
	// the control's reads were back 366 ms after the restart).
	failAt := time.Now()
	harness.WaitAtMost(ctx, 6*time.Second, 50*time.Millisecond, func() bool {
		return time.Since(failAt) >= 2*time.Second && !inSlotMap(stalePool, announced)
	})
	staleDropped := !inSlotMap(stalePool, announced)
	staleWaited := time.Since(failAt)
	// The naive control is judged over the outage alone, and stopped before
	// the restart so that every GET the restarted replica counts is the
	// scored pool's.
	naive.halt()
	By("restart it; the load goes on")
	Expect(replica.Restart(ctx)).To(Succeed())
	d.Restarted = clock.Now()
	killedW := killed.EndAt(began.Add(d.Restarted - d.Kill))
	// Reads must come back to the repaired replica within the budget:
	// watched per client (CLIENT LIST on the replica), until both the
	// scored pool and the stale-topology control read from it, or the
	// budget passed.
	budget := cfg.HaltBudget.ReplicaReads
	back := watchReturns(ctx, replica, clock, scoredName, staleName)
	rawGR.watchFrom(ctx, replica, clock)
	waitUntil(ctx, d.Restarted+max(s.After, min(budget, maxControlWait)+250*time.Millisecond), clock, func() bool {
		return clock.Now() >= d.Restarted+s.After && back.returned(scoredName) && back.returned(staleName)
	})
	back.stop()
	d.End = clock.Now()
	halt()
	haltStale()
	rawGR.halt()
	repaired := time.Since(began)

	By("writes stopped: wait for the replica to apply the primary's whole stream")
	var synced judge.ReplicaSync
	Eventually(func() check.Result {
		synced = syncState(ctx, replica, primary)
		return judge.ReplicaResynced.Judge(synced)
	}).WithTimeout(10 * time.Second).WithPolling(50 * time.Millisecond).Should(HaveField("Status", check.Pass))
	readsAfter := getCalls(ctx, replica)
	behind := replicaBehind(ctx, replica, primary)

	ops := scored.history()
	reads, writes := judge.ReplicaStats(ops, d)
	returns := back.halts(d, shard, scoredName)
	result := check.All("replica-repair", judge.ReplicaReadsKept.Judge(judge.ReplicaReadsInput{Ops: ops, Drill: d, MaxGap: maxGap, MaxFailPct: maxFailPct, MinOps: 20}), judge.ReplicaResynced.Judge(synced),
		judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: append(returns, judge.RoleHalt{Role: "replica reads", What: fmt.Sprintf("kill of the replica of shard %d (longest gap between successful reads of the shard)", shard), Halt: reads.LongestGap, Recovered: true}), Budget: budget}))
	if readsBefore == 0 {
		result = check.All("replica-repair", result, check.Result{Status: check.Unknown, Message: fmt.Sprintf("%s served no GET before the kill: the pool did not read from replicas, so the drill proves nothing about replica repair", replica.Name())})
	}
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Metrics = map[string]float64{
		"operations": float64(len(ops)), "drilled_reads": float64(reads.Ops), "drilled_reads_failed": float64(reads.Failed), "drilled_read_gap_ms": float64(reads.LongestGap.Milliseconds()),
		"drilled_writes": float64(writes.Ops), "drilled_writes_failed": float64(writes.Failed), "drilled_write_gap_ms": float64(writes.LongestGap.Milliseconds()),
		"replica_gets_before_kill": readsBefore, "replica_gets_after_restart": readsAfter, "kill_to_end_ms": float64(repaired.Milliseconds()),
	}
	ev.Faults = harness.Windows(killedW)
	tl := history.History{Seed: cfg.Seed, Ops: workload.ReplicaTimelineOps(string(b), ops),
		Faults: []history.FaultWindow{{Fault: "node/kill-replica", Target: replica.Name(), Start: d.Kill, End: d.Restarted}}}
	for _, h := range returns {
		tl.Spans = append(tl.Spans, history.Span{Name: "replica return", Client: string(b), Start: d.Restarted, End: d.Restarted + h.Halt})
	}
	ev.Timeline = harness.Timeline(tl)
	ev.Observed = append(ev.Observed, fmt.Sprintf("the stale-topology control's own slot map %s %s %v after the FAIL, when it was restarted", map[bool]string{true: "had dropped", false: "still held"}[staleDropped], announced, staleWaited.Round(time.Millisecond)))
	ev.Observed = append(ev.Observed, fmt.Sprintf("%s served %.0f GETs before its kill (replica reads in use) and %.0f after its restart (all clients)", replica.Name(), readsBefore, readsAfter))
	for _, h := range returns {
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s: %s sent its first read to the repaired replica %v after the restart%s (budget %v)", h.What, pool.Version(), h.Halt.Round(time.Millisecond), lowerBound(h), budget))
		ev.Metrics["replica_return_ms"] = float64(h.Halt.Milliseconds())
	}
	if len(reads.FailedKinds) > 0 {
		ev.Observed = append(ev.Observed, fmt.Sprintf("failed reads of shard %d by kind: %v", shard, reads.FailedKinds))
	}

	By("negative controls: a client whose reads stay on the dead replica; a running replica held behind its primary")
	planted, ok := judge.PlantReplicaHalt(ops, d)
	// Caught by construction (the replica stays dead 2–3× maxGap): it
	// proves the thresholds can fail at all, not that a bad client is seen;
	// the real bad client is naive.control.
	noRepair := harness.SelfTest("no-replica-repair", "threshold self-test (planted history variant, caught by construction since the replica stays dead longer than maxGap): the recorded history with every read of the drilled shard failing while its replica was dead", judge.ReplicaReadsKept.Judge(judge.ReplicaReadsInput{Ops: planted, Drill: d, MaxGap: maxGap, MaxFailPct: maxFailPct, MinOps: 20}))
	if !ok {
		noRepair = harness.NotExercised(noRepair, "no read of the drilled shard to fail")
	}
	// Counted caught only when the replica was running with its link up:
	// then the offset and key comparisons did the catching.
	notResynced := harness.Variant("not-resynced", "the restarted replica, running with its link up, read while CLIENT PAUSE WRITE held back its replication stream and the primary took new keys: the resync check must not pass a replica that has not caught up", judge.ReplicaResynced.Judge(behind))
	notResynced = harness.Premise(notResynced, behind.LinkUp && behind.ReplicaOffset < behind.PrimaryOffset, "the restarted replica was not running behind its primary with its link up")
	ev.Metrics["behind_replica_offset_lag"] = float64(behind.PrimaryOffset - behind.ReplicaOffset)
	ctl, metrics := naive.control(d, shard)
	maps.Copy(ev.Metrics, metrics)
	staleReturns := back.halts(d, shard, staleName)
	for _, h := range staleReturns {
		ev.Metrics["stale_topology_return_ms"] = float64(h.Halt.Milliseconds())
	}
	staleCtl := harness.Variant("stale-topology-replica-reads", "valkey-go replica reads through impl's replica router but with only the library's own topology refresh (no periodic refresh): the restarted replica, dropped from its slot map while FAIL, never gets reads back — run on its own keys during the same kill and restart, watched per client name on the replica until the budget passed",
		judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: staleReturns, Budget: budget}))
	staleCtl = harness.Premise(staleCtl, staleHeld && staleDropped, map[bool]string{
		true:  fmt.Sprintf("valkey-go's own slot map still held %s (%s) when it was restarted: its reads had nowhere to come back from", replica.Name(), announced),
		false: fmt.Sprintf("valkey-go's own slot map never held %s as the cluster announces it (%s), so its dropping it proves nothing", replica.Name(), announced),
	}[staleHeld])
	admitReplica(b, pool.Version(), result, naive, rawGR, d, shard, budget)
	return harness.Check(row, report.ColumnErrors, "", result, ev, noRepair, notResynced, ctl, staleCtl)
}

// Client names the replica-return watch tells apart on the replica.
const (
	scoredName = "slotgate-replica-reads"
	staleName  = "slotgate-replica-stale-topology"
)

// staleTopologyPool is the replica-return control's pool (see
// replicaRepair). Its seed list leaves out the drilled replica. NOTE:
// valkey-go keeps a connection to every seed and asks all of them at each
// topology refresh; a dead seed fails that ask, and its closed connection
// starts the next refresh (cluster.go connFn's close hook → lazyRefresh),
// so with the replica as a seed the library refreshed on its own every
// second or so until the replica came back, and then read from it within
// 150–370 ms of the restart: the control went uncaught under load. A client
// seeded with the primaries only (a configuration endpoint, as deployed)
// has nothing left to refresh it once its map dropped the replica.
func staleTopologyPool(ctx context.Context, drilled *fixtures.Node) client.Pool {
	GinkgoHelper()
	seeds := slices.DeleteFunc(cluster.Addrs(), func(a string) bool { return a == drilled.Addr() })
	p, err := client.NewPool(ctx, client.Options{Backend: client.BackendValkeyGo, Mode: client.ModeCluster, Addrs: seeds, ClientName: staleName, ReplicaReads: true, NaiveTopology: true,
		DialTimeout: replicaControlDial, ReadTimeout: replicaControlRead})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(p.Close)
	return p
}

// announcedAddr is the host:port the cluster announces for node id, as
// primary's CLUSTER NODES lists it: the address a client's slot map holds.
func announcedAddr(ctx context.Context, primary *fixtures.Node, id string) (string, error) {
	v, err := primary.Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return "", fmt.Errorf("cluster nodes on %s: %w", primary.Name(), err)
	}
	for _, line := range strings.Split(fmt.Sprint(v), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == id {
			addr, _, _ := strings.Cut(f[1], "@")
			return addr, nil
		}
	}
	return "", fmt.Errorf("%s does not list node %s", primary.Name(), id)
}

// inSlotMap says whether p's slot map routes to addr now. A pool whose map
// cannot be read (go-redis) counts as still holding it: the premise it
// serves is then never taken as met.
func inSlotMap(p client.Pool, addr string) bool {
	nodes, ok := client.SlotMapNodes(p)
	return !ok || slices.Contains(nodes, addr)
}

// markedFail says why primary does not (yet) see replica as FAIL.
func markedFail(ctx context.Context, primary, replica *fixtures.Node, id string) error {
	v, err := primary.Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(fmt.Sprint(v), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[0] == id {
			if slices.Contains(strings.Split(f[2], ","), "fail") {
				return nil
			}
			return fmt.Errorf("%s sees %s as %s", primary.Name(), replica.Name(), f[2])
		}
	}
	return fmt.Errorf("%s does not list %s", primary.Name(), replica.Name())
}

// returnWatch records, per client name, when a connection of that client
// on the replica was first seen running GET (CLIENT LIST cmd=get): the
// client's reads are back on the repaired replica.
type returnWatch struct {
	mu    sync.Mutex
	first map[string]time.Duration
	stop  func()
}

func watchReturns(ctx context.Context, replica *fixtures.Node, clock *traffic.Clock, names ...string) *returnWatch {
	w := &returnWatch{first: map[string]time.Duration{}}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for wctx.Err() == nil {
			at := clock.Now()
			if v, err := replica.Do(wctx, "CLIENT", "LIST"); err == nil {
				for _, line := range strings.Split(fmt.Sprint(v), "\n") {
					name, getting := "", false
					for _, f := range strings.Fields(line) {
						if n, ok := strings.CutPrefix(f, "name="); ok {
							name = n
						}
						getting = getting || f == "cmd=get"
					}
					w.mu.Lock()
					if _, seen := w.first[name]; getting && !seen && slices.Contains(names, name) {
						w.first[name] = at
					}
					w.mu.Unlock()
				}
			}
			select {
			case <-wctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	w.stop = sync.OnceFunc(func() { cancel(); wg.Wait() })
	DeferCleanup(w.stop)
	return w
}

func (w *returnWatch) returned(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.first[name]
	return ok
}

// halts is name's replica-return halt: restart → first read seen, or
// restart → the drill's end when none was (a lower bound).
func (w *returnWatch) halts(d judge.ReplicaDrill, shard int, name string) []judge.RoleHalt {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := judge.RoleHalt{Role: "replica reads", What: fmt.Sprintf("restart of the replica of shard %d (reads back on it)", shard), Halt: d.End - d.Restarted}
	if at, ok := w.first[name]; ok {
		h.Halt, h.Recovered = max(0, at-d.Restarted), true
	}
	return []judge.RoleHalt{h}
}

// replicaBehind holds replica's replication stream back (CLIENT PAUSE
// WRITE on a replica also postpones the writes its primary streams to it,
// while the link stays up), writes new keys on primary, and reads the
// replica's state: a running, linked replica that has not caught up. The
// pause is lifted and the keys removed before it returns.
func replicaBehind(ctx context.Context, replica, primary *fixtures.Node) judge.ReplicaSync {
	GinkgoHelper()
	var keys []string
	for i := 0; len(keys) < 3; i++ {
		k := fmt.Sprintf("rr:behind:%d", i)
		n, err := cluster.NodeForSlot(ctx, slot.Of(k))
		Expect(err).NotTo(HaveOccurred())
		if n == primary {
			keys = append(keys, k)
		}
	}
	// The pause's own timeout bounds it should the unpause below not run.
	_, err := replica.Do(ctx, "CLIENT", "PAUSE", "10000", "WRITE")
	Expect(err).NotTo(HaveOccurred())
	unpause := func() { _, _ = replica.Do(context.WithoutCancel(ctx), "CLIENT", "UNPAUSE") }
	DeferCleanup(unpause)
	for _, k := range keys {
		_, err := primary.Do(ctx, "SET", k, "behind")
		Expect(err).NotTo(HaveOccurred())
	}
	behind := syncState(ctx, replica, primary)
	unpause()
	for _, k := range keys {
		_, err := primary.Do(ctx, "DEL", k)
		Expect(err).NotTo(HaveOccurred())
	}
	return behind
}

// naiveRun is the negative control of replica repair: a real client whose
// reads stay on a dead replica, recorded on its own keys from just before
// the kill to just before the restart.
type naiveRun struct {
	name, why string
	w         *repairWorkload
	stop      chan struct{}
	wg        sync.WaitGroup
	end       time.Duration
}

// startNaive opens the bad client now (so that valkey-go's slot map,
// replicas included, is loaded before the kill); its load starts with
// start. valkey-go: its own replica reads (NaiveReplicaReads). go-redis:
// reads pinned to the drilled replica (pinnedReplicaReads), on the drilled
// shard's keys only, since the replica answers MOVED for any other slot.
func startNaive(ctx context.Context, b client.Backend, replica *fixtures.Node, clock *traffic.Clock, keys []workload.Key, s repairScale) *naiveRun {
	GinkgoHelper()
	n := &naiveRun{stop: make(chan struct{})}
	var pool commandDoer
	switch b {
	case client.BackendValkeyGo:
		n.name, n.why = "naive-replica-reads", "valkey-go's own replica reads (SendToReplicas alone, no fail-over to the primary), run on their own keys during the same kill until the restart: reads stay on the dead replica until the cluster marks it FAIL and a topology refresh drops it"
		pool = replicaPool(ctx, b, "slotgate-naive-replica-reads", true)
	default:
		n.name, n.why = "pinned-replica-reads", "go-redis reads pinned to the drilled replica's address (a single-node client that sent READONLY; writes through a cluster pool), run on their own keys of the drilled shard during the same kill until the restart: a client that keeps reading from a dead replica"
		pool = pinnedReplicaReads(ctx, b, replica)
		keys = slices.DeleteFunc(keys, func(k workload.Key) bool { return k.Shard != replica.Shard() })
	}
	n.w = &repairWorkload{pool: pool, clock: clock, keys: keys, pace: s.Pace, timeout: time.Second}
	return n
}

// pinnedReads is a bad client for go-redis: writes through a cluster pool,
// GETs on one connection pool pinned to a replica (READONLY on connect), so
// that reads never leave that replica, dead or alive.
type pinnedReads struct {
	writes client.Pool
	reads  *redis.Client
}

func pinnedReplicaReads(ctx context.Context, b client.Backend, replica *fixtures.Node) *pinnedReads {
	GinkgoHelper()
	reads := redis.NewClient(&redis.Options{
		Addr:       replica.Addr(),
		ClientName: "slotgate-pinned-replica-reads",
		// No retries: each failed read is recorded as it happens, so the
		// outage yields enough reads for the checker's minimum.
		MaxRetries: -1,
		OnConnect:  func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() },
	})
	DeferCleanup(reads.Close)
	Expect(reads.Ping(ctx).Err()).To(Succeed())
	return &pinnedReads{writes: replicaPool(ctx, b, "slotgate-pinned-replica-writes", false), reads: reads}
}

func (p *pinnedReads) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	if len(cmd.Prefix) == 1 && cmd.Prefix[0] == "GET" && len(cmd.Keys) == 1 {
		v, err := p.reads.Get(ctx, cmd.Keys[0]).Result()
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		return v, err
	}
	return p.writes.Do(ctx, cmd)
}

func (n *naiveRun) start(ctx context.Context) {
	if n == nil {
		return
	}
	n.wg.Go(func() { n.w.run(ctx, n.stop) })
}

// halt stops the load once; the control is judged up to that moment.
func (n *naiveRun) halt() {
	if n == nil || n.stop == nil {
		return
	}
	close(n.stop)
	n.stop = nil
	n.wg.Wait()
	n.end = n.w.clock.Now()
}

// control judges the naive history with the scored checker over the
// outage (kill to halt), and returns what it measured as evidence metrics.
// It counts as caught only when the reads broke the checker's bounds: a
// failure on writes alone would not show a client reading from a dead
// replica.
func (n *naiveRun) control(d judge.ReplicaDrill, shard int) (report.Control, map[string]float64) {
	nd := judge.ReplicaDrill{Shard: shard, Kill: d.Kill, Restarted: n.end, End: n.end}
	ops := n.w.history()
	reads, writes := judge.ReplicaStats(ops, nd)
	metrics := map[string]float64{"naive_drilled_reads": float64(reads.Ops), "naive_drilled_reads_failed": float64(reads.Failed), "naive_drilled_read_gap_ms": float64(reads.LongestGap.Milliseconds()), "naive_drilled_writes_failed": float64(writes.Failed)}
	ctl := harness.Variant(n.name, n.why, judge.ReplicaReadsKept.Judge(judge.ReplicaReadsInput{Ops: ops, Drill: nd, MaxGap: maxGap, MaxFailPct: maxFailPct, MinOps: 20}))
	ctl.Caught = ctl.Caught && (reads.LongestGap > maxGap || float64(reads.Failed)*100 > maxFailPct*float64(reads.Ops))
	return ctl, metrics
}
