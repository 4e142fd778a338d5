package history

// SlotSample is one key with the slot computed locally and the slot the
// server answered (CLUSTER KEYSLOT).
type SlotSample struct {
	Key    string
	Local  int
	Server int
}
