// Tests of the takeover rule (Registration.Owner) and of what a connection
// close removes: only the registrations that connection made and that no
// newer registration replaced.

package route

import (
	"errors"
	"testing"
)

// owned is reg over conn with owner's credentials.
func owned(name, addr string, id, counter int64, conn ConnID, owner string) *Registration {
	r := reg(name, addr, id, counter, tc("T", 4, 6), tc("U", 4, 6))
	r.Conn, r.Owner = conn, owner
	return r
}

func TestRegistrationTakeover(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, owned("a", "x:1", 0, 1, 1, "ka"))
	before := routeString(tb.Route("T"))
	f := func(r *Registration, wantErr bool) {
		t.Helper()
		_, err := tb.Register(r)
		if got := errors.Is(err, ErrTakeover); got != wantErr {
			t.Fatalf("register %s id %d at %s as %q override=%v: %v", r.BrokerName, r.BrokerID, r.BrokerAddr, r.Owner, r.Override, err)
		}
		if wantErr && routeString(tb.Route("T")) != before {
			t.Fatalf("a refused takeover changed the route: %s, was %s", routeString(tb.Route("T")), before)
		}
	}
	// Other credentials, or none: refused at the same address (a new
	// DataVersion with perm 4 would wipe write) and at another one for the
	// same id (clients would be sent there), and at its address under
	// another name.
	perm4 := owned("a", "x:1", 0, 2, 2, "kb")
	perm4.Body.Topics[0].Perm = 4
	f(perm4, true)
	f(owned("a", "evil:1", 0, 3, 2, "kb"), true)
	f(owned("a", "evil:1", 0, 3, 2, ""), true)
	f(owned("b", "x:1", 0, 3, 2, "kb"), true)
	// Not a takeover: a new id at a new address, a new group.
	f(owned("a", "y:1", 1, 1, 2, "kb"), false)
	f(owned("c", "z:1", 0, 1, 2, "kb"), false)
	before = routeString(tb.Route("T"))
	// The same credentials over a new connection (a reconnect), and an
	// owner by configuration, may.
	f(owned("a", "x:1", 0, 4, 3, "ka"), false)
	over := owned("a", "x2:1", 0, 5, 4, "admin")
	over.Override = true
	f(over, false)
	if got := routeString(tb.Route("T")); got == before {
		t.Fatalf("the override did not move broker a: %s", got)
	}
	before = routeString(tb.Route("T"))
	// Once the admin's registration holds the address of id 0, ka's is a
	// takeover of it (x:1 is no longer id 0 of a, so ka may re-register
	// there, but not as id 0 at x2:1).
	f(owned("a", "x2:1", 0, 6, 3, "ka"), true)

	// Without credentials anywhere, Java's rules: anyone replaces anyone.
	plain, _ := newTable(Options{})
	mustRegister(t, plain, owned("a", "x:1", 0, 1, 1, ""))
	mustRegister(t, plain, owned("a", "evil:1", 0, 2, 2, ""))
	if got := routeString(plain.Route("T")); got != "a{0:evil:1} | a:4/4/6" {
		t.Fatalf("unowned table: %s", got)
	}
}

func TestUnregisterAsOwner(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, owned("a", "x:1", 0, 1, 1, "ka"))
	if _, _, err := tb.UnregisterAs("c", "x:1", "a", 0, "kb", false); !errors.Is(err, ErrTakeover) {
		t.Fatalf("another account's 104: %v", err)
	}
	if _, _, err := tb.UnregisterAs("c", "x:1", "a", 0, "", false); !errors.Is(err, ErrTakeover) {
		t.Fatalf("an unsigned 104: %v", err)
	}
	if _, ok := tb.Route("T"); !ok {
		t.Fatal("a refused unregistration removed the broker")
	}
	evs, _, err := tb.UnregisterAs("c", "x:1", "a", 0, "ka", false)
	if err != nil || len(evs) != 1 {
		t.Fatalf("own 104: %v %v", evs, err)
	}
	mustRegister(t, tb, owned("a", "x:1", 0, 2, 1, "ka"))
	if evs, _, err := tb.UnregisterAs("c", "x:1", "a", 0, "admin", true); err != nil || len(evs) != 1 {
		t.Fatalf("override 104: %v %v", evs, err)
	}
	// Nothing registered: nothing to protect.
	if _, _, err := tb.UnregisterAs("c", "x:1", "a", 0, "kb", false); err != nil {
		t.Fatal(err)
	}
}

// A connection close removes what that connection registered and no newer
// registration replaced: the broker that reconnected stays when its old
// connection's close comes late, and a registration refused as a takeover
// leaves the thief's connection owning nothing.
func TestConnCloseRemovesOnlyWhatTheConnectionStillOwns(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, owned("a", "x:1", 0, 1, 1, "ka"))
	mustRegister(t, tb, owned("b", "y:1", 0, 1, 1, "kb"))
	// a reconnects over 2; its registration over 1 is replaced.
	mustRegister(t, tb, owned("a", "x:1", 0, 2, 2, "ka"))
	// A thief over 3 tries to take a and b.
	for _, r := range []*Registration{owned("a", "x:1", 0, 3, 3, "kt"), owned("b", "evil:1", 0, 3, 3, "kt")} {
		if _, err := tb.Register(r); !errors.Is(err, ErrTakeover) {
			t.Fatalf("takeover of %s: %v", r.BrokerName, err)
		}
	}
	if evs := tb.ConnClosed(3); len(evs) != 0 {
		t.Fatalf("the thief's close removed %+v", evs)
	}
	evs := tb.ConnClosed(1)
	if len(evs) != 1 || evs[0].BrokerName != "b" {
		t.Fatalf("closing 1 removed %+v, want b only", evs)
	}
	if got := routeString(tb.Route("T")); got != "a{0:x:1} | a:4/4/6" {
		t.Fatalf("after closing 1: %s", got)
	}
	if evs := tb.ConnClosed(2); len(evs) != 1 || evs[0].BrokerName != "a" {
		t.Fatalf("closing 2 removed %+v, want a", evs)
	}
}
