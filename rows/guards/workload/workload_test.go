package workload

import (
	"testing"

	"github.com/slotgate/slotgate/impl/guard"
	"github.com/slotgate/slotgate/impl/slot"
)

// Every guard key of a Community lands in the slot it was drawn for, so a
// move of that slot moves all of them.
func TestCommunityKeysShareTheSlot(t *testing.T) {
	for _, s := range []int{0, 7, 9448, slot.Count - 1} {
		c := Community("ok-go-redis", s)
		for _, k := range []string{guard.ReplayKey(c, "ev-0-1"), guard.RateKey(c, "sub-3-2")} {
			if got := slot.Of(k); got != s {
				t.Errorf("%s hashes to slot %d, want %d", k, got, s)
			}
		}
	}
}
