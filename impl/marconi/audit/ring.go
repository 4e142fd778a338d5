package audit

// ring is a growable FIFO of Items: O(1) push and pop at both ends without
// the copying a re-sliced slice does once the queue runs full (every
// overwrite would otherwise shift the whole queue).
type ring struct {
	buf     []Item
	head, n int
}

func (r *ring) len() int { return r.n }

// at returns the i-th entry from the head.
func (r *ring) at(i int) *Item { return &r.buf[(r.head+i)%len(r.buf)] }

func (r *ring) pushBack(it Item) {
	if r.n == len(r.buf) {
		r.resize(max(16, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)%len(r.buf)] = it
	r.n++
}

// pushFront puts items, in order, before the head.
func (r *ring) pushFront(items []Item) {
	if need := r.n + len(items); need > len(r.buf) {
		r.resize(max(16, 2*need))
	}
	for i := len(items) - 1; i >= 0; i-- {
		r.head = (r.head - 1 + len(r.buf)) % len(r.buf)
		r.buf[r.head] = items[i]
		r.n++
	}
}

func (r *ring) popFront() Item {
	it := r.buf[r.head]
	r.buf[r.head] = Item{} // drop references for the GC
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	if r.n == 0 {
		r.head = 0
	}
	if c := len(r.buf); c > 1024 && r.n < c/4 {
		r.resize(c / 2)
	}
	return it
}

// popBack removes the newest entry (only the oldest-evicts-newest mutant
// evicts from this end).
func (r *ring) popBack() Item {
	i := (r.head + r.n - 1) % len(r.buf)
	it := r.buf[i]
	r.buf[i] = Item{}
	r.n--
	if r.n == 0 {
		r.head = 0
	}
	return it
}

func (r *ring) resize(c int) {
	buf := make([]Item, c)
	for i := range r.n {
		buf[i] = *r.at(i)
	}
	r.buf, r.head = buf, 0
}
