// gate_test.go checks the shutdown gate alone.

package remoting

import (
	"sync"
	"testing"
)

func drained(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestGate(t *testing.T) {
	g := newGate()
	if !g.enter() || !g.enter() {
		t.Fatal("an open gate refused a call")
	}
	g.leave()
	ch := g.close()
	if drained(ch) {
		t.Fatal("drained with a call still running")
	}
	if g.enter() {
		t.Fatal("a closed gate let a call in")
	}
	if drained(ch) {
		t.Fatal("a refused call drained the gate")
	}
	g.leave()
	if !drained(ch) || !drained(g.close()) {
		t.Fatal("not drained after the last call left")
	}

	if !drained(newGate().close()) {
		t.Fatal("an idle gate did not drain at once")
	}
}

// Calls entering while the gate closes: each one either ran to its leave
// before the drain or was refused; the drain comes exactly once.
func TestGateRacingClose(t *testing.T) {
	for round := 0; round < 50; round++ {
		g := newGate()
		var wg sync.WaitGroup
		var mu sync.Mutex
		running := 0
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 100; j++ {
					if !g.enter() {
						return
					}
					mu.Lock()
					running++
					mu.Unlock()
					mu.Lock()
					running--
					mu.Unlock()
					g.leave()
				}
			}()
		}
		<-g.close()
		mu.Lock()
		if running != 0 {
			t.Fatalf("drained with %d calls running", running)
		}
		mu.Unlock()
		wg.Wait()
	}
}
