// Figures the route table reports for metrics beyond Stats: topic-broker
// entries and the bytes held by cached route bodies.

package route

// Cached route bodies are accounted per topic entry: a body is counted when
// a route query fills an entry's cache and uncounted when a writer replaces
// the entry. A query may still fill the cache of an entry a writer has just
// replaced (it loaded the entry before the swap); such a body is garbage as
// soon as that query is answered, so it is never counted. cacheDropped marks
// the entry, cacheFilled checks the mark with a CAS on the same word, so a
// body is uncounted exactly when it was counted.

// droppedMark flags, in topicEntry.cachedBytes, an entry no longer in the
// table. Body sizes are bounded by the frame limit, so the sum over four
// bodies never reaches it.
const droppedMark = int64(1) << 62

// cacheFilled counts a body of n bytes just stored in e's cache.
func (t *Table) cacheFilled(e *topicEntry, n int) {
	if n == 0 {
		return
	}
	for {
		v := e.cachedBytes.Load()
		if v&droppedMark != 0 {
			return
		}
		if e.cachedBytes.CompareAndSwap(v, v+int64(n)) {
			t.cachedBytes.Add(int64(n))
			return
		}
	}
}

// cacheDropped uncounts the bodies of e, which a writer has just replaced
// or deleted. Called under mu (from applyTopics).
func (t *Table) cacheDropped(e *topicEntry) {
	if e == nil {
		return
	}
	if v := e.cachedBytes.Swap(droppedMark); v&droppedMark == 0 && v != 0 {
		t.cachedBytes.Add(-v)
	}
}

// CachedRouteBytes is the size of the encoded route bodies the table holds
// for route queries (every dialect and acting-master variant). It reads one
// atomic.
func (t *Table) CachedRouteBytes() int64 {
	// A fill and a drop of the same body may be seen in either order.
	return max(0, t.cachedBytes.Load())
}

// TopicBrokerEntries is the number of (topic, broker group) queue data
// entries: the size of the route table's largest dimension, which grows with
// topics times the broker groups serving each.
func (t *Table) TopicBrokerEntries() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, set := range t.brokerTopics {
		n += len(set)
	}
	return n
}
