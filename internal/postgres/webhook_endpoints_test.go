package postgres_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/testenv"
	"github.com/seatlock/seatlock/internal/webhook"
)

const sealKey = "test-secret-test-secret-test-secret!"

func newWebhookStore(t *testing.T) (*postgres.WebhookEndpoints, *pgxpool.Pool, *webhook.Sealer) {
	t.Helper()
	pool := testenv.Pool(t)
	sealer, err := webhook.NewSealer(sealKey)
	if err != nil {
		t.Fatal(err)
	}
	return postgres.NewWebhookEndpoints(pool, sealer), pool, sealer
}

func mustCreateEndpoint(t *testing.T, store *postgres.WebhookEndpoints, url string, secret webhook.Secret) webhook.Endpoint {
	t.Helper()
	e, err := store.Create(testContext(t), webhook.Endpoint{URL: url, Events: []string{webhook.HoldCreated}, Description: "d"}, secret)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return e
}

// An endpoint is stored with its secret sealed, and read back without
// it; Active opens it.
func TestWebhookEndpointSecretIsSealed(t *testing.T) {
	t.Parallel()
	store, pool, sealer := newWebhookStore(t)
	ctx := testContext(t)
	secret := webhook.NewSecret()
	e := mustCreateEndpoint(t, store, "https://203.0.113.7/hook", secret)
	if !e.Enabled || e.ID == uuid.Nil || e.CreatedAt.IsZero() || len(e.Secrets) != 0 {
		t.Fatalf("created %+v", e)
	}
	var sealed []byte
	if err := pool.QueryRow(ctx, `SELECT secret FROM webhook_endpoints WHERE id = $1`, e.ID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if opened, err := sealer.Open(sealed); err != nil || opened.Reveal() != secret.Reveal() {
		t.Fatalf("the stored secret does not open to the one given: %v", err)
	}
	if strings.Contains(string(sealed), secret.Reveal()) {
		t.Fatal("the secret is stored in the clear")
	}
	got, err := store.Endpoint(ctx, e.ID)
	if err != nil || got.URL != e.URL || len(got.Secrets) != 0 || !slices.Equal(got.Events, []string{webhook.HoldCreated}) {
		t.Fatalf("Endpoint = %+v, %v", got, err)
	}
	active, err := store.Active(ctx)
	if err != nil || len(active) != 1 || len(active[0].Secrets) != 1 || active[0].Secrets[0].Reveal() != secret.Reveal() {
		t.Fatalf("Active = %+v, %v", active, err)
	}
	if _, err := store.Endpoint(ctx, uuid.New()); !errors.Is(err, webhook.ErrEndpointNotFound) {
		t.Fatalf("Endpoint of an unknown id: %v", err)
	}
}

// A rotation keeps the replaced secret valid for the grace; a second one
// replaces the previous with the current; a previous one past its time
// is not given.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	store, pool, _ := newWebhookStore(t)
	ctx := testContext(t)
	first, second, third := webhook.NewSecret(), webhook.NewSecret(), webhook.NewSecret()
	e := mustCreateEndpoint(t, store, "https://203.0.113.7/hook", first)
	before := time.Now()
	if err := store.RotateSecret(ctx, e.ID, second, webhook.SecretGrace); err != nil {
		t.Fatal(err)
	}
	var until time.Time
	if err := pool.QueryRow(ctx, `SELECT previous_secret_until FROM webhook_endpoints WHERE id = $1`, e.ID).Scan(&until); err != nil {
		t.Fatal(err)
	}
	if d := until.Sub(before); d < webhook.SecretGrace-time.Minute || d > webhook.SecretGrace+time.Minute {
		t.Fatalf("previous_secret_until is %v after the rotation, want 24h", d)
	}
	secrets := func() []string {
		t.Helper()
		active, err := store.Active(ctx)
		if err != nil || len(active) != 1 {
			t.Fatalf("Active = %+v, %v", active, err)
		}
		var texts []string
		for _, s := range active[0].Secrets {
			texts = append(texts, s.Reveal())
		}
		return texts
	}
	if got := secrets(); !slices.Equal(got, []string{second.Reveal(), first.Reveal()}) {
		t.Fatal("after one rotation the secrets are not the new one and the old one")
	}
	if err := store.RotateSecret(ctx, e.ID, third, webhook.SecretGrace); err != nil {
		t.Fatal(err)
	}
	if got := secrets(); !slices.Equal(got, []string{third.Reveal(), second.Reveal()}) {
		t.Fatal("after a second rotation the secrets are not the newest and the one it replaced")
	}
	if _, err := pool.Exec(ctx, `UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if got := secrets(); !slices.Equal(got, []string{third.Reveal()}) {
		t.Fatal("a previous secret past its time is still given")
	}
	if err := store.RotateSecret(ctx, uuid.New(), third, webhook.SecretGrace); !errors.Is(err, webhook.ErrEndpointNotFound) {
		t.Fatalf("RotateSecret of an unknown id: %v", err)
	}
}

// Update changes only what it is given; enabling clears the service's
// reason; disabled endpoints are not Active; Delete removes.
func TestWebhookEndpointUpdateAndDelete(t *testing.T) {
	t.Parallel()
	store, pool, _ := newWebhookStore(t)
	ctx := testContext(t)
	e := mustCreateEndpoint(t, store, "https://203.0.113.7/hook", webhook.NewSecret())
	url := "https://203.0.113.8/other"
	got, err := store.Update(ctx, e.ID, webhook.EndpointChange{URL: &url})
	if err != nil || got.URL != url || got.Description != "d" || !slices.Equal(got.Events, e.Events) || !got.Enabled {
		t.Fatalf("Update url = %+v, %v", got, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'gone'`); err != nil {
		t.Fatal(err)
	}
	if active, err := store.Active(ctx); err != nil || len(active) != 0 {
		t.Fatalf("Active with the endpoint disabled = %+v, %v", active, err)
	}
	off := false
	got, err = store.Update(ctx, e.ID, webhook.EndpointChange{Enabled: &off, Events: []string{webhook.HoldExpired}})
	if err != nil || got.DisabledReason != webhook.ReasonGone || !slices.Equal(got.Events, []string{webhook.HoldExpired}) {
		t.Fatalf("Update disabled = %+v, %v", got, err)
	}
	on := true
	got, err = store.Update(ctx, e.ID, webhook.EndpointChange{Enabled: &on})
	if err != nil || !got.Enabled || got.DisabledReason != "" {
		t.Fatalf("Update enabled = %+v, %v", got, err)
	}
	if _, err := store.Update(ctx, uuid.New(), webhook.EndpointChange{Enabled: &on}); !errors.Is(err, webhook.ErrEndpointNotFound) {
		t.Fatalf("Update of an unknown id: %v", err)
	}
	if err := store.Delete(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(ctx, e.ID); !errors.Is(err, webhook.ErrEndpointNotFound) {
		t.Fatalf("Delete again: %v", err)
	}
}

// Endpoints pages newest first, without skipping or repeating.
func TestWebhookEndpointsPages(t *testing.T) {
	t.Parallel()
	store, _, _ := newWebhookStore(t)
	ctx := testContext(t)
	var want []uuid.UUID
	for range 5 {
		want = append([]uuid.UUID{mustCreateEndpoint(t, store, "https://203.0.113.7/hook", webhook.NewSecret()).ID}, want...)
	}
	var got []uuid.UUID
	var after webhook.Endpoint
	for {
		page, err := store.Endpoints(ctx, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			got = append(got, e.ID)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages list %v, want %v", got, want)
	}
}

// insertDelivery writes a delivery row directly.
func insertDelivery(t *testing.T, pool *pgxpool.Pool, endpoint uuid.UUID, seq int64, status string) string {
	t.Helper()
	eventID := "msg_" + uuid.NewString()[:8]
	if _, err := pool.Exec(testContext(t), `INSERT INTO webhook_deliveries (endpoint_id, seq, event_id, type, object_id, status, attempts)
		VALUES ($1, $2, $3, 'hold.created', gen_random_uuid(), $4, 1)`, endpoint, seq, eventID, status); err != nil {
		t.Fatal(err)
	}
	return eventID
}

// Deliveries lists newest first, by status, from a seq; RetryDelivery
// makes one pending and due.
func TestWebhookDeliveriesLog(t *testing.T) {
	t.Parallel()
	store, pool, _ := newWebhookStore(t)
	ctx := testContext(t)
	e := mustCreateEndpoint(t, store, "https://203.0.113.7/hook", webhook.NewSecret())
	statuses := []string{webhook.StatusSucceeded, webhook.StatusFailed, webhook.StatusPending, webhook.StatusFailed}
	ids := make([]string, len(statuses))
	for i, s := range statuses {
		ids[i] = insertDelivery(t, pool, e.ID, int64(i+1), s)
	}
	all, err := store.Deliveries(ctx, e.ID, "", 0, 10)
	if err != nil || len(all) != 4 || all[0].EventID != ids[3] || all[3].EventID != ids[0] {
		t.Fatalf("Deliveries = %+v, %v", all, err)
	}
	failed, err := store.Deliveries(ctx, e.ID, webhook.StatusFailed, 4, 10)
	if err != nil || len(failed) != 1 || failed[0].EventID != ids[1] {
		t.Fatalf("failed before 4 = %+v, %v", failed, err)
	}
	if _, err := store.Deliveries(ctx, uuid.New(), "", 0, 10); !errors.Is(err, webhook.ErrEndpointNotFound) {
		t.Fatalf("Deliveries of an unknown endpoint: %v", err)
	}
	if err := store.RetryDelivery(ctx, e.ID, ids[1]); err != nil {
		t.Fatal(err)
	}
	var (
		status string
		due    bool
	)
	if err := pool.QueryRow(ctx, `SELECT status, next_attempt_at <= now() FROM webhook_deliveries WHERE event_id = $1`, ids[1]).
		Scan(&status, &due); err != nil || status != webhook.StatusPending || !due {
		t.Fatalf("after a retry: %s due %v, %v", status, due, err)
	}
	if err := store.RetryDelivery(ctx, e.ID, "msg_none"); !errors.Is(err, webhook.ErrDeliveryNotFound) {
		t.Fatalf("RetryDelivery of an unknown event: %v", err)
	}
	if err := store.RetryDelivery(ctx, uuid.New(), ids[1]); !errors.Is(err, webhook.ErrEndpointNotFound) {
		t.Fatalf("RetryDelivery of an unknown endpoint: %v", err)
	}
}
