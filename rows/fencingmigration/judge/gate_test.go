package judge

import (
	"testing"

	"github.com/slotgate/slotgate/check"
)

func TestGateDoors(t *testing.T) {
	ok := []DoorStep{{Action: "EnterCompatible", From: "disabled", To: "compatible", FleetC: true}, {Action: "Enable", From: "compatible", To: "enabled", FleetC: true}}
	if r := judged(t, GateDoors, ok); r.Status != check.Pass {
		t.Fatalf("the ladder: %s %s", r.Status, r.Message)
	}
	skipped := append(ok, DoorStep{Action: "Enable", From: "disabled", To: "enabled", FleetC: true})
	if r := gateDoors(skipped); r.Status != check.Fail {
		t.Fatalf("disabled → enabled: %s, want fail", r.Status)
	}
	if r := gateDoors([]DoorStep{{Action: "Enable", From: "compatible", To: "enabled"}}); r.Status != check.Fail {
		t.Fatalf("enabled with the fleet off C: %s, want fail", r.Status)
	}
	if r := gateDoors(ok[:1]); r.Status != check.Fail {
		t.Fatalf("G4 never opened: %s, want fail", r.Status)
	}
	// No allowed mode change at all: the gate is stuck closed.
	if r := gateDoors(nil); r.Status != check.Fail {
		t.Fatalf("no mode change allowed: %s, want fail", r.Status)
	}
}
