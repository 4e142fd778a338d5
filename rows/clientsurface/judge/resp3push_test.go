package judge

import (
	"testing"
	"time"
)

func TestRESP3Push(t *testing.T) {
	pub := []Push{{"message", "a", "p1"}, {"message", "ab", "p2"}, {"smessage", "a", "p3"}}
	wanted := []Sub{{"subscribe", "a"}, {"subscribe", "ab"}, {"ssubscribe", "a"}}
	run := func(delivered []Push, confirmed []Sub) PushRun {
		return PushRun{Published: pub, Delivered: delivered, Wanted: wanted, Confirmed: confirmed, Interleaved: 3, Idle: time.Second, MinPublished: 3, MinIdle: time.Second}
	}
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
		{"no interleaving", func() PushRun { r := run(pub, wanted); r.Interleaved = 0; return r }(), Unknown},
		{"too few", func() PushRun { r := run(pub, wanted); r.MinPublished = 10; return r }(), Unknown},
	} {
		if got := RESP3Push(tc.run); got.Status != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Status, got.Message, tc.want)
		}
	}
}
