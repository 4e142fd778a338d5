// want: go/script-keys
// go-redis EvalSha with declared keys of two slots.
package bad

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func release(ctx context.Context, rdb redis.UniversalClient, sha, session string) error {
	return rdb.EvalSha(ctx, sha, []string{"lease:" + session, "generation:" + session}, "owner").Err()
}
