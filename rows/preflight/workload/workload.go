// Package workload drives the preflight row's real bad variants: a node
// kept busy by back-to-back Lua busy loops (the CPU above G5's limit), a
// process-CPU reading independent of INFO (the premise that the node really
// was busy), and the keyspace the key-size pass walks.
package workload

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// busyScript spins the engine thread for ARGV[1] milliseconds of the
// server's CPU time (os.clock: a script sees TIME frozen at its start, so a
// TIME loop never ends) and touches no key; the iteration cap bounds it
// should the clock stall. The server runs nothing else meanwhile, so
// scripts sent back to back keep its engine thread busy.
const busyScript = `local stop = os.clock() + ARGV[1] / 1000
local n = 0
repeat n = n + 1 until os.clock() >= stop or n > 100000000
return n`

// Burner keeps one node's engine thread busy until Stop.
type Burner struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	calls  int
	errs   []string
}

// Burn starts workers connections to pool's node, each sending the busy
// script (slice long) back to back. Each slice is short so the gatherer's
// INFO reads are served between scripts (a script longer than
// busy-reply-threshold would make them BUSY).
func Burn(ctx context.Context, pool client.Pool, workers int, slice time.Duration) *Burner {
	ctx, cancel := context.WithCancel(ctx)
	b := &Burner{cancel: cancel}
	ms := strconv.FormatInt(slice.Milliseconds(), 10)
	for range workers {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			for ctx.Err() == nil {
				_, err := pool.Do(ctx, client.Cmd{Prefix: []string{"EVAL", busyScript, "0"}, Args: []string{ms}})
				b.mu.Lock()
				if err != nil && ctx.Err() == nil && len(b.errs) < 5 {
					b.errs = append(b.errs, err.Error())
				}
				b.calls++
				b.mu.Unlock()
				if err != nil && ctx.Err() == nil {
					time.Sleep(slice) // a refused script is not retried hot
				}
			}
		}()
	}
	return b
}

// Stop ends the burn and says how many scripts ran and the first errors.
func (b *Burner) Stop() (calls int, errs []string) {
	b.cancel()
	b.wg.Wait()
	return b.calls, b.errs
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's
// utime and stime: 100 on every Linux architecture Go targets.
const clockTicks = 100

// ProcessCPU reads the CPU time process pid has used so far from
// /proc/<pid>/stat (utime + stime): a reading of the server's CPU that
// does not go through INFO, so a premise built on it is independent of the
// gatherer being judged.
func ProcessCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("read process cpu: no local process (pid %d)", pid)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read process cpu: %w", err)
	}
	return parseStat(string(raw))
}

// parseStat reads utime and stime (fields 14 and 15) from a /proc stat
// line; the command name (field 2) is parenthesised and may hold spaces,
// so fields are counted after its closing parenthesis.
func parseStat(line string) (time.Duration, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse /proc stat: no command name")
	}
	f := strings.Fields(line[i+1:])
	// f[0] is field 3 (state): utime is field 14, f[11]; stime f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("parse /proc stat: %d fields after the name", len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc stat: utime %q stime %q", f[11], f[12])
	}
	return time.Duration(u+s) * time.Second / clockTicks, nil
}

// Seed writes n plain keys of size bytes each through pool (a cluster pool
// spreads them over every shard) and returns how many it wrote.
func Seed(ctx context.Context, pool client.Pool, prefix string, n, size int) (int, error) {
	val := strings.Repeat("v", size)
	for i := range n {
		key := fmt.Sprintf("%s:%d", prefix, i)
		if _, err := pool.Do(ctx, client.NewCmd("SET", []string{key}, val)); err != nil {
			return i, fmt.Errorf("seed %s: %w", key, err)
		}
	}
	return n, nil
}
