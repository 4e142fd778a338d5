// want: go/multi-key-cmd
// valkey-go builder with two keys: its cluster client panics before sending
// (docs/FINDINGS.md); a standalone client sends it and nothing notices.
package bad

import (
	"context"

	"github.com/valkey-io/valkey-go"
)

func online(ctx context.Context, c valkey.Client, a, b string) ([]string, error) {
	return c.Do(ctx, c.B().Mget().Key("presence:"+a, "presence:"+b).Build()).AsStrSlice()
}
