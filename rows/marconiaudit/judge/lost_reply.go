package judge

import (
	"fmt"
	"strings"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// LostReplyHistory is a writer run in which the server's replies to the
// append script were lost (a downstream cut on the stream's node) while
// its requests still arrived: the writer saw its append fail though the
// server had run it, and retried the same batch.
type LostReplyHistory struct {
	// Offered are the signal ids offered to the writer's queue.
	Offered []string
	// FailedAppends counts the writer's failed appends (PipelineErrors
	// with Op "append") during the cut.
	FailedAppends int
	// AppliedUnacked: read on the node directly (not through the cut
	// link) while the writer had only failures, the stream already held
	// entries of the batch in flight — the server ran the script, the
	// reply was lost.
	AppliedUnacked bool
	Stream         []history.StreamEntry
}

// lostReplyOnce judges the append script's dedupe (spec 002 §4.1:
// the writer keeps its offset in Redis "for restart safety"; impl's
// append.lua skips entries the stored offset of the same generation
// covers): a batch whose append ran on the server but whose reply was lost
// is retried, and the retry must add nothing — every offered signal is in
// the stream exactly once. Unknown unless the run proved a lost reply of
// an applied append (AppliedUnacked) and a retry (FailedAppends ≥ 1).
func lostReplyOnce(h LostReplyHistory) check.Result {
	const name = "marconi-lost-reply-once"
	gaps, dups := onceEach(h.Offered, h.Stream)
	var why []string
	if len(dups) > 0 {
		why = append(why, fmt.Sprintf("%d signals appended more than once after a lost reply: %s", len(dups), auditSample(dups, 5)))
	}
	if len(gaps) > 0 {
		why = append(why, fmt.Sprintf("%d offered signals never reached the stream: %s", len(gaps), auditSample(gaps, 5)))
	}
	if len(why) > 0 {
		return check.Failf(name, strings.Join(why, "\n"), "the stream does not hold each of %d offered signals once (%d failed appends retried)", len(h.Offered), h.FailedAppends)
	}
	if !h.AppliedUnacked || h.FailedAppends == 0 {
		return check.Unknownf(name, "no append ran on the server with its reply lost (applied-unacked %v, %d failed appends): the retry path was not exercised", h.AppliedUnacked, h.FailedAppends)
	}
	return check.Passf(name, "%d failed appends (replies lost after the server ran them) retried; each of the %d offered signals is in the stream once", h.FailedAppends, len(h.Offered))
}

// onceEach compares the signals offered to the writers with the stream:
// gaps are the offered ids the stream lacks, dups those it holds more than
// once ("id ×n"), each in offered order.
func onceEach(offered []string, stream []history.StreamEntry) (gaps, dups []string) {
	seen := map[string]int{}
	for _, e := range stream {
		seen[e.SignalID]++
	}
	for _, id := range offered {
		switch n := seen[id]; {
		case n == 0:
			gaps = append(gaps, id)
		case n > 1:
			dups = append(dups, fmt.Sprintf("%s ×%d", id, n))
		}
	}
	return gaps, dups
}
