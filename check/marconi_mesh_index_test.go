package check

import (
	"testing"

	"github.com/slotgate/slotgate/history"
)

func TestMarconiReleasedUnindexed(t *testing.T) {
	gone := []history.MeshIndexProbe{
		{SessionID: "s1", Tenant: "acme", Index: "marconi:sessidx:{acme}"},
		{SessionID: "s2", Tenant: "acme", Index: "marconi:sessidx:{acme}"},
	}
	if r := MarconiReleasedUnindexed(gone, 2); r.Status != Pass {
		t.Fatalf("every released session unindexed: %v %s", r.Status, r.Message)
	}
	kept := append([]history.MeshIndexProbe(nil), gone...)
	kept[1].Member, kept[1].Score = true, 1.7e12
	r := MarconiReleasedUnindexed(kept, 2)
	if r.Status != Fail {
		t.Fatalf("a released session still indexed (release.lua's ZREM dropped): want fail, got %v %s", r.Status, r.Message)
	}
	if r := MarconiReleasedUnindexed(gone[:1], 2); r.Status != Unknown {
		t.Fatalf("too few released sessions probed: want unknown, got %v", r.Status)
	}
	if r := MarconiReleasedUnindexed(nil, 0); r.Status != Unknown {
		t.Fatalf("nothing probed: want unknown, got %v", r.Status)
	}
}
