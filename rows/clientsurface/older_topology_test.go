package clientsurface_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/redis/go-redis/v9"
	"github.com/valkey-io/valkey-go"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/routing"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/clientsurface/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Spec 000 §Client Architecture sets a version floor below Valkey 8, and
// the clients read a different topology reply there: valkey-go v1.0.79
// asks CLUSTER SHARDS of a server of version 8 or more and CLUSTER SLOTS
// below (cluster.go getClusterSlots; ClusterOption.PreferClusterShards, off
// here, would make it CLUSTER SHARDS from 7 on), go-redis always asks
// CLUSTER SLOTS (osscluster.go loadState). A Valkey 8 run never shows a
// client routing on a Redis 7 reply, so this scenario starts a second
// cluster of Debian's redis-server 7 beside the row's own and routes keys
// through slot migrations (MOVED and ASK) on it: the raw library (the
// admission) and impl's path (routing.Wrap over impl/client's pool, the
// gate), each judged for errors handed to the caller and for acknowledged
// writes read back.

// olderServer is the Redis 7 server binary, looked up on PATH (Debian 12's
// redis-server package is 7.0; scripts/deps.sh installs it when it can).
const olderServer = "redis-server"

var _ = Describe("client-surface: older topology reply", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "client-surface/older-topology/redirects/" + string(b), Row: report.RowClientSurface, Column: report.ColumnErrors,
				Spec: "on a Redis 7 cluster (its CLUSTER SLOTS topology reply), keys routed through slot migrations: no MOVED/ASK/TRYAGAIN or other error reaches the caller (000 §Client Architecture, version floor; §Conformance, Routing)",
				Run:  harness.Requires(olderAvailable, func(ctx SpecContext) report.Check { return olderRedirects(ctx, b) }),
			},
			harness.Scenario{
				Name: "client-surface/older-topology/acknowledged/" + string(b), Row: report.RowClientSurface, Column: report.ColumnSilentlyWrong,
				Spec: "on a Redis 7 cluster (its CLUSTER SLOTS topology reply), keys routed through slot migrations: every acknowledged write is read back and no read is stale (000 §Client Architecture, version floor; §Conformance, Routing)",
				Run:  harness.Requires(olderAvailable, func(ctx SpecContext) report.Check { return olderAcknowledged(ctx, b) }),
			},
		)
	}
})

// olderAvailable says whether a Redis 7 server can be started here: the
// scenario is not run (never passed) without one.
func olderAvailable() error {
	if _, err := exec.LookPath(olderServer); err != nil {
		return fmt.Errorf("%s (Redis 7) is not installed, so no cluster can serve Redis 7's topology reply (Debian: apt-get install redis-server, as scripts/deps.sh does): %w", olderServer, errors.ErrUnsupported)
	}
	return nil
}

// olderScale sizes the scenario: Slots slots each moved Rounds times to
// the next shard, held MIGRATING for Hold so the clients meet ASK, with
// KeysPerSlot keys per slot and path.
type olderScale struct {
	Slots, Rounds, KeysPerSlot, MinOps int
	Hold                               time.Duration
}

func olderScaleOf() olderScale {
	if cfg.Profile == harness.ProfileFull {
		return olderScale{Slots: 4, Rounds: 2, KeysPerSlot: 3, MinOps: 200, Hold: 300 * time.Millisecond}
	}
	// NOTE: 2 slots × 1 move; a 150 ms hold is long enough for every
	// worker of the slot to meet ASK on a loaded 2-core runner (the routing
	// row's measure).
	return olderScale{Slots: 2, Rounds: 1, KeysPerSlot: 2, MinOps: 40, Hold: 150 * time.Millisecond}
}

// olderRun is one backend's run on the Redis 7 cluster: the raw library,
// impl's path and the two bad variants, recorded during the same
// migrations.
type olderRun struct {
	raw, impl, pinned, swallow judge.OlderTopologyRun
	version                    string // the client library's
	rawPath                    string // the library API the raw run called
	slots                      int
	faults                     []report.FaultWindow
	evidence                   report.Evidence
}

var olderRuns = harness.NewOnce(runOlder)

func runOlder(ctx SpecContext, b client.Backend) *olderRun {
	GinkgoHelper()
	s := olderScaleOf()
	rng := cfg.Rand("client-surface/older-topology/" + string(b))
	By("starting a cluster of " + olderServer)
	// Local processes whatever the run's provider: the row's own cluster
	// stays where the run put it, this one is the Redis 7 binary here.
	older, err := fixtures.Run(ctx, fixtures.ClusterSpec(3, 0), append(cfg.FixtureOptions(), fixtures.WithServer(olderServer), fixtures.WithProvider(fixtures.ProviderLocal))...)
	if older != nil {
		DeferCleanup(older.Close)
	}
	Expect(err).NotTo(HaveOccurred(), "start a cluster of %s", olderServer)

	// Each client is opened alone and routes one command before the next
	// opens, so each path's CLUSTER SLOTS / CLUSTER SHARDS counts are its
	// own: the raw library's for the admission, impl's pool's for the gate.
	counted := func(what string, open func() topoClient) (topoClient, int64, int64) {
		GinkgoHelper()
		By("counting the topology commands " + what + " sends while it opens and routes its first command")
		before, err := topologyCalls(ctx, older)
		Expect(err).NotTo(HaveOccurred())
		c := open()
		Expect(c.set(ctx, "ot:probe", 1)).To(Succeed(), "%s: first command", what)
		after, err := topologyCalls(ctx, older)
		Expect(err).NotTo(HaveOccurred())
		return c, after["cluster|slots"] - before["cluster|slots"], after["cluster|shards"] - before["cluster|shards"]
	}
	// Opening is inside the count: valkey-go reads the topology as it
	// opens, go-redis on its first command.
	var rawPath string
	raw, rawSlots, rawShards := counted("the raw library", func() (c topoClient) { c, rawPath = olderRaw(b, older); return c })
	var implPool client.Pool
	impl, implSlots, implShards := counted("impl's pool", func() topoClient {
		implPool = harness.Pool(ctx, b, older)
		return poolClient{routing.Wrap(implPool, routing.Options{})}
	})

	slots := harness.DistinctSlots(rng, s.Slots)
	tag := fmt.Sprintf("%x", rng.Uint32())
	keysIn := func(who string, slots []int) []string {
		var out []string
		for _, sl := range slots {
			for i := range s.KeysPerSlot {
				out = append(out, traffic.RoutingKeysIn(fmt.Sprintf("ot%s-%s-%d", tag, who, i), sl).Reg)
			}
		}
		return out
	}
	// The bad variants write keys of the first slot through a single-node
	// client on its owner at the start: the naive client that never reads
	// a topology reply. pinned hands the redirects to the caller;
	// swallow (traffic.SwallowRedirects) answers them with success.
	owner, err := older.NodeForSlot(ctx, slots[0])
	Expect(err).NotTo(HaveOccurred())
	single := func(name string) client.Pool {
		p, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeSingle, Addrs: []string{owner.Addr()}, ClientName: name})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(p.Close)
		return p
	}
	clock := traffic.ClockOf(ctx)
	loads := map[string]*topologyWorkload{
		"raw":     {client: raw, clock: clock, keys: keysIn("r", slots)},
		"impl":    {client: impl, clock: clock, keys: keysIn("i", slots)},
		"pinned":  {client: poolClient{single("slotgate-older-pinned")}, clock: clock, keys: keysIn("p", slots[:1])},
		"swallow": {client: poolClient{routing.Wrap(traffic.SwallowRedirects(single("slotgate-older-swallow")), routing.Options{})}, clock: clock, keys: keysIn("s", slots[:1])},
	}
	By(fmt.Sprintf("raw, impl and two bad clients on slots %v of %s while each slot moves %d times, held MIGRATING %v", slots, older.ServerVersion(), s.Rounds, s.Hold))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, l := range loads {
		wg.Go(func() { l.run(ctx, stop) })
	}
	// Traffic before the first move: the bad clients are judged on what
	// they acknowledged while their slot was still where they pinned it,
	// and on a loaded host the moves could otherwise begin before any of
	// them (0 acknowledged: the variant not exercised, the cell blind).
	Eventually(func() bool {
		for _, l := range loads {
			if l.acked() < s.MinOps/4 {
				return false
			}
		}
		return true
	}).WithTimeout(10*time.Second).WithPolling(20*time.Millisecond).Should(BeTrue(), "every load acknowledged %d operations before the moves", s.MinOps/4)
	moves, wanted := 0, s.Slots*s.Rounds
	r := &olderRun{version: implPool.Version(), slots: len(slots), rawPath: rawPath}
	var faultErr error
	for range s.Rounds {
		for _, sl := range slots {
			if _, faultErr = fault.Apply(ctx, older, fault.MoveSlot{Slot: sl, To: -1, Hold: s.Hold}); faultErr != nil {
				break
			}
			moves++
		}
		if faultErr != nil {
			break
		}
	}
	// Traffic after the last move: every load sends at least one more
	// command, so a slot map left stale by the migrations shows.
	lastMove := clock.Now()
	Eventually(func() bool {
		for _, l := range loads {
			if !l.sentSince(lastMove) {
				return false
			}
		}
		return true
	}).WithTimeout(10 * time.Second).WithPolling(20 * time.Millisecond).Should(BeTrue())
	close(stop)
	wg.Wait()
	harness.MustConfirm(faultErr, cfg.Seed)
	r.faults = harness.Faults(ctx)

	By("reading every key back through a fresh redirect-absorbing pool")
	fresh := poolClient{routing.Wrap(harness.Pool(ctx, b, older), routing.Options{})}
	for _, l := range loads {
		l.readBack(ctx, fresh)
	}
	run := func(l *topologyWorkload, aware bool, slotsCalls, shardsCalls int64) judge.OlderTopologyRun {
		return judge.OlderTopologyRun{Server: older.ServerVersion(), Moves: moves, Wanted: wanted, Ops: l.history(), MinOps: s.MinOps,
			ClusterAware: aware, SlotsCalls: slotsCalls, ShardsCalls: shardsCalls}
	}
	r.raw, r.impl = run(loads["raw"], true, rawSlots, rawShards), run(loads["impl"], true, implSlots, implShards)
	r.pinned, r.swallow = run(loads["pinned"], false, 0, 0), run(loads["swallow"], false, 0, 0)
	// The bad variants run on one slot's keys: their own minimum.
	r.pinned.MinOps, r.swallow.MinOps = s.MinOps/4, s.MinOps/4
	r.evidence = harness.Evidence(cfg, older, implPool)
	return r
}

// topologyCalls sums the CLUSTER SLOTS and CLUSTER SHARDS calls every node
// of t counted (INFO commandstats: cmdstat_cluster|slots, ...|shards).
func topologyCalls(ctx context.Context, t *fixtures.Topology) (map[string]int64, error) {
	out := map[string]int64{}
	for _, n := range t.Nodes() {
		v, err := n.Do(ctx, "INFO", "commandstats")
		if err != nil {
			return nil, fmt.Errorf("info commandstats on %s: %w", n.Name(), err)
		}
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
			cmd, isCmd := strings.CutPrefix(name, "cmdstat_")
			if !ok || !isCmd || (cmd != "cluster|slots" && cmd != "cluster|shards") {
				continue
			}
			calls, _, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
			c, err := strconv.ParseInt(calls, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("info commandstats on %s: %q: %w", n.Name(), line, err)
			}
			out[cmd] += c
		}
	}
	return out, nil
}

// topoClient is the two commands the older-topology workload sends, on
// one client path: SET key seq, and GET key as a seq (0: nil).
type topoClient interface {
	set(ctx context.Context, key string, seq int64) error
	get(ctx context.Context, key string) (int64, error)
}

// poolClient is a topoClient over an impl/client pool (impl's path, the
// bad variants, the read-back).
type poolClient struct{ p client.Pool }

func (c poolClient) set(ctx context.Context, k string, seq int64) error {
	_, err := c.p.Do(ctx, client.NewCmd("SET", []string{k}, strconv.FormatInt(seq, 10)))
	return err
}

func (c poolClient) get(ctx context.Context, k string) (int64, error) {
	v, err := c.p.Do(ctx, client.NewCmd("GET", []string{k}))
	if err != nil || v == nil {
		return 0, err
	}
	return client.AsInt64(v)
}

// goredisTopo is a topoClient over go-redis's own cluster client.
type goredisTopo struct{ c *redis.ClusterClient }

func (c goredisTopo) set(ctx context.Context, k string, seq int64) error {
	return rawErrOrNil(c.c.Set(ctx, k, seq, 0).Err())
}

func (c goredisTopo) get(ctx context.Context, k string) (int64, error) {
	v, err := c.c.Get(ctx, k).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return v, rawErrOrNil(err)
}

// valkeyTopo is a topoClient over valkey-go's own cluster client.
type valkeyTopo struct{ c valkey.Client }

func (c valkeyTopo) set(ctx context.Context, k string, seq int64) error {
	return rawErrOrNil(c.c.Do(ctx, c.c.B().Set().Key(k).Value(strconv.FormatInt(seq, 10)).Build()).Error())
}

func (c valkeyTopo) get(ctx context.Context, k string) (int64, error) {
	v, err := c.c.Do(ctx, c.c.B().Get().Key(k).Build()).AsInt64()
	if valkey.IsValkeyNil(err) {
		return 0, nil
	}
	return v, rawErrOrNil(err)
}

// rawErrOrNil classifies a library error as impl's seam does (rawErr), so
// traffic.ErrKind names a MOVED or ASK the library handed back.
func rawErrOrNil(err error) error {
	if err == nil {
		return nil
	}
	return rawErr(err)
}

// olderRaw opens the library's own cluster client on t, with the library's
// defaults (no impl option, no impl retry or reload), and names the API
// it calls.
func olderRaw(b client.Backend, t *fixtures.Topology) (topoClient, string) {
	GinkgoHelper()
	cred := t.Credentials()
	switch b {
	case client.BackendGoRedis:
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: t.Addrs(), ClientName: "slotgate-older-raw",
			Username: cred.Username, Password: cred.Password, TLSConfig: cred.TLS})
		DeferCleanup(c.Close)
		return goredisTopo{c}, "go-redis ClusterClient.Set/Get"
	case client.BackendValkeyGo:
		c, err := valkey.NewClient(valkey.ClientOption{InitAddress: t.Addrs(), ClientName: "slotgate-older-raw", DisableCache: true,
			Username: cred.Username, Password: cred.Password, TLSConfig: cred.TLS})
		Expect(err).NotTo(HaveOccurred(), "open valkey-go client on %s", t.Spec)
		DeferCleanup(c.Close)
		return valkeyTopo{c}, "valkey-go Client.Do SET/GET (cluster client)"
	}
	Fail("unknown backend " + string(b))
	return nil, ""
}

// topologyWorkload runs one worker per key: SET key seq, then GET key, with
// seq 1, 2, 3, ..., recording each operation. It asserts nothing.
type topologyWorkload struct {
	client topoClient
	clock  *traffic.Clock
	keys   []string
	mu     sync.Mutex
	ops    []judge.TopologyOp
}

// opTimeout bounds each command: a call path that hangs shows as an
// error, not as a stalled worker.
const opTimeout = time.Second

func (w *topologyWorkload) run(ctx context.Context, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for _, k := range w.keys {
		wg.Go(func() {
			for seq := int64(1); ; seq++ {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				w.do(ctx, w.client, judge.TopologyOp{Key: k, Write: true, Seq: seq})
				w.do(ctx, w.client, judge.TopologyOp{Key: k})
			}
		})
	}
	wg.Wait()
}

// do sends o (a SET of o.Seq, or a GET) through c and records it with its
// outcome (a GET's value in Seq).
func (w *topologyWorkload) do(ctx context.Context, c topoClient, o judge.TopologyOp) {
	o.Call = w.clock.Now()
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	var err error
	if o.Write {
		err = c.set(octx, o.Key, o.Seq)
	} else {
		o.Seq, err = c.get(octx, o.Key)
	}
	cancel()
	o.Return = w.clock.Now()
	if err != nil {
		o.ErrKind, o.Err = traffic.ErrKind(err), err.Error()
	}
	w.mu.Lock()
	w.ops = append(w.ops, o)
	w.mu.Unlock()
}

// readBack reads every key once through c, retrying an error for a while
// (it must see what survived, not a settling cluster), and records the
// reads as Final.
func (w *topologyWorkload) readBack(ctx context.Context, c topoClient) {
	for _, k := range w.keys {
		// The bound passing is not a failure: the last failed read stays
		// in the history, for the checker.
		n := -1
		_ = wait.Within(ctx, 5*time.Second, 50*time.Millisecond, func(context.Context) error {
			if n >= 0 {
				w.mu.Lock()
				w.ops = w.ops[:n] // a failed read-back is retried, not judged
				w.mu.Unlock()
			}
			n = len(w.history())
			w.do(ctx, c, judge.TopologyOp{Key: k, Final: true})
			if !w.history()[n].Acked() {
				return fmt.Errorf("read back %s not acknowledged", k)
			}
			return nil
		})
	}
}

// acked counts w's acknowledged operations so far.
func (w *topologyWorkload) acked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, o := range w.ops {
		if o.Acked() {
			n++
		}
	}
	return n
}

// sentSince says a command of w began at or after t.
func (w *topologyWorkload) sentSince(t time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.ops) - 1; i >= 0; i-- {
		if w.ops[i].Call >= t {
			return true
		}
	}
	return false
}

func (w *topologyWorkload) history() []judge.TopologyOp {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]judge.TopologyOp(nil), w.ops...)
}

// olderPath names the library code the raw run exercised, with the
// topology reply it was seen to read.
func olderPath(api string, r judge.OlderTopologyRun) string {
	return fmt.Sprintf("%s, slot map from %s (%d CLUSTER SLOTS, %d CLUSTER SHARDS counted as it opened)", api, r.TopologyReply(), r.SlotsCalls, r.ShardsCalls)
}

func olderRedirects(ctx SpecContext, b client.Backend) report.Check {
	r := olderRuns.Get(ctx, b)
	ev := r.evidence
	ev.Faults = r.faults
	result := judge.OlderTopologyErrors.Judge(r.impl)
	raw := judge.OlderTopologyErrors.Judge(r.raw)
	rawAck := judge.OlderTopologyAcknowledged.Judge(r.raw)
	implAck := judge.OlderTopologyAcknowledged.Judge(r.impl)
	ev.Observed = append(ev.Observed,
		fmt.Sprintf("raw %s (%s) on %s read its topology with %s (%d CLUSTER SLOTS, %d CLUSTER SHARDS while it opened)", r.rawPath, r.version, r.raw.Server, r.raw.TopologyReply(), r.raw.SlotsCalls, r.raw.ShardsCalls),
		fmt.Sprintf("impl's pool on %s read its topology with %s (%d CLUSTER SLOTS, %d CLUSTER SHARDS while it opened)", r.impl.Server, r.impl.TopologyReply(), r.impl.SlotsCalls, r.impl.ShardsCalls),
		fmt.Sprintf("raw %s on its own keys of the same slots: %s: %s", r.rawPath, raw.Status, raw.Message))
	moved := 0
	for _, o := range r.pinned.Ops {
		if o.ErrKind == string(client.KindMoved) || o.ErrKind == string(client.KindAsk) {
			moved++
		}
	}
	ctl := harness.Variant("single-node-client", "a single-node client on the first slot's owner at the start, which reads no topology reply and does not follow MOVED/ASK: after the slot left, the redirects reach the caller", judge.OlderTopologyErrors.Judge(r.pinned))
	ctl = harness.Premise(ctl, moved > 0, "no MOVED or ASK seen: the single-node client never met a slot that left its node")
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementOlderTopology, Client: r.version, Path: olderPath(r.rawPath, r.raw),
		Raw: check.All("older-topology", raw, rawAck), Wrapped: check.All("older-topology", result, implAck),
		Wrapper:  "impl/routing.Wrap over impl/client's cluster pool",
		Evidence: fmt.Sprintf("A cluster of %s (3 primaries), the raw %s on its own %d keys of %d migrating slots, %d of %d migrations (MOVED and ASK): no error reaches the caller, every acknowledged write read back.", r.raw.Server, r.rawPath, len(keysOf(r.raw)), r.slots, r.raw.Moves, r.raw.Wanted)})
	return harness.Check(report.RowClientSurface, report.ColumnErrors, "", result, ev, ctl)
}

func olderAcknowledged(ctx SpecContext, b client.Backend) report.Check {
	r := olderRuns.Get(ctx, b)
	ev := r.evidence
	ev.Faults = r.faults
	result := judge.OlderTopologyAcknowledged.Judge(r.impl)
	raw := judge.OlderTopologyAcknowledged.Judge(r.raw)
	ev.Observed = append(ev.Observed, fmt.Sprintf("raw %s on its own keys of the same slots: %s: %s", r.rawPath, raw.Status, raw.Message))
	acked := 0
	for _, o := range r.swallow.Ops {
		if o.Write && o.Acked() && !o.Final {
			acked++
		}
	}
	ctl := harness.Variant("swallow-redirects", "a single-node client on the first slot's owner at the start whose call path answers MOVED/ASK with success: after the slot left, its writes are acknowledged and never land", judge.OlderTopologyAcknowledged.Judge(r.swallow))
	ctl = harness.Premise(ctl, acked > 0, "the swallowing client had no write acknowledged")
	return harness.Check(report.RowClientSurface, report.ColumnSilentlyWrong, "", result, ev, ctl)
}

// keysOf is the distinct keys of r's operations.
func keysOf(r judge.OlderTopologyRun) map[string]bool {
	out := map[string]bool{}
	for _, o := range r.Ops {
		out[o.Key] = true
	}
	return out
}
