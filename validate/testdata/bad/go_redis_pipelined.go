// want: go/pipeline-keys
// A go-redis pipeline over two slots with no per-key-scatter declaration: on a cluster it is
// split per node and each part can fail alone, and nothing at the call site says so.
package bad

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func heartbeat(ctx context.Context, rdb redis.UniversalClient, id string) error {
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "mesh:ready:"+id, "1", 0)
		p.ZAdd(ctx, "mesh:index", redis.Z{Member: id})
		return nil
	})
	return err
}
