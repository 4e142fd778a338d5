package judge

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// readOption returns the word after name in cmd ("" when absent).
func readOption(cmd []string, name string) string {
	for i := 0; i+1 < len(cmd); i++ {
		if strings.EqualFold(cmd[i], name) {
			return cmd[i+1]
		}
	}
	return ""
}

// WireReads is the server's side of the archiver's reads, independent of
// the client seam: the XREADGROUP calls the node owning the stream served
// (INFO commandstats cmdstat_xreadgroup delta over the run, the node
// serving no other archiver) and the entries that reached PostgreSQL.
type WireReads struct {
	Known          bool
	Calls, Entries int64
}

// readsOneAtATime is spec 002 §4.2 "XREADGROUP COUNT 1 BLOCK 0 …
// No batching" judged on the wire: every XREADGROUP the archiver sent
// carries COUNT 1 and no reply held more than one entry (as recorded at
// the client seam), and the server ran at least one XREADGROUP per entry
// archived (commandstats: a reader that batches needs fewer). Unknown when
// the reads delivered fewer than minEntries entries in all. The BLOCK
// values seen are reported (Observed): a finite block is impl's documented
// departure from BLOCK 0 (ArchiverOptions.Block), not judged here.
func readsOneAtATime(reads []ArchiverRead, wire WireReads, minEntries int) check.Result {
	const name = "marconi-reads-one-at-a-time"
	var bad []string
	if wire.Known && wire.Calls < wire.Entries {
		bad = append(bad, fmt.Sprintf("the server ran %d XREADGROUPs for %d entries archived: some read carried several", wire.Calls, wire.Entries))
	}
	entries := 0
	blocks := map[string]int{}
	for _, r := range reads {
		entries += r.Entries
		if b := readOption(r.Cmd, "BLOCK"); b != "" {
			blocks[b]++
		}
		count := readOption(r.Cmd, "COUNT")
		switch {
		case count != "1":
			bad = append(bad, fmt.Sprintf("COUNT %q (%d entries): %s", count, r.Entries, strings.Join(r.Cmd, " ")))
		case r.Entries > 1:
			bad = append(bad, fmt.Sprintf("%d entries in one reply: %s", r.Entries, strings.Join(r.Cmd, " ")))
		}
	}
	var observed []string
	if wire.Known {
		observed = append(observed, fmt.Sprintf("server side (commandstats): %d XREADGROUP calls for %d entries archived; %d recorded at the client seam", wire.Calls, wire.Entries, len(reads)))
	}
	for _, b := range auditSortedKeys(blocks) {
		observed = append(observed, fmt.Sprintf("XREADGROUP BLOCK %s ms × %d", b, blocks[b]))
	}
	if entries < minEntries {
		r := check.Unknownf(name, "the archiver's reads delivered %d entries (need %d to judge)", entries, minEntries)
		r.Observed = observed
		return r
	}
	if len(bad) > 0 {
		r := check.Failf(name, auditSample(bad, 3), "%d findings over %d XREADGROUPs (%d entries read): %s", len(bad), len(reads), entries, bad[0])
		r.Observed = observed
		return r
	}
	r := check.Passf(name, "%d XREADGROUPs, every one COUNT 1 and at most one entry per reply (%d entries read)", len(reads), entries)
	r.Observed = observed
	return r
}

// WriterRestart is one Redis Stream writer restart: when, and how many
// entries the dying writer handed back to the queue after appending them
// (its successor must skip exactly those, from the Redis offset).
type WriterRestart struct {
	At       time.Duration
	Requeued int
}

// streamResume is spec 002 §4.1 Restart judged against the ledger:
// across writer restarts the stream holds every accepted signal exactly
// once (no gap: the successor resumed at the Redis offset, not "$"; no
// duplicate: it skipped what its predecessor had appended), in the order
// the queue took them (offsets strictly increasing). Unknown with fewer
// than minRestarts restarts, or none that left an appended batch for its
// successor to skip — a restart with nothing to resume proves nothing.
func streamResume(offers []history.AuditOffer, stream []history.StreamEntry, restarts []WriterRestart, minRestarts int) check.Result {
	const name = "marconi-stream-resume"
	withBatch := 0
	for _, r := range restarts {
		if r.Requeued > 0 {
			withBatch++
		}
	}
	if len(restarts) < minRestarts || withBatch == 0 {
		return check.Unknownf(name, "%d writer restarts (%d with an appended batch to resume past); need %d", len(restarts), withBatch, minRestarts)
	}
	seen := map[string]int{}
	var dups, disorder []string
	var lastGen string
	var lastSeq uint64
	for i, e := range stream {
		seen[e.SignalID]++
		if seen[e.SignalID] == 2 {
			dups = append(dups, e.SignalID)
		}
		gen, s, _ := strings.Cut(e.Offset, ":")
		seq, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			disorder = append(disorder, fmt.Sprintf("%s: offset %q", e.ID, e.Offset))
			continue
		}
		if i > 0 && gen == lastGen && seq <= lastSeq {
			disorder = append(disorder, fmt.Sprintf("%s: offset %s after %s:%d", e.ID, e.Offset, lastGen, lastSeq))
		}
		lastGen, lastSeq = gen, seq
	}
	var gaps []string
	accepted := 0
	for _, o := range offers {
		if !o.Kept {
			continue
		}
		accepted++
		if seen[o.SignalID] == 0 {
			gaps = append(gaps, o.SignalID)
		}
	}
	var phantoms []string
	kept := map[string]bool{}
	for _, o := range offers {
		kept[o.SignalID] = o.Kept
	}
	for id := range seen {
		if !kept[id] {
			phantoms = append(phantoms, id)
		}
	}
	sort.Strings(phantoms)
	var why []string
	if len(gaps) > 0 {
		why = append(why, fmt.Sprintf("%d accepted signals never reached the stream (a gap): %s", len(gaps), auditSample(gaps, 5)))
	}
	if len(dups) > 0 {
		why = append(why, fmt.Sprintf("%d signals appended more than once: %s", len(dups), auditSample(dups, 5)))
	}
	if len(disorder) > 0 {
		why = append(why, fmt.Sprintf("%d entries out of queue order: %s", len(disorder), auditSample(disorder, 3)))
	}
	if len(phantoms) > 0 {
		why = append(why, fmt.Sprintf("%d entries of signals never accepted: %s", len(phantoms), auditSample(phantoms, 3)))
	}
	observed := []string{fmt.Sprintf("%d accepted, %d stream entries, %d restarts (%d with an appended batch handed back)", accepted, len(stream), len(restarts), withBatch)}
	if len(why) > 0 {
		r := check.Failf(name, strings.Join(why, "\n"), "across %d writer restarts: %s", len(restarts), why[0])
		r.Observed = observed
		return r
	}
	r := check.Passf(name, "%d accepted signals each once in the stream, in queue order, across %d writer restarts", accepted, len(restarts))
	r.Observed = observed
	return r
}

// TrimHistory is what the trim scenario recorded for one tenant: the
// archiver was kept away from the stream for Down (longer than Retention)
// while the writer appended and trimmed, then caught up.
type TrimHistory struct {
	Offers []history.AuditOffer
	// Rows counts PG rows per signal id once the archiver caught up.
	Rows map[string]int
	// Added is the stream's entries-added and Length its length at the
	// end (XINFO STREAM): Added − Length entries were trimmed.
	Added, Length int64
	// TrimmedPending counts the archiver's "trimmed" errors: pending
	// entries it found deleted (XAUTOCLAIM).
	TrimmedPending float64
	// Down is how long the archiver was away; Retention the writer's
	// time window.
	Down, Retention time.Duration
	End             AuditEnd
}

// trimKeepsUnconsumed is spec 002 §4.1 "MAXLEN ~7d" read with §4.2
// (the stream is the archiver's upstream): the trim removes what the
// archiver consumed once it is older than the retention, and never an
// entry the archiver had not consumed — so an archiver that lagged past
// the retention still archives every accepted signal, exactly once, and
// finds no pending entry trimmed. Unknown when the archiver was not away
// longer than the retention or the pipeline had not drained. A stream
// never trimmed although both held fails: the archiver consumed entries
// older than the retention and the writer kept them all — the removal half
// of "MAXLEN ~7d" (found by the marconi-lua mutant that turned the
// `nowms > retention` guard of append.lua around: the time trim never ran,
// and this check went blind instead of failing).
func trimKeepsUnconsumed(h TrimHistory) check.Result {
	const name = "marconi-trim-keeps-unconsumed"
	switch {
	case h.Down <= h.Retention:
		return check.Unknownf(name, "the archiver was away %v, not longer than the retention %v: the trim could not reach unconsumed entries", h.Down, h.Retention)
	case !h.End.drained():
		return check.Unknownf(name, "read before the pipeline drained (queue %d, pending %d, undelivered %d)", h.End.QueueDepth, h.End.Pending, h.End.Undelivered)
	case h.Added-h.Length <= 0:
		return check.Failf(name, "", "the stream was never trimmed (%d added, %d kept) although the archiver was away %v, longer than the retention %v, and caught up: consumed entries older than the retention were kept (002 §4.1 MAXLEN ~7d)",
			h.Added, h.Length, h.Down.Round(time.Millisecond), h.Retention)
	}
	var missing, dup []string
	accepted := 0
	for _, o := range h.Offers {
		if !o.Kept {
			continue
		}
		accepted++
		switch n := h.Rows[o.SignalID]; {
		case n == 0:
			missing = append(missing, o.SignalID)
		case n > 1:
			dup = append(dup, fmt.Sprintf("%s×%d", o.SignalID, n))
		}
	}
	var why []string
	if len(missing) > 0 {
		why = append(why, fmt.Sprintf("%d accepted signals missing from PG after the archiver caught up (trimmed before it consumed them, or lost by it): %s", len(missing), auditSample(missing, 5)))
	}
	if h.TrimmedPending > 0 {
		why = append(why, fmt.Sprintf("the archiver found %.0f pending entries trimmed", h.TrimmedPending))
	}
	if len(dup) > 0 {
		why = append(why, fmt.Sprintf("%d signals archived twice: %s", len(dup), auditSample(dup, 5)))
	}
	observed := []string{fmt.Sprintf("%d accepted; stream: %d added, %d trimmed, %d kept; archiver away %v against a retention of %v",
		accepted, h.Added, h.Added-h.Length, h.Length, h.Down.Round(time.Millisecond), h.Retention)}
	if len(why) > 0 {
		r := check.Failf(name, strings.Join(why, "\n"), "%s", why[0])
		r.Observed = observed
		return r
	}
	r := check.Passf(name, "%d entries trimmed, none unconsumed: all %d accepted signals archived exactly once after a lag of %v past a %v retention",
		h.Added-h.Length, accepted, h.Down.Round(time.Millisecond), h.Retention)
	r.Observed = observed
	return r
}

// LagSample is one sample of the archiver-lag alert's input: the gauge
// (marconi_pg_archiver_lag_seconds) and, read from Redis at the same
// moment, the true lag — the age of the oldest stream entry the archiver
// group has not acknowledged (0 when none).
type LagSample struct {
	At          time.Duration
	Gauge, True float64
}

// lagAlert is spec 002 §4.2 "alert at marconi_pg_archiver_lag_seconds
// > N": the alert (gauge > bound) fires whenever the true lag is past the
// bound by more than tol, and not while the true lag is short of it by more
// than tol. tol covers the sampling skew between the two readings; grace
// the gauge's update period — it is set per entry the archiver takes, so it
// trails the truth by one entry's processing under load, and by one
// XREADGROUP block once the stream is idle (the first empty read resets
// it) — so a mismatch counts only once it has lasted grace. Unknown unless
// the true lag was both clearly under and clearly over the bound.
func lagAlert(samples []LagSample, bound, tol float64, grace time.Duration) check.Result {
	const name = "marconi-lag-alert"
	var missed, early []string
	under, over, firing := 0, 0, 0
	maxTrue, maxGauge := 0.0, 0.0
	missedSince, earlySince := time.Duration(-1), time.Duration(-1)
	for _, s := range samples {
		fires := s.Gauge > bound
		if fires {
			firing++
		}
		maxTrue, maxGauge = max(maxTrue, s.True), max(maxGauge, s.Gauge)
		isMissed, isEarly := false, false
		switch {
		case s.True > bound+tol:
			over++
			isMissed = !fires
		case s.True < bound-tol:
			under++
			isEarly = fires
		}
		if !isMissed {
			missedSince = -1
		} else if missedSince < 0 {
			missedSince = s.At
		}
		if !isEarly {
			earlySince = -1
		} else if earlySince < 0 {
			earlySince = s.At
		}
		if isMissed && s.At-missedSince >= grace {
			missed = append(missed, fmt.Sprintf("at %v true lag %.2fs, gauge %.2fs (silent since %v)", s.At.Round(time.Millisecond), s.True, s.Gauge, missedSince.Round(time.Millisecond)))
		}
		if isEarly && s.At-earlySince >= grace {
			early = append(early, fmt.Sprintf("at %v true lag %.2fs, gauge %.2fs (firing since %v)", s.At.Round(time.Millisecond), s.True, s.Gauge, earlySince.Round(time.Millisecond)))
		}
	}
	observed := []string{fmt.Sprintf("%d samples: true lag under the bound at %d, over at %d; alert firing at %d; max true %.2fs, max gauge %.2fs (bound %.2fs ± %.2fs, grace %v)",
		len(samples), under, over, firing, maxTrue, maxGauge, bound, tol, grace)}
	if under == 0 || over == 0 {
		r := check.Unknownf(name, "the true lag never went both under and over the bound %.2fs ± %.2fs (%d under, %d over)", bound, tol, under, over)
		r.Observed = observed
		return r
	}
	var why []string
	if len(missed) > 0 {
		why = append(why, fmt.Sprintf("alert silent for longer than %v past the bound (%d samples): %s", grace, len(missed), auditSample(missed, 3)))
	}
	if len(early) > 0 {
		why = append(why, fmt.Sprintf("alert firing for longer than %v under the bound (%d samples): %s", grace, len(early), auditSample(early, 3)))
	}
	if len(why) > 0 {
		r := check.Failf(name, strings.Join(why, "\n"), "%s", why[0])
		r.Observed = observed
		return r
	}
	r := check.Passf(name, "alert firing at every sample past the bound and at none under it (%d over, %d under), within %v", over, under, grace)
	r.Observed = observed
	return r
}

// ArchiverKill is one SIGKILL of the archiver process: when, whether the
// archiver killed itself at a planned point (Self, Point) or the harness
// killed it at an arbitrary moment, and what the group held pending right
// after (entries the dead process had read and not acknowledged).
type ArchiverKill struct {
	At      time.Duration
	Pid     int
	Self    bool
	Point   string
	Pending int64
}

// killPremise is Unknown unless the archiver process was SIGKILLed
// at least want times and at least one kill left work pending: a run whose
// kills all landed between entries proves nothing about recovery.
func killPremise(kills []ArchiverKill, want int) check.Result {
	const name = "archiver-sigkill-premise"
	pending := 0
	for _, k := range kills {
		if k.Pending > 0 {
			pending++
		}
	}
	if len(kills) < want || pending == 0 {
		return check.Unknownf(name, "archiver process SIGKILLed %d times (%d planned), %d leaving entries pending", len(kills), want, pending)
	}
	return check.Passf(name, "archiver process SIGKILLed %d times, %d leaving entries pending", len(kills), pending)
}
