// want: go/runtime-keys
// A slice made to length and written element by element in a loop (the warm-up's
// shape): the keys are whatever the loop wrote, so no slot is provable from the source.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func load(ctx context.Context, p client.Pool, tenant string, members []string) (any, error) {
	keys := make([]string, len(members))
	for i, m := range members {
		keys[i] = tenant + ":session:" + m
	}
	return p.Do(ctx, client.NewCmd("MGET", keys))
}
