// A rollback leaves no body a reader cached from the abandoned state.

package route

import (
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

// Readers take no lock, so one may fill a cache from a view or entry the
// write published before it panicked. Every case of atomicCases, at every
// step, with a reader filling every cache just before the panic: the dump
// (which prints the cached bodies) must come back as it was, and every
// cache must then hold what a fresh assembly gives.
func TestRollbackDropsBodiesCachedMidWrite(t *testing.T) {
	t.Parallel()
	for _, c := range atomicCases() {
		t.Run(c.name, func(t *testing.T) {
			for k := 1; ; k++ {
				var tb *Table
				steps, armed := 0, false
				opts := c.opts
				opts.Shards = 4
				opts.Hook = func(step string) {
					if !armed {
						return
					}
					if steps++; steps == k {
						warm(tb)
						panic(injected{step})
					}
				}
				var clk *clock
				tb, clk = newTable(opts)
				c.setup(t, tb, clk)
				// The standard bodies only: the reader at the panic is the
				// first to fill the legacy ones.
				tb.topics.Range(func(k string, _ *topicEntry) bool {
					tb.RouteBody(k, body.Standard)
					return true
				})
				before := dumpState(t, tb)
				// dumpState filled every cache; start again from the same
				// state with the legacy ones empty.
				tb, clk = newTable(opts)
				c.setup(t, tb, clk)
				tb.topics.Range(func(k string, _ *topicEntry) bool {
					tb.RouteBody(k, body.Standard)
					return true
				})
				armed = true
				p := func() (p any) {
					defer func() { p = recover() }()
					c.op(tb, clk)
					return nil
				}()
				armed = false
				if p == nil {
					if k == 1 {
						t.Fatal("the write has no steps")
					}
					return
				}
				if _, ok := p.(injected); !ok {
					t.Fatalf("step %d: recovered %v", k, p)
				}
				if after := dumpState(t, tb); after != before {
					t.Fatalf("a reader at step %d (%v) left a body of the abandoned write:\n%s", k, p, lineDiff(before, after))
				}
				checkBodies(t, tb, "T1", "T2", "T3", "T4", "T5", "T7", "T9", "S")
			}
		})
	}
}

// lineDiff lists the lines only one of a and b has.
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range splitLines(s) {
			m[l] = true
		}
		return m
	}
	ia, ib := in(a), in(b)
	var out string
	for _, l := range splitLines(a) {
		if !ib[l] {
			out += "- " + l + "\n"
		}
	}
	for _, l := range splitLines(b) {
		if !ia[l] {
			out += "+ " + l + "\n"
		}
	}
	return out
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
