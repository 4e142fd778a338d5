// want: go/script-keys
// "{" + x + "}" is not a proof: x may be empty, and an empty tag hashes the whole key.
package bad

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

func acquire(ctx context.Context, p client.Pool, s *client.Script, x string) error {
	_, _, err := client.RunScript(ctx, p, s, []string{"{" + x + "}:lease", "{" + x + "}:generation"})
	return err
}
