package judge

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/check/checktest"
	"github.com/slotgate/slotgate/history"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// mop is a fleet call of session c:s by owner, [call, ret] ms.
func mop(kind history.FencingOpKind, owner string, gen int64, ok bool, call, ret int) history.MigrationOp {
	return history.MigrationOp{FencingOp: history.FencingOp{Session: "c:s", Kind: kind, Owner: owner, Gen: gen, OK: ok, Call: ms(call), Return: ms(ret)}, Pod: owner}
}

// judged is checktest.Judged: c on in, its stored call replayed.
func judged[In any](t *testing.T, c check.Checker[In], in In) check.Result {
	t.Helper()
	return checktest.Judged(t, c, in)
}

// Histories written before the checkers were defined here stored the
// reflective calls under the old Go names, one input per argument: each
// replays through its alias to what the typed checker gives.
func TestStoredCallsReplayThroughAliases(t *testing.T) {
	raw := func(v ...any) []json.RawMessage { return checktest.Inputs(t, v...) }
	fork := []history.FencingOp{
		acquired(0, "s", "pod-0", 1, 0),
		acquired(1, "s", "pod-1", 1, 50),
		{Client: 0, Session: "s", Kind: history.OpRenew, Owner: "pod-0", Gen: 1, OK: false, Call: at(60), Return: at(61)},
	}
	windows := []history.FaultWindow{{Fault: "node/failover-kill", Target: "p0→p0r0", Start: at(5), End: at(55)}}
	deploy := []history.MigrationOp{
		mop(history.OpAcquire, "p0", 1, true, 0, 2),
		mop(history.OpRenew, "p0", 1, true, 30, 31),
		mop(history.OpAcquire, "p1", 1, true, 320, 321),
		mop(history.OpKnown, "audit", 1, true, 500, 501),
	}
	samples := []history.KeyspaceSample{{At: ms(10)}, {At: ms(400)}}
	deployWindows := []history.FaultWindow{{Fault: "sentinel-failover", Target: "p0→r0", Start: ms(20), End: ms(300)}}
	deployPremise := MigrationFailoverPremise{TTL: 100 * time.Millisecond, Slack: 5 * time.Millisecond, MinCalledInside: 0, MinSamples: 2,
		Aims: []Aim{{Step: "backfill", Start: ms(25), End: ms(200)}}}
	leases := []history.MigrationOp{
		mop(history.OpAcquire, "p0", 1, true, 0, 2),
		mop(history.OpRenew, "p0", 1, true, 100, 101),
		func() history.MigrationOp {
			o := mop(history.OpRenew, "p0", 1, false, 150, 170)
			o.Unknown = true
			return o
		}(),
		mop(history.OpRenew, "p0", 1, false, 420, 421),
	}
	leaseWindows := []history.FaultWindow{{Fault: "kill", Target: "p0", Start: ms(110), End: ms(180)}}
	for _, c := range []struct {
		old   string
		input []json.RawMessage
		want  check.Result
	}{
		{"FencingAcrossFailover", raw(fork, windows, failoverPremise), FencingAcrossFailover.Judge(FailoverRun{fork, windows, failoverPremise})},
		{"DirectoryResumes", raw(fork, windows, 5*time.Millisecond), DirectoryResumes.Judge(ResumeRun{fork, windows, 5 * time.Millisecond})},
		{"MigrationAcrossFailover", raw(deploy, samples, deployWindows, deployPremise), MigrationAcrossFailover.Judge(DeployRun{deploy, samples, deployWindows, deployPremise})},
		{"LeasesKeptAcrossFailover", raw(leases, leaseWindows, 300*time.Millisecond, 5*time.Millisecond), LeasesKeptAcrossFailover.Judge(LeaseRun{leases, leaseWindows, 300 * time.Millisecond, 5 * time.Millisecond})},
	} {
		if c.want.Status != check.Fail {
			t.Errorf("%s: the stored call should judge a bad history, got %s %q", c.old, c.want.Status, c.want.Message)
		}
		checktest.ReplaysTo(t, history.Call{Checker: c.old, Input: c.input}, c.want)
	}
}
