// want: go/script-keys
// fencing.MisTaggedKeys written inline: both keys look tagged, but the generation's tag is
// narrower, so the pair spans slots — invisible on a standalone node, CROSSSLOT at G3.
package bad

import (
	"context"
	"fmt"

	"github.com/slotgate/slotgate/impl/client"
)

func acquire(ctx context.Context, p client.Pool, s *client.Script, community, id string) error {
	keys := []string{
		fmt.Sprintf("buzz:tunnel:{%s:%s}:lease", community, id),
		fmt.Sprintf("buzz:tunnel:{%s}:%s:generation", community, id),
	}
	_, _, err := client.RunScript(ctx, p, s, keys, "owner")
	return err
}
