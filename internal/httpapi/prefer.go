package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// preferredWait reads RFC 7240's `Prefer: wait=N` (N whole seconds) from any
// Prefer header. A malformed value is ignored, as the RFC asks; a missing one
// is zero: fail fast.
func preferredWait(h http.Header) (time.Duration, bool) {
	for _, header := range h.Values("Prefer") {
		for _, pref := range strings.Split(header, ",") {
			name, value, found := strings.Cut(strings.TrimSpace(pref), "=")
			if !found || !strings.EqualFold(strings.TrimSpace(name), "wait") {
				continue
			}
			value, _, _ = strings.Cut(value, ";") // preference parameters
			seconds, err := strconv.ParseUint(strings.Trim(strings.TrimSpace(value), `"`), 10, 32)
			if err != nil {
				continue
			}
			return time.Duration(seconds) * time.Second, true
		}
	}
	return 0, false
}
