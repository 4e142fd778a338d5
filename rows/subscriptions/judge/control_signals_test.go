package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// controlHistory is subHistory on the cache-invalidate pattern: ten signals
// lost in the reconnect gap, the pattern restored at 400 ms, and (resync
// true) a resync beginning at 401 ms.
func controlHistory(resync bool) history.SubscriptionHistory {
	const p = "buzz:*:cache-invalidate"
	h := subHistory(100)
	h.Patterns = []string{p}
	h.Held = []history.SubInterval{{Sub: p}}
	h.Events = []history.SubEvent{{At: 400 * time.Millisecond, Sub: p, Kind: "resubscribed"}}
	if resync {
		h.Events = append(h.Events, history.SubEvent{At: 401 * time.Millisecond, Sub: p, Kind: "resynced"})
	}
	for i := range h.Publishes {
		h.Publishes[i].Channel, h.Publishes[i].Sub = "buzz:a:cache-invalidate", p
	}
	for i := range h.Deliveries {
		h.Deliveries[i].Channel, h.Deliveries[i].Sub = "buzz:a:cache-invalidate", p
	}
	return h
}

func TestControlSignalsCovered(t *testing.T) {
	if r := controlSignalsCovered(controlHistory(true), 50); r.Status != check.Pass {
		t.Fatalf("gap covered by the resync: %s %s", r.Status, r.Message)
	}
	// The bad relay: resubscribed, never resynced; the outage window does
	// not excuse the ten lost signals.
	if r := controlSignalsCovered(controlHistory(false), 50); r.Status != check.Fail {
		t.Errorf("no resync after the gap: %s %s", r.Status, r.Message)
	}
	// A resync that began before a lost signal was acknowledged covers
	// nothing after it.
	early := controlHistory(true)
	early.Events[1].At = 350 * time.Millisecond
	if r := controlSignalsCovered(early, 50); r.Status != check.Fail {
		t.Errorf("resync before the last lost signal: %s %s", r.Status, r.Message)
	}

	// Premises.
	noGap := controlHistory(true)
	noGap.Deliveries = nil
	for _, p := range noGap.Publishes {
		noGap.Deliveries = append(noGap.Deliveries, history.SubDelivery{Publisher: p.Publisher, Seq: p.Seq, Channel: p.Channel, Sub: p.Sub, At: p.Done})
	}
	if r := controlSignalsCovered(noGap, 50); r.Status != check.Pass {
		t.Errorf("nothing lost: %s %s", r.Status, r.Message)
	}
	unreached := controlHistory(true)
	unreached.Events = unreached.Events[1:] // no restoration: the fault missed the pattern
	if r := controlSignalsCovered(unreached, 50); r.Status != check.Unknown {
		t.Errorf("fault did not reach the pattern subscription: %s %s", r.Status, r.Message)
	}
	if r := controlSignalsCovered(controlHistory(true), 500); r.Status != check.Unknown {
		t.Errorf("too few signals: %s %s", r.Status, r.Message)
	}
	if r := controlSignalsCovered(subHistory(100), 1); r.Status != check.Unknown {
		t.Errorf("no pattern subscription: %s %s", r.Status, r.Message)
	}
}

func spreadRun(tag bool) TopicSpreadRun {
	run := TopicSpreadRun{Shards: 3, Published: 20, Delivered: 20}
	for _, c := range []string{"alpha", "bravo"} {
		comm := c
		if tag {
			comm = "{" + c + "}"
		}
		for i := range 9 {
			shard := i % 3
			if tag {
				shard = 1
			}
			run.Topics = append(run.Topics, TopicPlacement{Kind: "channel", Community: c, Topic: "buzz:" + comm + ":channel:" + string(rune('a'+i)), Shard: shard})
		}
		run.Topics = append(run.Topics, TopicPlacement{Kind: "global", Community: c, Topic: "buzz:" + comm + ":global", Shard: 2})
		for s := range 3 {
			calls := int64(3)
			if tag && s != 1 {
				calls = 0
			}
			run.Loads = append(run.Loads, ShardLoad{Community: c, Shard: s, Calls: calls})
		}
	}
	return run
}

func TestTopicsSpread(t *testing.T) {
	if r := topicsSpread(spreadRun(false), 8); r.Status != check.Pass {
		t.Fatalf("untagged, spread: %s %s", r.Status, r.Message)
	}
	if r := topicsSpread(spreadRun(true), 8); r.Status != check.Fail {
		t.Errorf("{community}-tagged: %s %s", r.Status, r.Message)
	}
	oneShard := spreadRun(false)
	oneShard.Shards = 1
	if r := topicsSpread(oneShard, 8); r.Status != check.Unknown {
		t.Errorf("one shard: %s %s", r.Status, r.Message)
	}
	lost := spreadRun(true)
	lost.Delivered = 19 // the workload broke: not a silent spread failure
	if r := topicsSpread(lost, 8); r.Status != check.Unknown {
		t.Errorf("undelivered: %s %s", r.Status, r.Message)
	}
	unplaced := spreadRun(false)
	unplaced.Topics[0].Shard = -1
	if r := topicsSpread(unplaced, 8); r.Status != check.Unknown {
		t.Errorf("unplaced topic: %s %s", r.Status, r.Message)
	}
	if r := topicsSpread(spreadRun(false), 20); r.Status != check.Unknown {
		t.Errorf("too few topics: %s %s", r.Status, r.Message)
	}
	// Untagged topics that all landed on one shard: a finding with enough
	// topics, chance with too few (the premise, never a fail).
	pinned := spreadRun(false)
	for i := range pinned.Topics {
		pinned.Topics[i].Shard = 1
	}
	if r := topicsSpread(pinned, 8); r.Status != check.Fail {
		t.Errorf("untagged, pinned: %s %s", r.Status, r.Message)
	}
	if r := topicsSpread(pinned, 20); r.Status != check.Unknown {
		t.Errorf("pinned with too few topics to judge: %s %s", r.Status, r.Message)
	}
	noGlobal := spreadRun(false)
	noGlobal.Topics = noGlobal.Topics[:9]
	if r := topicsSpread(noGlobal, 8); r.Status != check.Unknown {
		t.Errorf("a topic kind missing: %s %s", r.Status, r.Message)
	}
}
