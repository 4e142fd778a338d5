// want: go/script-keys
// Keys gathered by append: the rule follows the variable through every append.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func renew(ctx context.Context, p client.Pool, s *client.Script, lease, generation string) error {
	var keys []string
	keys = append(keys, lease)
	keys = append(keys, generation)
	_, _, err := client.RunScript(ctx, p, s, keys)
	return err
}
