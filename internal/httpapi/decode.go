package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxBodyBytes is the largest request body accepted (413 beyond).
const maxBodyBytes = 64 << 10

var (
	errMalformed = apiError{status: http.StatusBadRequest, code: "malformed_json", title: "Malformed JSON",
		detail: "The body must be one JSON object with the documented fields and types."}
	errTooLarge = apiError{status: http.StatusRequestEntityTooLarge, code: "payload_too_large", title: "Payload too large",
		detail: "The body must be at most 64 KiB."}
	errMediaType = apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type", title: "Unsupported media type",
		detail: "Send the body as Content-Type: application/json."}
)

// malformed is errMalformed with a detail that says what is wrong: the
// member, or the byte offset.
func malformed(detail string) *apiError {
	e := errMalformed
	e.detail = detail
	return &e
}

// errUnreadableBody answers a body whose reading failed: cut short
// before its Content-Length, or a broken chunked encoding.
func errUnreadableBody() *apiError { return malformed("The body could not be read to its end.") }

// isJSONMediaType accepts application/json, with no charset or UTF-8. The
// exact common spellings skip parsing.
func isJSONMediaType(contentType string) bool {
	switch contentType {
	case "application/json", "application/json; charset=utf-8", "application/json; charset=UTF-8":
		return true
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// decodeJSON reads exactly one JSON object into dst: the right media type,
// at most maxBodyBytes, member names exactly as documented and each once,
// nothing after the object.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any) *apiError {
	if !isJSONMediaType(r.Header.Get("Content-Type")) {
		return &errMediaType
	}
	if r.ContentLength > maxBodyBytes {
		return &errTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &errTooLarge
		}
		return errUnreadableBody()
	}
	return decodeBody(body, dst)
}

// decodeBody is decodeJSON once the body is read. encoding/json alone
// would match member names case-insensitively and let a repeated member
// win over the first, so the body is checked member by member first.
func decodeBody(body []byte, dst any) *apiError {
	if e := checkMembers(body, memberNames(dst)); e != nil {
		return e
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return describeDecodeError(err, len(body))
	}
	return nil
}

// value is *p, or the zero value of a member that was not sent.
func value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
