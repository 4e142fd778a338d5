package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/check/checktest"
	"github.com/slotgate/slotgate/history"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func mop(kind history.FencingOpKind, owner string, gen int64, ok bool, call, ret int) history.MigrationOp {
	return history.MigrationOp{FencingOp: history.FencingOp{Session: "c:s", Kind: kind, Owner: owner, Gen: gen, OK: ok, Call: ms(call), Return: ms(ret)}, Pod: owner}
}

// judged is checktest.Judged: c on in, its stored call replayed.
func judged[In any](t *testing.T, c check.Checker[In], in In) check.Result {
	t.Helper()
	return checktest.Judged(t, c, in)
}
