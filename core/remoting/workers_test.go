// Tests of the connection workers: a task handed out while a worker waits
// runs on that worker (so its grown stack is reused), tasks of other
// netpoll servers go to netpoll's pool, a panic does not end the worker, and
// the idle workers kept are bounded and gone once no listener serves.

package remoting

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

func newWorkers(maxIdle int32) *workers {
	w := &workers{tasks: make(chan func()), maxIdle: maxIdle}
	w.start()
	return w
}

func connCtx() context.Context { return context.WithValue(context.Background(), connKey{}, &Conn{}) }

// waitIdle waits until n workers wait for tasks.
func waitIdle(t *testing.T, w *workers, n int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for w.idle.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d idle workers, want %d", w.idle.Load(), n)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

func TestWorkersReuseAnIdleWorker(t *testing.T) {
	w := newWorkers(4)
	ran := make(chan struct{})
	for range 2 {
		w.run(connCtx(), func() { ran <- struct{}{} })
		<-ran
		waitIdle(t, w, 1)
	}
	// The second task found the first's worker waiting: one worker only.
	if n := w.idle.Load(); n != 1 {
		t.Fatalf("%d idle workers after two tasks one after the other, want 1", n)
	}
}

func TestWorkersLeaveOtherServersToNetpoll(t *testing.T) {
	w := newWorkers(4)
	done := make(chan struct{})
	w.run(context.Background(), func() { close(done) })
	<-done
	time.Sleep(10 * time.Millisecond)
	if n := w.idle.Load(); n != 0 {
		t.Fatalf("a task without a Conn left %d idle workers of this package, want 0", n)
	}
}

func TestWorkerSurvivesPanic(t *testing.T) {
	w := newWorkers(4)
	w.run(connCtx(), func() { panic("boom") })
	waitIdle(t, w, 1)
	done := make(chan struct{})
	w.run(connCtx(), func() { close(done) })
	<-done
	waitIdle(t, w, 1)
}

func TestIdleWorkersBounded(t *testing.T) {
	w := newWorkers(2)
	release := make(chan struct{})
	var started sync.WaitGroup
	for range 5 {
		started.Add(1)
		w.run(connCtx(), func() {
			started.Done()
			<-release
		})
	}
	// All five blocked at once: five workers.
	started.Wait()
	close(release)
	waitIdle(t, w, 2)
	time.Sleep(20 * time.Millisecond)
	if n := w.idle.Load(); n != 2 {
		t.Fatalf("%d idle workers, want the bound 2", n)
	}
}

func TestNoWorkerOutlivesTheLastListener(t *testing.T) {
	w := newWorkers(8)
	w.start() // two listeners
	release := make(chan struct{})
	var started sync.WaitGroup
	for range 3 {
		started.Add(1)
		w.run(connCtx(), func() { started.Done(); <-release })
	}
	started.Wait()
	close(release)
	waitIdle(t, w, 3)
	w.stop()
	if n := w.idle.Load(); n != 3 {
		t.Fatalf("%d idle workers with one listener left, want 3", n)
	}
	w.stop()
	waitIdle(t, w, 0)
	// A task finishing after the last stop does not stay either.
	w.run(connCtx(), func() {})
	time.Sleep(10 * time.Millisecond)
	waitIdle(t, w, 0)
}
