package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// RESP3PushChecker names RESP3Push's verdicts.
const RESP3PushChecker = "resp3-push-delivery"

// Push is one message: published (acknowledged by the server) or
// delivered to the application. Kind is "message" (SUBSCRIBE) or
// "smessage" (SSUBSCRIBE); Payload names the channel it was published
// on and is unique in the run.
type Push struct {
	Kind, Channel, Payload string
}

// Sub is one subscription: its kind ("subscribe" or "ssubscribe") and
// channel.
type Sub struct {
	Kind, Channel string
}

// PushRun is what RESP3Push judges.
type PushRun struct {
	// Published are the acknowledged publishes, each made after its
	// channel's subscription was confirmed; Delivered what the
	// application was handed, in order.
	Published, Delivered []Push
	// Wanted are the subscriptions asked for; Confirmed those whose
	// confirmation arrived.
	Wanted, Confirmed []Sub
	// Events are the path's observed arrivals, each on the connection
	// (or, where the path shows no connection, the session) it came on:
	// deliveries, subscription confirmations and command replies (PONG).
	// Interleaving and idleness are read from them, never asserted.
	Events []PushEvent
	// MinPublished and MinIdle are what a pass needs.
	MinPublished int
	MinIdle      time.Duration
}

// Event kinds of a PushEvent.
const (
	EventDelivery = "delivery" // a push handed to the application
	EventConfirm  = "confirm"  // a subscription confirmation
	EventReply    = "reply"    // a command's reply (PONG) on the subscription connection
)

// PushEvent is one observed arrival on a subscription connection: Conn
// names the connection, At is when it was seen (from the run's start).
type PushEvent struct {
	Conn string        `json:"conn"`
	Kind string        `json:"kind"`
	At   time.Duration `json:"at"`
}

// byConn is r's events per connection, in arrival order.
func (r PushRun) byConn() map[string][]PushEvent {
	out := map[string][]PushEvent{}
	for _, e := range r.Events {
		out[e.Conn] = append(out[e.Conn], e)
	}
	for _, es := range out {
		sort.SliceStable(es, func(i, j int) bool { return es[i].At < es[j].At })
	}
	return out
}

// Interleaved counts the confirmations and replies that arrived between
// two deliveries on the same connection: a reply the client had to tell
// apart from pushes around it.
func (r PushRun) Interleaved() int {
	n := 0
	for _, es := range r.byConn() {
		first, last := -1, -1
		for i, e := range es {
			if e.Kind == EventDelivery {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		for i := first + 1; first >= 0 && i < last; i++ {
			if es[i].Kind != EventDelivery && es[i].At > es[first].At && es[i].At < es[last].At {
				n++
			}
		}
	}
	return n
}

// Idle is the longest observed gap before a confirmation on a connection
// that had carried something before it: how long a connection sat idle
// before a later subscription was confirmed on it.
func (r PushRun) Idle() time.Duration {
	var idle time.Duration
	for _, es := range r.byConn() {
		for i := 1; i < len(es); i++ {
			if es[i].Kind == EventConfirm && es[i].At-es[i-1].At > idle {
				idle = es[i].At - es[i-1].At
			}
		}
	}
	return idle
}

// RESP3Push judges spec 000 §Sharded Pub/Sub Conversion and §Client
// Architecture (the subscription client, RESP3 push): every acknowledged
// publish is delivered exactly once, as its kind, on the channel it was
// published on, with its payload; nothing is delivered that was not
// published; and every subscription asked for was confirmed.
//
// Premises: MinPublished publishes, a channel of one character among the
// wanted, a confirmation observed after MinIdle of nothing on its
// connection, and at least one confirmation or reply observed between two
// deliveries on the same connection. A wrong delivery is decisive whatever the premises.
func resp3Push(r PushRun) Verdict {
	v := Verdict{Checker: RESP3PushChecker}
	published := map[string]Push{}
	for _, p := range r.Published {
		published[p.Payload] = p
	}
	got := map[string]int{}
	var bad []string
	for _, d := range r.Delivered {
		got[d.Payload]++
		p, ok := published[d.Payload]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("delivered %q on %s %q: never published (or published before its subscription was confirmed)", d.Payload, d.Kind, d.Channel))
		case d.Channel != p.Channel || d.Kind != p.Kind:
			bad = append(bad, fmt.Sprintf("misrouted: %q published as %s on %q, delivered as %s on %q", d.Payload, p.Kind, p.Channel, d.Kind, d.Channel))
		case got[d.Payload] == 2:
			bad = append(bad, fmt.Sprintf("duplicated: %q on %s %q delivered more than once", d.Payload, d.Kind, d.Channel))
		}
	}
	lost := 0
	for _, p := range r.Published {
		if got[p.Payload] == 0 {
			lost++
			if lost <= 3 {
				bad = append(bad, fmt.Sprintf("lost: %q published as %s on %q, never delivered", p.Payload, p.Kind, p.Channel))
			}
		}
	}
	confirmed := map[Sub]bool{}
	for _, s := range r.Confirmed {
		confirmed[s] = true
	}
	shortest := 0
	for _, s := range r.Wanted {
		if !confirmed[s] {
			bad = append(bad, fmt.Sprintf("unconfirmed: %s %q", s.Kind, s.Channel))
		}
		if shortest == 0 || len(s.Channel) < shortest {
			shortest = len(s.Channel)
		}
	}
	interleaved, idle := r.Interleaved(), r.Idle()
	v.Observed = []string{fmt.Sprintf("%d published, %d delivered (%d lost), %d of %d subscriptions confirmed, shortest channel %d characters, %d confirmations or replies observed between two pushes on one connection, longest observed idle gap before a confirmation %v",
		len(r.Published), len(r.Delivered), lost, len(confirmed), len(r.Wanted), shortest, interleaved, idle.Round(time.Millisecond))}
	if len(bad) > 0 {
		sort.Strings(bad)
		v.Status = Fail
		v.Message = fmt.Sprintf("%d wrong deliveries or confirmations out of %d published: %s", len(bad), len(r.Published), bad[0])
		v.Counterexample = strings.Join(head(bad, 10), "\n")
		return v
	}
	switch {
	case len(r.Published) < r.MinPublished:
		v.Status, v.Message = Unknown, fmt.Sprintf("premise: only %d publishes (want %d)", len(r.Published), r.MinPublished)
	case shortest != 1:
		v.Status, v.Message = Unknown, fmt.Sprintf("premise: no one-character channel (shortest %d)", shortest)
	case idle < r.MinIdle:
		v.Status, v.Message = Unknown, fmt.Sprintf("premise: no confirmation observed after an idle connection (longest gap before one %v, want %v)", idle.Round(time.Millisecond), r.MinIdle)
	case interleaved == 0:
		v.Status, v.Message = Unknown, "premise: no confirmation or reply observed between two pushes on the same connection"
	default:
		v.Status = Pass
		v.Message = fmt.Sprintf("all %d publishes delivered exactly once on their own channel (%d subscriptions confirmed, channels of 1 character up; %d confirmations or replies observed between pushes on one connection, a confirmation after %v idle)",
			len(r.Published), len(r.Wanted), interleaved, idle.Round(time.Millisecond))
	}
	return v
}
