// Tests of the connection workers: tasks queued one after the other run on
// the worker already awake, tasks queued behind a held one all run, a task
// that blocks does not hold up the ones queued behind it, tasks of other
// netpoll servers go to netpoll's pool, a panic does not end the worker,
// and the waiting workers kept are bounded and gone once no listener
// serves.

package remoting

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func servingWorkers(maxIdle int) *workers {
	w := newWorkers(maxIdle)
	w.start()
	return w
}

func (w *workers) counts() (waiting, free int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.waiting, w.free
}

// waitFor waits until cond holds of the counts (remotingtest.WaitFor) and
// logs the last counts when the wait gives up.
func waitFor(t *testing.T, w *workers, what string, cond func(waiting, free int) bool) {
	t.Helper()
	var waiting, free int
	defer func() {
		if t.Failed() {
			t.Logf("%s: last seen waiting %d, free %d", what, waiting, free)
		}
	}()
	remotingtest.WaitFor(t, what, func() bool {
		waiting, free = w.counts()
		return cond(waiting, free)
	})
}

// Tasks queued one after the other, each done before the next, run on the
// one worker already awake: no goroutine is started per task.
func TestQueuedTasksShareAWorker(t *testing.T) {
	w := servingWorkers(8)
	for i := range 6 {
		done := make(chan struct{})
		w.run(func() { close(done) })
		<-done
		// Once the worker is back waiting, nothing else is: a second
		// worker would be counted waiting too.
		waitFor(t, w, fmt.Sprintf("after task %d", i), func(waiting, free int) bool { return free == 0 && waiting >= 1 })
		if waiting, _ := w.counts(); waiting != 1 {
			t.Fatalf("after task %d: %d workers waiting, want the one", i, waiting)
		}
	}
}

// Tasks queued behind one that holds its worker all run, each once, once
// it lets go. Several workers take from the queue (one is kept free
// whenever more wait), so the order they run in is not the queue's.
func TestQueuedTasksAllRun(t *testing.T) {
	w := servingWorkers(8)
	gate := make(chan struct{})
	var mu sync.Mutex
	ran := map[int]int{}
	done := make(chan struct{}, 10)
	w.run(func() { <-gate; done <- struct{}{} })
	for i := range 5 {
		w.run(func() {
			mu.Lock()
			ran[i]++
			mu.Unlock()
			done <- struct{}{}
		})
	}
	close(gate)
	for range 6 {
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range 5 {
		if ran[i] != 1 {
			t.Fatalf("tasks ran %v times, want each once", ran)
		}
	}
	// The workers go back to waiting, within the bound.
	waitFor(t, w, "after the tasks", func(waiting, free int) bool { return free == 0 && waiting >= 1 && waiting <= 6 })
}

func TestBlockedTaskDoesNotHoldTheQueue(t *testing.T) {
	w := servingWorkers(8)
	block := make(chan struct{})
	defer close(block)
	w.run(func() { <-block })
	ran := make(chan struct{})
	w.run(func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("a task queued behind a blocked one never ran")
	}
}

func TestWorkersLeaveOtherServersToNetpoll(t *testing.T) {
	s := &Server{workers: servingWorkers(4)}
	done := make(chan struct{})
	runTask(context.Background(), func() { close(done) })
	<-done
	if waiting, free := s.workers.counts(); waiting != 0 || free != 0 {
		t.Fatalf("a task without a Conn used a listener's workers: waiting %d free %d", waiting, free)
	}
	// A task of one of this package's connections goes to its listener's.
	ran := make(chan struct{})
	runTask(context.WithValue(context.Background(), connKey{}, &Conn{srv: s}), func() { close(ran) })
	<-ran
	waitFor(t, s.workers, "after a listener's task", func(waiting, free int) bool { return waiting == 1 && free == 0 })
}

func TestWorkerSurvivesPanic(t *testing.T) {
	w := servingWorkers(4)
	w.run(func() { panic("boom") })
	waitFor(t, w, "after the panic", func(waiting, free int) bool { return waiting == 1 && free == 0 })
	done := make(chan struct{})
	w.run(func() { close(done) })
	<-done
	waitFor(t, w, "after the next task", func(waiting, free int) bool { return waiting == 1 && free == 0 })
}

func TestWaitingWorkersBounded(t *testing.T) {
	w := servingWorkers(2)
	release := make(chan struct{})
	var started sync.WaitGroup
	for range 5 {
		started.Add(1)
		w.run(func() {
			started.Done()
			<-release
		})
	}
	// Each blocked task made the next one start a worker: five at once.
	started.Wait()
	close(release)
	waitFor(t, w, "after the burst", func(waiting, free int) bool { return waiting == 2 && free == 0 })
}

func TestNoWorkerOutlivesTheLastListener(t *testing.T) {
	w := servingWorkers(8)
	w.start() // two listeners
	release := make(chan struct{})
	var started sync.WaitGroup
	for range 3 {
		started.Add(1)
		w.run(func() { started.Done(); <-release })
	}
	started.Wait()
	close(release)
	waitFor(t, w, "one listener left", func(waiting, free int) bool { return waiting == 3 && free == 0 })
	w.stop()
	if waiting, _ := w.counts(); waiting != 3 {
		t.Fatalf("%d waiting workers with one listener left, want 3", waiting)
	}
	w.stop()
	waitFor(t, w, "no listener left", func(waiting, free int) bool { return waiting == 0 && free == 0 })
	// A task run after the last stop leaves no worker behind either.
	done := make(chan struct{})
	w.run(func() { close(done) })
	<-done
	waitFor(t, w, "after a late task", func(waiting, free int) bool { return waiting == 0 && free == 0 })
}
