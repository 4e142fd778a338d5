package workload

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
	"github.com/slotgate/slotgate/traffic"
)

// ReadLog records the XREADGROUPs sent through the pools it wraps, with
// how many entries each reply held: what the PG archiver put on the wire
// (spec 002 §4.2 COUNT 1), seen at the client seam below the archiver's
// own code.
type ReadLog struct {
	mu    sync.Mutex
	reads []judge.ArchiverRead
}

// Wrap returns p recording into l.
func (l *ReadLog) Wrap(p client.Pool) client.Pool { return &recordingPool{Pool: p, log: l} }

// Reads returns what was recorded.
func (l *ReadLog) Reads() []judge.ArchiverRead {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]judge.ArchiverRead(nil), l.reads...)
}

type recordingPool struct {
	client.Pool
	log *ReadLog
}

func (p *recordingPool) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	reply, err := p.Pool.Do(ctx, cmd)
	if len(cmd.Prefix) > 0 && strings.EqualFold(cmd.Prefix[0], "XREADGROUP") && err == nil {
		words := append(append(append([]string(nil), cmd.Prefix...), cmd.Keys...), cmd.Args...)
		p.log.mu.Lock()
		p.log.reads = append(p.log.reads, judge.ArchiverRead{Cmd: words, Entries: readEntries(reply)})
		p.log.mu.Unlock()
	}
	return reply, err
}

// readEntries counts the entries of an XREADGROUP reply (RESP2
// [[stream, entries]…], RESP3 {stream: entries}).
func readEntries(reply any) int {
	n := 0
	switch t := reply.(type) {
	case map[string]any:
		for _, entries := range t {
			e, _ := entries.([]any)
			n += len(e)
		}
	case []any:
		for _, raw := range t {
			if pair, ok := raw.([]any); ok && len(pair) == 2 {
				e, _ := pair[1].([]any)
				n += len(e)
			}
		}
	}
	return n
}

// StreamInfo is XINFO STREAM's entries-added and length: their difference
// is what the trim removed.
func StreamInfo(ctx context.Context, pool client.Pool, tenant string) (added, length int64, err error) {
	keys, err := audit.KeysFor(tenant)
	if err != nil {
		return 0, 0, err
	}
	v, err := pool.Do(ctx, client.Cmd{Prefix: []string{"XINFO", "STREAM"}, Keys: []string{keys.Stream}})
	if err != nil {
		return 0, 0, fmt.Errorf("xinfo stream %s: %w", keys.Stream, err)
	}
	f := traffic.ReplyFields(v)
	added, _ = client.AsInt64(f["entries-added"])
	length, _ = client.AsInt64(f["length"])
	return added, length, nil
}

// TrueArchiverLag is the archiver's lag as Redis sees it, outside the
// instrument: the age (by stream ID, on this host's clock — the servers are
// local) of the oldest entry group has not acknowledged — its lowest
// pending entry, or the first entry after its last-delivered id — and 0
// when there is none.
func TrueArchiverLag(ctx context.Context, pool client.Pool, tenant, group string) (float64, error) {
	keys, err := audit.KeysFor(tenant)
	if err != nil {
		return 0, err
	}
	v, err := pool.Do(ctx, client.Cmd{Prefix: []string{"XINFO", "GROUPS"}, Keys: []string{keys.Stream}})
	if err != nil {
		return 0, fmt.Errorf("xinfo groups %s: %w", keys.Stream, err)
	}
	groups, _ := v.([]any)
	last, pending := "", int64(0)
	for _, raw := range groups {
		f := traffic.ReplyFields(raw)
		if name, _ := client.AsString(f["name"]); name == group {
			last, _ = client.AsString(f["last-delivered-id"])
			pending, _ = client.AsInt64(f["pending"])
		}
	}
	if last == "" {
		return 0, fmt.Errorf("stream %s has no group %s", keys.Stream, group)
	}
	oldest := ""
	if pending > 0 {
		v, err := pool.Do(ctx, client.NewCmd("XPENDING", []string{keys.Stream}, group))
		if err != nil {
			return 0, fmt.Errorf("xpending %s: %w", keys.Stream, err)
		}
		if s, _ := v.([]any); len(s) >= 2 {
			oldest, _ = client.AsString(s[1])
		}
	}
	if oldest == "" {
		if oldest, err = traffic.EntryAfter(ctx, pool, keys.Stream, last); err != nil {
			return 0, err
		}
	}
	if oldest == "" {
		return 0, nil
	}
	ms, _, _ := strings.Cut(oldest, "-")
	var n int64
	if _, err := fmt.Sscan(ms, &n); err != nil {
		return 0, fmt.Errorf("stream id %q: %w", oldest, err)
	}
	return max(0, time.Since(time.UnixMilli(n)).Seconds()), nil
}

// CallTimes counts the commands sent through the pools it wraps and the
// time spent inside them, per first key: how busy a writer's own calls
// kept it (spec 002 §4.1: the writer's appends to marconi:signals:{t}),
// seen at the client seam below the writer's own code.
type CallTimes struct {
	mu sync.Mutex
	by map[string]CallTime
}

// CallTime is one key's count of calls and time inside them.
type CallTime struct {
	Calls  int
	Inside time.Duration
}

// Wrap returns p counting into t.
func (t *CallTimes) Wrap(p client.Pool) client.Pool { return &timingPool{Pool: p, t: t} }

// Of returns what was counted for key so far.
func (t *CallTimes) Of(key string) CallTime {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.by[key]
}

type timingPool struct {
	client.Pool
	t *CallTimes
}

func (p *timingPool) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	start := time.Now()
	reply, err := p.Pool.Do(ctx, cmd)
	if len(cmd.Keys) > 0 {
		took := time.Since(start)
		p.t.mu.Lock()
		if p.t.by == nil {
			p.t.by = map[string]CallTime{}
		}
		c := p.t.by[cmd.Keys[0]]
		c.Calls++
		c.Inside += took
		p.t.by[cmd.Keys[0]] = c
		p.t.mu.Unlock()
	}
	return reply, err
}
