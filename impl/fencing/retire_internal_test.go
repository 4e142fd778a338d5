package fencing

import "testing"

func TestParseClientList(t *testing.T) {
	list := "txt:id=3 addr=127.0.0.1:1 name=relay-a age=9\nid=12 addr=127.0.0.1:2 name= age=0\n\n"
	got := parseClientList(list)
	if len(got) != 2 || got[0] != (clientEntry{3, "relay-a"}) || got[1] != (clientEntry{12, ""}) {
		t.Fatalf("parseClientList = %+v", got)
	}
}
