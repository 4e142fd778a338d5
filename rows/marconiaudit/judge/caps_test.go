package judge

import (
	"testing"

	"github.com/slotgate/slotgate/check"
)

func TestAuditCapsExact(t *testing.T) {
	good := AuditCapHistory{Name: "bytes", Policy: AuditPolicyRejectNew, MaxEntries: 100, MaxBytes: 4000, EntrySize: 1000,
		Kept: []bool{true, true, true, true, false, false}, Depth: 4, Bytes: 4000, Dropped: 2}
	if r := capsExact([]AuditCapHistory{good}); r.Status != check.Pass {
		t.Fatalf("exact caps: %+v", r)
	}
	// max_bytes read as exclusive: three fit where four should.
	short := good
	short.Kept, short.Depth, short.Bytes, short.Dropped = []bool{true, true, true, false, false, false}, 3, 3000, 3
	if r := capsExact([]AuditCapHistory{short}); r.Status != check.Fail {
		t.Fatalf("one short: %+v", r)
	}
	// Oldest keeps every new entry and evicts: only depth and count judge it.
	oldest := AuditCapHistory{Name: "entries", Policy: AuditPolicyOldest, MaxEntries: 3, MaxBytes: 9000, EntrySize: 1000,
		Kept: []bool{true, true, true, true, true}, Depth: 3, Bytes: 3000, Dropped: 2}
	if r := capsExact([]AuditCapHistory{oldest}); r.Status != check.Pass {
		t.Fatalf("oldest at max_entries: %+v", r)
	}
	over := oldest
	over.Depth, over.Bytes, over.Dropped = 4, 4000, 1
	if r := capsExact([]AuditCapHistory{over}); r.Status != check.Fail {
		t.Fatalf("one over: %+v", r)
	}
	// Not a whole number of entries, or never full: undecided.
	odd := good
	odd.MaxBytes = 4500
	if r := capsExact([]AuditCapHistory{odd}); r.Status != check.Unknown {
		t.Fatalf("inexact bound: %+v", r)
	}
	few := good
	few.Kept = few.Kept[:4]
	if r := capsExact([]AuditCapHistory{few}); r.Status != check.Unknown {
		t.Fatalf("never full: %+v", r)
	}
}
