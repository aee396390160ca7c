package reservation

import "testing"

// isOwnerNote answers as comparing with OwnerNote does.
func TestIsOwnerNote(t *testing.T) {
	users := []string{"alice", "bob", "", "ünïcode", "a-much-longer-user-id-than-the-note-itself-0123456789"}
	for _, u := range users {
		for _, other := range users {
			if got, want := isOwnerNote(OwnerNote(other), u), OwnerNote(other) == OwnerNote(u); got != want {
				t.Errorf("isOwnerNote(OwnerNote(%q), %q) = %v, want %v", other, u, got, want)
			}
		}
		if isOwnerNote("", u) || isOwnerNote(OwnerNote(u)[:15], u) {
			t.Errorf("isOwnerNote took a note that is not %q's", u)
		}
	}
}
