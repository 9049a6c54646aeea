// Benchmarks: the cost of a broker heartbeat over the wire, and broker
// failover from the master's connections closing to the surviving
// broker's 1008, with Java's default timings.

package ctlserver

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/ctlserver/brokersim"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heartbeatFrame is a 5.3.x broker's oneway 904 for broker id 1 of set
// name, as Java encodes it.
func heartbeatFrame(name string) []byte {
	c := &codec.Command{Code: codec.BrokerHeartbeat, Flag: codec.FlagOneway, Version: codec.ServerVersion, Language: codec.LanguageJava}
	for _, kv := range [][2]string{{"brokerId", "1"}, {"electionPriority", "2147483647"}, {"confirmOffset", "0"},
		{"heartbeatTimeoutMills", "10000"}, {"clusterName", "DefaultCluster"}, {"brokerAddr", "127.0.0.1:30911"},
		{"epoch", "1"}, {"maxOffset", "0"}, {"brokerName", name}} {
		c.SetExt(kv[0], kv[1])
	}
	return codec.AppendFrame(nil, c)
}

// BenchmarkHeartbeatWire is one node taking heartbeats from many brokers,
// each on its own connection and each heartbeat a write of its own, as
// brokers send them (one per second per node). cpu-ns/hb is the whole
// process's CPU per heartbeat: the node's read, decode and liveness
// update, and the sender's write system call.
func BenchmarkHeartbeatWire(b *testing.B) {
	for _, brokers := range []int{1, 100} {
		b.Run(fmt.Sprintf("brokers=%d", brokers), func(b *testing.B) {
			s := single(b, nil)
			conns := make([]net.Conn, brokers)
			frames := make([][]byte, brokers)
			for i := range conns {
				c, err := net.Dial("tcp", s.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				conns[i], frames[i] = c, heartbeatFrame("broker-"+strconv.Itoa(i))
			}
			sync := func() {
				for _, c := range conns {
					req := codec.AppendFrame(nil, &codec.Command{Code: codec.ControllerGetMetadataInfo, Opaque: 7})
					if _, err := c.Write(req); err != nil {
						b.Fatal(err)
					}
					var prefix [4]byte
					c.SetReadDeadline(time.Now().Add(10 * time.Second))
					if _, err := c.Read(prefix[:]); err != nil {
						b.Fatal(err)
					}
					rest := make([]byte, int(prefix[0])<<24|int(prefix[1])<<16|int(prefix[2])<<8|int(prefix[3]))
					for n := 0; n < len(rest); {
						m, err := c.Read(rest[n:])
						if err != nil {
							b.Fatal(err)
						}
						n += m
					}
				}
			}
			for i := range conns {
				conns[i].Write(frames[i])
			}
			sync()
			b.ReportAllocs()
			cpu := cpuTime(b)
			b.ResetTimer()
			for i := range b.N {
				k := i % brokers
				if _, err := conns[k].Write(frames[k]); err != nil {
					b.Fatal(err)
				}
			}
			sync()
			b.StopTimer()
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/hb")
			if alive := s.Stats().BrokersAlive; alive != brokers {
				b.Fatalf("%d brokers alive, want %d", alive, brokers)
			}
		})
	}
}

// BenchmarkFailover measures, over repeated failovers, the time from the
// moment the master broker's connections close (as on kill -9) to the
// surviving broker's receipt of the 1008 naming it master; each run then
// brings the old master back as a slave for the next one. The node keeps
// Java's default timings (5 s scans, 10 s heartbeat timeout, 1 s
// heartbeats): the failover comes from the connection close alone.
func BenchmarkFailover(b *testing.B) {
	for _, tc := range []struct {
		nodes int
		raft  string
	}{{1, "default"}, {3, "default"}, {3, "fast"}} {
		n := tc.nodes
		b.Run(fmt.Sprintf("nodes=%d/raft=%s", n, tc.raft), func(b *testing.B) {
			addrs := remotingtest.FreeAddrs(b, n)
			brokers := make([]*brokersim.Broker, 2)
			var nodes []*Server
			for i := range n {
				cfg := DefaultConfig(dledger(b, addrs, i), b.TempDir())
				cfg.BindAddress = "127.0.0.1"
				if tc.raft == "fast" {
					fastRaft(&cfg)
				}
				nodes = append(nodes, startNode(b, cfg))
			}
			// diagnose tells what the nodes and brokers saw when a notice
			// does not come.
			diagnose := func() string {
				out := ""
				for _, s := range nodes {
					out += fmt.Sprintf("\n%s: leader %v %+v %+v", s.ID(), s.node.ReadyLeader(), s.Groups(), s.Stats().Elections)
				}
				for _, br := range brokers {
					out += fmt.Sprintf("\nbroker %s: %+v notices %+v", br.Addr(), br.State(), br.Notices())
				}
				return out
			}
			for i := range brokers {
				brokers[i] = brokersim.New(brokersim.Config{Cluster: "DefaultCluster", BrokerName: "broker-a",
					ControllerAddrs: addrs, RetryInterval: 100 * time.Millisecond, Log: testLogger(b)})
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if err := brokers[i].Start(ctx); err != nil {
					b.Fatal(err)
				}
				cancel()
				defer brokers[i].Kill()
			}
			master, slave := brokers[0], brokers[1]
			expand := func() {
				ids := []int64{master.State().ID, slave.State().ID}
				slices.Sort(ids)
				for try := 0; ; try++ {
					_, err := master.AlterSyncStateSet(context.Background(), ids)
					if err == nil {
						return
					}
					if try == 100 {
						b.Fatalf("1001: %v%s", err, diagnose())
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			expand()
			var lat []time.Duration
			b.ResetTimer()
			for range b.N {
				epoch := master.State().MasterEpoch + 1
				start := time.Now()
				master.Kill()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				note, err := slave.WaitNotice(ctx, func(n brokersim.Notice) bool { return n.MasterEpoch == epoch })
				cancel()
				if err != nil {
					b.Fatalf("%v%s", err, diagnose())
				}
				lat = append(lat, note.Received.Sub(start))
				b.StopTimer()
				ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
				if err := master.Start(ctx); err != nil {
					b.Fatal(err)
				}
				cancel()
				master, slave = slave, master
				remotingtest.WaitFor(b, "the new master", func() bool { return master.State().Master })
				expand()
				b.StartTimer()
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[(len(lat)*99+99)/100-1].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
		})
	}
}

// BenchmarkFailoverHeartbeatTimeout measures broker failover when the
// master hangs instead of dying: its connections stay open, its heartbeats
// stop, and only the expiry scan finds it. The time runs from the master's
// last heartbeat to the surviving broker's 1008, over a 3-node group:
// "java" is Java 5.3.3's defaults (heartbeatTimeoutMills 10 s, a scan
// every 5 s), "tight" a 2 s timeout and a 500 ms scan.
func BenchmarkFailoverHeartbeatTimeout(b *testing.B) {
	for _, tc := range []struct {
		name          string
		timeout, scan time.Duration
	}{{"java", 10 * time.Second, 5 * time.Second}, {"tight", 2 * time.Second, 500 * time.Millisecond}} {
		b.Run(tc.name, func(b *testing.B) {
			addrs := remotingtest.FreeAddrs(b, 3)
			for i := range addrs {
				cfg := DefaultConfig(dledger(b, addrs, i), b.TempDir())
				cfg.BindAddress = "127.0.0.1"
				cfg.ScanNotActiveBrokerInterval = tc.scan
				startNode(b, cfg)
			}
			brokers := make([]*brokersim.Broker, 2)
			for i := range brokers {
				brokers[i] = brokersim.New(brokersim.Config{Cluster: "DefaultCluster", BrokerName: "broker-a",
					ControllerAddrs: addrs, HeartbeatTimeout: tc.timeout, RetryInterval: 100 * time.Millisecond, Log: testLogger(b)})
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if err := brokers[i].Start(ctx); err != nil {
					b.Fatal(err)
				}
				cancel()
				defer brokers[i].Kill()
			}
			master, slave := brokers[0], brokers[1]
			if !master.State().Master {
				master, slave = slave, master
			}
			expand := func() {
				ids := []int64{master.State().ID, slave.State().ID}
				slices.Sort(ids)
				for try := 0; ; try++ {
					_, err := master.AlterSyncStateSet(context.Background(), ids)
					if err == nil {
						return
					}
					if try == 100 {
						b.Fatalf("1001 by %+v never succeeded: %v; the other broker %+v", master.State(), err, slave.State())
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			expand()
			var lat []time.Duration
			b.ResetTimer()
			for range b.N {
				epoch, id := master.State().MasterEpoch+1, slave.State().ID
				master.Hang()
				last := master.LastHeartbeat()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				note, err := slave.WaitNotice(ctx, func(n brokersim.Notice) bool { return n.MasterEpoch == epoch && n.MasterBrokerID == id })
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, note.Received.Sub(last))
				b.StopTimer()
				master.Kill()
				ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
				if err := master.Start(ctx); err != nil {
					b.Fatal(err)
				}
				cancel()
				master, slave = slave, master
				remotingtest.WaitFor(b, "the new master", func() bool { return master.State().Master })
				expand()
				b.StartTimer()
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
			b.ReportMetric(float64(lat[(len(lat)*99+99)/100-1].Milliseconds()), "p99-ms")
			b.ReportMetric(float64(lat[len(lat)-1].Milliseconds()), "max-ms")
		})
	}
}

// BenchmarkLeaderFailover measures, over repeated stops of the leader node
// of a 3-node group with raftnode's default timings, the time from the
// stop to the first write (a 1013 creating a new set) answered SUCCESS by
// the new leader. The client asks every surviving node for the leader
// (1005) and retries at once; a Java broker re-asks only every 10 s
// (syncControllerMetadataPeriod), which adds up to that much on its side.
func BenchmarkLeaderFailover(b *testing.B) {
	addrs := remotingtest.FreeAddrs(b, 3)
	dirs := []string{b.TempDir(), b.TempDir(), b.TempDir()}
	nodes := make([]*Server, 3)
	start := func(i int) {
		cfg := DefaultConfig(dledger(b, addrs, i), dirs[i])
		cfg.BindAddress = "127.0.0.1"
		cfg.Logger = testLogger(b)
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
		nodes[i] = s
	}
	for i := range nodes {
		start(i)
	}
	defer func() {
		for _, s := range nodes {
			if s != nil {
				shutdown(b, s)
			}
		}
	}()
	leader := func() int {
		for {
			for i, s := range nodes {
				if s != nil && s.node.ReadyLeader() {
					return i
				}
			}
			time.Sleep(time.Millisecond)
		}
	}
	clients := map[string]*client.Client{}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	invoke := func(addr string, req *codec.Command) (*codec.Command, error) {
		c := clients[addr]
		if c == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			var err error
			c, err = client.Dial(ctx, addr)
			cancel()
			if err != nil {
				return nil, err
			}
			clients[addr] = c
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		resp, err := c.Invoke(ctx, req)
		if err != nil {
			c.Close()
			delete(clients, addr)
		}
		return resp, err
	}
	// write sends one 1013 until a leader answers SUCCESS.
	write := func(set string, skip int) {
		for {
			for i, addr := range addrs {
				if i == skip {
					continue
				}
				meta, err := invoke(addr, &codec.Command{Code: codec.ControllerGetMetadataInfo})
				if err != nil {
					continue
				}
				leaderAddr, _ := meta.ExtValue("controllerLeaderAddress")
				if leaderAddr == "" || (skip >= 0 && leaderAddr == addrs[skip]) {
					continue
				}
				req := request(codec.ControllerApplyBrokerID, 0, "clusterName", "C", "brokerName", set,
					"appliedBrokerId", "1", "registerCheckCode", "127.0.0.1:1;1")
				if r, err := invoke(leaderAddr, req); err == nil && r.Code == codec.Success {
					return
				}
			}
			time.Sleep(time.Millisecond)
		}
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		l := leader()
		write(fmt.Sprintf("warm-%d", i), -1)
		b.StartTimer()
		t0 := time.Now()
		shutdown(b, nodes[l])
		nodes[l] = nil
		write(fmt.Sprintf("lf-%d", i), l)
		lat = append(lat, time.Since(t0))
		b.StopTimer()
		start(l)
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)*99+99)/100-1].Milliseconds()), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Milliseconds()), "max-ms")
}
