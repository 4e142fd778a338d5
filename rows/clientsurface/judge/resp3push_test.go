package judge

import (
	"testing"
	"time"
)

func TestRESP3Push(t *testing.T) {
	pub := []Push{{"message", "a", "p1"}, {"message", "ab", "p2"}, {"smessage", "a", "p3"}}
	wanted := []Sub{{"subscribe", "a"}, {"subscribe", "ab"}, {"ssubscribe", "a"}}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// c1: confirmed, idle 1.2 s, confirmed again, then a PONG between two
	// pushes; c2: a confirmation before its only pushes.
	events := []PushEvent{{"c1", EventConfirm, 0}, {"c1", EventConfirm, ms(1200)}, {"c1", EventDelivery, ms(1201)},
		{"c1", EventReply, ms(1202)}, {"c1", EventDelivery, ms(1203)}, {"c2", EventConfirm, ms(1300)}, {"c2", EventDelivery, ms(1301)}, {"c2", EventDelivery, ms(1302)}}
	run := func(delivered []Push, confirmed []Sub) PushRun {
		return PushRun{Published: pub, Delivered: delivered, Wanted: wanted, Confirmed: confirmed, Events: events, MinPublished: 3, MinIdle: time.Second}
	}
	with := func(es []PushEvent) PushRun { r := run(pub, wanted); r.Events = es; return r }
	for _, tc := range []struct {
		name string
		run  PushRun
		want Status
	}{
		{"exact", run(pub, wanted), Pass},
		{"misrouted by prefix", run([]Push{pub[0], {"message", "a", "p2"}, pub[2]}, wanted), Fail},
		{"wrong kind", run([]Push{pub[0], pub[1], {"message", "a", "p3"}}, wanted), Fail},
		{"duplicate", run(append(pub, pub[1]), wanted), Fail},
		{"lost", run(pub[:2], wanted), Fail},
		{"foreign", run(append(pub, Push{"message", "a", "zz"}), wanted), Fail},
		{"unconfirmed", run(pub, wanted[:2]), Fail},
		// The reply after the last push, or between pushes of another
		// connection, is no interleaving.
		{"no interleaving", with([]PushEvent{events[0], events[1], events[2], events[4], {"c1", EventReply, ms(1204)}, {"c2", EventReply, ms(1202)}}), Unknown},
		{"never idle", with([]PushEvent{events[0], {"c1", EventDelivery, ms(600)}, events[1], events[2], events[3], events[4]}), Unknown},
		{"idle but no confirmation after", with([]PushEvent{events[0], {"c1", EventDelivery, ms(1200)}, events[3], {"c1", EventDelivery, ms(1203)}}), Unknown},
		{"too few", func() PushRun { r := run(pub, wanted); r.MinPublished = 10; return r }(), Unknown},
	} {
		if got := resp3Push(tc.run); got.Status != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Status, got.Message, tc.want)
		}
	}
}
