package clientsurface_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	"github.com/valkey-io/valkey-go"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/clientsurface/judge"
	"github.com/slotgate/slotgate/suites/harness"
)

var _ = Describe("dial-timeout", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "client-surface/dial-timeout/" + string(b), Row: row, Column: report.ColumnErrors,
			Spec: "a primary that answers no SYN (blackholed, not refused) fails every call on its shard loudly within DialTimeout+ReadTimeout, and the other shards keep their latency (000 §Client Architecture, dead primary halts dispatch)",
			Run:  func(ctx SpecContext) report.Check { return dialTimeout(ctx, b) },
		})
	}
})

// The pool's configured bounds. NOTE: DialTimeout is above the healthy
// bound's noise on a loaded 2-core runner (a healthy SET takes a few ms)
// and the slack absorbs one retry backoff and scheduling delay, so only a
// call that waited a second dial, or a dial timeout the pool did not
// honour, crosses the bound.
const (
	dtDial  = 400 * time.Millisecond
	dtRead  = 300 * time.Millisecond
	dtSlack = time.Second
	// dtNaive is the bad variant's explicit dial and read timeout: a pool
	// configured as if a dial always completes.
	dtNaive = time.Minute
)

// dtHold is how long the target stays blackholed: at least two bounds, so
// a hang shows as a call longer than the bound.
func dtHold() time.Duration {
	if cfg.Profile == harness.ProfileFull {
		return 10 * time.Second
	}
	return 4 * time.Second
}

// callFunc is one path's call: a SET of key through that path.
type callFunc func(ctx context.Context, key string) error

// dtPath is one client path the workload drives.
type dtPath struct {
	name string
	call callFunc
	keys map[string][]string // shard (primary name) → keys
	rec  *dtRecorder
}

// dtRecorder collects one path's calls and its calls in flight.
type dtRecorder struct {
	began    time.Time
	mu       sync.Mutex
	calls    []judge.Call
	inFlight map[int]judge.Call
}

func (r *dtRecorder) start(w int, c judge.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight[w] = c
}

func (r *dtRecorder) done(w int, c judge.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.inFlight, w)
	r.calls = append(r.calls, c)
}

// result returns the recorded calls with every call still in flight
// marked unfinished at now.
func (r *dtRecorder) result(now time.Time) []judge.Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]judge.Call(nil), r.calls...)
	for _, c := range r.inFlight {
		c.Unfinished, c.Took = true, now.Sub(r.began)-c.Start
		out = append(out, c)
	}
	return out
}

// dtKeys finds perShard keys owned by each primary, keyed by its name.
func dtKeys(ctx context.Context, prefix string, perShard int) map[string][]string {
	GinkgoHelper()
	out := map[string][]string{}
	owner := map[int]string{}
	for i := 0; len(out) < len(cluster.Primaries()) || !full(out, perShard); i++ {
		k := fmt.Sprintf("%s-%d", prefix, i)
		s := slot.Of(k)
		name, ok := owner[s]
		if !ok {
			n, err := cluster.NodeForSlot(ctx, s)
			Expect(err).NotTo(HaveOccurred())
			name, owner[s] = n.Name(), n.Name()
		}
		if len(out[name]) < perShard {
			out[name] = append(out[name], k)
		}
	}
	return out
}

func full(m map[string][]string, n int) bool {
	for _, ks := range m {
		if len(ks) < n {
			return false
		}
	}
	return true
}

// run drives p's keys until stop, one worker per key.
func (p *dtPath) run(ctx context.Context, target string, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	w := 0
	for shard, keys := range p.keys {
		for _, k := range keys {
			w++
			id := w
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-ctx.Done():
						return
					default:
					}
					c := judge.Call{Shard: shard, Target: shard == target, Start: time.Since(p.rec.began)}
					p.rec.start(id, c)
					err := p.call(ctx, k)
					c.Took = time.Since(p.rec.began) - c.Start
					if err != nil {
						c.Err = string(client.KindOf(err)) + ": " + err.Error()
						// A failed call is not retried at once: a path that
						// fails in microseconds would flood the record. A
						// duration: it paces the loop.
						time.Sleep(20 * time.Millisecond)
					}
					p.rec.done(id, c)
				}
			})
		}
	}
	return &wg
}

// dtOutcome is one path's judged run.
type dtOutcome struct {
	result check.Result
	calls  int
}

func dialTimeout(ctx SpecContext, b client.Backend) report.Check {
	name := "client-surface/dial-timeout/" + string(b)
	rng := cfg.Rand(name)
	tag := fmt.Sprintf("%x", rng.Uint32())
	target := cluster.Primaries()[rng.IntN(len(cluster.Primaries()))]
	addrs := cluster.Addrs()

	By("opening impl's pool, the raw library client and the naive pool, each with explicit timeouts")
	pool := dtPool(ctx, b, addrs, "slotgate-dt-impl", dtDial, dtRead, dtDial+dtRead)
	naive := dtPool(ctx, b, addrs, "slotgate-dt-naive", dtNaive, dtNaive, 0)
	rawCall, rawPath := dtRaw(b, addrs, "slotgate-dt-raw")
	paths := []*dtPath{
		{name: "impl", call: func(ctx context.Context, k string) error {
			_, err := pool.Do(ctx, client.NewCmd("SET", []string{k}, "v"))
			return err
		}},
		{name: "raw", call: rawCall},
		{name: "naive", call: func(ctx context.Context, k string) error {
			_, err := naive.Do(ctx, client.NewCmd("SET", []string{k}, "v"))
			return err
		}},
	}
	began := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	var wgs []*sync.WaitGroup
	for _, p := range paths {
		p.keys = dtKeys(ctx, "dt-"+tag+"-"+p.name, 2)
		p.rec = &dtRecorder{began: began, inFlight: map[int]judge.Call{}}
		wgs = append(wgs, p.run(runCtx, target.Name(), stop))
	}
	// Every path holds open connections to the target before the cut.
	Eventually(func() bool {
		for _, p := range paths {
			if len(p.rec.result(time.Now())) < 20 {
				return false
			}
		}
		return true
	}).WithTimeout(5 * time.Second).WithPolling(20 * time.Millisecond).Should(BeTrue())

	hold := dtHold()
	By(fmt.Sprintf("blackholing %s (SYNs dropped, connections cut) for %v under traffic on every shard", target.Name(), hold))
	w, err := fault.Apply(ctx, cluster, fault.Blackhole{Node: target.Name(), Duration: hold})
	// Calls in flight at the heal end on their own; a hung call is cut
	// after the grace and recorded unfinished.
	close(stop)
	grace := dtDial + dtRead + dtSlack
	for _, wg := range wgs {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(grace):
		}
	}
	end := time.Now()
	cancel()
	for _, wg := range wgs {
		wg.Wait()
	}
	harness.MustConfirm(err, cfg.Seed)

	from, to := w.Start.Sub(began), w.End.Sub(began)
	judgeOf := func(p *dtPath, dial, read time.Duration) dtOutcome {
		calls := p.rec.result(end)
		return dtOutcome{calls: len(calls), result: judge.DialTimeoutBound.Judge(judge.DialTimeoutRun{
			Calls: calls, From: from, To: to, Bound: dial + read + dtSlack, Healthy: dial, MinTarget: 3})}
	}
	impl, raw := judgeOf(paths[0], dtDial, dtRead), judgeOf(paths[1], dtDial, dtRead)
	// The naive pool is held to the bound the relay deployed with, not to
	// its own minute: that is the hang a relay would suffer.
	bad := judgeOf(paths[2], dtDial, dtRead)

	ev := harness.Evidence(cfg, cluster, pool)
	ev.Faults = harness.Windows(w)
	ev.Metrics = map[string]float64{"dial_timeout_ms": float64(dtDial.Milliseconds()), "read_timeout_ms": float64(dtRead.Milliseconds()),
		"bound_ms": float64((dtDial + dtRead + dtSlack).Milliseconds()), "blackhole_ms": float64((to - from).Milliseconds()),
		"impl_calls": float64(impl.calls), "raw_calls": float64(raw.calls), "naive_calls": float64(bad.calls)}
	ev.Observed = append(ev.Observed, "impl: "+observed(impl.result), "raw "+rawPath+": "+observed(raw.result), "naive pool: "+observed(bad.result))

	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementDialTimeout, Client: pool.Version(), Path: rawPath,
		Raw: raw.result, Wrapped: impl.result,
		Wrapper: "impl/client Pool (Options.CallTimeout = DialTimeout + ReadTimeout)",
		Evidence: fmt.Sprintf("%s blackholed for %v (SYNs dropped at its client port, connections cut) under SETs on every shard; DialTimeout %v, ReadTimeout %v, bound %v.",
			target.Name(), (to - from).Round(time.Millisecond), dtDial, dtRead, dtDial+dtRead+dtSlack)})
	ctl := harness.Variant("naive-dial-timeout", fmt.Sprintf("impl's pool with DialTimeout and ReadTimeout set to %v and no CallTimeout: calls on the blackholed shard wait for a dial that never completes", dtNaive), bad.result)
	return harness.Check(row, report.ColumnErrors, "", impl.result, ev, ctl)
}

func observed(r check.Result) string {
	s := string(r.Status) + ": " + r.Message
	for _, o := range r.Observed {
		s += " (" + o + ")"
	}
	return s
}

// dtPool opens impl's cluster pool with explicit dial, read and call
// timeouts (a zero call timeout: none).
func dtPool(ctx context.Context, b client.Backend, addrs []string, name string, dial, read, call time.Duration) client.Pool {
	GinkgoHelper()
	p, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: addrs, ClientName: name,
		DialTimeout: dial, ReadTimeout: read, CallTimeout: call})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(p.Close)
	return p
}

// dtRaw opens the library's cluster client directly, as a relay that
// copies its timeouts into the library's options and leaves everything
// else as the library ships it (set explicitly where the library has a
// default, so the control does not move with it), and returns its call and
// the path's name.
func dtRaw(b client.Backend, addrs []string, name string) (callFunc, string) {
	GinkgoHelper()
	switch b {
	case client.BackendGoRedis:
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ClientName: name, Protocol: 3,
			DialTimeout: dtDial, ReadTimeout: dtRead, WriteTimeout: dtRead,
			MaxRedirects: 3, // the library's default: a network error is retried on the same node, then on another
		})
		DeferCleanup(c.Close)
		return func(ctx context.Context, k string) error { return c.Set(ctx, k, "v", 0).Err() },
			"go-redis ClusterClient.Set (ClusterOptions.DialTimeout, ReadTimeout, MaxRedirects 3)"
	case client.BackendValkeyGo:
		c, err := valkey.NewClient(valkey.ClientOption{InitAddress: addrs, ClientName: name, DisableCache: true,
			Dialer: net.Dialer{Timeout: dtDial}, ConnWriteTimeout: dtRead})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		return func(ctx context.Context, k string) error {
				return c.Do(ctx, c.B().Set().Key(k).Value("v").Build()).Error()
			},
			"valkey-go Client.Do (ClientOption.Dialer.Timeout, ConnWriteTimeout)"
	}
	Fail("unknown backend " + string(b))
	return nil, ""
}
