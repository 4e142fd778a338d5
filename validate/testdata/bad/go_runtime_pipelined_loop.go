// want: go/runtime-keys
// A go-redis pipeline whose commands are queued in a loop: the rule sees one queued key,
// the pipeline carries one per element, across any number of slots.
package bad

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func expire(ctx context.Context, rdb redis.UniversalClient, ids []string) error {
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			p.Del(ctx, "presence:"+id)
		}
		return nil
	})
	return err
}
