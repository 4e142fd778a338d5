// want: go/multi-key-cmd
// The naive presence read: one MGET over pubkeys of every slot.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func online(ctx context.Context, p client.Pool, community string) (any, error) {
	keys := []string{"buzz:" + community + ":presence:alice", "buzz:" + community + ":presence:bob"}
	return p.Do(ctx, client.NewCmd("MGET", keys))
}
