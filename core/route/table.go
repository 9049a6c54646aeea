// table.go holds Table: its options, its state and the broker view
// readers load.

package route

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/rocketns/rocketns/shard"
)

// ConnID identifies the connection a registration came over; 0 = none.
type ConnID uint64

// Permission bits of QueueData.Perm (Java PermName).
const (
	PermPriority int32 = 8
	PermRead     int32 = 4
	PermWrite    int32 = 2
	PermInherit  int32 = 1
)

// Topic sys flags (Java TopicSysFlag).
const (
	FlagUnit    int32 = 1
	FlagUnitSub int32 = 2
)

// DefaultBrokerTimeout is Java's DEFAULT_BROKER_CHANNEL_EXPIRED_TIME in ms.
const DefaultBrokerTimeout int64 = 120000

// DefaultMaxBrokerTimeout caps the heartbeatTimeoutMillis a broker may
// register with (config maxHeartbeatTimeoutMillis). Java stores any value,
// and one near 2^63 overflowed the expiry; a broker that stops without
// closing its connection stays on the routes for as long as its timeout,
// so the cap also bounds that. 10 minutes is far above any real
// brokerNotActiveTimeoutMillis (the broker's default is 10 s).
const DefaultMaxBrokerTimeout int64 = 600000

// syncBrokerMemberPrefix marks the topics acting-master brokers query to
// learn their group; their routes are never rewritten (Java
// TopicValidator.SYNC_BROKER_MEMBER_GROUP_PREFIX).
const syncBrokerMemberPrefix = "rmq_sys_SYNC_BROKER_MEMBER_"

// ErrFirstSingleTopic rejects a one-topic registration from a broker id not
// yet registered (Java returns null, the server answers SYSTEM_ERROR
// "register broker failed"): an incremental registration that overtook the
// broker's first full one would otherwise look like the broker's whole topic
// set.
var ErrFirstSingleTopic = errors.New("single-topic registration before the broker's first full registration")

// ErrTakeover refuses a registration or unregistration that would replace
// or remove a broker registered with other credentials (see
// Registration.Owner).
var ErrTakeover = errors.New("broker registered with other credentials")

// ErrTooManyTopics refuses a registration that would take the table past
// Options.MaxTopics.
var ErrTooManyTopics = errors.New("registration would take the NameServer past its topic limit")

// ErrTopicQuota refuses a registration whose new topics would take its
// source past Options.MaxTopicsPerSource.
var ErrTopicQuota = errors.New("registration would take its source past its topic quota")

// ErrNegativeBrokerID rejects a registration with a brokerId below 0. Java
// takes it, but brokers only send 0 (master) or a slave's id from 1, and a
// negative id breaks the rule that the smallest id tells whether a group
// has its master: next to a master it would be taken as the group's prime
// slave, and the route rules that look for id 0 first would misread the
// group.
var ErrNegativeBrokerID = errors.New("brokerId must not be negative (0 is the master, slaves count from 1)")

// ErrEmptyBrokerAddr rejects a registration without a broker address. Java
// stores it (an id mapped to "", which no client can connect to, and which
// an unregistration by address can never name apart from other empty ones).
var ErrEmptyBrokerAddr = errors.New("brokerAddr must not be empty")

// Options are the NameServer settings the route rules depend on. The two
// booleans are only initial values: an UPDATE_NAMESRV_CONFIG may change them
// at run time through SetSupportActingMaster and
// SetDeleteTopicWithBrokerRegistration.
type Options struct {
	Shards               int   // topic table shards; default 256
	DefaultBrokerTimeout int64 // ms; default 120000
	// MaxBrokerTimeout caps a registration's heartbeat timeout, the
	// default included; ms, default DefaultMaxBrokerTimeout.
	MaxBrokerTimeout int64
	// SupportActingMaster rewrites routes of master-less groups whose
	// queues are read-only so the smallest slave appears as id 0.
	SupportActingMaster bool
	// DeleteTopicWithBrokerRegistration drops a broker's queue data for
	// topics missing from its registration.
	DeleteTopicWithBrokerRegistration bool
	// MaxTopics bounds the topics the table holds, all brokers together
	// (0: no bound): a registration that would add topics beyond it is
	// refused with ErrTooManyTopics before anything changes.
	MaxTopics int
	// MaxTopicsPerSource bounds the topics one source (Registration.Source)
	// may bring into the table (0: no bound), so that one peer cannot take
	// all of MaxTopics: a registration that would make its source the
	// creator of more is refused with ErrTopicQuota before anything
	// changes. A topic counts for the source whose registration created it
	// until it leaves the table; topics the table already holds cost
	// nothing. Registrations without a Source are not counted.
	MaxTopicsPerSource int
}

// Table is the NameServer's route state. Create it with New.
type Table struct {
	opts   Options
	now    func() int64
	topics *shard.Table[*topicEntry]
	view   atomic.Pointer[brokerView]

	// The run-time switches. Readers load actingMaster once per route and
	// pick the cached body built under that value, so flipping it never
	// serves a body built under the other.
	actingMaster  atomic.Bool
	deleteWithReg atomic.Bool
	// cachedBytes sums the cached route bodies (metrics.go).
	cachedBytes atomic.Int64
	// gen counts the commits that changed something (Generation: the
	// snapshot writer's test of change). listGen counts those that stored
	// topic entries or a broker view, and lists holds the topic lists
	// encoded for one listGen (lists.go): a re-registration that changes
	// only liveness keeps the lists.
	gen     atomic.Uint64
	listGen atomic.Uint64
	lists   atomic.Pointer[topicLists]

	mu           sync.Mutex
	groups       map[string]*brokerGroup        // brokerName -> group
	clusters     map[string]map[string]struct{} // cluster -> brokerNames
	live         map[addrKey]*liveInfo
	filters      map[addrKey][]string
	brokerTopics map[string]map[string]struct{} // brokerName -> topics holding its queue data
	conns        map[ConnID]map[addrKey]struct{}
	expiry       expiryHeap

	// mappings is Java's topicQueueMappingInfoTable: topic -> bname ->
	// TopicQueueMappingInfo, for static topics only. Like Java's it is
	// never cleaned (neither DELETE_TOPIC_IN_NAMESRV nor unregistration
	// touches it), so a topic re-created from the same broker DataVersion
	// gets its mappings back. Inner maps are shared with topic entries and
	// replaced, never modified.
	mappings map[string]map[string][]byte

	// sourceTopics counts the topics in the table by the Registration.Source
	// that created them (Options.MaxTopicsPerSource); kept by commit from
	// the entries it stores and deletes, "" not counted.
	sourceTopics map[string]int
}

// New returns an empty table. now returns the current time in unix
// milliseconds; it is called only by writers.
func New(opts Options, now func() int64) *Table {
	if opts.DefaultBrokerTimeout <= 0 {
		opts.DefaultBrokerTimeout = DefaultBrokerTimeout
	}
	if opts.MaxBrokerTimeout <= 0 {
		opts.MaxBrokerTimeout = DefaultMaxBrokerTimeout
	}
	t := &Table{
		opts:         opts,
		now:          now,
		topics:       shard.New[*topicEntry](opts.Shards),
		groups:       map[string]*brokerGroup{},
		clusters:     map[string]map[string]struct{}{},
		live:         map[addrKey]*liveInfo{},
		filters:      map[addrKey][]string{},
		brokerTopics: map[string]map[string]struct{}{},
		mappings:     map[string]map[string][]byte{},
		conns:        map[ConnID]map[addrKey]struct{}{},
		sourceTopics: map[string]int{},
	}
	t.view.Store(&brokerView{groups: map[string]*groupView{}, clusters: map[string][]string{}})
	t.actingMaster.Store(opts.SupportActingMaster)
	t.deleteWithReg.Store(opts.DeleteTopicWithBrokerRegistration)
	return t
}

// SetSupportActingMaster switches the acting-master route rewrite. Routes
// answered after it returns follow the new value.
func (t *Table) SetSupportActingMaster(on bool) { t.actingMaster.Store(on) }

// SetDeleteTopicWithBrokerRegistration switches whether a master's
// registration drops its queues of topics it no longer lists, from the next
// registration on.
func (t *Table) SetDeleteTopicWithBrokerRegistration(on bool) { t.deleteWithReg.Store(on) }

// Stats counts what the table holds.
type Stats struct {
	Clusters     int // clusterAddrTable entries
	BrokerGroups int // brokerAddrTable entries (brokerNames)
	BrokerAddrs  int // brokerId -> address entries over all groups
	Topics       int
	Live         int // brokerLiveTable entries
}

// Stats returns the current counts.
func (t *Table) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Stats{
		Clusters:     len(t.clusters),
		BrokerGroups: len(t.groups),
		Topics:       t.topics.Len(),
		Live:         len(t.live),
	}
	for _, g := range t.groups {
		s.BrokerAddrs += len(g.addrs)
	}
	return s
}
