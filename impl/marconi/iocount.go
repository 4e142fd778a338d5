package marconi

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/slotgate/slotgate/impl/client"
)

// hotPathKey marks a context as a send's, from API entry to its 200.
type hotPathKey struct{}

// WithHotPath marks ctx as belonging to a send (spec 002 §2.1: API entry
// to 200). The send handler marks its request context; the counting seams
// (CountingPool, PGCounter) attribute every command issued under a marked
// context to the hot path, so I/O on the send path is counted at the
// client even while other workers (the audit writers) use the same
// servers.
func WithHotPath(ctx context.Context) context.Context {
	return context.WithValue(ctx, hotPathKey{}, true)
}

// IsHotPath reports a context marked by WithHotPath.
func IsHotPath(ctx context.Context) bool {
	v, _ := ctx.Value(hotPathKey{}).(bool)
	return v
}

// IOCounts is what a counting seam saw.
type IOCounts struct {
	// Total counts every command.
	Total int64 `json:"total"`
	// HotPath counts commands issued under a WithHotPath context.
	HotPath int64 `json:"hot_path"`
	// ByCommand counts commands by upper-case name (EVALSHA, SADD, …;
	// SQL statements by their first word).
	ByCommand map[string]int64 `json:"by_command,omitempty"`
	// HotPathByCommand is ByCommand for hot-path commands only.
	HotPathByCommand map[string]int64 `json:"hot_path_by_command,omitempty"`
}

// Sub is c minus an earlier reading.
func (c IOCounts) Sub(before IOCounts) IOCounts {
	sub := func(a, b map[string]int64) map[string]int64 {
		out := map[string]int64{}
		for k, v := range a {
			if d := v - b[k]; d != 0 {
				out[k] = d
			}
		}
		return out
	}
	return IOCounts{Total: c.Total - before.Total, HotPath: c.HotPath - before.HotPath,
		ByCommand: sub(c.ByCommand, before.ByCommand), HotPathByCommand: sub(c.HotPathByCommand, before.HotPathByCommand)}
}

// counter is the shared bookkeeping of the seams.
type counter struct {
	total, hot atomic.Int64
	mu         sync.Mutex
	by, hotBy  map[string]int64
}

func (c *counter) count(ctx context.Context, name string) {
	name = strings.ToUpper(name)
	c.total.Add(1)
	hot := IsHotPath(ctx)
	if hot {
		c.hot.Add(1)
	}
	c.mu.Lock()
	if c.by == nil {
		c.by, c.hotBy = map[string]int64{}, map[string]int64{}
	}
	c.by[name]++
	if hot {
		c.hotBy[name]++
	}
	c.mu.Unlock()
}

func (c *counter) counts() IOCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := IOCounts{Total: c.total.Load(), HotPath: c.hot.Load(), ByCommand: map[string]int64{}, HotPathByCommand: map[string]int64{}}
	for k, v := range c.by {
		out.ByCommand[k] = v
	}
	for k, v := range c.hotBy {
		out.HotPathByCommand[k] = v
	}
	return out
}

// CountingPool is the client hook on the command pool: it wraps the seam
// (go-redis has hooks, valkey-go has none, so the hook is the Pool
// interface both backends implement) and counts every command, and every
// command issued on the hot path.
type CountingPool struct {
	client.Pool
	c counter
}

// Count wraps p.
func Count(p client.Pool) *CountingPool { return &CountingPool{Pool: p} }

// Do counts cmd and sends it.
func (p *CountingPool) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	name := ""
	if len(cmd.Prefix) > 0 {
		name = cmd.Prefix[0]
	}
	p.c.count(ctx, name)
	return p.Pool.Do(ctx, cmd)
}

// Counts returns what the pool has sent so far.
func (p *CountingPool) Counts() IOCounts { return p.c.counts() }

// PGCounter is the client hook on a pgx connection (pgx.QueryTracer: set
// it as ConnConfig.Tracer): it counts every statement, and every statement
// issued on the hot path.
type PGCounter struct{ c counter }

var _ pgx.QueryTracer = (*PGCounter)(nil)

// TraceQueryStart counts the statement by its first word.
func (t *PGCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	word, _, _ := strings.Cut(strings.TrimSpace(data.SQL), " ")
	t.c.count(ctx, word)
	return ctx
}

// TraceQueryEnd does nothing: a statement is I/O once it is sent.
func (t *PGCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Counts returns what the connection has sent so far.
func (t *PGCounter) Counts() IOCounts { return t.c.counts() }
