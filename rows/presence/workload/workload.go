// Package workload holds the presence-mget row's workload: a known pattern
// of presence keys spread over every slot (present, never written, cleared,
// expired) and a reader that records every bulk read as the judge
// package's records. The protocol and locality rows write and read the same
// pattern.
package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/presence"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/rows/presence/judge"
	"github.com/slotgate/slotgate/traffic"
)

// State is what the pattern does to one key.
type State string

const (
	Set     State = "present" // SET PX long TTL
	Never   State = "never"   // never written
	Cleared State = "cleared" // written, then DEL (a clean leave)
	Expired State = "expired" // written with a short TTL that elapses
)

// Pattern is a known set of presence keys spread over every slot:
// which are present (with which value) and which are nil, from
// acknowledged writes only.
type Pattern struct {
	Community string
	Keys      []string
	Want      map[string]judge.Want
	States    map[State]int
	// Outcomes are the writes' loud results.
	Outcomes []history.OpOutcome
}

// Layout sizes a pattern.
type Layout struct {
	Community string
	Keys      int
	// ShortTTL is the TTL of the keys meant to expire before any read.
	ShortTTL time.Duration
	// TTL is the store's TTL for the present keys and Clock the scenario's
	// clock: with both, each present key's want carries when it may expire
	// (judge.Want.ExpiresAt), so a run slow enough to outlast the
	// TTL is not judged as reading nils where values were due.
	TTL   time.Duration
	Clock *traffic.Clock
	// Pinned are extra keys forced into given slots, half present and half
	// never written, so a slot moved mid-read holds a mixed group (the case
	// where a migrating slot answers TRYAGAIN).
	Pinned  map[int]int
	Workers int
}

// Write writes a pattern: ~55% present, ~15% never written, ~15%
// cleared, ~15% expired. It waits until the short TTL has elapsed for every
// expiring key, so they read nil deterministically.
func Write(ctx context.Context, s *presence.Store, rng *rand.Rand, l Layout) Pattern {
	p := Pattern{Community: l.Community, Want: map[string]judge.Want{}, States: map[State]int{}}
	type job struct {
		pubkey, value string
		state         State
	}
	var jobs []job
	add := func(pubkey string, st State) {
		v := fmt.Sprintf("online:%x", rng.Uint64())
		jobs = append(jobs, job{pubkey, v, st})
		p.Keys = append(p.Keys, presence.Key(l.Community, pubkey))
	}
	for i := range l.Keys {
		st := Set
		switch r := rng.IntN(100); {
		case r < 15:
			st = Never
		case r < 30:
			st = Cleared
		case r < 45:
			st = Expired
		}
		add(fmt.Sprintf("pk%d-%x", i, rng.Uint32()), st)
	}
	for s, n := range l.Pinned {
		for i := range n {
			st := Set
			if i%2 == 1 {
				st = Never
			}
			add(PubkeyInSlot(l.Community, s, fmt.Sprintf("pin%d-%d-", s, i)), st)
		}
	}
	var mu sync.Mutex
	var lastExpiring time.Time
	jobCh := make(chan job)
	var wg sync.WaitGroup
	for range max(l.Workers, 1) {
		wg.Go(func() {
			for j := range jobCh {
				k := presence.Key(l.Community, j.pubkey)
				w := judge.Want{}
				var err error
				var op string
				switch j.state {
				case Set:
					expires := time.Duration(0)
					if l.TTL > 0 && l.Clock != nil {
						expires = l.Clock.Now() + l.TTL // the server sets the TTL on receipt, after this
					}
					op, err = "set "+k, s.Set(ctx, l.Community, j.pubkey, j.value)
					w = judge.Want{Present: true, Value: j.value, ExpiresAt: expires}
				case Cleared:
					if op, err = "set "+k, s.Set(ctx, l.Community, j.pubkey, j.value); err == nil {
						op, err = "clear "+k, s.Clear(ctx, l.Community, j.pubkey)
					}
				case Expired:
					op, err = "set short "+k, s.SetTTL(ctx, l.Community, j.pubkey, j.value, l.ShortTTL)
					mu.Lock()
					lastExpiring = time.Now()
					mu.Unlock()
				}
				w.Unknown = err != nil
				o := history.OpOutcome{Op: op, ErrKind: traffic.ErrKind(err)}
				if err != nil {
					o.Err = err.Error()
				}
				mu.Lock()
				p.Want[k] = w
				p.States[j.state]++
				if op != "" {
					p.Outcomes = append(p.Outcomes, o)
				}
				mu.Unlock()
			}
		})
	}
	for _, j := range jobs {
		jobCh <- j
	}
	close(jobCh)
	wg.Wait()
	if !lastExpiring.IsZero() {
		// The server set each short TTL on receipt, before the write was
		// acknowledged: one TTL after the last acknowledgement, all are gone.
		time.Sleep(time.Until(lastExpiring.Add(l.ShortTTL + 10*time.Millisecond)))
	}
	return p
}

// PubkeyInSlot returns a pubkey starting with base whose presence key in
// community hashes to slot s (a seeded search over a numeric suffix).
func PubkeyInSlot(community string, s int, base string) string {
	for i := 0; ; i++ {
		pk := fmt.Sprintf("%s%d", base, i)
		if slot.Of(presence.Key(community, pk)) == s {
			return pk
		}
	}
}

// Reader issues bulk reads and records them.
type Reader struct {
	Store *presence.Store
	Clock *traffic.Clock
	mu    sync.Mutex
	reads []judge.Read
}

// Read runs one bulk read of keys and records it.
func (r *Reader) Read(ctx context.Context, keys []string) {
	rd := judge.Read{Keys: keys, Call: r.Clock.Now()}
	vals, err := r.Store.Bulk(ctx, keys)
	rd.Return = r.Clock.Now()
	if err != nil {
		rd.ErrKind, rd.Err = traffic.ErrKind(err), err.Error()
	}
	for _, v := range vals {
		rd.Got = append(rd.Got, judge.Got{Present: v.Present, Value: v.Val})
	}
	traffic.RecordOp(ctx, "presence-reader", "bulk-read", -1, rd.Call, rd.Return, err)
	r.mu.Lock()
	r.reads = append(r.reads, rd)
	r.mu.Unlock()
}

// Reads returns a copy of the recorded reads.
func (r *Reader) Reads() []judge.Read {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]judge.Read(nil), r.reads...)
}

// Shuffled returns keys in a random order with some keys repeated, so a
// read checks positions, not just membership.
func Shuffled(rng *rand.Rand, keys []string, dupes int) []string {
	out := append([]string(nil), keys...)
	for range dupes {
		out = append(out, keys[rng.IntN(len(keys))])
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Sample returns n random keys (with repeats) from keys, plus every key of
// must, shuffled.
func Sample(rng *rand.Rand, keys []string, n int, must []string) []string {
	out := append([]string(nil), must...)
	for range n {
		out = append(out, keys[rng.IntN(len(keys))])
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
