package judge

import (
	"testing"

	"github.com/slotgate/slotgate/check"
)

func TestMarconiReleasedUnindexed(t *testing.T) {
	gone := []MeshIndexProbe{
		{SessionID: "s1", Tenant: "acme", Index: "marconi:sessidx:{acme}"},
		{SessionID: "s2", Tenant: "acme", Index: "marconi:sessidx:{acme}"},
	}
	if r := marconiReleasedUnindexed(gone, 2); r.Status != check.Pass {
		t.Fatalf("every released session unindexed: %v %s", r.Status, r.Message)
	}
	kept := append([]MeshIndexProbe(nil), gone...)
	kept[1].Member, kept[1].Score = true, 1.7e12
	r := marconiReleasedUnindexed(kept, 2)
	if r.Status != check.Fail {
		t.Fatalf("a released session still indexed (release.lua's ZREM dropped): want fail, got %v %s", r.Status, r.Message)
	}
	if r := marconiReleasedUnindexed(gone[:1], 2); r.Status != check.Unknown {
		t.Fatalf("too few released sessions probed: want unknown, got %v", r.Status)
	}
	if r := marconiReleasedUnindexed(nil, 0); r.Status != check.Unknown {
		t.Fatalf("nothing probed: want unknown, got %v", r.Status)
	}
}
