package waitroom

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// Admissions signs and checks admission tokens: "<ticket>.<expiry>.<mac>",
// the expiry in Unix seconds and the MAC an HMAC-SHA256 of the schedule,
// the ticket, its user and the expiry. The token alone proves what the
// service admitted; whether the admission still holds (not given up) is
// the store's.
type Admissions struct {
	key []byte
}

// NewAdmissions derives the signing key from secret (AUTH_SECRET), so that
// an admission is not also a valid signature of anything else.
func NewAdmissions(secret []byte) *Admissions {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("seatlock waiting room admission"))
	return &Admissions{key: mac.Sum(nil)}
}

// Sign returns the admission of ticket for user on scheduleID, until
// expires.
func (a *Admissions) Sign(scheduleID int64, ticket, userID string, expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return ticket + "." + exp + "." + base64.RawURLEncoding.EncodeToString(a.mac(scheduleID, ticket, userID, exp))
}

// Verify returns the ticket an admission token names and when it expires,
// if the service signed it for userID on scheduleID and it has not
// expired at now; ErrAdmissionInvalid otherwise.
func (a *Admissions) Verify(token string, scheduleID int64, userID string, now time.Time) (ticket string, expires time.Time, err error) {
	ticket, rest, ok := strings.Cut(token, ".")
	exp, sig, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || ticket == "" {
		return "", time.Time{}, ErrAdmissionInvalid
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, a.mac(scheduleID, ticket, userID, exp)) {
		return "", time.Time{}, ErrAdmissionInvalid
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return "", time.Time{}, ErrAdmissionInvalid
	}
	expires = time.Unix(unix, 0)
	if !now.Before(expires) {
		return "", time.Time{}, ErrAdmissionInvalid
	}
	return ticket, expires, nil
}

func (a *Admissions) mac(scheduleID int64, ticket, userID, exp string) []byte {
	m := hmac.New(sha256.New, a.key)
	// Lengths first: no two different tuples write the same bytes.
	var buf []byte
	for _, field := range []string{strconv.FormatInt(scheduleID, 10), ticket, userID, exp} {
		buf = strconv.AppendInt(buf, int64(len(field)), 10)
		buf = append(buf, ':')
		buf = append(buf, field...)
	}
	m.Write(buf)
	return m.Sum(nil)
}
