package app_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/testenv"
	"github.com/seatlock/seatlock/internal/webhook"
)

// A registration answers its secret once; reading or listing the endpoint
// never shows it.
func TestWebhookCreateShowsTheSecretOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	created := h.createWebhook(`{"url":"` + webhookHook + `","description":"Box office"}`)
	secret := str(created.body, "secret")
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) != 32 {
		t.Fatalf("secret %q is not whsec_ and the base64 of 32 bytes", secret)
	}
	id := str(created.body, "id")
	if created.header.Get("Location") != "/webhooks/"+id || created.body["enabled"] != true ||
		str(created.body, "url") != webhookHook || str(created.body, "description") != "Box office" ||
		created.body["disabledReason"] != nil || str(created.body, "createdAt") == "" {
		t.Fatalf("create answered %s, Location %q", created.raw, created.header.Get("Location"))
	}
	var events []string
	for _, e := range created.body["events"].([]any) {
		events = append(events, e.(string))
	}
	if !slices.Equal(events, webhook.EventTypes()) {
		t.Fatalf("events = %v, want every type %v", events, webhook.EventTypes())
	}
	got := h.webhookCall(http.MethodGet, "/webhooks/"+id, "")
	list := h.webhookCall(http.MethodGet, "/webhooks", "")
	for _, resp := range []response{got, list} {
		if resp.status != http.StatusOK || strings.Contains(resp.raw, secret) || strings.Contains(resp.raw, "secret") {
			t.Fatalf("a read shows the secret, or failed: %d %s", resp.status, resp.raw)
		}
	}
	if members(got.body)["secret"] || str(got.body, "id") != id {
		t.Fatalf("get answered %s", got.raw)
	}
	if hooks := items(t, list.body, "webhooks"); len(hooks) != 1 || str(hooks[0], "id") != id || list.body["next"] != nil {
		t.Fatalf("list answered %s", list.raw)
	}
	var sealed []byte
	if err := h.pool.QueryRow(context.Background(), `SELECT secret FROM webhook_endpoints WHERE id = $1`, id).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), secret) || strings.Contains(string(sealed), string(key)) {
		t.Fatal("the secret is stored in the clear")
	}
}

// GET /webhooks pages newest first with an opaque cursor.
func TestWebhookListPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	var want []string
	for range 5 {
		want = append([]string{str(h.createWebhook(webhookBody(webhookHook)).body, "id")}, want...)
	}
	var got []string
	path := "/webhooks?limit=2"
	for pages := 0; ; pages++ {
		resp := h.webhookCall(http.MethodGet, path, "")
		if resp.status != http.StatusOK || pages > 3 {
			t.Fatalf("%s: %d %s", path, resp.status, resp.raw)
		}
		for _, hook := range items(t, resp.body, "webhooks") {
			got = append(got, str(hook, "id"))
		}
		next, _ := resp.body["next"].(string)
		if next == "" {
			break
		}
		path = "/webhooks?limit=2&after=" + next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages list %v, want %v", got, want)
	}
	for _, q := range []struct{ query, field string }{
		{"limit=0", "limit"}, {"limit=101", "limit"}, {"limit=x", "limit"}, {"limit=1&limit=2", "limit"},
		{"after=nope", "after"}, {"after=" + base64.RawURLEncoding.EncodeToString([]byte("1,x")), "after"},
	} {
		resp := h.webhookCall(http.MethodGet, "/webhooks?"+q.query, "")
		expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
		if !strings.Contains(resp.raw, `"field":"`+q.field+`"`) {
			t.Errorf("?%s: the problem does not name %s: %s", q.query, q.field, resp.raw)
		}
	}
}

// Every invalid member is 422 naming it, at registration and in a PATCH,
// and nothing is stored or changed.
func TestWebhookInvalidInputIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	id := str(h.createWebhook(webhookBody(webhookHook)).body, "id")
	long := "https://example.com/" + strings.Repeat("a", 2000)
	for _, tc := range []struct{ body, field string }{
		{`{"events":["hold.created"]}`, "url"},
		{`{"url":""}`, "url"},
		{`{"url":"/relative/path"}`, "url"},
		{`{"url":"example.com/hook"}`, "url"},
		{`{"url":"ftp://203.0.113.7/hook"}`, "url"},
		{`{"url":"http://203.0.113.7/hook"}`, "url"},
		{`{"url":"https://user:pass@203.0.113.7/hook"}`, "url"},
		{`{"url":"https:///hook"}`, "url"},
		{`{"url":"` + long + `"}`, "url"},
		{`{"url":"` + webhookHook + `","events":[]}`, "events"},
		{`{"url":"` + webhookHook + `","events":["hold.created","seat.sold"]}`, "events[1]"},
		{`{"url":"` + webhookHook + `","events":["hold.created","hold.created"]}`, "events[1]"},
		{`{"url":"` + webhookHook + `","description":"` + strings.Repeat("d", 501) + `"}`, "description"},
		{`{"url":"` + webhookHook + `","description":"two\nlines"}`, "description"},
	} {
		resp := h.webhookCall(http.MethodPost, "/webhooks", tc.body)
		expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
		if !strings.Contains(resp.raw, `"field":"`+tc.field+`"`) {
			t.Errorf("POST %.80s: the problem does not name %s: %s", tc.body, tc.field, resp.raw)
		}
		if !strings.Contains(tc.body, `"url"`) {
			continue // a PATCH without a url has nothing to refuse
		}
		patch := strings.Replace(tc.body, `"url":"`+webhookHook+`",`, "", 1)
		resp = h.webhookCall(http.MethodPatch, "/webhooks/"+id, patch)
		expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
		if !strings.Contains(resp.raw, `"field":"`+tc.field+`"`) {
			t.Errorf("PATCH %.80s: the problem does not name %s: %s", patch, tc.field, resp.raw)
		}
	}
	for _, bad := range []string{`"/relative"`, `"http://203.0.113.7/hook"`, `"` + long + `"`} {
		resp := h.webhookCall(http.MethodPatch, "/webhooks/"+id, `{"url":`+bad+`}`)
		expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
		if !strings.Contains(resp.raw, `"field":"url"`) {
			t.Errorf("PATCH url %.60s: the problem does not name url: %s", bad, resp.raw)
		}
	}
	expectProblem(t, h.webhookCall(http.MethodPost, "/webhooks", `{"url":"`+webhookHook+`","events":null}`), http.StatusBadRequest, "malformed_json")
	expectProblem(t, h.webhookCall(http.MethodPost, "/webhooks", `{"url":"`+webhookHook+`","enabled":false}`), http.StatusBadRequest, "malformed_json")
	if n := len(items(t, h.webhookCall(http.MethodGet, "/webhooks", "").body, "webhooks")); n != 1 {
		t.Fatalf("%d endpoints after the refusals, want 1", n)
	}
	got := h.webhookCall(http.MethodGet, "/webhooks/"+id, "")
	if str(got.body, "url") != webhookHook || len(got.body["events"].([]any)) != len(webhook.EventTypes()) || str(got.body, "description") != "" {
		t.Fatalf("the refusals changed the endpoint: %s", got.raw)
	}
}

// A URL whose host is or resolves to an address deliveries may not reach
// is refused with webhook_url_not_allowed, at registration and in a
// PATCH, unless WEBHOOK_ALLOW_PRIVATE; http needs WEBHOOK_ALLOW_INSECURE.
func TestWebhookURLsOfPrivateHostsAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	id := str(h.createWebhook(webhookBody(webhookHook)).body, "id")
	for _, url := range []string{
		"https://localhost/hook", // a name that resolves to 127.0.0.1
		"https://127.0.0.1:8443/hook",
		"https://10.1.2.3/hook",
		"https://192.168.0.10/hook",
		"https://169.254.169.254/latest/meta-data",
		"https://[::1]/hook",
		"https://0.0.0.0/hook",
		"https://224.0.0.1/hook",
	} {
		for _, resp := range []response{
			h.webhookCall(http.MethodPost, "/webhooks", webhookBody(url)),
			h.webhookCall(http.MethodPatch, "/webhooks/"+id, webhookBody(url)),
		} {
			expectProblem(t, resp, http.StatusUnprocessableEntity, "webhook_url_not_allowed")
			if !strings.Contains(resp.raw, `"field":"url"`) {
				t.Errorf("%s: the problem does not name url: %s", url, resp.raw)
			}
		}
	}
	if got := h.webhookCall(http.MethodGet, "/webhooks/"+id, ""); str(got.body, "url") != webhookHook {
		t.Fatalf("a refused PATCH changed the URL: %s", got.raw)
	}

	open := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.WebhookAllowPrivate = true })
	open.createWebhook(webhookBody("https://localhost/hook"))
	open.createWebhook(webhookBody("https://10.1.2.3/hook"))
	expectProblem(t, open.webhookCall(http.MethodPost, "/webhooks", webhookBody("http://localhost:9000/hook")),
		http.StatusUnprocessableEntity, "validation_failed")

	dev := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.WebhookAllowPrivate, cfg.WebhookAllowInsecure = true, true })
	local := dev.createWebhook(webhookBody("http://localhost:9000/hook"))
	if str(local.body, "url") != "http://localhost:9000/hook" {
		t.Fatalf("create answered %s", local.raw)
	}
}

// Only admins reach the webhook routes: 401 without a token, 403 with a
// user's.
func TestWebhookRoutesAreAdminOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	id := str(h.createWebhook(webhookBody(webhookHook)).body, "id")
	event := h.insertDelivery(id, 1, webhook.StatusFailed)
	for _, route := range []struct{ method, path, body string }{
		{http.MethodPost, "/webhooks", webhookBody(webhookHook)},
		{http.MethodGet, "/webhooks", ""},
		{http.MethodGet, "/webhooks/" + id, ""},
		{http.MethodPatch, "/webhooks/" + id, `{"enabled":false}`},
		{http.MethodDelete, "/webhooks/" + id, ""},
		{http.MethodPost, "/webhooks/" + id + "/secret", ""},
		{http.MethodGet, "/webhooks/" + id + "/deliveries", ""},
		{http.MethodPost, "/webhooks/" + id + "/deliveries/" + event + "/retry", ""},
	} {
		req := request{method: route.method, path: route.path, body: route.body}
		if route.body != "" {
			req.contentType = "application/json"
		}
		expectProblem(t, h.do(req), http.StatusUnauthorized, "unauthorized")
		req.token = h.token("alice", "")
		expectProblem(t, h.do(req), http.StatusForbidden, "forbidden")
	}
	got := h.webhookCall(http.MethodGet, "/webhooks/"+id, "")
	if got.status != http.StatusOK || got.body["enabled"] != true {
		t.Fatalf("after the refusals: %d %s", got.status, got.raw)
	}
}

// An unknown or malformed endpoint id is 404 webhook_not_found on every
// route; an event the endpoint has no delivery of is delivery_not_found.
func TestWebhookNotFound(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	id := str(h.createWebhook(webhookBody(webhookHook)).body, "id")
	event := h.insertDelivery(id, 1, webhook.StatusFailed)
	for _, missing := range []string{"0b7a5d4e-7a53-4c39-9d38-3c2f5b1f3a10", "nope", "{" + id + "}", strings.ReplaceAll(id, "-", "")} {
		for _, route := range []struct{ method, path, body string }{
			{http.MethodGet, "/webhooks/" + missing, ""},
			{http.MethodPatch, "/webhooks/" + missing, `{"enabled":false}`},
			{http.MethodDelete, "/webhooks/" + missing, ""},
			{http.MethodPost, "/webhooks/" + missing + "/secret", ""},
			{http.MethodGet, "/webhooks/" + missing + "/deliveries", ""},
			{http.MethodPost, "/webhooks/" + missing + "/deliveries/" + event + "/retry", ""},
		} {
			expectProblem(t, h.webhookCall(route.method, route.path, route.body), http.StatusNotFound, "webhook_not_found")
		}
	}
	for _, unknown := range []string{"msg_unknown", strings.Repeat("m", 65)} {
		expectProblem(t, h.webhookCall(http.MethodPost, "/webhooks/"+id+"/deliveries/"+unknown+"/retry", ""),
			http.StatusNotFound, "delivery_not_found")
	}
}

// A PATCH changes each member it sends and nothing else; enabling an
// endpoint the service disabled clears disabledReason; DELETE removes it.
func TestWebhookPatchAndDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	created := h.createWebhook(`{"url":"` + webhookHook + `","events":["hold.created"],"description":"a"}`)
	id := str(created.body, "id")
	path := "/webhooks/" + id
	steps := []struct {
		patch  string
		member string
		want   any
	}{
		{`{"url":"https://203.0.113.8/other"}`, "url", "https://203.0.113.8/other"},
		{`{"events":["hold.expired","reservation.created"]}`, "events", []any{"hold.expired", "reservation.created"}},
		{`{"description":"b"}`, "description", "b"},
		{`{"enabled":false}`, "enabled", false},
		{`{}`, "enabled", false},
		{`{"enabled":true}`, "enabled", true},
	}
	want := created.body
	delete(want, "secret")
	for _, step := range steps {
		resp := h.webhookCall(http.MethodPatch, path, step.patch)
		if resp.status != http.StatusOK {
			t.Fatalf("PATCH %s: %d %s", step.patch, resp.status, resp.raw)
		}
		want[step.member] = step.want
		for _, member := range []string{"id", "url", "events", "description", "enabled", "disabledReason", "createdAt"} {
			if !equalJSON(resp.body[member], want[member]) {
				t.Fatalf("after PATCH %s, %s = %v, want %v", step.patch, member, resp.body[member], want[member])
			}
		}
		if got := h.webhookCall(http.MethodGet, path, ""); !equalJSON(got.body, resp.body) {
			t.Fatalf("after PATCH %s, GET answers %s, the PATCH %s", step.patch, got.raw, resp.raw)
		}
	}

	// The service disables an endpoint that answers 410.
	if _, err := h.pool.Exec(context.Background(), `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'gone' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if got := h.webhookCall(http.MethodGet, path, ""); got.body["enabled"] != false || str(got.body, "disabledReason") != "gone" {
		t.Fatalf("an endpoint disabled by the service: %s", got.raw)
	}
	if got := h.webhookCall(http.MethodPatch, path, `{"enabled":true}`); got.body["enabled"] != true || got.body["disabledReason"] != nil {
		t.Fatalf("enabled again: %s", got.raw)
	}

	if resp := h.webhookCall(http.MethodDelete, path, ""); resp.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", resp.status, resp.raw)
	}
	expectProblem(t, h.webhookCall(http.MethodGet, path, ""), http.StatusNotFound, "webhook_not_found")
	expectProblem(t, h.webhookCall(http.MethodDelete, path, ""), http.StatusNotFound, "webhook_not_found")
}

func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, equalJSON)
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if !equalJSON(v, b[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// A rotation answers a new secret and keeps the old one valid for 24
// hours; a second one replaces that previous secret with the current.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	created := h.createWebhook(webhookBody(webhookHook))
	id, first := str(created.body, "id"), str(created.body, "secret")
	sealer, err := webhook.NewSealer(h.cfg.AuthSecret)
	if err != nil {
		t.Fatal(err)
	}
	stored := func() (current, previous string, until time.Time) {
		t.Helper()
		var cur, prev []byte
		var at *time.Time
		err := h.pool.QueryRow(context.Background(), `SELECT secret, previous_secret, previous_secret_until
			FROM webhook_endpoints WHERE id = $1`, id).Scan(&cur, &prev, &at)
		if err != nil {
			t.Fatal(err)
		}
		open := func(b []byte) string {
			if b == nil {
				return ""
			}
			s, err := sealer.Open(b)
			if err != nil {
				t.Fatalf("a stored secret does not open: %v", err)
			}
			return s.Reveal()
		}
		if at != nil {
			until = *at
		}
		return open(cur), open(prev), until
	}
	if cur, prev, _ := stored(); cur != first || prev != "" {
		t.Fatal("the stored secret is not the one answered")
	}
	rotated := time.Now()
	resp := h.webhookCall(http.MethodPost, "/webhooks/"+id+"/secret", "")
	second := str(resp.body, "secret")
	if resp.status != http.StatusOK || !strings.HasPrefix(second, "whsec_") || second == first || len(resp.body) != 1 {
		t.Fatalf("rotate: %d %s", resp.status, resp.raw)
	}
	cur, prev, until := stored()
	if cur != second || prev != first {
		t.Fatal("after a rotation the stored secrets are not the new one and the old one")
	}
	if d := until.Sub(rotated); d < 24*time.Hour-time.Minute || d > 24*time.Hour+time.Minute {
		t.Fatalf("the old secret is valid for %v, want 24h", d)
	}
	third := str(h.webhookCall(http.MethodPost, "/webhooks/"+id+"/secret", `{}`).body, "secret")
	if cur, prev, _ := stored(); third == second || cur != third || prev != second {
		t.Fatal("a second rotation did not make the current secret the previous one")
	}
	expectProblem(t, h.webhookCall(http.MethodPost, "/webhooks/"+id+"/secret", `{"secret":"mine"}`), http.StatusBadRequest, "malformed_json")
}

// No log line of a registration or a rotation, at any level, holds the
// secret.
func TestWebhookSecretsAreNotLogged(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 0, func(*config.Config) {})
	logs := &testenv.SyncBuffer{}
	h.logger = slogDebug(logs)
	h.bases = append(h.bases, h.serve(h.cfg))
	created := h.createWebhook(webhookBody(webhookHook))
	id := str(created.body, "id")
	secrets := []string{str(created.body, "secret")}
	for range 2 {
		secrets = append(secrets, str(h.webhookCall(http.MethodPost, "/webhooks/"+id+"/secret", "").body, "secret"))
	}
	h.webhookCall(http.MethodGet, "/webhooks/"+id, "")
	if !strings.Contains(logs.String(), "/webhooks") {
		t.Fatalf("the requests were not logged: %q", logs.String())
	}
	for _, s := range secrets {
		key := strings.TrimPrefix(s, "whsec_")
		if s == "" || strings.Contains(logs.String(), key) {
			t.Fatalf("a secret is in the log (or was not answered): %q", logs.String())
		}
	}
}

// The delivery log lists newest first, by status, a page at a time; a
// retry makes a delivery pending and due now.
func TestWebhookDeliveriesLog(t *testing.T) {
	t.Parallel()
	// Without the delivery worker, which would claim the rows written
	// here (and lease the one retried) while the test reads them.
	h := newHarnessWith(t, 1, func(*config.Config) {}, app.WithoutJobs())
	id := str(h.createWebhook(webhookBody(webhookHook)).body, "id")
	other := str(h.createWebhook(webhookBody(webhookHook)).body, "id")
	statuses := []string{webhook.StatusSucceeded, webhook.StatusFailed, webhook.StatusPending, webhook.StatusFailed, webhook.StatusFailed}
	events := make([]string, len(statuses))
	for i, s := range statuses {
		events[i] = h.insertDelivery(id, int64(10+i), s)
	}
	h.insertDelivery(other, 12, webhook.StatusFailed)
	deliveries := "/webhooks/" + id + "/deliveries"

	read := func(query string) ([]string, string) {
		t.Helper()
		resp := h.webhookCall(http.MethodGet, deliveries+query, "")
		if resp.status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, resp.status, resp.raw)
		}
		var got []string
		for _, d := range items(t, resp.body, "deliveries") {
			got = append(got, str(d, "eventId"))
		}
		next, _ := resp.body["next"].(string)
		return got, next
	}
	all, next := read("")
	if want := []string{events[4], events[3], events[2], events[1], events[0]}; !slices.Equal(all, want) || next != "" {
		t.Fatalf("the log lists %v (next %q), want %v", all, next, want)
	}
	first := items(t, h.webhookCall(http.MethodGet, deliveries, "").body, "deliveries")[0]
	if str(first, "type") != webhook.HoldCreated || str(first, "status") != webhook.StatusFailed || first["attempts"] != 1.0 ||
		first["lastStatusCode"] != 500.0 || str(first, "lastError") != "answered 500" || str(first, "lastAttemptAt") == "" ||
		first["nextAttemptAt"] != nil {
		t.Fatalf("a delivery reads %v", first)
	}

	// Failed ones, two a page.
	var paged []string
	query := "?status=failed&limit=2"
	for range 3 {
		page, next := read(query)
		paged = append(paged, page...)
		if next == "" {
			break
		}
		query = "?status=failed&limit=2&after=" + next
	}
	if want := []string{events[4], events[3], events[1]}; !slices.Equal(paged, want) {
		t.Fatalf("failed deliveries page as %v, want %v", paged, want)
	}
	if pending, _ := read("?status=pending"); !slices.Equal(pending, []string{events[2]}) {
		t.Fatalf("pending: %v", pending)
	}

	for _, q := range []struct{ query, field string }{
		{"status=sent", "status"}, {"status=failed&status=pending", "status"},
		{"limit=0", "limit"}, {"limit=501", "limit"}, {"limit=ten", "limit"},
		{"after=x", "after"}, {"after=" + base64.RawURLEncoding.EncodeToString([]byte("0")), "after"}, {"after=", "after"},
	} {
		resp := h.webhookCall(http.MethodGet, deliveries+"?"+q.query, "")
		expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
		if !strings.Contains(resp.raw, `"field":"`+q.field+`"`) {
			t.Errorf("?%s: the problem does not name %s: %s", q.query, q.field, resp.raw)
		}
	}
	if resp := h.webhookCall(http.MethodGet, deliveries+"?limit=500", ""); resp.status != http.StatusOK {
		t.Fatalf("limit=500: %d %s", resp.status, resp.raw)
	}

	// A retry of the oldest failure: pending, due now.
	resp := h.webhookCall(http.MethodPost, deliveries+"/"+events[1]+"/retry", "")
	if resp.status != http.StatusAccepted {
		t.Fatalf("retry: %d %s", resp.status, resp.raw)
	}
	var (
		status string
		due    bool
	)
	if err := h.pool.QueryRow(context.Background(), `SELECT status, next_attempt_at <= now() FROM webhook_deliveries
		WHERE endpoint_id = $1 AND event_id = $2`, id, events[1]).Scan(&status, &due); err != nil {
		t.Fatal(err)
	}
	if status != webhook.StatusPending || !due {
		t.Fatalf("after a retry the delivery is %s, due %v", status, due)
	}
	expectProblem(t, h.webhookCall(http.MethodPost, "/webhooks/"+other+"/deliveries/"+events[1]+"/retry", ""),
		http.StatusNotFound, "delivery_not_found")
	expectProblem(t, h.webhookCall(http.MethodPost, deliveries+"/msg_none/retry", ""), http.StatusNotFound, "delivery_not_found")
}
