package judge

import (
	"testing"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func dtRun(calls ...Call) DialTimeoutRun {
	return DialTimeoutRun{Calls: calls, From: ms(1000), To: ms(5000), Bound: ms(1700), Healthy: ms(400), MinTarget: 2}
}

func TestDialTimeoutBound(t *testing.T) {
	fast := []Call{
		{Shard: "p0", Target: true, Start: ms(1100), Took: ms(400), Err: "timeout"},
		{Shard: "p0", Target: true, Start: ms(1600), Took: ms(400), Err: "timeout"},
		{Shard: "p1", Start: ms(1200), Took: ms(2)},
		{Shard: "p0", Target: true, Start: ms(4900), Took: ms(300)}, // served after the heal
		{Shard: "p0", Target: true, Start: ms(500), Took: ms(2)},    // before the cut
	}
	for _, tc := range []struct {
		name string
		run  DialTimeoutRun
		want Status
	}{
		{"bounded", dtRun(fast...), Pass},
		{"hang across the cut", dtRun(append(fast, Call{Shard: "p0", Target: true, Start: ms(900), Took: ms(4200)})...), Fail},
		{"hang still running", dtRun(append(fast, Call{Shard: "p0", Target: true, Start: ms(3000), Took: ms(2500), Unfinished: true})...), Fail},
		{"impossible success", dtRun(append(fast, Call{Shard: "p0", Target: true, Start: ms(2000), Took: ms(5)})...), Fail},
		{"healthy stalled", dtRun(append(fast, Call{Shard: "p1", Start: ms(2000), Took: ms(450)})...), Fail},
		{"healthy failed", dtRun(append(fast, Call{Shard: "p1", Start: ms(2000), Took: ms(5), Err: "EOF"})...), Fail},
		{"too few target calls", dtRun(fast[2:]...), Unknown},
		{"no healthy call", dtRun(fast[:2]...), Unknown},
		{"window too short", func() DialTimeoutRun { r := dtRun(fast...); r.To = ms(3000); return r }(), Unknown},
	} {
		if got := dialTimeoutBound(tc.run); got.Status != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Status, got.Message, tc.want)
		}
	}
}
