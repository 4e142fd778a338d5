package judge

import (
	"fmt"
	"strings"

	"github.com/slotgate/slotgate/check"
)

// DoorStep is one mode change the gate allowed: in the explicit-state
// model's reachable state space (model/, which asks impl/gate itself), from
// mode From to mode To by action Action, with FleetC saying whether every
// pod ran C in the state it left.
type DoorStep struct {
	Action   string
	From, To string
	FleetC   bool
}

// gateDoors judges the deployment gate's mode doors (spec 000 §The
// protocol, G3/G4; §Deployment Gate): the one-way door to enabled is
// entered only from compatible and with the whole fleet on C — enabling
// straight from disabled skips the stage that can still be reverted and the
// T3 checks made at G3 — and it does open: some allowed step reaches
// enabled. A gate that never lets a fully-C, compatible fleet through G4
// strands every migration short of its end; the model's state space holds
// such a fleet whenever the gate is right (model's own tests pin it).
//
// steps are the mode changes the gate ALLOWED, so none at all is a gate
// stuck closed — a failure, never an unknown: the model's reachable states
// always hold a fully-C, compatible fleet asking for G4 (model's own tests
// pin it).
func gateDoors(steps []DoorStep) check.Result {
	const name = "gate-doors"
	var bad []string
	opened := 0
	for _, s := range steps {
		if s.To != "enabled" || s.From == "enabled" {
			continue
		}
		opened++
		if s.From != "compatible" || !s.FleetC {
			bad = append(bad, fmt.Sprintf("%s: %s → enabled with the fleet %s", s.Action, s.From, map[bool]string{true: "on C", false: "not all on C"}[s.FleetC]))
		}
	}
	switch {
	case len(bad) > 0:
		return check.Failf(name, strings.Join(check.Elide(bad, 5), "\n"), "the gate opened the G4 door %d times not from compatible with the whole fleet on C", len(bad))
	case opened == 0:
		return check.Failf(name, "", "the gate never opened the G4 door: no allowed step of %d mode changes reaches enabled", len(steps))
	}
	return check.Passf(name, "%d mode changes; the G4 door opened %d times, each from compatible with the whole fleet on C", len(steps), opened)
}
