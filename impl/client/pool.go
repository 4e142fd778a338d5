package client

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// ErrClosed is returned by a Subscriber method called after Close.
var ErrClosed = errors.New("client closed")

// ErrBadOptions wraps every Options validation failure.
var ErrBadOptions = errors.New("bad client options")

// ErrBadCommand wraps a Cmd that Pool.Do refuses to send (no name, or a
// subscription command, which belongs to a Subscriber).
var ErrBadCommand = errors.New("bad command")

// NewPool builds the command pool for o.Backend in o.Mode. It connects
// before returning (go-redis is lazy, so it is pinged), so a wrong address or
// a ModeCluster pool pointed at a non-cluster server fails here, not on the
// first command.
func NewPool(ctx context.Context, o Options) (Pool, error) {
	o, err := o.normalised()
	if err != nil {
		return nil, err
	}
	switch o.Backend {
	case BackendGoRedis:
		return newGoRedisPool(ctx, o)
	case BackendValkeyGo:
		return newValkeyGoPool(ctx, o)
	}
	panic("unreachable: normalised validated Backend")
}

// normalised validates o and fills the defaults the contract promises
// (Protocol RESP3).
func (o Options) normalised() (Options, error) {
	switch o.Backend {
	case BackendGoRedis, BackendValkeyGo:
	default:
		return o, fmt.Errorf("backend %q: %w", o.Backend, ErrBadOptions)
	}
	switch o.Mode {
	case ModeCluster, ModeSingle:
	case ModeSentinel:
		if o.MasterName == "" {
			return o, fmt.Errorf("mode sentinel without a MasterName: %w", ErrBadOptions)
		}
	default:
		return o, fmt.Errorf("mode %q: %w", o.Mode, ErrBadOptions)
	}
	switch o.Protocol {
	case 0:
		o.Protocol = RESP3
	case RESP2, RESP3:
	default:
		return o, fmt.Errorf("protocol %d: %w", o.Protocol, ErrBadOptions)
	}
	if len(o.Addrs) == 0 {
		return o, fmt.Errorf("no addresses: %w", ErrBadOptions)
	}
	return o, nil
}

// Module paths of the two client libraries.
const (
	goRedisModule  = "github.com/redis/go-redis/v9"
	valkeyGoModule = "github.com/valkey-io/valkey-go"
)

// linkedGoRedis and linkedValkeyGo are the client versions a build linked,
// set by `slotgate run` with -ldflags -X (from go list -m in the module it
// builds): a test binary (go test -c, ginkgo) carries no dependency build
// info, and a version written here by hand would label every cell with a
// version nobody checked was the one tested.
var linkedGoRedis, linkedValkeyGo string

// unknownVersion labels a client whose version the binary cannot tell.
const unknownVersion = "(version unknown: built without module info)"

// moduleVersion returns the version of module path linked into this binary:
// its build info, else what the build recorded with -X (linked), else
// unknownVersion.
func moduleVersion(path, linked string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path != path {
				continue
			}
			if d.Replace != nil && d.Replace.Version != "" {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	if linked != "" {
		return linked
	}
	return unknownVersion
}

// backendVersion is Pool.Version's value for b.
func backendVersion(b Backend) string {
	switch b {
	case BackendGoRedis:
		v := string(b) + " " + moduleVersion(goRedisModule, linkedGoRedis)
		if !goRedisHonorsNoRetry {
			v += " " + goRedisNoRetryMissing
		}
		return v
	case BackendValkeyGo:
		return string(b) + " " + moduleVersion(valkeyGoModule, linkedValkeyGo)
	}
	return string(b)
}

// LinkFlags are the -ldflags -X settings that record versions (module path
// → version, as go list -m reports them) in a build of this package, for
// Pool.Version to report.
func LinkFlags(versions map[string]string) string {
	pkg := "github.com/slotgate/slotgate/impl/client"
	var out []string
	for module, v := range map[string]string{goRedisModule: "linkedGoRedis", valkeyGoModule: "linkedValkeyGo"} {
		if ver := versions[module]; ver != "" {
			out = append(out, "-X "+pkg+"."+v+"="+ver)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// ClientModules are the module paths LinkFlags records.
var ClientModules = []string{goRedisModule, valkeyGoModule}

// flatten is cmd's wire form: Prefix..., Keys..., Args....
func (c Cmd) flatten() []string {
	out := make([]string, 0, len(c.Prefix)+len(c.Keys)+len(c.Args))
	out = append(out, c.Prefix...)
	out = append(out, c.Keys...)
	return append(out, c.Args...)
}

// validate rejects commands no backend can send through Pool.Do.
func (c Cmd) validate() error {
	if len(c.Prefix) == 0 || c.Prefix[0] == "" {
		return fmt.Errorf("command has no name: %w", ErrBadCommand)
	}
	if isSubscribeCommand(c.Prefix[0]) {
		// Pub/sub state belongs to the Subscriber (spec 000 §Client
		// Architecture); valkey-go's Arbitrary builder panics on these.
		return fmt.Errorf("command %s: use a Subscriber: %w", c.Prefix[0], ErrBadCommand)
	}
	return nil
}

// Version is the backend library and its module version, as a pool of
// that backend reports it (for evidence recorded without an open pool).
func (b Backend) Version() string { return backendVersion(b) }

// callContext is ctx bounded by a Pool's CallTimeout d (zero: ctx as it
// is); a caller's earlier deadline stays.
func callContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}
