package httpapi

import (
	"bytes"
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
// at most maxBodyBytes, no unknown fields, nothing after the object.
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
		return &errMalformed
	}
	// `null`, arrays and scalars decode into a struct without error; the
	// contract wants one object.
	if trimmed := bytes.TrimSpace(body); len(trimmed) == 0 || trimmed[0] != '{' {
		return &errMalformed
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return &errMalformed
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &errMalformed // trailing data after the object
	}
	return nil
}
