package clientsurface_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	"github.com/valkey-io/valkey-go"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/clientsurface/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

var _ = Describe("connection-leak", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "client-surface/connection-leak/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "CLIENT LIST on every node before and after concurrent calls, slot moves, forced disconnects and failovers, and after a quiet settle: the pool's connections per node stay within its configured bound and do not grow with the topology refreshes it follows (000 §Client Architecture, the command pool)",
			Run:  func(ctx SpecContext) report.Check { return connLeak(ctx, b) },
		})
	}
})

// clPoolSize is every path's explicit per-node connection bound.
const clPoolSize = 4

// clGenCalls is how many calls a rebuilt pool of the leaky relay serves
// each round before the churned sample: enough, at the row's workers, to
// open its connections on every node.
const clGenCalls = 50

// clScale sizes the churn: Rounds rounds of Workers callers per path;
// the last round also fails a primary over. NOTE: one failover only, in
// the last round, after its slot move: fault.MoveSlot sets the slot on the
// nodes as built, and a demoted primary refuses SETSLOT.
type clScale struct {
	Rounds, Workers int
}

func clScaleOf() clScale {
	if cfg.Profile == harness.ProfileFull {
		return clScale{Rounds: 4, Workers: 24}
	}
	return clScale{Rounds: 2, Workers: 16}
}

// clPath is one client path: its CLIENT SETNAME and its call.
type clPath struct {
	name, clientName string
	call             callFunc
	calls, errs      atomic.Int64
	keys             []string
}

// clientConns counts the connections named name on every running node.
func clientConns(ctx context.Context, name string) (map[string]int, error) {
	out := map[string]int{}
	for _, n := range cluster.Nodes() {
		v, err := n.Do(ctx, "CLIENT", "LIST")
		if err != nil {
			return nil, fmt.Errorf("client list on %s: %w", n.Name(), err)
		}
		s, _ := v.(string)
		out[n.Name()] = countNamed(s, name)
	}
	return out, nil
}

// countNamed counts CLIENT LIST lines whose name field is name.
func countNamed(list, name string) int {
	c := 0
	for _, line := range strings.Split(list, "\n") {
		if slices.Contains(strings.Fields(line), "name="+name) {
			c++
		}
	}
	return c
}

// leakyRelay is the bad variant: a relay that follows topology changes by
// building a new pool whenever the slot map it polls changes, and never
// closes the old one (in-flight calls might still use it) — every refresh
// leaves a whole pool of connections open.
type leakyRelay struct {
	opts    client.Options
	cur     atomic.Pointer[leakyGen]
	rebuilt atomic.Int64
	mu      sync.Mutex
	all     []*leakyGen
}

// leakyGen is one pool the relay built, with the calls it served: a pool
// that never carried traffic holds few connections, so the control shows
// a leak only once two or more live pools each served calls.
type leakyGen struct {
	pool  client.Pool
	calls atomic.Int64
}

func (l *leakyRelay) open(ctx context.Context) error {
	p, err := client.NewPool(ctx, l.opts)
	if err != nil {
		return err
	}
	g := &leakyGen{pool: p}
	l.mu.Lock()
	l.all = append(l.all, g)
	l.mu.Unlock()
	l.cur.Store(g)
	return nil
}

// call sends cmd through the current pool and counts a success against
// that pool's generation.
func (l *leakyRelay) call(ctx context.Context, cmd client.Cmd) error {
	g := l.cur.Load()
	_, err := g.pool.Do(ctx, cmd)
	if err == nil {
		g.calls.Add(1)
	}
	return err
}

// currentServed is how many calls the newest pool served.
func (l *leakyRelay) currentServed() int64 { return l.cur.Load().calls.Load() }

// pools is how many of the relay's pools (all still open) served at least
// one call.
func (l *leakyRelay) pools() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, g := range l.all {
		if g.calls.Load() > 0 {
			n++
		}
	}
	return n
}

// watch polls CLUSTER SLOTS and rebuilds on every change until ctx ends.
func (l *leakyRelay) watch(ctx context.Context) {
	last := ""
	for ctx.Err() == nil {
		p := l.cur.Load().pool
		if v, err := p.Do(ctx, client.Cmd{Prefix: []string{"CLUSTER", "SLOTS"}}); err == nil {
			d := slotsDigest(v)
			if last != "" && d != last && l.open(ctx) == nil {
				l.rebuilt.Add(1)
			}
			last = d
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (l *leakyRelay) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, g := range l.all {
		_ = g.pool.Close()
	}
}

// slotsDigest is a CLUSTER SLOTS reply in an order-free form.
func slotsDigest(v any) string {
	rows, _ := v.([]any)
	s := make([]string, len(rows))
	for i, r := range rows {
		s[i] = fmt.Sprint(r)
	}
	slices.Sort(s)
	return strings.Join(s, ";")
}

func connLeak(ctx SpecContext, b client.Backend) report.Check {
	name := "client-surface/connection-leak/" + string(b)
	sc := clScaleOf()
	rng := cfg.Rand(name)
	tag := fmt.Sprintf("%x", rng.Uint32())
	addrs := cluster.Addrs()
	opts := client.Options{Backend: b, Mode: client.ModeCluster, Addrs: addrs, DialTimeout: time.Second, ReadTimeout: time.Second, PoolSize: clPoolSize}

	By(fmt.Sprintf("opening impl's pool, the raw library client and a rebuild-on-refresh relay, each with %d connections per node", clPoolSize))
	implOpts := opts
	implOpts.ClientName = "slotgate-cl-impl-" + tag
	pool, err := client.NewPool(ctx, implOpts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(pool.Close)
	rawName := "slotgate-cl-raw-" + tag
	rawCall, rawPath := clRaw(b, addrs, rawName)
	leaky := &leakyRelay{opts: opts}
	leaky.opts.ClientName = "slotgate-cl-leaky-" + tag
	Expect(leaky.open(ctx)).To(Succeed())
	DeferCleanup(leaky.closeAll)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go leaky.watch(watchCtx)

	// Keys on every shard, and some in the slot that moves each round.
	moving := harness.DistinctSlots(rng, 1)[0]
	keysOf := func(p string) []string {
		var ks []string
		for _, k := range dtKeys(ctx, p, 3) {
			ks = append(ks, k...)
		}
		in := traffic.RoutingKeysIn(p, moving)
		ks = append(ks, in.Reg, in.Ctr, in.A)
		return ks
	}
	paths := []*clPath{
		{name: "impl", clientName: implOpts.ClientName, call: func(ctx context.Context, k string) error {
			_, err := pool.Do(ctx, client.NewCmd("SET", []string{k}, "v"))
			return err
		}},
		{name: "raw", clientName: rawName, call: rawCall},
		{name: "leaky", clientName: leaky.opts.ClientName, call: func(ctx context.Context, k string) error {
			return leaky.call(ctx, client.NewCmd("SET", []string{k}, "v"))
		}},
	}
	for _, p := range paths {
		p.keys = keysOf("cl-" + tag + "-" + p.name)
	}

	traffic := func() (stop func()) {
		tctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for _, p := range paths {
			for w := range sc.Workers {
				wg.Go(func() {
					for i := w; tctx.Err() == nil; i++ {
						switch err := p.call(tctx, p.keys[i%len(p.keys)]); {
						case err == nil:
							p.calls.Add(1)
						case tctx.Err() == nil:
							p.errs.Add(1)
						}
					}
				})
			}
		}
		return func() { cancel(); wg.Wait() }
	}
	samples := map[string][]judge.ConnSample{}
	sample := func(phase string, round int) {
		GinkgoHelper()
		for _, p := range paths {
			counts, err := clientConns(ctx, p.clientName)
			Expect(err).NotTo(HaveOccurred())
			for node, c := range counts {
				samples[p.name] = append(samples[p.name], judge.ConnSample{Phase: phase, Round: round, Node: node, Conns: c})
			}
		}
	}
	// settle waits for a quiet client's counts to stop moving (two equal
	// polls), as a relay between bursts.
	settle := func() {
		GinkgoHelper()
		prev := ""
		Eventually(func() bool {
			var s []string
			for _, p := range paths {
				c, err := clientConns(ctx, p.clientName)
				if err != nil {
					return false
				}
				s = append(s, fmt.Sprint(c))
			}
			cur := strings.Join(s, "|")
			same := cur == prev
			prev = cur
			return same
		}).WithTimeout(10 * time.Second).WithPolling(300 * time.Millisecond).Should(BeTrue())
	}

	stop := traffic()
	Eventually(func() int64 { return paths[0].calls.Load() }).WithTimeout(5 * time.Second).Should(BeNumerically(">", 100))
	stop()
	settle()
	sample(judge.PhaseBefore, 0)

	killed := map[string]int{}
	var rounds, failovers, moves int
	var ferr error
	for r := range sc.Rounds {
		By(fmt.Sprintf("churn round %d: %d workers per path, forced disconnects, slot %d moved%s", r+1, sc.Workers, moving, map[bool]string{true: ", a graceful failover", false: ""}[r == sc.Rounds-1]))
		rebuiltBefore := leaky.rebuilt.Load()
		stop = traffic()
		for _, p := range paths {
			var w fault.Window
			if w, ferr = fault.Apply(ctx, cluster, fault.KillClients{Client: p.clientName}); ferr != nil {
				break
			}
			var k int
			fmt.Sscanf(w.Target, "%d connections", &k)
			killed[p.name] += k
		}
		if ferr == nil {
			if _, ferr = fault.Apply(ctx, cluster, fault.MoveSlot{Slot: moving, To: -1, Hold: 100 * time.Millisecond}); ferr == nil {
				moves++
			}
		}
		if ferr == nil && r == sc.Rounds-1 {
			if _, ferr = fault.Apply(ctx, cluster, fault.Failover{Shard: r % len(cluster.Primaries()), Mode: fault.FailoverGraceful}); ferr == nil {
				failovers++
			}
		}
		// Calls after the last change, so every path followed it; and the
		// leaky relay's rebuild for this round's change, with the new pool
		// carrying calls, so its old and new pools both hold connections
		// when the churned sample is taken (its watcher polls every 100 ms,
		// far slower than 100 calls of the other paths). A rebuild that
		// does not come leaves the control's premise unmet, never a pass.
		base := paths[0].calls.Load()
		Eventually(func() int64 { return paths[0].calls.Load() - base }).WithTimeout(10 * time.Second).Should(BeNumerically(">", 100))
		if ferr == nil {
			harness.WaitAtMost(ctx, 10*time.Second, 20*time.Millisecond, func() bool {
				return leaky.rebuilt.Load() > rebuiltBefore && leaky.currentServed() >= clGenCalls
			})
		}
		stop()
		if ferr != nil {
			break
		}
		sample(judge.PhaseChurned, r+1)
		settle()
		sample(judge.PhaseSettled, r+1)
		rounds++
	}
	stopWatch()
	harness.MustConfirm(ferr, cfg.Seed)

	judgeOf := func(p *clPath) check.Result {
		return judge.ConnLeak.Judge(judge.ConnRun{Samples: samples[p.name], Bound: clPoolSize, Rounds: rounds, Calls: int(p.calls.Load()),
			Killed: killed[p.name], Failovers: failovers, Refreshes: moves + failovers, MinRounds: sc.Rounds, MinCalls: 200})
	}
	impl, raw, bad := judgeOf(paths[0]), judgeOf(paths[1]), judgeOf(paths[2])

	ev := harness.Evidence(cfg, cluster, pool)
	ev.Metrics = map[string]float64{"pool_size": clPoolSize, "rounds": float64(rounds), "failovers": float64(failovers), "slot_moves": float64(moves),
		"impl_calls": float64(paths[0].calls.Load()), "raw_calls": float64(paths[1].calls.Load()), "leaky_calls": float64(paths[2].calls.Load()),
		"impl_killed": float64(killed["impl"]), "leaky_rebuilds": float64(leaky.rebuilt.Load()), "leaky_pools_served": float64(leaky.pools()),
		"impl_errors": float64(paths[0].errs.Load()), "raw_errors": float64(paths[1].errs.Load())}
	ev.Observed = append(ev.Observed, "impl: "+observed(impl), "raw "+rawPath+": "+observed(raw), "rebuild-on-refresh relay: "+observed(bad))
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementConnLeak, Client: pool.Version(), Path: rawPath,
		Raw: raw, Wrapped: impl, Wrapper: fmt.Sprintf("impl/client Pool (Options.PoolSize %d)", clPoolSize),
		Evidence: fmt.Sprintf("CLIENT LIST by client name on all %d nodes before, after each of %d churn rounds (%d workers, forced disconnects, %d slot moves, %d graceful failovers) and after each quiet settle; bound %d connections per node.",
			len(cluster.Nodes()), rounds, sc.Workers, moves, failovers, clPoolSize)})
	ctl := harness.Variant("rebuild-on-refresh", "a relay that builds a new pool on every slot-map change it polls and never closes the old one", bad)
	served := leaky.pools()
	ctl = harness.Premise(ctl, served >= 2, fmt.Sprintf("%d of the relay's live pools carried traffic (%d rebuilds; want 2 pools with calls): its leak had nothing to show", served, leaky.rebuilt.Load()))
	return harness.Check(row, report.ColumnSilentlyWrong, "", impl, ev, ctl)
}

// clRaw opens the library's cluster client directly with the same
// explicit per-node bound.
func clRaw(b client.Backend, addrs []string, name string) (callFunc, string) {
	GinkgoHelper()
	switch b {
	case client.BackendGoRedis:
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ClientName: name, Protocol: 3,
			DialTimeout: time.Second, ReadTimeout: time.Second, PoolSize: clPoolSize})
		DeferCleanup(c.Close)
		return func(ctx context.Context, k string) error { return c.Set(ctx, k, "v", 0).Err() },
			fmt.Sprintf("go-redis ClusterClient.Set (ClusterOptions.PoolSize %d)", clPoolSize)
	case client.BackendValkeyGo:
		c, err := valkey.NewClient(valkey.ClientOption{InitAddress: addrs, ClientName: name, DisableCache: true,
			PipelineMultiplex: 2, BlockingPoolSize: clPoolSize}) // 2^2 pipelined connections per node
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		return func(ctx context.Context, k string) error {
				return c.Do(ctx, c.B().Set().Key(k).Value("v").Build()).Error()
			},
			fmt.Sprintf("valkey-go Client.Do (ClientOption.PipelineMultiplex 2, BlockingPoolSize %d)", clPoolSize)
	}
	Fail("unknown backend " + string(b))
	return nil, ""
}
