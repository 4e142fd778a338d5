// want: go/pipeline-keys
// valkey-go DoMulti over two slots, undeclared.
package bad

import (
	"context"

	"github.com/valkey-io/valkey-go"
)

func heartbeat(ctx context.Context, c valkey.Client, id string) []valkey.ValkeyResult {
	return c.DoMulti(ctx,
		c.B().Set().Key("mesh:ready:"+id).Value("1").Build(),
		c.B().Zadd().Key("mesh:index").ScoreMember().ScoreMember(1, id).Build(),
	)
}
