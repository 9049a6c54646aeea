// The status page in a real headless browser (Debian's chromium package);
// skipped where none is installed.

package status

import (
	"bytes"
	"context"
	"image/png"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// browserTimeout bounds every chromium run: a browser that hangs fails the
// test instead of holding it until the go test deadline.
const browserTimeout = 90 * time.Second

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
func runChromium(ctx context.Context, t *testing.T, bin string, args ...string) []byte {
	t.Helper()
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
	srv := httptest.NewServer(Handler(tb, clk.time))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()

	// The DOM as the browser built it: rows by class, cells as serialised
	// back by chromium, which escapes text the way html/template does for
	// these values.
	dom := string(runChromium(ctx, t, bin, "--dump-dom", srv.URL+"/?topic=TopicTest"))
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
	dom = string(runChromium(ctx, t, bin, "--dump-dom", srv.URL+"/?topic="+url.QueryEscape(evil)))
	if strings.Contains(dom, "<script") || strings.Contains(dom, "owned</title>") {
		t.Fatalf("topic ran as markup:\n%s", dom)
	}
	checkContains(t, dom, "<title>rocketns status</title>", "No route for topic <code>&lt;script&gt;document.title='owned'&lt;/script&gt;</code>.")

	shot := filepath.Join(t.TempDir(), "status.png")
	runChromium(ctx, t, bin, "--window-size=1280,900", "--screenshot="+shot, srv.URL+"/?topic=TopicTest")
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
}
