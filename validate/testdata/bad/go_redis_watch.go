// want: go/tx-keys
// WATCH/MULTI over keys of two slots: an optimistic transaction is one slot or nothing.
package bad

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func transfer(ctx context.Context, rdb *redis.Client, from, to string) error {
	return rdb.Watch(ctx, func(tx *redis.Tx) error { return nil }, "balance:"+from, "balance:"+to)
}
