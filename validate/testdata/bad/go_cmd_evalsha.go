// want: go/script-keys
// A hand-built EVALSHA (the EvalSHAOnly shape) over keys of two communities.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func validate(ctx context.Context, p client.Pool, sha string) (any, error) {
	keys := []string{"buzz:tunnel:{c1:s1}:lease", "buzz:tunnel:{c2:s1}:lease"}
	return p.Do(ctx, client.Cmd{Prefix: []string{"EVALSHA", sha, "2"}, Keys: keys})
}
