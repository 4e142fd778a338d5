// want: go/runtime-keys
// valkey-go DoMulti over commands built in a loop: a pipeline across every slot its keys
// hash to, with no declaration of how a partial failure is reported.
package bad

import (
	"context"

	"github.com/valkey-io/valkey-go"
)

func reap(ctx context.Context, c valkey.Client, dead []string) []valkey.ValkeyResult {
	var cmds valkey.Commands
	for _, id := range dead {
		cmds = append(cmds, c.B().Del().Key("registry:record:"+id).Build())
	}
	return c.DoMulti(ctx, cmds...)
}
