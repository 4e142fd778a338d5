// want: go/multi-key-cmd go/bad-annotation
// A declaration must say why; a bare one declares nothing.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func both(ctx context.Context, p client.Pool, a, b string) (any, error) {
	//slotgate:same-slot
	return p.Do(ctx, client.NewCmd("MGET", []string{a, b}))
}
