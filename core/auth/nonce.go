// The strict scheme's replay cache: the nonces served within the time
// window.

package auth

import "sync"

// maxNonces bounds the replay cache. A nonce is kept only after its request
// verified, so only holders of a secret key fill it; 5,000 brokers
// reporting every 30 s with a 5-minute window keep about 100,000.
const maxNonces = 1 << 18

type nonceResult uint8

const (
	nonceNew nonceResult = iota
	nonceSeen
	nonceFull
)

// nonceCache remembers (access key, nonce) until the end of its signature's
// window; after that the time check refuses the request anyway.
type nonceCache struct {
	mu    sync.Mutex
	seen  map[string]int64 // accessKey "\x00" nonce -> expiry, unix ms
	prune int              // size at which expired entries are next dropped
}

// add records the nonce; now and expiry are unix ms.
func (c *nonceCache) add(accessKey, nonce string, expiry, now int64) nonceResult {
	key := accessKey + "\x00" + nonce
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = make(map[string]int64)
		c.prune = 1024
	}
	if exp, ok := c.seen[key]; ok && exp >= now {
		return nonceSeen
	}
	if len(c.seen) >= c.prune || len(c.seen) >= maxNonces {
		// Amortised: a pass over n entries after n/2 were added since
		// the last one.
		for k, exp := range c.seen {
			if exp < now {
				delete(c.seen, k)
			}
		}
		c.prune = max(1024, len(c.seen)+len(c.seen)/2)
	}
	if len(c.seen) >= maxNonces {
		return nonceFull
	}
	c.seen[key] = expiry
	return nonceNew
}
