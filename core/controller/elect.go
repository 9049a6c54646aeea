// The election policy: Java's DefaultElectPolicy, without its integer
// overflows.

package controller

// Settings are the controller options the decisions read.
type Settings struct {
	// EnableElectUncleanMaster (enableElectUncleanMaster, default false)
	// lets an election fall back to any live registered broker when none of
	// the SyncStateSet is alive. Such a master may miss committed messages.
	EnableElectUncleanMaster bool
	// MaxBrokerSets and MaxBrokersPerSet, when positive, bound the state:
	// a 1013 that would create a set beyond the first, or register an id
	// beyond the second in its set, is refused (Java has no bound).
	MaxBrokerSets, MaxBrokersPerSet int
}

// Env is what a decision reads besides the state and the request: this
// node's liveness table, the time on the caller's clock, and the settings.
// A nil Live sees no broker alive.
type Env struct {
	Live     *Liveness
	Now      int64 // ms
	Settings Settings
}

func (env *Env) alive(cluster, brokerName string, id int64) bool {
	return env.Live.Alive(LiveKey{cluster, brokerName, id}, env.Now)
}

// electPolicy picks a master for g, or reports none. prefer, when set, is
// the admin's choice. Candidates are the SyncStateSet, then (when unclean
// elections are on) every registered id; in each try:
//
//  1. only candidates alive now count;
//  2. the old master wins if it is one of them and there is no preference
//     or the preference is the old master;
//  3. a preference wins if it is a candidate, and otherwise nothing does
//     (no ranking): the admin asked for that broker;
//  4. else the best ranked: higher epoch, then higher maxOffset, then lower
//     electionPriority, then lower id. Java compares offsets and
//     priorities by subtracting, which misranks offsets 2 GiB apart and
//     negative priorities; these are plain comparisons.
func electPolicy(g *Group, env *Env, prefer int64, hasPrefer bool) (int64, bool) {
	if id, ok := tryElect(g, env, g.SyncStateSet, prefer, hasPrefer); ok {
		return id, true
	}
	if !env.Settings.EnableElectUncleanMaster {
		return 0, false
	}
	all := make([]int64, len(g.Brokers))
	for i, b := range g.Brokers {
		all[i] = b.ID
	}
	return tryElect(g, env, all, prefer, hasPrefer)
}

func tryElect(g *Group, env *Env, ids []int64, prefer int64, hasPrefer bool) (int64, bool) {
	var (
		best     int64
		bestInfo LiveInfo
		found    bool
		oldAlive bool
		prefOK   bool
	)
	for _, id := range ids {
		k := LiveKey{g.Cluster, g.Name, id}
		if !env.Live.Alive(k, env.Now) {
			continue
		}
		info, _ := env.Live.Info(k)
		if g.HasMaster && id == g.MasterID {
			oldAlive = true
		}
		if hasPrefer && id == prefer {
			prefOK = true
		}
		if !found || ranksBefore(info, id, bestInfo, best) {
			best, bestInfo, found = id, info, true
		}
	}
	switch {
	case !found:
		return 0, false
	case oldAlive && (!hasPrefer || prefer == g.MasterID):
		return g.MasterID, true
	case hasPrefer:
		return prefer, prefOK
	}
	return best, true
}

// ranksBefore reports whether candidate a (id ia) is a better master than
// b (id ib).
func ranksBefore(a LiveInfo, ia int64, b LiveInfo, ib int64) bool {
	switch {
	case a.Epoch != b.Epoch:
		return a.Epoch > b.Epoch
	case a.MaxOffset != b.MaxOffset:
		return a.MaxOffset > b.MaxOffset
	case a.ElectionPriority != b.ElectionPriority:
		return a.ElectionPriority < b.ElectionPriority
	}
	return ia < ib
}
