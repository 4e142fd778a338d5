package audit

import (
	"strings"
	"testing"
)

// TestUpsertKeepsAcks: the obligations UPSERT never clears a recorded ack
// (an older stream entry archived after an ack's handoff), and still
// replaces every other column.
func TestUpsertKeepsAcks(t *testing.T) {
	cols := []string{"signal_id", "kind", "ack_received_at", "terminal_received_at", "durability_status"}
	s := upsertSQL("t_oblig_test", cols, []string{"signal_id"}, true)
	for _, want := range []string{
		"ack_received_at = COALESCE(EXCLUDED.ack_received_at, t_oblig_test.ack_received_at)",
		"terminal_received_at = COALESCE(EXCLUDED.terminal_received_at, t_oblig_test.terminal_received_at)",
		"durability_status = EXCLUDED.durability_status",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("%s\nlacks %s", s, want)
		}
	}
	if strings.Contains(s, "signal_id = ") {
		t.Errorf("the key is updated: %s", s)
	}
}
