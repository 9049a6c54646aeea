// pprof_test.go checks the listener serves real profiles and sets the rates.

package pprof

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

func TestServesProfilesAndSetsRates(t *testing.T) {
	s, err := Start(Options{Addr: "127.0.0.1:0", BlockRate: 1000, MutexFraction: 7}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if got := runtime.SetMutexProfileFraction(-1); got != 7 {
		t.Fatalf("mutex fraction %d, want 7", got)
	}
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get("http://" + s.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d: %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if idx := get("/debug/pprof/"); !strings.Contains(idx, "heap") || !strings.Contains(idx, "mutex") {
		t.Fatalf("index lists no profiles: %.200s", idx)
	}
	if g := get("/debug/pprof/goroutine?debug=1"); !strings.Contains(g, "goroutine profile") {
		t.Fatalf("goroutine profile: %.200s", g)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := runtime.SetMutexProfileFraction(-1); got != 0 {
		t.Fatalf("mutex fraction after close %d, want 0", got)
	}
}
