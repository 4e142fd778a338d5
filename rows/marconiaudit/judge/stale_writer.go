package judge

import (
	"fmt"
	"strings"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// StaleWriterHistory is a two-writer run on one tenant's stream: the
// writer of a previous process (the older audit-queue generation, OldGen)
// appended, a new process's writer (NewGen) took over and appended, then
// the previous process's writer — still running — was handed more
// entries.
type StaleWriterHistory struct {
	OldGen, NewGen string
	// Current are the signal ids each writer was offered while it was the
	// newest (the old one's before the takeover, the new one's after):
	// they belong in the stream once each.
	Current []string
	// Stale are the ids the old writer was offered after the takeover.
	Stale []string
	// Refusals counts the old writer's failed appends after the takeover
	// (its PipelineErrors with Op "append").
	Refusals int
	Stream   []history.StreamEntry
}

// staleWriterFenced judges the writer's fencing across processes.
// Spec 002 §4.1 Restart ("writer resumes from last-acknowledged audit-queue
// offset (held in Redis as a key for restart safety)") and §6 (what a
// process held in memory at restart is the loss): the offset key is the
// stream's one resume point, so once a newer process's writer has appended,
// a writer of an older generation — a previous process not yet dead — must
// be refused (append.lua's STALEGEN), and nothing it sends after the
// takeover may land in the stream. Every entry of the writers while they
// were current lands exactly once. Unknown when the old writer was handed
// nothing after the takeover, or (with nothing of it landed) was never
// refused: it never tried.
func staleWriterFenced(h StaleWriterHistory) check.Result {
	const name = "marconi-stale-writer-fenced"
	if len(h.Stale) == 0 || len(h.Current) == 0 {
		return check.Unknownf(name, "%d entries offered to the writers while current, %d to the old one after the takeover: nothing to judge", len(h.Current), len(h.Stale))
	}
	if h.OldGen == "" || h.NewGen == "" || len(h.OldGen) != len(h.NewGen) || h.OldGen >= h.NewGen {
		return check.Unknownf(name, "generations %q and %q: the old writer's is not older", h.OldGen, h.NewGen)
	}
	var landed []string
	stale := map[string]bool{}
	for _, id := range h.Stale {
		stale[id] = true
	}
	// Stream order: an entry of the old generation after one of the new is
	// a stale append, whatever signal it carries.
	newSeen := false
	for _, e := range h.Stream {
		gen, _, _ := strings.Cut(e.Offset, ":")
		switch {
		case gen == h.NewGen:
			newSeen = true
		case gen == h.OldGen && newSeen, stale[e.SignalID]:
			landed = append(landed, fmt.Sprintf("%s (%s, offset %s)", e.ID, e.SignalID, e.Offset))
		}
	}
	gaps, dups := onceEach(h.Current, h.Stream)
	var why []string
	if len(landed) > 0 {
		why = append(why, fmt.Sprintf("%d entries of the old generation landed after the takeover: %s", len(landed), strings.Join(check.Elide(landed, 5), ", ")))
	}
	if len(gaps) > 0 {
		why = append(why, fmt.Sprintf("%d entries offered to a current writer never reached the stream: %s", len(gaps), auditSample(gaps, 5)))
	}
	if len(dups) > 0 {
		why = append(why, fmt.Sprintf("%d entries appended more than once: %s", len(dups), auditSample(dups, 5)))
	}
	if len(why) > 0 {
		return check.Failf(name, strings.Join(why, "\n"), "the stream is not fenced against the previous process's writer (generation %s after %s took over)", h.OldGen, h.NewGen)
	}
	if h.Refusals == 0 {
		return check.Unknownf(name, "the old writer was handed %d entries after the takeover but never had an append refused: it never tried", len(h.Stale))
	}
	return check.Passf(name, "the old writer (generation %s) was refused %d times after generation %s took over and none of its %d entries landed; the %d entries of current writers are in the stream once each",
		h.OldGen, h.Refusals, h.NewGen, len(h.Stale), len(h.Current))
}
