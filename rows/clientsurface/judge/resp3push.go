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
	// Interleaved counts commands the subscription connection carried
	// while pushes were arriving (PINGs, further SUBSCRIBEs).
	Interleaved int
	// Idle is how long the connection sat idle before the later
	// subscriptions were confirmed on it.
	Idle time.Duration
	// MinPublished and MinIdle are what a pass needs.
	MinPublished int
	MinIdle      time.Duration
}

// RESP3Push judges spec 000 §Sharded Pub/Sub Conversion and §Client
// Architecture (the subscription client, RESP3 push): every acknowledged
// publish is delivered exactly once, as its kind, on the channel it was
// published on, with its payload; nothing is delivered that was not
// published; and every subscription asked for was confirmed.
//
// Premises: MinPublished publishes, a channel of one character among the
// wanted, an idle stretch of MinIdle, and at least one interleaved
// command. A wrong delivery is decisive whatever the premises.
func RESP3Push(r PushRun) Verdict {
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
	v.Observed = []string{fmt.Sprintf("%d published, %d delivered (%d lost), %d of %d subscriptions confirmed, shortest channel %d characters, %d commands interleaved, idle %v",
		len(r.Published), len(r.Delivered), lost, len(confirmed), len(r.Wanted), shortest, r.Interleaved, r.Idle.Round(time.Millisecond))}
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
	case r.Idle < r.MinIdle || r.Interleaved == 0:
		v.Status, v.Message = Unknown, fmt.Sprintf("premise: idle %v (want %v), %d interleaved commands (want one)", r.Idle, r.MinIdle, r.Interleaved)
	default:
		v.Status = Pass
		v.Message = fmt.Sprintf("all %d publishes delivered exactly once on their own channel (%d subscriptions confirmed, channels of 1 character up, %d commands interleaved)",
			len(r.Published), len(r.Wanted), r.Interleaved)
	}
	return v
}
