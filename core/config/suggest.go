// The nearest known key to a misspelt one, for "did you mean" hints.

package config

import "strings"

// SuggestKey returns the key of the table nearest to key by edit distance,
// ignoring case, or "" when none is near enough to be a plausible
// misspelling. A key that differs only in case gets its right spelling:
// Java's setters, and so rocketns, are case-sensitive.
func SuggestKey(key string) string {
	return nearest(key, func(yield func(string)) {
		for i := range keys {
			yield(keys[i].Name)
		}
	})
}

// suggestEnv returns the ROCKETNS_ variable nearest to name, or "".
func suggestEnv(name string) string {
	return nearest(name, func(yield func(string)) {
		for i := range keys {
			yield(EnvName(keys[i].Name))
		}
	})
}

// nearest picks among candidates the one closest to s. Near enough is at
// most one edit per four characters (at least one): orderMessageEnabel is
// two edits from orderMessageEnable, and a short word is not "near" every
// other short word.
func nearest(s string, candidates func(yield func(string))) string {
	ls := strings.ToLower(s)
	best, bestD := "", -1
	candidates(func(c string) {
		if c == s {
			return
		}
		d := editDistance(ls, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	})
	if bestD < 0 || bestD > max(1, len(s)/4) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes (keys are
// ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
