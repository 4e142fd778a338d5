// want: go/tx-keys
// MULTI/EXEC over two slots: a transaction is atomic only within one slot.
package bad

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func move(ctx context.Context, rdb redis.UniversalClient, from, to string) error {
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Decr(ctx, from)
		p.Incr(ctx, to)
		return nil
	})
	return err
}
