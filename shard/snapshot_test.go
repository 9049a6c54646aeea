// Tests of snapshot with hashes chosen to collide: long probe runs that wrap
// around the end of the slots, keys of one full hash, deletions inside runs.

package shard

import (
	"maps"
	"math/rand/v2"
	"strconv"
	"testing"
)

// The hash of a test key is given, not computed: hashes of few distinct low
// bits make every key share a probe run with others, and equal hashes of
// different keys leave only the string comparison to tell them apart.
func TestSnapshotCollidingHashes(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 2))
		hashes := make([]uint64, 24)
		for i := range hashes {
			switch rng.IntN(3) {
			case 0: // the last slots, so runs wrap around
				hashes[i] = ^uint64(0) - uint64(rng.IntN(2))
			case 1: // one hash for several keys
				hashes[i] = 5
			default:
				hashes[i] = uint64(rng.IntN(4))
			}
		}
		s := newSnapshot[int](0)
		ref := map[string]int{}
		for range 300 {
			k := rng.IntN(len(hashes))
			key, h := "k"+strconv.Itoa(k), hashes[k]
			next := s.clone(1)
			if rng.IntN(3) == 0 {
				next.del(key, h)
				delete(ref, key)
			} else {
				v := rng.IntN(1000)
				next.put(key, h, v)
				ref[key] = v
			}
			// The published one is never written: s still reads as before.
			s = next
			if len(s.entries) != len(ref) || 2*len(s.entries) >= len(s.index) {
				t.Fatalf("seed %d: %d keys in %d slots, want %d keys under half", seed, len(s.entries), len(s.index), len(ref))
			}
			for i, h := range hashes {
				key := "k" + strconv.Itoa(i)
				v, ok := s.get(key, h)
				if w, wok := ref[key]; v != w || ok != wok {
					t.Fatalf("seed %d: get(%s) = %d %v, want %d %v", seed, key, v, ok, w, wok)
				}
			}
			all := map[string]int{}
			used := 0
			for _, j := range s.index {
				if j != 0 {
					used++
					e := s.entries[j-1]
					all[e.key] = e.val
				}
			}
			if used != len(s.entries) {
				t.Fatalf("seed %d: %d index slots used for %d entries", seed, used, len(s.entries))
			}
			if !maps.Equal(all, ref) {
				t.Fatalf("seed %d: slots hold %v, want %v", seed, all, ref)
			}
		}
	}
}

// A snapshot is never written once published: clone copies, and the old
// one keeps its keys and values.
func TestSnapshotCloneLeavesOriginal(t *testing.T) {
	t.Parallel()
	s := newSnapshot[int](0).clone(2)
	s.put("a", 1, 1)
	s.put("b", 1, 2)
	c := s.clone(1)
	c.put("a", 1, 10)
	c.del("b", 1)
	c.put("c", 2, 3)
	for _, tc := range []struct {
		s    *snapshot[int]
		key  string
		h    uint64
		v    int
		want bool
	}{{s, "a", 1, 1, true}, {s, "b", 1, 2, true}, {s, "c", 2, 0, false},
		{c, "a", 1, 10, true}, {c, "b", 1, 0, false}, {c, "c", 2, 3, true}} {
		if v, ok := tc.s.get(tc.key, tc.h); v != tc.v || ok != tc.want {
			t.Fatalf("get(%s) = %d %v, want %d %v", tc.key, v, ok, tc.v, tc.want)
		}
	}
}
