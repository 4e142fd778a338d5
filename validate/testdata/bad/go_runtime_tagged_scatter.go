// want: go/runtime-keys go/bad-annotation
// A loop-built key slice on ONE command declared as a per-key scatter: a single command
// cannot scatter, so the declaration is misplaced and declares nothing.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func drop(ctx context.Context, p client.Pool, ids []string) error {
	var keys []string
	for _, id := range ids {
		keys = append(keys, "mesh:ready:"+id)
	}
	//slotgate:per-key-scatter each key's DEL result is reported
	_, err := p.Do(ctx, client.NewCmd("DEL", keys))
	return err
}
