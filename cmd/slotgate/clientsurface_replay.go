package main

// The client-surface row's checkers live in its own folder; linking their
// registration lets `slotgate check --from` replay its judgements.
import _ "github.com/slotgate/slotgate/rows/clientsurface/replay"
