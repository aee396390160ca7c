package httpapi

import (
	"net/http"
	"strings"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// singleHeaders are the request headers the API reads one value of. Sent
// twice, which one is meant is a guess (a proxy may have added one), so
// the request is refused instead: never authenticated as the first of two
// tokens, never read as the first of two media types. Idempotency-Key is
// checked with its value (invalid_idempotency_key).
var singleHeaders = []string{"Authorization", "Content-Type", "Last-Event-Id"}

var errContentEncoding = &problem.Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
	Title:  "Unsupported media type",
	Detail: "The body must be sent as it is: this service applies no Content-Encoding (gzip and the like) to request bodies."}

// checkHeaders refuses, before anything reads the request, a
// single-valued header sent more than once (400 invalid_header) and a
// body (of any length but none) with a content coding (415, with Accept-Encoding: identity, RFC
// 9110 15.5.16 and RFC 7694): its bytes would otherwise be read as JSON.
func checkHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, name := range singleHeaders {
			if len(r.Header[name]) > 1 {
				problem.Write(w, r, &problem.Error{Status: http.StatusBadRequest, Code: "invalid_header", Title: "Invalid header",
					Detail: "The header " + name + " was sent more than once; send it once."})
				return
			}
		}
		if codings, ok := r.Header["Content-Encoding"]; ok && r.ContentLength != 0 && !identityOnly(codings) {
			w.Header()["Accept-Encoding"] = []string{"identity"}
			problem.Write(w, r, errContentEncoding)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// identityOnly reports whether every coding listed is identity (or none
// is): no coding at all.
func identityOnly(values []string) bool {
	for _, v := range values {
		for coding := range strings.SplitSeq(v, ",") {
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				return false
			}
		}
	}
	return true
}
