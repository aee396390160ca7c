package httpapi

import (
	"bytes"
	"maps"
	"net/http"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/reservation"
)

// extendHold answers 200 with the hold, as GET /holds/{id} shows it, its
// expiry moved to HOLD_TTL from now (within HOLD_MAX_LIFETIME of its
// making). Anyone else's hold and a malformed id are 404 hold_not_found,
// as for GET.
func (h *handler) extendHold(w http.ResponseWriter, r *http.Request) error {
	id, valid := holdID(r)
	if !valid {
		return reservation.ErrHoldNotFound
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	hold, err := h.checkout.Extend(r.Context(), id, principalFrom(r.Context()).UserID)
	if err != nil {
		return err
	}
	return ok(w, http.StatusOK, h.holdResponse(r.Context(), hold))
}

// emptyBody accepts a request that carries no input: no body at all (of
// any Content-Type), or one empty JSON object sent as application/json.
// Anything else is refused as decodeJSON refuses it (400, 413, 415), and
// a member is unknown.
func emptyBody(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, anyBody)
	if err != nil {
		return err
	}
	if len(bytes.Trim(body, " \t\r\n")) == 0 {
		return nil
	}
	if !isJSONMediaType(r.Header.Get("Content-Type")) {
		return errMediaType
	}
	var members map[string]jsontext.Value
	if err := unmarshalBody(body, &members); err != nil {
		return err
	}
	if len(members) > 0 {
		name := slices.Min(slices.Collect(maps.Keys(members)))
		return problem.Malformed("The member " + quoted(name) + " is unknown; this request takes no members: send no body, or {}.")
	}
	return nil
}
