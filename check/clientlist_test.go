package check_test

import (
	"testing"

	"github.com/slotgate/slotgate/check"
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
