package audit

import (
	"math/rand/v2"
	"testing"
)

// The ring against a plain slice model, over random pushes and pops at
// both ends, through growth, wrap-around and shrinking.
func TestRingMatchesSliceModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var r ring
	var model []uint64
	next := uint64(0)
	for step := range 60_000 {
		switch op := rng.IntN(10); {
		case op < 4:
			next++
			r.pushBack(Item{Offset: Offset{Seq: next}})
			model = append(model, next)
		case op < 5:
			k := rng.IntN(5)
			items := make([]Item, k)
			front := make([]uint64, k)
			for i := range items {
				next++
				items[i], front[i] = Item{Offset: Offset{Seq: next}}, next
			}
			r.pushFront(items)
			model = append(front, model...)
		default:
			if len(model) == 0 {
				continue
			}
			if got := r.popFront().Offset.Seq; got != model[0] {
				t.Fatalf("step %d: popped %d, model %d", step, got, model[0])
			}
			model = model[1:]
		}
		if r.len() != len(model) {
			t.Fatalf("step %d: len %d, model %d", step, r.len(), len(model))
		}
	}
	for i, want := range model {
		if got := r.at(i).Offset.Seq; got != want {
			t.Fatalf("at(%d) = %d, model %d", i, got, want)
		}
	}
}
