// want: go/runtime-keys
// A script's KEYS from a parameter: whatever a caller built at run time. Without a
// declaration at the call site (or a tag the validator can see) it is unproven.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func run(ctx context.Context, p client.Pool, s *client.Script, keys []string) error {
	_, _, err := client.RunScript(ctx, p, s, keys)
	return err
}
