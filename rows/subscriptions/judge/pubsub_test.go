package judge

import (
	"testing"

	"github.com/slotgate/slotgate/check"
)

func TestPushDelivery(t *testing.T) {
	const list = `id=7 addr=127.0.0.1:5000 laddr=127.0.0.1:7000 fd=8 name=sub age=1 idle=0 flags=N db=0 sub=0 psub=2 ssub=3 multi=-1 resp=3 lib-name= lib-ver=
id=8 addr=127.0.0.1:5001 laddr=127.0.0.1:7000 fd=9 name=sub-pool age=1 idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 resp=2 lib-name= lib-ver=
id=9 addr=127.0.0.1:5002 laddr=127.0.0.1:7000 fd=10 name=other age=1 idle=0 flags=P db=0 sub=0 psub=0 ssub=4 multi=-1 resp=2 lib-name= lib-ver=`
	conns := check.ParseClientList("p0", list)
	if len(conns) != 3 || conns[0].SSub != 3 || conns[0].PSub != 2 || conns[0].Resp != 3 {
		t.Fatalf("parsed %+v", conns)
	}
	if r := pushDelivery(conns, "sub", 3, 2); r.Status != check.Pass {
		t.Errorf("RESP3 subscriber: %s %s", r.Status, r.Message)
	}
	if r := pushDelivery(conns, "sub", 4, 2); r.Status != check.Unknown {
		t.Errorf("a held topic on no observed connection: %s %s", r.Status, r.Message)
	}
	resp2 := check.ParseClientList("p0", "id=1 name= flags=P sub=0 psub=0 ssub=3 resp=2\nid=2 name=sub psub=2 ssub=0 resp=3")
	if r := pushDelivery(resp2, "sub", 3, 2); r.Status != check.Fail {
		t.Errorf("an unnamed RESP2 pub/sub connection holding the topics: %s %s", r.Status, r.Message)
	}
}
