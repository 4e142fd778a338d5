package workload

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures/fixturestest"
	"github.com/slotgate/slotgate/impl/client/clienttest"
	"github.com/slotgate/slotgate/impl/presence"
	"github.com/slotgate/slotgate/traffic"
)

// Write writes the pattern it says it wrote: present keys with
// their values, the rest nil; the reader records each bulk read in order.
func TestWriteAndRead(t *testing.T) {
	pool := clienttest.Standalone(t, fixturestest.Get(t, server))
	ctx := t.Context()
	store := presence.New(pool, presence.Options{})
	p := Write(ctx, store, rand.New(rand.NewPCG(5, 6)), Layout{Community: "tt-pres-" + uniq(), Keys: 40, ShortTTL: 30 * time.Millisecond, Pinned: map[int]int{100: 2}, Workers: 3})
	if len(p.Keys) != 42 || len(p.Want) != 42 {
		t.Fatalf("%d keys, %d wants, want 42", len(p.Keys), len(p.Want))
	}
	n := 0
	for _, c := range p.States {
		n += c
	}
	if n != 42 || p.States[Set] == 0 || p.States[Never] == 0 || p.States[Cleared] == 0 || p.States[Expired] == 0 {
		t.Fatalf("states %v", p.States)
	}
	// One loud outcome per written key (a cleared key's is its clear).
	if want := p.States[Set] + p.States[Expired] + p.States[Cleared]; len(p.Outcomes) != want {
		t.Errorf("%d write outcomes, want %d", len(p.Outcomes), want)
	}
	r := &Reader{Store: store, Clock: traffic.NewClock()}
	r.Read(ctx, p.Keys)
	reads := r.Reads()
	if len(reads) != 1 || len(reads[0].Got) != len(p.Keys) || reads[0].Err != "" {
		t.Fatalf("reads %+v", reads)
	}
	present := 0
	for i, k := range p.Keys {
		want, got := p.Want[k], reads[0].Got[i]
		if want.Present != got.Present || want.Value != got.Value {
			t.Errorf("%s: wrote %+v, read %+v", k, want, got)
		}
		if want.Present {
			present++
		}
	}
	if present != p.States[Set] {
		t.Errorf("%d present keys, states say %d", present, p.States[Set])
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	r.Read(ctx2, p.Keys[:3])
	if rd := r.Reads()[1]; rd.ErrKind != "network" || rd.Err == "" {
		t.Errorf("cancelled read recorded as %+v", rd)
	}
}
