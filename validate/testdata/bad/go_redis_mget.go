// want: go/multi-key-cmd
// go-redis MGet across slots: sent as is, CROSSSLOT from a cluster (docs/FINDINGS.md).
package bad

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func online(ctx context.Context, rdb redis.UniversalClient, a, b string) ([]any, error) {
	return rdb.MGet(ctx, "buzz:c:presence:"+a, "buzz:c:presence:"+b).Result()
}
