package pubsub

import (
	"testing"

	"github.com/slotgate/slotgate/impl/slot"
)

// Spec 000 §Sharded Pub/Sub Conversion: no {community} tag, so one
// community's topics spread over slots instead of one hot node.
func TestTopicsCarryNoHashTag(t *testing.T) {
	slots := map[int]bool{}
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		topic := ChannelTopic("community", id)
		if slot.HashTag(topic) != topic {
			t.Fatalf("%s carries a hash tag", topic)
		}
		slots[slot.Of(topic)] = true
	}
	if len(slots) < 5 {
		t.Errorf("6 topics of one community share %d slots", len(slots))
	}
	for _, p := range Patterns {
		if !IsPattern(p) {
			t.Errorf("%s is not a pattern", p)
		}
	}
	if IsPattern(GlobalTopic("x")) {
		t.Error("a global topic is not a pattern")
	}
}
