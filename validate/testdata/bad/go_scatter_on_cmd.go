// want: go/multi-key-cmd go/bad-annotation
// One MGET is one command: it cannot scatter, whatever the comment says.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func online(ctx context.Context, p client.Pool, a, b string) (any, error) {
	//slotgate:per-key-scatter nil for a failed key
	return p.Do(ctx, client.NewCmd("MGET", []string{a, b}))
}
