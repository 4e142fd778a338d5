package judge

import "testing"

func TestConnLeak(t *testing.T) {
	samples := func(settled ...int) []ConnSample {
		out := []ConnSample{{Phase: PhaseBefore, Node: "p0", Conns: 2}}
		for r, c := range settled {
			out = append(out, ConnSample{Phase: PhaseChurned, Round: r + 1, Node: "p0", Conns: 4},
				ConnSample{Phase: PhaseSettled, Round: r + 1, Node: "p0", Conns: c})
		}
		return out
	}
	run := func(s []ConnSample) ConnRun {
		return ConnRun{Samples: s, Bound: 4, Rounds: 2, Calls: 500, Killed: 6, Failovers: 1, Refreshes: 3, MinRounds: 2, MinCalls: 200}
	}
	for _, tc := range []struct {
		name string
		run  ConnRun
		want Status
	}{
		{"bounded", run(samples(3, 4)), Pass},
		{"grows with refreshes", run(samples(4, 8)), Fail},
		{"over the bound while churning", run(append(samples(3, 3), ConnSample{Phase: PhaseChurned, Round: 2, Node: "r0", Conns: 5})), Fail},
		{"no connection after a settle", run(samples(3, 0)), Unknown},
		{"no churn", func() ConnRun { r := run(samples(3, 3)); r.Killed = 0; return r }(), Unknown},
		{"a round missing", func() ConnRun { r := run(samples(3)); return r }(), Unknown},
		{"a leak is caught even without churn", func() ConnRun { r := run(samples(9)); r.Calls = 0; return r }(), Fail},
	} {
		if got := connLeak(tc.run); got.Status != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Status, got.Message, tc.want)
		}
	}
}
