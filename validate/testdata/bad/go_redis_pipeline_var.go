// want: go/pipeline-keys
// The variable form of a go-redis pipeline.
package bad

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func both(ctx context.Context, rdb redis.UniversalClient, a, b string) error {
	pipe := rdb.Pipeline()
	pipe.Get(ctx, a)
	pipe.Get(ctx, b)
	_, err := pipe.Exec(ctx)
	return err
}
