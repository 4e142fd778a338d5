package sizing

import (
	"context"
	"testing"
	"time"
)

// TestMeasureStructure checks only the shape of a small curve — every
// point present, counters moved where A4 says they must — never timings.
func TestMeasureStructure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const messages = 200
	curve, err := Measure(ctx, []int{1, 3}, messages, Options{Seed: 1, Idle: -1, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", curve.Table())
	if got, want := len(curve.Points), 2*len(Modes); got != want {
		t.Fatalf("curve has %d points, want %d", got, want)
	}
	for _, p := range curve.Points {
		if len(p.Nodes) != p.Shards {
			t.Errorf("%d shards %s: %d node samples", p.Shards, p.Mode, len(p.Nodes))
		}
		if p.Calls() != messages {
			t.Errorf("%d shards %s: commandstats calls moved by %d, want %d", p.Shards, p.Mode, p.Calls(), messages)
		}
		var cpu time.Duration
		for _, n := range p.Nodes {
			cpu += n.CPU
		}
		if cpu <= 0 {
			t.Errorf("%d shards %s: main-thread CPU did not move", p.Shards, p.Mode)
		}
		wantBus := int64(0)
		if p.Mode == ModeClassic {
			wantBus = int64(messages * (p.Shards - 1))
		}
		if p.BusReceived() != wantBus {
			t.Errorf("%d shards %s: bus publish received %d, want %d", p.Shards, p.Mode, p.BusReceived(), wantBus)
		}
	}
	// The topics land on every shard, so every node got client calls.
	if p, ok := curve.At(3, ModeSharded); ok {
		for _, n := range p.Nodes {
			if n.Calls == 0 {
				t.Errorf("3 shards sharded: %s got no SPUBLISH", n.Node)
			}
		}
	}
}
