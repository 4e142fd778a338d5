package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/presence"
	"github.com/slotgate/slotgate/impl/slot"
)

// PresenceState is what the pattern does to one key.
type PresenceState string

const (
	PresenceSet     PresenceState = "present" // SET PX long TTL
	PresenceNever   PresenceState = "never"   // never written
	PresenceCleared PresenceState = "cleared" // written, then DEL (a clean leave)
	PresenceExpired PresenceState = "expired" // written with a short TTL that elapses
)

// PresencePattern is a known set of presence keys spread over every slot:
// which are present (with which value) and which are nil, from
// acknowledged writes only.
type PresencePattern struct {
	Community string
	Keys      []string
	Want      map[string]history.PresenceWant
	States    map[PresenceState]int
	// Outcomes are the writes' loud results.
	Outcomes []history.OpOutcome
}

// PresenceLayout sizes a pattern.
type PresenceLayout struct {
	Community string
	Keys      int
	// ShortTTL is the TTL of the keys meant to expire before any read.
	ShortTTL time.Duration
	// TTL is the store's TTL for the present keys and Clock the scenario's
	// clock: with both, each present key's want carries when it may expire
	// (history.PresenceWant.ExpiresAt), so a run slow enough to outlast the
	// TTL is not judged as reading nils where values were due.
	TTL   time.Duration
	Clock *Clock
	// Pinned are extra keys forced into given slots, half present and half
	// never written, so a slot moved mid-read holds a mixed group (the case
	// where a migrating slot answers TRYAGAIN).
	Pinned  map[int]int
	Workers int
}

// WritePresence writes a pattern: ~55% present, ~15% never written, ~15%
// cleared, ~15% expired. It waits until the short TTL has elapsed for every
// expiring key, so they read nil deterministically.
func WritePresence(ctx context.Context, s *presence.Store, rng *rand.Rand, l PresenceLayout) PresencePattern {
	p := PresencePattern{Community: l.Community, Want: map[string]history.PresenceWant{}, States: map[PresenceState]int{}}
	type job struct {
		pubkey, value string
		state         PresenceState
	}
	var jobs []job
	add := func(pubkey string, st PresenceState) {
		v := fmt.Sprintf("online:%x", rng.Uint64())
		jobs = append(jobs, job{pubkey, v, st})
		p.Keys = append(p.Keys, presence.Key(l.Community, pubkey))
	}
	for i := range l.Keys {
		st := PresenceSet
		switch r := rng.IntN(100); {
		case r < 15:
			st = PresenceNever
		case r < 30:
			st = PresenceCleared
		case r < 45:
			st = PresenceExpired
		}
		add(fmt.Sprintf("pk%d-%x", i, rng.Uint32()), st)
	}
	for s, n := range l.Pinned {
		for i := range n {
			st := PresenceSet
			if i%2 == 1 {
				st = PresenceNever
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
				w := history.PresenceWant{}
				var err error
				var op string
				switch j.state {
				case PresenceSet:
					expires := time.Duration(0)
					if l.TTL > 0 && l.Clock != nil {
						expires = l.Clock.Now() + l.TTL // the server sets the TTL on receipt, after this
					}
					op, err = "set "+k, s.Set(ctx, l.Community, j.pubkey, j.value)
					w = history.PresenceWant{Present: true, Value: j.value, ExpiresAt: expires}
				case PresenceCleared:
					if op, err = "set "+k, s.Set(ctx, l.Community, j.pubkey, j.value); err == nil {
						op, err = "clear "+k, s.Clear(ctx, l.Community, j.pubkey)
					}
				case PresenceExpired:
					op, err = "set short "+k, s.SetTTL(ctx, l.Community, j.pubkey, j.value, l.ShortTTL)
					mu.Lock()
					lastExpiring = time.Now()
					mu.Unlock()
				}
				w.Unknown = err != nil
				o := history.OpOutcome{Op: op, ErrKind: ErrKind(err)}
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

// PresenceReader issues bulk reads and records them.
type PresenceReader struct {
	Store *presence.Store
	Clock *Clock
	mu    sync.Mutex
	reads []history.PresenceRead
}

// Read runs one bulk read of keys and records it.
func (r *PresenceReader) Read(ctx context.Context, keys []string) {
	rd := history.PresenceRead{Keys: keys, Call: r.Clock.Now()}
	vals, err := r.Store.Bulk(ctx, keys)
	rd.Return = r.Clock.Now()
	if err != nil {
		rd.ErrKind, rd.Err = ErrKind(err), err.Error()
	}
	for _, v := range vals {
		rd.Got = append(rd.Got, history.PresenceGot{Present: v.Present, Value: v.Val})
	}
	recordOp(ctx, opRecord{client: "presence-reader", kind: "bulk-read", slot: -1, start: rd.Call, end: rd.Return}, err)
	r.mu.Lock()
	r.reads = append(r.reads, rd)
	r.mu.Unlock()
}

// Reads returns a copy of the recorded reads.
func (r *PresenceReader) Reads() []history.PresenceRead {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]history.PresenceRead(nil), r.reads...)
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
