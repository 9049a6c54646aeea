// Simulated brokers: B brokers sharing T topics W to a topic, registered
// through core/client and kept alive with heartbeats. The heartbeat is the
// oneway QUERY_DATA_VERSION a 5.x broker sends in compatibleWithOldNameSrv
// mode (its default): every NameServer version, Java 4.9.8 included,
// refreshes liveness on it. 4.9.8 does not know BROKER_HEARTBEAT (904) and
// would let brokers sending only that expire after 120 s.

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
)

// ClusterSpec is the shape of the simulated cluster.
type ClusterSpec struct {
	Brokers  int // B
	Topics   int // T
	PerTopic int // W: brokers carrying each topic
	// TimeoutMillis is the heartbeatTimeoutMillis the brokers ask for; 0
	// leaves it to the server (120 s).
	TimeoutMillis int64
	// Mutate makes each re-registration flip every topic's queue count, so
	// routes really change (and caches are invalidated), not only the data
	// version.
	Mutate bool
}

// Entries is the number of topic-broker pairs the spec registers.
func (s ClusterSpec) Entries() int { return s.Topics * min(s.PerTopic, s.Brokers) }

func (s ClusterSpec) check() error {
	if s.Brokers <= 0 || s.Topics <= 0 || s.PerTopic <= 0 || s.PerTopic > s.Brokers {
		return fmt.Errorf("cluster: need brokers, topics >= 1 and 1 <= per-topic <= brokers, have %d, %d, %d", s.Brokers, s.Topics, s.PerTopic)
	}
	return nil
}

// TopicName is the i-th bench topic.
func TopicName(i int) string { return fmt.Sprintf("BenchTopic-%07d", i) }

// BrokerName is the i-th bench broker group.
func BrokerName(i int) string { return fmt.Sprintf("bench-broker-%04d", i) }

// Cluster is a set of registered simulated brokers.
type Cluster struct {
	Spec   ClusterSpec
	Topics []string
	addr   string
	b      []*simBroker
}

type simBroker struct {
	id      client.Broker
	cl      *client.Client
	topics  []body.TopicConfig
	counter int64
	regs    atomic.Uint64
	// dv is the data version of the latest registration, which the
	// heartbeats carry as a broker's do.
	dv atomic.Pointer[body.DataVersion]

	// hbCtx ends the heartbeat goroutine, also one stuck in a send;
	// lastHB is its last send (unix ns).
	hbCtx     context.Context
	stopHB    context.CancelFunc
	hbDone    chan struct{}
	lastHB    atomic.Int64
	hbStarted bool
	dropped   bool
}

// brokersOf lists the brokers that carry topic t: W consecutive ones, so
// every broker carries T*W/B topics.
func (s ClusterSpec) brokersOf(t int) []int {
	out := make([]int, s.PerTopic)
	for j := range out {
		out[j] = (t + j) % s.Brokers
	}
	return out
}

// StartCluster connects B brokers to addr, registers them (at most 4 at a
// time) and starts their heartbeats.
func StartCluster(ctx context.Context, addr string, spec ClusterSpec) (*Cluster, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	c := &Cluster{Spec: spec, addr: addr, Topics: make([]string, spec.Topics)}
	for i := range c.Topics {
		c.Topics[i] = TopicName(i)
	}
	for i := 0; i < spec.Brokers; i++ {
		b := &simBroker{
			id: client.Broker{
				Cluster: "BenchCluster", Name: BrokerName(i), Addr: fmt.Sprintf("127.0.0.1:%d", 20000+i),
				HAAddr: fmt.Sprintf("127.0.0.1:%d", 30000+i), HeartbeatTimeoutMillis: spec.TimeoutMillis,
			},
			hbDone: make(chan struct{}),
		}
		b.hbCtx, b.stopHB = context.WithCancel(context.Background())
		c.b = append(c.b, b)
	}
	for t := range c.Topics {
		for _, bi := range spec.brokersOf(t) {
			c.b[bi].topics = append(c.b[bi].topics, body.TopicConfig{
				TopicName: c.Topics[t], ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG",
			})
		}
	}
	// Four registrations at a time: a big cluster registers in seconds
	// without one goroutine per broker encoding its body at once.
	sem := make(chan struct{}, 4)
	errs := make([]error, len(c.b))
	var wg sync.WaitGroup
	for i, b := range c.b {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if ctx.Err() != nil {
				errs[i] = ctx.Err()
				return
			}
			cl, err := client.Dial(ctx, addr)
			if err != nil {
				errs[i] = err
				return
			}
			b.cl = cl
			errs[i] = b.register(ctx, false)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Close()
		return nil, fmt.Errorf("cluster: %w", err)
	}
	every := 10 * time.Second
	if spec.TimeoutMillis > 0 {
		every = time.Duration(spec.TimeoutMillis) * time.Millisecond / 4
	}
	for _, b := range c.b {
		b.hbStarted = true
		go b.heartbeats(every)
	}
	return c, nil
}

// register sends the broker's topics with a new data version, as a broker
// does after a topic change.
func (b *simBroker) register(ctx context.Context, mutate bool) error {
	b.counter++
	if mutate {
		q := int32(8)
		if b.counter%2 == 0 {
			q = 16
		}
		for i := range b.topics {
			b.topics[i].ReadQueueNums, b.topics[i].WriteQueueNums = q, q
		}
	}
	rb := &body.RegisterBroker{
		FilterServerList: []string{},
		DataVersion:      body.DataVersion{Timestamp: time.Now().UnixMilli(), Counter: b.counter},
		Topics:           b.topics,
	}
	if _, _, err := b.cl.RegisterBroker(ctx, b.id, rb); err != nil {
		return err
	}
	b.dv.Store(&rb.DataVersion)
	b.regs.Add(1)
	b.lastHB.Store(time.Now().UnixNano())
	return nil
}

func (b *simBroker) heartbeats(every time.Duration) {
	defer close(b.hbDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-b.hbCtx.Done():
			return
		case <-t.C:
			if err := b.cl.DataVersionHeartbeat(b.hbCtx, b.id, *b.dv.Load()); err != nil {
				return
			}
			b.lastHB.Store(time.Now().UnixNano())
		}
	}
}

func (b *simBroker) silence() {
	b.stopHB()
	if b.hbStarted {
		<-b.hbDone
	}
}

// Storm re-registers every broker as fast as it can, each on its own
// connection, until ctx ends; it returns the number of registrations.
func (c *Cluster) Storm(ctx context.Context) (uint64, error) {
	var total atomic.Uint64
	errs := make([]error, len(c.b))
	var wg sync.WaitGroup
	for i, b := range c.b {
		if b.dropped {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := b.register(ctx, c.Spec.Mutate); err != nil {
					if ctx.Err() == nil {
						errs[i] = err
					}
					return
				}
				total.Add(1)
			}
		}()
	}
	wg.Wait()
	return total.Load(), errors.Join(errs...)
}

// Drop takes the first n brokers away at once: with silent they stop
// heartbeating but keep their connections (the server must time them out);
// otherwise their connections are closed. It returns the brokers' names
// and, for silent, the latest heartbeat any of them sent.
func (c *Cluster) Drop(n int, silent bool) (names []string, lastBeat time.Time) {
	n = min(n, len(c.b))
	var last int64
	for _, b := range c.b[:n] {
		b.silence()
		last = max(last, b.lastHB.Load())
		names = append(names, b.id.Name)
	}
	if !silent {
		var wg sync.WaitGroup
		for _, b := range c.b[:n] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.cl.Close()
			}()
		}
		wg.Wait()
	}
	for _, b := range c.b[:n] {
		b.dropped = true
	}
	return names, time.Unix(0, last)
}

// AffectedTopics lists the topics carried by any of the first n brokers.
func (c *Cluster) AffectedTopics(n int) []string {
	var out []string
	for t := range c.Topics {
		for _, bi := range c.Spec.brokersOf(t) {
			if bi < n {
				out = append(out, c.Topics[t])
				break
			}
		}
	}
	return out
}

// Close unregisters every remaining broker (so the next run starts clean on
// a server that drops only one broker per closed connection, as Java's
// does) and closes the connections.
func (c *Cluster) Close() error {
	var errs []error
	for _, b := range c.b {
		if b.cl == nil {
			continue
		}
		b.silence()
		if !b.dropped {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := b.cl.UnregisterBroker(ctx, b.id); err != nil {
				errs = append(errs, err)
			}
			cancel()
		}
		b.cl.Close()
	}
	return errors.Join(errs...)
}
