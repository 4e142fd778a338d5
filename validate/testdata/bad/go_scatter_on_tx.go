// want: go/tx-keys go/bad-annotation
// A transaction cannot be declared a per-key scatter: the annotation is itself a finding and
// declares nothing.
package bad

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func move(ctx context.Context, rdb redis.UniversalClient, from, to string) error {
	//slotgate:per-key-scatter each counter reported alone
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Decr(ctx, from)
		p.Incr(ctx, to)
		return nil
	})
	return err
}
