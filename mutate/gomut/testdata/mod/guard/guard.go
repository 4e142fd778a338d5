// Package guard is the fixture Generate is tested on: one function per
// operator, and one it must leave alone.
package guard

import (
	"errors"
	"fmt"
	"time"
)

// Mutant selects a known-bad variant; conditions on it are not mutated.
var Mutant string

var errEmpty = errors.New("empty")

// Admit is a guard: negate-cond, swap-cmp (boundary and compound ==).
func Admit(n, limit int, name string) bool {
	if n < limit && name != "" {
		return true
	}
	if Mutant == "open" {
		return n <= limit // only the control runs this: not mutated
	}
	return false
}

// Load has an error return to drop.
func Load(s string) (int, error) {
	n, err := parse(s)
	if err != nil {
		return 0, err
	}
	return n, nil
}

func parse(s string) (int, error) {
	if s == "" {
		return 0, errEmpty
	}
	return len(s), nil
}

// Query builds a range query with bounds and a LIMIT.
func Query(key, min string) []string {
	return []string{"ZRANGEBYSCORE", key, min, "+inf", "LIMIT", "0", "10"}
}

// Renew is TTL arithmetic.
func Renew(ttl time.Duration) time.Duration {
	return ttl / 3
}

// Wrap loses its only use of what when the error return is dropped: that
// mutant does not compile and is discarded.
func Wrap(s string) error {
	what := "parse " + s
	if _, err := parse(s); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Notify sends on a channel.
func Notify(ch chan int, v int) {
	ch <- v
}

// Wait sends or gives up on done.
func Wait(ch chan int, done chan struct{}) {
	select {
	case ch <- 1:
	case <-done:
	}
}

// Count is a counting loop: its condition is not swapped.
func Count(xs []int) int {
	n := 0
	for i := 0; i < len(xs); i++ {
		n += xs[i]
	}
	return n
}
