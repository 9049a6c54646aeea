// The route-query load: C connections, each keeping D pipelined requests in
// flight on a raw net.Conn, recording latency per phase.

package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/codec"
)

// maxPhases bounds how many phases one load run can be split into (storm
// uses 2, expiry 3).
const maxPhases = 4

// ringSize bounds requests in flight per connection: send times are kept in
// a ring indexed by sequence number, which also tolerates a server that
// answers out of order (Java's thread pool may).
const ringSize = 1024

// topicSeqLen is the length of the shared, pre-drawn topic index sequence;
// each connection walks it from its own offset so drawing costs nothing.
const topicSeqLen = 1 << 16

// LoadConfig describes one load run.
type LoadConfig struct {
	Addr     string
	Conns    int
	Depth    int
	Duration time.Duration
	// Topics are queried with uniform popularity, or Zipf's law with
	// exponent Zipf when Zipf > 1 (Topics[0] most popular).
	Topics  []string
	Zipf    float64
	Version int32 // request version; it picks the body's JSON dialect
	Seed    int64
	// MaxFrame bounds response frames; 0 means codec.DefaultMaxFrame.
	MaxFrame int
}

// PhaseResult is what one phase of a run measured.
type PhaseResult struct {
	Requests uint64
	// Errors and NotFound count the answers of this phase; failures of the
	// connection itself are in LoadResult.Errors only.
	Errors, NotFound uint64
	Elapsed          time.Duration
	Hist             *Histogram
}

// LoadResult is a finished (or stopped) run.
type LoadResult struct {
	Conns, Depth               int
	Elapsed                    time.Duration
	Requests, Errors, NotFound uint64
	BytesOut, BytesIn          uint64
	Hist                       *Histogram // every phase
	Phases                     []PhaseResult
	FirstError                 error
}

// Load is a running load. Its methods may be called from any goroutine.
type Load struct {
	cfg     LoadConfig
	frames  *requestFrames
	seq     []int32
	t0      time.Time
	end     int64 // ns since t0
	workers []*worker

	phase      atomic.Int32
	phaseStart [maxPhases]atomic.Int64 // ns since t0; guarded by being written before phase is bumped
	// ended is when the last connection finished (ns since t0), set
	// before done is closed.
	ended    atomic.Int64
	stopped  atomic.Bool
	stopOnce sync.Once
	wg       sync.WaitGroup
	done     chan struct{}
}

type worker struct {
	l    *Load
	conn net.Conn
	br   *bufio.Reader
	wbuf []byte
	cmd  codec.Command
	big  []byte // frames larger than br's buffer

	seqPos   int
	next     uint64
	sentAt   [ringSize]int64
	inflight int

	hist     [maxPhases]*Histogram
	reqs     [maxPhases]uint64
	errs     uint64
	notFound [maxPhases]uint64
	badCode  [maxPhases]uint64
	bytesOut uint64
	bytesIn  uint64
	err      error

	completed atomic.Uint64
	_         [56]byte // keeps completed off its neighbour's cache line
}

// StartLoad dials every connection, then starts sending. The run ends by
// itself after cfg.Duration, or earlier on Stop or when ctx ends.
func StartLoad(ctx context.Context, cfg LoadConfig) (*Load, error) {
	if cfg.Conns <= 0 || cfg.Depth <= 0 || cfg.Depth > ringSize {
		return nil, fmt.Errorf("load: need conns >= 1 and 1 <= depth <= %d, have %d and %d", ringSize, cfg.Conns, cfg.Depth)
	}
	if len(cfg.Topics) == 0 {
		return nil, errors.New("load: no topics")
	}
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = codec.DefaultMaxFrame
	}
	rf, err := newRequestFrames(cfg.Topics, cfg.Version)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	l := &Load{cfg: cfg, frames: rf, seq: topicSequence(len(cfg.Topics), cfg.Zipf, cfg.Seed), done: make(chan struct{})}
	var d net.Dialer
	for i := 0; i < cfg.Conns; i++ {
		c, err := d.DialContext(ctx, "tcp", cfg.Addr)
		if err != nil {
			for _, w := range l.workers {
				w.conn.Close()
			}
			return nil, fmt.Errorf("load: dial %s (connection %d of %d): %w", cfg.Addr, i+1, cfg.Conns, err)
		}
		w := &worker{l: l, conn: c, br: bufio.NewReaderSize(c, 256<<10), seqPos: (i * 7919) % len(l.seq)}
		w.hist[0] = NewHistogram()
		l.workers = append(l.workers, w)
	}
	l.t0 = time.Now()
	l.end = cfg.Duration.Nanoseconds()
	deadline := l.t0.Add(cfg.Duration + 10*time.Second)
	for _, w := range l.workers {
		// A server that stops answering cannot hold the run past its end.
		w.conn.SetReadDeadline(deadline)
		l.wg.Add(1)
		go w.run()
	}
	go func() {
		l.wg.Wait()
		l.ended.Store(l.now())
		close(l.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			l.Stop()
		case <-l.done:
		}
	}()
	return l, nil
}

// topicSequence draws topic indices once: uniform, or Zipf with exponent s
// (which math/rand requires to be > 1).
func topicSequence(n int, s float64, seed int64) []int32 {
	r := rand.New(rand.NewSource(seed))
	seq := make([]int32, topicSeqLen)
	var z *rand.Zipf
	if s > 1 && n > 1 {
		z = rand.NewZipf(r, s, 1, uint64(n-1))
	}
	for i := range seq {
		if z != nil {
			seq[i] = int32(z.Uint64())
		} else {
			seq[i] = int32(r.Intn(n))
		}
	}
	return seq
}

// now is nanoseconds since the run began, on the monotonic clock.
func (l *Load) now() int64 { return int64(time.Since(l.t0)) }

// SetPhase starts phase p (1 <= p < maxPhases); requests answered from now
// on are counted in it.
func (l *Load) SetPhase(p int) {
	if p <= 0 || p >= maxPhases {
		return
	}
	l.phaseStart[p].Store(l.now())
	l.phase.Store(int32(p))
}

// Completed is the number of answered requests so far (for progress lines).
func (l *Load) Completed() uint64 {
	var n uint64
	for _, w := range l.workers {
		n += w.completed.Load()
	}
	return n
}

// Elapsed is the time since the run began.
func (l *Load) Elapsed() time.Duration { return time.Since(l.t0) }

// Done is closed when every connection has finished.
func (l *Load) Done() <-chan struct{} { return l.done }

// Stop ends the run early; Wait still returns what was measured.
func (l *Load) Stop() {
	l.stopOnce.Do(func() {
		l.stopped.Store(true)
		// Wake workers blocked in a read; what they were waiting for is
		// not counted.
		for _, w := range l.workers {
			w.conn.SetReadDeadline(time.Now())
		}
	})
}

// Wait waits for the run to end and merges the connections' figures.
func (l *Load) Wait() *LoadResult {
	<-l.done
	// The run ends when its connections did, not when Wait is called; a
	// phase set after that (a convergence poll outliving the load) ran for
	// none of it, and the one before it stops at the end, or its rate
	// would be understated by the time nothing was sent.
	end := min(l.ended.Load(), l.end)
	elapsed := time.Duration(end)
	res := &LoadResult{Conns: l.cfg.Conns, Depth: l.cfg.Depth, Elapsed: elapsed, Hist: NewHistogram()}
	last := int(l.phase.Load())
	res.Phases = make([]PhaseResult, last+1)
	for p := range res.Phases {
		res.Phases[p].Hist = NewHistogram()
		start := min(l.phaseStart[p].Load(), end)
		stop := end
		if p < last {
			stop = min(l.phaseStart[p+1].Load(), end)
		}
		res.Phases[p].Elapsed = time.Duration(max(stop-start, 0))
	}
	for _, w := range l.workers {
		for p := range res.Phases {
			res.Phases[p].Hist.Merge(w.hist[p])
			res.Phases[p].Requests += w.reqs[p]
		}
		for p := range res.Phases {
			res.Phases[p].NotFound += w.notFound[p]
			res.Phases[p].Errors += w.badCode[p]
			res.NotFound += w.notFound[p]
		}
		res.Errors += w.errs
		res.BytesOut += w.bytesOut
		res.BytesIn += w.bytesIn
		if res.FirstError == nil && w.err != nil {
			res.FirstError = w.err
		}
	}
	for _, p := range res.Phases {
		res.Hist.Merge(p.Hist)
		res.Requests += p.Requests
	}
	return res
}

func (w *worker) run() {
	defer w.l.wg.Done()
	defer w.conn.Close()
	l := w.l
	for w.inflight < l.cfg.Depth {
		w.queue(l.now())
	}
	if !w.flush() {
		return
	}
	for {
		if !w.readOne() {
			return
		}
		sent := 1
		// Answer everything already buffered before writing, so a batch
		// of responses becomes one batch of requests and one syscall.
		for w.frameBuffered() {
			if !w.readOne() {
				return
			}
			sent++
		}
		now := l.now()
		if now >= l.end || l.stopped.Load() {
			return
		}
		for ; sent > 0; sent-- {
			w.queue(now)
		}
		if !w.flush() {
			return
		}
	}
}

func (w *worker) queue(now int64) {
	l := w.l
	topic := l.seq[w.seqPos]
	w.seqPos++
	if w.seqPos == len(l.seq) {
		w.seqPos = 0
	}
	w.wbuf, _ = l.frames.appendRequest(w.wbuf, int(topic), w.next)
	w.sentAt[w.next%ringSize] = now
	w.next++
	w.inflight++
}

func (w *worker) flush() bool {
	n, err := w.conn.Write(w.wbuf)
	w.bytesOut += uint64(n)
	w.wbuf = w.wbuf[:0]
	if err != nil {
		w.fail(fmt.Errorf("write: %w", err))
		return false
	}
	return true
}

// fail records err unless the run was stopped, which makes reads and writes
// fail on purpose.
func (w *worker) fail(err error) {
	if w.l.stopped.Load() {
		return
	}
	w.errs++
	if w.err == nil {
		w.err = fmt.Errorf("%s: %w", w.conn.LocalAddr(), err)
	}
}

// frameBuffered reports whether a whole response is already in the reader.
func (w *worker) frameBuffered() bool {
	if w.br.Buffered() < 4 {
		return false
	}
	p, _ := w.br.Peek(4)
	n, err := codec.FrameLength(p, w.l.cfg.MaxFrame)
	return err == nil && w.br.Buffered() >= n+4
}

// readOne reads and checks one response and records its latency.
func (w *worker) readOne() bool {
	p, err := w.br.Peek(4)
	if err != nil {
		w.fail(fmt.Errorf("read: %w", err))
		return false
	}
	n, err := codec.FrameLength(p, w.l.cfg.MaxFrame)
	if err != nil {
		w.fail(err)
		return false
	}
	var frame []byte
	if n+4 <= w.br.Size() {
		frame, err = w.br.Peek(n + 4)
		if err == nil {
			frame = frame[4:]
		}
	} else {
		w.br.Discard(4)
		if cap(w.big) < n {
			w.big = make([]byte, n)
		}
		frame = w.big[:n]
		_, err = io.ReadFull(w.br, frame)
	}
	if err != nil {
		w.fail(fmt.Errorf("read frame of %d bytes: %w", n+4, err))
		return false
	}
	now := w.l.now()
	derr := codec.Decode(frame, &w.cmd)
	if n+4 <= w.br.Size() {
		w.br.Discard(n + 4)
	}
	w.bytesIn += uint64(n + 4)
	if derr != nil {
		w.fail(fmt.Errorf("decode response: %w", derr))
		return false
	}
	seq := uint64(w.cmd.Opaque) - opaqueBase
	if !w.cmd.IsResponse() || w.cmd.Opaque < opaqueBase || seq >= w.next || w.next-seq > uint64(w.l.cfg.Depth) {
		w.fail(fmt.Errorf("unexpected frame: code %d flag %d opaque %d", w.cmd.Code, w.cmd.Flag, w.cmd.Opaque))
		return false
	}
	w.inflight--
	if w.l.stopped.Load() {
		return true
	}
	p2 := w.l.phase.Load()
	switch w.cmd.Code {
	case codec.Success:
	case codec.TopicNotExist:
		// Expected while brokers are being evicted: an answer, not a fault.
		w.notFound[p2]++
	default:
		w.badCode[p2]++
		w.fail(fmt.Errorf("response code %d: %s", w.cmd.Code, w.cmd.Remark))
	}
	h := w.hist[p2]
	if h == nil {
		h = NewHistogram()
		w.hist[p2] = h
	}
	h.Record(now - w.sentAt[seq%ringSize])
	w.reqs[p2]++
	w.completed.Add(1)
	return true
}
