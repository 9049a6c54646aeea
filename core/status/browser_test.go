//go:build e2e

// The status page in a real headless browser (Debian's chromium package);
// skipped where none is installed.

package status

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// browserTimeout bounds each chromium run: a browser that hangs fails the
// test instead of holding it until the go test deadline. A run takes about
// a second on an idle machine and a minute on a loaded one.
const browserTimeout = 5 * time.Minute

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// runChromium runs one headless chromium with a throwaway profile and
// returns its stdout.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	dir := t.TempDir()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + filepath.Join(dir, "profile"),
	}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	// Chromium's helper processes may outlive a killed parent and hold the
	// pipes open; WaitDelay stops Wait from waiting on them for long.
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_CACHE_HOME="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			t.Fatalf("chromium %v: timed out after %v (%v)\nstderr:\n%s", args, browserTimeout, err, stderr.String())
		}
		t.Fatalf("chromium %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

func TestPageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	bin := findChromium()
	if bin == "" {
		t.Skip("no chromium installed (apt-get install chromium); the status page is not checked in a browser")
	}
	tb, clk := fixture(t)
	hist, _ := history(t, clk)
	srv := httptest.NewServer(New(Options{Routes: tb, Clock: clk.time, History: hist, Refresh: -1,
		Info: func() Info {
			return Info{Version: "v0.0.0-test", Started: clk.time().Add(-time.Minute), Listen: "127.0.0.1:9876"}
		}}))
	defer srv.Close()

	// The DOM as the browser built it: rows by class, cells as serialised
	// back by chromium, which escapes text the way html/template does for
	// these values.
	dom := string(runChromium(t, bin, "--dump-dom", srv.URL+"/?topic=TopicTest"))
	if !strings.Contains(dom, "<title>rocketns status</title>") {
		t.Fatalf("no status page in the DOM:\n%s", dom)
	}
	checkRows(t, dom, "broker", fixtureBrokerRows...)
	checkRows(t, dom, "queue",
		"queue: broker-a|8|8|RW- (6)|0",
		"queue: broker-b|4|4|R-- (4)|0",
	)
	checkRows(t, dom, "route-broker",
		"route-broker: broker-a|DefaultCluster||0|10.0.0.1:10911",
		"route-broker: broker-a|DefaultCluster||1|10.0.0.2:10911",
		"route-broker: broker-b|DefaultCluster|z1|0|10.0.0.3:10911",
	)

	// A script in the topic stays text: no script element, the title the
	// script would have changed is intact.
	evil := "<script>document.title='owned'</script>"
	dom = string(runChromium(t, bin, "--dump-dom", srv.URL+"/?topic="+url.QueryEscape(evil)))
	if strings.Contains(dom, "<script") || strings.Contains(dom, "owned</title>") {
		t.Fatalf("topic ran as markup:\n%s", dom)
	}
	checkContains(t, dom, "<title>rocketns status</title>", "No route for topic <code>&lt;script&gt;document.title='owned'&lt;/script&gt;</code>.")

	shot := filepath.Join(t.TempDir(), "status.png")
	if dir := os.Getenv("STATUS_SCREENSHOT_DIR"); dir != "" {
		shot = filepath.Join(dir, "status.png") // to look at it
	}
	runChromium(t, bin, "--window-size=1280,900", "--screenshot="+shot, srv.URL+"/?topic=TopicTest")
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot %d bytes is no PNG: %v", len(data), err)
	}
	if b := img.Bounds(); b.Dx() == 0 || b.Dy() == 0 {
		t.Fatalf("empty screenshot %v", b)
	}
	t.Logf("screenshot: %d bytes, %dx%d", len(data), img.Bounds().Dx(), img.Bounds().Dy())
	// The chart rendered: each panel's area fill covers a good part of its
	// plot (the fixture's QPS rises over half the hour), each in a box of
	// its own side by side, and the line colour is there too.
	for _, p := range panels {
		box, n := colourBox(img, p.fill)
		if n < 1500 {
			t.Errorf("%s: %d pixels of its fill %s in the screenshot; the chart did not render", p.id, n, p.fill)
			continue
		}
		if w, h := box.Dx(), box.Dy(); w < plotW/3 || w > panelW || h < 10 || h > panelH {
			t.Errorf("%s: fill spans %v, not a chart panel", p.id, box)
		}
		if _, n := colourBox(img, p.stroke); n < 50 {
			t.Errorf("%s: %d pixels of its line %s", p.id, n, p.stroke)
		}
		t.Logf("%s: %d fill pixels in %v", p.id, n, box)
	}
}

// The wiped group's rows stand out in the browser: their background is the
// wiped colour.
func TestWipedInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	bin := findChromium()
	if bin == "" {
		t.Skip("no chromium installed (apt-get install chromium)")
	}
	tb, clk := fixture(t)
	tb.WipeWritePerm("broker-b")
	srv := httptest.NewServer(New(Options{Routes: tb, Clock: clk.time, Refresh: -1}))
	defer srv.Close()
	shot := filepath.Join(t.TempDir(), "wiped.png")
	runChromium(t, bin, "--window-size=1280,900", "--screenshot="+shot, srv.URL+"/")
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	// One row (broker-b has one address) of wiped background, the overdue
	// broker-c's row of the same colour below it.
	if _, n := colourBox(img, "#fde2e2"); n < 2000 {
		t.Fatalf("%d pixels of the wiped background", n)
	}
	if _, n := colourBox(img, "#b00020"); n < 20 {
		t.Fatalf("%d pixels of the wiped text colour", n)
	}
}

// colourBox counts the pixels within a small distance of hex (#rrggbb)
// and returns their bounding box.
func colourBox(img image.Image, hex string) (image.Rectangle, int) {
	var want [3]int
	for i := range want {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		want[i] = int(v)
	}
	near := func(a, b int) bool { return a-b <= 6 && b-a <= 6 }
	var box image.Rectangle
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(int(r>>8), want[0]) && near(int(g>>8), want[1]) && near(int(bl>>8), want[2]) {
				pt := image.Rect(x, y, x+1, y+1)
				if n == 0 {
					box = pt
				} else {
					box = box.Union(pt)
				}
				n++
			}
		}
	}
	return box, n
}
