// The simulated broker: its configuration, start-up sequence, periodic
// traffic, role changes and the 1008 handler.

package brokersim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/remoting"
)

// Config describes one simulated broker. Zero durations take Java's
// defaults.
type Config struct {
	Cluster, BrokerName string
	// ControllerAddrs is controllerAddr, every controller node.
	ControllerAddrs []string
	// ListenAddr is the broker's port (brokerIP1:listenPort), the address
	// it registers and receives 1008 on; "" is a free loopback port.
	ListenAddr string

	HeartbeatInterval   time.Duration // brokerHeartbeatInterval, 1 s
	ReplicaInfoInterval time.Duration // syncBrokerMetadataPeriod, 5 s
	MetadataInterval    time.Duration // syncControllerMetadataPeriod, 10 s
	// HeartbeatTimeout is sent as heartbeatTimeoutMills (10 s).
	HeartbeatTimeout time.Duration
	// RetryInterval spaces the start-up retries (5 s).
	RetryInterval time.Duration
	// RequestTimeout bounds each request (3 s, as Java's).
	RequestTimeout time.Duration
	// ElectionPriority is brokerElectionPriority; 0 is Integer.MAX_VALUE.
	ElectionPriority int32

	// NamesrvAddrs is namesrvAddr: when set, the broker registers (103)
	// with each NameServer once running, every RegisterInterval (30 s)
	// and at once after each role change, as brokerId 0 while master and
	// under its own id while slave, as a controller-mode Java broker does,
	// with Topics besides its own (TBW102, the cluster's and its set's)
	// as its topics (4 queues each, read and write).
	NamesrvAddrs     []string
	RegisterInterval time.Duration
	Topics           []string

	Log *slog.Logger
}

func (c *Config) withDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.HeartbeatInterval, time.Second)
	def(&c.ReplicaInfoInterval, 5*time.Second)
	def(&c.MetadataInterval, 10*time.Second)
	def(&c.HeartbeatTimeout, 10*time.Second)
	def(&c.RetryInterval, 5*time.Second)
	def(&c.RequestTimeout, 3*time.Second)
	def(&c.RegisterInterval, 30*time.Second)
	if c.ElectionPriority == 0 {
		c.ElectionPriority = math.MaxInt32
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.ListenAddr == "" {
		c.ListenAddr = "127.0.0.1:0"
	}
}

// Notice is one 1008 the broker received.
type Notice struct {
	MasterAddress     string
	MasterBrokerID    int64
	HasMasterBrokerID bool
	MasterEpoch       int32
	SyncStateSetEpoch int32
	// Ext is the header's extFields; Body the SyncStateSet body as sent.
	Ext      map[string]string
	Body     []byte
	Oneway   bool
	Version  int32
	Received time.Time
}

// State is the broker's view of its set.
type State struct {
	ID                int64 // 0 until registered
	Master            bool
	MasterID          int64 // 0 when no master is known
	MasterAddr        string
	MasterEpoch       int32
	SyncStateSet      []int64
	SyncStateSetEpoch int32
	Leader            string // the controller it sends leader requests to
	Running           bool
}

// Broker is one simulated broker.
type Broker struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	addr    string // fixed at the first Start: the controller records it
	state   State
	clients map[string]*client.Client
	notices []Notice
	epochs  []body.EpochEntry // one per masterEpoch adopted, for 1007
	// reregister asks the NameServer registration loop for a
	// registration now (a role change); dataVersion counts them.
	reregister  chan struct{}
	dataVersion int64
	// lastHeartbeat is when heartbeatAll last finished.
	lastHeartbeat time.Time
	noticed       chan struct{} // closed and replaced on each notice
	ln            *remoting.Server
	stop          chan struct{}
	wg            sync.WaitGroup
}

// New builds a broker; Start brings it up.
func New(cfg Config) *Broker {
	cfg.withDefaults()
	return &Broker{cfg: cfg, log: cfg.Log.With("broker", cfg.BrokerName), clients: map[string]*client.Client{}, noticed: make(chan struct{}),
		reregister: make(chan struct{}, 1)}
}

// Addr is the broker's address, "" before the first Start.
func (b *Broker) Addr() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.addr
}

// State returns the broker's view now.
func (b *Broker) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.state
	st.SyncStateSet = slices.Clone(st.SyncStateSet)
	return st
}

// Notices returns every 1008 received so far.
func (b *Broker) Notices() []Notice {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.notices)
}

// WaitNotice waits for a received 1008 (earlier ones included) that match
// accepts. match runs under the broker's lock: it must not call the
// broker's methods.
func (b *Broker) WaitNotice(ctx context.Context, match func(Notice) bool) (Notice, error) {
	for {
		b.mu.Lock()
		for _, n := range b.notices {
			if match(n) {
				b.mu.Unlock()
				return n, nil
			}
		}
		ch := b.noticed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Notice{}, fmt.Errorf("%s: no matching role change notice: %w", b.cfg.BrokerName, ctx.Err())
		}
	}
}

// Start opens the broker's port, registers with the controller (leader
// discovery, id, address, master) and starts the periodic traffic. It
// returns once the broker runs, or with ctx's error.
func (b *Broker) Start(ctx context.Context) error {
	if err := b.listen(); err != nil {
		return err
	}
	b.mu.Lock()
	b.stop = make(chan struct{})
	id := b.state.ID
	b.state = State{ID: id, MasterEpoch: 0}
	b.mu.Unlock()
	if err := b.register(ctx); err != nil {
		b.Kill()
		return err
	}
	b.mu.Lock()
	b.state.Running = true
	stop := b.stop
	b.mu.Unlock()
	b.wg.Add(3)
	go b.every(stop, b.cfg.HeartbeatInterval, b.cfg.HeartbeatInterval, b.heartbeatAll)
	go b.every(stop, 3*time.Second, b.cfg.ReplicaInfoInterval, b.pollReplicaInfo)
	go b.every(stop, 3*time.Second, b.cfg.MetadataInterval, func() { b.discoverLeader() })
	if len(b.cfg.NamesrvAddrs) > 0 {
		b.wg.Add(1)
		go b.registerLoop(stop)
	}
	return nil
}

// registerLoop registers with the NameServers at once, then every
// RegisterInterval and after each role change.
func (b *Broker) registerLoop(stop <-chan struct{}) {
	defer b.wg.Done()
	t := time.NewTicker(b.cfg.RegisterInterval)
	defer t.Stop()
	for {
		b.registerNamesrvs()
		select {
		case <-stop:
			return
		case <-t.C:
		case <-b.reregister:
		}
	}
}

// registerNamesrvs sends one REGISTER_BROKER to each NameServer it can
// reach.
func (b *Broker) registerNamesrvs() {
	b.mu.Lock()
	st := b.state
	b.dataVersion++
	dv := body.DataVersion{Timestamp: time.Now().UnixMilli(), Counter: b.dataVersion}
	b.mu.Unlock()
	id := st.ID
	if st.Master {
		id = 0
	}
	acting := false
	who := client.Broker{Cluster: b.cfg.Cluster, Name: b.cfg.BrokerName, Addr: b.Addr(), HAAddr: b.Addr(), ID: id,
		EnableActingMaster: &acting, HeartbeatTimeoutMillis: 30000}
	rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: dv}
	// A broker's own topics come too (one would be a lone topic, which a
	// NameServer refuses in a first registration).
	topics := []string{"TBW102", b.cfg.Cluster, b.cfg.BrokerName}
	for _, t := range b.cfg.Topics {
		if !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	for _, t := range topics {
		rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: t, ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6})
	}
	for _, addr := range b.cfg.NamesrvAddrs {
		c, err := b.conn(addr)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.cfg.RequestTimeout)
		if _, _, err := c.RegisterBroker(ctx, who, rb); err != nil {
			b.log.Debug("broker registration failed", "namesrv", addr, "err", err)
			b.drop(addr, c)
		}
		cancel()
	}
}

// listen opens the broker's port (the same one on a restart).
func (b *Broker) listen() error {
	b.mu.Lock()
	addr := b.addr
	b.mu.Unlock()
	if addr == "" {
		addr = b.cfg.ListenAddr
	}
	ln, err := remoting.New(remoting.Options{
		Addr: addr,
		Log:  b.log,
		Routes: []remoting.Route{{Code: codec.NotifyBrokerRoleChanged, Handler: b.handleNotify},
			{Code: codec.GetBrokerEpochCache, Handler: b.handleEpochCache}},
	})
	if err != nil {
		return err
	}
	if err := ln.Start(); err != nil {
		return fmt.Errorf("broker %s: %w", b.cfg.BrokerName, err)
	}
	b.mu.Lock()
	b.ln = ln
	b.addr = ln.Addr().String()
	b.mu.Unlock()
	return nil
}

// Hang stops the periodic traffic (heartbeats, polls, registrations) but
// leaves every connection and the port open, as a broker that hung
// without dying: the controller can only tell from the heartbeats'
// timeout. Kill (then Start) brings it back.
func (b *Broker) Hang() {
	b.mu.Lock()
	stop := b.stop
	b.stop = nil
	b.state.Running = false
	b.mu.Unlock()
	if stop != nil {
		close(stop)
	}
	b.wg.Wait()
}

// LastHeartbeat is when the broker last sent its heartbeats (zero before
// the first).
func (b *Broker) LastHeartbeat() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastHeartbeat
}

// Kill closes every connection at once, as a killed broker's do, and
// stops the periodic traffic. The broker keeps its id for a later Start.
func (b *Broker) Kill() {
	b.mu.Lock()
	stop, ln := b.stop, b.ln
	b.stop, b.ln = nil, nil
	clients := b.clients
	b.clients = map[string]*client.Client{}
	b.state.Running = false
	b.mu.Unlock()
	if stop != nil {
		close(stop)
	}
	for _, c := range clients {
		c.Close()
	}
	if ln != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ln.Shutdown(ctx)
		cancel()
	}
	b.wg.Wait()
	// A request in flight when Kill began may have dialled again.
	b.mu.Lock()
	clients = b.clients
	b.clients = map[string]*client.Client{}
	b.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
}

func (b *Broker) every(stop <-chan struct{}, first, interval time.Duration, fn func()) {
	defer b.wg.Done()
	t := time.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			fn()
			t.Reset(interval)
		}
	}
}

// register is §3.2 from leader discovery to RUNNING, retried every
// RetryInterval.
func (b *Broker) register(ctx context.Context) error {
	for {
		err := b.registerOnce(ctx)
		if err == nil {
			return nil
		}
		b.log.Debug("broker start-up attempt failed", "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("broker %s start-up: %w (last: %v)", b.cfg.BrokerName, ctx.Err(), err)
		case <-time.After(b.cfg.RetryInterval):
		}
	}
}

func (b *Broker) registerOnce(ctx context.Context) error {
	if err := b.discoverLeader(); err != nil {
		return err
	}
	if b.State().ID == 0 {
		next, err := b.leaderCall(ctx, codec.ControllerGetNextBrokerID, nil, "clusterName", b.cfg.Cluster, "brokerName", b.cfg.BrokerName)
		if err != nil {
			return err
		}
		v, _ := next.ExtValue("nextBrokerId")
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("1012 answered nextBrokerId %q", v)
		}
		code := b.Addr() + ";" + strconv.FormatInt(time.Now().UnixMilli(), 10)
		if _, err := b.leaderCall(ctx, codec.ControllerApplyBrokerID, nil, "appliedBrokerId", v, "registerCheckCode", code,
			"clusterName", b.cfg.Cluster, "brokerName", b.cfg.BrokerName); err != nil {
			return err
		}
		b.mu.Lock()
		b.state.ID = id
		b.mu.Unlock()
	}
	id := strconv.FormatInt(b.State().ID, 10)
	reg, err := b.leaderCall(ctx, codec.ControllerRegisterBroker, nil, "brokerId", id, "invokeTime", now(),
		"clusterName", b.cfg.Cluster, "brokerName", b.cfg.BrokerName, "brokerAddress", b.Addr())
	if err != nil {
		return err
	}
	if _, ok := reg.ExtValue("masterBrokerId"); ok {
		b.adopt(reg, reg.Body)
	}
	b.heartbeatAll()
	if b.State().MasterID != 0 {
		return nil
	}
	el, err := b.leaderCall(ctx, codec.ControllerElectMaster, []int32{codec.ControllerMasterStillExist}, "brokerId", id,
		"invokeTime", now(), "clusterName", b.cfg.Cluster, "designateElect", "false", "brokerName", b.cfg.BrokerName)
	if err != nil {
		return err
	}
	addr, _ := el.ExtValue("masterAddress")
	if _, ok := el.ExtValue("masterBrokerId"); !ok || addr == "" {
		return errors.New("1002 answered without a master")
	}
	eb, err := body.DecodeElectMasterBody(el.Body)
	if err != nil {
		return fmt.Errorf("1002 body: %w", err)
	}
	ssEpoch, _ := el.ExtValue("syncStateSetEpoch")
	n, _ := strconv.ParseInt(ssEpoch, 10, 32)
	b.adopt(el, body.AppendSyncStateSet(nil, eb.SyncStateSet, int32(n)))
	return nil
}

func now() string { return strconv.FormatInt(time.Now().UnixMilli(), 10) }

// adopt applies a master announcement (1002/1003/1004 header, 1008) whose
// masterEpoch is higher than the broker's, with the SyncStateSet body.
func (b *Broker) adopt(h interface{ ExtValue(string) (string, bool) }, set []byte) bool {
	idText, ok := h.ExtValue("masterBrokerId")
	if !ok {
		return false
	}
	masterID, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return false
	}
	epoch := extInt32(h, "masterEpoch")
	addr, _ := h.ExtValue("masterAddress")
	ss, _ := body.DecodeSyncStateSet(set)
	b.mu.Lock()
	defer b.mu.Unlock()
	if epoch <= b.state.MasterEpoch {
		return false
	}
	b.state.MasterID, b.state.MasterAddr, b.state.MasterEpoch = masterID, addr, epoch
	b.epochs = append(b.epochs, body.EpochEntry{Epoch: epoch})
	select {
	case b.reregister <- struct{}{}:
	default:
	}
	b.state.Master = masterID == b.state.ID
	if ss != nil {
		b.state.SyncStateSet, b.state.SyncStateSetEpoch = slices.Clone(ss.IDs), ss.Epoch
	}
	b.log.Info("broker role changed", "id", b.state.ID, "master", b.state.Master, "master_id", masterID, "master_epoch", epoch)
	return true
}

func extInt32(h interface{ ExtValue(string) (string, bool) }, key string) int32 {
	v, _ := h.ExtValue(key)
	n, _ := strconv.ParseInt(v, 10, 32)
	return int32(n)
}

// handleNotify is NOTIFY_BROKER_ROLE_CHANGED, as AdminBrokerProcessor
// takes it: recorded, and adopted when its masterEpoch is higher.
func (b *Broker) handleNotify(_ *remoting.Conn, req, _ *codec.Command) error {
	n := Notice{
		Ext: map[string]string{}, Body: slices.Clone(req.Body), Oneway: req.IsOneway(), Version: req.Version,
		Received: time.Now(), MasterEpoch: extInt32(req, "masterEpoch"), SyncStateSetEpoch: extInt32(req, "syncStateSetEpoch"),
	}
	for _, f := range req.Ext {
		n.Ext[f.Key] = f.Value
	}
	n.MasterAddress = n.Ext["masterAddress"]
	if v, ok := n.Ext["masterBrokerId"]; ok {
		n.MasterBrokerID, _ = strconv.ParseInt(v, 10, 64)
		n.HasMasterBrokerID = true
	}
	b.adopt(req, req.Body)
	b.mu.Lock()
	b.notices = append(b.notices, n)
	close(b.noticed)
	b.noticed = make(chan struct{})
	b.mu.Unlock()
	return nil
}

// handleEpochCache is GET_BROKER_EPOCH_CACHE (1007), as mqadmin
// getBrokerEpoch asks a broker: one epoch entry per masterEpoch adopted
// (no messages, so every offset is 0 and the last entry is open), and the
// id 0 while master, as a Java broker reports it.
func (b *Broker) handleEpochCache(_ *remoting.Conn, _, resp *codec.Command) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := body.EpochEntryCache{ClusterName: b.cfg.Cluster, BrokerName: b.cfg.BrokerName, BrokerID: b.state.ID,
		EpochList: slices.Clone(b.epochs)}
	if b.state.Master {
		c.BrokerID = 0
	}
	if n := len(c.EpochList); n > 0 {
		c.EpochList[n-1].EndOffset = math.MaxInt64
	}
	resp.Body = body.AppendEpochEntryCache(nil, &c)
	return nil
}

// discoverLeader asks each controller in turn for the leader, keeping the
// first non-empty controllerLeaderAddress.
func (b *Broker) discoverLeader() error {
	var last error
	for _, addr := range b.cfg.ControllerAddrs {
		resp, err := b.call(addr, codec.ControllerGetMetadataInfo)
		if err != nil {
			last = err
			continue
		}
		if leader, _ := resp.ExtValue("controllerLeaderAddress"); leader != "" {
			b.mu.Lock()
			b.state.Leader = leader
			b.mu.Unlock()
			return nil
		}
		last = fmt.Errorf("controller %s knows no leader", addr)
	}
	if last == nil {
		last = errors.New("no controller address")
	}
	return last
}

// heartbeatAll sends one oneway 904 to every controller it can reach.
func (b *Broker) heartbeatAll() {
	st := b.State()
	epoch := int32(-1)
	if st.MasterEpoch > 0 {
		epoch = st.MasterEpoch
	}
	for _, addr := range b.cfg.ControllerAddrs {
		c, err := b.conn(addr)
		if err != nil {
			continue
		}
		req := b.request(codec.BrokerHeartbeat, "brokerId", strconv.FormatInt(st.ID, 10),
			"electionPriority", strconv.FormatInt(int64(b.cfg.ElectionPriority), 10), "confirmOffset", "0",
			"heartbeatTimeoutMills", strconv.FormatInt(b.cfg.HeartbeatTimeout.Milliseconds(), 10),
			"clusterName", b.cfg.Cluster, "brokerAddr", b.Addr(), "epoch", strconv.FormatInt(int64(epoch), 10),
			"maxOffset", "0", "brokerName", b.cfg.BrokerName)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := c.InvokeOnewayContext(ctx, req); err != nil {
			b.drop(addr, c)
		}
		cancel()
	}
	b.mu.Lock()
	b.lastHeartbeat = time.Now()
	b.mu.Unlock()
}

// pollReplicaInfo is the 1004 poll: a higher masterEpoch with a master is
// adopted; one without (the master was cleared) makes the broker ask for
// an election itself.
func (b *Broker) pollReplicaInfo() {
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.RequestTimeout)
	defer cancel()
	resp, err := b.leaderCall(ctx, codec.ControllerGetReplicaInfo, nil, "brokerName", b.cfg.BrokerName)
	if err != nil {
		return
	}
	st := b.State()
	epoch := extInt32(resp, "masterEpoch")
	if epoch <= st.MasterEpoch {
		return
	}
	if addr, _ := resp.ExtValue("masterAddress"); addr != "" {
		b.adopt(resp, resp.Body)
		return
	}
	b.leaderCall(ctx, codec.ControllerElectMaster, []int32{codec.ControllerMasterStillExist}, "brokerId", strconv.FormatInt(st.ID, 10),
		"invokeTime", now(), "clusterName", b.cfg.Cluster, "designateElect", "false", "brokerName", b.cfg.BrokerName)
}

// AlterSyncStateSet sends the master's 1001 proposing ids, with its local
// epochs, and adopts the answer.
func (b *Broker) AlterSyncStateSet(ctx context.Context, ids []int64) (*codec.Command, error) {
	st := b.State()
	if !st.Master {
		return nil, fmt.Errorf("broker %s/%d is not the master", b.cfg.BrokerName, st.ID)
	}
	req := b.request(codec.ControllerAlterSyncStateSet, "masterBrokerId", strconv.FormatInt(st.ID, 10), "invokeTime", now(),
		"brokerName", b.cfg.BrokerName, "masterEpoch", strconv.FormatInt(int64(st.MasterEpoch), 10))
	req.Body = body.AppendSyncStateSet(nil, ids, st.SyncStateSetEpoch)
	resp, err := b.leaderInvoke(ctx, req, nil)
	if err != nil {
		return resp, err
	}
	if ss, err := body.DecodeSyncStateSet(resp.Body); err == nil && ss != nil {
		b.mu.Lock()
		if ss.Epoch > b.state.SyncStateSetEpoch {
			b.state.SyncStateSet, b.state.SyncStateSetEpoch = slices.Clone(ss.IDs), ss.Epoch
		}
		b.mu.Unlock()
	}
	return resp, nil
}

func (b *Broker) request(code int32, ext ...string) *codec.Command {
	c := &codec.Command{Code: code, Version: codec.ServerVersion, Language: codec.LanguageJava}
	for i := 0; i+1 < len(ext); i += 2 {
		c.SetExt(ext[i], ext[i+1])
	}
	if code == codec.ControllerGetMetadataInfo {
		c.HasExt = false
	}
	return c
}

// leaderCall sends a leader request and wants SUCCESS (or one of ok).
func (b *Broker) leaderCall(ctx context.Context, code int32, ok []int32, ext ...string) (*codec.Command, error) {
	return b.leaderInvoke(ctx, b.request(code, ext...), ok)
}

func (b *Broker) leaderInvoke(ctx context.Context, req *codec.Command, ok []int32) (*codec.Command, error) {
	leader := b.State().Leader
	if leader == "" {
		return nil, errors.New("no controller leader known")
	}
	c, err := b.conn(leader)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.RequestTimeout)
	defer cancel()
	resp, err := c.Invoke(ctx, req)
	if err != nil {
		b.drop(leader, c)
		return nil, err
	}
	if resp.Code != codec.Success && !slices.Contains(ok, resp.Code) {
		return resp, &client.ResponseError{Code: resp.Code, Remark: resp.Remark}
	}
	return resp, nil
}

// call sends a request without a header to addr.
func (b *Broker) call(addr string, code int32) (*codec.Command, error) {
	c, err := b.conn(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.RequestTimeout)
	defer cancel()
	resp, err := c.Invoke(ctx, b.request(code))
	if err != nil {
		b.drop(addr, c)
	}
	return resp, err
}

// conn is the broker's one connection to a controller, dialled on demand
// (Java's reachability scan keeps only the reachable ones in use).
func (b *Broker) conn(addr string) (*client.Client, error) {
	b.mu.Lock()
	c := b.clients[addr]
	stopped := b.stop == nil
	b.mu.Unlock()
	if c != nil {
		return c, nil
	}
	if stopped {
		return nil, errors.New("broker stopped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop == nil {
		c.Close()
		return nil, errors.New("broker stopped")
	}
	if old := b.clients[addr]; old != nil {
		c.Close()
		return old, nil
	}
	b.clients[addr] = c
	return c, nil
}

// drop forgets a connection that failed, to dial again next time.
func (b *Broker) drop(addr string, c *client.Client) {
	b.mu.Lock()
	if b.clients[addr] == c {
		delete(b.clients, addr)
	}
	b.mu.Unlock()
	c.Close()
}
