// want: go/script-keys
// The un-tagged fencing pair held in a variable, then run as one script: CROSSSLOT on any
// cluster-enabled node (spec 000 §Axioms A2).
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func acquire(ctx context.Context, p client.Pool, s *client.Script, community, session string) error {
	base := "buzz:" + community + ":tunnel:" + session
	keys := []string{base + ":lease", base + ":generation"}
	_, _, err := client.RunScript(ctx, p, s, keys, "owner")
	return err
}
