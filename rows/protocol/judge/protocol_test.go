package judge

import (
	"encoding/json"
	"testing"

	"github.com/slotgate/slotgate/check"
)

const clientList = `id=3 addr=127.0.0.1:5000 laddr=127.0.0.1:7000 fd=8 name=slotgate-pool age=1 idle=0 flags=N db=0 resp=2 lib-name= lib-ver=
id=4 addr=127.0.0.1:5001 laddr=127.0.0.1:7000 fd=9 name=slotgate-pool age=1 idle=0 flags=N db=0 resp=2 lib-name= lib-ver=
id=5 addr=127.0.0.1:5002 laddr=127.0.0.1:7000 fd=10 name= age=1 idle=0 flags=N db=0 resp=3 lib-name= lib-ver=
`

func TestNegotiatedProtocol(t *testing.T) {
	conns := append(check.ParseClientList("n0", clientList), check.ParseClientList("n1", clientList)...)
	nodes := []string{"n0", "n1"}
	if r := negotiatedProtocol(conns, "slotgate-pool", 2, nodes); r.Status != check.Pass {
		t.Errorf("RESP2 pool checked as RESP2: %v %s", r.Status, r.Message)
	}
	// The unnamed resp=3 connection is not the pool's: ignored either way.
	if r := negotiatedProtocol(conns, "slotgate-pool", 3, nodes); r.Status != check.Fail {
		t.Errorf("RESP2 pool checked as RESP3: %v %s, want fail", r.Status, r.Message)
	}
	if r := negotiatedProtocol(conns, "slotgate-pool", 2, append(nodes, "n2")); r.Status != check.Unknown {
		t.Errorf("node without a pool connection: %v, want unknown", r.Status)
	}
	if r := negotiatedProtocol(nil, "slotgate-pool", 2, nil); r.Status != check.Unknown {
		t.Errorf("no connections: %v, want unknown", r.Status)
	}
}

func TestReplyShapes(t *testing.T) {
	good2 := []ShapeRead{
		{Op: "ZSCORE", Key: "z", Shape: "string", Want: "1.5", Got: "1.5"},
		{Op: "HGETALL", Key: "h", Shape: "array", Want: "f=v", Got: "f=v"},
	}
	if r := replyShapes(good2, 2, 2); r.Status != check.Pass {
		t.Errorf("good RESP2 reads: %v %s", r.Status, r.Message)
	}
	if r := replyShapes(good2, 3, 2); r.Status != check.Fail {
		t.Errorf("RESP2 shapes judged as RESP3: %v, want fail", r.Status)
	}
	if r := replyShapes(good2, 2, 3); r.Status != check.Unknown {
		t.Errorf("too few reads: %v, want unknown", r.Status)
	}
	naive := []ShapeRead{{Op: "ZSCORE", Key: "z", Shape: "string", Want: "1.5", DecodeErr: "want float64, got string"}}
	if r := replyShapes(naive, 2, 1); r.Status != check.Fail || DecodeErrors(naive) != 1 {
		t.Errorf("decode error: %v, want fail", r.Status)
	}
	wrong := []ShapeRead{{Op: "HGETALL", Key: "h", Shape: "map", Want: "f=v", Got: "f=w"}}
	if r := replyShapes(wrong, 3, 1); r.Status != check.Fail || DecodeErrors(wrong) != 0 {
		t.Errorf("wrong value: %v, want fail", r.Status)
	}
	if r := replyShapes([]ShapeRead{{Op: "ZSCORE", Err: "MOVED"}}, 3, 1); r.Status != check.Fail {
		t.Errorf("command error: %v, want fail", r.Status)
	}
}

func TestReplyShapesLoud(t *testing.T) {
	loud := []ShapeRead{{Op: "ZSCORE", Key: "k", Shape: "string", Want: "1.5", DecodeErr: "not a float64"}}
	if r := replyShapesLoud(loud, 2, 1); r.Status != check.Fail {
		t.Fatalf("a loud decode error must fail: %s %q", r.Status, r.Message)
	}
	silent := []ShapeRead{{Op: "ZSCORE", Key: "k", Shape: "string", Want: "1.5", Got: "0"}}
	if plain := replyShapes(silent, 2, 1); plain.Status != check.Fail {
		t.Fatalf("premise: a silently wrong value fails replyShapes, got %s", plain.Status)
	}
	if r := replyShapesLoud(silent, 2, 1); r.Status != check.Pass {
		t.Fatalf("a silently wrong value is not the loud failure modelled: %s", r.Status)
	}
}

// The checkers replay by their stable names and by the names histories
// stored them under before they were defined here: an old call holds one
// JSON input per argument of the reflective checker.
func TestProtocolCheckersReplay(t *testing.T) {
	reads := []ShapeRead{{Op: "ZSCORE", Key: "z", Shape: "string", Want: "1.5", DecodeErr: "want float64"}}
	r := ReplyShapesLoud.Judge(ShapesInput{Reads: reads, Proto: 2, MinReads: 1})
	if r.Status != check.Fail || !r.Replayable() || r.Call.Checker != "protocol/reply-shapes-loud" {
		t.Fatalf("Judge = %+v", r)
	}
	old := *r.Call
	old.Checker = "ReplyShapesLoud"
	old.Input = []json.RawMessage{json.RawMessage(`[{"Op":"ZSCORE","Key":"z","Shape":"string","Want":"1.5","Got":"","DecodeErr":"want float64","Err":""}]`), json.RawMessage("2"), json.RawMessage("1")}
	again, err := check.Replay(old)
	if err != nil || again.Status != check.Fail || again.Message != r.Message {
		t.Fatalf("replay of a stored three-argument call = %+v, %v; want %+v", again, err, r)
	}

	conns := check.ParseClientList("n0", clientList)
	n := NegotiatedProtocol.Judge(NegotiatedInput{Conns: conns, Name: "slotgate-pool", Want: 3, Nodes: []string{"n0"}})
	if n.Status != check.Fail || !n.Replayable() {
		t.Fatalf("Judge = %+v", n)
	}
	oldN := *n.Call
	oldN.Checker = "NegotiatedProtocol"
	c, _ := json.Marshal(conns)
	oldN.Input = []json.RawMessage{c, json.RawMessage(`"slotgate-pool"`), json.RawMessage("3"), json.RawMessage(`["n0"]`)}
	againN, err := check.Replay(oldN)
	if err != nil || againN.Status != check.Fail || againN.Message != n.Message {
		t.Fatalf("replay of a stored four-argument call = %+v, %v; want %+v", againN, err, n)
	}
}
