package app_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
)

// Every series the Grafana dashboard in docs/grafana plots is one the
// service exports, so the dashboard cannot drift from the metrics.
func TestGrafanaDashboardPlotsExportedMetrics(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/grafana/seatlock.json")
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dashboard); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}

	h := newHarnessWith(t, 1, func(*config.Config) {}, app.WithoutJobs())
	schedule := h.createSchedule(1)
	h.postJSON("/reservations", h.token("alice", ""), map[string]any{"scheduleId": schedule, "seatId": 1})
	exported := map[string]bool{}
	for _, line := range strings.Split(scrape(t, h.bases[0]+"/metrics"), "\n") {
		if name, _, ok := strings.Cut(line, "{"); ok && !strings.HasPrefix(line, "#") {
			exported[name] = true
		} else if name, _, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
			exported[name] = true
		}
	}

	metric := regexp.MustCompile(`\b(?:seatlock|process|go)_[a-z0-9_]+\b`)
	plotted := 0
	for _, p := range dashboard.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q plots nothing", p.Title)
		}
		for _, target := range p.Targets {
			names := metric.FindAllString(target.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: no metric in %q", p.Title, target.Expr)
			}
			for _, name := range names {
				plotted++
				if !exported[name] {
					t.Errorf("panel %q plots %s, which /metrics does not export", p.Title, name)
				}
			}
		}
	}
	if plotted == 0 {
		t.Fatal("the dashboard plots no metric")
	}
}
