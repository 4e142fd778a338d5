package judge

import (
	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// DeliveryInput is a subscriptions history and the fewest expected messages
// that make a verdict (subscriptionsDelivered).
type DeliveryInput struct {
	History     history.SubscriptionHistory
	MinExpected int
}

// LoudInput is a subscriptions history and the fewest publishes that make a
// verdict (subscriptionErrors).
type LoudInput struct {
	History      history.SubscriptionHistory
	MinPublishes int
}

// PushInput is every node's CLIENT LIST once the subscriptions delivered,
// the subscription client's connection name, and the exact topics and
// patterns the application held then (pushDelivery).
type PushInput struct {
	Conns           []check.ClientConn
	Name            string
	Exact, Patterns int
}

// SignalsInput is a subscriptions history with pattern subscriptions and
// the fewest control signals that make a verdict (controlSignalsCovered).
type SignalsInput struct {
	History    history.SubscriptionHistory
	MinSignals int
}

// SpreadInput is the topic-spread scenario's record and the fewest channel
// topics per community that make a verdict (topicsSpread).
type SpreadInput struct {
	Run             TopicSpreadRun
	MinPerCommunity int
}

// The row's checkers, by stable name; each input struct lists the old
// reflective checker's arguments in order, so histories stored under the
// old names replay.
var (
	SubscriptionsDelivered = check.Define("subscriptions/delivered", func(in DeliveryInput) check.Result {
		return subscriptionsDelivered(in.History, in.MinExpected)
	}, "SubscriptionsDelivered")
	SubscriptionErrors = check.Define("subscriptions/loud", func(in LoudInput) check.Result {
		return subscriptionErrors(in.History, in.MinPublishes)
	}, "SubscriptionErrors")
	PushDelivery = check.Define("subscriptions/push-delivery", func(in PushInput) check.Result {
		return pushDelivery(in.Conns, in.Name, in.Exact, in.Patterns)
	}, "PushDelivery")
	ControlSignalsCovered = check.Define("subscriptions/control-signals-covered", func(in SignalsInput) check.Result {
		return controlSignalsCovered(in.History, in.MinSignals)
	}, "ControlSignalsCovered")
	TopicsSpread = check.Define("subscriptions/topics-spread", func(in SpreadInput) check.Result {
		return topicsSpread(in.Run, in.MinPerCommunity)
	}, "TopicsSpread")
)
