package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/api"
	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
)

// Every route the router serves is in the OpenAPI document, and every
// operation of the document is served: the two cannot drift apart.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatalf("api/openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Errorf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			if slices.Contains([]string{"get", "post", "put", "patch", "delete", "head", "options"}, method) {
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}

	verifier, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	router := httpapi.NewHandler(httpapi.Options{Bookings: fakeBookings{}, Verifier: verifier, Metrics: http.NotFoundHandler(),
		Webhooks: fakeWebhooks{}})
	served := map[string]bool{}
	err = chi.Walk(router.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		served[method+" "+route] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for op := range served {
		if !documented[op] {
			t.Errorf("%s is served but not in api/openapi.json", op)
		}
	}
	for op := range documented {
		if !served[op] {
			t.Errorf("%s is in api/openapi.json but not served", op)
		}
	}
}
