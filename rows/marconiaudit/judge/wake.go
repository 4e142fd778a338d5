package judge

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// WakeRead is one stream entry as the PG archiver's read returned it:
// AppendedMs is the millisecond part of its stream ID (the server's clock
// when the XADD ran) and ReadUs when the XREADGROUP reply reached the
// archiver (unix microseconds, this host's clock — the servers run on it).
type WakeRead struct {
	ID         string
	AppendedMs int64
	ReadUs     int64
}

// wakeClockTol is how far a read may seem to precede its append before the
// two clocks are taken to differ: a stream ID's millisecond is truncated,
// and the server's clock is read a little before the XADD returns.
const wakeClockTol = 2 * time.Millisecond

// archiverWakes is spec 002 §4.1 Handoff ("every successful XADD
// wakes the PG archiver's blocking consumer group read; once it hits cache
// it immediately goes to PG") and §4.2 (XREADGROUP … BLOCK): an entry
// appended while the archiver waits is read at once, not at its next poll.
// Judged on the entries appended to an idle stream — the previous entry
// already read — whose append→read latency is the wake alone, with no
// backlog ahead of it. A poller waiting poll between empty reads reads such
// an entry after a delay spread over [0, poll): its median is poll/2; a
// woken read's is the round trip. So the median must stay under poll/4.
// Premises: the read and append clocks agree (no read before its append
// beyond wakeClockTol) and at least minIdle entries arrived at an idle
// stream; else unknown.
func archiverWakes(reads []WakeRead, poll time.Duration, minIdle int) check.Result {
	const name = "marconi-archiver-wakes"
	rs := slices.Clone(reads)
	slices.SortFunc(rs, func(a, b WakeRead) int {
		return cmp.Or(cmp.Compare(a.AppendedMs, b.AppendedMs), cmp.Compare(streamSeq(a.ID), streamSeq(b.ID)), cmp.Compare(a.ReadUs, b.ReadUs))
	})
	var lat []time.Duration
	var skewed []string
	for i, r := range rs {
		d := time.Duration(r.ReadUs)*time.Microsecond - time.Duration(r.AppendedMs)*time.Millisecond
		if d < -wakeClockTol {
			skewed = append(skewed, fmt.Sprintf("%s read %v before its append", r.ID, (-d).Round(time.Microsecond)))
			continue
		}
		if i == 0 || rs[i-1].ReadUs > r.AppendedMs*1000 {
			continue // a backlog ahead of it: its latency is not the wake's
		}
		lat = append(lat, max(d, 0))
	}
	if len(skewed) > 0 {
		return check.Unknownf(name, "the read and append clocks disagree (%d entries): %s", len(skewed), auditSample(skewed, 3))
	}
	if len(lat) < minIdle {
		return check.Unknownf(name, "%d of %d entries appended to an idle stream, fewer than the %d the median needs", len(lat), len(rs), minIdle)
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	bound := poll / 4
	observed := []string{fmt.Sprintf("%d entries, %d appended to an idle stream: append→read p50 %v, p90 %v, max %v (poll %v, bound p50 ≤ %v)",
		len(rs), len(lat), q(0.5).Round(time.Microsecond), q(0.9).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond), poll, bound)}
	var r check.Result
	if q(0.5) > bound {
		r = check.Failf(name, observed[0], "append→read median %v over %v (a quarter of the %v poll): the archiver waits for its poll instead of waking on the append",
			q(0.5).Round(time.Millisecond), bound, poll)
	} else {
		r = check.Passf(name, "append→read median %v, within %v (a quarter of the %v poll) over %d idle-stream appends", q(0.5).Round(time.Microsecond), bound, poll, len(lat))
	}
	r.Observed = observed
	return r
}

// streamSeq is the sequence part of a stream ID ("ms-seq"); 0 when absent.
func streamSeq(id string) int64 {
	_, seq, _ := strings.Cut(id, "-")
	n, _ := strconv.ParseInt(seq, 10, 64)
	return n
}
