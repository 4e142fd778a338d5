package history

import "time"

// SubPublish is one published message of a subscriptions history. Seq is
// unique per Publisher, so (Publisher, Seq) names the message.
type SubPublish struct {
	Publisher int
	Seq       int64
	// Channel is where it was published; Sub is the subscription that must
	// deliver it (the topic itself, or the pattern matching Channel).
	Channel, Sub string
	// Sent and Done bracket the publish call.
	Sent, Done time.Duration
	// ErrKind is "" when the publish was acknowledged; only acknowledged
	// messages are expected (house style: count only acknowledged writes).
	// "stopped" is a publish the scenario itself cut short: unknown
	// outcome, not a failure.
	ErrKind, Err string
	// Receivers is the server's receiver count (SPUBLISH/PUBLISH reply).
	Receivers int64
}

// SubDelivery is one message the application received.
type SubDelivery struct {
	Publisher int
	Seq       int64
	// Channel is where it was published, Sub the subscription it came
	// through.
	Channel, Sub string
	At           time.Duration
}

// SubEvent is one entry of the subscription client's own log: the kinds of
// impl/pubsub.EventKind ("subscribed", "dropped", "recovered",
// "resubscribed", "retry-failed", "unsubscribed").
type SubEvent struct {
	At   time.Duration
	Sub  string
	Kind string
	Err  string
}

// SubInterval is a span during which the application held Sub: from its
// subscribe confirmation to its unsubscribe request (To 0: still held).
type SubInterval struct {
	Sub      string
	From, To time.Duration
	// Requested is when the subscribe was asked for (0: at From): a
	// delivery may arrive from then on, before the call returned.
	Requested time.Duration
}

// SubFault is one injected fault window.
type SubFault struct {
	Name, Target string
	Start, End   time.Duration
}

// SubscriptionHistory is what a subscriptions scenario recorded.
type SubscriptionHistory struct {
	Publishes  []SubPublish
	Deliveries []SubDelivery
	Events     []SubEvent
	Held       []SubInterval
	Faults     []SubFault
	// SubscribeErrors are application subscribe/unsubscribe calls that
	// failed after the client's own retries: loud.
	SubscribeErrors []OpOutcome
	// Recovering lists subscriptions the client still reported recovering
	// when the scenario ended: loud (it knows it is broken).
	Recovering []string
	// Patterns names the subscriptions that are classic patterns (D2).
	Patterns []string
	End      time.Duration
}
