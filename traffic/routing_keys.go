package traffic

import (
	"fmt"

	"github.com/slotgate/slotgate/impl/slot"
)

// RoutingKeys are one worker's keys, all under one hash tag so they live in
// one slot: a register (SET/GET), a counter (INCR) and a pair written and
// read by Lua.
type RoutingKeys struct {
	Slot           int
	Reg, Ctr, A, B string
}

// RoutingKeysIn returns keys under a hash tag that hashes to slot s, with a
// prefix naming the run (a seeded search over a numeric suffix).
func RoutingKeysIn(prefix string, s int) RoutingKeys {
	for i := 0; ; i++ {
		tag := fmt.Sprintf("%s-%d", prefix, i)
		if slot.Of("{"+tag+"}") == s {
			k := "rt:{" + tag + "}:"
			return RoutingKeys{Slot: s, Reg: k + "reg", Ctr: k + "ctr", A: k + "a", B: k + "b"}
		}
	}
}
