// perm.go holds the per-broker-group write permission the status page
// shows, so a group whose write permission was wiped stands out.

package route

// WritePerm counts the topics holding queue data of brokerName and, of
// those, the ones whose queue data has the write bit. writable == 0 with
// total > 0 is a wiped broker group (WIPE_WRITE_PERM_OF_BROKER, or a
// broker started read-only). It holds the writers' lock for one group's
// topics only, so a page asking for many groups lets registrations in
// between.
func (t *Table) WritePerm(brokerName string) (writable, total int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for topic := range t.brokerTopics[brokerName] {
		e, ok := t.topics.Load(topic)
		if !ok {
			continue
		}
		i, ok := e.queueOf(brokerName)
		if !ok {
			continue
		}
		total++
		if e.queues[i].Perm&PermWrite != 0 {
			writable++
		}
	}
	return writable, total
}
