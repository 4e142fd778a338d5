package check_test

import (
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

const clientList = `id=3 addr=127.0.0.1:5000 laddr=127.0.0.1:7000 fd=8 name=slotgate-pool age=1 idle=0 flags=N db=0 resp=2 lib-name= lib-ver=
id=4 addr=127.0.0.1:5001 laddr=127.0.0.1:7000 fd=9 name=slotgate-pool age=1 idle=0 flags=N db=0 resp=2 lib-name= lib-ver=
id=5 addr=127.0.0.1:5002 laddr=127.0.0.1:7000 fd=10 name= age=1 idle=0 flags=N db=0 resp=3 lib-name= lib-ver=
`

func TestParseClientList(t *testing.T) {
	conns := check.ParseClientList("n0", clientList)
	if len(conns) != 3 || conns[0].Name != "slotgate-pool" || conns[0].Resp != 2 || conns[2].Name != "" || conns[2].Resp != 3 || conns[1].ID != "4" || conns[1].Node != "n0" {
		t.Fatalf("ParseClientList = %+v", conns)
	}
}

func TestNegotiatedProtocol(t *testing.T) {
	conns := append(check.ParseClientList("n0", clientList), check.ParseClientList("n1", clientList)...)
	nodes := []string{"n0", "n1"}
	if r := check.NegotiatedProtocol(conns, "slotgate-pool", 2, nodes); r.Status != check.Pass {
		t.Errorf("RESP2 pool checked as RESP2: %v %s", r.Status, r.Message)
	}
	// The unnamed resp=3 connection is not the pool's: ignored either way.
	if r := check.NegotiatedProtocol(conns, "slotgate-pool", 3, nodes); r.Status != check.Fail {
		t.Errorf("RESP2 pool checked as RESP3: %v %s, want fail", r.Status, r.Message)
	}
	if r := check.NegotiatedProtocol(conns, "slotgate-pool", 2, append(nodes, "n2")); r.Status != check.Unknown {
		t.Errorf("node without a pool connection: %v, want unknown", r.Status)
	}
	if r := check.NegotiatedProtocol(nil, "slotgate-pool", 2, nil); r.Status != check.Unknown {
		t.Errorf("no connections: %v, want unknown", r.Status)
	}
}

func TestReplyShapes(t *testing.T) {
	good2 := []history.ShapeRead{
		{Op: "ZSCORE", Key: "z", Shape: "string", Want: "1.5", Got: "1.5"},
		{Op: "HGETALL", Key: "h", Shape: "array", Want: "f=v", Got: "f=v"},
	}
	if r := check.ReplyShapes(good2, 2, 2); r.Status != check.Pass {
		t.Errorf("good RESP2 reads: %v %s", r.Status, r.Message)
	}
	if r := check.ReplyShapes(good2, 3, 2); r.Status != check.Fail {
		t.Errorf("RESP2 shapes judged as RESP3: %v, want fail", r.Status)
	}
	if r := check.ReplyShapes(good2, 2, 3); r.Status != check.Unknown {
		t.Errorf("too few reads: %v, want unknown", r.Status)
	}
	naive := []history.ShapeRead{{Op: "ZSCORE", Key: "z", Shape: "string", Want: "1.5", DecodeErr: "want float64, got string"}}
	if r := check.ReplyShapes(naive, 2, 1); r.Status != check.Fail || check.DecodeErrors(naive) != 1 {
		t.Errorf("decode error: %v, want fail", r.Status)
	}
	wrong := []history.ShapeRead{{Op: "HGETALL", Key: "h", Shape: "map", Want: "f=v", Got: "f=w"}}
	if r := check.ReplyShapes(wrong, 3, 1); r.Status != check.Fail || check.DecodeErrors(wrong) != 0 {
		t.Errorf("wrong value: %v, want fail", r.Status)
	}
	if r := check.ReplyShapes([]history.ShapeRead{{Op: "ZSCORE", Err: "MOVED"}}, 3, 1); r.Status != check.Fail {
		t.Errorf("command error: %v, want fail", r.Status)
	}
}
