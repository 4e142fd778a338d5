// want: go/multi-key-cmd go/bad-annotation
// Only the three documented directives exist; a made-up one is reported and ignored.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func both(ctx context.Context, p client.Pool, a, b string) (any, error) {
	//slotgate:ignore it works on my standalone node
	return p.Do(ctx, client.NewCmd("DEL", []string{a, b}))
}
