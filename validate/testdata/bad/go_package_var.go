// want: go/multi-key-cmd
// Keys declared at package level are followed too.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

var peers = []string{"mesh:ready:a", "mesh:ready:b"}

func ready(ctx context.Context, p client.Pool) (any, error) {
	return p.Do(ctx, client.NewCmd("EXISTS", peers))
}
