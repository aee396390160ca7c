package httpapi

import (
	"strconv"

	"github.com/google/uuid"
)

// maxIDLen is the length of the largest int64, 9223372036854775807.
const maxIDLen = 19

// parseID accepts a schedule id written the one way the service writes
// it: decimal digits without sign, leading zero or padding, fitting an
// int64. "+7", "07" and "7 " name no schedule, so that every resource has
// one path. chi matches the raw path, so a percent-encoded "%2B7" or
// "%37" reaches here encoded and is refused too.
func parseID(s string) (int64, bool) {
	if len(s) == 0 || len(s) > maxIDLen || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}

// parseUUID accepts a reservation or hold id in its canonical 36-character
// form (hexadecimal digits in either case, as RFC 9562 reads them); the
// other spellings uuid.Parse knows (braces, urn:uuid:, no hyphens) name
// nothing.
func parseUUID(s string) (uuid.UUID, bool) {
	if len(s) != 36 {
		return uuid.UUID{}, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}
