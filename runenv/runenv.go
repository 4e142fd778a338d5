// Package runenv is the contract between the CLI and the suites: the
// environment variables `slotgate run` sets for each suite process and the
// parsers both sides use for them (profile, backends, ports, provider, halt
// budget). It is Ginkgo-free so the CLI can validate a command line without
// linking the suites' test framework; suites/harness re-exports
// it for the suites.
package runenv

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
)

// Profile selects durations and sizes; both profiles run the same code.
type Profile string

const (
	// ProfileSmoke is `make test`: every row, small and quick.
	ProfileSmoke Profile = "smoke"
	// ProfileFull is `make conformance`: the sizes a sign-off needs.
	ProfileFull Profile = "full"
)

// Timing is how fast the servers slotgate starts detect a dead primary and
// fail it over.
type Timing string

const (
	// TimingScaled is the fixtures' default: cluster-node-timeout 2 s and
	// Sentinel down-after 1 s, so a failover takes seconds and the
	// time-scaled lease protocols keep production's ratios.
	TimingScaled Timing = "scaled"
	// TimingProduction is the servers' own defaults: cluster-node-timeout
	// 15 s (Valkey's default), Sentinel down-after 30 s (sentinel.conf's)
	// with a failover-timeout of 30 s (Sentinel's 180 s would space two
	// failovers of one primary six minutes apart).
	TimingProduction Timing = "production"
)

// Production's failure-detection settings (TimingProduction).
const (
	ProductionNodeTimeout     = 15 * time.Second
	ProductionDownAfter       = 30 * time.Second
	ProductionFailoverTimeout = 30 * time.Second
)

// ParseTiming parses "scaled" (or "") or "production".
func ParseTiming(s string) (Timing, error) {
	switch t := Timing(s); t {
	case "":
		return TimingScaled, nil
	case TimingScaled, TimingProduction:
		return t, nil
	}
	return "", fmt.Errorf("%w: unknown timing %q (want scaled or production)", ErrBadConfig, s)
}

// Environment variables the CLI sets for the suites (and a developer may set
// by hand when running `ginkgo` directly).
const (
	EnvProfile  = "SLOTGATE_PROFILE"  // smoke | full (default smoke)
	EnvSeed     = "SLOTGATE_SEED"     // int64 (default: time-based, recorded in the report)
	EnvServer   = "SLOTGATE_SERVER"   // valkey-server binary (default "valkey-server")
	EnvBackends = "SLOTGATE_BACKENDS" // comma list of go-redis,valkey-go (default both)
	EnvTopology = "SLOTGATE_TOPOLOGY" // multi-shard topology for cluster rows (default cluster:3x1)
	// EnvTiming is the servers' failover timing (scaled | production).
	EnvTiming = "SLOTGATE_TIMING"
	// EnvReplicated is the replicated topology (a primary, R replicas, 3
	// Sentinels) of the disabled-mode failover scenarios (default replicated:1).
	EnvReplicated = "SLOTGATE_REPLICATED"
	EnvPorts      = "SLOTGATE_PORTS" // LO-HI: confine every port the fixtures bind (default: allocate freely)
	// EnvHaltBudget is the dispatch-halt budget (ParseHaltBudget): one
	// duration for every client role, or role=duration pairs (default
	// DefaultHaltBudget).
	EnvHaltBudget = "SLOTGATE_HALT_BUDGET"
	// EnvOut is the run's out directory: each scenario writes its history
	// under <out>/histories (unset: histories are not stored).
	EnvOut = "SLOTGATE_OUT"
	// EnvScripts is a fencing script-set directory (a manifest.json and the
	// .lua files it names; fencing.LoadScripts) the fencing rows run instead
	// of the embedded scripts: `slotgate run --scripts DIR` and every
	// mutant of `slotgate mutate` (default: impl's embedded set).
	EnvScripts = "SLOTGATE_SCRIPTS"
)

// ErrBadConfig marks configuration a user must fix (the CLI exits 2).
var ErrBadConfig = errors.New("bad configuration")

// Environment the CLI sets to choose where the suites' servers run; a
// developer running ginkgo directly may set it by hand.
const (
	EnvProvider      = "SLOTGATE_PROVIDER"       // local | containers | external (default local)
	EnvValkeyImage   = "SLOTGATE_VALKEY_IMAGE"   // containers: Valkey image (default fixtures.DefaultValkeyImage)
	EnvPostgresImage = "SLOTGATE_POSTGRES_IMAGE" // containers: PostgreSQL image (default fixtures.DefaultPostgresImage)
)

// ParseProvider parses "local", "containers" or "external"; the error
// wraps ErrBadConfig and says what is accepted.
func ParseProvider(s string) (fixtures.Provider, error) {
	p, err := fixtures.ParseProvider(s)
	if err != nil {
		return "", fmt.Errorf("%w: %s=%q: want local, containers or external", ErrBadConfig, EnvProvider, s)
	}
	return p, nil
}

// ParsePorts parses a port range "LO-HI".
func ParsePorts(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || lo < 1024 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("%w: bad port range %q (want LO-HI with 1024 <= LO <= HI <= 65535, e.g. 20000-20999)", ErrBadConfig, s)
	}
	return lo, hi, nil
}

// ParseProfile parses "smoke" or "full".
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case ProfileSmoke, ProfileFull:
		return p, nil
	}
	return "", fmt.Errorf("%w: unknown profile %q (want smoke or full)", ErrBadConfig, s)
}

// ParseBackends parses a comma list of client backends.
func ParseBackends(s string) ([]client.Backend, error) {
	var out []client.Backend
	for _, part := range strings.Split(s, ",") {
		b := client.Backend(strings.TrimSpace(part))
		known := false
		for _, k := range client.Backends {
			known = known || k == b
		}
		if !known {
			return nil, fmt.Errorf("%w: unknown client backend %q (want go-redis, valkey-go)", ErrBadConfig, b)
		}
		out = append(out, b)
	}
	return out, nil
}

// HaltBudget is how long each client role may halt dispatch after a node of
// its shard died (spec 000 §Client Architecture: "a dead primary halts
// dispatch pending topology refresh"; §Conformance, Failure drills: "both
// clients ... have independent recovery behavior — drill both"). A halt
// over its role's budget fails the failure-drills errors cell, the figure in
// the evidence.
type HaltBudget struct {
	// Pool: a command-pool write to the shard, from the primary's death (or
	// the start of a graceful failover) to the first acknowledged write.
	Pool time.Duration
	// Subscription: a sharded subscription on the shard, from the primary's
	// death to the first delivery of a message published after it.
	Subscription time.Duration
	// ReplicaReads: a replica-read pool, from a killed replica's restart to
	// the first read the repaired replica serves again.
	ReplicaReads time.Duration
}

// DefaultHaltBudget is every role's default budget: 10 s, one renew cadence
// of the fencing lease. Derivation (spec 000 §Failure Modes: the dead-primary
// halt "goes in shard-count risk math"; §The Fencing Migration: RENEW_SCRIPT
// on a 10 s cadence against the 30 s DEFAULT_LEASE_TTL): a live tunnel's lease
// expires when TTL passes without a successful renew. A halt of the lease's
// shard that covers k renew ticks stretches the gap between successful renews
// to (k+1) × 10 s, so two missed ticks (30 s = TTL) lose a lease whose pod is
// alive, and a halt longer than one cadence can cover two ticks whatever its
// phase. So every halt must stay within 10 s for "a dead primary" to stay a
// latency wall and not become an authority loss. The subscription client and
// replica reads get the same bound: the spec drills every role's recovery
// independently and names no looser one. The budget covers the whole halt,
// the cluster's failure detection included (the fixtures' 2 s
// cluster-node-timeout: ~3–4 s to promote); a deployment whose
// cluster-node-timeout is T leaves the clients 10 s − (T + ~1.5 s), which is
// the shard-count risk math's input (docs/FINDINGS.md).
const DefaultHaltBudget = 10 * time.Second

// Halt-budget roles as ParseHaltBudget names them.
const (
	RolePool         = "pool"
	RoleSubscription = "subscription"
	RoleReplicaReads = "replica-reads"
)

// ParseHaltBudget parses a halt budget: "" (every role DefaultHaltBudget),
// one duration for every role ("2s"), or a comma list of role=duration
// ("pool=5s,subscription=8s,replica-reads=10s"); roles left out keep the
// default.
func ParseHaltBudget(s string) (HaltBudget, error) {
	b := HaltBudget{Pool: DefaultHaltBudget, Subscription: DefaultHaltBudget, ReplicaReads: DefaultHaltBudget}
	s = strings.TrimSpace(s)
	if s == "" {
		return b, nil
	}
	bad := func(what string) (HaltBudget, error) {
		return b, fmt.Errorf("%w: halt budget %q: %s (want a duration such as 10s, or role=duration pairs of %s, %s, %s)", ErrBadConfig, s, what, RolePool, RoleSubscription, RoleReplicaReads)
	}
	if !strings.Contains(s, "=") {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return bad("not a positive duration")
		}
		return HaltBudget{Pool: d, Subscription: d, ReplicaReads: d}, nil
	}
	for _, part := range strings.Split(s, ",") {
		role, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return bad(fmt.Sprintf("%q is not a positive duration", v))
		}
		switch strings.TrimSpace(role) {
		case RolePool:
			b.Pool = d
		case RoleSubscription:
			b.Subscription = d
		case RoleReplicaReads:
			b.ReplicaReads = d
		default:
			return bad(fmt.Sprintf("unknown role %q", role))
		}
	}
	return b, nil
}
