package judge

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// controlSignalsCovered is the must-not-miss rule for the two classic
// pattern subscriptions (spec 000 §System Model, broadcast pub/sub:
// "must-not-miss control signals (cache coherence, live bans)"; D2;
// §Failure Modes: a missed cache-invalidate / conn-control message is
// silent). Classic pub/sub keeps nothing for a subscriber that was away,
// so an outage window does not excuse a lost signal: every acknowledged
// signal sent while the application held its pattern was either delivered
// or covered by the recovery impl/pubsub prescribes for a restored pattern
// subscription — a resync ("resynced" event) of that pattern that began
// after the signal was sent, and so read the durable state the signal
// announced: a publisher writes that state before it publishes (the
// signal only announces it), so a resync that began after the send sees
// it even when the publish's acknowledgement came later.
//
// Premises, else unknown: at least minSignals signals were expected; every
// fault reached a pattern subscription (the client reported it restored
// after the fault), so the reconnect path ran. A run whose gaps happened to
// hold no acknowledged signal passes on delivery alone, and says so.
func controlSignalsCovered(h history.SubscriptionHistory, minSignals int) check.Result {
	const name = "control-signals-covered"
	isPattern := map[string]bool{}
	for _, p := range h.Patterns {
		isPattern[p] = true
	}
	if len(isPattern) == 0 {
		return check.Unknownf(name, "the history holds no pattern subscription")
	}
	type id struct {
		p int
		s int64
	}
	pubs := map[id]history.SubPublish{}
	for _, p := range h.Publishes {
		pubs[id{p.Publisher, p.Seq}] = p
	}
	delivered := map[id]bool{}
	for _, d := range h.Deliveries {
		if p, ok := pubs[id{d.Publisher, d.Seq}]; ok && p.Channel == d.Channel && p.Sub == d.Sub {
			delivered[id{d.Publisher, d.Seq}] = true
		}
	}
	held := map[string][]history.SubInterval{}
	for _, iv := range h.Held {
		held[iv.Sub] = append(held[iv.Sub], iv)
	}
	resyncs := map[string][]time.Duration{} // pattern → resync starts
	restored := map[string][]time.Duration{}
	failed := 0
	for _, e := range h.Events {
		if !isPattern[e.Sub] {
			continue
		}
		switch e.Kind {
		case "resynced":
			resyncs[e.Sub] = append(resyncs[e.Sub], e.At)
		case "resync-failed":
			failed++
		case "resubscribed", "recovered":
			restored[e.Sub] = append(restored[e.Sub], e.At)
		}
	}

	var expected, viaDelivery, viaResync int
	var missed []string
	for _, p := range h.Publishes {
		if p.ErrKind != "" || !isPattern[p.Sub] || !heldThrough(held[p.Sub], p.Sent, p.Done+SubInFlightBound) {
			continue
		}
		expected++
		if delivered[id{p.Publisher, p.Seq}] {
			viaDelivery++
			continue
		}
		covered := false
		for _, at := range resyncs[p.Sub] {
			covered = covered || at >= p.Sent
		}
		if covered {
			viaResync++
			continue
		}
		missed = append(missed, fmt.Sprintf("p%d#%d on %s (sent %v, acknowledged %v with %d receivers) never delivered, and no resync of %s began after it was sent",
			p.Publisher, p.Seq, p.Channel, p.Sent, p.Done, p.Receivers, p.Sub))
	}
	faults := slices.Clone(h.Faults)
	unreached := ""
	slices.SortFunc(faults, func(a, b history.SubFault) int { return cmp.Compare(a.Start, b.Start) })
	for i, f := range faults {
		next := forever
		if i+1 < len(faults) {
			next = faults[i+1].Start
		}
		reached := false
		for _, ats := range restored {
			for _, at := range ats {
				reached = reached || (at >= f.Start && at < next)
			}
		}
		if !reached {
			unreached = fmt.Sprintf("fault %s (%s) did not reach a pattern subscription: the client restored none after it", f.Name, f.Target)
			break
		}
	}

	obs := []string{fmt.Sprintf("%d control signals expected: %d delivered, %d lost and covered by a later resync, %d missed; %d resyncs, %d failed; %d faults",
		expected, viaDelivery, viaResync, len(missed), countAll(resyncs), failed, len(faults))}
	var r check.Result
	switch {
	case len(missed) > 0:
		r = check.Failf(name, strings.Join(check.Elide(missed, 5), "\n"),
			"%d of %d control signals were never delivered and no resync covered them: a ban or cache invalidation silently never applied", len(missed), expected)
	case unreached != "":
		r = check.Unknownf(name, "%s", unreached)
	case expected < minSignals:
		r = check.Unknownf(name, "only %d control signals expected, need %d", expected, minSignals)
	case len(faults) == 0:
		r = check.Unknownf(name, "no fault: the reconnect path was not exercised")
	case viaResync == 0:
		r = check.Passf(name, "%d control signals, every one delivered across %d faults that restored a pattern subscription (none fell in a gap, so no resync was needed)", expected, len(faults))
	default:
		r = check.Passf(name, "%d control signals: %d delivered, %d lost in %d reconnect gaps and covered by the resync after the pattern was restored",
			expected, viaDelivery, viaResync, len(faults))
	}
	r.Observed = obs
	return r
}

func countAll(m map[string][]time.Duration) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}
