package app_test

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestAuthenticationFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(1)
	body := `{"scheduleId":` + strconv.FormatInt(schedule, 10) + `,"seatId":1}`
	sign := func(method jwt.SigningMethod, key []byte, claims jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(method, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	future := time.Now().Add(time.Hour).Unix()
	b64 := base64.RawURLEncoding.EncodeToString
	tests := map[string]string{ // name -> Authorization header
		"missing":       "",
		"not bearer":    "Basic YWxpY2U6c2VjcmV0",
		"empty bearer":  "Bearer ",
		"garbage":       "Bearer not.a.jwt",
		"expired":       "Bearer " + sign(jwt.SigningMethodHS256, []byte(testSecret), jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(-time.Minute).Unix()}),
		"no exp":        "Bearer " + sign(jwt.SigningMethodHS256, []byte(testSecret), jwt.MapClaims{"sub": "alice"}),
		"no sub":        "Bearer " + sign(jwt.SigningMethodHS256, []byte(testSecret), jwt.MapClaims{"exp": future}),
		"wrong key":     "Bearer " + sign(jwt.SigningMethodHS256, []byte("an-entirely-different-secret-key!!"), jwt.MapClaims{"sub": "alice", "exp": future}),
		"HS384 instead": "Bearer " + sign(jwt.SigningMethodHS384, []byte(testSecret), jwt.MapClaims{"sub": "alice", "exp": future}),
		"alg none": "Bearer " + b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
			b64([]byte(`{"sub":"alice","exp":`+strconv.FormatInt(future, 10)+`}`)) + ".",
	}
	for name, header := range tests {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, h.bases[0]+"/reservations", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status = %d, want 401", resp.StatusCode)
			}
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		})
	}
	if n := h.reservationRows(schedule, 1); n != 0 {
		t.Errorf("rows = %d after refused requests, want 0", n)
	}
	// And the body of one of them is the documented problem.
	expectProblem(t, h.do(request{method: http.MethodGet, path: "/reservations/00000000-0000-0000-0000-000000000000"}),
		http.StatusUnauthorized, "unauthorized")
}
