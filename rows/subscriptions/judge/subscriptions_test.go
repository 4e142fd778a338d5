package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// subHistory publishes n messages on topic t every 10 ms, all delivered 1 ms
// later, with one fault at [300 ms, 350 ms] that the client reports healed
// at 400 ms.
func subHistory(n int) history.SubscriptionHistory {
	const t = "buzz:a:global"
	ms := time.Millisecond
	h := history.SubscriptionHistory{
		Held:   []history.SubInterval{{Sub: t, From: 0}},
		Faults: []history.SubFault{{Name: "kill", Start: 300 * ms, End: 350 * ms}},
		Events: []history.SubEvent{{At: 400 * ms, Sub: t, Kind: "resubscribed"}},
		End:    time.Duration(n+10) * 10 * ms,
	}
	for i := range n {
		sent := time.Duration(i+1) * 10 * ms
		h.Publishes = append(h.Publishes, history.SubPublish{Publisher: 0, Seq: int64(i + 1), Channel: t, Sub: t, Sent: sent, Done: sent + ms/2, Receivers: 1})
		if sent >= 300*ms && sent < 400*ms { // lost in the outage
			continue
		}
		h.Deliveries = append(h.Deliveries, history.SubDelivery{Publisher: 0, Seq: int64(i + 1), Channel: t, Sub: t, At: sent + ms})
	}
	return h
}

func TestSubscriptionsDelivered(t *testing.T) {
	h := subHistory(100)
	if r := subscriptionsDelivered(h, 50); r.Status != check.Pass {
		t.Fatalf("loss inside the window: %s %s", r.Status, r.Message)
	}
	if st := AnalyzeSubscriptions(h); st.LostInside != 10 || st.LostOutside != 0 {
		t.Errorf("lost inside %d outside %d, want 10 and 0", st.LostInside, st.LostOutside)
	}

	lossAfter := subHistory(100)
	lossAfter.Deliveries = lossAfter.Deliveries[:len(lossAfter.Deliveries)-1]
	if r := subscriptionsDelivered(lossAfter, 50); r.Status != check.Fail {
		t.Errorf("loss after healthy: %s %s", r.Status, r.Message)
	}

	neverHealed := subHistory(100) // dropped, never recovered: open window, not silent
	neverHealed.Events = []history.SubEvent{{At: 320 * time.Millisecond, Sub: "buzz:a:global", Kind: "dropped"}}
	neverHealed.Deliveries = neverHealed.Deliveries[:29]
	if st := AnalyzeSubscriptions(neverHealed); st.LostOutside != 0 {
		t.Errorf("a subscription the client reports recovering lost %d outside windows", st.LostOutside)
	}
	neverHealed.Recovering = []string{"buzz:a:global"}
	if r := subscriptionErrors(neverHealed, 1); r.Status != check.Fail {
		t.Errorf("left recovering: errors checker said %s", r.Status)
	}

	dup := subHistory(100)
	dup.Deliveries = append(dup.Deliveries, dup.Deliveries[3])
	if r := subscriptionsDelivered(dup, 50); r.Status != check.Fail {
		t.Errorf("duplicate: %s %s", r.Status, r.Message)
	}

	// Dropped in the first fault, healed only during the second: the
	// first window closes at that heal, so a loss after the second
	// fault's window is still outside every window.
	lateHeal := subHistory(100)
	ms := time.Millisecond
	lateHeal.Faults = append(lateHeal.Faults, history.SubFault{Name: "reset", Start: 380 * ms, End: 390 * ms})
	lateHeal.Events = []history.SubEvent{{At: 320 * ms, Sub: "buzz:a:global", Kind: "dropped"}, {At: 400 * ms, Sub: "buzz:a:global", Kind: "resubscribed"}}
	lateHeal.Deliveries = lateHeal.Deliveries[:len(lateHeal.Deliveries)-1]
	if r := subscriptionsDelivered(lateHeal, 50); r.Status != check.Fail {
		t.Errorf("loss after a heal that came during the next fault: %s %s", r.Status, r.Message)
	}

	// Acknowledged 1 ms before the application unsubscribed and never
	// delivered: in flight when the topic was let go, not a loss. The same
	// message acked long before the unsubscribe is one.
	inFlight := subHistory(100)
	last := inFlight.Publishes[len(inFlight.Publishes)-1]
	inFlight.Held = []history.SubInterval{{Sub: "buzz:a:global", From: 0, To: last.Done + ms}}
	inFlight.Deliveries = inFlight.Deliveries[:len(inFlight.Deliveries)-1]
	if st := AnalyzeSubscriptions(inFlight); st.LostOutside != 0 {
		t.Errorf("a message in flight at the unsubscribe counted lost: %d", st.LostOutside)
	}
	inFlight.Held[0].To = last.Done + 500*ms
	if st := AnalyzeSubscriptions(inFlight); st.LostOutside != 1 {
		t.Errorf("a message acked 500 ms before the unsubscribe and never delivered: lost outside %d, want 1", st.LostOutside)
	}

	noRecovery := subHistory(35) // nothing sent after the window closed
	if r := subscriptionsDelivered(noRecovery, 1); r.Status != check.Unknown {
		t.Errorf("no delivery after the fault: %s %s", r.Status, r.Message)
	}
}

func TestSilentOnly(t *testing.T) {
	f, p := check.Result{Status: check.Fail}, check.Result{Status: check.Pass}
	if SilentOnly(f, p).Status != check.Fail || SilentOnly(f, f).Status != check.Unknown || SilentOnly(p, p).Status != check.Unknown {
		t.Error("SilentOnly: fails only when silent failed and loud passed")
	}
}

// TestSubscriptionsMatchRoute: a delivery is matched by channel,
// subscription, publisher and seq; one on the wrong channel or to the wrong
// subscription is silently wrong and does not deliver the message.
func TestSubscriptionsMatchRoute(t *testing.T) {
	for _, tc := range []struct {
		name         string
		channel, sub string
	}{
		{"wrong subscription", "buzz:a:global", "buzz:b:global"},
		{"wrong channel", "buzz:b:global", "buzz:a:global"},
		{"pattern that matches too much", "buzz:a:global", "buzz:*"},
	} {
		h := subHistory(100)
		h.Deliveries[40].Channel, h.Deliveries[40].Sub = tc.channel, tc.sub
		st := AnalyzeSubscriptions(h)
		if st.Misrouted != 1 || st.LostOutside != 1 {
			t.Errorf("%s: misrouted %d lost outside %d, want 1 and 1", tc.name, st.Misrouted, st.LostOutside)
		}
		if r := subscriptionsDelivered(h, 50); r.Status != check.Fail {
			t.Errorf("%s: %s %s", tc.name, r.Status, r.Message)
		}
		// Delivered correctly as well: still a wrong delivery.
		h.Deliveries = append(h.Deliveries, history.SubDelivery{Publisher: 0, Seq: h.Deliveries[40].Seq, Channel: "buzz:a:global", Sub: "buzz:a:global", At: h.End})
		if r := subscriptionsDelivered(h, 50); r.Status != check.Fail {
			t.Errorf("%s, also delivered right: %s %s", tc.name, r.Status, r.Message)
		}
	}
}

// TestSubscriptionBounds: the in-flight allowance is SubInFlightBound
// whatever the run's own latency, and a window the client never closes
// closes SubRecoveryBound after the fault ended.
func TestSubscriptionBounds(t *testing.T) {
	ms := time.Millisecond
	// A consumer 2 s behind: the message acked 1 s before the fault and
	// lost in it is not excused by the run's worst latency.
	slow := subHistory(100)
	for i := range slow.Deliveries {
		slow.Deliveries[i].At += 2 * time.Second
	}
	var kept []history.SubDelivery
	for _, d := range slow.Deliveries {
		if d.Seq != 20 { // sent at 200 ms, acked 100 ms before the fault: excused
			kept = append(kept, d)
		}
	}
	slow.Deliveries = kept
	if st := AnalyzeSubscriptions(slow); st.LostOutside != 0 || st.InFlightSlack < 2*time.Second {
		t.Errorf("within the in-flight bound: lost outside %d, slack %v", st.LostOutside, st.InFlightSlack)
	}
	kept = nil
	for _, d := range slow.Deliveries {
		if d.Seq != 2 { // acked 280 ms before the fault
			kept = append(kept, d)
		}
	}
	slow.Deliveries = kept
	if st := AnalyzeSubscriptions(slow); st.LostOutside != 1 {
		t.Errorf("acked %v before the fault: lost outside %d, want 1", 300*ms-20*ms-ms/2, st.LostOutside)
	}

	// Dropped, never reported healed: the window closes at end+bound.
	long := subHistory(1000) // 10 s of traffic
	long.Events = []history.SubEvent{{At: 320 * ms, Sub: "buzz:a:global", Kind: "dropped"}}
	long.Deliveries = long.Deliveries[:29]
	st := AnalyzeSubscriptions(long)
	wantOutside := 0
	for _, p := range long.Publishes {
		if p.Sent > 350*ms+SubRecoveryBound {
			wantOutside++
		}
	}
	if st.LostOutside != wantOutside || wantOutside == 0 {
		t.Errorf("never healed: lost outside %d, want %d (sent after the recovery bound)", st.LostOutside, wantOutside)
	}
}

// TestSubscriptionsReleased: a delivery to a subscription the application
// had released (beyond the in-flight bound) is silently wrong.
func TestSubscriptionsReleased(t *testing.T) {
	h := subHistory(100)
	last := h.Publishes[len(h.Publishes)-1]
	h.Held[0].To = last.Done - 200*time.Millisecond
	if st := AnalyzeSubscriptions(h); st.Released != 0 {
		t.Errorf("deliveries within the in-flight bound of the unsubscribe: released %d", st.Released)
	}
	h.Held[0].To = last.Done - 600*time.Millisecond
	if st := AnalyzeSubscriptions(h); st.Released == 0 {
		t.Error("deliveries 350 ms and more after the unsubscribe not counted")
	}
	if r := subscriptionsDelivered(h, 20); r.Status != check.Fail {
		t.Errorf("released: %s %s", r.Status, r.Message)
	}
}

// A drop the client reported stays loud until its reported heal, even one
// later than SubRecoveryBound after the fault: slow, never silent.
func TestSubscriptionsSlowReportedRecoveryIsNotSilent(t *testing.T) {
	h := subHistory(1500) // 10 ms apart: 15 s of messages
	ms := time.Millisecond
	h.Events = []history.SubEvent{{At: 310 * ms, Sub: "buzz:a:global", Kind: "dropped"}, {At: 7400 * ms, Sub: "buzz:a:global", Kind: "recovered"}}
	var kept []history.SubDelivery
	for _, d := range h.Deliveries {
		if d.At < 300*ms || d.At > 7400*ms {
			kept = append(kept, d)
		}
	}
	h.Deliveries = kept
	if st := AnalyzeSubscriptions(h); st.LostOutside != 0 {
		t.Errorf("a reported drop healed 7 s after the fault: %d lost outside windows, want 0", st.LostOutside)
	}
	// The same loss with no drop reported is silent past the bound.
	h.Events = []history.SubEvent{{At: 7400 * ms, Sub: "buzz:a:global", Kind: "recovered"}}
	if st := AnalyzeSubscriptions(h); st.LostOutside == 0 {
		t.Error("a heal 7 s after the fault with no reported drop excused every loss")
	}
}

// A delivery after the subscribe was requested but before it returned is
// not one to an unheld subscription.
func TestSubscriptionsDeliveryBeforeSubscribeReturned(t *testing.T) {
	h := subHistory(100)
	ms := time.Millisecond
	h.Held[0].From = 600 * ms // the call returned late…
	if st := AnalyzeSubscriptions(h); st.Released == 0 {
		t.Fatal("deliveries 600 ms before the confirmation were not flagged without the request time")
	}
	h.Held[0].Requested = 5 * ms // …but was asked for at the start
	if st := AnalyzeSubscriptions(h); st.Released != 0 {
		t.Errorf("%d deliveries after the request counted as to an unheld subscription", st.Released)
	}
}

// The errors checker's premise: a run with too few publishes proves
// nothing, however clean.
func TestSubscriptionErrorsPremise(t *testing.T) {
	h := subHistory(100)
	if r := subscriptionErrors(h, 100); r.Status != check.Pass {
		t.Fatalf("clean run of 100 publishes: %s %s", r.Status, r.Message)
	}
	if r := subscriptionErrors(h, 101); r.Status != check.Unknown {
		t.Errorf("too few publishes: %s %s", r.Status, r.Message)
	}
}

// TestPublishErrorWindows: a publish error is the fault's until the first
// acknowledged publish on its topic after the fault ended, but never before
// the stale-connection bound (a pooled connection the fault broke fails at
// its first use) and never after the recovery bound.
func TestPublishErrorWindows(t *testing.T) {
	ms := time.Millisecond
	failAt := func(h history.SubscriptionHistory, at time.Duration) history.SubscriptionHistory {
		for i := range h.Publishes {
			if h.Publishes[i].Sent == at {
				h.Publishes[i].ErrKind, h.Publishes[i].Err = "conn", "EOF"
			}
		}
		return h
	}
	cases := []struct {
		name    string
		at      time.Duration // a publish sent then fails; the fault is [300, 350] ms
		outside int
	}{
		{"during the fault", 320 * ms, 0},
		{"after an acknowledged publish, inside the stale-connection floor", 350*ms + SubStaleConnBound - 10*ms, 0},
		{"after an acknowledged publish and the floor", 350*ms + SubStaleConnBound + 20*ms, 1},
		{"long after the fault", 990 * ms, 1},
	}
	for _, tc := range cases {
		h := failAt(subHistory(100), tc.at)
		if st := AnalyzeSubscriptions(h); st.PublishErrorsOutside != tc.outside || st.PublishErrorsInside != 1-tc.outside {
			t.Errorf("%s: publish errors inside %d outside %d, want outside %d", tc.name, st.PublishErrorsInside, st.PublishErrorsOutside, tc.outside)
		}
		want := check.Pass
		if tc.outside > 0 {
			want = check.Fail
		}
		if r := subscriptionErrors(h, 1); r.Status != want {
			t.Errorf("%s: errors checker said %s (%s), want %s", tc.name, r.Status, r.Message, want)
		}
	}

	// No fault at all: every error is outside (the single-node control).
	h := failAt(subHistory(100), 500*ms)
	h.Faults, h.Events = nil, nil
	if r := subscriptionErrors(h, 1); r.Status != check.Fail {
		t.Errorf("an error with no fault: errors checker said %s", r.Status)
	}
}
