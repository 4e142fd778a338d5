package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// Marconi pending-signal TTL checker (spec 002 §3.5: "per-recipient queue
// of undelivered signals + TTL", drained by prism_signals_pending). The
// harness queues signals for offline recipients, lets some outlive the
// TTL, drains, and scrapes marconi_pending_expired_total{tenant}.

// PendingSend is one send the harness made to an offline recipient.
type PendingSend struct {
	SignalID, Recipient string
	// Outcome is the answer's outcome; only queued_offline is judged.
	Outcome     string
	Start, Done time.Duration
}

// PendingDrain is one prism_signals_pending call.
type PendingDrain struct {
	Recipient   string
	Start, Done time.Duration
	SignalIDs   []string
	Err         string
}

// PendingTTLHistory is one run of the TTL workload on one tenant.
type PendingTTLHistory struct {
	Tenant string
	TTL    time.Duration
	Sends  []PendingSend
	Drains []PendingDrain
	// Expired is marconi_pending_expired_total{tenant} scraped at
	// ScrapedAt.
	Expired   float64
	ScrapedAt time.Duration
}

// marconiPendingTTL: a signal queued offline is returned by a drain
// within its TTL and never after it; every accepted signal no drain
// returned has expired by the final scrape, and the expiry counter says
// exactly how many (accepted − returned). Only clear cases are judged: a
// drain that began more than TTL after a send was answered must not
// return it (it was queued before the answer); a drain that began after
// the answer and ended less than TTL after the send began must return
// it. Premises: no drain failed, the scrape came at least TTL after the
// last accepted send, and both a clearly expired and a clearly fresh
// signal were drained.
func marconiPendingTTL(h PendingTTLHistory) check.Result {
	const name = "marconi-pending-ttl"
	accepted := map[string]PendingSend{}
	var lastDone time.Duration
	for _, s := range h.Sends {
		if s.Outcome == "queued_offline" {
			accepted[s.SignalID] = s
			lastDone = max(lastDone, s.Done)
		}
	}
	for _, d := range h.Drains {
		if d.Err != "" {
			return check.Unknownf(name, "drain of %s failed (%s): what it would have returned is unknown", d.Recipient, d.Err)
		}
	}
	if h.TTL <= 0 || len(accepted) == 0 {
		return check.Unknownf(name, "%d signals queued offline, TTL %v: nothing to judge", len(accepted), h.TTL)
	}
	if h.ScrapedAt < lastDone+h.TTL {
		return check.Unknownf(name, "scraped %v after the last queued signal, under the TTL %v: not every signal could have expired", h.ScrapedAt-lastDone, h.TTL)
	}
	var bad []string
	returned := map[string]int{}
	stale, fresh := 0, 0
	for _, d := range h.Drains {
		got := map[string]bool{}
		for _, id := range d.SignalIDs {
			got[id] = true
			returned[id]++
			s, ok := accepted[id]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("drain of %s returned %s, which no send queued offline", d.Recipient, id))
			case s.Recipient != d.Recipient:
				bad = append(bad, fmt.Sprintf("drain of %s returned %s, addressed to %s", d.Recipient, id, s.Recipient))
			case d.Start > s.Done+h.TTL:
				bad = append(bad, fmt.Sprintf("%s to %s returned %v after its send was answered, past the TTL %v", id, d.Recipient, (d.Start-s.Done).Round(time.Millisecond), h.TTL))
			}
		}
		for id, s := range accepted {
			if s.Recipient != d.Recipient || d.Start <= s.Done {
				continue
			}
			earlier := returned[id] // by the drains before this one
			if got[id] {
				earlier--
			}
			switch {
			case d.Start > s.Done+h.TTL:
				// A pair judges the TTL only when the signal was still
				// pending: one an earlier drain returned proves nothing.
				if earlier == 0 {
					stale++
				}
			case d.Done < s.Start+h.TTL:
				fresh++
				if !got[id] && returned[id] == 0 {
					bad = append(bad, fmt.Sprintf("%s to %s not returned by a drain %v after its send began, within the TTL %v", id, d.Recipient, (d.Done-s.Start).Round(time.Millisecond), h.TTL))
				}
			}
		}
	}
	for id, n := range returned {
		if n > 1 {
			bad = append(bad, fmt.Sprintf("%s returned by %d drains", id, n))
		}
	}
	unreturned := 0
	for id := range accepted {
		if returned[id] == 0 {
			unreturned++
		}
	}
	if float64(unreturned) != h.Expired {
		bad = append(bad, fmt.Sprintf("marconi_pending_expired_total{tenant=%q} says %.0f; %d signals accepted queued_offline were never returned and are past their TTL", h.Tenant, h.Expired, unreturned))
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return check.Failf(name, strings.Join(meshFirst(bad, 12), "\n"), "%d TTL breaks over %d queued signals (first: %s)", len(bad), len(accepted), bad[0])
	}
	if stale == 0 || fresh == 0 {
		return check.Unknownf(name, "%d drains after a signal's TTL and %d within it: need both to judge the TTL", stale, fresh)
	}
	return check.Passf(name, "%d signals queued offline: %d returned within their TTL %v, none after it (%d signal–drain pairs past the TTL, %d within it); %d expired unreturned and counted exactly in marconi_pending_expired_total",
		len(accepted), len(accepted)-unreturned, h.TTL, stale, fresh, unreturned)
}
