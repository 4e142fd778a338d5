package failuredrills_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/routing"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/failuredrills/judge"
	"github.com/slotgate/slotgate/rows/failuredrills/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Failure-drills additions; spec 000
// §Conformance, Failure drills; §Client Architecture ("a dead primary halts
// dispatch pending topology refresh"): a shard's primary is cut off the
// cluster bus (fault.Partition) while every backend appends known elements
// to keys on that shard and on the healthy ones.
//
// Errors column: the isolated primary refuses writes after the node
// timeout, the healthy shards keep being served, and the client moves onto
// the new primary; its dispatch halt is measured per client.
//
// Silently-wrong column: replication is asynchronous (no WAIT), so the
// writes the isolated primary acknowledged before it stepped down are
// discarded when it rejoins as a replica. They are counted as a finding,
// never hidden: while the partition holds, the harness reads both sides'
// copies of the partitioned shard's keys and lists the elements only the
// isolated primary has — the loss ledger. Every acknowledged write must be
// read back after the heal or be in that ledger, acknowledged inside the
// partition window.
//
// A provider that cannot partition a node (fixtures.Topology.CanDisconnect:
// local processes on Valkey 8+, containers) skips the scenarios with the
// reason (harness.Requires), which never counts as a pass.

var _ = Describe("failure-drills: cluster-bus partition", func() {
	available := func() error { return fault.Partition{}.Available(cluster) }
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				// One scenario name per column: histories are stored by
				// scenario name, so each column keeps its own judgement
				// for `slotgate check --from`.
				Name: "failure-drills/partition/" + string(b) + "/" + string(report.ColumnErrors), Row: row, Column: report.ColumnErrors,
				Spec: "a shard's primary cut off the cluster bus: it refuses writes after the node timeout, the majority fails over, healthy shards keep being served and the client moves onto the new primary; halt window measured (000 §Conformance, Failure drills; §Client Architecture)",
				Run:  harness.Requires(available, func(ctx SpecContext) report.Check { return partitionDispatch(ctx, b) }),
			},
			harness.Scenario{
				Name: "failure-drills/partition/" + string(b) + "/" + string(report.ColumnSilentlyWrong), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "every acknowledged write survives the partition or is in the loss ledger — on the isolated primary's copy only, acknowledged inside the partition window — counted as a finding (000 §Conformance, Failure drills)",
				Run:  harness.Requires(available, func(ctx SpecContext) report.Check { return partitionAccounted(ctx, b) }),
			},
		)
	}
})

type partitionScale struct {
	// KeysPerShard writers per shard for each backend; ControlKeysPerShard
	// for each backend's frozen-slot-map control.
	KeysPerShard, ControlKeysPerShard, Partitions int
	Pace                                          time.Duration
	// Before is the load before the cut; Recover bounds how long the
	// partition is held, after the promotion, for every client to reach
	// the new primary; After is the load after the rejoin.
	Before, Recover, After time.Duration
}

func partitionScaleOf() partitionScale {
	if cfg.Profile == harness.ProfileFull {
		// NOTE: three partitions, one per shard, so every client's halt
		// has min/median/max over three; each held up to 20 s past the
		// promotion, long enough to show a client that only the heal moves
		// (go-redis: halts 22.1/23.4/23.4 s in one run, valkey-go
		// 0.83/1.22/1.85 s).
		return partitionScale{KeysPerShard: 6, ControlKeysPerShard: 2, Partitions: 3, Pace: 2 * time.Millisecond, Before: time.Second, Recover: 20 * time.Second, After: time.Second}
	}
	// NOTE: one partition serves both backends (each on its own keys), so
	// the smoke run pays for one failover and one rejoin. valkey-go reached
	// the new primary 0.4–2.0 s after the promotion; go-redis v9.23.0 stays
	// on the isolated primary (it retries CLUSTERDOWN on the same node and
	// reloads its slot map on a redirect or every 60 s), so the hold ends
	// 4 s after the promotion and the heal's MOVED moves it (reported).
	return partitionScale{KeysPerShard: 3, ControlKeysPerShard: 1, Partitions: 1, Pace: 5 * time.Millisecond, Before: 500 * time.Millisecond, Recover: 4 * time.Second, After: 500 * time.Millisecond}
}

// partitionOutcome is every backend's record of the partitions: the scored
// runs, the frozen-slot-map control's runs, and the fault windows.
type partitionOutcome struct {
	scored, frozen map[client.Backend][]judge.PartitionRun
	// swallow is the accounted column's real variant: frozen single-node
	// connections to the partitioned shard through the swallow-redirects
	// call path.
	swallow  map[client.Backend][]judge.PartitionRun
	faults   []fault.Window
	versions map[client.Backend]string
}

// partitionsRuns runs the partitions once for every backend; each
// backend's two scenarios judge the same runs (a partition costs seconds,
// and the columns are two views of it). An unconfirmed partition leaves
// every later spec inconclusive on the same fault (harness.Once).
var partitionsRuns = harness.NewOnce(func(ctx SpecContext, _ string) *partitionOutcome { return partitionsRun(ctx) })

func partitionsOf(ctx SpecContext) *partitionOutcome {
	GinkgoHelper()
	return partitionsRuns.Get(ctx, "failure-drills/partition")
}

func partitionsRun(ctx context.Context) *partitionOutcome {
	GinkgoHelper()
	s := partitionScaleOf()
	rng := cfg.Rand("failure-drills/partition")
	out := &partitionOutcome{scored: map[client.Backend][]judge.PartitionRun{}, frozen: map[client.Backend][]judge.PartitionRun{}, swallow: map[client.Backend][]judge.PartitionRun{}, versions: map[client.Backend]string{}}
	pools := map[client.Backend]client.Pool{}
	for _, b := range cfg.Backends {
		pools[b] = harness.Pool(ctx, b, cluster)
		out.versions[b] = pools[b].Version()
	}
	shards := rng.Perm(len(cluster.Primaries()))
	for i := range s.Partitions {
		if i > 0 {
			// Each partition starts from the built topology.
			Expect(cluster.Reset(ctx)).To(Succeed())
		}
		shard := shards[i%len(shards)]
		By(fmt.Sprintf("fault: partition %d of %d, shard %d's primary off the cluster bus, under load", i+1, s.Partitions, shard))
		scored, frozen, swallow, w := partitionOnce(ctx, rng, s, shard, pools)
		for b := range scored {
			out.scored[b] = append(out.scored[b], scored[b])
			out.frozen[b] = append(out.frozen[b], frozen[b])
			out.swallow[b] = append(out.swallow[b], swallow[b])
		}
		out.faults = append(out.faults, w)
	}
	return out
}

// partitionOnce partitions shard's primary once under every backend's load
// and its frozen-slot-map control's, and returns what each recorded.
func partitionOnce(ctx context.Context, rng *rand.Rand, s partitionScale, shard int, pools map[client.Backend]client.Pool) (scored, frozen, swallow map[client.Backend]judge.PartitionRun, w fault.Window) {
	GinkgoHelper()
	clock := traffic.ClockOf(ctx)
	type loads struct{ scored, frozen, swallow *appendWorkload }
	work := map[client.Backend]loads{}
	var all []*appendWorkload
	for _, b := range cfg.Backends {
		l := loads{
			scored: &appendWorkload{pool: pools[b], clock: clock, keys: keysOnEveryShard(ctx, rng, "pt:"+string(b), s.KeysPerShard), pace: s.Pace, timeout: time.Second},
			frozen: &appendWorkload{clock: clock, keys: keysOnEveryShard(ctx, rng, "pf:"+string(b), s.ControlKeysPerShard), pace: s.Pace, timeout: time.Second},
		}
		l.frozen.pool = newFrozenSlotMap(ctx, b, l.frozen.keys)
		// The real bad variant of the accounted column: frozen
		// connections to the partitioned shard whose call path answers
		// MOVED with success — after the rejoin the old primary redirects,
		// and its writes are acknowledged and never land.
		l.swallow = &appendWorkload{clock: clock, keys: keysOnShard(ctx, rng, "pw:"+string(b), shard, s.ControlKeysPerShard), pace: s.Pace, timeout: time.Second}
		l.swallow.pool = routing.Wrap(traffic.SwallowRedirects(newFrozenSlotMap(ctx, b, l.swallow.keys)), routing.Options{})
		work[b] = l
		all = append(all, l.scored, l.frozen, l.swallow)
	}
	probe := keysOnShard(ctx, rng, "pt:probe", shard, 1)[0]

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, load := range all {
		wg.Go(func() { load.run(ctx, stop) })
	}
	stopped := false
	stopAll := func() {
		if !stopped {
			stopped = true
			close(stop)
			wg.Wait()
		}
	}
	defer stopAll()
	time.Sleep(s.Before) // a duration: traffic before the partition

	tl := judge.PartitionTimeline{Shard: shard}
	ledgers, swallowLedgers := map[client.Backend][]judge.LedgerEntry{}, map[client.Backend][]judge.LedgerEntry{}
	var minorityWrite string
	at := func(t time.Time) time.Duration { return clock.Now() - time.Since(t) }
	allRecovered := func(since time.Duration) bool {
		for _, l := range work {
			if !l.scored.servedSince(shard, since) {
				return false
			}
		}
		return true
	}
	f := fault.Partition{Shard: shard, WhileHeld: func(ctx context.Context, p fault.Partitioned) error {
		tl.Start, tl.Promoted = at(p.Start), at(p.Promoted)
		if !p.MinorityDown.IsZero() {
			tl.MinorityDown = at(p.MinorityDown)
		}
		// The probe goes straight to the isolated primary's own address,
		// past any client's routing: after the node timeout it must refuse.
		_, err := p.Minority.Do(ctx, "RPUSH", probe.Key, "probe")
		minorityWrite = traffic.ErrKind(err)
		By(fmt.Sprintf("partition held: %s cluster_state:fail at +%v, %s promoted at +%v; a direct write to %s: %v",
			p.Minority.Name(), (tl.MinorityDown - tl.Start).Round(time.Millisecond), p.Majority.Name(), (tl.Promoted - tl.Start).Round(time.Millisecond), p.Minority.Name(), err))
		// Held until every client has moved onto the new primary (a write
		// sent after the isolated primary stepped down was acknowledged),
		// or Recover passes: a client that needs the heal to recover shows.
		if tl.MinorityDown > 0 {
			_ = wait.Within(ctx, s.Recover, 50*time.Millisecond, func(context.Context) error {
				if !allRecovered(tl.MinorityDown) {
					return fmt.Errorf("a client has not moved onto %s", p.Majority.Name())
				}
				return nil
			})
		}
		for b, l := range work {
			entries, err := lossLedger(ctx, p, l.scored.keysOn(shard))
			if err != nil {
				return err
			}
			ledgers[b] = entries
			if swallowLedgers[b], err = lossLedger(ctx, p, l.swallow.keysOn(shard)); err != nil {
				return err
			}
		}
		tl.Heal = clock.Now()
		return nil
	}}
	w, err := fault.Apply(ctx, cluster, f)
	harness.MustConfirm(err, cfg.Seed)
	tl.Rejoined = at(w.End)
	// Load after the rejoin, until every client served the shard again
	// (bounded), so the read-back has writes acknowledged after the heal.
	time.Sleep(s.After) // a duration: load after the rejoin
	_ = wait.Within(ctx, s.Recover, 50*time.Millisecond, func(context.Context) error {
		if !allRecovered(tl.Rejoined) {
			return fmt.Errorf("a client has not served shard %d since the rejoin", shard)
		}
		return nil
	})
	until := clock.Now()
	stopAll()

	By("reading every key back through a fresh pool per backend")
	scored, frozen, swallow = map[client.Backend]judge.PartitionRun{}, map[client.Backend]judge.PartitionRun{}, map[client.Backend]judge.PartitionRun{}
	for b, l := range work {
		fresh, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: "slotgate-readback"})
		Expect(err).NotTo(HaveOccurred())
		survivors := l.scored.readBack(ctx, fresh)
		swallowed := l.swallow.readBack(ctx, fresh)
		Expect(fresh.Close()).To(Succeed())
		swallow[b] = judge.PartitionRun{Timeline: tl, Writes: l.swallow.history(), Until: until, MinorityWrite: minorityWrite,
			Ledger: swallowLedgers[b], LedgerRead: swallowLedgers[b] != nil, Survivors: swallowed}
		scored[b] = judge.PartitionRun{Timeline: tl, Writes: l.scored.history(), Until: until, MinorityWrite: minorityWrite,
			Ledger: ledgers[b], LedgerRead: ledgers[b] != nil, Survivors: survivors}
		frozen[b] = judge.PartitionRun{Timeline: tl, Writes: l.frozen.history(), Until: until, MinorityWrite: minorityWrite}
	}
	return scored, frozen, swallow, w
}

// lossLedger reads the partitioned shard's keys on both sides of the split
// and lists the elements only the isolated primary holds. The isolated
// primary refuses every key command while it reports cluster_state:fail,
// reads included, so cluster-allow-reads-when-down is set on it for the
// reads and restored at once (Reset does not undo a CONFIG SET).
func lossLedger(ctx context.Context, p fault.Partitioned, keys []string) ([]judge.LedgerEntry, error) {
	if _, err := p.Minority.Do(ctx, "CONFIG", "SET", "cluster-allow-reads-when-down", "yes"); err != nil {
		return nil, err
	}
	defer func() {
		_, _ = p.Minority.Do(context.WithoutCancel(ctx), "CONFIG", "SET", "cluster-allow-reads-when-down", "no")
	}()
	entries := []judge.LedgerEntry{}
	for _, k := range keys {
		minority, err := listOn(ctx, p.Minority, k)
		if err != nil {
			return nil, err
		}
		majority, err := listOn(ctx, p.Majority, k)
		if err != nil {
			return nil, err
		}
		for _, seq := range minority {
			if !slices.Contains(majority, seq) {
				entries = append(entries, judge.LedgerEntry{Key: k, Seq: seq})
			}
		}
	}
	return entries, nil
}

func listOn(ctx context.Context, n *fixtures.Node, key string) ([]int64, error) {
	v, err := n.Do(ctx, "LRANGE", key, "0", "-1")
	if err != nil {
		return nil, err
	}
	return seqsOf(v)
}

func seqsOf(v any) ([]int64, error) {
	items, ok := v.([]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("LRANGE reply %T", v)
	}
	out := make([]int64, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("LRANGE element %T", it)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("LRANGE element %q: %w", s, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// keysOnEveryShard returns perShard keys owned by each shard, named after
// prefix and the seeded rng.
func keysOnEveryShard(ctx context.Context, rng *rand.Rand, prefix string, perShard int) []workload.Key {
	GinkgoHelper()
	var out []workload.Key
	for shard := range cluster.Primaries() {
		out = append(out, keysOnShard(ctx, rng, prefix, shard, perShard)...)
	}
	return out
}

func keysOnShard(ctx context.Context, rng *rand.Rand, prefix string, shard, n int) []workload.Key {
	GinkgoHelper()
	var out []workload.Key
	for i := 0; len(out) < n; i++ {
		k := fmt.Sprintf("%s:%x:%d", prefix, rng.Uint32(), i)
		owner, err := cluster.NodeForSlot(ctx, slot.Of(k))
		Expect(err).NotTo(HaveOccurred())
		if owner.Shard() == shard {
			out = append(out, workload.Key{Key: k, Shard: shard})
		}
	}
	return out
}

// appendWorkload runs one sequential writer per key, RPUSH key seq with a
// rising seq and a per-write timeout, recording every write: an
// acknowledged write is one element the key must keep, so a read-back
// (LRANGE) accounts for each write on its own — a later write cannot mask
// an earlier loss, as a SET would.
type appendWorkload struct {
	pool           client.Pool
	clock          *traffic.Clock
	keys           []workload.Key
	pace, timeout  time.Duration
	mu             sync.Mutex
	ops            []judge.DrillOp
	lastAckOnShard map[int]time.Duration // latest Call of an acknowledged write, per shard
}

func (w *appendWorkload) run(ctx context.Context, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for _, k := range w.keys {
		wg.Go(func() {
			for seq := int64(1); ; seq++ {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				case <-time.After(w.pace):
				}
				o := judge.DrillOp{Key: k.Key, Shard: k.Shard, Seq: seq, Call: w.clock.Now()}
				octx, cancel := context.WithTimeout(ctx, w.timeout)
				_, err := w.pool.Do(octx, client.NewCmd("RPUSH", []string{k.Key}, strconv.FormatInt(seq, 10)))
				cancel()
				o.Return = w.clock.Now()
				if err != nil {
					o.ErrKind, o.Err = traffic.ErrKind(err), err.Error()
				}
				w.mu.Lock()
				w.ops = append(w.ops, o)
				if o.Acked() {
					if w.lastAckOnShard == nil {
						w.lastAckOnShard = map[int]time.Duration{}
					}
					w.lastAckOnShard[o.Shard] = max(w.lastAckOnShard[o.Shard], o.Call)
				}
				w.mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// servedSince says a write to shard sent at or after since was
// acknowledged.
func (w *appendWorkload) servedSince(shard int, since time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.lastAckOnShard[shard]
	return ok && last >= since
}

func (w *appendWorkload) keysOn(shard int) []string {
	var out []string
	for _, k := range w.keys {
		if k.Shard == shard {
			out = append(out, k.Key)
		}
	}
	return out
}

func (w *appendWorkload) history() []judge.DrillOp {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.ops)
}

// readBack reads every key's elements through p, retrying a while: it must
// see what survived, not the tail of the rejoin. A key it could not read
// is left out (the checker says unknown).
func (w *appendWorkload) readBack(ctx context.Context, p client.Pool) map[string][]int64 {
	out := map[string][]int64{}
	for _, k := range w.keys {
		err := wait.Within(ctx, 10*time.Second, 50*time.Millisecond, func(ctx context.Context) error {
			v, err := p.Do(ctx, client.NewCmd("LRANGE", []string{k.Key}, "0", "-1"))
			if err != nil {
				return err
			}
			seqs, err := seqsOf(v)
			if err != nil {
				return err
			}
			out[k.Key] = seqs
			return nil
		})
		if err != nil {
			fmt.Fprintf(GinkgoWriter, "read back %s: %v\n", k.Key, err)
		}
	}
	return out
}

// frozenSlotMap is the partition drill's known-bad call path: a client that
// read the slot map once and never refreshes it nor follows a redirect —
// every key goes, over a single-node connection, to the primary that owned
// its slot when the client started. Spec 000 §Client Architecture: a dead
// primary halts dispatch pending topology refresh; this client's refresh
// never comes, so it never reaches the new primary.
type frozenSlotMap struct {
	byKey   map[string]client.Pool
	backend client.Backend
	version string
}

func newFrozenSlotMap(ctx context.Context, b client.Backend, keys []workload.Key) *frozenSlotMap {
	GinkgoHelper()
	f := &frozenSlotMap{byKey: map[string]client.Pool{}, backend: b}
	byShard := map[int]client.Pool{}
	for _, k := range keys {
		p, ok := byShard[k.Shard]
		if !ok {
			owner, err := cluster.NodeForSlot(ctx, slot.Of(k.Key))
			Expect(err).NotTo(HaveOccurred())
			p, err = client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeSingle, Addrs: []string{owner.Addr()}, ClientName: "slotgate-frozen"})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(p.Close)
			byShard[k.Shard] = p
			f.version = p.Version() + " (single-node connections, slot map frozen)"
		}
		f.byKey[k.Key] = p
	}
	return f
}

func (f *frozenSlotMap) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	return f.byKey[cmd.Keys[0]].Do(ctx, cmd)
}

// DoMulti and Exec keep the frozen map per key: each command (each
// transaction) goes to its first key's node.
func (f *frozenSlotMap) DoMulti(ctx context.Context, cmds []client.Cmd) []client.Result {
	out := make([]client.Result, len(cmds))
	for i, c := range cmds {
		out[i].Reply, out[i].Err = f.Do(ctx, c)
	}
	return out
}
func (f *frozenSlotMap) Exec(ctx context.Context, cmds []client.Cmd) ([]client.Result, error) {
	return f.byKey[cmds[0].Keys[0]].Exec(ctx, cmds)
}
func (f *frozenSlotMap) Backend() client.Backend { return f.backend }
func (f *frozenSlotMap) Version() string         { return f.version }
func (f *frozenSlotMap) Close() error            { return nil }

// partitionHaltMetrics puts one client's halts over the partitions into
// the evidence: min/median/max of the partitioned shard's halt, and how
// many partitions it recovered from while the partition still held.
func partitionHaltMetrics(ev *report.Evidence, version string, halts []judge.PartitionHalt) {
	var halt, sinceStart, sincePromotion, down, promoted, rejoined []time.Duration
	for _, h := range halts {
		tl := h.Timeline
		halt = append(halt, h.Halt)
		down = append(down, tl.MinorityDown-tl.Start)
		promoted = append(promoted, tl.Promoted-tl.Start)
		rejoined = append(rejoined, tl.Rejoined-tl.Start)
		if h.Recovered {
			sinceStart = append(sinceStart, h.Recovery-tl.Start)
			sincePromotion = append(sincePromotion, h.Recovery-tl.Promoted)
		}
		if h.RecoveredWhileHeld {
			ev.Metrics["recovered_while_partitioned"]++
		}
		ev.Metrics["shard_clusterdown"] += float64(h.ShardClusterDown)
		ev.Metrics["healthy_clusterdown"] += float64(h.HealthyClusterDown)
		ev.Metrics["healthy_failed"] += float64(h.HealthyFails)
		ev.Metrics["healthy_longest_gap_ms"] = max(ev.Metrics["healthy_longest_gap_ms"], float64(h.HealthyGap.Milliseconds()))
	}
	put := func(name string, ds []time.Duration) (lo, med, hi time.Duration) {
		lo, med, hi = spread(ds)
		ev.Metrics[name+"_min_ms"], ev.Metrics[name+"_median_ms"], ev.Metrics[name+"_max_ms"] = float64(lo.Milliseconds()), float64(med.Milliseconds()), float64(hi.Milliseconds())
		return lo, med, hi
	}
	lo, med, hi := put("halt_partition", halt)
	put("recovery_after_start", sinceStart)
	put("recovery_after_promotion", sincePromotion)
	put("minority_down", down)
	put("promoted", promoted)
	put("rejoined", rejoined)
	ev.Observed = append(ev.Observed, fmt.Sprintf("%s dispatch halt of the partitioned shard over %d partitions: min %v, median %v, max %v; recovered while the partition held in %.0f of %d",
		version, len(halts), lo.Round(time.Millisecond), med.Round(time.Millisecond), hi.Round(time.Millisecond), ev.Metrics["recovered_while_partitioned"], len(halts)))
	for i, h := range halts {
		if h.Recovered && !h.RecoveredWhileHeld {
			ev.Observed = append(ev.Observed, fmt.Sprintf("FINDING: partition %d: %s reached the new primary only after the heal (+%v; held until +%v, promoted at +%v): while a partition lasts, it keeps sending the shard's writes to the isolated primary",
				i+1, version, (h.Recovery-h.Timeline.Start).Round(time.Millisecond), (h.Timeline.Heal-h.Timeline.Start).Round(time.Millisecond), (h.Timeline.Promoted-h.Timeline.Start).Round(time.Millisecond)))
		}
	}
}

func partitionDispatch(ctx SpecContext, b client.Backend) report.Check {
	out := partitionsOf(ctx)
	runs := out.scored[b]
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Client = out.versions[b]
	ev.Faults = harness.Windows(out.faults...)
	ev.Metrics = map[string]float64{"partitions": float64(len(runs))}
	halts := make([]judge.PartitionHalt, len(runs))
	for i, r := range runs {
		halts[i] = judge.PartitionHalts(r)
		ev.Metrics["writes"] += float64(len(r.Writes))
	}
	partitionHaltMetrics(&ev, out.versions[b], halts)
	result := judge.PartitionDispatch.Judge(judge.PartitionDispatchInput{Runs: runs, MaxGap: maxGap, MaxFailPct: maxFailPct})
	// The checker has two split-brain branches — the harness's direct probe
	// acknowledged, and the loss ledger holding a client write sent after
	// the isolated primary reported cluster_state:fail — so each gets its
	// own planted control.
	accepting := make([]judge.PartitionRun, len(runs))
	lateOnCopy := make([]judge.PartitionRun, len(runs))
	plantedLate := false
	for i, r := range runs {
		accepting[i] = judge.AcceptedByMinority(r)
		var ok bool
		lateOnCopy[i], ok = judge.LedgerAfterMinorityDown(r)
		plantedLate = plantedLate || ok
	}
	ledgerLate := harness.SelfTest("minority-applies-late-write", "planted history variant: the recorded runs with the partitioned shard's first write sent after the isolated primary reported cluster_state:fail added to the loss ledger, as if its copy had taken it (split brain seen in the servers' ledger, not in the probe)", judge.PartitionDispatch.Judge(judge.PartitionDispatchInput{Runs: lateOnCopy, MaxGap: maxGap, MaxFailPct: maxFailPct}))
	ledgerLate = harness.Premise(ledgerLate, plantedLate, "no late write could be planted")
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		harness.Variant("frozen-slot-map", "a client that read the slot map once and never refreshes it nor follows MOVED (spec 000: dispatch halts pending a topology refresh that never comes), on its own keys during the same partitions: it never reaches the new primary", judge.PartitionDispatch.Judge(judge.PartitionDispatchInput{Runs: out.frozen[b], MaxGap: maxGap, MaxFailPct: maxFailPct})),
		harness.SelfTest("minority-accepts", "planted history variant: the recorded runs with the harness's direct write to the isolated primary recorded as acknowledged: a primary that keeps taking writes after the node timeout (split brain)", judge.PartitionDispatch.Judge(judge.PartitionDispatchInput{Runs: accepting, MaxGap: maxGap, MaxFailPct: maxFailPct})),
		ledgerLate)
}

func partitionAccounted(ctx SpecContext, b client.Backend) report.Check {
	out := partitionsOf(ctx)
	runs := out.scored[b]
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Client = out.versions[b]
	ev.Faults = harness.Windows(out.faults...)
	ev.Metrics = map[string]float64{"partitions": float64(len(runs))}
	for i, r := range runs {
		for _, o := range r.Writes {
			if o.Acked() {
				ev.Metrics["acked_writes"]++
			}
		}
		ev.Metrics["ledger_entries"] += float64(len(r.Ledger))
		losses := judge.PartitionLosses(r)
		ev.Metrics["lost_acked_writes"] += float64(len(losses))
		if len(losses) == 0 {
			continue
		}
		tl := r.Timeline
		first, last := losses[0].Op, losses[len(losses)-1].Op
		ev.Observed = append(ev.Observed, fmt.Sprintf("FINDING: partition %d (shard %d): %d acknowledged writes lost — acknowledged by the isolated primary from +%v to +%v after the partition began (it reported cluster_state:fail at +%v), on its copy only, discarded when it rejoined as a replica (asynchronous replication, no WAIT); e.g. %s seq %d",
			i+1, tl.Shard, len(losses), (first.Return-tl.Start).Round(time.Millisecond), (last.Return-tl.Start).Round(time.Millisecond), (tl.MinorityDown-tl.Start).Round(time.Millisecond), first.Key, first.Seq))
	}
	minOps := 100
	result := judge.PartitionAccounted.Judge(judge.PartitionAccountedInput{Runs: runs, MinOps: minOps})

	postHeal := make([]judge.PartitionRun, len(runs))
	planted := len(runs) > 0
	hidden := make([]judge.PartitionRun, len(runs))
	hides := false
	for i, r := range runs {
		var ok bool
		postHeal[i], ok = judge.DropPostHeal(r)
		planted = planted && ok
		hidden[i], ok = judge.HideLedger(r)
		hides = hides || ok
	}
	swallowCtl := harness.Variant("swallow-redirects", "frozen single-node connections to the partitioned shard whose call path answers MOVED with success, on their own keys during the same partitions: after the rejoin the old primary redirects, and the variant acknowledges writes that never land",
		judge.PartitionAccounted.Judge(judge.PartitionAccountedInput{Runs: out.swallow[b], MinOps: 1}))
	controls := []report.Control{swallowCtl, harness.SelfTest("post-heal-loss", "the recorded runs with one write acknowledged after the rejoin missing from the read-back: a write lost outside the partition window", judge.PartitionAccounted.Judge(judge.PartitionAccountedInput{Runs: postHeal, MinOps: minOps}))}
	controls[1] = harness.Premise(controls[1], planted, "no loss could be planted")
	if hides {
		controls = append(controls, harness.SelfTest("ledger-hides-losses", "the recorded runs with the loss ledger emptied: the partition's losses left unaccounted", judge.PartitionAccounted.Judge(judge.PartitionAccountedInput{Runs: hidden, MinOps: minOps})))
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, controls...)
}
