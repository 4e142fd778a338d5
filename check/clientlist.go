package check

import (
	"strconv"
	"strings"
)

// ClientConn is one line of a node's CLIENT LIST: which node, the
// connection's CLIENT SETNAME name, the RESP version it negotiated (the
// resp= field; 0 when the line had none), and how many channels, patterns
// and shard channels it is subscribed to (sub=, psub=, ssub=).
type ClientConn struct {
	Node string
	ID   string
	Name string
	Resp int
	Sub  int
	PSub int
	SSub int
}

// ParseClientList reads the text of CLIENT LIST as answered by node.
func ParseClientList(node, text string) []ClientConn {
	// Over RESP3 the reply is a verbatim string, which valkey-go hands back
	// with its "txt:" format prefix: the first client's id would be lost.
	text = strings.TrimPrefix(text, "txt:")
	var out []ClientConn
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		c := ClientConn{Node: node}
		for _, f := range strings.Fields(line) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			switch k {
			case "id":
				c.ID = v
			case "name":
				c.Name = v
			case "resp":
				c.Resp, _ = strconv.Atoi(v)
			case "sub":
				c.Sub, _ = strconv.Atoi(v)
			case "psub":
				c.PSub, _ = strconv.Atoi(v)
			case "ssub":
				c.SSub, _ = strconv.Atoi(v)
			}
		}
		out = append(out, c)
	}
	return out
}
