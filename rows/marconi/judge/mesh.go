package judge

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// Marconi mesh checkers (spec 002: §2 hot path, §5 and Stage 2 cache
// lifecycle, §6 restart). Histories are recorded by rows/marconi/workload
// from real HTTP and WebSocket calls; the checkers see only plain data.

// MeshFailedSends lists every send that was not answered 200: a non-2xx
// status or no answer at all (a connection error, Status 0). Each is a
// loud failure of the hot path (spec 002 §2: send_signal answers 200 with
// its delivery decision); none may be left out of a verdict.
func MeshFailedSends(h MeshHistory) []string {
	var out []string
	for _, s := range h.Sends {
		if !s.OK() {
			out = append(out, s.String())
		}
	}
	return out
}

// MeshEndsUncovered returns how many sessions ended and which of them had
// no send to their recipient starting after the end (after TTL lapse plus
// expiryBound for an expired one): a stale route to such a session could
// not have shown, so a verdict over it is not evidence.
func MeshEndsUncovered(h MeshHistory, expiryBound time.Duration) (ended int, uncovered []string) {
	lastSend := map[string]time.Duration{}
	for _, s := range h.Sends {
		if s.Start > lastSend[s.Recipient] {
			lastSend[s.Recipient] = s.Start
		}
	}
	for _, sess := range h.Sessions {
		if sess.Ended == 0 {
			continue
		}
		ended++
		limit := sess.Ended
		if sess.Expired {
			limit += expiryBound
		}
		if lastSend[sess.Recipient] <= limit {
			uncovered = append(uncovered, fmt.Sprintf("%s (%s, ended %v)", sess.SessionID, sess.Recipient, sess.Ended.Round(time.Millisecond)))
		}
	}
	sort.Strings(uncovered)
	return ended, uncovered
}

// MeshIO is the I/O a hot-path burst did before its 200s, counted at the
// client seams and on the servers (spec 002 §2.1: "zero synchronous PG,
// Redis, Neo4j, or OTEL call on this path").
type MeshIO struct {
	// Sends is the number of 200s in the burst with the audit writers
	// running, judged by the client hooks.
	Sends int
	// ClientHotPath counts commands the client seams (command pool,
	// PostgreSQL tracer) attributed to a send's context, by
	// "redis:CMD" / "pg:STMT".
	ClientHotPath map[string]int64
	// PausedSends is the number of 200s in the burst with the audit
	// workers paused, judged server-side.
	PausedSends int
	// ServerRedis is the INFO commandstats delta per "node:command" over
	// the paused burst, the measuring INFO itself excluded.
	ServerRedis map[string]int64
	// ServerPG lists the client backends that ran a statement during the
	// paused burst (pg_stat_activity), the measuring session excluded.
	ServerPG []string
	// MinSends is how many 200s each burst needs to decide.
	MinSends int
}

// marconiHotPathIO fails when any send did I/O before its 200: a command
// attributed to a send at the client seams, or any command on any Valkey
// node or any PostgreSQL statement while only sends ran.
func marconiHotPathIO(io MeshIO) check.Result {
	const name = "marconi-hot-path-io"
	if io.Sends < io.MinSends || io.PausedSends < io.MinSends {
		return check.Unknownf(name, "too few sends to decide: %d with writers running, %d paused (need %d each)", io.Sends, io.PausedSends, io.MinSends)
	}
	var bad []string
	for k, n := range io.ClientHotPath {
		if n != 0 {
			bad = append(bad, fmt.Sprintf("client hook: %s ×%d on the send path", k, n))
		}
	}
	for k, n := range io.ServerRedis {
		if n != 0 {
			bad = append(bad, fmt.Sprintf("server: %s ×%d during the paused burst", k, n))
		}
	}
	for _, b := range io.ServerPG {
		bad = append(bad, "postgres: "+b)
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return check.Failf(name, strings.Join(meshFirst(bad, 12), "\n"), "%d I/O sources on the hot path across %d + %d sends (%s)", len(bad), io.Sends, io.PausedSends, bad[0])
	}
	return check.Passf(name, "%d sends with the audit writers running: 0 commands on the send path at the client hooks; %d sends with them paused: 0 commands on every Valkey node, 0 PostgreSQL statements", io.Sends, io.PausedSends)
}

// marconiSendsDelivered is the loud side of delivery: every send answered
// 200, and every signal the mesh accepted for a live recipient (pushed, or
// queued_offline with a route and later drained) was delivered exactly
// once — a pushed one to the session its 200 named, a drained one to a
// session of its recipient. requireQueued also demands the queued_offline ones (a run
// where every recipient reconnects).
func marconiSendsDelivered(h MeshHistory, minSends int, requireQueued bool) check.Result {
	const name = "marconi-sends-delivered"
	if len(h.Sends) < minSends {
		return check.Unknownf(name, "%d sends, need %d", len(h.Sends), minSends)
	}
	got := map[string][]MeshDelivery{}
	for _, d := range h.Deliveries {
		got[d.SignalID] = append(got[d.SignalID], d)
	}
	var failed, lost, dup, misrouted []string
	expected := 0
	for _, s := range h.Sends {
		if !s.OK() {
			failed = append(failed, fmt.Sprintf("%s at %v: status %d %s", s.Recipient, s.Start.Round(time.Millisecond), s.Status, s.Err))
			continue
		}
		want := s.Outcome == "pushed" || (requireQueued && s.Outcome == "queued_offline" && s.SessionID != "")
		if !want {
			continue
		}
		expected++
		ds := got[s.SignalID]
		switch {
		case len(ds) == 0:
			lost = append(lost, fmt.Sprintf("%s (%s to %s)", s.SignalID, s.Outcome, s.SessionID))
		case len(ds) > 1:
			dup = append(dup, fmt.Sprintf("%s ×%d", s.SignalID, len(ds)))
		}
	}
	misrouted = texts(misdelivered(h))
	if n := len(failed) + len(lost) + len(dup) + len(misrouted); n > 0 {
		cex := strings.Join(meshFirst(append(append(append(failed, lost...), dup...), misrouted...), 12), "\n")
		return check.Failf(name, cex, "%d sends not answered 200, %d accepted signals not delivered, %d delivered more than once, %d delivered to another session (of %d sends, %d expected deliveries)",
			len(failed), len(lost), len(dup), len(misrouted), len(h.Sends), expected)
	}
	if expected == 0 {
		return check.Unknownf(name, "no send expected a delivery")
	}
	return check.Passf(name, "%d sends answered 200; %d accepted signals each delivered exactly once to the session they were routed to", len(h.Sends), expected)
}

// marconiStaleRoutes is the stale-route bound (spec 002 Stage 2 test gate:
// "under continuous register/deregister churn, the maximum staleness
// window observed is < hook-latency + cache-TTL backstop"). The hooks are
// synchronous, so a send that starts after its recipient session's
// deregister was acknowledged must never be routed to it; a session left
// to expire may be routed to until its TTL lapse plus expiryBound. A send
// to the master alias must resolve to the master of the last acknowledged
// flip (sends overlapping a flip are not judged). It also fails on a
// delivery to a session other than the one the 200 named, and on a send
// to a recipient whose session had ended that was not answered 200 (a
// stale route made loud: a 5xx or a dropped connection instead of a
// re-route or an offline queue). Every ended session needs a send to its
// recipient after its end; without one the verdict is Unknown, never Pass.
func marconiStaleRoutes(h MeshHistory, expiryBound time.Duration, minJudged int) check.Result {
	const name = "marconi-stale-routes"
	sessions := map[string]MeshSession{}
	for _, s := range h.Sessions {
		sessions[s.SessionID] = s
	}
	firstEnd := map[string]time.Duration{} // recipient → when its first session ended
	for _, s := range h.Sessions {
		if s.Ended != 0 && (firstEnd[s.Recipient] == 0 || s.Ended < firstEnd[s.Recipient]) {
			firstEnd[s.Recipient] = s.Ended
		}
	}
	var bad []string
	judged, afterEnd, failed := 0, 0, 0
	var worst time.Duration
	for _, s := range h.Sends {
		if !s.OK() {
			failed++
			if end, ok := firstEnd[s.Recipient]; ok && s.Start > end {
				bad = append(bad, fmt.Sprintf("%s after a session of its recipient ended at %v: a stale route answered with an error", s, end.Round(time.Millisecond)))
			}
			continue
		}
		if strings.HasSuffix(s.Recipient, "/@master") {
			continue
		}
		judged++
		if end, ok := firstEnd[s.Recipient]; ok && s.Start > end {
			afterEnd++ // a stale route could have shown here
		}
		sess, ok := sessions[s.SessionID]
		if s.SessionID == "" || !ok || sess.Ended == 0 {
			continue
		}
		limit := sess.Ended
		if sess.Expired {
			limit += expiryBound
		}
		if s.Start > limit {
			stale := s.Start - sess.Ended
			worst = max(worst, stale)
			bad = append(bad, fmt.Sprintf("send %s to %s at %v routed to %s, which ended at %v (expired %v): stale by %v",
				s.SignalID, s.Recipient, s.Start.Round(time.Millisecond), s.SessionID, sess.Ended.Round(time.Millisecond), sess.Expired, stale.Round(time.Millisecond)))
		}
	}
	masterBad, masterJudged := staleMasters(h)
	bad = append(bad, masterBad...)
	bad = append(bad, texts(misdelivered(h))...)
	ended, uncovered := MeshEndsUncovered(h, expiryBound)
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(meshFirst(bad, 12), "\n"), "%d stale routes (worst %v after the session ended) among %d judged sends, %d failed sends, %d ended sessions",
			len(bad), worst.Round(time.Millisecond), judged, failed, ended)
	}
	if judged < minJudged || ended == 0 {
		return check.Unknownf(name, "too little churn to decide: %d judged sends, %d ended sessions (need %d sends and one ended session)", judged, ended, minJudged)
	}
	if len(uncovered) > 0 {
		return check.Unknownf(name, "%d of %d ended sessions had no send to their recipient after their end, so a stale route to them could not show: %s",
			len(uncovered), ended, strings.Join(meshFirst(uncovered, 5), ", "))
	}
	return check.Passf(name, "%d sends judged against %d ended sessions, each followed by a send to its recipient (%d sent after a session of their recipient had ended): none routed to an ended session, %d failed sends (observed staleness 0; expiry bound %v); %d master-alias sends followed every flip",
		judged, ended, afterEnd, failed, expiryBound, masterJudged)
}

// misdelivered lists deliveries to the wrong session: a pushed signal must
// reach the session its 200 named — or, when that session ended before the
// delivery (its socket queue went back to the recipient's pending queue,
// §3.5), a session of the same recipient; a queued one (drained later from
// the recipient's pending queue) a session of the same recipient. For the
// master alias a session of the recipient is one made master of the
// project by a flip that began before the delivery (on_master_change
// drains the alias's queue into the new master, inside the flip's call):
// a signal to the master must never reach a session that was not master,
// such as the next session of the old master's identity.
func misdelivered(h MeshHistory) []misdelivery {
	recipientOf := map[string]string{}
	// endOf is when a session began to end: from then on the mesh may hand
	// its undelivered signals to the identity's next session — during the
	// deregister call, before its 200 (a full-profile run saw one such
	// hand-over inside the call among 28k sends).
	endOf := map[string]time.Duration{}
	for _, s := range h.Sessions {
		recipientOf[s.SessionID] = s.Recipient
		endOf[s.SessionID] = s.Ended
		if s.DeregisterStart != 0 && s.Ended != 0 {
			endOf[s.SessionID] = s.DeregisterStart
		}
	}
	// mastered is, per "tenant/project/@master", who was master when: a
	// session is master from the start of the flip that made it so until
	// the acknowledgement of the next flip to another session (a drain the
	// old master's flip started may still be in flight until then).
	type term struct {
		sid        string
		from, till time.Duration // till 0: still master
	}
	mastered := map[string][]term{}
	flips := slices.Clone(h.MasterChanges)
	slices.SortStableFunc(flips, func(a, b MeshMasterChange) int { return cmp.Compare(a.Start, b.Start) })
	for _, c := range flips {
		alias := c.Project + "/@master"
		ts := mastered[alias]
		if n := len(ts); n > 0 && ts[n-1].sid == c.SessionID {
			continue // a repeated flip to the sitting master
		}
		if n := len(ts); n > 0 {
			ts[n-1].till = c.Ack
		}
		mastered[alias] = append(ts, term{sid: c.SessionID, from: c.Start})
	}
	answers := func(sid, recipient string, at time.Duration) bool {
		if strings.HasSuffix(recipient, "/@master") {
			for _, t := range mastered[recipient] {
				if t.sid == sid && t.from <= at && (t.till == 0 || at <= t.till) {
					return true
				}
			}
			return false
		}
		return recipientOf[sid] == recipient
	}
	sends := map[string]MeshSend{}
	for _, s := range h.Sends {
		if s.OK() {
			sends[s.SignalID] = s
		}
	}
	var bad []misdelivery
	for _, d := range h.Deliveries {
		s, ok := sends[d.SignalID]
		switch {
		case !ok:
		case s.Outcome == "pushed" && d.SessionID != s.SessionID && strings.HasSuffix(s.Recipient, "/@master"):
			// A master-alias signal left unwritten by its master's socket
			// (the session ended, or only its socket dropped) goes back to
			// the alias and on to whoever is master then.
			if !answers(d.SessionID, s.Recipient, d.At) {
				bad = append(bad, misdelivery{fmt.Sprintf("signal %s pushed to %s was delivered to %s", d.SignalID, s.SessionID, d.SessionID), s.Recipient})
			}
		case s.Outcome == "pushed" && d.SessionID != s.SessionID &&
			(endOf[s.SessionID] == 0 || endOf[s.SessionID] > d.At || !answers(d.SessionID, s.Recipient, d.At)):
			bad = append(bad, misdelivery{fmt.Sprintf("signal %s pushed to %s was delivered to %s", d.SignalID, s.SessionID, d.SessionID), s.Recipient})
		case s.Outcome != "pushed" && !answers(d.SessionID, s.Recipient, d.At):
			bad = append(bad, misdelivery{fmt.Sprintf("signal %s for %s was delivered to %s (of %q)", d.SignalID, s.Recipient, d.SessionID, recipientOf[d.SessionID]), s.Recipient})
		}
	}
	return bad
}

// misdelivery is one delivery to a session the signal was not for: what
// happened, and the recipient the signal was sent to.
type misdelivery struct {
	what, recipient string
}

// masterAlias says whether the signal was sent to a project's master
// alias ("tenant/project/@master"), and names the project.
func (m misdelivery) masterAlias() (project string, ok bool) {
	return strings.CutSuffix(m.recipient, "/@master")
}

// String says what happened and, for a master-alias signal, why it was
// wrong.
func (m misdelivery) String() string {
	if project, ok := m.masterAlias(); ok {
		return fmt.Sprintf("%s (sent to %s/@master; not master of %s at the delivery)", m.what, project, project)
	}
	return m.what
}

func texts(ms []misdelivery) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return out
}

// staleMasters judges sends to the master alias between acknowledged flips.
func staleMasters(h MeshHistory) (bad []string, judged int) {
	byProject := map[string][]MeshMasterChange{}
	for _, c := range h.MasterChanges {
		byProject[c.Project] = append(byProject[c.Project], c)
	}
	for _, cs := range byProject {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Ack < cs[j].Ack })
	}
	ended := map[string]time.Duration{}
	for _, s := range h.Sessions {
		if s.Ended != 0 {
			ended[s.SessionID] = s.DeregisterStart
			if s.Expired || s.DeregisterStart == 0 {
				ended[s.SessionID] = s.Ended
			}
		}
	}
	for _, s := range h.Sends {
		project, ok := strings.CutSuffix(s.Recipient, "/@master")
		if !ok || !s.OK() {
			continue
		}
		cs := byProject[project]
		var cur *MeshMasterChange
		overlapping := false
		for i := range cs {
			if cs[i].Ack <= s.Start {
				cur = &cs[i]
			}
			if cs[i].Start < s.Done && cs[i].Ack > s.Start {
				overlapping = true
			}
		}
		if cur == nil || overlapping {
			continue
		}
		if end, gone := ended[cur.SessionID]; gone && end < s.Done {
			continue // the master itself ended around the send: not judged
		}
		judged++
		if s.SessionID != cur.SessionID {
			bad = append(bad, fmt.Sprintf("send %s to %s/@master at %v routed to %q; the master since %v is %s",
				s.SignalID, project, s.Start.Round(time.Millisecond), s.SessionID, cur.Ack.Round(time.Millisecond), cur.SessionID))
		}
	}
	return bad, judged
}

// storedRoute is s as its stored history reads back: the freshness stamp in
// UTC wall time, without the monotonic reading a live time.Time carries
// (and %v prints), so a message quoting s is the same live and replayed
// by `slotgate check --from`, on any machine's time zone. A function of
// the checker, not a method of the record: only a checker's message needs
// it.
func storedRoute(s MeshRouteState) MeshRouteState {
	s.LastHeartbeat = s.LastHeartbeat.Round(0).UTC()
	return s
}

// MeshHooks is the canonical Stage 2 hook list (spec 002 §8 Stage 2:
// "must all exist").
var MeshHooks = []string{"on_register", "on_deregister", "on_master_change", "on_heartbeat", "on_session_expired", "on_ws_connect", "on_ws_disconnect"}

// marconiHookTransitions checks every Stage 2 hook's cache state
// transition (§5 table) on observed steps, and that every hook of the
// canonical list was exercised:
//
//	on_register         route → session, registered
//	on_deregister       not registered, route no longer → session
//	on_session_expired  same as on_deregister
//	on_master_change    master alias → session
//	on_heartbeat        freshness advanced; route, registration and socket unchanged
//	on_ws_connect       attached, route → session, pending drained (0)
//	on_ws_disconnect    detached, still registered and routed
func marconiHookTransitions(steps []MeshHookStep) check.Result {
	const name = "marconi-hook-transitions"
	seen := map[string]int{}
	var bad []string
	for _, st := range steps {
		seen[st.Hook]++
		a, b := storedRoute(st.After), storedRoute(st.Before) // judged as stored, so as replayed
		var why string
		switch st.Hook {
		case "on_register":
			if a.Route != st.SessionID || !a.Registered {
				why = "route or registration not put"
			}
		case "on_deregister", "on_session_expired":
			if a.Registered || a.Route == st.SessionID {
				why = "registration or route left behind"
			}
		case "on_master_change":
			if a.Master != st.SessionID {
				why = "master alias does not follow the flag"
			}
		case "on_heartbeat":
			if !a.LastHeartbeat.After(b.LastHeartbeat) || a.Route != b.Route || a.Registered != b.Registered || a.Attached != b.Attached {
				why = "freshness not advanced, or the entry was invalidated instead of updated"
			}
		case "on_ws_connect":
			if !a.Attached || a.Route != st.SessionID || a.Pending != 0 {
				why = "not attached, not routed, or pending signals left undrained"
			}
		case "on_ws_disconnect":
			if a.Attached || !a.Registered || a.Route != st.SessionID {
				why = "still attached, or the registration/route was dropped"
			}
		default:
			why = "unknown hook"
		}
		if why != "" {
			bad = append(bad, fmt.Sprintf("%s(%s) via %s: %s — before %+v, after %+v", st.Hook, st.SessionID, st.Via, why, b, a))
		}
	}
	var missing []string
	for _, h := range MeshHooks {
		if seen[h] == 0 {
			missing = append(missing, h)
		}
	}
	if len(bad) > 0 || len(missing) > 0 {
		cex := strings.Join(meshFirst(bad, 12), "\n")
		if len(missing) > 0 {
			cex += "\nnever exercised: " + strings.Join(missing, ", ")
		}
		return check.Failf(name, strings.TrimSpace(cex), "%d wrong hook transitions, %d hooks never exercised (of %d steps)", len(bad), len(missing), len(steps))
	}
	return check.Passf(name, "all %d Stage 2 hooks exercised (%d steps), each with its §5 state transition", len(MeshHooks), len(steps))
}

// MeshCacheStats is the loud side of the cache lifecycle.
type MeshCacheStats struct {
	// Hits and Misses count sends to recipients whose session was live for
	// the whole send (registered before it started, not ended before it
	// finished): routed (a hit) or not (a miss).
	Hits, Misses int
	// MinHitRate is the Stage 2 exit criterion (0.99).
	MinHitRate float64
	// FirstReads are the first routing reads after a warm-up, one per
	// rehydrated session: the session id each resolved to ("" = miss).
	FirstReads map[string]string
	// HookErrors is marconi_invalidator_errors_total by hook.
	HookErrors map[string]float64
	// ControlErrors are failed control-plane calls.
	ControlErrors []string
	// MinReads is the number of live-recipient sends needed to decide.
	MinReads int
	// FailedSends are the sends not answered 200 (MeshFailedSends): each
	// fails the check.
	FailedSends []string
	// RequireEnds makes the check judge the cache across session ends: it
	// is Unknown unless Ended > 0 and every ended session was followed by
	// a send to its recipient (Uncovered empty, MeshEndsUncovered).
	RequireEnds bool
	Ended       int
	Uncovered   []string
}

// marconiCacheHealth fails on a hit rate under the Stage 2 exit criterion
// (≥ 99%), a first read after warm-up that misses (Stage 2 gate: "post-
// warmup, the next routing read for an active session is a cache hit"),
// any invalidator error (§9: non-zero in steady state is a paging
// incident), or a failed control-plane call.
func marconiCacheHealth(c MeshCacheStats) check.Result {
	const name = "marconi-cache-health"
	reads := c.Hits + c.Misses
	var bad []string
	if reads >= c.MinReads && reads > 0 {
		if rate := float64(c.Hits) / float64(reads); rate < c.MinHitRate {
			bad = append(bad, fmt.Sprintf("hit rate %.2f%% < %.0f%% (%d hits, %d misses on live recipients)", 100*rate, 100*c.MinHitRate, c.Hits, c.Misses))
		}
	}
	var coldReads []string
	for sid, got := range c.FirstReads {
		if got != sid {
			coldReads = append(coldReads, fmt.Sprintf("%s→%q", sid, got))
		}
	}
	sort.Strings(coldReads)
	if len(coldReads) > 0 {
		bad = append(bad, fmt.Sprintf("%d of %d first reads after warm-up missed: %s", len(coldReads), len(c.FirstReads), strings.Join(meshFirst(coldReads, 5), ", ")))
	}
	var hookErrs []string
	for h, n := range c.HookErrors {
		if n > 0 {
			hookErrs = append(hookErrs, fmt.Sprintf("%s ×%.0f", h, n))
		}
	}
	sort.Strings(hookErrs)
	if len(hookErrs) > 0 {
		bad = append(bad, "marconi_invalidator_errors_total: "+strings.Join(hookErrs, ", "))
	}
	if len(c.ControlErrors) > 0 {
		bad = append(bad, fmt.Sprintf("%d control-plane calls failed: %s", len(c.ControlErrors), strings.Join(meshFirst(c.ControlErrors, 5), "; ")))
	}
	if len(c.FailedSends) > 0 {
		bad = append(bad, fmt.Sprintf("%d sends not answered 200: %s", len(c.FailedSends), strings.Join(meshFirst(c.FailedSends, 5), "; ")))
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(bad, "\n"), "%s", bad[0])
	}
	if reads < c.MinReads || len(c.FirstReads) == 0 {
		return check.Unknownf(name, "too few reads to decide: %d live-recipient sends (need %d), %d first reads after warm-up", reads, c.MinReads, len(c.FirstReads))
	}
	if c.RequireEnds && (c.Ended == 0 || len(c.Uncovered) > 0) {
		return check.Unknownf(name, "the cache was not read across every session end: %d ended sessions, %d with no send to their recipient after the end (%s)",
			c.Ended, len(c.Uncovered), strings.Join(meshFirst(c.Uncovered, 5), ", "))
	}
	ends := ""
	if c.RequireEnds {
		ends = fmt.Sprintf("; every one of %d ended sessions followed by a send", c.Ended)
	}
	return check.Passf(name, "hit rate %.2f%% (%d/%d live-recipient sends); %d/%d first reads after warm-up hit; 0 invalidator errors; 0 failed control calls; 0 failed sends%s",
		100*float64(c.Hits)/float64(reads), c.Hits, reads, len(c.FirstReads), len(c.FirstReads), ends)
}

// marconiRehydrated compares a fresh instance's routing table right after
// its warm-up with the SessionStore's active sessions (§6 step 2): every
// active session's identity routes to it (or to a newer session of the
// same identity) and nothing else is routed.
func marconiRehydrated(active map[string]string, routes map[string]string) check.Result {
	const name = "marconi-rehydrated"
	if len(active) == 0 {
		return check.Unknownf(name, "no active sessions in the store")
	}
	var bad []string
	for sid, key := range active {
		if got := routes[key]; got == "" {
			bad = append(bad, fmt.Sprintf("%s (%s) not routed", sid, key))
		} else if active[got] != key {
			bad = append(bad, fmt.Sprintf("%s routes to %s, not an active session of it", key, got))
		}
	}
	for key, sid := range routes {
		if strings.HasSuffix(key, "/@master") {
			continue
		}
		if _, ok := active[sid]; !ok {
			bad = append(bad, fmt.Sprintf("%s routes to %s, which the store does not hold", key, sid))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(meshFirst(bad, 12), "\n"), "%d of %d active sessions not rehydrated (or misrouted)", len(bad), len(active))
	}
	return check.Passf(name, "all %d active sessions rehydrated from the SessionStore before the first reconnect", len(active))
}

// MeshLedger balances an instance's accepted signals against the audit
// stream across its death (§6: in-flight audit-queue entries are lost —
// counted, not hidden).
type MeshLedger struct {
	// Accepted are the signal ids the instance answered 200 and the audit
	// queue kept.
	Accepted []string
	// Streamed counts each signal id found in the Marconi Cache stream.
	Streamed map[string]int
	// CountedLost is the loss the instance reported at its death: the
	// audit-queue entries it dropped unwritten (plus overwrites).
	CountedLost int64
}

// marconiAuditLedger fails unless every accepted signal is in the stream
// or counted lost, with the count exact: more missing than counted is a
// hidden loss, fewer is a phantom.
func marconiAuditLedger(l MeshLedger) check.Result {
	const name = "marconi-audit-ledger"
	if len(l.Accepted) == 0 {
		return check.Unknownf(name, "no accepted signals")
	}
	var missing []string
	for _, id := range l.Accepted {
		if l.Streamed[id] == 0 {
			missing = append(missing, id)
		}
	}
	if int64(len(missing)) != l.CountedLost {
		kind := "hidden loss"
		if int64(len(missing)) < l.CountedLost {
			kind = "phantom loss"
		}
		return check.Failf(name, "missing from the stream: "+strings.Join(meshFirst(missing, 12), ", "),
			"%s: %d accepted signals missing from the stream, %d counted lost (of %d accepted)", kind, len(missing), l.CountedLost, len(l.Accepted))
	}
	return check.Passf(name, "%d accepted = %d in the stream + %d counted lost at the restart", len(l.Accepted), len(l.Accepted)-len(missing), l.CountedLost)
}

func meshFirst(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("… and %d more", len(s)-n))
}
