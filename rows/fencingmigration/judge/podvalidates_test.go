package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func TestPodValidates(t *testing.T) {
	ms := time.Millisecond
	op := func(kind history.FencingOpKind, owner string, gen int64, ok bool, verdict int, call time.Duration) history.MigrationOp {
		return history.MigrationOp{FencingOp: history.FencingOp{Session: "s", Kind: kind, Owner: owner, Gen: gen, OK: ok, Verdict: verdict, Call: call, Return: call + ms}, Pod: owner, Phase: "A", Lane: "reliable"}
	}
	h := []history.MigrationOp{
		op(history.OpAcquire, "a", 1, true, 0, 0),
		op(history.OpValidate, "a", 1, false, 1, 10*ms),  // certainly live: valid
		op(history.OpRelease, "a", 1, true, 0, 20*ms),    // released
		op(history.OpValidate, "a", 1, false, -1, 30*ms), // not judged
		op(history.OpAcquire, "b", 2, true, 0, 40*ms),
		op(history.OpValidate, "a", 1, false, 0, 50*ms), // below an acknowledged 2: stale
		op(history.OpValidate, "b", 2, false, 1, 60*ms),
	}
	if r := judged(t, PodValidates, PodValidatesInput{Ops: h, TTL: 600 * ms, Slack: 20 * ms, MinJudged: 3}); r.Status != check.Pass {
		t.Fatalf("correct: %s %s", r.Status, r.Message)
	}
	if r := podValidates(h, 600*ms, 20*ms, 4); r.Status != check.Unknown {
		t.Fatalf("too few judged: %s %s", r.Status, r.Message)
	}
	bad := append([]history.MigrationOp(nil), h...)
	bad[1].Verdict = -1 // a live own frame refused (validate-one-pair under A)
	bad[5].Verdict = -1 // a stale frame not called stale (off by one)
	if r := podValidates(bad, 600*ms, 20*ms, 1); r.Status != check.Fail || !strings.HasPrefix(r.Message, "2 of 3") {
		t.Fatalf("bad: %s %s", r.Status, r.Message)
	}
}

func TestPodValidatesOn(t *testing.T) {
	r := judged(t, PodValidatesOn, PodValidatesOnInput{Lane: "huddle", TTL: time.Second, Slack: 100 * time.Millisecond, MinJudged: 5})
	want := podValidates(nil, time.Second, 100*time.Millisecond, 5)
	if r.Status != want.Status || r.Message != "huddle lane: "+want.Message {
		t.Fatalf("lane prefix: %s %q, want %s %q", r.Status, r.Message, want.Status, "huddle lane: "+want.Message)
	}
}
