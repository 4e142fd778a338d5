package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// SubscribeCount is what the harness counted on the servers around
// attaching receiver sockets to a Marconi instance (spec 002 §8 Stage 5
// exit: "WS handler does not subscribe to Redis pubsub when
// Marconi-attached"; §2.2).
type SubscribeCount struct {
	// Nodes are the nodes counted; ClusterNodes how many the topology has
	// (the count must cover every node: a subscription lands on any).
	Nodes        []string
	ClusterNodes int
	// Attached is how many sockets were attached while counting.
	Attached, MinAttached int
	// Commands: per "node:command", the INFO commandstats calls of
	// subscribe, ssubscribe and psubscribe during the window.
	Commands map[string]int64
	// Subscribed: per node, the connections' sub+ssub+psub (CLIENT LIST)
	// while attached, minus before.
	Subscribed map[string]int
}

// marconiNoSubscribe passes when attaching sockets made no SUBSCRIBE,
// SSUBSCRIBE or PSUBSCRIBE on any node and left no subscription open.
func marconiNoSubscribe(c SubscribeCount) check.Result {
	const name = "marconi-no-subscribe"
	if c.Attached < c.MinAttached || c.Attached == 0 {
		return check.Unknownf(name, "%d sockets attached, want at least %d", c.Attached, c.MinAttached)
	}
	if len(c.Nodes) < c.ClusterNodes || c.ClusterNodes == 0 {
		return check.Unknownf(name, "counted on %d of %d nodes", len(c.Nodes), c.ClusterNodes)
	}
	var bad []string
	for k, v := range c.Commands {
		if v != 0 {
			bad = append(bad, fmt.Sprintf("%s +%d", k, v))
		}
	}
	for n, v := range c.Subscribed {
		if v != 0 {
			bad = append(bad, fmt.Sprintf("%s: %+d subscriptions open", n, v))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(bad[:min(len(bad), 6)], "; "), "%d sockets attached: the servers saw pub/sub subscriptions (%d findings)", c.Attached, len(bad))
	}
	return check.Passf(name, "%d sockets attached: no subscribe/ssubscribe/psubscribe and no subscription open on any of %d nodes", c.Attached, len(c.Nodes))
}

// QueueDefaults is what the harness measured of an audit queue built with
// the shipped default configuration (spec 002 §3.6 "Defaults (personal
// install): max_entries=50_000, max_bytes=512MB, max_age_seconds=600,
// overwrite_policy=oldest").
type QueueDefaults struct {
	// MaxBytes is the configured byte cap (not filled: 512 MB).
	MaxBytes int64
	// Depth after offering MaxEntries+1 entries with no writer, and which
	// entry the overflow lost (its sequence number, 1 = the oldest) and
	// whether the queue kept the newest.
	DepthAtOverflow int
	LostFirst       int
	KeptNewest      bool
	// Survived/Ejected: entries offered AgeBelow and AgeAbove before a
	// Take (on the queue's clock): the first must stay, the second be
	// ejected for max_age.
	AgeBelow, AgeAbove time.Duration
	SurvivedBelow      bool
	EjectedAbove       bool
}

// marconiQueueDefaults passes when the measured queue behaves as the
// spec's defaults: capped at exactly 50,000 entries by overwriting the
// oldest, 512 MB, entries ejected between 599 s and 601 s of age.
func marconiQueueDefaults(q QueueDefaults) check.Result {
	const name = "marconi-queue-defaults"
	var bad []string
	if q.MaxBytes != 512<<20 {
		bad = append(bad, fmt.Sprintf("max_bytes %d, want %d (512 MB)", q.MaxBytes, 512<<20))
	}
	if q.DepthAtOverflow != 50_000 {
		bad = append(bad, fmt.Sprintf("depth %d after 50,001 offers, want 50,000 (max_entries)", q.DepthAtOverflow))
	}
	if q.LostFirst != 1 || !q.KeptNewest {
		bad = append(bad, fmt.Sprintf("overflow lost entry #%d (kept the newest: %v), want #1 and the newest kept (overwrite_policy=oldest)", q.LostFirst, q.KeptNewest))
	}
	if q.AgeBelow >= 600*time.Second || q.AgeAbove <= 600*time.Second {
		return check.Unknownf(name, "ages %v / %v do not bracket 600 s", q.AgeBelow, q.AgeAbove)
	}
	if !q.SurvivedBelow || !q.EjectedAbove {
		bad = append(bad, fmt.Sprintf("an entry %v old kept: %v, %v old ejected: %v (max_age_seconds=600)", q.AgeBelow, q.SurvivedBelow, q.AgeAbove, q.EjectedAbove))
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(bad, "; "), "the audit queue's defaults are not the spec's: %s", bad[0])
	}
	return check.Passf(name, "audit queue as shipped: 50,000 entries (oldest overwritten), 512 MB, max age 600 s")
}

// Engagement is what the harness saw of stamp_engagement on attached
// receivers (spec 002 §5: stamp_heartbeat / stamp_engagement →
// routing.update_freshness, "cheap field update; does not invalidate the
// entire entry").
type Engagement struct {
	Receivers, Stamps, StampErrors int
	// HookCalls is the on_heartbeat delta of marconi_invalidator_calls_total.
	HookCalls int
	// Advanced: registrations whose last_heartbeat reached the stamp's
	// time; Attached: still attached after all stamps.
	Advanced, Attached int
	// Sends after the stamps, and how many of them were pushed.
	Sends, Pushed int
}

// marconiEngagement passes when every stamp answered, advanced its route's
// freshness through on_heartbeat, and left the entry whole: every socket
// still attached and every later send pushed.
func marconiEngagement(e Engagement) check.Result {
	const name = "marconi-stamp-engagement"
	if e.Stamps == 0 || e.Sends == 0 {
		return check.Unknownf(name, "%d stamps, %d sends", e.Stamps, e.Sends)
	}
	var bad []string
	if e.StampErrors > 0 {
		bad = append(bad, fmt.Sprintf("%d stamps failed", e.StampErrors))
	}
	if e.HookCalls != e.Stamps {
		bad = append(bad, fmt.Sprintf("on_heartbeat called %d times for %d stamps", e.HookCalls, e.Stamps))
	}
	if e.Advanced != e.Stamps {
		bad = append(bad, fmt.Sprintf("%d of %d stamps advanced the route's freshness", e.Advanced, e.Stamps))
	}
	if e.Attached != e.Receivers {
		bad = append(bad, fmt.Sprintf("%d of %d sockets still attached after the stamps (the entry was invalidated)", e.Attached, e.Receivers))
	}
	if e.Pushed != e.Sends {
		bad = append(bad, fmt.Sprintf("%d of %d later sends pushed (the rest queued offline)", e.Pushed, e.Sends))
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(bad, "; "), "stamp_engagement: %s", bad[0])
	}
	return check.Passf(name, "%d engagement stamps: freshness advanced through on_heartbeat, %d sockets still attached, %d later sends all pushed", e.Stamps, e.Attached, e.Sends)
}
