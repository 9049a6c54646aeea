// workers.go holds the goroutines netpoll runs a connection's onRequest on:
// long-lived ones that keep the stack the request path grew, where netpoll's
// default pool starts a goroutine per wake-up that has to grow its stack
// from 2 KiB again, copying it, every time.

package remoting

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/bytedance/gopkg/util/gopool"
	"github.com/cloudwego/netpoll"
)

// netpoll has one runner for the whole process, read from a package
// variable without synchronisation, and Configure is its only way to set
// it. So the runner is installed once, by the first Start, before that
// listener's first connection, and routes each task to the workers of the
// listener its connection belongs to; tasks of other netpoll servers go to
// netpoll's own pool as if this package were not there. A process that
// also runs netpoll servers of its own starts a listener of this package
// first, or sees their tasks race with the runner's installation.
var (
	configureOnce sync.Once
	configureErr  error
)

// configureNetpoll installs runTask as netpoll's runner, once per process.
func configureNetpoll() error {
	configureOnce.Do(func() {
		if err := netpoll.Configure(netpoll.Config{Runner: runTask}); err != nil {
			configureErr = fmt.Errorf("configure netpoll: %w", err)
		}
	})
	return configureErr
}

// runTask is netpoll's runner: a connection is this package's when its
// context carries a Conn (onPrepare), and its tasks go to its listener's
// workers.
func runTask(ctx context.Context, f func()) {
	if ctx != nil {
		if c, ok := ctx.Value(connKey{}).(*Conn); ok {
			c.srv.workers.run(f)
			return
		}
	}
	gopool.CtxGo(ctx, f)
}

// maxIdleWorkers bounds the workers a listener keeps waiting. After a
// burst of that many connections blocked at once they hold a few KiB of
// stack each (the GC shrinks idle stacks).
const maxIdleWorkers = 1024

// workers runs the connection tasks of a listener from one queue. A worker
// takes tasks one after the other on its warm stack, the way
// netpoll's pool drains its queue: the tasks of one poller wake-up mostly
// run back to back on one goroutine rather than each on its own. Whenever a
// task is queued, or a worker takes one while more wait, at least one other
// worker is free (woken, started, or between tasks), so a task that blocks
// (a partial frame, a slow peer) never holds up the queue behind it. A
// waiting worker beyond maxIdle exits; when the listener is not serving
// none is kept, so no goroutine outlives its Shutdown.
type workers struct {
	mu      sync.Mutex
	wake    *sync.Cond
	queue   []func()
	head    int
	free    int // workers started or woken that have not taken a task yet, or between tasks
	waiting int // workers parked in wake.Wait
	signals int // of those, woken for a task and already counted free
	maxIdle int
	serving int // Start calls not yet matched by a stop
}

func newWorkers(maxIdle int) *workers {
	w := &workers{maxIdle: maxIdle}
	w.wake = sync.NewCond(&w.mu)
	return w
}

// start counts a Start.
func (w *workers) start() {
	w.mu.Lock()
	w.serving++
	w.mu.Unlock()
}

// stop counts a Shutdown; after the last one the waiting workers exit.
func (w *workers) stop() {
	w.mu.Lock()
	w.serving--
	if w.serving <= 0 {
		w.wake.Broadcast()
	}
	w.mu.Unlock()
}

// run queues a connection task.
func (w *workers) run(f func()) {
	w.mu.Lock()
	w.queue = append(w.queue, f)
	spawn := w.ensureFree()
	w.mu.Unlock()
	if spawn {
		go w.loop()
	}
}

// ensureFree makes sure a free worker will look at the queue: it wakes a
// waiting one, or reports that a new one must start. Called with mu held.
func (w *workers) ensureFree() bool {
	if w.free > 0 {
		return false
	}
	w.free++
	if w.waiting > w.signals {
		w.signals++
		w.wake.Signal()
		return false
	}
	return true
}

// loop is one worker; it starts counted as free.
func (w *workers) loop() {
	w.mu.Lock()
	for {
		for w.head == len(w.queue) {
			if w.waiting >= w.maxIdle || w.serving <= 0 {
				w.free--
				w.mu.Unlock()
				return
			}
			w.free--
			w.waiting++
			for {
				w.wake.Wait()
				if w.signals > 0 {
					w.signals-- // ensureFree counted this worker free
					break
				}
				if w.serving <= 0 {
					// Woken by stop's Broadcast, not for a task.
					w.waiting--
					w.mu.Unlock()
					return
				}
			}
			w.waiting--
		}
		f := w.queue[w.head]
		w.queue[w.head] = nil
		w.head++
		if w.head == len(w.queue) {
			w.queue, w.head = w.queue[:0], 0
		}
		w.free--
		spawn := w.head < len(w.queue) && w.ensureFree()
		w.mu.Unlock()
		if spawn {
			go w.loop()
		}
		do(f)
		w.mu.Lock()
		w.free++
	}
}

// do runs one task. A panic that escapes it (handlers' panics are caught
// in dispatch) is logged and the worker goes on, as in netpoll's default
// pool; netpoll has closed the connection on the way out.
func do(f func()) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("remoting: panic serving a connection", "panic", p, "stack", string(debug.Stack()))
		}
	}()
	f()
}
