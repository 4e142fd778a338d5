// want: go/script-keys
// (*redis.Script).Run with a key slice built in the function.
package bad

import (
	"context"

	"github.com/redis/go-redis/v9"
)

var renewScript = redis.NewScript(`return redis.call('PEXPIRE', KEYS[1], ARGV[1])`)

func renew(ctx context.Context, rdb redis.UniversalClient, session string) error {
	keys := []string{"buzz:tunnel:" + session + ":lease", "buzz:tunnel:" + session + ":generation"}
	return renewScript.Run(ctx, rdb, keys, 30000).Err()
}
