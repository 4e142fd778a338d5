// want: go/tx-keys
// valkey-go MULTI/EXEC over two slots.
package bad

import (
	"context"

	"github.com/valkey-io/valkey-go"
)

func move(ctx context.Context, c valkey.Client, from, to string) []valkey.ValkeyResult {
	return c.DoMulti(ctx,
		c.B().Multi().Build(),
		c.B().Decr().Key(from).Build(),
		c.B().Incr().Key(to).Build(),
		c.B().Exec().Build(),
	)
}
