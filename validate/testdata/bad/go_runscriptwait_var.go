// want: go/script-keys
// The un-tagged fencing pair run as one script in the durability mode
// (script, barrier, WAIT): CROSSSLOT on any cluster-enabled node as the
// plain call is (spec 000 §Axioms A2).
package bad

import (
	"context"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

func acquireDurable(ctx context.Context, p client.Pool, s *client.Script, community, session string) error {
	base := "buzz:" + community + ":tunnel:" + session
	keys := []string{base + ":lease", base + ":generation"}
	_, _, err := client.RunScriptWait(ctx, p, s, keys, base+":lease:durability-barrier", 1, time.Second, "owner")
	return err
}
