package marconi

import (
	"slices"
	"testing"
)

// TestParseClusterNodes: the listener subscribes to primaries that serve
// slots and configures every reachable node, replicas included (§5), so a
// promoted replica already announces expiries.
func TestParseClusterNodes(t *testing.T) {
	text := "a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n" +
		"b1 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922\n" +
		"c1 127.0.0.1:7002@17002,host master - 0 0 3 connected 10923-16383\n" +
		"a2 127.0.0.1:7003@17003 slave a1 0 0 1 connected\n" +
		"b2 127.0.0.1:7004@17004 slave,fail b1 0 0 2 disconnected\n" +
		"d1 127.0.0.1:7005@17005 master - 0 0 4 connected\n" // no slots: not serving
	primaries, nodes := parseClusterNodes(text)
	if want := []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}; !slices.Equal(primaries, want) {
		t.Errorf("primaries %v, want %v", primaries, want)
	}
	if want := []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003", "127.0.0.1:7005"}; !slices.Equal(nodes, want) {
		t.Errorf("nodes %v, want %v (failed node left out, replica kept)", nodes, want)
	}
}
