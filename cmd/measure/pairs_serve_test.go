package main

import (
	"slices"
	"testing"
)

func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		text string
		want spec
		db   string
	}{
		{"after=.", spec{name: "after", revision: "."}, "pairs_after"},
		{"alone=HEAD,BATCH_LANES=0", spec{name: "alone", revision: "HEAD", settings: []string{"BATCH_LANES=0"}}, "pairs_alone"},
		{"sampled=.,traced,FAST_PATH=false", spec{name: "sampled", revision: ".",
			settings: append(slices.Clone(tracedSettings), "FAST_PATH=false")}, "pairs_sampled"},
		{"Parser-Off=abc123", spec{name: "Parser-Off", revision: "abc123"}, "pairs__arser__ff"},
	} {
		got := parseSpec(c.text)
		if got.name != c.want.name || got.revision != c.want.revision || !slices.Equal(got.settings, c.want.settings) {
			t.Errorf("parseSpec(%q) = %+v, want %+v", c.text, got, c.want)
		}
		if got.database() != c.db {
			t.Errorf("%q: database %q, want %q", c.text, got.database(), c.db)
		}
	}
}
