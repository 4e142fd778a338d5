// Package harness is what every suite shares: the run configuration the CLI
// hands over in the environment, the profile's scale, seeded randomness per
// scenario, and the one place a check result becomes a report entry and an
// assertion.
package harness

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/runenv"
)

// The run environment's names, from runenv (the CLI's Ginkgo-free side of
// the contract), so suites keep writing harness.ProfileFull.
type (
	Profile    = runenv.Profile
	HaltBudget = runenv.HaltBudget
)

const (
	ProfileSmoke      = runenv.ProfileSmoke
	ProfileFull       = runenv.ProfileFull
	EnvProfile        = runenv.EnvProfile
	EnvSeed           = runenv.EnvSeed
	EnvServer         = runenv.EnvServer
	EnvBackends       = runenv.EnvBackends
	EnvTopology       = runenv.EnvTopology
	EnvReplicated     = runenv.EnvReplicated
	EnvTiming         = runenv.EnvTiming
	EnvPorts          = runenv.EnvPorts
	EnvHaltBudget     = runenv.EnvHaltBudget
	EnvProvider       = runenv.EnvProvider
	EnvValkeyImage    = runenv.EnvValkeyImage
	EnvPostgresImage  = runenv.EnvPostgresImage
	DefaultHaltBudget = runenv.DefaultHaltBudget
	RolePool          = runenv.RolePool
	RoleSubscription  = runenv.RoleSubscription
	RoleReplicaReads  = runenv.RoleReplicaReads
	EnvOut            = runenv.EnvOut
	EnvScripts        = runenv.EnvScripts
)

// ErrBadConfig marks configuration a user must fix (the CLI exits 2).
var ErrBadConfig = runenv.ErrBadConfig

// Parsers of the run environment (runenv).
var (
	ParsePorts      = runenv.ParsePorts
	ParseProfile    = runenv.ParseProfile
	ParseBackends   = runenv.ParseBackends
	ParseProvider   = runenv.ParseProvider
	ParseHaltBudget = runenv.ParseHaltBudget
)

// Config is one run's configuration.
type Config struct {
	Profile  Profile
	Seed     int64
	Server   string
	Backends []client.Backend
	// Topology is the multi-shard topology spec for cluster rows.
	Topology string
	// Replicated is the replicated topology spec (replicated:R) of the
	// disabled-mode failover scenarios.
	Replicated string
	// Timing is the servers' failover timing (EnvTiming): scaled, or the
	// servers' own production defaults.
	Timing runenv.Timing
	// PortLo and PortHi confine every bound port when non-zero.
	PortLo, PortHi int
	// Provider is where the servers run, with the images the container
	// provider uses ("" = the fixtures' defaults); see provider.go.
	Provider                   fixtures.Provider
	ValkeyImage, PostgresImage string
	// External is the target the external provider attaches to (endpoints,
	// credentials, AllowFlush), read from fixtures.Env* when Provider is
	// external.
	External fixtures.External
	// HaltBudget bounds each client role's dispatch halt in the failure
	// drills (EnvHaltBudget, --halt-budget).
	HaltBudget HaltBudget
	// Scripts is the fencing script set every row that builds a fencing
	// directory runs (EnvScripts); never nil after ConfigFromEnv. Negative
	// controls keep their own known-bad scripts.
	Scripts *fencing.ScriptSet
}

// ConfigFromEnv reads the run configuration from the environment.
func ConfigFromEnv() (Config, error) {
	c := Config{Profile: ProfileSmoke, Server: "valkey-server", Backends: client.Backends, Topology: "cluster:3x1", Replicated: "replicated"}
	if v := os.Getenv(EnvProfile); v != "" {
		p, err := ParseProfile(v)
		if err != nil {
			return c, err
		}
		c.Profile = p
	}
	if v := os.Getenv(EnvSeed); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return c, fmt.Errorf("%w: %s=%q is not an integer", ErrBadConfig, EnvSeed, v)
		}
		c.Seed = s
	} else {
		c.Seed = time.Now().UnixNano() % 1_000_000_000
	}
	if v := os.Getenv(EnvServer); v != "" {
		c.Server = v
	}
	if v := os.Getenv(EnvBackends); v != "" {
		b, err := ParseBackends(v)
		if err != nil {
			return c, err
		}
		c.Backends = b
	}
	if v := os.Getenv(EnvTopology); v != "" {
		c.Topology = v
	}
	if v := os.Getenv(EnvReplicated); v != "" {
		c.Replicated = v
	}
	t, err := runenv.ParseTiming(os.Getenv(EnvTiming))
	if err != nil {
		return c, err
	}
	c.Timing = t
	if v := os.Getenv(EnvPorts); v != "" {
		lo, hi, err := ParsePorts(v)
		if err != nil {
			return c, err
		}
		c.PortLo, c.PortHi = lo, hi
	}
	if err := c.providerFromEnv(); err != nil {
		return c, err
	}
	b, err := ParseHaltBudget(os.Getenv(EnvHaltBudget))
	if err != nil {
		return c, err
	}
	c.HaltBudget = b
	c.Scripts = fencing.Embedded()
	if v := os.Getenv(EnvScripts); v != "" {
		if c.Scripts, err = fencing.LoadScripts(v); err != nil {
			return c, fmt.Errorf("%w: %s: %w", ErrBadConfig, EnvScripts, err)
		}
	}
	return c, nil
}

// Scale is how big a scenario runs under a profile.
type Scale struct {
	// Sessions, Rounds and Contenders size the fencing contention scenario.
	Sessions, Rounds, Contenders int
	// MutantSessions sizes each negative-control run: enough to trip the
	// checker, no more.
	MutantSessions int
	// SlotSamples is the number of random keys A1 compares with the server.
	SlotSamples int
	// PublishMessages is the number of messages per A4 measurement.
	PublishMessages int
}

// Scale returns the sizes for the profile.
func (c Config) Scale() Scale {
	if c.Profile == ProfileFull {
		return Scale{Sessions: 240, Rounds: 8, Contenders: 6, MutantSessions: 24, SlotSamples: 50_000, PublishMessages: 20_000}
	}
	return Scale{Sessions: 36, Rounds: 3, Contenders: 4, MutantSessions: 12, SlotSamples: 4_000, PublishMessages: 2_000}
}

// Rand returns the scenario's own RNG: seeded from the run seed and the
// scenario name, so one scenario replays identically whatever else ran.
func (c Config) Rand(scenario string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(scenario))
	return rand.New(rand.NewPCG(uint64(c.Seed), h.Sum64()))
}

// ScriptSet is the fencing script set of the run: c.Scripts, or impl's
// embedded set when the Config was built by hand.
func (c Config) ScriptSet() *fencing.ScriptSet {
	if c.Scripts == nil {
		return fencing.Embedded()
	}
	return c.Scripts
}
