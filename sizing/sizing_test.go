package sizing

import (
	"context"
	"math"
	"testing"
	"time"
)

// sample builds a burst of msgs messages where each node spent cpu (no idle share).
func sample(msgs int, send time.Duration, cpu ...time.Duration) Sample {
	s := Sample{Messages: msgs, Send: send, Elapsed: send}
	for i, c := range cpu {
		s.Nodes = append(s.Nodes, NodeSample{Node: string(rune('a' + i)), Shard: i, CPU: c, Calls: int64(msgs / len(cpu))})
	}
	return s
}

// The math: per-node, total and hottest cost; medians over repeats; ratios, the broadcast
// term and the bars — on numbers whose answers are known.
func TestCurveMath(t *testing.T) {
	ms := time.Millisecond
	// 1 shard: 1000 messages cost 10 ms → 10 µs/msg on the one node.
	one := Point{Shards: 1, Mode: ModeSharded, Samples: []Sample{
		sample(1000, time.Second, 10*ms), sample(1000, time.Second, 12*ms), sample(1000, time.Second, 11*ms)}}
	if got := one.PerNode(); got != 11*time.Microsecond {
		t.Fatalf("median per-node cost: %v, want 11µs", got)
	}
	if lo, hi := one.PerNodeRange(); lo != 10*time.Microsecond || hi != 12*time.Microsecond {
		t.Fatalf("range %v–%v", lo, hi)
	}
	// 3 shards, sharded: each node 1/3 of the work → 11/3 µs per node.
	three := Point{Shards: 3, Mode: ModeSharded, Samples: []Sample{sample(1000, time.Second, 11*ms/3, 11*ms/3, 11*ms/3)}}
	// Classic: flat — every node pays the full 11 µs (A4).
	c1 := Point{Shards: 1, Mode: ModeClassic, Samples: []Sample{sample(1000, time.Second, 11*ms)}}
	c3 := Point{Shards: 3, Mode: ModeClassic, Samples: []Sample{sample(1000, 2*time.Second, 11*ms, 11*ms, 12*ms)}}
	curve := Curve{Modes: []Mode{ModeClassic, ModeSharded}, Points: []Point{c1, one, c3, three}}
	if r := curve.Ratio(ModeSharded, 3, 1); math.Abs(r-1.0/3) > 1e-3 {
		t.Fatalf("sharded ratio %.4f, want 1/3", r)
	}
	if got := c3.Samples[0].Hottest(); got != 12*time.Microsecond {
		t.Fatalf("hottest %v", got)
	}
	if got := c3.Samples[0].Total(); got != 34*time.Microsecond {
		t.Fatalf("total %v", got)
	}
	if got := c3.AchievedRate(); got != 500 {
		t.Fatalf("achieved rate %v", got)
	}
	// Broadcast at 3: classic per-node (34/3 µs) − sharded per-node (11/3 µs).
	want := (34*time.Microsecond - 11*time.Microsecond) / 3
	if got := curve.Broadcast(3); (got - want).Abs() > time.Nanosecond {
		t.Fatalf("broadcast %v, want %v", got, want)
	}
	bars := curve.Bars()
	if len(bars) != 2 || !bars[0].Met || !bars[1].Met {
		t.Fatalf("ideal curve must meet both bars: %+v", bars)
	}
	// A sharded curve that stays flat misses the bar; classic falling as 1/n misses "flat".
	bad := Curve{Modes: curve.Modes, Points: []Point{c1, one,
		{Shards: 3, Mode: ModeSharded, Samples: []Sample{sample(1000, time.Second, 11*ms, 11*ms, 11*ms)}},
		{Shards: 3, Mode: ModeClassic, Samples: []Sample{sample(1000, time.Second, 3*ms, 3*ms, 3*ms)}}}}
	for _, b := range bad.Bars() {
		if b.Met {
			t.Errorf("bar %s met on a bad curve: %+v", b.Name, b)
		}
	}
	rep := curve.Report()
	if len(rep.Points) != 4 || len(rep.Broadcast) != 2 || rep.Broadcast[1].Shards != 3 || len(rep.Bars) != 2 {
		t.Fatalf("report model: %+v", rep)
	}
	// Idle share is subtracted, never below zero.
	if (NodeSample{CPU: ms, IdleCPU: 2 * ms}).NetCPU() != 0 {
		t.Fatal("net CPU went negative")
	}
	// Even count: the median is the mean of the middle two.
	two := Point{Samples: []Sample{sample(1000, time.Second, 10*ms), sample(1000, time.Second, 20*ms)}}
	if two.PerNode() != 15*time.Microsecond {
		t.Fatalf("even median %v", two.PerNode())
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{Shards: []int{0}}, {Rate: -1}, {Duration: time.Millisecond}, {Repeats: -2}} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("%+v: want an error", o)
		}
	}
	o, err := Options{}.withDefaults()
	if err != nil || o.Messages() != 40_000 || len(o.Shards) != 3 || o.Repeats != 3 {
		t.Fatalf("defaults: %+v %v", o, err)
	}
}

// TestMeasureStructure runs a tiny real curve (1 and 3 shards, every mode, short bursts)
// and checks only its shape — every point present, the rate reached, counters moved
// where A4 says they must — never timings.
func TestMeasureStructure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := Options{Shards: []int{1, 3}, Rate: 4000, Duration: 250 * time.Millisecond, Repeats: 2, Idle: -1, Warmup: -1, Seed: 1, Logf: t.Logf}
	began := time.Now()
	curve, err := Measure(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("measured in %v:\n%s", time.Since(began).Round(time.Millisecond), curve.Table())
	if got, want := len(curve.Points), 2*len(Modes); got != want {
		t.Fatalf("curve has %d points, want %d", got, want)
	}
	msgs := int64(o.Rate) * int64(o.Duration) / int64(time.Second)
	for _, p := range curve.Points {
		if len(p.Samples) != o.Repeats {
			t.Fatalf("%d shards %s: %d repeats", p.Shards, p.Mode, len(p.Samples))
		}
		for _, s := range p.Samples {
			if len(s.Nodes) != p.Shards {
				t.Errorf("%d shards %s: %d node samples", p.Shards, p.Mode, len(s.Nodes))
			}
			if s.Calls() != msgs || s.Errors != 0 {
				t.Errorf("%d shards %s: commandstats calls moved by %d, want %d (errors %d)", p.Shards, p.Mode, s.Calls(), msgs, s.Errors)
			}
			var cpu time.Duration
			for _, n := range s.Nodes {
				cpu += n.CPU
			}
			if cpu <= 0 {
				t.Errorf("%d shards %s: main-thread CPU did not move", p.Shards, p.Mode)
			}
			wantBus := int64(0)
			if p.Mode == ModeClassic {
				wantBus = msgs * int64(p.Shards-1)
			}
			if s.BusReceived() != wantBus {
				t.Errorf("%d shards %s: bus publish received %d, want %d", p.Shards, p.Mode, s.BusReceived(), wantBus)
			}
			// The pacing must neither run ahead of the target nor fall far behind it.
			if r := s.AchievedRate(); r > 1.1*float64(o.Rate) || r < 0.5*float64(o.Rate) {
				t.Errorf("%d shards %s: %.0f msg/s for a target of %d", p.Shards, p.Mode, r, o.Rate)
			}
		}
	}
	if p, ok := curve.At(3, ModeSharded); ok {
		for _, n := range p.Samples[0].Nodes {
			if n.Calls == 0 {
				t.Errorf("3 shards sharded: %s got no SPUBLISH", n.Node)
			}
		}
	}
}
