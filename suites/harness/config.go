// Package harness is what every suite shares: the run configuration the CLI
// hands over in the environment, the profile's scale, seeded randomness per
// scenario, and the one place a check result becomes a report entry and an
// assertion.
package harness

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
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

// Environment variables the CLI sets for the suites (and a developer may set
// by hand when running `ginkgo` directly).
const (
	EnvProfile  = "SLOTGATE_PROFILE"  // smoke | full (default smoke)
	EnvSeed     = "SLOTGATE_SEED"     // int64 (default: time-based, recorded in the report)
	EnvServer   = "SLOTGATE_SERVER"   // valkey-server binary (default "valkey-server")
	EnvBackends = "SLOTGATE_BACKENDS" // comma list of go-redis,valkey-go (default both)
	EnvTopology = "SLOTGATE_TOPOLOGY" // multi-shard topology for cluster rows (default cluster:3x1)
	EnvPorts    = "SLOTGATE_PORTS"    // LO-HI: confine every port the fixtures bind (default: allocate freely)
)

// ErrBadConfig marks configuration a user must fix (the CLI exits 2).
var ErrBadConfig = errors.New("bad configuration")

// Config is one run's configuration.
type Config struct {
	Profile  Profile
	Seed     int64
	Server   string
	Backends []client.Backend
	// Topology is the multi-shard topology spec for cluster rows.
	Topology string
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
}

// ConfigFromEnv reads the run configuration from the environment.
func ConfigFromEnv() (Config, error) {
	c := Config{Profile: ProfileSmoke, Server: "valkey-server", Backends: client.Backends, Topology: "cluster:3x1"}
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
	return c, nil
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
