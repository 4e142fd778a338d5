package judge

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slotgate/slotgate/check"
)

// KillLoss judges the audit loss of a SIGKILLed mesh process (spec
// 002 §6: "In-flight audit-queue entries (§3.6) that hadn't yet been
// written to the Redis Stream at restart time are lost"; §4.1: the stream
// is "the durable boundary for v0.4"; §3.4: durability_status reflects the
// stream handoff). It fails when the stream holds fewer of the process's
// accepted signals than it had declared durable before the kill (an
// acknowledged entry lost), when more were lost than were in flight at the
// last scrape (the queue depth plus one writer batch), or when the stream
// holds a signal twice or one the process never accepted.
//
// Premises, each Unknown when broken: the process died of SIGKILL (a
// graceful stop could count its loss, which is another row's claim); the
// last scrape before the kill answered and no send followed it; at least
// one signal was accepted while the writer was cut off (something was in
// flight) and at least one was declared durable before (the
// acknowledgment was working).
var KillLoss = check.Define("marconi-restart/sigkill-audit-loss", marconiKillLoss)

func marconiKillLoss(r MeshKillRun) check.Result {
	const name = "marconi-sigkill-audit-loss"
	switch {
	case !r.Killed:
		return check.Unknownf(name, "the mesh process did not die of SIGKILL (exit: %s)", r.Exit)
	case r.ScrapeErr != "":
		return check.Unknownf(name, "the last scrape before the kill failed: %s", r.ScrapeErr)
	case r.SentAfterScrape > 0:
		return check.Unknownf(name, "%d sends after the last scrape: its depth does not bound what was in flight", r.SentAfterScrape)
	case r.DuringOutage < 1:
		return check.Unknownf(name, "no signal accepted while the writer was cut off: nothing was in flight at the kill")
	case r.Acked < 1:
		return check.Unknownf(name, "no entry declared durable before the kill: the acknowledgment was never seen working")
	}
	accepted := map[string]bool{}
	var lost, dup, phantom []string
	in := 0
	for _, id := range r.Accepted {
		accepted[id] = true
		switch n := r.Streamed[id]; {
		case n == 0:
			lost = append(lost, id)
		case n > 1:
			dup = append(dup, fmt.Sprintf("%s ×%d", id, n))
			in++
		default:
			in++
		}
	}
	for id := range r.Streamed {
		if !accepted[id] {
			phantom = append(phantom, id)
		}
	}
	sort.Strings(dup)
	sort.Strings(phantom)
	bound := r.Depth + float64(r.Batch)
	var bad []string
	if r.Acked > float64(in) {
		bad = append(bad, fmt.Sprintf("%.0f entries declared durable before the kill, %d of the accepted signals in the stream after it: %.0f acknowledged entries lost", r.Acked, in, r.Acked-float64(in)))
	}
	if float64(len(lost)) > bound {
		bad = append(bad, fmt.Sprintf("%d accepted signals lost, more than were in flight at the last scrape (queue depth %.0f + writer batch %d)", len(lost), r.Depth, r.Batch))
	}
	if len(dup) > 0 {
		bad = append(bad, fmt.Sprintf("%d signals in the stream more than once: %s", len(dup), strings.Join(meshFirst(dup, 5), ", ")))
	}
	if len(phantom) > 0 {
		bad = append(bad, fmt.Sprintf("%d signals in the stream the process never accepted: %s", len(phantom), strings.Join(meshFirst(phantom, 5), ", ")))
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(bad, "\n"), "%s (tenant %s, %d accepted)", bad[0], r.Tenant, len(r.Accepted))
	}
	return check.Passf(name, "SIGKILLed with %d signals accepted while the writer was cut off: %d lost (in flight at the last scrape: queue depth %.0f + at most %d held by the writer), none of them declared durable; all %.0f entries declared durable are in the stream, each of the %d streamed once",
		r.DuringOutage, len(lost), r.Depth, r.Batch, r.Acked, in)
}
