package check_test

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func mop(kind history.FencingOpKind, owner string, gen int64, ok bool, call, ret int) history.MigrationOp {
	return history.MigrationOp{FencingOp: history.FencingOp{Session: "c:s", Kind: kind, Owner: owner, Gen: gen, OK: ok, Call: ms(call), Return: ms(ret)}, Pod: owner}
}

func TestMigrationSingleAuthority(t *testing.T) {
	ttl, slack := 100*time.Millisecond, 5*time.Millisecond
	good := []history.MigrationOp{
		mop(history.OpAcquire, "p0", 1, true, 0, 2),
		mop(history.OpRenew, "p0", 1, true, 30, 31),
		// p0 is killed; its lease expires by 130; p1 acquires after.
		mop(history.OpAcquire, "p1", 2, true, 140, 141),
		mop(history.OpRelease, "p1", 2, true, 150, 151),
		mop(history.OpAcquire, "p2", 3, true, 152, 153),
	}
	if r := check.MigrationSingleAuthority(good, ttl, slack); r.Status != check.Pass {
		t.Fatalf("good history: %v", r)
	}
	bad := append(good, mop(history.OpAcquire, "p3", 4, true, 60, 61)) // inside p0's renewed window
	if r := check.MigrationSingleAuthority(bad, ttl, slack); r.Status != check.Fail {
		t.Fatalf("fork not caught: %v", r)
	}
	// A release whose link was reset mid-call may have applied: an acquire
	// after it began is no fork. A release that certainly failed ends nothing.
	held := []history.MigrationOp{mop(history.OpAcquire, "p0", 1, true, 0, 2), mop(history.OpRenew, "p0", 1, true, 30, 31)}
	takeover := mop(history.OpAcquire, "p3", 4, true, 60, 61)
	unknownRelease := mop(history.OpRelease, "p0", 1, false, 40, 45)
	unknownRelease.Unknown = true
	if r := check.MigrationSingleAuthority(append(append(held, unknownRelease), takeover), ttl, slack); r.Status != check.Pass {
		t.Fatalf("acquire after an unknown-outcome release: %v", r)
	}
	if r := check.MigrationSingleAuthority(append(append(held, mop(history.OpRelease, "p0", 1, false, 40, 45)), takeover), ttl, slack); r.Status != check.Fail {
		t.Fatalf("a failed release ended the lease: %v", r)
	}
}

func TestMigrationGenerations(t *testing.T) {
	good := []history.MigrationOp{mop(history.OpAcquire, "p0", 1, true, 0, 2), mop(history.OpAcquire, "p1", 5, true, 10, 12), mop(history.OpAcquire, "p2", 6, true, 20, 22)}
	if r := check.MigrationGenerations(good); r.Status != check.Pass {
		t.Fatalf("good: %v", r)
	}
	reuse := append(good, mop(history.OpAcquire, "p3", 5, true, 30, 31))
	if r := check.MigrationGenerations(reuse); r.Status != check.Fail {
		t.Fatalf("reuse not caught: %v", r)
	}
	back := append(good, mop(history.OpAcquire, "p3", 4, true, 30, 31))
	if r := check.MigrationGenerations(back); r.Status != check.Fail {
		t.Fatalf("backwards not caught: %v", r)
	}
}

func TestObservedSingleAuthority(t *testing.T) {
	s := []history.KeyspaceSample{{At: ms(0), OldLeases: 5}, {At: ms(10), OldLeases: 2}, {At: ms(20), OldLeases: 0, Forks: []string{"x"}}}
	if r := check.ObservedSingleAuthority(s, 1); r.Status != check.Fail {
		t.Fatalf("fork: %v", r)
	}
	if r := check.ObservedSingleAuthority(s[:2], 1); r.Status != check.Pass {
		t.Fatalf("no fork: %v", r)
	}
}

func TestMigrationErrors(t *testing.T) {
	h := []history.MigrationOp{mop(history.OpAcquire, "p0", 1, true, 0, 1)}
	killed := mop(history.OpRenew, "p0", 1, false, 2, 3)
	killed.Unknown, killed.ErrKind, killed.Abandoned = true, "network", true
	h = append(h, killed)
	if r := check.MigrationErrors(h, 1); r.Status != check.Pass {
		t.Fatalf("abandoned: %v", r)
	}
	cross := mop(history.OpAcquire, "p1", 0, false, 2, 3)
	cross.Unknown, cross.ErrKind = true, "CROSSSLOT"
	if r := check.MigrationErrors(append(h, cross), 1); r.Status != check.Fail {
		t.Fatalf("crossslot: %v", r)
	}
}

func TestMigrationErrorsAround(t *testing.T) {
	h := []history.MigrationOp{mop(history.OpAcquire, "p0", 1, true, 0, 1)}
	reset := mop(history.OpRenew, "p0", 1, false, 50, 52)
	reset.Unknown, reset.ErrKind, reset.Err = true, check.ErrKindNetwork, "connection reset by peer"
	h = append(h, reset)
	win := []check.Span{{Start: ms(40), End: ms(45)}}
	if r := check.MigrationErrorsAround(h, win, ms(10), 1); r.Status != check.Pass {
		t.Fatalf("network error inside a window (+settle): %v", r)
	}
	if r := check.MigrationErrorsAround(h, win, 0, 1); r.Status != check.Fail {
		t.Fatalf("network error after the window, no settle: %v", r)
	}
	if r := check.MigrationErrors(h, 1); r.Status != check.Fail {
		t.Fatalf("network error with no window recorded: %v", r)
	}
	noscript := mop(history.OpAcquire, "p1", 0, false, 41, 42)
	noscript.Unknown, noscript.ErrKind = true, "NOSCRIPT"
	if r := check.MigrationErrorsAround(append(h, noscript), win, ms(10), 1); r.Status != check.Fail {
		t.Fatalf("a server error inside a window is not a fault-window error: %v", r)
	}
}
