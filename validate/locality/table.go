package locality

import (
	"context"
	"fmt"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/validate"
)

// ServerTable reads the command table of the Valkey behind p (COMMAND: every command's
// flags and first/last/step key positions) and returns it as the validator's table, named
// after addr and the server's version. The static validator and the twin then place keys
// exactly where that server does (spec 000 §Conformance, "Locality contract").
func ServerTable(ctx context.Context, p client.Pool, addr string) (*validate.Table, error) {
	version := "?"
	if info, err := p.Do(ctx, client.Cmd{Prefix: []string{"INFO", "server"}}); err == nil {
		if s, ok := info.(string); ok {
			version = serverVersion(s)
		}
	}
	reply, err := p.Do(ctx, client.Cmd{Prefix: []string{"COMMAND"}})
	if err != nil {
		return nil, fmt.Errorf("read COMMAND from %s: %w", addr, err)
	}
	return validate.TableFromCommand(addr+" (valkey "+version+")", reply)
}

// serverVersion picks valkey_version (or redis_version) out of INFO server.
func serverVersion(info string) string {
	for _, field := range []string{"valkey_version:", "redis_version:"} {
		if i := indexLine(info, field); i >= 0 {
			rest := info[i+len(field):]
			for j, c := range rest {
				if c == '\r' || c == '\n' {
					return rest[:j]
				}
			}
			return rest
		}
	}
	return "?"
}

func indexLine(s, prefix string) int {
	for i := 0; i+len(prefix) <= len(s); i++ {
		if (i == 0 || s[i-1] == '\n') && s[i:i+len(prefix)] == prefix {
			return i
		}
	}
	return -1
}
