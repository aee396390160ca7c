package main

import (
	"strings"
	"testing"
)

func TestCompareTargets(t *testing.T) {
	scenarios := []string{"hot-seat", "fresh-seats", "contended", "fresh-new"}
	plain := compareConfig{scenarios: scenarios}
	all := compareConfig{scenarios: scenarios, before: "HEAD~1", traced: true, variant: []string{"BATCH_LANES=1"}}
	for _, c := range []struct {
		cfg      compareConfig
		scenario string
		want     string
	}{
		{plain, "hot-seat", "naive static service service-no-fast-path"},
		{plain, "fresh-seats", "naive insertonly service"},
		{plain, "contended", "naive service"},
		{plain, "fresh-new", "naive-new insertonly-new service-new"},
		{all, "contended", "naive service service-before service-traced service-traced-sampled service-variant"},
		{all, "fresh-new", "naive-new insertonly-new service-new"},
	} {
		if got := strings.Join(c.cfg.targets(c.scenario), " "); got != c.want {
			t.Errorf("%s: %q, want %q", c.scenario, got, c.want)
		}
		served := map[string]bool{}
		for _, k := range c.cfg.contenders() {
			served[k.name] = true
		}
		for _, target := range c.cfg.targets(c.scenario) {
			if compareAddrs[target] == "" {
				t.Errorf("%s has no address", target)
			}
			if !served[target] {
				t.Errorf("%s is hammered but not served", target)
			}
		}
	}
}

func TestCompareTables(t *testing.T) {
	cfg := compareConfig{scenarios: []string{"hot-seat", "contended"}, before: "HEAD~1"}
	var got []string
	for _, table := range cfg.tables() {
		got = append(got, strings.Join(table, " "))
	}
	want := []string{
		"naive=naive service=service",
		"static=static service=service",
		"before=service-before after=service",
		"fast-path-off=service-no-fast-path fast-path-on=service",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tables:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
