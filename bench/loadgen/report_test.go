// Tests of report formatting (table and JSON) and of /proc status parsing.

package loadgen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func sampleReport() *Report {
	h := NewHistogram()
	for v := int64(1); v <= 1000; v++ {
		h.Record(v * 1000) // 1 us .. 1 ms
	}
	r := &Report{Scenario: "route", Server: "127.0.0.1:9876", Brokers: 4, Topics: 1000, PerTopic: 2}
	row := RowFrom("route", 32, 4, 2*time.Second, 1000, h)
	row.VsLimit = 0.9512
	row.BytesOut, row.BytesIn = 1_500_000, 2_000_000
	r.Rows = append(r.Rows, RowFrom("limit", 32, 4, 2*time.Second, 2000, NewHistogram()), row)
	r.Add("setup_register_all", 12.3456, "ms")
	r.Errors = append(r.Errors, "route c=32 d=4: 1 errors, first: boom")
	return r
}

func TestRowFrom(t *testing.T) {
	row := sampleReport().Rows[1]
	f := func(name string, got, want float64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	f("QPS", row.QPS, 500)
	f("p50", row.P50us, 501.759) // top of the bucket holding 500 us: (245<<11)-1 ns
	f("p90", row.P90us, 901.119) // (220<<12)-1 ns
	f("p99", row.P99us, 991.231)
	f("max", row.MaxUs, 1000)
	f("seconds", row.Seconds, 2)
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	want := `scenario route, server 127.0.0.1:9876, brokers 4, topics 1000, per-topic 2
    run   C  D   sec  requests   QPS  vs limit  p50 us  p90 us  p99 us  p99.9 us  max us  errors  not found  MB out  MB in
  limit  32  4  2.00      2000  1000         -     0.0     0.0     0.0       0.0     0.0       0          0     0.0    0.0
  route  32  4  2.00      1000   500     0.951   501.8   901.1   991.2     999.4  1000.0       0          0     1.5    2.0
setup_register_all                               12.346 ms
error: route c=32 d=4: 1 errors, first: boom
`
	if got := buf.String(); got != want {
		t.Fatalf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	r := sampleReport()
	r.Interrupted = true
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("report JSON does not parse: %v\n%s", err, buf.String())
	}
	if !back.Interrupted || len(back.Rows) != 2 || back.Rows[1].VsLimit != 0.9512 || back.Rows[1].QPS != 500 {
		t.Fatalf("round trip lost fields: %+v", back)
	}
	for _, key := range []string{`"p99_us": 991.231`, `"vs_limit": 0.9512`, `"name": "setup_register_all"`} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("JSON lacks %s:\n%s", key, buf.String())
		}
	}
	if strings.Contains(buf.String(), `"vs_limit": 0,`) {
		t.Errorf("limit row carries a zero vs_limit; want it omitted")
	}
}

func TestParseStatus(t *testing.T) {
	rss, hwm, err := parseStatus([]byte("Name:\tnamesrv\nVmPeak:\t  99 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nThreads:\t5\n"))
	if err != nil || rss != 1024<<10 || hwm != 2048<<10 {
		t.Fatalf("parseStatus = %d, %d, %v; want 1 MiB, 2 MiB", rss, hwm, err)
	}
	if _, _, err := parseStatus([]byte("VmRSS:\t12 MB\nVmHWM:\t1 kB\n")); err == nil {
		t.Fatal("a VmRSS line not in kB was accepted")
	}
	if _, _, err := parseStatus([]byte("Name:\tx\n")); err == nil {
		t.Fatal("status without VmRSS was accepted")
	}
}

func TestOpaquePatching(t *testing.T) {
	rf, err := newRequestFrames([]string{"A", `we"ird`}, 479)
	if err != nil {
		t.Fatal(err)
	}
	f := func(topic int, seq uint64, wantOpaque int32) {
		t.Helper()
		buf, op := rf.appendRequest([]byte("xx"), topic, seq)
		if op != wantOpaque {
			t.Fatalf("opaque = %d, want %d", op, wantOpaque)
		}
		assertRequest(t, buf[2:], rf, topic, wantOpaque)
	}
	f(0, 0, 1_000_000_000)
	f(1, 42, 1_000_000_042)
	f(0, 999_999_999, 1_999_999_999)
	f(1, 1_000_000_001, 1_000_000_001)
}
