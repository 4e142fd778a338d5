// want: go/runtime-keys
// Keys appended in a loop: one append site looks like one key, yet the slice holds as many
// keys as the loop ran, each in whatever slot its id hashes to. Unproven unless declared.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func records(ctx context.Context, p client.Pool, ids []string) (any, error) {
	var keys []string
	for _, id := range ids {
		keys = append(keys, "mesh:record:"+id)
	}
	return p.Do(ctx, client.NewCmd("MGET", keys))
}
