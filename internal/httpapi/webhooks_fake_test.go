package httpapi_test

import "github.com/seatlock/seatlock/internal/httpapi"

// fakeWebhooks serves the webhook routes for tests that only route: any
// call of its methods panics.
type fakeWebhooks struct{ httpapi.Webhooks }
