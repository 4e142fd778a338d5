package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

func TestMarconiNoSubscribe(t *testing.T) {
	c := SubscribeCount{Nodes: []string{"n1", "n2", "n3"}, ClusterNodes: 3, Attached: 10, MinAttached: 5,
		Commands: map[string]int64{}, Subscribed: map[string]int{"n1": 0}}
	if r := marconiNoSubscribe(c); r.Status != check.Pass {
		t.Fatalf("%s: %s", r.Status, r.Message)
	}
	c.Commands["n2:subscribe"] = 10
	if r := marconiNoSubscribe(c); r.Status != check.Fail {
		t.Fatalf("subscribes: %s", r.Status)
	}
	c.Commands = nil
	c.Subscribed["n3"] = 1
	if r := marconiNoSubscribe(c); r.Status != check.Fail {
		t.Fatalf("open subscription: %s", r.Status)
	}
	c.Subscribed["n3"] = 0
	c.Nodes = c.Nodes[:2]
	if r := marconiNoSubscribe(c); r.Status != check.Unknown {
		t.Fatalf("two of three nodes: %s", r.Status)
	}
}

func TestMarconiQueueDefaults(t *testing.T) {
	ok := QueueDefaults{MaxBytes: 512 << 20, DepthAtOverflow: 50_000, LostFirst: 1, KeptNewest: true,
		AgeBelow: 599 * time.Second, AgeAbove: 601 * time.Second, SurvivedBelow: true, EjectedAbove: true}
	if r := marconiQueueDefaults(ok); r.Status != check.Pass {
		t.Fatalf("%s: %s", r.Status, r.Message)
	}
	for name, edit := range map[string]func(*QueueDefaults){
		"entries":  func(q *QueueDefaults) { q.DepthAtOverflow = 10_000 },
		"bytes":    func(q *QueueDefaults) { q.MaxBytes = 64 << 20 },
		"policy":   func(q *QueueDefaults) { q.LostFirst, q.KeptNewest = 50_001, false },
		"max age":  func(q *QueueDefaults) { q.EjectedAbove = false },
		"too soon": func(q *QueueDefaults) { q.SurvivedBelow = false },
	} {
		q := ok
		edit(&q)
		if r := marconiQueueDefaults(q); r.Status != check.Fail {
			t.Errorf("%s: %s", name, r.Status)
		}
	}
}

func TestMarconiEngagement(t *testing.T) {
	ok := Engagement{Receivers: 4, Stamps: 4, HookCalls: 4, Advanced: 4, Attached: 4, Sends: 8, Pushed: 8}
	if r := marconiEngagement(ok); r.Status != check.Pass {
		t.Fatalf("%s: %s", r.Status, r.Message)
	}
	bad := ok
	bad.Attached, bad.Pushed = 0, 0
	if r := marconiEngagement(bad); r.Status != check.Fail {
		t.Fatalf("invalidated: %s", r.Status)
	}
	bad = ok
	bad.HookCalls = 0
	if r := marconiEngagement(bad); r.Status != check.Fail {
		t.Fatalf("no hook: %s", r.Status)
	}
	if r := marconiEngagement(Engagement{}); r.Status != check.Unknown {
		t.Fatalf("empty: %s", r.Status)
	}
}
