package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// AlertSample is one evaluation of one writer alert (spec 002 §4.1):
// whether it fired, the true value of the condition it watches read from
// the queue itself at the same moment (depth: the entries it holds; lag:
// the age of the oldest — not from the gauge the rule reads), and how many
// entries the queue had lost by then (the §3.6 loss event).
type AlertSample struct {
	At     time.Duration
	Rule   string
	True   float64
	Firing bool
	Lost   int64
}

// AlertBound is what one rule is judged against: the condition's
// threshold, the tolerance for the sampling skew between the truth and the
// gauge, and the grace an evaluation may trail a change by (the rule's
// evaluation period plus the gauge's update period).
type AlertBound struct {
	Threshold, Tol float64
	Grace          time.Duration
}

// alerts judges the §4.1 writer alerts through an outage
// that overflows the queue: each rule (1) fires no later than the queue's
// first loss — the alert exists so the operator hears of a stalled writer
// while the §3.6 safety factor's headroom still holds, not from the loss
// counter — (2) clears within grace once the truth is back under its
// threshold, and (3) never fires for longer than grace while the truth is
// under it. Premises per rule: the truth went over its threshold and a
// loss happened (the outage did what it was for), and it was under the
// threshold both before and after; else unknown.
func alerts(samples []AlertSample, bounds map[string]AlertBound) check.Result {
	const name = "marconi-audit-alerts"
	var why, premises, observed []string
	for _, rule := range auditSortedKeys(bounds) {
		b := bounds[rule]
		var rs []AlertSample
		for _, s := range samples {
			if s.Rule == rule {
				rs = append(rs, s)
			}
		}
		firstOver, firstLoss, firstFire, lastOver := -1, -1, -1, -1
		for i, s := range rs {
			if s.True > b.Threshold+b.Tol {
				if firstOver < 0 {
					firstOver = i
				}
				lastOver = i
			}
			if s.Lost > 0 && firstLoss < 0 {
				firstLoss = i
			}
			if s.Firing && firstFire < 0 {
				firstFire = i
			}
		}
		underBefore := firstOver > 0 && rs[0].True < b.Threshold-b.Tol
		underAfter := lastOver >= 0 && lastOver < len(rs)-1 && rs[len(rs)-1].True < b.Threshold-b.Tol
		if firstOver < 0 || firstLoss < 0 || !underBefore || !underAfter {
			premises = append(premises, fmt.Sprintf("%s: the truth did not go under, over (%v) and back under its threshold %.2f ± %.2f with a loss (%v) in between",
				rule, firstOver >= 0, b.Threshold, b.Tol, firstLoss >= 0))
			continue
		}
		at := func(i int) string {
			if i < 0 {
				return "never"
			}
			return rs[i].At.Round(time.Millisecond).String()
		}
		observed = append(observed, fmt.Sprintf("%s: over the threshold %.2f from %s, first loss %s, fired %s", rule, b.Threshold, at(firstOver), at(firstLoss), at(firstFire)))
		if firstFire < 0 || rs[firstFire].At > rs[firstLoss].At {
			why = append(why, fmt.Sprintf("%s fired %s, after the queue's first loss at %s: the operator hears of the stalled writer from the loss counter", rule, at(firstFire), at(firstLoss)))
		}
		// Clearing and false alarms: any firing that lasts grace with the
		// truth under the threshold.
		since := time.Duration(-1)
		for _, s := range rs {
			if !s.Firing || s.True >= b.Threshold-b.Tol {
				since = -1
				continue
			}
			if since < 0 {
				since = s.At
			}
			if s.At-since >= b.Grace {
				why = append(why, fmt.Sprintf("%s firing at %v with the truth %.2f under its threshold %.2f since %v (grace %v): it does not clear",
					rule, s.At.Round(time.Millisecond), s.True, b.Threshold, since.Round(time.Millisecond), b.Grace))
				break
			}
		}
	}
	var r check.Result
	switch {
	case len(why) > 0:
		r = check.Failf(name, strings.Join(why, "\n"), "%s", why[0])
	case len(premises) > 0:
		r = check.Unknownf(name, "%s", strings.Join(premises, "; "))
	default:
		r = check.Passf(name, "every writer alert fired before the queue's first loss and cleared within its grace (%d rules)", len(bounds))
	}
	r.Observed = observed
	return r
}
