package waitroom_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/waitroom"
)

func TestAdmissionTokens(t *testing.T) {
	a := waitroom.NewAdmissions([]byte("secret"))
	now := time.Now()
	expires := now.Add(time.Minute).Truncate(time.Second)
	token := a.Sign(7, "7-abc", "alice", expires)
	ticket, got, err := a.Verify(token, 7, "alice", now)
	if err != nil || ticket != "7-abc" || !got.Equal(expires) {
		t.Fatalf("verify: %q %v %v", ticket, got, err)
	}
	for name, tc := range map[string]struct {
		token    string
		schedule int64
		user     string
		now      time.Time
	}{
		"another user":       {token, 7, "bob", now},
		"another schedule":   {token, 8, "alice", now},
		"expired":            {token, 7, "alice", expires},
		"another key":        {waitroom.NewAdmissions([]byte("other")).Sign(7, "7-abc", "alice", expires), 7, "alice", now},
		"no signature":       {strings.Join(strings.Split(token, ".")[:2], "."), 7, "alice", now},
		"empty":              {"", 7, "alice", now},
		"not base64":         {token[:strings.LastIndex(token, ".")] + ".!!", 7, "alice", now},
		"user in the ticket": {a.Sign(7, "7-abc.1", "alice", expires), 7, "alice", now},
	} {
		if _, _, err := a.Verify(tc.token, tc.schedule, tc.user, tc.now); !errors.Is(err, waitroom.ErrAdmissionInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestScheduleOf(t *testing.T) {
	good := "42-" + strings.Repeat("ab", 16)
	if id, ok := waitroom.ScheduleOf(good); !ok || id != 42 {
		t.Fatalf("%s: %d %v", good, id, ok)
	}
	for _, bad := range []string{"", "42", "42-", "042-" + strings.Repeat("ab", 16), "-1-" + strings.Repeat("ab", 16),
		"42-" + strings.Repeat("zz", 16), "42-" + strings.Repeat("ab", 15)} {
		if _, ok := waitroom.ScheduleOf(bad); ok {
			t.Errorf("%q read as a ticket", bad)
		}
	}
}

func TestSettingsValidate(t *testing.T) {
	ok := waitroom.Settings{OpensAt: time.Now(), AdmitPerSecond: 1, AdmissionTTL: waitroom.DefaultAdmissionTTL}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := waitroom.Settings{OpensAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), AdmitPerSecond: 10001, MaxActive: -1,
		AdmissionTTL: 90500 * time.Millisecond}
	err := bad.Validate()
	for _, field := range []string{"opensAt", "admitPerSecond", "maxActive", "admissionTtlSeconds"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s not refused: %v", field, err)
		}
	}
}
