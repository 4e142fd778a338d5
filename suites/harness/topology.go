package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/runenv"
)

// Start brings up a topology for the suite and registers its teardown right
// away, so a failed start still releases what it started.
func Start(ctx context.Context, cfg Config, spec string) *fixtures.Topology {
	GinkgoHelper()
	s, err := fixtures.ParseSpec(spec)
	Expect(err).NotTo(HaveOccurred())
	began := time.Now()
	// Registered before Run: an interrupt that abandons Run half-way still
	// closes whatever it had started (Close is idempotent), and a started
	// topology is in the fixtures registry, so CleanupAll closes it. Nothing
	// is registered with Ginkgo after Run: suites call Start from a
	// goroutine of their BeforeSuite, which may return while Run is still
	// running (an interrupt fails the node's other Start first), and a
	// DeferCleanup after its node ended aborts the whole suite process
	// before any cleanup — its servers' directories stay behind.
	// Once per process, at the first Start — the top of a BeforeSuite, in
	// every goroutine that calls Start: a second Start that a goroutine
	// reaches only after its first Run may come after the node ended.
	registerCleanup.Do(func() { DeferCleanup(fixtures.CleanupAll) })
	t, err := fixtures.Run(ctx, s, cfg.FixtureOptions()...)
	if err != nil && t != nil {
		_ = t.Close() // what a failed start had started, now, not at a cleanup that may have run already
	}
	Expect(err).NotTo(HaveOccurred(), "start %s", spec)
	fmt.Fprintf(os.Stderr, "  %s up in %v (%s)\n", spec, time.Since(began).Round(time.Millisecond), t.ServerVersion())
	return t
}

var registerCleanup sync.Once

// FixtureOptions are the fixtures options every suite starts its servers
// with (Valkey topologies and PostgreSQL alike): the configured server
// binary, provider and images, port range, and a logger into the spec's
// output.
func (c Config) FixtureOptions() []fixtures.Option {
	opts := []fixtures.Option{fixtures.WithServer(c.Server), fixtures.WithLogger(func(format string, args ...any) {
		fmt.Fprintf(GinkgoWriter, format+"\n", args...)
	})}
	if c.PortLo != 0 {
		opts = append(opts, fixtures.WithPortRange(c.PortLo, c.PortHi))
	}
	if c.Timing == runenv.TimingProduction {
		opts = append(opts, fixtures.WithNodeTimeout(runenv.ProductionNodeTimeout),
			fixtures.WithSentinelTiming(runenv.ProductionDownAfter, runenv.ProductionFailoverTimeout))
	}
	return append(opts, c.ProviderOptions()...)
}

// Pool opens a command pool of backend on t — cluster-aware on any
// cluster-enabled topology, with an external target's credentials and TLS
// — and closes it when the current node ends.
func Pool(ctx context.Context, backend client.Backend, t *fixtures.Topology) client.Pool {
	GinkgoHelper()
	mode := client.ModeSingle
	if t.Spec.IsCluster() {
		mode = client.ModeCluster
	}
	cred := t.Credentials()
	p, err := client.NewPool(ctx, client.Options{Backend: backend, Mode: mode, Addrs: t.Addrs(), ClientName: "slotgate-pool",
		Username: cred.Username, Password: cred.Password, TLS: cred.TLS})
	Expect(err).NotTo(HaveOccurred(), "open %s pool on %s", backend, t.Spec)
	DeferCleanup(p.Close)
	return p
}

// Evidence starts a check's evidence with how to reproduce it.
func Evidence(cfg Config, t *fixtures.Topology, p client.Pool) report.Evidence {
	ev := report.Evidence{Seed: cfg.Seed, Profile: string(cfg.Profile)}
	if cfg.Timing == runenv.TimingProduction {
		ev.Timing = string(cfg.Timing)
	}
	if t != nil {
		ev.Topology, ev.Server = t.Spec.String(), t.ServerVersion()
	}
	if p != nil {
		ev.Client = p.Version()
	}
	return ev
}

// Sessions returns n seeded sessions in community; their hash tags spread
// over all slots, so a multi-shard topology sees every shard.
func Sessions(rng *rand.Rand, community string, n int) []fencing.Session {
	out := make([]fencing.Session, n)
	for i := range out {
		out[i] = fencing.Session{Community: community, ID: fmt.Sprintf("s%d-%x", i, rng.Uint32())}
	}
	return out
}

// BackendsFromEnv is the backends list at tree-construction time; a bad
// value is reported by ConfigFromEnv in BeforeSuite.
func BackendsFromEnv() []client.Backend {
	c, err := ConfigFromEnv()
	if err != nil {
		return client.Backends
	}
	return c.Backends
}

// TimingFromEnv is the servers' failover timing at tree-construction time
// (scaled when the environment does not parse: the BeforeSuite's
// ConfigFromEnv reports that).
func TimingFromEnv() runenv.Timing {
	t, err := runenv.ParseTiming(os.Getenv(EnvTiming))
	if err != nil {
		return runenv.TimingScaled
	}
	return t
}

// DistinctSlots draws n different hash slots from rng. Scenarios that give
// each drawn slot its own workers and its own migration need them distinct:
// a slot drawn twice gives two workers one key (the register checkers
// assume one writer per key) and moves one slot twice at once.
func DistinctSlots(rng *rand.Rand, n int) []int {
	seen := make(map[int]bool, n)
	out := make([]int, 0, n)
	for len(out) < n {
		s := rng.IntN(slot.Count)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
