// workers.go holds the goroutines netpoll runs a connection's onRequest on:
// long-lived ones that keep the stack the request path grew, where netpoll's
// default pool starts a goroutine per wake-up that has to grow its stack
// from 2 KiB again, copying it, every time.

package remoting

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/bytedance/gopkg/util/gopool"
	"github.com/cloudwego/netpoll"
)

// netpoll reads its runner from a package variable without synchronisation,
// so it is set once, before any connection exists: netpoll documents
// Configure as an init-time call.
func init() {
	if err := netpoll.Configure(netpoll.Config{Runner: pool.run, LoadBalance: netpoll.RoundRobin}); err != nil {
		panic(fmt.Sprintf("remoting: configure netpoll: %v", err))
	}
}

// maxIdleWorkers bounds the workers kept waiting. A wake-up of the poller
// hands out a task per ready connection, so a worker per connection that is
// busy at the same time is needed; fewer kept means new goroutines growing
// their stacks again under load. After a burst of that many connections at
// once they hold a few KiB of stack each (the GC shrinks idle stacks).
const maxIdleWorkers = 1024

// pool runs the tasks of every listener of the process.
var pool = &workers{tasks: make(chan func()), maxIdle: maxIdleWorkers}

// workers runs the connection tasks of this package's listeners. A task is
// handed to an idle worker when one waits, else a new worker starts; a
// worker that finds more than maxIdle others idle exits, so a burst of
// blocked connections leaves at most maxIdle goroutines behind. When no
// listener is serving none is kept: no goroutine outlives the last
// Shutdown.
type workers struct {
	tasks   chan func() // a nil task tells a waiting worker to exit
	idle    atomic.Int32
	maxIdle int32
	serving atomic.Int32 // listeners started and not shut down
}

// start counts a listener that began serving.
func (w *workers) start() { w.serving.Add(1) }

// stop counts a listener shut down; after the last one the waiting workers
// exit. A worker counts itself idle before it looks at serving, and stop
// looks at idle after serving, so each worker either sees no listener
// left and exits or is counted here and told to.
func (w *workers) stop() {
	if w.serving.Add(-1) > 0 {
		return
	}
	for w.idle.Load() > 0 && w.serving.Load() == 0 {
		select {
		case w.tasks <- nil:
		default:
			runtime.Gosched() // one counted itself but is not waiting yet
		}
	}
}

// run is netpoll's Runner. Connections of other netpoll servers in the
// process (the benchmark's echo ceiling) go to netpoll's default pool, as
// if this package were not there: a connection is this package's when its
// context carries a Conn (onPrepare).
func (w *workers) run(ctx context.Context, f func()) {
	if ctx == nil || ctx.Value(connKey{}) == nil {
		gopool.CtxGo(ctx, f)
		return
	}
	select {
	case w.tasks <- f:
	default:
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	for {
		do(f)
		if w.idle.Add(1) > w.maxIdle || w.serving.Load() == 0 {
			w.idle.Add(-1)
			return
		}
		f = <-w.tasks
		w.idle.Add(-1)
		if f == nil {
			return
		}
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
