package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

// pendingTTL: TTL 1 s; o1 queued at 0 and drained at 1.5 s (gone, counted
// expired), f1 queued at 2 s and drained at 2.1 s (returned).
func pendingTTL() PendingTTLHistory {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	return PendingTTLHistory{
		Tenant: "t", TTL: time.Second,
		Sends: []PendingSend{
			{SignalID: "o1", Recipient: "t/p/old", Outcome: "queued_offline", Start: 0, Done: ms(2)},
			{SignalID: "f1", Recipient: "t/p/new", Outcome: "queued_offline", Start: ms(2000), Done: ms(2002)},
		},
		Drains: []PendingDrain{
			{Recipient: "t/p/old", Start: ms(1500), Done: ms(1502)},
			{Recipient: "t/p/new", Start: ms(2100), Done: ms(2102), SignalIDs: []string{"f1"}},
		},
		Expired: 1, ScrapedAt: ms(3500),
	}
}

func TestMarconiPendingTTL(t *testing.T) {
	if r := marconiPendingTTL(pendingTTL()); r.Status != check.Pass {
		t.Fatalf("good: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	never := pendingTTL() // the TTL never fires: o1 drained past it
	never.Drains[0].SignalIDs = []string{"o1"}
	never.Expired = 0
	if r := marconiPendingTTL(never); r.Status != check.Fail || !strings.Contains(r.Message, "past the TTL") {
		t.Errorf("never expires: %s %s", r.Status, r.Message)
	}
	uncounted := pendingTTL()
	uncounted.Expired = 0
	if r := marconiPendingTTL(uncounted); r.Status != check.Fail || !strings.Contains(r.Message, "marconi_pending_expired_total") {
		t.Errorf("expiry uncounted: %s %s", r.Status, r.Message)
	}
	early := pendingTTL() // dropped before its TTL
	early.Drains[1].SignalIDs = nil
	early.Expired = 2
	if r := marconiPendingTTL(early); r.Status != check.Fail || !strings.Contains(r.Message, "within the TTL") {
		t.Errorf("expired early: %s %s", r.Status, r.Message)
	}
}

// TestMarconiPendingTTLPremises: a failed drain, a scrape before every
// signal could expire, or a run without a stale or a fresh drain is no
// evidence either way.
func TestMarconiPendingTTLPremises(t *testing.T) {
	failed := pendingTTL()
	failed.Drains[0].Err = "connection refused"
	failed.Expired = 7
	if r := marconiPendingTTL(failed); r.Status != check.Unknown {
		t.Errorf("failed drain: %s %s", r.Status, r.Message)
	}
	soon := pendingTTL()
	soon.ScrapedAt = 2500 * time.Millisecond
	if r := marconiPendingTTL(soon); r.Status != check.Unknown {
		t.Errorf("early scrape: %s %s", r.Status, r.Message)
	}
	noStale := pendingTTL()
	noStale.Drains = noStale.Drains[1:]
	if r := marconiPendingTTL(noStale); r.Status != check.Unknown {
		t.Errorf("no stale drain: %s %s", r.Status, r.Message)
	}
	// A drain past the TTL of a signal an earlier drain already returned:
	// nothing sat pending past its TTL, so nothing was judged.
	redrained := pendingTTL()
	redrained.Sends, redrained.Expired = redrained.Sends[1:], 0
	redrained.Drains = append(redrained.Drains[1:], PendingDrain{Recipient: "t/p/new", Start: 3200 * time.Millisecond, Done: 3202 * time.Millisecond})
	redrained.ScrapedAt = 4 * time.Second
	if r := marconiPendingTTL(redrained); r.Status != check.Unknown {
		t.Errorf("a second drain of a returned signal counted as a stale pair: %s %s", r.Status, r.Message)
	}
}
