package check

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
)

func at(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// acquired is an acknowledged acquire of session s by owner at gen, [call, call+1ms].
func acquired(client int, s, owner string, gen int64, call int) history.FencingOp {
	return history.FencingOp{Client: client, Session: s, Kind: history.OpAcquire, Owner: owner, Gen: gen, OK: true, Call: at(call), Return: at(call + 1)}
}

// An unknown release may have happened: the next owner is not a second one.
func TestSingleAuthorityExcusesUnknownRelease(t *testing.T) {
	ops := []history.FencingOp{
		acquired(0, "s", "pod-0", 1, 0),
		{Client: 0, Session: "s", Kind: history.OpRelease, Owner: "pod-0", Gen: 1, Unknown: true, Call: at(10), Return: at(20)},
		acquired(1, "s", "pod-1", 2, 30),
	}
	if r := SingleAuthority(ops); r.Status != Pass {
		t.Fatalf("want pass, got %s: %s", r.Status, r.Message)
	}
	ops[1].Unknown, ops[1].OK = false, false // a refused release: pod-0 still holds
	if r := SingleAuthority(ops); r.Status != Fail {
		t.Fatalf("want fail, got %s: %s", r.Status, r.Message)
	}
}

// An unknown release ends its holder's provable tenure at its call: an
// acquire that returned while the release was still pending is no second owner.
func TestSingleAuthorityUnknownReleaseAtCall(t *testing.T) {
	ops := []history.FencingOp{
		acquired(0, "s", "pod-0", 1, 0),
		{Client: 0, Session: "s", Kind: history.OpRelease, Owner: "pod-0", Gen: 1, Unknown: true, Call: at(10), Return: at(500)},
		acquired(1, "s", "pod-1", 2, 100),
	}
	if r := SingleAuthority(ops); r.Status != Pass {
		t.Fatalf("want pass, got %s: %s", r.Status, r.Message)
	}
}
