package telemetry

import (
	"testing"

	"github.com/slotgate/slotgate/impl/slot"
)

func TestParseRedirect(t *testing.T) {
	s, addr, ok := ParseRedirect("MOVED 3999 127.0.0.1:6381")
	if !ok || s != 3999 || addr != "127.0.0.1:6381" {
		t.Fatalf("MOVED: %d %q %v", s, addr, ok)
	}
	if _, _, ok := ParseRedirect("ASK 16384 127.0.0.1:1"); ok {
		t.Fatal("slot out of range accepted")
	}
	if _, _, ok := ParseRedirect("TRYAGAIN Multiple keys request during rehashing of slot"); ok {
		t.Fatal("TRYAGAIN names no target")
	}
}

func TestParseClusterSlots(t *testing.T) {
	reply := []any{
		[]any{int64(0), int64(5460), []any{"127.0.0.1", int64(7000), "id0"}},
		[]any{int64(5461), int64(16383), []any{"127.0.0.1", "7001", "id1"}, []any{"127.0.0.1", int64(7002), "id2"}},
	}
	owners, err := ParseClusterSlots(reply)
	if err != nil {
		t.Fatal(err)
	}
	if owners[0] != "127.0.0.1:7000" || owners[5460] != "127.0.0.1:7000" || owners[5461] != "127.0.0.1:7001" || owners[16383] != "127.0.0.1:7001" {
		t.Fatalf("owners: %q %q %q %q", owners[0], owners[5460], owners[5461], owners[16383])
	}
	if _, err := ParseClusterSlots([]any{[]any{int64(0)}}); err == nil {
		t.Fatal("malformed range accepted")
	}
}

// The whole-key mutant must actually disagree with the hash-tag rule on a
// tagged key, or the row's control would be vacuous.
func TestWholeKeyMutantIgnoresTag(t *testing.T) {
	good, bad := New(Options{}), New(Options{Mutant: MutantWholeKeySlot})
	a, b := "{user1}:a", "{user1}:b"
	if good.SlotOf(a) != slot.Of("user1") || good.SlotOf(a) != good.SlotOf(b) {
		t.Fatal("correct instrument does not follow the hash tag")
	}
	if bad.SlotOf(a) == bad.SlotOf(b) {
		t.Fatal("mutant attributes two tagged keys to one slot")
	}
}
